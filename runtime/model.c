/*
** model.c: what every compiled model shares: loading its parameters
** from a safetensors file, and the error helpers of generated code and
** applications.
**
** Loading is all or nothing: every declared parameter is matched against
** the file, and every tensor of the file against the declarations, before
** a single byte is copied, so a bad file leaves the model's weights as they
** were and its message lists every problem at once (a user fixing an
** export script wants them all, not one per run).  Saving (training's
** checkpoints) checks every parameter first too, then writes the file
** under a temporary name that is renamed over the old one.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* the messages share status.c's buffer size: longer lists are cut short */
enum { MSGMAX = 1024, MSGTAIL = 64 };

typedef struct Problems {
	const char *path;
	char buf[MSGMAX];
	size_t len;
	int n, dropped;
	unsigned kinds;   /* bit per status: what to report when all agree */
} Problems;

static void
problem(Problems *p, gnn_status kind, const char *fmt, ...) GNN_PRINTF(3, 4);

/* one line "path: ...", kept if it fits with room left for the tail */
static void
problem(Problems *p, gnn_status kind, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	p->n++;
	p->kinds |= 1u << kind;
	if (p->dropped) {   /* keep the lines in order: once one is cut, so are the rest */
		p->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	n = snprintf(p->buf + p->len, MSGMAX - MSGTAIL - p->len, "%s%s: %s",
		p->len ? "\n" : "", p->path, line);
	if (n < 0 || (size_t)n >= MSGMAX - MSGTAIL - p->len) {
		p->buf[p->len] = '\0';
		p->dropped++;
		return;
	}
	p->len += (size_t)n;
}

/* "f32 [16, 1433]" */
static const char *
fmttype(char *buf, size_t size, gnn_dtype t, int rank, const int64_t *shape)
{
	size_t n = (size_t)snprintf(buf, size, "%s [", gnn_dtype_name(t));

	for (int i = 0; i < rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, i ? ", %lld" : "%lld", (long long)shape[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
	return buf;
}

/* whether a file tensor of dtype have can fill a parameter of dtype want */
static int
convertible(gnn_dtype want, gnn_dtype have)
{
	return have == want || (want == GNN_F32 && have == GNN_F64)
		|| (want == GNN_I64 && have == GNN_I32);
}

/* a declaration the generated code got wrong is a caller bug, not a bad file */
static gnn_status
checkdecl(const char *path, const gnn_tensor_info *p, int i, void *dst, size_t *nbytes)
{
	if (!p->name)
		return gnn_fail(GNN_ERR_ARG, "%s: parameter %d has no name", path, i);
	if (!gnn_dtype_size(p->dtype))
		return gnn_fail(GNN_ERR_ARG, "%s: parameter '%s': invalid dtype %d",
			path, p->name, (int)p->dtype);
	if (p->rank < 0 || p->rank > GNN_MAX_RANK
	    || gnn_shape_nbytes(p->dtype, p->rank, p->shape, nbytes) != 0)
		return gnn_fail(GNN_ERR_ARG, "%s: parameter '%s': the declared shape is not "
			"a constant shape", path, p->name);
	if (!dst && *nbytes > 0)
		return gnn_fail(GNN_ERR_ARG, "%s: parameter '%s': no destination buffer",
			path, p->name);
	return GNN_OK;
}

/* copies a view into a parameter's buffer, narrowing or widening as allowed */
static void
convert(void *dst, gnn_dtype want, const gnn_array *v)
{
	size_t n = v->nbytes / gnn_dtype_size(v->dtype);

	if (v->dtype == want) {
		if (v->nbytes)
			memcpy(dst, v->data, v->nbytes);
	} else if (want == GNN_F32)
		for (size_t k = 0; k < n; k++)
			((float *)dst)[k] = (float)((const double *)v->data)[k];
	else
		for (size_t k = 0; k < n; k++)
			((int64_t *)dst)[k] = ((const int32_t *)v->data)[k];
}

/* matches declarations and file, noting every problem in p; at[i] = file index */
static gnn_status
match(gnn_safetensors *st, const gnn_tensor_info *params, int n, void *const *dst,
	int *at, unsigned char *used, Problems *p)
{
	const char *path = p->path;
	char want[256], have[256];
	gnn_array v;
	size_t nbytes;
	gnn_status s;

	for (int i = 0; i < n; i++) {
		const gnn_tensor_info *d = &params[i];
		int k, sameshape, okdtype;
		if ((s = checkdecl(path, d, i, dst[i], &nbytes)) != GNN_OK)
			return s;
		if ((k = at[i] = gnn_st_find(st, d->name)) < 0) {
			problem(p, GNN_ERR_FORMAT, "parameter '%s' (%s) is missing from the file",
				d->name, fmttype(want, sizeof want, d->dtype, d->rank, d->shape));
			continue;
		}
		if (used[k])
			return gnn_fail(GNN_ERR_ARG, "%s: parameter '%s' is declared twice",
				path, d->name);
		used[k] = 1;
		if ((s = gnn_st_get(st, k, &v)) != GNN_OK)
			return s;
		sameshape = v.rank == d->rank
			&& memcmp(v.shape, d->shape, (size_t)d->rank * sizeof *d->shape) == 0;
		okdtype = convertible(d->dtype, v.dtype);
		if (!sameshape || !okdtype)
			problem(p, !okdtype && !sameshape ? GNN_ERR_FORMAT
				: !okdtype ? GNN_ERR_DTYPE : GNN_ERR_SHAPE,
				"parameter '%s': expected %s, the file has %s", d->name,
				fmttype(want, sizeof want, d->dtype, d->rank, d->shape),
				fmttype(have, sizeof have, v.dtype, v.rank, v.shape));
	}
	for (int k = 0; k < gnn_st_count(st); k++)
		if (!used[k])
			problem(p, GNN_ERR_FORMAT, "unexpected parameter '%s': the model has no such "
				"parameter", gnn_st_name(st, k));
	return GNN_OK;
}

gnn_status
gnn_load_params(const char *path, const gnn_tensor_info *params, int n, void *const *dst)
{
	gnn_safetensors *st = NULL;
	Problems *p = NULL;
	unsigned char *used = NULL;
	int *at = NULL, count = 0;
	gnn_array v;
	gnn_status s;

	if (!path)
		return gnn_fail(GNN_ERR_ARG, "gnn_load_params: path is NULL");
	if (n < 0 || (n > 0 && (!params || !dst)))
		return gnn_fail(GNN_ERR_ARG, "%s: bad parameter list (n = %d%s%s)", path, n,
			n > 0 && !params ? ", params NULL" : "", n > 0 && !dst ? ", dst NULL" : "");
	if ((s = gnn_st_open(path, &st)) != GNN_OK)
		return s;
	count = gnn_st_count(st);
	/* the problem list is too big for the stack of a thread that may be small */
	if (!(p = gnn_malloc(sizeof *p)) || (n > 0 && !(at = gnn_malloc((size_t)n * sizeof *at)))
	    || (count > 0 && !(used = gnn_malloc((size_t)count)))) {
		s = gnn_fail(GNN_ERR_MEM, "%s: out of memory", path);
		goto out;
	}
	*p = (Problems){.path = path};
	if (count > 0)
		memset(used, 0, (size_t)count);
	if ((s = match(st, params, n, dst, at, used, p)) != GNN_OK)
		goto out;
	if (p->n > 0) {
		/* one kind of problem names itself; a mix is a file that does not fit */
		s = p->kinds == 1u << GNN_ERR_SHAPE ? GNN_ERR_SHAPE
			: p->kinds == 1u << GNN_ERR_DTYPE ? GNN_ERR_DTYPE : GNN_ERR_FORMAT;
		if (p->dropped)
			snprintf(p->buf + p->len, MSGMAX - p->len, "%s%s: ... and %d more problems",
				p->len ? "\n" : "", path, p->dropped);
		s = gnn_fail(s, "%s", p->buf);
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (gnn_st_get(st, at[i], &v) == GNN_OK)   /* cannot fail: at[i] was found */
			convert(dst[i], params[i].dtype, &v);
out:
	gnn_free(used, (size_t)count);
	gnn_free(at, (size_t)n * sizeof *at);
	gnn_free(p, sizeof *p);
	gnn_st_close(st);
	return s;
}

gnn_status
gnn_save_params(const char *path, const gnn_tensor_info *params, int n, const void *const *src)
{
	const char **names = NULL;
	gnn_array *a = NULL;
	gnn_status s;

	if (!path)
		return gnn_fail(GNN_ERR_ARG, "gnn_save_params: path is NULL");
	if (n < 0 || (n > 0 && (!params || !src)))
		return gnn_fail(GNN_ERR_ARG, "%s: bad parameter list (n = %d%s%s)", path, n,
			n > 0 && !params ? ", params NULL" : "", n > 0 && !src ? ", src NULL" : "");
	for (int i = 0; i < n; i++) {
		const gnn_tensor_info *p = &params[i];
		const char *nm = p->name ? p->name : "?";
		size_t nb;
		if (!p->name)
			return gnn_fail(GNN_ERR_ARG, "%s: parameter %d has no name", path, i);
		if (p->dtype != GNN_F32 && p->dtype != GNN_F64 && p->dtype != GNN_I64 && p->dtype != GNN_I32
		    && p->dtype != GNN_BOOL)
			return gnn_fail(GNN_ERR_DTYPE, "%s: parameter '%s': dtype %s cannot be saved (f32, f64, i64, "
				"i32 or bool)", path, nm, gnn_dtype_name(p->dtype));
		if (p->rank < 0 || p->rank > GNN_MAX_RANK)
			return gnn_fail(GNN_ERR_SHAPE, "%s: parameter '%s': rank %d not in [0, %d]", path, nm,
				p->rank, GNN_MAX_RANK);
		for (int d = 0; d < p->rank; d++)
			if (p->shape[d] < 0)
				return gnn_fail(GNN_ERR_SHAPE, "%s: parameter '%s': dim %d is %lld: saving needs "
					"the concrete shape", path, nm, d, (long long)p->shape[d]);
		if (gnn_shape_nbytes(p->dtype, p->rank, p->shape, &nb) != 0)
			return gnn_fail(GNN_ERR_SHAPE, "%s: parameter '%s': shape too large", path, nm);
		if (nb > 0 && !src[i])
			return gnn_fail(GNN_ERR_ARG, "%s: parameter '%s': src is NULL", path, nm);
	}
	if (n > 0 && (!(names = gnn_malloc((size_t)n * sizeof *names)) || !(a = gnn_malloc((size_t)n * sizeof *a)))) {
		s = gnn_fail(GNN_ERR_MEM, "%s: out of memory", path);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const gnn_tensor_info *p = &params[i];
		names[i] = p->name;
		a[i] = (gnn_array){.dtype = p->dtype, .rank = p->rank, .data = (void *)src[i]};
		memcpy(a[i].shape, p->shape, sizeof a[i].shape);
		gnn_shape_nbytes(p->dtype, p->rank, p->shape, &a[i].nbytes);   /* checked above */
	}
	s = gnn_st_write_(path, names, a, n, 1);
out:
	gnn_free(a, (size_t)n * sizeof *a);
	gnn_free(names, (size_t)n * sizeof *names);
	return s;
}

void
gnn_check_(gnn_status s, const char *expr, const char *file, int line)
{
	if (s == GNN_OK)
		return;
	fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file ? file : "?", line, expr ? expr : "?",
		gnn_status_name(s), gnn_errmsg());
	exit(1);
}

gnn_status
gnn_error(gnn_status s, const char *fmt, ...)
{
	char buf[MSGMAX];
	va_list ap;

	/* a NULL format is a caller bug that must not become a crash */
	if (!fmt)
		return gnn_fail(s, "%s", gnn_status_name(s));
	/* gnn_fail takes no va_list, so format here and hand the text over */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return gnn_fail(s, "%s", buf);
}
