/*
** device.h: the device layer, the only code that calls a device API.
**
** A device is a table of plain functions returning 0 or the device's own
** error code (errstr names it), so that the layer needs nothing of the
** rest of the runtime and program.c words every message.  The cpu device
** shares host memory (separate = 0): forward reads host buffers in place.
** The cuda device (device_cuda.c) is compiled against the CUDA runtime
** for libgnnrt_cuda.a, and against the emulator for libgnnemu.a.
*/
#ifndef GNNRT_DEVICE_H
#define GNNRT_DEVICE_H

#include <stddef.h>

#include "gnnrt.h"

enum { GNN_H2D = 1, GNN_D2H, GNN_ANY };   /* copy directions */

struct gnn_device {
	const char *name;
	int separate;                            /* memory of its own */
	int (*stream_create)(void **s);
	void (*stream_destroy)(void *s);
	int (*alloc)(void **p, size_t n);
	void (*free)(void *p);
	/* n bytes; async on s, or synchronous when async is 0 */
	int (*copy)(void *dst, const void *src, size_t n, int dir, void *s, int async);
	int (*sync)(void *s);
	int (*last_error)(void);                 /* a failed launch since the last call */
	const char *(*errstr)(int err);
	/* microseconds of one fn(arg, k) on s */
	int (*elapsed)(void *s, void (*fn)(void *, int), void *arg, int k, double *us);
	const char *(*arch)(void);               /* "sm_90", "emu"; NULL on the cpu */
};

#endif
