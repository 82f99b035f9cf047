/*
** status.c: status names and the per-thread error message.
**
** A failing call formats its message into a thread-local buffer, so the
** message needs no allocation (it must work when memory is exhausted) and
** threads do not see each other's errors. Messages longer than the buffer
** are truncated, which is fine for text meant for people.
*/
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char errbuf[1024];

const char *
gnn_status_name(gnn_status s)
{
	static const char *const names[] = {
		[GNN_OK] = "GNN_OK",
		[GNN_ERR_ARG] = "GNN_ERR_ARG",
		[GNN_ERR_MEM] = "GNN_ERR_MEM",
		[GNN_ERR_IO] = "GNN_ERR_IO",
		[GNN_ERR_FORMAT] = "GNN_ERR_FORMAT",
		[GNN_ERR_DTYPE] = "GNN_ERR_DTYPE",
		[GNN_ERR_SHAPE] = "GNN_ERR_SHAPE",
		[GNN_ERR_RANGE] = "GNN_ERR_RANGE",
		[GNN_ERR_CUDA] = "GNN_ERR_CUDA",
		[GNN_ERR_STATE] = "GNN_ERR_STATE",
	};

	if ((unsigned)s >= sizeof names / sizeof names[0])
		return "GNN_ERR_UNKNOWN";
	return names[s];
}

const char *
gnn_errmsg(void)
{
	return errbuf;
}

gnn_status
gnn_fail(gnn_status s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof errbuf, fmt, ap);
	va_end(ap);
	return s;
}
