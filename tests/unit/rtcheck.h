/*
** rtcheck.h: the little harness shared by the runtime's unit tests.
**
** CHECK counts and reports (file:line) without stopping, so one run shows
** every failure. The test allocator keeps a size header in front of each
** block so it can count live bytes, verify the sizes the runtime passes back
** on free, and fail on demand after k allocations (Lua's ltests.c idea).
** Temporary files live in one mkdtemp directory, removed at the end.
*/
#ifndef RTCHECK_H
#define RTCHECK_H

#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/gnnrt.h"

static int npass, nfail;

#define CHECK(c) check_((c), #c, __FILE__, __LINE__)
/* status equality, with the runtime's message on failure */
#define CHECK_ST(got, want) check_st_((got), (want), #got, __FILE__, __LINE__)
/* the last error message contains s */
#define CHECK_MSG(s) check_msg_((s), __FILE__, __LINE__)

/* GNN_TEST_LARGE=0 (the sanitizer tree's runs): the largest cases are
** left to the plain tree, where the same loops run at length in a
** fraction of the time */
static inline int
rt_large(void)
{
	const char *v = getenv("GNN_TEST_LARGE");

	return !v || strcmp(v, "0") != 0;
}

static inline int
check_(int ok, const char *what, const char *file, int line)
{
	if (ok)
		npass++;
	else {
		nfail++;
		printf("%s:%d: CHECK failed: %s\n", file, line, what);
	}
	return ok;
}

static inline int
check_st_(gnn_status got, gnn_status want, const char *what, const char *file, int line)
{
	if (got == want)
		return check_(1, what, file, line);
	nfail++;
	printf("%s:%d: %s returned %s, want %s (message: %s)\n", file, line, what,
		gnn_status_name(got), gnn_status_name(want), gnn_errmsg());
	return 0;
}

static inline int
check_msg_(const char *s, const char *file, int line)
{
	if (strstr(gnn_errmsg(), s))
		return check_(1, s, file, line);
	nfail++;
	printf("%s:%d: message \"%s\" lacks \"%s\"\n", file, line, gnn_errmsg(), s);
	return 0;
}

static inline int
summary(void)
{
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}

/* the test allocator */

typedef struct TestAlloc {
	long long live;    /* bytes allocated and not freed */
	long allocs;       /* allocations (and growths) so far */
	long failat;       /* fail allocations from this index on; -1: never */
	long badsizes;     /* frees or resizes whose osize was wrong */
} TestAlloc;

typedef union Head {
	size_t size;
	max_align_t align;   /* keep the blocks as aligned as malloc's */
} Head;

static inline void *
testalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	TestAlloc *ta = ud;
	Head *h = ptr ? (Head *)ptr - 1 : NULL;

	if (h && h->size != osize)
		ta->badsizes++;
	if (nsize == 0) {
		if (h)
			ta->live -= (long long)h->size;
		free(h);
		return NULL;
	}
	if (nsize > osize && ta->failat >= 0 && ta->allocs++ >= ta->failat)
		return NULL;
	if (!(h = realloc(h, sizeof *h + nsize)))
		return NULL;
	ta->live += (long long)nsize - (long long)(ptr ? osize : 0);
	h->size = nsize;
	return h + 1;
}

/*
** Runs op with the allocator failing from allocation k on, for k = 0, 1, ...
** until it succeeds. Every run must return GNN_OK or GNN_ERR_MEM and leave
** no live bytes (op frees what it got on success). Returns the number of
** failing runs.
*/
static inline int
check_oom(const char *what, gnn_status (*op)(void *), void *ctx)
{
	TestAlloc ta = {0};
	gnn_status s = GNN_ERR_MEM;
	int k;

	for (k = 0; s == GNN_ERR_MEM && k < 10000; k++) {
		ta = (TestAlloc){.failat = k};
		gnn_set_allocator(testalloc, &ta);
		s = op(ctx);
		gnn_set_allocator(NULL, NULL);
		if (!CHECK(s == GNN_OK || s == GNN_ERR_MEM) || !CHECK(ta.live == 0)
		    || !CHECK(ta.badsizes == 0)) {
			printf("  in %s with failure at allocation %d: %s, %lld live bytes: %s\n",
				what, k, gnn_status_name(s), ta.live, gnn_errmsg());
			break;
		}
	}
	CHECK(s == GNN_OK);
	return k;
}

/* files */

static char tmpdir[256];

static inline void
mktmpdir(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/gnnrt-test-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(2);
	}
}

/* tmpdir/name, in one of a few rotating buffers */
static inline const char *
tmppath(const char *name)
{
	static char bufs[4][512];
	static int i;
	char *b = bufs[i++ % 4];

	snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
	return b;
}

/* number of entries in tmpdir whose name contains s */
static inline int
tmpcount(const char *s)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strstr(e->d_name, s) != NULL;
	if (d)
		closedir(d);
	return n;
}

static inline void
rmtmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(tmppath(e->d_name));
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

static inline void
putfile(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* the whole file in a malloc'd buffer (NULL if unreadable); *n gets its size */
static inline unsigned char *
getfile(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	long size;

	*n = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0
	    && (p = malloc((size_t)size + 1)) && fread(p, 1, (size_t)size, f) == (size_t)size)
		*n = (size_t)size;
	fclose(f);
	return p;
}

static inline int
samefile(const char *a, const char *b)
{
	size_t na, nb;
	unsigned char *pa = getfile(a, &na), *pb = getfile(b, &nb);
	int same = pa && pb && na == nb && memcmp(pa, pb, na) == 0;

	free(pa);
	free(pb);
	return same;
}

/* the real-data folder from argv[1] or GNN_SHARED_DIR, or NULL */
static inline const char *
shareddir(int argc, char **argv)
{
	const char *d = argc > 1 ? argv[1] : getenv("GNN_SHARED_DIR");

	if (!d || !*d)
		printf("real-file tests skipped: give the shared folder as argv[1] or GNN_SHARED_DIR\n");
	return d && *d ? d : NULL;
}

/*
** Feeds iters corrupted copies of the file at seed (each with 1 to 3 random
** byte changes, insertions, deletions or a truncation; the same every run)
** to load, which reads the path it is given and frees what it got. Each
** run must fail cleanly, with a message naming the file, or succeed, and
** never leak.
*/
static inline void
check_mutations(const char *seed, const char *path, gnn_status (*load)(const char *), int iters)
{
	static const char syntax[] = "{}[](),:'\"\\ 0123456789-.eTFu";
	unsigned char src[4096], b[4096 + 8];
	unsigned x = 2463534242u;
	FILE *f = fopen(seed, "rb");
	size_t n = f ? fread(src, 1, sizeof src, f) : 0;
	TestAlloc ta = {.failat = -1};

	if (f)
		fclose(f);
	if (!CHECK(n > 0 && n < sizeof src))
		return;
	gnn_set_allocator(testalloc, &ta);
	for (int it = 0; it < iters; it++) {
		size_t m = n, p;
		gnn_status s;
		memcpy(b, src, n);
		for (int k = 0, nk = 1 + it % 3; k < nk && m > 1; k++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			p = x % m;
			switch (x >> 24 & 3) {
			case 0: b[p] = (unsigned char)(x >> 8); break;
			case 1: b[p % 256] = (unsigned char)syntax[(x >> 8) % (sizeof syntax - 1)]; break;
			case 2: memmove(b + p + 1, b + p, m++ - p); break;
			default: m = p + 1; break;
			}
		}
		putfile(path, b, m);
		s = load(path);
		if (!CHECK(s == GNN_OK || s == GNN_ERR_FORMAT || s == GNN_ERR_DTYPE || s == GNN_ERR_SHAPE)
		    || !CHECK(s == GNN_OK || strncmp(gnn_errmsg(), path, strlen(path)) == 0)
		    || !CHECK(ta.live == 0 && ta.badsizes == 0)) {
			printf("  mutation %d: %s: %s\n", it, gnn_status_name(s), gnn_errmsg());
			break;
		}
	}
	gnn_set_allocator(NULL, NULL);
}

/* xorshift64: the tests' reproducible random numbers (one sequence a
 * test program) */
static inline uint32_t
rt_next(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15u;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (uint32_t)(x >> 32);
}

#endif
