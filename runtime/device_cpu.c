/*
** device_cpu.c: the host as a device.  Memory is shared, so forward reads
** host buffers in place and copies are memcpy; kernels are host loops
** that have finished when they return, so there is nothing to wait for.
** The optimizer's update is optim.h's, element by element in order.
*/
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "optim.h"

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

/* Forward never allocates here (separate = 0: it reads host buffers in
 * place); training's state does.  gnn_malloc's blocks need their size to
 * be freed, so a block keeps it in a header of 64 bytes (which keeps the
 * block 64-byte aligned where the hook's are). */
enum { CpuHead = 64 };

static int
cpu_alloc(void **p, size_t n)
{
	unsigned char *b;

	*p = NULL;
	if (n > SIZE_MAX - CpuHead || !(b = (unsigned char *)gnn_malloc(n + CpuHead)))
		return 1;
	memcpy(b, &n, sizeof n);
	*p = b + CpuHead;
	return 0;
}

static void
cpu_free(void *p)
{
	size_t n;

	if (!p)
		return;
	memcpy(&n, (unsigned char *)p - CpuHead, sizeof n);
	gnn_free((unsigned char *)p - CpuHead, n + CpuHead);
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
	return err ? "out of memory" : "no error";
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

static int
cpu_optim_step(const gnn_optseg *tab, int n, int64_t total, const gnn_optargs *a, void *s)
{
	(void)s;
	for (int i = 0; i < n; i++)
		for (int64_t k = 0, e = (i + 1 < n ? tab[i + 1].off : total) - tab[i].off; k < e; k++)
			gnn_optim_elem(a, &tab[i], k);
	return 0;
}

static int
cpu_optim_zero(void *p, size_t n, void *s)
{
	(void)s;
	if (n)
		memset(p, 0, n);
	return 0;
}

static const gnn_devoptim cpu_optim = {cpu_optim_step, cpu_optim_zero};

const gnn_device gnn_device_cpu = {
	"cpu", 0, cpu_stream_create, cpu_stream_destroy, cpu_alloc, cpu_free,
	cpu_copy, cpu_sync, cpu_last_error, cpu_errstr, cpu_elapsed, cpu_arch, NULL, NULL, &cpu_optim,
	1, NULL, NULL, NULL, NULL,
};
