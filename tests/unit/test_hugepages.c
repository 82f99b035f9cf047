/*
** test_hugepages.c: gnn_hugepages_ (runtime/alloc.c), the huge-page
** advice over a large host block (the cpu target's arena, bind in
** program.c), read back from the kernel: the mapping that holds the
** block's first 2 MiB-aligned byte carries the flag "hg" in
** /proc/self/smaps (MADV_HUGEPAGE) after the call, and not after a call
** under GNN_HUGEPAGES=0; a block with no aligned 2 MiB in it, and NULL,
** are left alone.
** Usage: test_hugepages (Linux; elsewhere it checks nothing and passes)
*/
#include "rtcheck.h"

#include <stdint.h>

#include "../../runtime/internal.h"

/* whether the mapping holding address a has VmFlags "hg"; -1 if no
** mapping holds it (or smaps cannot be read) */
static int
advised(uintptr_t a)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			r = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return r;
}

static uintptr_t
aligned(void *p)
{
	const uintptr_t huge = (uintptr_t)2 << 20;

	return ((uintptr_t)p + huge - 1) & ~(huge - 1);
}

int
main(void)
{
#ifdef __linux__
	size_t n = (size_t)8 << 20;
	void *a = gnn_malloc(n), *b = gnn_malloc(n), *c = gnn_malloc((size_t)1 << 20);

	CHECK(a && b && c);
	CHECK(advised(aligned(a)) == 0);
	gnn_hugepages_(a, n);
	CHECK(advised(aligned(a)) == 1);
	/* the byte before the aligned part keeps its mapping's flags */
	CHECK(advised(aligned(a) - 1) != 1);
	setenv("GNN_HUGEPAGES", "0", 1);
	gnn_hugepages_(b, n);
	CHECK(advised(aligned(b)) == 0);
	unsetenv("GNN_HUGEPAGES");
	gnn_hugepages_(c, (size_t)1 << 20);   /* nothing aligned inside: no call */
	gnn_hugepages_(NULL, n);
	gnn_free(a, n);
	gnn_free(b, n);
	gnn_free(c, (size_t)1 << 20);
#endif
	return summary();
}
