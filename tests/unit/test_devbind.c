/*
** test_devbind.c: bind on the device (runtime/devbind.cu, program.c's
** devstep) against bind on the host (graph.c, hoststep), on the emulated
** CUDA device (libgnnemu.a).
**
** One hand-written program runs every graph bind step: the three self
** loop graphs of the bound graph, the derived edge counts, and for each
** of the four graphs src, dst, in- and out-degree, edge weights,
** gcn_norm, its CSR (EDGEPLAN) and a segment plan of its sources
** (SEGPLAN), plus the batch, and the bound graph's split plans of the
** two (SPLITPLAN, with their scratch sizes).  It is bound with the cpu
** device and with the emulated one; every size, buffer and plan must be
** equal bit for bit (a split plan slot by slot, and its header on the
** host), and the plan-order copies (PERMUTE, PERMUTE_INDEX: int32 and,
** under GNNRT_WIDE_INDEX, int64) equal to the arrays read through the
** host CSR's order.  Graphs: empty (N = E = 0), nodes without edges, a small one
** with repeated edges and self loops (weighted and not), a hub graph
** (one node holding 10% of the edges, most rows empty, self loops,
** weights), and one of 70000 nodes (three radix passes).  Split plans
** under several least chunks (2, 3, 4, 8, 32 and 0), on those graphs and
** with only the plans' steps on a single row, many long rows of a few
** chunks, no long rows, and 2^16 rows with a hub (the large graphs' row
** windows).
**
** Host work that grows with the graph: binding the hub graph and one ten
** times its size (nodes and edges) must allocate the same host bytes
** through the runtime's allocator (the split plans' headers and little
** else), and the host CSR of a graph bound only on the device must never
** be built.  An out-of-range segment index gives the host's message.
** A heterogeneous graph's relations, each its own graph with its own
** source count, bind on the device as on the host (relations()).
** Usage: test_devbind
*/
#include "rtcheck.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "internal.h"
#include "split.h"

enum { NG = 4 };   /* graphs: the bound one, remaining loops, loops, no loops */

/* symbols: 0 N, 1 E, 2..4 the derived graphs' edges; polynomials:
 * 0: N, 4: E, 8: E1, 12: E2, 16: E3, 20: 0, 23: 2 */
static const int64_t poly[] = {
	1, 1, 1, 0,  1, 1, 1, 1,  1, 1, 1, 2,  1, 1, 1, 3,  1, 1, 1, 4,  1, 0, 0,  1, 2, 0,
};
static const int epoly[NG] = {4, 8, 12, 16};

/* per graph: src, dst (i64, E), in, out (f32, N), weight, norm (f32, E); then batch */
enum { PERG = 6, NBUF = NG * PERG + 1 };
/* per graph its CSR and a segment plan of its sources; then the bound
 * graph's split plans of the two, and their scratch (device only); then
 * per graph its norm and its src index in its CSR's order (PERMUTE,
 * PERMUTE_INDEX) */
enum { SP = 2 * NG, PP = SP + 4, NSEG = PP + 2 * NG };
static gnn_buffer bufs[NBUF];
static gnn_step steps[128];
static int nsteps;
static const unsigned char segdev[NSEG] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
static const int io[] = {-1};

static gnn_status
run(void *m, const void *const *in, void *const *out)
{
	(void)m, (void)in, (void)out;
	return GNN_OK;
}

static const int bound[8] = {0, 1, -1, -1, -1, -1, -1, -1};   /* the graph sets N and E */

static gnn_program prog = {
	"D", &gnn_device_cpu, 5, poly, NBUF, bufs, NG, NSEG, segdev, 0, 0, steps, NULL,
	1, bound, 0, 0, 0, io, io, io, io,
	NULL, NULL, NULL, 0, NULL, run, NULL, NULL, NULL, NULL, NULL,
};

static void
add(int op, int out, int in, int arg, int size, double fill)
{
	steps[nsteps++] = (gnn_step){(unsigned char)op, out, in, arg, size, fill};
}

/* segn: the segment plans' rows (a polynomial); c0: the least chunks of
 * the split plans, of the CSR's and of the segment plan's; all steps, or
 * (full 0) only the bound graph's plans */
static void
tables(int segn, int c0csr, int c0seg, int full)
{
	static const char *const names[PERG] = {"src", "dst", "in", "out", "w", "norm"};
	int g, k;

	for (g = 0; g < NG; g++)
		for (k = 0; k < PERG; k++)
			bufs[g * PERG + k] = (gnn_buffer){names[k], GNN_BUF_BIND, k < 2 ? GNN_I64 : GNN_F32, GNN_BUF_DEVICE,
			                                  k == 2 || k == 3 ? 0 : epoly[g], -1, 0};
	bufs[NG * PERG] = (gnn_buffer){"batch", GNN_BUF_BIND, GNN_I64, GNN_BUF_DEVICE, 0, -1, 0};
	nsteps = 0;
	if (full) {
		add(GNN_STEP_ADD_REMAINING_SELF_LOOPS, 1, 0, 0, 0, 2.5);
		add(GNN_STEP_DERIVE, -1, 1, 2, 20, 0);
		add(GNN_STEP_ADD_SELF_LOOPS, 2, 0, 0, 0, 0);
		add(GNN_STEP_DERIVE, -1, 2, 3, 20, 0);
		add(GNN_STEP_REMOVE_SELF_LOOPS, 3, 0, 0, 0, 0);
		add(GNN_STEP_DERIVE, -1, 3, 4, 20, 0);
	}
	for (g = 0; g < (full ? NG : 1); g++) {
		add(GNN_STEP_SRC, g * PERG, g, 0, 0, 0);
		if (full) {
			add(GNN_STEP_DST, g * PERG + 1, g, 0, 0, 0);
			add(GNN_STEP_IN_DEGREE, g * PERG + 2, g, 0, 0, 0);
			add(GNN_STEP_OUT_DEGREE, g * PERG + 3, g, 0, 0, 0);
			add(GNN_STEP_EDGE_WEIGHT, g * PERG + 4, g, 0, 0, 0);
			add(GNN_STEP_GCN_NORM, g * PERG + 5, g, 0, 0, 0);
		}
		add(GNN_STEP_EDGEPLAN, 2 * g, g, 0, 0, 0);
		add(GNN_STEP_SEGPLAN, 2 * g + 1, g * PERG, 0, segn, 0);
	}
	add(GNN_STEP_SPLITPLAN, SP, 0, c0csr, 0, 0);
	add(GNN_STEP_SPLITPLAN, SP + 1, 1, c0seg, segn, 0);
	add(GNN_STEP_SPLITBUF, SP + 2, SP, 3, 0, 0);
	add(GNN_STEP_SPLITBUF, SP + 3, SP + 1, 1, 0, 0);
	if (full)
		add(GNN_STEP_BATCH, NG * PERG, 0, 0, 0, 0);
	for (g = 0; g < (full ? NG : 0); g++) {
		add(GNN_STEP_PERMUTE, PP + 2 * g, 2 * g, g * PERG + 5, 0, 1);
		add(GNN_STEP_PERMUTE_INDEX, PP + 2 * g + 1, 2 * g, g * PERG, 0, 1);
	}
	prog.nstep = nsteps;
}

/* the bytes of buffer b or plan s (nb) on the host, from m */
static void *
fetch(gnn_instance *m, const void *dev, const void *host, size_t n)
{
	void *p = malloc(n ? n : 1);

	if (m->prog->dev->separate) {
		if (n)
			CHECK(m->prog->dev->copy(p, dev, n, GNN_D2H, m->stream, 0) == 0);
	} else if (n)
		memcpy(p, host, n);
	return p;
}

/* buffer i of the host-bound m[0] and the device-bound m[1]: the same
 * size and bytes (0 and a message naming it if not) */
static int
samebuf(gnn_instance *const *m, int i, const char *what)
{
	void *a, *b;
	int same;

	if (!CHECK(m[0]->nb[i] == m[1]->nb[i]))
		return 0;
	a = fetch(m[0], NULL, m[0]->h[i], m[0]->nb[i]);
	b = fetch(m[1], m[1]->b[i], NULL, m[1]->nb[i]);
	if (!(same = CHECK(!memcmp(a, b, m[0]->nb[i]))))
		printf("  %s: buffer %d (%s) differs\n", what, i, m[0]->prog->buf[i].name);
	free(a), free(b);
	return same;
}

/* m's plan-order copies against the host's CSR and arrays (the bound
 * cpu model's): row j of a copy is row perm[j] of its array, an index
 * as int32 where the model says the ids fit (ix32) */
static int
permuted(gnn_instance *m, const char *what)
{
	int ok = 1;

	for (int g = 0; g < NG && ok; g++) {
		int64_t n = m->sym[0], e;
		int64_t *csr, *src;
		float *norm;
		void *ix, *nc;
		if (!m->segnb[PP + 2 * g + 1] || !m->nb[g * PERG])
			continue;
		e = (int64_t)(m->nb[g * PERG] / sizeof(int64_t));
		csr = fetch(m, m->seg[2 * g], m->hseg[2 * g], (size_t)(n + 1 + e) * sizeof(int64_t));
		src = fetch(m, m->b[g * PERG], m->h[g * PERG], m->nb[g * PERG]);
		norm = fetch(m, m->b[g * PERG + 5], m->h[g * PERG + 5], m->nb[g * PERG + 5]);
		ix = fetch(m, m->seg[PP + 2 * g + 1], m->hseg[PP + 2 * g + 1], m->segnb[PP + 2 * g + 1]);
		nc = fetch(m, m->seg[PP + 2 * g], m->hseg[PP + 2 * g], m->segnb[PP + 2 * g]);
		ok &= CHECK(m->segnb[PP + 2 * g + 1] == (size_t)e * (m->ix32 ? 4 : 8));
		for (int64_t j = 0; j < e && ok; j++) {
			int64_t at = csr[n + 1 + j];
			ok &= CHECK((m->ix32 ? ((int32_t *)ix)[j] : ((int64_t *)ix)[j]) == src[at]);
			ok &= CHECK(!memcmp((float *)nc + j, norm + at, sizeof(float)));
		}
		if (!ok)
			printf("  %s: graph %d's copies in its CSR's order differ (%s, ix32 %d)\n", what, g,
			       m->prog->dev->separate ? "device" : "host", m->ix32);
		free(csr), free(src), free(norm), free(ix), free(nc);
	}
	return ok;
}

/* bind g with the cpu device and the emulated one: everything equal */
static void
compare(const char *what, gnn_graph *g)
{
	gnn_instance *m[2] = {NULL, NULL};
	gnn_program p[2] = {prog, prog};
	int i, k, bad = 0;

	p[1].dev = &gnn_device_cuda_emu;
	for (k = 0; k < 2; k++) {
		if (!CHECK_ST(gnn_prog_create(&p[k], sizeof(gnn_instance), &m[k]), GNN_OK) ||
		    !CHECK_ST(gnn_prog_bind(m[k], g), GNN_OK))
			goto out;
		if (k == 1)
			CHECK(m[1]->dg != NULL);
	}
	for (i = 0; i < 5; i++)
		bad += !CHECK(m[0]->sym[i] == m[1]->sym[i]);
	for (i = 0; i < NBUF; i++)
		bad += !samebuf(m, i, what);
	for (i = 0; i < NSEG; i++) {
		void *a, *b;
		if (!CHECK(m[0]->segnb[i] == m[1]->segnb[i]) || segdev[i] == 2)
			continue;   /* scratch: its size only */
		if (i >= SP && i < PP && m[0]->segnb[i] &&
		    !CHECK(m[1]->hseg[i] && !memcmp(m[0]->hseg[i], m[1]->hseg[i], GNN_SPLIT_HEADER * sizeof(int64_t))))
			printf("  %s: split plan %d's header on the host differs\n", what, i), bad++;
		a = fetch(m[0], NULL, m[0]->hseg[i], m[0]->segnb[i]);
		b = fetch(m[1], m[1]->seg[i], NULL, m[1]->segnb[i]);
		if (!CHECK(!memcmp(a, b, m[0]->segnb[i]))) {
			size_t at = 0;
			while (((int64_t *)a)[at] == ((int64_t *)b)[at])
				at++;
			printf("  %s: plan %d differs from slot %zu of %zu: %lld, the host's %lld\n", what, i, at,
			       m[0]->segnb[i] / sizeof(int64_t), (long long)((int64_t *)b)[at], (long long)((int64_t *)a)[at]);
			bad++;
		}
		free(a), free(b);
	}
	for (k = 0; k < 2; k++)
		bad += !permuted(m[k], what);
	if (bad)
		printf("  in %s\n", what);
out:
	gnn_prog_destroy(m[0]);
	gnn_prog_destroy(m[1]);
}

/* a graph of n nodes and e edges: a tenth into node hub, self loops, most
 * nodes without in-edges; weights from the seed when weighted */
static gnn_graph *
hubgraph(int64_t n, int64_t e, int weighted, int batch, unsigned seed)
{
	int64_t *ei = malloc((size_t)(2 * e + 1) * sizeof *ei), *b = NULL;
	float *w = malloc((size_t)(e + 1) * sizeof *w);
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	gnn_graph *g = NULL;

	for (int64_t k = 0; k < e; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ei[k] = (int64_t)(x % (uint64_t)n);
		ei[e + k] = k % 10 == 0 ? n / 3 : k % 7 == 0 ? ei[k] : (int64_t)((x >> 20) % (uint64_t)(n / 4 + 1));
		w[k] = (float)((x >> 40) % 1000) / 250.0f - 1.0f;   /* some negative: NaN norms too */
	}
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, e, n), GNN_OK);
	if (weighted)
		CHECK_ST(gnn_graph_set_edge_weight(g, w), GNN_OK);
	if (batch && n > 0) {
		b = malloc((size_t)n * sizeof *b);
		for (int64_t i = 0; i < n; i++)
			b[i] = i * 3 / n;
		CHECK_ST(gnn_graph_set_batch(g, b, GNN_I64, 3), GNN_OK);
	}
	free(ei), free(w), free(b);
	return g;
}

static gnn_graph *
small(int weighted)
{
	/* repeated edges, self loops (two on node 1), node 4 without edges */
	static const int64_t ei[] = {0, 1, 1, 2, 1, 3, 0, 2,  1, 1, 2, 0, 1, 3, 1, 2};
	static const float w[] = {0.5f, 2, 3, 1, 4, 0.25f, 1.5f, 3};
	gnn_graph *g = NULL;

	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 8, 5), GNN_OK);
	if (weighted)
		CHECK_ST(gnn_graph_set_edge_weight(g, w), GNN_OK);
	return g;
}

/* n nodes, node i's in-edges from i + 1 .. i + deg (mod n) */
static gnn_graph *
ring(int64_t n, int64_t deg)
{
	int64_t *ei = malloc((size_t)(2 * n * deg + 1) * sizeof *ei);
	gnn_graph *g = NULL;

	for (int64_t k = 0; k < n * deg; k++) {
		ei[k] = (k / deg + 1 + k % deg) % n;
		ei[n * deg + k] = k / deg;
	}
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, n * deg, n), GNN_OK);
	free(ei);
	return g;
}

/* n nodes, one in 50 with an in-degree of 30 to 330, the rest 1: many
 * long rows of a few chunks each, so that reduce levels pack short rows
 * (of C items exactly too) between cut ones */
static gnn_graph *
spread(int64_t n)
{
	int64_t e = 0, k = 0, *ei;
	gnn_graph *g = NULL;

	for (int64_t i = 0; i < n; i++)
		e += i % 50 == 0 ? 30 + i / 50 * 37 % 301 : 1;
	ei = malloc((size_t)(2 * e) * sizeof *ei);
	for (int64_t i = 0; i < n; i++)
		for (int64_t d = i % 50 == 0 ? 30 + i / 50 * 37 % 301 : 1; d > 0; d--, k++) {
			ei[k] = (k * 7919 + 13) % n;
			ei[e + k] = i;
		}
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, e, n), GNN_OK);
	free(ei);
	return g;
}

/* g bound under split plans of least chunks c0s[k][0] (the CSR's) and
 * c0s[k][1] (the segment plan's), each pair in turn, the first with
 * every step (full 1) or none; g destroyed */
static void
compares(const char *what, gnn_graph *g, int n, const int (*c0s)[2], int full)
{
	for (int k = 0; k < n; k++) {
		tables(0, c0s[k][0], c0s[k][1], full && k == 0);   /* SEGPLAN of the sources into N rows */
		compare(what, g);
	}
	gnn_graph_destroy(g);
}

static const int c0s[][2] = {{2, 32}, {4, 3}, {0, 8}, {32, 2}};

static void
equal(void)
{
	gnn_graph *g = NULL;

	CHECK_ST(gnn_graph_from_edge_index(&g, NULL, GNN_I64, 0, 0), GNN_OK);
	compares("the empty graph", g, 1, c0s, 1);
	CHECK_ST(gnn_graph_from_edge_index(&g, NULL, GNN_I64, 0, 6), GNN_OK);
	compares("6 nodes, no edges", g, 1, c0s + 1, 1);
	for (int w = 0; w < 2; w++) {
		compares(w ? "small, weighted" : "small", small(w), 1, c0s + 2 * w, 1);
		compares(w ? "hubs, weighted" : "hubs", hubgraph(2000, 20000, w, 1, 1 + w), 2, c0s + 2 * w, 1);
	}
	/* one row: 300 self loops (none once removed) */
	{
		int64_t ei[600] = {0};
		CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 300, 1), GNN_OK);
		compares("a single row", g, 2, c0s, 0);
	}
	compares("many long rows", spread(3000), 4, c0s, 0);
	/* in-degree 3 everywhere: no long rows at C >= 4 */
	compares("no long rows", ring(5000, 3), 1, c0s + 2, 0);
}

/* the large graphs */
static void
equal_large(void)
{
	compares("70000 nodes", hubgraph(70000, 30000, 1, 0, 3), 1, c0s + 1, 1);
	/* rows enough for row windows of 2(C + 1), a hub of 10% */
	compares("2^16 rows", hubgraph(GNN_SPLIT_BUNDLE + 77, 40000, 0, 0, 6), 1, c0s, 0);
}

/* host allocations through the runtime's allocator, counted */
static long long hostbytes;

static void *
counting(void *ud, void *p, size_t osize, size_t nsize)
{
	(void)ud, (void)osize;
	if (!nsize) {
		free(p);
		return NULL;
	}
	hostbytes += (long long)nsize;
	return realloc(p, nsize);
}

static long long
bindbytes(gnn_graph *g)
{
	gnn_instance *m = NULL;

	prog.dev = &gnn_device_cuda_emu;
	CHECK_ST(gnn_prog_create(&prog, sizeof(gnn_instance), &m), GNN_OK);
	hostbytes = 0;
	gnn_set_allocator(counting, NULL);
	CHECK_ST(gnn_prog_bind(m, g), GNN_OK);
	gnn_set_allocator(NULL, NULL);
	gnn_prog_destroy(m);
	prog.dev = &gnn_device_cpu;
	return hostbytes;
}

static void
hostwork(void)
{
	gnn_graph *a = hubgraph(2000, 20000, 1, 1, 4), *b = hubgraph(20000, 200000, 1, 1, 5);
	long long na, nb;

	tables(0, 2, 32, 1);
	na = bindbytes(a);
	nb = bindbytes(b);
	if (!CHECK(na == nb))
		printf("  bind allocated %lld host bytes for 20000 edges, %lld for 200000\n", na, nb);
	/* the split plans' headers, and little else */
	CHECK(na < 4096 + 2 * GNN_SPLIT_HEADER * (long long)sizeof(int64_t));
	CHECK(!gnn_graph_has_csr_(a) && !gnn_graph_has_csr_(b));
	/* the host CSR is built by its first host use */
	CHECK(gnn_graph_rowptr(a) != NULL && gnn_graph_has_csr_(a));
	gnn_graph_destroy(a);
	gnn_graph_destroy(b);
}

/* a segment index out of range: the host's message, on both */
static void
badindex(void)
{
	gnn_graph *g = small(0);
	gnn_instance *m = NULL;
	const gnn_device *dev[2] = {&gnn_device_cpu, &gnn_device_cuda_emu};

	tables(23, 2, 2, 1);   /* sources grouped into 2 rows: source 2 (edge 3) is out of range */
	for (int k = 0; k < 2; k++) {
		prog.dev = dev[k];
		CHECK_ST(gnn_prog_create(&prog, sizeof(gnn_instance), &m), GNN_OK);
		CHECK_ST(gnn_prog_bind(m, g), GNN_ERR_RANGE);
		CHECK_MSG("segment index: entry 3 is 2, outside [0, 2)");
		/* and the model binds again */
		gnn_prog_destroy(m);
	}
	prog.dev = &gnn_device_cpu;
	gnn_graph_destroy(g);
}

/*
** A heterogeneous graph's relations bound on the device: two relations of
** two node types (authors -> papers, papers -> authors), each uploaded
** as a graph of its own with its own source count, and for each its src,
** dst, in-degrees (per target), out-degrees (per source node: the other
** type's count), CSR and a segment plan of its sources into the source
** type's rows, equal to the host's bit for bit.
*/
enum { NREL = 2, RPER = 4, RBUF = NREL * RPER, RSEG = 2 * NREL };

/* symbols: 0 N_author, 1 N_paper, 2 E_writes, 3 E_rev; polynomials:
 * 0: N_author, 4: N_paper, 8: E_writes, 12: E_rev */
static const int64_t rpoly[] = {1, 1, 1, 0,  1, 1, 1, 1,  1, 1, 1, 2,  1, 1, 1, 3};
/* per relation: nodes (its targets), edges, graphs, source nodes */
static const int rbound[8 * NREL] = {1, 2, -1, 0, -1, -1, -1, -1,   0, 3, -1, 1, -1, -1, -1, -1};
static const unsigned char rsegdev[RSEG] = {1, 1, 1, 1};

static void
relations(void)
{
	/* 5 authors, 3 papers; author 4 writes nothing, paper 1 cites no author back */
	static const int64_t writes[] = {0, 3, 3, 1, 0, 2,  1, 0, 1, 2, 2, 0};
	static const int64_t rev[] = {2, 0, 2, 1,  0, 4, 3, 3};
	const int64_t *ei[NREL] = {writes, rev}, ne[NREL] = {6, 4}, ns[NREL] = {5, 3}, nd[NREL] = {3, 5};
	static const char *const names[RPER] = {"src", "dst", "in", "out"};
	const int spoly[NREL] = {0, 4}, dpoly[NREL] = {4, 0}, epoly2[NREL] = {8, 12};
	gnn_buffer rbufs[RBUF];
	gnn_step rsteps[6 * NREL];
	gnn_graph *g[NREL] = {NULL, NULL};
	gnn_instance *m[2] = {NULL, NULL};
	gnn_program p = {
		"H", &gnn_device_cpu, 4, rpoly, RBUF, rbufs, NREL, RSEG, rsegdev, 0, 0, rsteps, NULL,
		NREL, rbound, 0, 0, 0, io, io, io, io,
		NULL, NULL, NULL, 0, NULL, run, NULL, NULL, NULL, NULL, NULL,
	}, q[2];
	int r, k, i, n = 0;

	for (r = 0; r < NREL; r++) {
		CHECK_ST(gnn_graph_relation_from_edge_index(&g[r], ei[r], GNN_I64, ne[r], ns[r], nd[r]), GNN_OK);
		for (k = 0; k < RPER; k++)
			rbufs[r * RPER + k] = (gnn_buffer){names[k], GNN_BUF_BIND, k < 2 ? GNN_I64 : GNN_F32, GNN_BUF_DEVICE,
			                                   k < 2 ? epoly2[r] : k == 2 ? dpoly[r] : spoly[r], -1, 0};
		for (k = 0; k < RPER; k++)
			rsteps[n++] = (gnn_step){(unsigned char)(k == 0 ? GNN_STEP_SRC : k == 1 ? GNN_STEP_DST :
			                                         k == 2 ? GNN_STEP_IN_DEGREE : GNN_STEP_OUT_DEGREE),
			                         r * RPER + k, r, 0, 0, 0};
		rsteps[n++] = (gnn_step){GNN_STEP_EDGEPLAN, 2 * r, r, 0, 0, 0};
		rsteps[n++] = (gnn_step){GNN_STEP_SEGPLAN, 2 * r + 1, r * RPER, 0, spoly[r], 0};
	}
	p.nstep = n;
	q[0] = q[1] = p;
	q[1].dev = &gnn_device_cuda_emu;
	for (k = 0; k < 2; k++) {
		if (!CHECK_ST(gnn_prog_create(&q[k], sizeof(gnn_instance), &m[k]), GNN_OK) ||
		    !CHECK_ST(gnn_prog_bind_graphs(m[k], g, NREL), GNN_OK))
			goto out;
	}
	CHECK(m[1]->dg != NULL);
	for (i = 0; i < 4; i++)
		CHECK(m[0]->sym[i] == m[1]->sym[i] && m[0]->sym[i] == (i < 2 ? 5 - 2 * i : ne[i - 2]));
	for (i = 0; i < RBUF; i++) {
		/* out-degrees per source: the relation's source count */
		CHECK(m[0]->nb[i] == (size_t)(i % RPER < 2 ? ne[i / RPER] * 8 : (i % RPER == 2 ? nd : ns)[i / RPER] * 4));
		samebuf(m, i, "relations");
	}
	for (i = 0; i < RSEG; i++) {
		void *a, *b;
		if (!CHECK(m[0]->segnb[i] == m[1]->segnb[i]))
			continue;
		a = fetch(m[0], NULL, m[0]->hseg[i], m[0]->segnb[i]);
		b = fetch(m[1], m[1]->seg[i], NULL, m[1]->segnb[i]);
		if (!CHECK(!memcmp(a, b, m[0]->segnb[i])))
			printf("  relations: plan %d of relation %d differs\n", i % 2, i / 2);
		free(a), free(b);
	}
out:
	gnn_prog_destroy(m[0]);
	gnn_prog_destroy(m[1]);
	for (r = 0; r < NREL; r++)
		gnn_graph_destroy(g[r]);
}

int
main(void)
{
	/* the large graphs last: every launch of the emulated device costs
	 * in proportion to the device memory allocated before it */
	equal();
	/* the copies' int64 form (ids past int32, forced) */
	setenv("GNNRT_WIDE_INDEX", "1", 1);
	compares("hubs, wide index", hubgraph(2000, 20000, 1, 1, 2), 2, c0s + 2, 1);
	unsetenv("GNNRT_WIDE_INDEX");
	relations();
	badindex();
	hostwork();
	/* the sanitizer tree's run (GNN_TEST_LARGE=0) leaves them to the
	 * plain tree's: ASan would check the same loops, at length */
	if (rt_large())
		equal_large();
	return summary();
}
