/*
** test_safetensors.c: reading, validating and writing .safetensors files.
**
** Headers are written by hand here, one rule broken per file; the writer
** is checked against the byte layouts the reference implementation's own
** tests expect, and by round trips. The real GCN weights are checked when
** the shared folder is given as argv[1] or GNN_SHARED_DIR.
** Usage: test_safetensors [shared-dir]
*/
#include "rtcheck.h"

#include <stdint.h>

/* header length n (taken as strlen(json) when n is -1), json, then data */
static const char *
mkst_n(const char *name, long long n, const char *json, const void *data, size_t ndata)
{
	const char *path = tmppath(name);
	size_t jn = strlen(json);
	unsigned char *b = malloc(8 + jn + ndata + 1);
	uint64_t hn = n < 0 ? jn : (uint64_t)n;

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(hn >> 8 * i);
	memcpy(b + 8, json, jn);
	if (ndata)
		memcpy(b + 8 + jn, data, ndata);
	putfile(path, b, 8 + jn + ndata);
	free(b);
	return path;
}

static const char *
mkst(const char *json, size_t ndata)
{
	static const unsigned char zeros[256];

	return mkst_n("t.safetensors", -1, json, zeros, ndata);
}

/* opening path must fail with s; the message names the file and has msg */
static void
bad(const char *path, gnn_status s, const char *msg)
{
	static char junk;
	gnn_safetensors *st = (gnn_safetensors *)&junk;

	if (!CHECK_ST(gnn_st_open(path, &st), s))
		gnn_st_close(st);
	CHECK(st == NULL);
	CHECK(strncmp(gnn_errmsg(), path, strlen(path)) == 0);
	CHECK_MSG(msg);
}

#define T(name, dt, shape, b, e) "\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static void
test_open_ok(void)
{
	gnn_safetensors *st;
	gnn_array v;
	int i;

	/* metadata, a scalar, an empty tensor, escapes in names, trailing spaces */
	const char *json = "{\"__metadata__\":{\"format\":\"pt\",\"k\\u00e9y\":\"v\\\"al\\n\"},"
		T("b", "I64", "[]", 8, 16) "," T("a", "F32", "[2]", 0, 8) ","
		T("e\\u0301\\t\\ud83d\\ude00", "F32", "[0,3]", 16, 16) "," T("z", "U8", "[ 3 ]", 16, 19)
		"}   \n ";
	if (!CHECK_ST(gnn_st_open(mkst(json, 19), &st), GNN_OK))
		return;
	CHECK(gnn_st_count(st) == 4);
	/* indexed in data order */
	CHECK(strcmp(gnn_st_name(st, 0), "a") == 0 && strcmp(gnn_st_name(st, 1), "b") == 0);
	CHECK(strcmp(gnn_st_name(st, 2), "e\xcc\x81\t\xf0\x9f\x98\x80") == 0);
	CHECK(strcmp(gnn_st_name(st, 3), "z") == 0);
	CHECK(gnn_st_name(st, 4) == NULL && gnn_st_name(st, -1) == NULL);
	CHECK(gnn_st_find(st, "z") == 3 && gnn_st_find(st, "a") == 0);
	CHECK(gnn_st_find(st, "e\xcc\x81\t\xf0\x9f\x98\x80") == 2);
	CHECK(gnn_st_find(st, "c") == -1 && gnn_st_find(st, "") == -1 && gnn_st_find(NULL, "a") == -1);
	CHECK(strcmp(gnn_st_metadata(st, "format"), "pt") == 0);
	CHECK(strcmp(gnn_st_metadata(st, "k\xc3\xa9y"), "v\"al\n") == 0);
	CHECK(gnn_st_metadata(st, "missing") == NULL);

	CHECK_ST(gnn_st_get(st, gnn_st_find(st, "b"), &v), GNN_OK);
	CHECK(v.dtype == GNN_I64 && v.rank == 0 && v.nbytes == 8 && gnn_array_numel(&v) == 1);
	CHECK((uintptr_t)v.data % 8 == 0);
	CHECK_ST(gnn_st_get(st, 2, &v), GNN_OK);
	CHECK(v.dtype == GNN_F32 && v.rank == 2 && v.shape[0] == 0 && v.shape[1] == 3 && v.nbytes == 0);
	CHECK_ST(gnn_st_get(st, 3, &v), GNN_OK);
	CHECK(v.dtype == GNN_U8 && v.rank == 1 && v.shape[0] == 3 && v.nbytes == 3);

	memset(&v, 0x5a, sizeof v);
	CHECK_ST(gnn_st_get(st, 4, &v), GNN_ERR_RANGE);
	CHECK(v.data == NULL && v.rank == 0);
	CHECK_ST(gnn_st_get(st, -1, &v), GNN_ERR_RANGE);
	CHECK_ST(gnn_st_get(NULL, 0, &v), GNN_ERR_ARG);
	CHECK_ST(gnn_st_get(st, 0, NULL), GNN_ERR_ARG);
	gnn_st_close(st);

	/* no tensors at all: "{}" and nothing after it */
	CHECK_ST(gnn_st_open(mkst("{}", 0), &st), GNN_OK);
	CHECK(gnn_st_count(st) == 0 && gnn_st_find(st, "a") == -1 && gnn_st_metadata(st, "a") == NULL);
	gnn_st_close(st);
	gnn_st_close(NULL);
	CHECK(gnn_st_count(NULL) == 0);

	/* every supported dtype name */
	{
		static const char *const names[] = {"BOOL", "U8", "I8", "I16", "U16", "F16", "BF16",
			"I32", "U32", "F32", "F64", "I64", "U64"};
		static const gnn_dtype types[] = {GNN_BOOL, GNN_U8, GNN_I8, GNN_I16, GNN_U16, GNN_F16,
			GNN_BF16, GNN_I32, GNN_U32, GNN_F32, GNN_F64, GNN_I64, GNN_U64};
		char j[128];
		for (i = 0; i < 13; i++) {
			size_t size = gnn_dtype_size(types[i]);
			snprintf(j, sizeof j, "{\"x\":{\"dtype\":\"%s\",\"shape\":[2],\"data_offsets\":[0,%zu]}}",
				names[i], 2 * size);
			if (CHECK_ST(gnn_st_open(mkst(j, 2 * size), &st), GNN_OK)) {
				CHECK_ST(gnn_st_get(st, 0, &v), GNN_OK);
				CHECK(v.dtype == types[i]);
				gnn_st_close(st);
			}
		}
	}
}

static void
test_open_bad(void)
{
	const char *p;

	/* framing */
	putfile(p = tmppath("short.safetensors"), "\x02\0\0\0\0\0\0", 7);
	bad(p, GNN_ERR_FORMAT, "too small (7 bytes)");
	bad(mkst_n("big.safetensors", 100000001, "{}", NULL, 0), GNN_ERR_FORMAT,
		"header length 100000001 exceeds the limit");
	bad(mkst_n("big.safetensors", 3, "{}", NULL, 0), GNN_ERR_FORMAT,
		"header length 3 runs past the end of the file (10 bytes)");
	bad(mkst_n("big.safetensors", -1, "", NULL, 0), GNN_ERR_FORMAT, "must start with '{'");
	bad(mkst(" {}", 0), GNN_ERR_FORMAT, "must start with '{'");
	bad(mkst("[]", 0), GNN_ERR_FORMAT, "must start with '{'");
	bad(mkst("{}x", 0), GNN_ERR_FORMAT, "unexpected text after the header object");
	bad(mkst("{} {}", 0), GNN_ERR_FORMAT, "unexpected text");
	bad(mkst("{", 0), GNN_ERR_FORMAT, "expected a string");
	putfile(p = tmppath("nul.safetensors"), "\x04\0\0\0\0\0\0\0{}\0 ", 12);
	bad(p, GNN_ERR_FORMAT, "bad JSON header at byte 2: unexpected text");

	/* JSON syntax */
	bad(mkst("{\"a\" {}}", 0), GNN_ERR_FORMAT, "expected ':'");
	bad(mkst("{" T("a", "U8", "[1]", 0, 1) ",}", 1), GNN_ERR_FORMAT, "expected a string");
	bad(mkst("{" T("a", "U8", "[1,]", 0, 1) "}", 1), GNN_ERR_FORMAT, "expected a non-negative integer");
	bad(mkst("{" T("a", "U8", "[1 1]", 0, 1) "}", 1), GNN_ERR_FORMAT, "expected ',' or ']'");
	bad(mkst("{" T("a", "U8", "[,1]", 0, 1) "}", 1), GNN_ERR_FORMAT, "expected a non-negative integer");
	bad(mkst("{" T("a", "U8", "[1]", 0, 1) T("b", "U8", "[1]", 1, 2) "}", 2), GNN_ERR_FORMAT,
		"expected ',' or '}'");
	bad(mkst("{\"a", 0), GNN_ERR_FORMAT, "unterminated string");
	bad(mkst("{\"a\\q\":1}", 0), GNN_ERR_FORMAT, "bad escape");
	bad(mkst("{\"a\\u12G4\":1}", 0), GNN_ERR_FORMAT, "bad \\u escape");
	bad(mkst("{\"a\\u12", 0), GNN_ERR_FORMAT, "bad \\u escape");
	bad(mkst("{\"a\\udc00\":1}", 0), GNN_ERR_FORMAT, "unpaired surrogate");
	bad(mkst("{\"a\\ud800x\":1}", 0), GNN_ERR_FORMAT, "unpaired surrogate");
	bad(mkst("{\"a\\ud800\\u0041\":1}", 0), GNN_ERR_FORMAT, "unpaired surrogate");
	bad(mkst("{\"a\\u0000\":1}", 0), GNN_ERR_FORMAT, "\\u0000 is not allowed");
	bad(mkst("{\"a\tb\":1}", 0), GNN_ERR_FORMAT, "control character 0x09");
	bad(mkst("{\"a\xff\":1}", 0), GNN_ERR_FORMAT, "invalid UTF-8");
	bad(mkst("{\"a\xc0\x80\":1}", 0), GNN_ERR_FORMAT, "invalid UTF-8");
	bad(mkst("{\"a\xed\xa0\x80\":1}", 0), GNN_ERR_FORMAT, "invalid UTF-8");
	bad(mkst("{\"a\xf4\x90\x80\x80\":1}", 0), GNN_ERR_FORMAT, "invalid UTF-8");
	bad(mkst("{\"a\xe2\x82\":1}", 0), GNN_ERR_FORMAT, "invalid UTF-8");
	bad(mkst("{" T("a", "U8", "[01]", 0, 1) "}", 1), GNN_ERR_FORMAT, "leading zero");
	bad(mkst("{" T("a", "U8", "[1.0]", 0, 1) "}", 1), GNN_ERR_FORMAT, "expected an integer");
	bad(mkst("{" T("a", "U8", "[1e0]", 0, 1) "}", 1), GNN_ERR_FORMAT, "expected an integer");
	bad(mkst("{" T("a", "U8", "[-1]", 0, 1) "}", 1), GNN_ERR_FORMAT, "expected a non-negative integer");
	bad(mkst("{" T("a", "U8", "[9223372036854775808]", 0, 1) "}", 1), GNN_ERR_FORMAT,
		"integer too large");
	bad(mkst("{" T("a", "U8", "[1]", 0, 18446744073709551616) "}", 1), GNN_ERR_FORMAT,
		"integer too large");

	/* tensor entries */
	bad(mkst("{\"w\":[]}", 0), GNN_ERR_FORMAT, "expected '{'");
	bad(mkst("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"foo\":1}}", 1),
		GNN_ERR_FORMAT, "tensor 'w': unexpected key 'foo'");
	bad(mkst("{\"w\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1),
		GNN_ERR_FORMAT, "tensor 'w': duplicate key 'dtype'");
	bad(mkst("{\"w\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1), GNN_ERR_FORMAT,
		"tensor 'w': missing 'data_offsets'");
	bad(mkst("{\"w\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1), GNN_ERR_FORMAT,
		"tensor 'w': missing 'dtype'");
	bad(mkst("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 1), GNN_ERR_FORMAT,
		"tensor 'w': data_offsets must have 2 entries");
	bad(mkst("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1]}}", 1), GNN_ERR_FORMAT,
		"tensor 'w': data_offsets must have 2 entries");
	bad(mkst("{\"w\":{\"dtype\":8,\"shape\":[1],\"data_offsets\":[0,1]}}", 1), GNN_ERR_FORMAT,
		"expected a string");
	bad(mkst("{" T("w", "F8_E4M3", "[1]", 0, 1) "}", 1), GNN_ERR_DTYPE,
		"tensor 'w': dtype 'F8_E4M3' is not supported");
	bad(mkst("{" T("w", "F33", "[1]", 0, 4) "}", 4), GNN_ERR_DTYPE, "dtype 'F33'");
	bad(mkst("{" T("w", "f32", "[1]", 0, 4) "}", 4), GNN_ERR_DTYPE, "dtype 'f32'");
	bad(mkst("{" T("w", "U8", "[1,1,1,1,1,1,1,1,1]", 0, 1) "}", 1), GNN_ERR_SHAPE,
		"tensor 'w': rank above 8");
	bad(mkst("{" T("w", "U8", "[4294967296,4294967296]", 0, 1) "}", 1), GNN_ERR_SHAPE,
		"tensor 'w': shape [4294967296, 4294967296] is too large");

	/* offsets against shapes and the buffer */
	bad(mkst("{" T("conv1.bias", "F32", "[16]", 0, 12) "}", 12), GNN_ERR_FORMAT,
		"tensor 'conv1.bias': data_offsets [0, 12] do not hold f32[16] (64 bytes)");
	bad(mkst("{" T("w", "U8", "[0]", 4, 0) "}", 4), GNN_ERR_FORMAT, "data_offsets [4, 0]");
	bad(mkst("{" T("w", "U8", "[4]", 0, 4) "}", 3), GNN_ERR_FORMAT,
		"tensor 'w': data_offsets end 4 is past the buffer end 3");
	bad(mkst("{" T("a", "U8", "[8]", 0, 8) "," T("b", "U8", "[8]", 4, 12) "}", 12), GNN_ERR_FORMAT,
		"tensor 'b': data_offsets [4, 12] overlap the previous tensor");
	bad(mkst("{" T("a", "U8", "[4]", 0, 4) "," T("b", "U8", "[4]", 8, 12) "}", 12), GNN_ERR_FORMAT,
		"tensor 'b': data_offsets [8, 12] leave a hole before them");
	bad(mkst("{" T("a", "U8", "[4]", 4, 8) "}", 8), GNN_ERR_FORMAT, "leave a hole");
	bad(mkst("{" T("a", "U8", "[4]", 0, 4) "}", 8), GNN_ERR_FORMAT,
		"4 bytes after the last tensor belong to none");
	bad(mkst("{" T("a", "U8", "[0]", 0, 0) "," T("b", "U8", "[2]", 0, 2) "," T("c", "U8", "[0]", 1, 1)
		"}", 2), GNN_ERR_FORMAT, "tensor 'c': data_offsets [1, 1] overlap");
	bad(mkst("{" T("a", "U8", "[2]", 0, 2) "," T("w", "F32", "[1]", 2, 6) "}", 6), GNN_ERR_FORMAT,
		"tensor 'w': data offset 2 is not aligned to its 4-byte elements");
	bad(mkst("{" T("conv1.bias", "U8", "[1]", 0, 1) "," T("conv1.bias", "U8", "[1]", 1, 2) "}", 2),
		GNN_ERR_FORMAT, "duplicate tensor name 'conv1.bias'");
	bad(mkst("{" T("x", "U8", "[1]", 0, 1) "," T("x", "U8", "[1]", 0, 1) "}", 1),
		GNN_ERR_FORMAT, "duplicate tensor name 'x'");

	/* metadata */
	bad(mkst("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0), GNN_ERR_FORMAT,
		"duplicate __metadata__ key 'a'");
	bad(mkst("{\"__metadata__\":{},\"__metadata__\":{}}", 0), GNN_ERR_FORMAT,
		"duplicate key '__metadata__'");
	bad(mkst("{\"__metadata__\":{\"n\":1}}", 0), GNN_ERR_FORMAT,
		"__metadata__ value of 'n' must be a string");
	bad(mkst("{\"__metadata__\":null}", 0), GNN_ERR_FORMAT, "expected '{'");

	/* not a file */
	bad(tmppath("missing.safetensors"), GNN_ERR_IO, "No such file");
	bad(tmpdir, GNN_ERR_IO, "not a regular file");
	CHECK_ST(gnn_st_open(NULL, &(gnn_safetensors *){NULL}), GNN_ERR_ARG);
	CHECK_ST(gnn_st_open(p, NULL), GNN_ERR_ARG);
}

/* the exact files the reference implementation's tests expect */
static void
test_write_reference(void)
{
	static const float f[6] = {0, 1, 2, 3, 4, 5};
	static const char j1[] = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
	static const char j2[] = "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ";
	const char *path = tmppath("ref.safetensors");
	const char *names[1];
	gnn_array a = {GNN_F32, 3, {1, 2, 3}, (void *)f, 24};
	unsigned char *b;
	size_t n;

	names[0] = "attn.0";
	CHECK_ST(gnn_st_write(path, names, &a, 1), GNN_OK);
	b = getfile(path, &n);
	CHECK(b && n == 8 + 64 + 24 && memcmp(b, "\x40\0\0\0\0\0\0\0", 8) == 0);
	CHECK(b && memcmp(b + 8, j1, 64) == 0 && memcmp(b + 72, f, 24) == 0);
	free(b);

	names[0] = "attn0";
	a = (gnn_array){GNN_F32, 4, {1, 1, 2, 3}, (void *)f, 24};
	CHECK_ST(gnn_st_write(path, names, &a, 1), GNN_OK);
	b = getfile(path, &n);
	CHECK(b && n == 8 + 72 + 24 && memcmp(b, "\x48\0\0\0\0\0\0\0", 8) == 0);
	CHECK(b && memcmp(b + 8, j2, 72) == 0 && memcmp(b + 80, f, 24) == 0);
	free(b);

	CHECK_ST(gnn_st_write(path, NULL, NULL, 0), GNN_OK);
	b = getfile(path, &n);
	CHECK(b && n == 16 && memcmp(b, "\x08\0\0\0\0\0\0\0{}      ", 16) == 0);
	free(b);
}

static void
test_roundtrip(void)
{
	/* one of each dtype, mixed ranks, a scalar and an empty tensor */
	static const char *const names[] = {"bool", "u8", "i8", "i16", "u16", "f16", "bf16",
		"i32", "u32", "f32", "f64", "i64", "u64", "scalar", "empty", "q\"\\\n\x01\xc3\xa9"};
	static const gnn_dtype types[] = {GNN_BOOL, GNN_U8, GNN_I8, GNN_I16, GNN_U16, GNN_F16,
		GNN_BF16, GNN_I32, GNN_U32, GNN_F32, GNN_F64, GNN_I64, GNN_U64, GNN_F64, GNN_I32, GNN_U8};
	enum { N = sizeof names / sizeof names[0] };
	/* the reference order: descending alignment, then name */
	static const char *const order[N] = {"u64", "i64", "f64", "scalar", "f32", "u32", "empty",
		"i32", "bf16", "f16", "u16", "i16", "i8", "q\"\\\n\x01\xc3\xa9", "u8", "bool"};
	const char *path = tmppath("rt.safetensors");
	unsigned char buf[512], *b;
	gnn_array a[N], v;
	gnn_safetensors *st;
	size_t n;

	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 91 + 7);
	for (int i = 0; i < N; i++) {
		a[i] = (gnn_array){types[i], 1 + i % 3, {3, 2, 1}, buf, 0};
		a[i].nbytes = (size_t)gnn_array_numel(&a[i]) * gnn_dtype_size(types[i]);
	}
	a[13].rank = 0;
	a[13].nbytes = 8;
	a[14] = (gnn_array){GNN_I32, 2, {4, 0}, NULL, 0};
	if (!CHECK_ST(gnn_st_write(path, names, a, N), GNN_OK) || !CHECK_ST(gnn_st_open(path, &st), GNN_OK))
		return;
	CHECK(gnn_st_count(st) == N);
	for (int i = 0; i < N; i++) {
		int k = gnn_st_find(st, names[i]);
		if (!CHECK(k >= 0) || !CHECK_ST(gnn_st_get(st, k, &v), GNN_OK))
			continue;
		if (!CHECK(v.dtype == a[i].dtype && v.rank == a[i].rank && v.nbytes == a[i].nbytes)
		    || !CHECK(memcmp(v.shape, a[i].shape, (size_t)v.rank * sizeof v.shape[0]) == 0)
		    || !CHECK(v.nbytes == 0 || memcmp(v.data, buf, v.nbytes) == 0)
		    || !CHECK((uintptr_t)v.data % gnn_dtype_size(v.dtype) == 0))
			printf("  tensor %s\n", names[i]);
		CHECK(strcmp(gnn_st_name(st, i), order[i]) == 0);
	}
	gnn_st_close(st);
	/* names are escaped as serde_json does, and the header is padded to 8 */
	b = getfile(path, &n);
	CHECK(b && strstr((char *)b + 8, "\"q\\\"\\\\\\n\\u0001\xc3\xa9\":{") != NULL);
	CHECK(b && b[0] % 8 == 0);
	free(b);
}

static void
test_write_bad(void)
{
	const char *path = tmppath("keep.safetensors"), *copy = tmppath("keep.orig");
	unsigned char d[8] = {0};
	gnn_array ok[2] = {{GNN_U8, 1, {4}, d, 4}, {GNN_F32, 1, {2}, d, 8}};
	gnn_array nul[2] = {{GNN_U8, 1, {4}, d, 4}, {GNN_F32, 1, {2}, NULL, 8}};
	const char *names[2] = {"a", "b"};

	CHECK_ST(gnn_st_write(path, names, ok, 2), GNN_OK);
	CHECK_ST(gnn_st_write(copy, names, ok, 2), GNN_OK);

	CHECK_ST(gnn_st_write(path, names, nul, 2), GNN_ERR_ARG);
	CHECK_MSG("array 'b': data is NULL");
	CHECK(samefile(path, copy));
	names[1] = "a";
	CHECK_ST(gnn_st_write(path, names, ok, 2), GNN_ERR_ARG);
	CHECK_MSG("duplicate tensor name 'a'");
	names[1] = "__metadata__";
	CHECK_ST(gnn_st_write(path, names, ok, 2), GNN_ERR_ARG);
	CHECK_MSG("'__metadata__' cannot name a tensor");
	names[1] = "bad\xff";
	CHECK_ST(gnn_st_write(path, names, ok, 2), GNN_ERR_ARG);
	CHECK_MSG("name 1 is not valid UTF-8");
	names[1] = NULL;
	CHECK_ST(gnn_st_write(path, names, ok, 2), GNN_ERR_ARG);
	names[1] = "b";
	ok[1].rank = -1;
	CHECK_ST(gnn_st_write(path, names, ok, 2), GNN_ERR_SHAPE);
	CHECK_MSG("array 'b': rank -1");
	CHECK_ST(gnn_st_write(path, names, ok, -1), GNN_ERR_ARG);
	CHECK_ST(gnn_st_write(path, NULL, ok, 1), GNN_ERR_ARG);
	CHECK_ST(gnn_st_write(NULL, names, ok, 1), GNN_ERR_ARG);
	CHECK(strncmp(gnn_errmsg(), "gnn_st_write", 12) == 0);
	CHECK(samefile(path, copy));
	CHECK(tmpcount(".tmp") == 0);
	CHECK_ST(gnn_st_write(tmppath("nodir/w.safetensors"), names, ok, 1), GNN_ERR_IO);
}

/*
** The documented limits (gnnrt.h): GNN_ST_MAX_TENSORS tensors and as many
** __metadata__ entries read, one more of either does not, nor is it
** written; a header of GNN_ST_MAX_HEADER bytes passes the length check.
*/
static void
test_limits(void)
{
	enum { N = GNN_ST_MAX_TENSORS + 1, ENTRY = 64 };
	char *json = malloc((size_t)N * ENTRY + 64), *at;
	const char **names = malloc(N * sizeof *names);
	gnn_array *a = malloc(N * sizeof *a);
	gnn_safetensors *st;

	if (!json || !names || !a)
		abort();
	for (int n = N - 1; n <= N; n++) {
		at = json + sprintf(json, "{");
		for (int i = 0; i < n; i++)
			at += sprintf(at, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
				i ? "," : "", i);
		sprintf(at, "}");
		if (n < N && CHECK_ST(gnn_st_open(mkst(json, 0), &st), GNN_OK)) {
			CHECK(gnn_st_count(st) == GNN_ST_MAX_TENSORS);
			CHECK(gnn_st_find(st, "t65535") >= 0);
			gnn_st_close(st);
		}
	}
	bad(mkst(json, 0), GNN_ERR_FORMAT, "more than 65536 tensors, the limit of a header");
	for (int n = N - 1; n <= N; n++) {
		at = json + sprintf(json, "{\"__metadata__\":{");
		for (int i = 0; i < n; i++)
			at += sprintf(at, "%s\"k%d\":\"v\"", i ? "," : "", i);
		sprintf(at, "}}");
		if (n < N && CHECK_ST(gnn_st_open(mkst(json, 0), &st), GNN_OK)) {
			CHECK(strcmp(gnn_st_metadata(st, "k65535"), "v") == 0);
			gnn_st_close(st);
		}
	}
	bad(mkst(json, 0), GNN_ERR_FORMAT, "more than 65536 __metadata__ entries");
	/* the writer makes no file the reader refuses */
	for (int i = 0; i < N; i++) {
		sprintf(json + (size_t)i * 8, "t%d", i);
		names[i] = json + (size_t)i * 8;
		a[i] = (gnn_array){GNN_F32, 1, {0}, NULL, 0};
	}
	CHECK_ST(gnn_st_write(tmppath("many.safetensors"), names, a, N), GNN_ERR_ARG);
	CHECK_MSG("65537 tensors exceed the limit of 65536");
	CHECK(tmpcount("many.safetensors") == 0);
	/* the header limit is inclusive: a header of exactly that many bytes is not refused for it */
	bad(mkst_n("big.safetensors", GNN_ST_MAX_HEADER, "{}", NULL, 0), GNN_ERR_FORMAT,
		"header length 100000000 runs past the end of the file");
	free(a);
	free(names);
	free(json);
}

static gnn_status
op_open(void *ctx)
{
	gnn_safetensors *st;
	gnn_status s = gnn_st_open(ctx, &st);

	if (s == GNN_OK && !CHECK(gnn_st_count(st) == 40 && gnn_st_metadata(st, "m39") != NULL))
		s = GNN_ERR_STATE;
	gnn_st_close(st);
	return s;
}

struct wr {
	const char *const *names;
	const gnn_array *a;
	int n;
};

static gnn_status
op_write(void *ctx)
{
	struct wr *w = ctx;
	gnn_status s = gnn_st_write(tmppath("oom.safetensors"), w->names, w->a, w->n);

	if (s != GNN_OK)
		CHECK(samefile(tmppath("oom.safetensors"), tmppath("oom.orig")));
	return s;
}

static void
test_oom(void)
{
	/* enough tensors and metadata to make the tables grow */
	enum { N = 40 };
	char names[N][16], json[8192];
	const char *np[N];
	gnn_array a[N];
	unsigned char d[N * 4] = {0};
	size_t n = 0;
	struct wr w = {np, a, N};

	n += (size_t)snprintf(json + n, sizeof json - n, "{\"__metadata__\":{");
	for (int i = 0; i < N; i++)
		n += (size_t)snprintf(json + n, sizeof json - n, "%s\"m%d\":\"v\"", i ? "," : "", i);
	n += (size_t)snprintf(json + n, sizeof json - n, "}");
	for (int i = 0; i < N; i++) {
		n += (size_t)snprintf(json + n, sizeof json - n,
			",\"t%d\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%d,%d]}", i, 4 * i, 4 * i + 4);
		snprintf(names[i], sizeof names[i], "t%d", i);
		np[i] = names[i];
		a[i] = (gnn_array){GNN_F32, 1, {1}, d + 4 * i, 4};
	}
	snprintf(json + n, sizeof json - n, "}");
	CHECK(check_oom("gnn_st_open", op_open, (void *)mkst_n("oom.safetensors", -1, json, d, sizeof d)) > 5);
	CHECK_ST(gnn_st_write(tmppath("oom.orig"), np, a, 3), GNN_OK);
	CHECK_ST(gnn_st_write(tmppath("oom.safetensors"), np, a, 3), GNN_OK);
	CHECK(check_oom("gnn_st_write", op_write, &w) > 3);
	CHECK(tmpcount(".tmp") == 0);
}

static gnn_status
load(const char *path)
{
	gnn_safetensors *st;
	gnn_array v;
	gnn_status s = gnn_st_open(path, &st);

	/* whatever opens must be consistent */
	for (int i = 0; s == GNN_OK && i < gnn_st_count(st); i++) {
		CHECK(gnn_st_find(st, gnn_st_name(st, i)) == i);
		CHECK(gnn_st_get(st, i, &v) == GNN_OK);
		CHECK(v.nbytes == (size_t)gnn_array_numel(&v) * gnn_dtype_size(v.dtype));
	}
	gnn_st_close(st);
	return s;
}

static void
test_mutations(void)
{
	static const char json[] = "{\"__metadata__\":{\"format\":\"pt\",\"k\\u00e9y\":\"v\"},"
		T("w", "F32", "[2,2]", 0, 16) "," T("b", "I64", "[]", 16, 24) ","
		T("e", "U8", "[0]", 24, 24) "," T("m", "BOOL", "[3]", 24, 27) "}    ";
	static const unsigned char data[27] = {1, 2, 3};

	mkst_n("seed.safetensors", -1, json, data, sizeof data);
	check_mutations(tmppath("seed.safetensors"), tmppath("mut.safetensors"), load, 3000);
}

static void
test_gcn(const char *shared)
{
	static const struct {
		const char *name;
		int rank;
		int64_t d0, d1;
		float first[3];
	} want[] = {
		{"conv1.lin.weight", 2, 16, 1433, {0.08967604f, 0.14652087f, 0.35476536f}},
		{"conv1.bias", 1, 16, 0, {0.104629f, 0.12442968f, 0.15210047f}},
		{"conv2.lin.weight", 2, 7, 16, {-0.6178755f, 1.5560125f, 1.2282523f}},
		{"conv2.bias", 1, 7, 0, {-0.53209186f, -0.5883268f, 0.97249544f}},
	};
	const char *names[4];
	gnn_array v[4], w;
	gnn_safetensors *st, *st2;
	char path[1024];

	snprintf(path, sizeof path, "%s/weights/gcn_cora.safetensors", shared);
	if (!CHECK_ST(gnn_st_open(path, &st), GNN_OK))
		return;
	CHECK(gnn_st_count(st) == 4);
	for (int i = 0; i < 4; i++) {
		int k = gnn_st_find(st, want[i].name);
		names[i] = want[i].name;
		if (!CHECK(k >= 0) || !CHECK_ST(gnn_st_get(st, k, &v[i]), GNN_OK)) {
			gnn_st_close(st);
			return;
		}
		CHECK(v[i].dtype == GNN_F32 && v[i].rank == want[i].rank && v[i].shape[0] == want[i].d0);
		CHECK(v[i].rank == 1 || v[i].shape[1] == want[i].d1);
		for (int e = 0; e < 3; e++)
			if (!CHECK(((float *)v[i].data)[e] - want[i].first[e] < 1e-7f
			    && want[i].first[e] - ((float *)v[i].data)[e] < 1e-7f))
				printf("  %s[%d] = %.9g\n", want[i].name, e, ((float *)v[i].data)[e]);
	}
	/* write them back and read the copy: same tensors, same bytes */
	CHECK_ST(gnn_st_write(tmppath("gcn.safetensors"), names, v, 4), GNN_OK);
	if (CHECK_ST(gnn_st_open(tmppath("gcn.safetensors"), &st2), GNN_OK)) {
		for (int i = 0; i < 4; i++) {
			CHECK_ST(gnn_st_get(st2, gnn_st_find(st2, names[i]), &w), GNN_OK);
			CHECK(w.nbytes == v[i].nbytes && memcmp(w.data, v[i].data, w.nbytes) == 0);
			CHECK(w.rank == v[i].rank && memcmp(w.shape, v[i].shape, sizeof w.shape) == 0);
		}
		gnn_st_close(st2);
	}
	gnn_st_close(st);
}

int
main(int argc, char **argv)
{
	const char *shared = shareddir(argc, argv);

	mktmpdir();
	test_open_ok();
	test_open_bad();
	test_write_reference();
	test_roundtrip();
	test_write_bad();
	test_limits();
	test_oom();
	test_mutations();
	if (shared)
		test_gcn(shared);
	rmtmpdir();
	return summary();
}
