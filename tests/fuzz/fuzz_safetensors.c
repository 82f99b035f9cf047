/*
 * libFuzzer target: a safetensors file through gnn_st_open and
 * gnn_load_params, as a model's load_weights reads a downloaded one.
 *
 * A file that opens must be what gnnrt.h promises: each tensor's view
 * lies in the buffer (every byte is read), holds its shape's bytes and is
 * aligned to its element size; gnn_st_find finds each name at its index.
 * Then gnn_load_params loads the file twice: into parameters declared as
 * the file's own tensors (F64 declared f32 and I32 declared i64, so that
 * the conversions run too), which must succeed and copy every value; and
 * into a fixed two-layer GCN's parameters (those of the seed made from
 * examples/gcn), where a failure must leave the buffers untouched.  A
 * failure anywhere must be a file status with a message (loader.h).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

/* the parameters of the seed gcn-small.safetensors */
static const gnn_tensor_info gcn[] = {
	{.name = "conv1.lin.weight", .dtype = GNN_F32, .rank = 2, .shape = {16, 8}},
	{.name = "conv1.bias", .dtype = GNN_F32, .rank = 1, .shape = {16}},
	{.name = "conv2.lin.weight", .dtype = GNN_F32, .rank = 2, .shape = {7, 16}},
	{.name = "conv2.bias", .dtype = GNN_F32, .rank = 1, .shape = {7}},
};
enum { NGCN = sizeof gcn / sizeof gcn[0], GCNBYTES = 4 * (16 * 8 + 16 + 7 * 16 + 7) };

/* the views of an open file are what the API promises */
static void
checkviews(const gnn_safetensors *st)
{
	int n = gnn_st_count(st);
	const char *meta;
	gnn_array v;

	for (int i = 0; i < n; i++) {
		const char *name = gnn_st_name(st, i);
		size_t size, nbytes;
		FUZZ_CHECK(name != NULL);
		FUZZ_CHECK(gnn_st_find(st, name) == i);
		FUZZ_CHECK(gnn_st_get(st, i, &v) == GNN_OK);
		size = gnn_dtype_size(v.dtype);
		FUZZ_CHECK(size > 0 && v.rank >= 0 && v.rank <= GNN_MAX_RANK);
		nbytes = (size_t)gnn_array_numel(&v) * size;
		FUZZ_CHECK(v.nbytes == nbytes);
		FUZZ_CHECK(nbytes == 0 || (v.data && (uintptr_t)v.data % size == 0));
		fuzztouch(v.data, v.nbytes);
	}
	FUZZ_CHECK(gnn_st_get(st, n, &v) == GNN_ERR_RANGE);
	FUZZ_CHECK(gnn_st_name(st, n) == NULL);
	if ((meta = gnn_st_metadata(st, "format")))
		fuzztouch(meta, strlen(meta) + 1);
}

/* whether dst holds view v as a parameter of dtype want */
static int
copied(const void *dst, gnn_dtype want, const gnn_array *v)
{
	size_t n = v->nbytes / gnn_dtype_size(v->dtype);

	if (want == v->dtype)
		return v->nbytes == 0 || memcmp(dst, v->data, v->nbytes) == 0;
	for (size_t k = 0; k < n; k++) {
		float f;
		if (want == GNN_I64 && ((const int64_t *)dst)[k] != ((const int32_t *)v->data)[k])
			return 0;
		if (want == GNN_F32 && (f = (float)((const double *)v->data)[k],
		    memcmp((const float *)dst + k, &f, sizeof f) != 0))
			return 0;
	}
	return 1;
}

/* gnn_load_params with the file's own tensors as the declarations */
static void
loadown(const char *path, const gnn_safetensors *st)
{
	int n = gnn_st_count(st);
	gnn_tensor_info *p = calloc((size_t)n + 1, sizeof *p);
	void **dst = calloc((size_t)n + 1, sizeof *dst);
	gnn_array v;

	if (!p || !dst)
		abort();
	for (int i = 0; i < n; i++) {
		gnn_st_get(st, i, &v);
		p[i] = (gnn_tensor_info){.name = gnn_st_name(st, i), .rank = v.rank,
			.dtype = v.dtype == GNN_F64 ? GNN_F32 : v.dtype == GNN_I32 ? GNN_I64 : v.dtype};
		memcpy(p[i].shape, v.shape, sizeof v.shape);
		if (!(dst[i] = malloc((size_t)gnn_array_numel(&v) * gnn_dtype_size(p[i].dtype) + 1)))
			abort();
	}
	FUZZ_CHECK(gnn_load_params(path, p, n, dst) == GNN_OK);
	for (int i = 0; i < n; i++) {
		gnn_st_get(st, i, &v);
		FUZZ_CHECK(copied(dst[i], p[i].dtype, &v));
		free(dst[i]);
	}
	free(dst);
	free(p);
}

/* gnn_load_params with the GCN's declarations: all or nothing */
static void
loadgcn(const char *path, const gnn_safetensors *st)
{
	static unsigned char buf[GCNBYTES], before[GCNBYTES];
	void *dst[NGCN];
	size_t at = 0;
	gnn_array v;
	gnn_status s;

	for (int i = 0; i < NGCN; i++) {
		dst[i] = buf + at;
		at += (size_t)(gcn[i].rank == 2 ? gcn[i].shape[0] * gcn[i].shape[1] : gcn[i].shape[0]) * 4;
	}
	memset(buf, 0xa5, sizeof buf);
	memcpy(before, buf, sizeof buf);
	if ((s = gnn_load_params(path, gcn, NGCN, dst)) != GNN_OK) {
		fuzzfailed(s);
		FUZZ_CHECK(memcmp(buf, before, sizeof buf) == 0);
		return;
	}
	for (int i = 0; i < NGCN; i++) {
		FUZZ_CHECK(gnn_st_get(st, gnn_st_find(st, gcn[i].name), &v) == GNN_OK);
		FUZZ_CHECK(copied(dst[i], GNN_F32, &v));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzzfile(data, size);
	gnn_safetensors *st = (gnn_safetensors *)&st;
	gnn_status s;

	if ((s = gnn_st_open(path, &st)) != GNN_OK) {
		fuzzfailed(s);
		FUZZ_CHECK(st == NULL);
		FUZZ_CHECK(gnn_load_params(path, gcn, NGCN, (void *[NGCN]){0}) == s);
		fuzzdone();
		return 0;
	}
	checkviews(st);
	loadown(path, st);
	loadgcn(path, st);
	gnn_st_close(st);
	fuzzdone();
	return 0;
}
