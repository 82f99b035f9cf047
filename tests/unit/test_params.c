/*
** test_params.c: gnn_load_params, gnn_check_ and gnn_error.
**
** Parameter files are made with gnn_st_write, one problem (or a mix) per
** file; after every failure the destination buffers must hold exactly the
** bytes they held before. The real GCN weights are loaded when the shared
** folder is given as argv[1] or GNN_SHARED_DIR.
** Usage: test_params [shared-dir]
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>
#include <sys/wait.h>

/* a file of up to 8 named arrays */
typedef struct Spec {
	const char *name;
	gnn_dtype t;
	int rank;
	int64_t shape[2];
} Spec;

static unsigned char filebytes[8][256];

/* writes the arrays of s (n of them) to tmp/name; data byte k of array i is i * 16 + k */
static const char *
mkfile(const char *name, const Spec *s, int n)
{
	const char *path = tmppath(name), *names[8];
	gnn_array a[8];

	for (int i = 0; i < n; i++) {
		size_t nb = gnn_dtype_size(s[i].t);
		for (int d = 0; d < s[i].rank; d++)
			nb *= (size_t)s[i].shape[d];
		for (size_t k = 0; k < nb; k++)
			filebytes[i][k] = (unsigned char)(i * 16 + k);
		a[i] = (gnn_array){s[i].t, s[i].rank, {s[i].shape[0], s[i].shape[1]}, filebytes[i], nb};
		names[i] = s[i].name;
	}
	if (!CHECK_ST(gnn_st_write(path, names, a, n), GNN_OK))
		return "(none)";
	return path;
}

/* destination buffers filled with a pattern, to see that a failure leaves them be */
static unsigned char dstbuf[8][256];
static void *const dst[8] = {dstbuf[0], dstbuf[1], dstbuf[2], dstbuf[3], dstbuf[4],
	dstbuf[5], dstbuf[6], dstbuf[7]};

static void
fill(void)
{
	memset(dstbuf, 0xa5, sizeof dstbuf);
}

static int
untouched(void)
{
	for (size_t i = 0; i < sizeof dstbuf; i++)
		if (((unsigned char *)dstbuf)[i] != 0xa5)
			return 0;
	return 1;
}

/* the number of lines of the message, each of which must start with path */
static int
lines(const char *path)
{
	const char *m = gnn_errmsg();
	int n = 0;

	for (;;) {
		if (strncmp(m, path, strlen(path)) != 0)
			return -1;
		n++;
		if (!(m = strchr(m, '\n')))
			return n;
		m++;
	}
}

/* the declarations of the model used below */
static const gnn_tensor_info model[] = {
	{"lin.weight", GNN_F32, 2, {2, 3}, "[2, 3]"},
	{"lin.bias", GNN_F32, 1, {2}, "[2]"},
	{"steps", GNN_I64, 0, {0}, "[]"},
	{"mask", GNN_BOOL, 1, {3}, "[3]"},
};
static const Spec good[] = {
	{"lin.weight", GNN_F32, 2, {2, 3}},
	{"lin.bias", GNN_F32, 1, {2}},
	{"steps", GNN_I64, 0, {0}},
	{"mask", GNN_BOOL, 1, {3}},
};

static void
test_ok(void)
{
	const char *path = mkfile("good.safetensors", good, 4);
	/* the writer reorders tensors: the loader must go by name */
	static const int nbytes[] = {24, 8, 8, 3};

	fill();
	if (!CHECK_ST(gnn_load_params(path, model, 4, dst), GNN_OK))
		return;
	for (int i = 0; i < 4; i++) {
		CHECK(memcmp(dstbuf[i], filebytes[i], (size_t)nbytes[i]) == 0);
		CHECK(dstbuf[i][nbytes[i]] == 0xa5);   /* nothing past the end */
	}

	/* f32 accepts f64 (narrowed), i64 accepts i32 (widened) */
	{
		const double d[2] = {1.5, -1e300};
		const int32_t k = -7;
		const char *names[] = {"w", "k"};
		const gnn_tensor_info decl[] = {
			{"w", GNN_F32, 1, {2}, "[2]"},
			{"k", GNN_I64, 0, {0}, "[]"},
		};
		gnn_array a[] = {
			{GNN_F64, 1, {2}, (void *)d, sizeof d},
			{GNN_I32, 0, {0}, (void *)&k, sizeof k},
		};
		float w[3] = {0, 0, 42};
		int64_t kk = 0;
		void *const out[] = {w, &kk};
		CHECK_ST(gnn_st_write(tmppath("conv.safetensors"), names, a, 2), GNN_OK);
		CHECK_ST(gnn_load_params(tmppath("conv.safetensors"), decl, 2, out), GNN_OK);
		CHECK(w[0] == 1.5f && w[1] == -(float)INFINITY && w[2] == 42 && kk == -7);
	}

	/* no parameters and an empty file; an empty parameter needs no buffer */
	{
		const gnn_tensor_info decl[] = {{"e", GNN_F32, 2, {0, 3}, "[0, 3]"}};
		const char *names[] = {"e"};
		gnn_array a[] = {{GNN_F32, 2, {0, 3}, NULL, 0}};
		void *const out[] = {NULL};
		CHECK_ST(gnn_st_write(tmppath("empty.safetensors"), NULL, NULL, 0), GNN_OK);
		CHECK_ST(gnn_load_params(tmppath("empty.safetensors"), NULL, 0, NULL), GNN_OK);
		CHECK_ST(gnn_st_write(tmppath("e.safetensors"), names, a, 1), GNN_OK);
		CHECK_ST(gnn_load_params(tmppath("e.safetensors"), decl, 1, out), GNN_OK);
	}
}

static void
test_bad(void)
{
	const char *path;
	char want[512];

	/* missing */
	path = mkfile("missing.safetensors", good, 3);
	fill();
	CHECK_ST(gnn_load_params(path, model, 4, dst), GNN_ERR_FORMAT);
	snprintf(want, sizeof want, "%s: parameter 'mask' (bool [3]) is missing from the file", path);
	CHECK(strcmp(gnn_errmsg(), want) == 0);
	CHECK(untouched());

	/* unexpected */
	{
		Spec s[5];
		memcpy(s, good, sizeof good);
		s[4] = (Spec){"conv3.bias", GNN_F32, 1, {7}};
		path = mkfile("unexpected.safetensors", s, 5);
	}
	CHECK_ST(gnn_load_params(path, model, 4, dst), GNN_ERR_FORMAT);
	snprintf(want, sizeof want, "%s: unexpected parameter 'conv3.bias': the model has no such "
		"parameter", path);
	CHECK(strcmp(gnn_errmsg(), want) == 0);
	CHECK(untouched());

	/* mis-shaped: transposed, and a different rank */
	{
		Spec s[4];
		memcpy(s, good, sizeof good);
		s[0].shape[0] = 3, s[0].shape[1] = 2;
		s[3] = (Spec){"mask", GNN_BOOL, 2, {1, 3}};
		path = mkfile("shape.safetensors", s, 4);
	}
	CHECK_ST(gnn_load_params(path, model, 4, dst), GNN_ERR_SHAPE);
	snprintf(want, sizeof want, "%s: parameter 'lin.weight': expected f32 [2, 3], the file has "
		"f32 [3, 2]\n%s: parameter 'mask': expected bool [3], the file has bool [1, 3]", path, path);
	CHECK(strcmp(gnn_errmsg(), want) == 0);
	CHECK(untouched());

	/* wrong dtype: i64 for f32; the conversions go one way only */
	{
		Spec s[4];
		memcpy(s, good, sizeof good);
		s[1].t = GNN_I64;
		s[2].t = GNN_F64;
		s[3].t = GNN_U8;
		path = mkfile("dtype.safetensors", s, 4);
	}
	CHECK_ST(gnn_load_params(path, model, 4, dst), GNN_ERR_DTYPE);
	CHECK(lines(path) == 3);
	CHECK_MSG("parameter 'lin.bias': expected f32 [2], the file has i64 [2]\n");
	CHECK_MSG("parameter 'steps': expected i64 [], the file has f64 []\n");
	CHECK_MSG("parameter 'mask': expected bool [3], the file has u8 [3]");
	CHECK(untouched());
	{
		const gnn_tensor_info decl[] = {
			{"lin.weight", GNN_F64, 2, {2, 3}, "[2, 3]"},
			{"lin.bias", GNN_F32, 1, {2}, "[2]"},
			{"steps", GNN_I32, 0, {0}, "[]"},
			{"mask", GNN_BOOL, 1, {3}, "[3]"},
		};
		path = mkfile("good.safetensors", good, 4);
		CHECK_ST(gnn_load_params(path, decl, 4, dst), GNN_ERR_DTYPE);
		CHECK_MSG("'lin.weight': expected f64 [2, 3], the file has f32 [2, 3]");
		CHECK_MSG("'steps': expected i32 [], the file has i64 []");
		CHECK(lines(path) == 2 && untouched());
	}

	/* everything at once: one message, a line each, in declaration then file order */
	{
		Spec s[4] = {
			{"lin.weight", GNN_F64, 2, {3, 2}},
			{"lin.bias", GNN_I32, 1, {2}},
			{"zz", GNN_F32, 1, {1}},
			{"aa", GNN_F32, 1, {1}},
		};
		path = mkfile("all.safetensors", s, 4);
	}
	CHECK_ST(gnn_load_params(path, model, 4, dst), GNN_ERR_FORMAT);
	CHECK(lines(path) == 6);
	CHECK_MSG("'lin.weight': expected f32 [2, 3], the file has f64 [3, 2]\n");
	CHECK_MSG("'lin.bias': expected f32 [2], the file has i32 [2]\n");
	CHECK_MSG("'steps' (i64 []) is missing");
	CHECK_MSG("'mask' (bool [3]) is missing");
	CHECK_MSG("unexpected parameter 'zz'");
	CHECK_MSG("unexpected parameter 'aa'");
	CHECK(strstr(gnn_errmsg(), "'mask'") < strstr(gnn_errmsg(), "unexpected"));
	CHECK(untouched());

	/* more problems than the message holds: cut at a line, with a count */
	{
		enum { M = 60 };
		gnn_tensor_info decl[M];
		char names[M][64];
		void *out[M];
		for (int i = 0; i < M; i++) {
			snprintf(names[i], sizeof names[i], "a.rather.long.parameter.name.number.%d", i);
			decl[i] = (gnn_tensor_info){names[i], GNN_F32, 1, {1}, "[1]"};
			out[i] = dstbuf[0];
		}
		CHECK_ST(gnn_load_params(tmppath("empty.safetensors"), decl, M, out), GNN_ERR_FORMAT);
		CHECK(lines(tmppath("empty.safetensors")) > 3);
		CHECK_MSG("more problems");
		CHECK(strlen(gnn_errmsg()) < 1023);
		CHECK(untouched());
	}

	/* the file itself */
	CHECK_ST(gnn_load_params(tmppath("nonexistent"), model, 4, dst), GNN_ERR_IO);
	CHECK_MSG("nonexistent");
	putfile(tmppath("junk.safetensors"), "\x02\0\0\0\0\0\0\0{}", 10);
	CHECK_ST(gnn_load_params(tmppath("junk.safetensors"), model, 4, dst), GNN_ERR_FORMAT);
	CHECK(untouched());
}

static void
test_args(void)
{
	const char *path = mkfile("good.safetensors", good, 4);
	gnn_tensor_info decl[4];
	void *out[4] = {dstbuf[0], dstbuf[1], NULL, dstbuf[3]};

	fill();
	CHECK_ST(gnn_load_params(NULL, model, 4, dst), GNN_ERR_ARG);
	CHECK_ST(gnn_load_params(path, NULL, 4, dst), GNN_ERR_ARG);
	CHECK_ST(gnn_load_params(path, model, 4, NULL), GNN_ERR_ARG);
	CHECK_ST(gnn_load_params(path, model, -1, dst), GNN_ERR_ARG);
	CHECK_ST(gnn_load_params(path, model, 4, out), GNN_ERR_ARG);
	CHECK_MSG("'steps': no destination buffer");
	memcpy(decl, model, sizeof decl);
	decl[0].shape[0] = -1;   /* a symbolic dim is not a parameter's */
	CHECK_ST(gnn_load_params(path, decl, 4, dst), GNN_ERR_ARG);
	CHECK_MSG("'lin.weight'");
	memcpy(decl, model, sizeof decl);
	decl[3].name = "lin.bias";
	decl[3].dtype = GNN_F32, decl[3].shape[0] = 2;
	CHECK_ST(gnn_load_params(path, decl, 4, dst), GNN_ERR_ARG);
	CHECK_MSG("'lin.bias' is declared twice");
	memcpy(decl, model, sizeof decl);
	decl[1].name = NULL;
	CHECK_ST(gnn_load_params(path, decl, 4, dst), GNN_ERR_ARG);
	memcpy(decl, model, sizeof decl);
	decl[2].dtype = (gnn_dtype)0;
	CHECK_ST(gnn_load_params(path, decl, 4, dst), GNN_ERR_ARG);
	CHECK(untouched());
}

static gnn_status
op_load(void *ctx)
{
	(void)ctx;
	return gnn_load_params(tmppath("good.safetensors"), model, 4, dst);
}

static void
test_oom(void)
{
	const char *path;
	TestAlloc ta;
	gnn_status s = GNN_ERR_MEM;

	mkfile("good.safetensors", good, 4);
	CHECK(check_oom("gnn_load_params", op_load, NULL) > 3);
	/* a failing load under a failing allocator: MEM or the real problem, no leak */
	{
		Spec sp[4];
		memcpy(sp, good, sizeof good);
		sp[0].shape[0] = 3, sp[0].shape[1] = 2;
		sp[3].name = "other";
		path = mkfile("bad.safetensors", sp, 4);
	}
	fill();
	for (int k = 0; s == GNN_ERR_MEM && k < 1000; k++) {
		ta = (TestAlloc){.failat = k};
		gnn_set_allocator(testalloc, &ta);
		s = gnn_load_params(path, model, 4, dst);
		gnn_set_allocator(NULL, NULL);
		if (!CHECK((s == GNN_ERR_MEM || s == GNN_ERR_FORMAT) && ta.live == 0 && ta.badsizes == 0))
			break;
	}
	CHECK(s == GNN_ERR_FORMAT && untouched());
}

static void
test_gcn(const char *shared)
{
	static const gnn_tensor_info decl[] = {
		{"conv1.lin.weight", GNN_F32, 2, {16, 1433}, "[16, 1433]"},
		{"conv1.bias", GNN_F32, 1, {16}, "[16]"},
		{"conv2.lin.weight", GNN_F32, 2, {7, 16}, "[7, 16]"},
		{"conv2.bias", GNN_F32, 1, {7}, "[7]"},
	};
	static float w1[16 * 1433], b1[16], w2[7 * 16], b2[7];
	void *const out[] = {w1, b1, w2, b2};
	gnn_tensor_info bad[4];
	gnn_safetensors *st;
	gnn_array v;
	char path[1024], want[2048];

	snprintf(path, sizeof path, "%s/weights/gcn_cora.safetensors", shared);
	if (!CHECK_ST(gnn_load_params(path, decl, 4, out), GNN_OK))
		return;
	/* the first values, as test_safetensors knows them (printed to 8 digits) */
	CHECK(fabsf(w1[0] - 0.08967604f) < 1e-7f && fabsf(b1[0] - 0.104629f) < 1e-7f);
	CHECK(fabsf(w2[0] + 0.6178755f) < 1e-7f && fabsf(b2[0] + 0.53209186f) < 1e-7f);
	if (CHECK_ST(gnn_st_open(path, &st), GNN_OK)) {
		for (int i = 0; i < 4; i++) {
			CHECK_ST(gnn_st_get(st, gnn_st_find(st, decl[i].name), &v), GNN_OK);
			CHECK(memcmp(v.data, out[i], v.nbytes) == 0);
		}
		gnn_st_close(st);
	}

	/* PyG <= 1.7's layout, [in, out], is named as such */
	memcpy(bad, decl, sizeof bad);
	bad[0].shape[0] = 1433, bad[0].shape[1] = 16;
	memset(w1, 0, sizeof w1);
	CHECK_ST(gnn_load_params(path, bad, 4, out), GNN_ERR_SHAPE);
	snprintf(want, sizeof want, "%s: parameter 'conv1.lin.weight': expected f32 [1433, 16], "
		"the file has f32 [16, 1433]", path);
	CHECK(strcmp(gnn_errmsg(), want) == 0);
	CHECK(w1[0] == 0 && w1[16 * 1433 - 1] == 0);
	/* a model without conv2.bias: the file has one tensor too many */
	CHECK_ST(gnn_load_params(path, decl, 3, out), GNN_ERR_FORMAT);
	CHECK_MSG("unexpected parameter 'conv2.bias': the model has no such parameter");
}

static void
test_errors(void)
{
	pid_t pid;
	int status = 0;
	size_t n;
	unsigned char *text;

	CHECK(gnn_error(GNN_ERR_CUDA, "kernel %s failed: %d", "spmm", 700) == GNN_ERR_CUDA);
	CHECK(strcmp(gnn_errmsg(), "kernel spmm failed: 700") == 0);
	CHECK(gnn_error(GNN_OK, "%s", "") == GNN_OK && gnn_errmsg()[0] == '\0');

	gnn_check(GNN_OK);   /* returns */
	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (!freopen(tmppath("stderr"), "w", stderr))
			_exit(2);
		gnn_error(GNN_ERR_RANGE, "index %d", 5);
		gnn_check(gnn_error(GNN_ERR_RANGE, "index %d", 5));
		_exit(3);   /* not reached */
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	text = getfile(tmppath("stderr"), &n);
	if (CHECK(text != NULL)) {
		text[n] = '\0';
		CHECK(strstr((char *)text, "test_params.c:") != NULL);
		CHECK(strstr((char *)text, ": gnn_error(GNN_ERR_RANGE, \"index %d\", 5) failed: "
			"GNN_ERR_RANGE: index 5\n") != NULL);
		if (nfail)
			printf("  stderr: %s", (char *)text);
	}
	free(text);
}

int
main(int argc, char **argv)
{
	const char *shared = shareddir(argc, argv);

	mktmpdir();
	test_ok();
	test_bad();
	test_args();
	test_oom();
	test_errors();
	if (shared)
		test_gcn(shared);
	rmtmpdir();
	return summary();
}
