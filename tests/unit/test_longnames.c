/*
** test_longnames.c: the runtime's file readers and very long text.
**
** Tensor names in a safetensors header, keys and dtype strings in a .npy
** header and file paths have no length limit but the file's own.  Names
** must come through whole (two names that differ only past the first
** few thousand bytes stay two tensors, a prefix finds nothing), and a
** message about long text must still say what is wrong: the text is
** cut visibly ("...") and the rest of the message survives.
** Usage: test_longnames
*/
#include "rtcheck.h"

#include <stdint.h>

enum { Long = 100000 };

/* c repeated n times, then tail; malloc'd */
static char *
longstr(int c, size_t n, const char *tail)
{
	char *s = malloc(n + strlen(tail) + 1);

	memset(s, c, n);
	memcpy(s + n, tail, strlen(tail) + 1);
	return s;
}

/* a .npy file (version 2.0) with the header text hdr and no data */
static const char *
mknpy(const char *name, const char *hdr)
{
	const char *path = tmppath(name);
	size_t hlen = strlen(hdr);
	unsigned char *b = malloc(12 + hlen);

	memcpy(b, "\x93NUMPY\x02\x00", 8);
	for (int i = 0; i < 4; i++)
		b[8 + i] = (unsigned char)(hlen >> 8 * i);
	memcpy(b + 12, hdr, hlen);
	putfile(path, b, 12 + hlen);
	free(b);
	return path;
}

/* a safetensors file with the JSON header json and ndata zero bytes */
static const char *
mkst(const char *name, const char *json, size_t ndata)
{
	const char *path = tmppath(name);
	size_t jn = strlen(json);
	unsigned char *b = calloc(1, 8 + jn + ndata);

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)jn >> 8 * i);
	memcpy(b + 8, json, jn);
	putfile(path, b, 8 + jn + ndata);
	free(b);
	return path;
}

/* the message ends with end, so nothing after the long text was lost */
static void
check_msg_end(const char *end)
{
	const char *m = gnn_errmsg();
	size_t n = strlen(m), k = strlen(end);

	if (!CHECK(n >= k && strcmp(m + n - k, end) == 0))
		printf("  message \"...%s\" does not end with \"%s\"\n", n > 80 ? m + n - 80 : m, end);
}

static void
test_safetensors_names(void)
{
	/* two names that differ only in their last byte, and a third one */
	char *a = longstr('w', Long, "a"), *b = longstr('w', Long, "b"), *c = longstr('x', 5000, "");
	const char *names[] = {a, b, c};
	float v[3] = {1, 2, 3};
	gnn_array arr[3];
	gnn_safetensors *st = NULL;
	gnn_array view;
	const char *path = tmppath("long.safetensors");
	char *prefix;
	int i;

	for (i = 0; i < 3; i++)
		arr[i] = (gnn_array){.data = &v[i], .nbytes = 4, .dtype = GNN_F32, .rank = 1, .shape = {1}};
	CHECK_ST(gnn_st_write(path, names, arr, 3), GNN_OK);
	if (!CHECK_ST(gnn_st_open(path, &st), GNN_OK))
		goto out;
	CHECK(gnn_st_count(st) == 3);
	for (i = 0; i < 3; i++) {
		int k = gnn_st_find(st, names[i]);
		if (!CHECK(k >= 0))
			continue;
		CHECK(strcmp(gnn_st_name(st, k), names[i]) == 0);
		CHECK_ST(gnn_st_get(st, k, &view), GNN_OK);
		CHECK(*(const float *)view.data == v[i]);
	}
	/* a name cut at any length a buffer might have had matches nothing */
	prefix = longstr('w', Long, "");
	for (size_t n = 255; n < Long; n = 2 * n + 1) {
		prefix[n] = '\0';
		CHECK(gnn_st_find(st, prefix) == -1);
		prefix[n] = 'w';
	}
	CHECK(gnn_st_find(st, prefix) == -1);
	free(prefix);
out:
	gnn_st_close(st);
	free(a);
	free(b);
	free(c);
}

/* Opening a safetensors file with header json (and ndata bytes of data)
** fails with s, with a message that has has and ends with end. */
static void
stbad(const char *json, size_t ndata, gnn_status s, const char *has, const char *end)
{
	gnn_safetensors *st = NULL;

	if (!CHECK_ST(gnn_st_open(mkst("bad.safetensors", json, ndata), &st), s))
		gnn_st_close(st);
	CHECK(st == NULL);
	CHECK_MSG(has);
	check_msg_end(end);
}

/* headers whose long text is an error: the message says what is wrong */
static void
test_safetensors_bad(void)
{
	char *name = longstr('n', Long, ""), *dt = longstr('F', Long, "32");
	size_t n = 3 * Long + 200;
	char *json = malloc(n);

	/* an unsupported dtype on a tensor with a long name */
	snprintf(json, n, "{\"%s\": {\"dtype\": \"X64\", \"shape\": [1], \"data_offsets\": [0, 8]}}", name);
	stbad(json, 8, GNN_ERR_DTYPE, "nnn...': dtype 'X64' is not supported", "dtype 'X64' is not supported");
	/* a long dtype string: quoted cut, and not taken for F32 */
	snprintf(json, n, "{\"t\": {\"dtype\": \"%s\", \"shape\": [1], \"data_offsets\": [0, 4]}}", dt);
	stbad(json, 4, GNN_ERR_DTYPE, "tensor 't': dtype 'FFF", "...' is not supported");
	/* a long unexpected key in a tensor's entry */
	snprintf(json, n, "{\"t\": {\"%s\": 1}}", name);
	stbad(json, 0, GNN_ERR_FORMAT, "tensor 't': unexpected key 'nnn", "...'");
	/* the same long name twice */
	snprintf(json, n, "{\"%s\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
		"\"%s\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", name, name);
	stbad(json, 8, GNN_ERR_FORMAT, ": duplicate tensor name 'nnn", "...'");
	/* a long name whose offsets do not fit its shape */
	snprintf(json, n, "{\"%s\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}", name);
	stbad(json, 4, GNN_ERR_FORMAT, "tensor 'nnn", "...': data_offsets [0, 4] do not hold f32[2] (8 bytes)");
	free(json);
	free(name);
	free(dt);
}

/* Reading a .npy file with header hdr fails with s; the message has has
** and ends with end. */
static void
npybad(const char *hdr, gnn_status s, const char *has, const char *end)
{
	gnn_array a;

	CHECK_ST(gnn_npy_read(mknpy("bad.npy", hdr), &a), s);
	CHECK(a.data == NULL);
	CHECK_MSG(has);
	check_msg_end(end);
}

static void
test_npy_bad(void)
{
	char *key = longstr('k', Long, ""), *descr = longstr('f', Long, "4");
	size_t n = (1 << 20) + 100;
	char *hdr = malloc(n);

	/* a long unexpected key */
	snprintf(hdr, n, "{'%s': 1, 'descr': '<f4', 'fortran_order': False, 'shape': (0,), }\n", key);
	npybad(hdr, GNN_ERR_FORMAT, "unexpected key 'kkk", "...'");
	/* a long descr ending in a valid code is not that code */
	snprintf(hdr, n, "{'descr': '<%s', 'fortran_order': False, 'shape': (0,), }\n", descr);
	npybad(hdr, GNN_ERR_DTYPE, "unsupported dtype '<fff", "...'");
	/* a header above the reader's limit of 1 MiB */
	memset(hdr, ' ', n - 1);
	memcpy(hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 57);
	hdr[n - 1] = '\0';
	npybad(hdr, GNN_ERR_FORMAT, "exceeds the limit", "exceeds the limit of 1048576");
	free(hdr);
	free(key);
	free(descr);
}

/* A file at a path of about 3500 bytes: a message still ends with why. */
static void
test_long_path(void)
{
	char path[4096];
	const char *hdr = "{'descr': '<x9', 'fortran_order': False, 'shape': (0,), }\n";
	size_t n = strlen(tmppath(""));
	int depth = 0;
	gnn_array a;
	FILE *f;

	memcpy(path, tmppath(""), n + 1);
	for (; n + 202 < 3500; depth++) {
		memset(path + n, 'd', 200);
		path[n + 200] = '\0';
		if (!CHECK(mkdir(path, 0700) == 0))
			return;
		path[n + 200] = '/';
		n += 201;
	}
	memcpy(path + n, "x.npy", 6);
	if (!CHECK((f = fopen(path, "wb")) != NULL))
		return;
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc((int)strlen(hdr), f);
	fputc(0, f);
	fputs(hdr, f);
	fclose(f);
	CHECK_ST(gnn_npy_read(path, &a), GNN_ERR_DTYPE);
	CHECK(strncmp(gnn_errmsg(), path, strlen(path)) == 0);
	check_msg_end(": unsupported dtype '<x9'");
	unlink(path);
	for (; depth > 0; depth--) {
		path[n - 1] = '\0';
		n -= 201;
		rmdir(path);
	}
}

int
main(void)
{
	mktmpdir();
	test_safetensors_names();
	test_safetensors_bad();
	test_npy_bad();
	test_long_path();
	rmtmpdir();
	return summary();
}
