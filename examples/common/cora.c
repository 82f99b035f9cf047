/*
** cora.c: the examples' dataset helpers (see cora.h).
**
** Design: each file is read whole with gnn_npy_read, checked (dtype,
** rank, and that every per-node array has x.npy's N rows), converted to
** the one type the examples use (float32 features, int64 labels, a byte
** mask) and freed.  Failures go through gnn_error, prefixed with the
** file's path, and undo everything: cora_load either fills *c or leaves
** it zeroed.  NormalizeFeatures is PyG's: x - x.min() over the whole
** matrix, then each row divided by its sum clamped to at least 1; sums
** and quotients are taken in double and rounded once to float, which for
** 0/1 features gives exactly PyG's float32 result.
*/
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */

#include "cora.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* dir/name in a fresh buffer, or NULL */
static char *
joinpath(const char *dir, const char *name)
{
	size_t n = strlen(dir), k = strlen(name);
	char *p = malloc(n + k + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, n);
	p[n] = '/';
	memcpy(p + n + 1, name, k + 1);
	return p;
}

/* Reads dir/name into *a; the message names the path. */
static gnn_status
readnpy(const char *dir, const char *name, gnn_array *a)
{
	char *path = joinpath(dir, name);
	gnn_status s;

	if (!path)
		return gnn_error(GNN_ERR_MEM, "%s/%s: out of memory for the path", dir, name);
	s = gnn_npy_read(path, a);
	free(path);
	return s;
}

/* "[2708, 1433]" into buf */
static const char *
shapestr(const gnn_array *a, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	len += (size_t)snprintf(buf + len, n - len, "[");
	for (int i = 0; i < a->rank && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "",
			(long long)a->shape[i]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
	return buf;
}

/* element i of a u8, bool, f32 or f64 array */
static double
elem(const gnn_array *a, int64_t i)
{
	switch (a->dtype) {
	case GNN_F32:
		return ((const float *)a->data)[i];
	case GNN_F64:
		return ((const double *)a->data)[i];
	default:
		return ((const unsigned char *)a->data)[i];
	}
}

/* x: u8, bool, f32 or f64 to float32, then NormalizeFeatures */
static gnn_status
loadx(const char *dir, int64_t want, cora *c)
{
	gnn_array a;
	gnn_status s;
	char sh[96];
	int64_t n, f, numel;
	double lo = 0;

	if ((s = readnpy(dir, "x.npy", &a)) != GNN_OK)
		return s;
	if (a.rank != 2) {
		s = gnn_error(GNN_ERR_SHAPE, "%s/x.npy: shape %s, want a feature matrix [N, F]",
			dir, shapestr(&a, sh, sizeof sh));
		goto out;
	}
	if (a.dtype != GNN_U8 && a.dtype != GNN_BOOL && a.dtype != GNN_F32
			&& a.dtype != GNN_F64) {
		s = gnn_error(GNN_ERR_DTYPE, "%s/x.npy: dtype %s, want u8, bool, f32 or f64",
			dir, gnn_dtype_name(a.dtype));
		goto out;
	}
	n = a.shape[0];
	f = a.shape[1];
	if (want > 0 && f != want) {
		s = gnn_error(GNN_ERR_SHAPE, "%s/x.npy: %lld features per node, but the model "
			"takes %lld", dir, (long long)f, (long long)want);
		goto out;
	}
	numel = n * f;
	if (numel > 0 && !(c->x = malloc((size_t)numel * sizeof(float)))) {
		s = gnn_error(GNN_ERR_MEM, "%s/x.npy: out of memory for %lld floats", dir,
			(long long)numel);
		goto out;
	}
	/* x = x - x.min() */
	for (int64_t i = 0; i < numel; i++)
		if (i == 0 || elem(&a, i) < lo)
			lo = elem(&a, i);
	/* x = x / x.sum(-1, keepdim=True).clamp(min=1) */
	for (int64_t r = 0; r < n; r++) {
		double sum = 0;

		for (int64_t k = 0; k < f; k++)
			sum += elem(&a, r * f + k) - lo;
		if (sum < 1)
			sum = 1;
		for (int64_t k = 0; k < f; k++)
			c->x[r * f + k] = (float)((elem(&a, r * f + k) - lo) / sum);
	}
	c->num_nodes = n;
	c->num_features = f;
out:
	gnn_array_free(&a);
	return s;
}

/* the graph: edge_index [2, E], i32 or i64, over c->num_nodes nodes */
static gnn_status
loadgraph(const char *dir, cora *c)
{
	gnn_array a;
	gnn_status s;
	char sh[96];

	if ((s = readnpy(dir, "edge_index.npy", &a)) != GNN_OK)
		return s;
	if (a.rank != 2 || a.shape[0] != 2)
		s = gnn_error(GNN_ERR_SHAPE, "%s/edge_index.npy: shape %s, want [2, E]",
			dir, shapestr(&a, sh, sizeof sh));
	else if (a.dtype != GNN_I64 && a.dtype != GNN_I32)
		s = gnn_error(GNN_ERR_DTYPE, "%s/edge_index.npy: dtype %s, want i64 or i32",
			dir, gnn_dtype_name(a.dtype));
	else if ((s = gnn_graph_from_edge_index(&c->graph, a.data, a.dtype, a.shape[1],
			c->num_nodes)) != GNN_OK)
		/* the runtime's message says which edge; add the file and N */
		s = gnn_error(s, "%s/edge_index.npy (%lld nodes, from x.npy): %s", dir,
			(long long)c->num_nodes, gnn_errmsg());
	gnn_array_free(&a);
	return s;
}

/* A per-node vector dir/name of one of the dtypes t1, t2, into *a. */
static gnn_status
loadvec(const char *dir, const char *name, int64_t n, gnn_dtype t1, gnn_dtype t2,
	gnn_array *a)
{
	gnn_status s;
	char sh[96];

	if ((s = readnpy(dir, name, a)) != GNN_OK)
		return s;
	if (a->rank != 1 || a->shape[0] != n)
		s = gnn_error(GNN_ERR_SHAPE, "%s/%s: shape %s, want [%lld] (one per node of x.npy)",
			dir, name, shapestr(a, sh, sizeof sh), (long long)n);
	else if (a->dtype != t1 && a->dtype != t2)
		s = gnn_error(GNN_ERR_DTYPE, "%s/%s: dtype %s, want %s or %s", dir, name,
			gnn_dtype_name(a->dtype), gnn_dtype_name(t1), gnn_dtype_name(t2));
	if (s != GNN_OK)
		gnn_array_free(a);
	return s;
}

/* y.npy to int64, test_mask.npy to bytes */
static gnn_status
loadlabels(const char *dir, cora *c)
{
	gnn_array y, m;
	gnn_status s;
	int64_t n = c->num_nodes;

	if ((s = loadvec(dir, "y.npy", n, GNN_I64, GNN_I32, &y)) != GNN_OK)
		return s;
	if ((s = loadvec(dir, "test_mask.npy", n, GNN_BOOL, GNN_U8, &m)) != GNN_OK) {
		gnn_array_free(&y);
		return s;
	}
	/* malloc(0) may return NULL: allocate one element at least */
	c->y = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->y);
	c->test = malloc((size_t)(n > 0 ? n : 1));
	if (!c->y || !c->test)
		s = gnn_error(GNN_ERR_MEM, "%s: out of memory for %lld labels", dir, (long long)n);
	for (int64_t i = 0; s == GNN_OK && i < n; i++) {
		c->y[i] = y.dtype == GNN_I64 ? ((const int64_t *)y.data)[i]
			: ((const int32_t *)y.data)[i];
		c->test[i] = ((const unsigned char *)m.data)[i] != 0;
		c->num_test += c->test[i];
	}
	gnn_array_free(&y);
	gnn_array_free(&m);
	return s;
}

gnn_status
cora_load(const char *dir, int64_t num_features, cora *c)
{
	gnn_status s;

	if (!dir || !c)
		return gnn_error(GNN_ERR_ARG, "cora_load: NULL argument");
	memset(c, 0, sizeof *c);
	if ((s = loadx(dir, num_features, c)) == GNN_OK
			&& (s = loadgraph(dir, c)) == GNN_OK)
		s = loadlabels(dir, c);
	if (s != GNN_OK)
		cora_free(c);
	return s;
}

gnn_status
cora_train_mask(const char *dir, const cora *c, gnn_array *mask)
{
	char path[4096];
	gnn_status s;

	snprintf(path, sizeof path, "%s/train_mask.npy", dir);
	if ((s = gnn_npy_read(path, mask)) != GNN_OK)
		return s;
	if (mask->dtype != GNN_BOOL || mask->rank != 1 || mask->shape[0] != c->num_nodes) {
		gnn_array_free(mask);
		return gnn_error(GNN_ERR_FORMAT, "%s must be bool [%lld]", path, (long long)c->num_nodes);
	}
	return GNN_OK;
}

gnn_status
cora_mask_nodes(const gnn_array *mask, int64_t **nodes, int64_t *n)
{
	int64_t k, len = mask->shape[0];

	*n = 0;
	if (!(*nodes = (int64_t *)malloc((size_t)len * sizeof **nodes + 1)))
		return gnn_error(GNN_ERR_MEM, "cora_mask_nodes: out of memory");
	for (k = 0; k < len; k++)
		if (((const unsigned char *)mask->data)[k])
			(*nodes)[(*n)++] = k;
	return GNN_OK;
}

void
cora_free(cora *c)
{
	if (!c)
		return;
	free(c->x);
	gnn_graph_destroy(c->graph);
	free(c->y);
	free(c->test);
	memset(c, 0, sizeof *c);
}

gnn_status
cora_accuracy(const cora *c, const float *out, int64_t num_classes, double *percent)
{
	int64_t correct = 0;

	if (!c || !out || !percent || num_classes < 1)
		return gnn_error(GNN_ERR_ARG, "cora_accuracy: invalid argument");
	if (c->num_test == 0)
		return gnn_error(GNN_ERR_STATE, "test_mask.npy selects no nodes: "
			"there is no test accuracy to report");
	for (int64_t i = 0; i < c->num_nodes; i++) {
		const float *row = out + i * num_classes;
		int64_t best = 0;

		if (!c->test[i])
			continue;
		for (int64_t k = 1; k < num_classes; k++)
			if (row[k] > row[best])
				best = k;
		correct += best == c->y[i];
	}
	/* as NumPy's 100 * mean(pred == y), so the decimal rounds the same */
	*percent = 100.0 * ((double)correct / (double)c->num_test);
	return GNN_OK;
}

double
cora_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
