/*
** test_save.c: gnn_save_params (runtime/model.c, safetensors.c's writer).
**
** Seven parameters of every dtype it takes (BOOL first, so that the
** data must be reordered to stay aligned; an F64, an I64 scalar, an
** empty F32) are saved and loaded back with gnn_load_params, byte for
** byte; the header lists them in the given order, its length is a
** multiple of 8, the data is laid out by descending element size with
** no gap, and saving again over the file works and leaves no temporary.
** Errors: a NULL src list or src entry, a symbolic (-1) dim, a dtype it
** does not take, duplicate names, a directory that does not exist, is a
** file or cannot be written (not as root), a path that is a directory
** (the rename fails after the temporary is written): each fails with its status, leaves an existing file
** as it was and no temporary behind.  Every allocation failing in turn.
** `test_save --emit PATH` writes the file that save_params.py reads with
** Python (numpy, and the safetensors package when it is installed).
** Usage: test_save [--emit PATH]
*/
#include "rtcheck.h"

#include <stdint.h>

enum { NP = 7 };

static const gnn_tensor_info params[NP] = {
	{"mask", GNN_BOOL, 1, {5}, "[5]"},
	{"layer.w", GNN_F32, 2, {3, 4}, "[3, 4]"},
	{"idx", GNN_I32, 1, {3}, "[3]"},
	{"d", GNN_F64, 2, {2, 2}, "[2, 2]"},
	{"step", GNN_I64, 0, {0}, "[]"},
	{"layer.b", GNN_F32, 1, {4}, "[4]"},
	{"empty", GNN_F32, 2, {0, 3}, "[0, 3]"},
};

static unsigned char mask[5];
static float w[12], b[4];
static int32_t idx[3];
static double d[4];
static int64_t step = 42;
static const void *src[NP] = {mask, w, idx, d, &step, b, NULL};

/* the values save_params.py expects */
static void
fillsrc(void)
{
	for (int i = 0; i < 5; i++)
		mask[i] = (unsigned char)(i % 2);
	for (int i = 0; i < 12; i++)
		w[i] = (float)i * 0.25f - 1;
	for (int i = 0; i < 3; i++)
		idx[i] = i * 3 - 1;
	for (int i = 0; i < 4; i++)
		d[i] = i * 0.125 + 100, b[i] = (float)i * 0.5f;
}

static size_t
nbytes(const gnn_tensor_info *p)
{
	size_t n = gnn_dtype_size(p->dtype);

	for (int i = 0; i < p->rank; i++)
		n *= (size_t)p->shape[i];
	return n;
}

static void
test_roundtrip(void)
{
	const char *path = tmppath("p.safetensors");
	unsigned char buf[NP][96], *file;
	void *dst[NP];
	size_t n, hlen = 0;
	gnn_safetensors *st = NULL;
	gnn_array v;
	uint64_t expect = 0;

	for (int i = 0; i < NP; i++)
		dst[i] = buf[i];
	memset(buf, 0xa5, sizeof buf);
	CHECK_ST(gnn_save_params(path, params, NP, src), GNN_OK);
	CHECK_ST(gnn_load_params(path, params, NP, dst), GNN_OK);
	for (int i = 0; i < NP; i++)
		CHECK(nbytes(&params[i]) == 0 || memcmp(buf[i], src[i], nbytes(&params[i])) == 0);

	/* the header: length a multiple of 8, names in the given order */
	file = getfile(path, &n);
	if (CHECK(file && n >= 8)) {
		const char *prev = NULL, *h;
		for (int i = 0; i < 8; i++)
			hlen |= (size_t)file[i] << 8 * i;
		CHECK(hlen % 8 == 0 && 8 + hlen <= n);
		file[8 + hlen - 1] = 0;   /* a space of the padding, or the closing brace */
		h = (const char *)file + 8;
		for (int i = 0; i < NP; i++) {
			char key[64];
			const char *at;
			snprintf(key, sizeof key, "\"%s\":", params[i].name);
			at = strstr(h, key);
			CHECK(at && (!prev || at > prev));
			prev = at;
		}
	}
	free(file);

	/* the data: by descending element size, given order within a size */
	if (CHECK_ST(gnn_st_open(path, &st), GNN_OK)) {
		static const char *order[] = {"d", "step", "layer.w", "idx", "layer.b", "empty", "mask"};
		CHECK(gnn_st_count(st) == NP);
		for (int i = 0; i < NP && i < gnn_st_count(st); i++) {
			CHECK(gnn_st_get(st, i, &v) == GNN_OK);
			if (!CHECK(strcmp(gnn_st_name(st, i), order[i]) == 0))
				printf("  tensor %d is '%s', want '%s'\n", i, gnn_st_name(st, i), order[i]);
			expect += v.nbytes;
		}
		CHECK(8 + hlen + expect == n);   /* no gap, nothing after */
	}
	gnn_st_close(st);

	/* again over the file */
	w[0] = 7;
	CHECK_ST(gnn_save_params(path, params, NP, src), GNN_OK);
	CHECK_ST(gnn_load_params(path, params, NP, dst), GNN_OK);
	CHECK(((float *)buf[1])[0] == 7);
	w[0] = -1;
	CHECK(tmpcount("tmp") == 0);

	/* nothing at all is a valid file too */
	CHECK_ST(gnn_save_params(tmppath("none.safetensors"), NULL, 0, NULL), GNN_OK);
	CHECK_ST(gnn_load_params(tmppath("none.safetensors"), NULL, 0, NULL), GNN_OK);
	unlink(tmppath("none.safetensors"));
}

static void
test_errors(void)
{
	const char *path = tmppath("keep.safetensors"), *keep = tmppath("keep.copy");
	gnn_tensor_info bad[NP];
	const void *src2[NP];

	CHECK_ST(gnn_save_params(path, params, NP, src), GNN_OK);
	CHECK_ST(gnn_save_params(keep, params, NP, src), GNN_OK);

	CHECK_ST(gnn_save_params(path, params, NP, NULL), GNN_ERR_ARG);
	CHECK_MSG("src NULL");
	memcpy(src2, src, sizeof src2);
	src2[3] = NULL;
	CHECK_ST(gnn_save_params(path, params, NP, src2), GNN_ERR_ARG);
	CHECK_MSG("parameter 'd': src is NULL");
	CHECK_ST(gnn_save_params(path, NULL, NP, src), GNN_ERR_ARG);
	CHECK_ST(gnn_save_params(path, params, -1, src), GNN_ERR_ARG);
	CHECK_ST(gnn_save_params(NULL, params, NP, src), GNN_ERR_ARG);

	memcpy(bad, params, sizeof bad);
	bad[1].shape[0] = -1;
	CHECK_ST(gnn_save_params(path, bad, NP, src), GNN_ERR_SHAPE);
	CHECK_MSG("parameter 'layer.w': dim 0 is -1");
	memcpy(bad, params, sizeof bad);
	bad[5].dtype = GNN_F16;
	CHECK_ST(gnn_save_params(path, bad, NP, src), GNN_ERR_DTYPE);
	CHECK_MSG("dtype f16 cannot be saved");
	memcpy(bad, params, sizeof bad);
	bad[5].name = "layer.w";
	CHECK_ST(gnn_save_params(path, bad, NP, src), GNN_ERR_ARG);
	CHECK_MSG("duplicate tensor name 'layer.w'");
	bad[5].name = NULL;
	CHECK_ST(gnn_save_params(path, bad, NP, src), GNN_ERR_ARG);
	CHECK(samefile(path, keep));

	/* directories that cannot take the file */
	CHECK_ST(gnn_save_params(tmppath("nodir/p.safetensors"), params, NP, src), GNN_ERR_IO);
	CHECK_MSG("nodir/p.safetensors");
	if (geteuid() != 0) {   /* root writes anywhere */
		char dir[512], file[600];
		snprintf(dir, sizeof dir, "%s", tmppath("ro"));
		snprintf(file, sizeof file, "%s/p.safetensors", dir);
		CHECK(mkdir(dir, 0700) == 0);
		CHECK_ST(gnn_save_params(file, params, NP, src), GNN_OK);
		CHECK(chmod(dir, 0500) == 0);
		w[0] = 9;
		CHECK_ST(gnn_save_params(file, params, NP, src), GNN_ERR_IO);
		w[0] = -1;
		chmod(dir, 0700);
		/* the old file is whole and nothing else is there */
		CHECK(samefile(file, keep));
		unlink(file);
		CHECK(rmdir(dir) == 0);
	} else
		printf("read-only directory check skipped: running as root\n");
	/* a file where the directory should be; a directory where the file
	 * should be (the temporary is written, then the rename fails) */
	putfile(tmppath("afile"), "x", 1);
	CHECK_ST(gnn_save_params(tmppath("afile/p.safetensors"), params, NP, src), GNN_ERR_IO);
	unlink(tmppath("afile"));
	CHECK(mkdir(tmppath("adir"), 0700) == 0);
	CHECK_ST(gnn_save_params(tmppath("adir"), params, NP, src), GNN_ERR_IO);
	CHECK_MSG("adir");
	rmdir(tmppath("adir"));
	CHECK(tmpcount("tmp") == 0);
	unlink(keep);
}

static gnn_status
oomop(void *ctx)
{
	(void)ctx;
	return gnn_save_params(tmppath("oom.safetensors"), params, NP, src);
}

int
main(int argc, char **argv)
{
	fillsrc();
	if (argc > 2 && strcmp(argv[1], "--emit") == 0) {
		gnn_status s = gnn_save_params(argv[2], params, NP, src);
		if (s != GNN_OK)
			fprintf(stderr, "test_save: %s\n", gnn_errmsg());
		return s != GNN_OK;
	}
	mktmpdir();
	test_roundtrip();
	test_errors();
	check_oom("gnn_save_params", oomop, NULL);
	CHECK(tmpcount("tmp") == 0);
	rmtmpdir();
	return summary();
}
