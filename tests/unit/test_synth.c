/*
** test_synth.c: synthetic power-law graphs and features (runtime/synth.c).
**
** Exact properties are checked exactly: the edge count (guards around
** the buffer), the index range, no self loops, same seed => same bytes,
** and a hash of one graph and one feature matrix pinned here, so that a
** change of the generator (or a platform that computes it differently)
** is seen. The shape is checked statistically on a 100k-node graph: the
** hub is far above the mean, the rank-degree plot on log-log axes has a
** slope near -alpha, hubs have scattered ids. Bad specs and a failing
** allocator end in statuses with messages and leave nothing allocated.
** Usage: test_synth [shared-dir] (unused: no file is read)
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>

enum { GUARD = 4 };
static const int64_t SENTINEL = -12345;

/* edge_index of s in a buffer with GUARD sentinels on each side, or NULL
** after a failed CHECK; the caller frees ei - GUARD */
static int64_t *
gen(const gnn_synth_spec *s)
{
	size_t n = 2 * (size_t)s->edges + 2 * GUARD;
	int64_t *b = malloc(n * sizeof *b);

	for (size_t i = 0; i < n; i++)
		b[i] = SENTINEL;
	if (!CHECK_ST(gnn_synth_edges(s, b + GUARD), GNN_OK)) {
		free(b);
		return NULL;
	}
	return b + GUARD;
}

static void
release(int64_t *ei)
{
	if (ei)
		free(ei - GUARD);
}

/* 64-bit FNV-1a of n bytes */
static uint64_t
fnv(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3u;
	return h;
}

/* degree counts of one row of edge_index (0: out, 1: in), malloc'd */
static int64_t *
degrees(const int64_t *ei, int64_t e, int64_t n, int row)
{
	int64_t *d = calloc((size_t)n, sizeof *d);

	for (int64_t i = 0; i < e; i++)
		d[ei[row * e + i]]++;
	return d;
}

static int
desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

/* least-squares slope of log(degree) over log(rank) for ranks [lo, hi] (1-based) */
static double
rankslope(const int64_t *deg, int64_t n, int lo, int hi)
{
	int64_t *d = malloc((size_t)n * sizeof *d);
	double sx = 0, sy = 0, sxx = 0, sxy = 0, k = hi - lo + 1;

	memcpy(d, deg, (size_t)n * sizeof *d);
	qsort(d, (size_t)n, sizeof *d, desc);
	for (int r = lo; r <= hi; r++) {
		double x = log(r), y = log((double)(d[r - 1] > 0 ? d[r - 1] : 1));
		sx += x, sy += y, sxx += x * x, sxy += x * y;
	}
	free(d);
	return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

static int64_t
argmax(const int64_t *d, int64_t n)
{
	int64_t m = 0;

	for (int64_t i = 1; i < n; i++)
		if (d[i] > d[m])
			m = i;
	return m;
}

static void
test_bad_specs(void)
{
	int64_t ei[2] = {7, 7};
	float x[1] = {7};
	const gnn_synth_spec ok = {.nodes = 10, .edges = 1, .features = 1, .alpha = 1};
	gnn_synth_spec s;

	CHECK_ST(gnn_synth_check(&ok), GNN_OK);
	CHECK_ST(gnn_synth_edges(NULL, ei), GNN_ERR_ARG);
	CHECK_MSG("spec is NULL");
	CHECK_ST(gnn_synth_features(NULL, x), GNN_ERR_ARG);
	CHECK_MSG("spec is NULL");

	s = ok, s.nodes = -1;
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_ARG);
	CHECK_MSG("negative size (-1 nodes, 1 edges, 1 features)");
	s = ok, s.edges = -5;
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_ARG);
	CHECK_MSG("-5 edges");
	s = ok, s.features = -2;
	/* both calls check the whole spec */
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_ARG);
	CHECK_ST(gnn_synth_features(&s, x), GNN_ERR_ARG);
	CHECK_MSG("-2 features");
	s = ok, s.nodes = 0, s.edges = 3;
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_ARG);
	CHECK_MSG("synthetic graph: 3 edges need at least one node");

	s = ok, s.alpha = NAN;
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_ARG);
	CHECK_MSG("alpha nan is not in [0, 8]");
	s.alpha = -0.5;
	CHECK_ST(gnn_synth_check(&s), GNN_ERR_ARG);
	CHECK_MSG("alpha -0.5");
	s.alpha = 8.5;
	CHECK_ST(gnn_synth_features(&s, x), GNN_ERR_ARG);
	CHECK_MSG("alpha 8.5");
	s.alpha = INFINITY;
	CHECK_ST(gnn_synth_check(&s), GNN_ERR_ARG);

	s = ok, s.nodes = (int64_t)UINT32_MAX + 1;
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_SHAPE);
	CHECK_MSG("4294967296 nodes: at most 4294967295 are supported");
	s = ok, s.edges = INT64_MAX / 16 + 1;
	CHECK_ST(gnn_synth_edges(&s, ei), GNN_ERR_SHAPE);
	CHECK_MSG("edge_index is too large");
	s = ok, s.edges = INT64_MAX;
	CHECK_ST(gnn_synth_check(&s), GNN_ERR_SHAPE);
	s = ok, s.nodes = 1 << 30, s.features = INT64_MAX / 4;
	CHECK_ST(gnn_synth_features(&s, x), GNN_ERR_SHAPE);
	CHECK_MSG("x is too large");

	/* NULL outputs only for empty results */
	CHECK_ST(gnn_synth_edges(&ok, NULL), GNN_ERR_ARG);
	CHECK_MSG("edge_index is NULL");
	CHECK_ST(gnn_synth_features(&ok, NULL), GNN_ERR_ARG);
	CHECK_MSG("x is NULL");
	s = ok, s.edges = 0, s.features = 0;
	CHECK_ST(gnn_synth_edges(&s, NULL), GNN_OK);
	CHECK_ST(gnn_synth_features(&s, NULL), GNN_OK);
	s.nodes = 0;
	CHECK_ST(gnn_synth_edges(&s, NULL), GNN_OK);
	CHECK_ST(gnn_synth_features(&s, NULL), GNN_OK);
	/* a failed call writes nothing */
	CHECK(ei[0] == 7 && ei[1] == 7 && x[0] == 7);
}

/* count, range, self loops, determinism on a small graph */
static void
test_exact(void)
{
	gnn_synth_spec s = {.nodes = 1000, .edges = 5001, .features = 3, .alpha = 1.0, .seed = 42};
	int64_t *a = gen(&s), *b = gen(&s), *c, i, e = s.edges, bad = 0;

	if (!a || !b)
		goto out;
	for (i = -GUARD; i < 0; i++)
		bad += a[i] != SENTINEL || a[2 * e - 1 - i] != SENTINEL;
	CHECK(bad == 0);
	for (i = 0; i < 2 * e; i++)
		bad += a[i] < 0 || a[i] >= s.nodes;
	CHECK(bad == 0);
	for (i = 0; i < e; i++)
		bad += a[i] == a[e + i];
	CHECK(bad == 0);
	CHECK(memcmp(a, b, 2 * (size_t)e * sizeof *a) == 0);
	s.seed = 43;
	if ((c = gen(&s))) {
		for (i = 0; i < 2 * e; i++)
			bad += a[i] != c[i];
		CHECK(bad > e);
		release(c);
	}
	/* alpha changes the graph too */
	s.seed = 42, s.alpha = 0.7;
	if ((c = gen(&s))) {
		CHECK(memcmp(a, c, 2 * (size_t)e * sizeof *a) != 0);
		release(c);
	}
out:
	release(a);
	release(b);
}

/* the values are pinned: a change here is a change of every benchmark graph */
static void
test_pinned(void)
{
	const gnn_synth_spec s = {.nodes = 2708, .edges = 10556, .features = 5, .alpha = 0.8, .seed = 7};
	int64_t *ei = gen(&s);
	float x[2708 * 5];

	if (ei) {
		uint64_t h = fnv(ei, 2 * (size_t)s.edges * sizeof *ei);
		if (!CHECK(h == 0x243f2648155fe785u))
			printf("  edge_index hash %#llx\n", (unsigned long long)h);
		release(ei);
	}
	if (CHECK_ST(gnn_synth_features(&s, x), GNN_OK)) {
		uint64_t h = fnv(x, sizeof x);
		if (!CHECK(h == 0xca43bda01adb56du))
			printf("  x hash %#llx\n", (unsigned long long)h);
	}
}

static void
test_features(void)
{
	gnn_synth_spec s = {.nodes = 301, .edges = 0, .features = 7, .alpha = 1, .seed = 5};
	size_t n = 301 * 7;
	float *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
	double sum = 0, lo = 1, hi = -1;
	size_t same = 0;

	a[n] = b[n] = -7;
	CHECK_ST(gnn_synth_features(&s, a), GNN_OK);
	CHECK(a[n] == -7);
	for (size_t i = 0; i < n; i++) {
		CHECK(a[i] >= -1 && a[i] < 1);
		sum += a[i];
		lo = a[i] < lo ? a[i] : lo;
		hi = a[i] > hi ? a[i] : hi;
	}
	/* uniform in [-1, 1): mean near 0 (sd 0.58 / sqrt(2107) = 0.013), both ends reached */
	CHECK(fabs(sum / (double)n) < 0.05 && lo < -0.99 && hi > 0.99);
	/* x depends on the seed and the shape only */
	s.edges = 999, s.alpha = 0.3;
	CHECK_ST(gnn_synth_features(&s, b), GNN_OK);
	CHECK(memcmp(a, b, n * sizeof *a) == 0);
	s.seed = 6;
	CHECK_ST(gnn_synth_features(&s, b), GNN_OK);
	for (size_t i = 0; i < n; i++)
		same += a[i] == b[i];
	CHECK(same < n / 100);
	/* an odd count: the last value too */
	s.seed = 5, s.nodes = 3, s.features = 1, b[3] = -7;
	CHECK_ST(gnn_synth_features(&s, b), GNN_OK);
	CHECK(memcmp(a, b, 3 * sizeof *a) == 0 && b[3] == -7);
	free(a);
	free(b);
}

/* 100k nodes, 1M edges: the skew that alpha asks for */
static void
test_power_law(void)
{
	const int64_t n = 100000, e = 1000000;
	const double alphas[] = {1.0, 0.5};

	for (int k = 0; k < 2; k++) {
		gnn_synth_spec s = {.nodes = n, .edges = e, .alpha = alphas[k], .seed = 1};
		int64_t *ei = gen(&s), *in, *out, top[100], hub;
		double mean = (double)e / (double)n, slope, idsum = 0;

		if (!ei)
			continue;
		in = degrees(ei, e, n, 1);
		out = degrees(ei, e, n, 0);
		hub = argmax(in, n);
		/* alpha 1: the hub takes 1 / H(n) = 8% of the edges, 8000 times the mean;
		** alpha 0.5: sqrt(n) / 2 = 158 times */
		CHECK(in[hub] > (alphas[k] == 1.0 ? 4000 : 80) * mean);
		CHECK(in[hub] < (alphas[k] == 1.0 ? 12000 : 300) * mean);
		CHECK(out[argmax(out, n)] > (alphas[k] == 1.0 ? 4000 : 80) * mean);
		/* in- and out-hubs are different nodes */
		CHECK(argmax(out, n) != hub);
		for (int side = 0; side < 2; side++) {
			slope = rankslope(side ? in : out, n, 10, 1000);
			if (!CHECK(fabs(slope + alphas[k]) < 0.15))
				printf("  alpha %g: rank-degree slope %.3f\n", alphas[k], slope);
		}
		/* the 100 biggest in-hubs have ids all over [0, n): mean near n / 2 */
		for (int j = 0; j < 100; j++) {
			top[j] = argmax(in, n);
			idsum += (double)top[j];
			in[top[j]] = -1;
		}
		CHECK(fabs(idsum / 100 - n / 2.0) < n / 8.0);
		free(in);
		free(out);
		release(ei);
	}
	/* alpha 0: uniform, so the biggest degree stays near the mean (Poisson 10: max ~ 27) */
	gnn_synth_spec s = {.nodes = n, .edges = e, .alpha = 0, .seed = 1};
	int64_t *ei = gen(&s);
	if (ei) {
		int64_t *in = degrees(ei, e, n, 1);
		CHECK(in[argmax(in, n)] < 40);
		free(in);
		release(ei);
	}
}

static void
test_small(void)
{
	gnn_synth_spec s = {.nodes = 1, .edges = 50, .alpha = 1, .seed = 3};
	int64_t *ei = gen(&s), bad = 0;

	/* one node: every edge is its loop */
	for (int64_t i = 0; ei && i < 100; i++)
		bad += ei[i] != 0;
	CHECK(ei && bad == 0);
	release(ei);
	/* two nodes: both directions, never a loop; alpha 8 makes the redraws work */
	s.nodes = 2, s.alpha = 8;
	ei = gen(&s);
	for (int64_t i = 0; ei && i < 50; i++)
		bad += ei[i] + ei[50 + i] != 1;
	CHECK(ei && bad == 0);
	release(ei);
	/* alpha 8 on many nodes: the redraw fallback keeps loops out */
	s.nodes = 100, s.edges = 2000;
	ei = gen(&s);
	for (int64_t i = 0; ei && i < 2000; i++)
		bad += ei[i] == ei[2000 + i];
	CHECK(ei && bad == 0);
	release(ei);
}

static gnn_status
op_edges(void *ctx)
{
	static int64_t ei[2 * 300];
	const gnn_synth_spec s = {.nodes = 1000, .edges = 300, .alpha = 1.1, .seed = 9};
	gnn_status st = gnn_synth_edges(&s, ei);

	(void)ctx;
	if (st == GNN_ERR_MEM)
		CHECK_MSG("synthetic graph: out of memory");
	return st;
}

static gnn_status
op_features(void *ctx)
{
	static float x[10 * 3];
	const gnn_synth_spec s = {.nodes = 10, .edges = 5, .features = 3, .alpha = 1};

	(void)ctx;
	return gnn_synth_features(&s, x);
}

static void
test_oom(void)
{
	/* the tables: blocks, guide, two rankings */
	CHECK(check_oom("gnn_synth_edges", op_edges, NULL) == 5);
	CHECK(check_oom("gnn_synth_features", op_features, NULL) == 1);
}

int
main(int argc, char **argv)
{
	(void)argc, (void)argv;
	test_bad_specs();
	test_exact();
	test_pinned();
	test_features();
	test_power_law();
	test_small();
	test_oom();
	return summary();
}
