/*
** status.c: status names and the per-thread error message.
**
** A failing call formats its message into a thread-local buffer, so the
** message needs no allocation (it must work when memory is exhausted) and
** threads do not see each other's errors. The buffer holds a path of
** PATH_MAX and a message about it (readers quote file contents cut to a
** few hundred bytes); a longer message is cut, visibly ("..." at its end),
** which is fine for text meant for people.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char errbuf[8192];

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
	if (vsnprintf(errbuf, sizeof errbuf, fmt, ap) >= (int)sizeof errbuf)
		memcpy(errbuf + sizeof errbuf - 4, "...", 4);
	va_end(ap);
	return s;
}
