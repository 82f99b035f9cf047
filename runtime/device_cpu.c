/*
** device_cpu.c: the host as a device.  Memory is shared, so forward reads
** host buffers in place and copies are memcpy; kernels are host loops
** that have finished when they return, so there is nothing to wait for.
*/
#include <string.h>
#include <time.h>

#include "device.h"

static int
cpu_stream_create(void **s)
{
	*s = NULL;
	return 0;
}

static void
cpu_stream_destroy(void *s)
{
	(void)s;
}

static int
cpu_alloc(void **p, size_t n)
{
	/* gnn_malloc's blocks need their size to be freed: the cpu device
	 * never allocates (separate = 0), so this is only a guard */
	(void)n;
	*p = NULL;
	return 1;
}

static void
cpu_free(void *p)
{
	(void)p;
}

static int
cpu_copy(void *dst, const void *src, size_t n, int dir, void *s, int async)
{
	(void)dir;
	(void)s;
	(void)async;
	if (n && dst != src)
		memmove(dst, src, n);
	return 0;
}

static int
cpu_sync(void *s)
{
	(void)s;
	return 0;
}

static int
cpu_last_error(void)
{
	return 0;
}

static const char *
cpu_errstr(int err)
{
	return err ? "the cpu device allocates nothing" : "no error";
}

static int
cpu_elapsed(void *s, void (*fn)(void *, int), void *arg, int k, double *us)
{
	struct timespec a, b;

	(void)s;
	timespec_get(&a, TIME_UTC);
	fn(arg, k);
	timespec_get(&b, TIME_UTC);
	*us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	return 0;
}

static const char *
cpu_arch(void)
{
	return NULL;
}

const gnn_device gnn_device_cpu = {
	"cpu", 0, cpu_stream_create, cpu_stream_destroy, cpu_alloc, cpu_free,
	cpu_copy, cpu_sync, cpu_last_error, cpu_errstr, cpu_elapsed, cpu_arch, NULL, NULL,
};
