/*
** test_npy.c: the runtime's status/dtype basics and .npy reading/writing.
**
** Most cases build .npy files byte by byte (so each header quirk and each
** corruption is explicit); the real Cora arrays are checked when the shared
** folder is given as argv[1] or GNN_SHARED_DIR.
** Usage: test_npy [shared-dir]
*/
#include "rtcheck.h"

#include <stdint.h>

/* writes magic, version, header length and hdr, then n data bytes */
static const char *
mknpy(const char *name, int major, int minor, const char *hdr, const void *data, size_t n)
{
	const char *path = tmppath(name);
	size_t hlen = strlen(hdr), plen = major == 1 ? 10 : 12;
	unsigned char *b = malloc(plen + hlen + n + 1);

	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)major;
	b[7] = (unsigned char)minor;
	for (size_t i = 8; i < plen; i++)
		b[i] = (unsigned char)(hlen >> 8 * (i - 8));
	memcpy(b + plen, hdr, hlen);
	if (n)
		memcpy(b + plen + hlen, data, n);
	putfile(path, b, plen + hlen + n);
	free(b);
	return path;
}

/* reads path expecting failure s; checks the message names the file and has msg */
static void
bad(const char *path, gnn_status s, const char *msg)
{
	gnn_array a;

	memset(&a, 0x5a, sizeof a);
	if (!CHECK_ST(gnn_npy_read(path, &a), s))
		printf("  (reading %s)\n", path);
	CHECK(a.data == NULL && a.rank == 0 && a.nbytes == 0 && a.dtype == 0);
	CHECK(strncmp(gnn_errmsg(), path, strlen(path)) == 0);
	CHECK_MSG(msg);
}

static void
test_basics(void)
{
	CHECK(strcmp(gnn_errmsg(), "") == 0);
	CHECK(strcmp(gnn_status_name(GNN_OK), "GNN_OK") == 0);
	CHECK(strcmp(gnn_status_name(GNN_ERR_FORMAT), "GNN_ERR_FORMAT") == 0);
	CHECK(strcmp(gnn_status_name(GNN_ERR_STATE), "GNN_ERR_STATE") == 0);
	CHECK(strcmp(gnn_status_name((gnn_status)99), "GNN_ERR_UNKNOWN") == 0);
	CHECK(gnn_dtype_size(GNN_F32) == 4 && gnn_dtype_size(GNN_BF16) == 2);
	CHECK(gnn_dtype_size(GNN_I64) == 8 && gnn_dtype_size(GNN_BOOL) == 1);
	CHECK(gnn_dtype_size((gnn_dtype)0) == 0 && gnn_dtype_size((gnn_dtype)14) == 0);
	CHECK(strcmp(gnn_dtype_name(GNN_BF16), "bf16") == 0);
	CHECK(strcmp(gnn_dtype_name((gnn_dtype)0), "?") == 0);
	CHECK(gnn_array_numel(&(gnn_array){.rank = 0}) == 1);
	CHECK(gnn_array_numel(&(gnn_array){.rank = 3, .shape = {2, 3, 4}}) == 24);
	CHECK(gnn_malloc(0) == NULL);
	gnn_free(NULL, 0);
	gnn_array_free(NULL);
}

static void
test_read_ok(void)
{
	float f[6] = {1, 2, 3, 4, 5, 6};
	const char *std = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n";
	gnn_array a;

	/* the same array in versions 1.0, 2.0 and 3.0 */
	for (int v = 1; v <= 3; v++) {
		CHECK_ST(gnn_npy_read(mknpy("v.npy", v, 0, std, f, sizeof f), &a), GNN_OK);
		CHECK(a.dtype == GNN_F32 && a.rank == 2 && a.shape[0] == 2 && a.shape[1] == 3);
		CHECK(a.nbytes == 24 && memcmp(a.data, f, 24) == 0);
		gnn_array_free(&a);
		CHECK(a.data == NULL && a.nbytes == 0);
	}

	/* any key order, double quotes, no trailing comma, newlines, Python 2 longs */
	CHECK_ST(gnn_npy_read(mknpy("o.npy", 1, 0,
		"{\"shape\": (3L,\n 2L), 'fortran_order' :False,'descr':'<f4'}", f, 24), &a), GNN_OK);
	CHECK(a.rank == 2 && a.shape[0] == 3 && a.shape[1] == 2);
	gnn_array_free(&a);

	/* scalar and 1-d shapes; a trailing comma in a 2-d one */
	CHECK_ST(gnn_npy_read(mknpy("s.npy", 1, 0,
		"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f, 4), &a), GNN_OK);
	CHECK(a.rank == 0 && gnn_array_numel(&a) == 1 && ((float *)a.data)[0] == 1);
	gnn_array_free(&a);
	CHECK_ST(gnn_npy_read(mknpy("r1.npy", 1, 0,
		"{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f, 20), &a), GNN_OK);
	CHECK(a.rank == 1 && a.shape[0] == 5);
	gnn_array_free(&a);
	CHECK_ST(gnn_npy_read(mknpy("r2.npy", 1, 0,
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 6,), }", f, 24), &a), GNN_OK);
	CHECK(a.rank == 2 && a.shape[1] == 6);
	gnn_array_free(&a);

	/* empty: no data bytes, no data pointer */
	CHECK_ST(gnn_npy_read(mknpy("e.npy", 1, 0,
		"{'descr': '<i8', 'fortran_order': False, 'shape': (0, 4), }", NULL, 0), &a), GNN_OK);
	CHECK(a.dtype == GNN_I64 && a.nbytes == 0 && a.data == NULL && a.shape[1] == 4);
	gnn_array_free(&a);

	/* fortran order is the same bytes at rank <= 1 */
	CHECK_ST(gnn_npy_read(mknpy("fo.npy", 1, 0,
		"{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", f, 24), &a), GNN_OK);
	gnn_array_free(&a);
}

static void
test_descrs(void)
{
	static const struct {
		const char *descr;
		gnn_dtype t;
	} ok[] = {
		{"<f4", GNN_F32}, {"<f8", GNN_F64}, {"<f2", GNN_F16}, {"<i4", GNN_I32},
		{"<i8", GNN_I64}, {"<i2", GNN_I16}, {"|i1", GNN_I8}, {"|b1", GNN_BOOL},
		{"|u1", GNN_U8}, {"<u2", GNN_U16}, {"<u4", GNN_U32}, {"<u8", GNN_U64},
		{"=f4", GNN_F32}, {"|f8", GNN_F64}, {"i4", GNN_I32}, {">u1", GNN_U8},
	};
	static const char *const unsupported[] = {"<c8", "|O", "<U10", "|S3", "<M8[ns]", "|V16", "<f16", ""};
	unsigned char data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	char hdr[128];
	gnn_array a;

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (), }", ok[i].descr);
		const char *p = mknpy("d.npy", 1, 0, hdr, data, gnn_dtype_size(ok[i].t));
		if (!CHECK_ST(gnn_npy_read(p, &a), GNN_OK) || !CHECK(a.dtype == ok[i].t))
			printf("  descr %s\n", ok[i].descr);
		gnn_array_free(&a);
	}
	for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
		snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (), }",
			unsupported[i]);
		bad(mknpy("d.npy", 1, 0, hdr, data, 8), GNN_ERR_DTYPE, "unsupported dtype");
	}
	bad(mknpy("d.npy", 1, 0, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }",
		data, 4), GNN_ERR_DTYPE, "structured");
}

static void
test_bigendian(void)
{
	/* 1.5f and -2 as big-endian bytes: swapped to native on load */
	unsigned char f[4] = {0x3f, 0xc0, 0, 0};
	unsigned char i[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
	gnn_array a;

	CHECK_ST(gnn_npy_read(mknpy("be.npy", 1, 0,
		"{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", f, 4), &a), GNN_OK);
	CHECK(a.dtype == GNN_F32 && *(float *)a.data == 1.5f);
	gnn_array_free(&a);
	CHECK_ST(gnn_npy_read(mknpy("be.npy", 1, 0,
		"{'descr': '>i8', 'fortran_order': False, 'shape': (), }", i, 8), &a), GNN_OK);
	CHECK(a.dtype == GNN_I64 && *(int64_t *)a.data == -2);
	gnn_array_free(&a);
}

static void
test_read_bad(void)
{
	static unsigned char data[64];
	const char *path;
	unsigned char b[16];
	gnn_array a;

	/* framing */
	putfile(path = tmppath("tiny.npy"), "\x93NUMPY\x01", 7);
	bad(path, GNN_ERR_FORMAT, "too small");
	putfile(path = tmppath("magic.npy"), "\x93NUMPZ\x01\x00\x02\x00{}", 12);
	bad(path, GNN_ERR_FORMAT, "bad magic");
	bad(mknpy("ver.npy", 4, 0, "{}", NULL, 0), GNN_ERR_FORMAT, "unsupported .npy version 4.0");
	bad(mknpy("ver.npy", 1, 1, "{}", NULL, 0), GNN_ERR_FORMAT, "version 1.1");
	bad(mknpy("ver.npy", 0, 0, "{}", NULL, 0), GNN_ERR_FORMAT, "version 0.0");
	/* header length beyond the file, and beyond the 1 MiB cap */
	memcpy(b, "\x93NUMPY\x01\x00\xff\x00{}", 12);
	putfile(path = tmppath("hlen.npy"), b, 12);
	bad(path, GNN_ERR_FORMAT, "truncated: header needs 265 bytes, file has 12");
	memcpy(b, "\x93NUMPY\x02\x00\x01\x00\x10\x00{}", 14);
	putfile(path = tmppath("hlen.npy"), b, 14);
	bad(path, GNN_ERR_FORMAT, "exceeds the limit");
	/* the limit (GNN_NPY_MAX_HEADER) is inclusive: a dict padded to exactly
	 * that many bytes reads, one byte more does not */
	{
		char *h = malloc(GNN_NPY_MAX_HEADER + 2);
		int n = sprintf(h, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }");
		memset(h + n, ' ', GNN_NPY_MAX_HEADER + 1 - (size_t)n);
		h[GNN_NPY_MAX_HEADER - 1] = '\n';
		h[GNN_NPY_MAX_HEADER] = '\0';
		if (CHECK_ST(gnn_npy_read(mknpy("lim.npy", 2, 0, h, data, 4), &a), GNN_OK))
			CHECK(a.rank == 1 && a.shape[0] == 1 && a.nbytes == 4);
		gnn_array_free(&a);
		h[GNN_NPY_MAX_HEADER - 1] = ' ';
		h[GNN_NPY_MAX_HEADER] = '\n';
		h[GNN_NPY_MAX_HEADER + 1] = '\0';
		bad(mknpy("lim.npy", 2, 0, h, data, 4), GNN_ERR_FORMAT,
			"header length 1048577 exceeds the limit of 1048576");
		free(h);
	}
	putfile(path = tmppath("hlen.npy"), "\x93NUMPY\x02\x00\x01\x00\x00", 11);
	bad(path, GNN_ERR_FORMAT, "truncated in the header length");

	/* the dict */
#define HDR(d, f, s) "{'descr': '" d "', 'fortran_order': " f ", 'shape': " s ", }"
	bad(mknpy("h.npy", 1, 0, "", NULL, 0), GNN_ERR_FORMAT, "expected '{'");
	bad(mknpy("h.npy", 1, 0, "{'descr': '<f4', 'shape': (1,)}", data, 4), GNN_ERR_FORMAT,
		"missing key 'fortran_order'");
	bad(mknpy("h.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False}", data, 4), GNN_ERR_FORMAT,
		"missing key 'shape'");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(1,)") "{", data, 4), GNN_ERR_FORMAT,
		"unexpected text after the dict");
	bad(mknpy("h.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'foo': 1}",
		data, 4), GNN_ERR_FORMAT, "unexpected key 'foo'");
	bad(mknpy("h.npy", 1, 0, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
		data, 4), GNN_ERR_FORMAT, "duplicate key 'descr'");
	bad(mknpy("h.npy", 1, 0, "{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", data, 4),
		GNN_ERR_FORMAT, "expected ':'");
	bad(mknpy("h.npy", 1, 0, "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", data, 4),
		GNN_ERR_FORMAT, "expected ',' or '}'");
	bad(mknpy("h.npy", 1, 0, "{'descr': '<f4", data, 4), GNN_ERR_FORMAT, "unterminated string");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "0", "(1,)"), data, 4), GNN_ERR_FORMAT, "True or False");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "True", "(2, 2)"), data, 16), GNN_ERR_FORMAT,
		"fortran_order=True is not supported for rank 2");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(5)"), data, 20), GNN_ERR_FORMAT, "tuple");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "[2, 3]"), data, 24), GNN_ERR_FORMAT, "tuple");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(2 3)"), data, 24), GNN_ERR_FORMAT,
		"expected ',' or ')'");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(,)"), data, 4), GNN_ERR_FORMAT,
		"expected an integer");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(2.5,)"), data, 4), GNN_ERR_FORMAT,
		"expected ',' or ')'");

	/* shapes: negative, too many dims, overflowing numel or bytes, huge literal */
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(-1, 3)"), data, 12), GNN_ERR_SHAPE,
		"negative dimension -1");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), data, 4),
		GNN_ERR_SHAPE, "more than 8 dimensions");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(3037000500, 3037000500)"), data, 4),
		GNN_ERR_SHAPE, "too large");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(2305843009213693952,)"), data, 4),
		GNN_ERR_SHAPE, "too large");
	bad(mknpy("h.npy", 1, 0, HDR("|u1", "False", "(9223372036854775807,)"), data, 4),
		GNN_ERR_FORMAT, "truncated: expected 9223372036854775807 data bytes, found 4");
	bad(mknpy("h.npy", 1, 0, HDR("<f4", "False", "(99999999999999999999,)"), data, 4),
		GNN_ERR_FORMAT, "integer too large");

	/* data size must match exactly */
	bad(mknpy("x.npy", 1, 0, HDR("<f4", "False", "(10,)"), data, 12), GNN_ERR_FORMAT,
		"x.npy: truncated: expected 40 data bytes, found 12");
	bad(mknpy("x.npy", 1, 0, HDR("<f4", "False", "(10,)"), data, 44), GNN_ERR_FORMAT,
		"trailing bytes: expected 40 data bytes, found 44");
	bad(mknpy("x.npy", 1, 0, HDR("<f4", "False", "(0,)"), data, 1), GNN_ERR_FORMAT,
		"expected 0 data bytes, found 1");
#undef HDR

	/* not a file */
	bad(tmppath("missing.npy"), GNN_ERR_IO, "No such file");
	bad(tmpdir, GNN_ERR_IO, "not a regular file");
	CHECK_ST(gnn_npy_read(NULL, &a), GNN_ERR_ARG);
	CHECK_ST(gnn_npy_read(tmppath("x.npy"), NULL), GNN_ERR_ARG);
}

/* the bytes numpy.save writes for a header: dict, spaces, '\n', to a multiple of 64 */
static int
numpy_header(const char *path, const char *dict, size_t total)
{
	size_t n, dn = strlen(dict);
	unsigned char *b = getfile(path, &n);
	int ok = b && n >= total && total % 64 == 0 && memcmp(b, "\x93NUMPY\x01\x00", 8) == 0
		&& b[8] == (total - 10) % 256 && b[9] == (total - 10) / 256
		&& memcmp(b + 10, dict, dn) == 0 && b[total - 1] == '\n';

	for (size_t i = 10 + dn; ok && i < total - 1; i++)
		ok = b[i] == ' ';
	free(b);
	return ok;
}

static void
test_write(void)
{
	static const gnn_dtype all[] = {
		GNN_F32, GNN_F64, GNN_F16, GNN_I32, GNN_I64, GNN_BOOL, GNN_U8,
		GNN_I8, GNN_I16, GNN_U16, GNN_U32, GNN_U64,
	};
	static const int64_t shapes[][4] = {{0}, {7}, {2, 3, 2}, {3, 0, 5, 1}};
	static const int ranks[] = {0, 1, 3, 4};
	unsigned char buf[256];
	const char *path = tmppath("w.npy");
	gnn_array a, b;

	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	for (size_t t = 0; t < sizeof all / sizeof all[0]; t++)
		for (int s = 0; s < 4; s++) {
			a = (gnn_array){.dtype = all[t], .rank = ranks[s], .data = buf};
			memcpy(a.shape, shapes[s], sizeof shapes[s]);
			a.nbytes = (size_t)gnn_array_numel(&a) * gnn_dtype_size(a.dtype);
			if (!CHECK_ST(gnn_npy_write(path, &a), GNN_OK)
			    || !CHECK_ST(gnn_npy_read(path, &b), GNN_OK)
			    || !CHECK(b.dtype == a.dtype && b.rank == a.rank && b.nbytes == a.nbytes)
			    || !CHECK(memcmp(b.shape, a.shape, sizeof a.shape) == 0)
			    || !CHECK(a.nbytes == 0 || memcmp(b.data, buf, a.nbytes) == 0))
				printf("  round trip of %s rank %d\n", gnn_dtype_name(all[t]), ranks[s]);
			gnn_array_free(&b);
		}

	/* byte for byte what numpy.save writes */
	a = (gnn_array){GNN_F32, 2, {2, 3}, buf, 24};
	CHECK_ST(gnn_npy_write(path, &a), GNN_OK);
	CHECK(numpy_header(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 128));
	a = (gnn_array){GNN_F64, 0, {0}, buf, 8};
	CHECK_ST(gnn_npy_write(path, &a), GNN_OK);
	CHECK(numpy_header(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 128));
	a = (gnn_array){GNN_BOOL, 1, {5}, buf, 5};
	CHECK_ST(gnn_npy_write(path, &a), GNN_OK);
	CHECK(numpy_header(path, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", 128));
	a = (gnn_array){GNN_U16, 8, {1, 1, 1, 1, 1, 1, 1, 1}, buf, 2};
	CHECK_ST(gnn_npy_write(path, &a), GNN_OK);
	CHECK(numpy_header(path,
		"{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1), }", 128));

	/* new files get 0666 less the umask, like any other */
	{
		struct stat st;
		mode_t um = umask(022);
		unlink(path);
		CHECK_ST(gnn_npy_write(path, &a), GNN_OK);
		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
		umask(um);
	}

	a = (gnn_array){GNN_BF16, 1, {2}, buf, 4};
	CHECK_ST(gnn_npy_write(path, &a), GNN_ERR_DTYPE);
	CHECK_MSG("bf16 has no .npy dtype");
	CHECK_ST(gnn_npy_write(NULL, &a), GNN_ERR_ARG);
	CHECK_ST(gnn_npy_write(tmppath("nodir/x.npy"), &(gnn_array){GNN_U8, 1, {1}, buf, 1}), GNN_ERR_IO);
	CHECK(strncmp(gnn_errmsg(), tmppath("nodir/x.npy"), strlen(tmppath("nodir/x.npy"))) == 0);
}

/* a failed write leaves the old file as it was, and no temporary behind */
static void
test_write_atomic(void)
{
	static const struct {
		gnn_array a;
		gnn_status s;
		const char *msg;
	} cases[] = {
		{{GNN_F32, 1, {3}, NULL, 12}, GNN_ERR_ARG, "data is NULL"},
		{{GNN_F32, 1, {3}, "abcdefghijkl", 8}, GNN_ERR_ARG, "nbytes is 8 but the shape needs 12"},
		{{GNN_F32, 9, {1}, "abcd", 4}, GNN_ERR_SHAPE, "rank 9"},
		{{GNN_F32, 2, {-1, -1}, "abcd", 4}, GNN_ERR_SHAPE, "negative"},
		{{GNN_F32, 2, {INT64_MAX, 2}, "abcd", 4}, GNN_ERR_SHAPE, "too large"},
		{{(gnn_dtype)99, 1, {1}, "abcd", 4}, GNN_ERR_DTYPE, "invalid dtype 99"},
	};
	const char *path = tmppath("keep.npy"), *copy = tmppath("keep.orig");
	unsigned char d[4] = {1, 2, 3, 4};
	gnn_array old = {GNN_I8, 1, {4}, d, 4};

	CHECK_ST(gnn_npy_write(path, &old), GNN_OK);
	CHECK_ST(gnn_npy_write(copy, &old), GNN_OK);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CHECK_ST(gnn_npy_write(path, &cases[i].a), cases[i].s);
		CHECK_MSG(cases[i].msg);
		CHECK(strncmp(gnn_errmsg(), path, strlen(path)) == 0);
		CHECK(samefile(path, copy));
	}
	CHECK(gnn_npy_write(path, NULL) == GNN_ERR_ARG && samefile(path, copy));
	CHECK(tmpcount(".tmp") == 0);
}

struct rw {
	const char *path;
	const gnn_array *a;
};

static gnn_status
op_read(void *ctx)
{
	struct rw *rw = ctx;
	gnn_array a;
	gnn_status s = gnn_npy_read(rw->path, &a);

	if (s == GNN_OK && (!CHECK(a.nbytes == rw->a->nbytes) || !CHECK(memcmp(a.data, rw->a->data, a.nbytes) == 0)))
		s = GNN_ERR_STATE;
	gnn_array_free(&a);
	return s;
}

static gnn_status
op_write(void *ctx)
{
	struct rw *rw = ctx;
	gnn_status s = gnn_npy_write(rw->path, rw->a);

	/* a failure must leave the previous contents */
	if (s != GNN_OK)
		CHECK(samefile(rw->path, tmppath("oom.orig")));
	return s;
}

static void
test_oom(void)
{
	int64_t d[6] = {1, -2, 3, -4, 5, -6};
	gnn_array a = {GNN_I64, 2, {3, 2}, d, sizeof d}, b = {GNN_I64, 1, {2}, d, 16};
	struct rw rw = {tmppath("oom.npy"), &a};

	CHECK_ST(gnn_npy_write(rw.path, &a), GNN_OK);
	CHECK(check_oom("gnn_npy_read", op_read, &rw) > 1);
	CHECK_ST(gnn_npy_write(tmppath("oom.orig"), &b), GNN_OK);
	CHECK_ST(gnn_npy_write(rw.path, &b), GNN_OK);
	CHECK(check_oom("gnn_npy_write", op_write, &rw) > 0);
	CHECK(tmpcount(".tmp") == 0);
}

static gnn_status
load(const char *path)
{
	gnn_array a;
	gnn_status s = gnn_npy_read(path, &a);

	if (s == GNN_OK)
		CHECK(a.nbytes == (size_t)gnn_array_numel(&a) * gnn_dtype_size(a.dtype));
	gnn_array_free(&a);
	return s;
}

static void
test_mutations(void)
{
	int16_t d[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	CHECK_ST(gnn_npy_write(tmppath("seed.npy"), &(gnn_array){GNN_I16, 2, {3, 4}, d, 24}), GNN_OK);
	check_mutations(tmppath("seed.npy"), tmppath("mut.npy"), load, 3000);
}

/* Cora as the shared folder holds it; each file must also write back byte for byte */
static void
test_cora(const char *shared)
{
	static const struct {
		const char *name;
		gnn_dtype t;
		int rank;
		int64_t d0, d1;
		double sum;
	} files[] = {
		{"x", GNN_F32, 2, 2708, 1433, 49216},
		{"edge_index", GNN_I64, 2, 2, 10556, 27640436},
		{"y", GNN_I64, 1, 2708, 0, 7781},
		{"train_mask", GNN_BOOL, 1, 2708, 0, 140},
		{"val_mask", GNN_BOOL, 1, 2708, 0, 500},
		{"test_mask", GNN_BOOL, 1, 2708, 0, 1000},
	};
	char path[1024];
	gnn_array a;

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		double sum = 0;
		snprintf(path, sizeof path, "%s/datasets/cora/%s.npy", shared, files[i].name);
		if (!CHECK_ST(gnn_npy_read(path, &a), GNN_OK))
			continue;
		CHECK(a.dtype == files[i].t && a.rank == files[i].rank && a.shape[0] == files[i].d0);
		CHECK(a.rank == 1 || a.shape[1] == files[i].d1);
		for (int64_t k = 0; k < gnn_array_numel(&a); k++)
			sum += a.dtype == GNN_F32 ? ((float *)a.data)[k]
				: a.dtype == GNN_I64 ? (double)((int64_t *)a.data)[k]
				: ((unsigned char *)a.data)[k];
		if (!CHECK(sum == files[i].sum))
			printf("  %s: sum %.17g\n", files[i].name, sum);
		if (a.dtype == GNN_I64 && a.rank == 2) {
			int64_t *e = a.data;
			CHECK(e[0] == 0 && e[1] == 0 && e[2] == 0 && e[3] == 1 && e[4] == 1 && e[5] == 1);
		}
		if (a.dtype == GNN_I64 && a.rank == 1) {
			int64_t *y = a.data;
			CHECK(y[0] == 3 && y[1] == 4 && y[2] == 4 && y[3] == 0 && y[4] == 3 && y[5] == 2);
		}
		CHECK_ST(gnn_npy_write(tmppath("cora.npy"), &a), GNN_OK);
		CHECK(samefile(path, tmppath("cora.npy")));
		gnn_array_free(&a);
	}
	snprintf(path, sizeof path, "%s/datasets/cora/x.npy", shared);
	{
		/* the same file cut short */
		size_t n;
		unsigned char *b = getfile(path, &n);
		if (CHECK(b != NULL)) {
			putfile(tmppath("x.npy"), b, 128 + 1000);
			bad(tmppath("x.npy"), GNN_ERR_FORMAT, "x.npy: truncated: expected 15522256 data bytes, found 1000");
		}
		free(b);
	}
}

int
main(int argc, char **argv)
{
	const char *shared = shareddir(argc, argv);

	mktmpdir();
	test_basics();
	test_read_ok();
	test_descrs();
	test_bigendian();
	test_read_bad();
	test_write();
	test_write_atomic();
	test_oom();
	test_mutations();
	if (shared)
		test_cora(shared);
	rmtmpdir();
	return summary();
}
