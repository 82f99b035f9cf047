/*
** hsample.c: neighbour sampling over a heterogeneous graph, PyG's
** NeighborLoader over HeteroData (pyg-lib's hetero_neighbor_sample), and
** temporal sampling where edges carry times (gnnrt.h, docs/sampling.md).
**
** A batch is a function of (seed, batch number), as the homogeneous
** sampler's (sample.c, whose Philox draws, Floyd subsets, shuffle and
** producer thread this file shares through sampler.h): node v's draws
** over relation r at hop h come from Philox blocks whose counter is (v,
** its seed's subgraph, h, r, draw, batch).  A batch is filled hop by
** hop, relation by relation, frontier node by node, as pyg-lib loops;
** as sample.c's, each (hop, relation) runs in three passes over the
** frontier: the counts min(k, eligible), a prefix sum, the draws into
** their own places (these two on cfg.threads threads, in chunks), then
** the relabelling, serial since first appearance is an order.  The row
** gathers are chunked too.  The threads change no draw: the same
** batches on any number of them.
**
** Nodes are keyed (type, subgraph, id) in an open-addressing table of
** twice the batch's node capacity, cleared per batch: untimed sampling
** has one subgraph (0), temporal sampling one per seed (PyG makes
** temporal subgraphs disjoint), so a node reached from two seeds is two
** nodes.  Temporal eligibility is a prefix: each timed relation's CSR
** rows are sorted by (time, edge id) once at create, so the edges at or
** before a seed's time are found by binary search, as pyg-lib's sorted
** CSC is cut.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "sampler.h"

enum { NSLOT = GNN_SAMPLE_SLOTS, ErrLen = 512, MAXT = GNN_HSAMPLER_MAX_TYPES, MAXR = GNN_HSAMPLER_MAX_RELS };

/* Philox stream (counter word 2): | hop << 25 | relation << 16 | draw,
 * apart from sample.c's 0x4... and 0x5... */
#define STREAM_HDRAW 0x60000000u
#define EMPTY UINT64_MAX

typedef struct hslot {
	gnn_hbatch b;
	int64_t *node[MAXT], *root[MAXT], *ei[MAXR], *eid[MAXR];
	int64_t *seedidx, *bt;            /* the batch's seeds' positions in seeds[], and times */
	uint8_t *mask;
	void *rows[GNN_SAMPLER_MAX_ROWS];
	char err[ErrLen];
} hslot;

struct gnn_hsampler {
	gnn_hsampler_config cfg;
	int nt, nr, seedtype, temporal;
	int64_t n[MAXT], capn[MAXT], cape[MAXR], ne[MAXR];
	int srct[MAXR], dstt[MAXR];
	const int64_t *rowptr[MAXR], *order[MAXR], *src[MAXR];
	int64_t *sorted[MAXR], *stime[MAXR];   /* timed: a row's edges by (time, id), and their times */
	int64_t nseeds, nbatch, *seeds, *seedtime, *idx, idxepoch;
	uint64_t *key;                    /* the node table: keys, and local ids */
	int64_t *val, nkey;
	int64_t *off;                     /* a pass's per-frontier-node offsets */
	int nrows, rowtype[GNN_SAMPLER_MAX_ROWS];
	const void *rowdata[GNN_SAMPLER_MAX_ROWS];
	size_t rowbytes[GNN_SAMPLER_MAX_ROWS];
	hslot slot[NSLOT];
	gnn_prefetch_ pf;
};

static uint64_t
mix(uint64_t z)
{
	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9u;
	z = (z ^ z >> 27) * 0x94d049bb133111ebu;
	return z ^ z >> 31;
}

/* the local id of (t, root, v) in slot sl, added (as t's next node) when new */
static int64_t
local(gnn_hsampler *s, hslot *sl, int t, int64_t root, int64_t v)
{
	uint64_t k = (uint64_t)v | (uint64_t)root << 32 | (uint64_t)t << 58, m = (uint64_t)s->nkey - 1, h;
	int64_t j;

	for (h = mix(k) & m; s->key[h] != EMPTY; h = (h + 1) & m)
		if (s->key[h] == k)
			return s->val[h];
	j = sl->b.num_nodes[t]++;
	s->key[h] = k;
	s->val[h] = j;
	sl->node[t][j] = v;
	sl->root[t][j] = root;
	return j;
}

/* the first of a[0..n) above x (a sorted) */
static int64_t
upper(const int64_t *a, int64_t n, int64_t x)
{
	int64_t lo = 0, hi = n;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* what a pass's chunks read: frontier nodes f0.. of relation r's
 * target type at hop, k a node, the draws from edge base on */
typedef struct hjob {
	const gnn_hsampler *s;
	hslot *sl;
	int64_t seq, f0, k, base;
	int r, hop, q;
} hjob;

/* frontier node f0+i's eligible in-edges of r, from its CSR row at *lo */
static int64_t
eligible(const hjob *j, int64_t i, int64_t *lo)
{
	const gnn_hsampler *s = j->s;
	int d = s->dstt[j->r];
	int64_t v = j->sl->node[d][j->f0 + i], deg;

	*lo = s->rowptr[j->r][v];
	deg = s->rowptr[j->r][v + 1] - *lo;
	if (s->sorted[j->r])   /* the edges at or before the seed's time */
		deg = upper(s->stime[j->r] + *lo, deg, j->sl->bt[j->sl->root[d][j->f0 + i]]);
	return deg;
}

/* pass 1: node f0+i's draw count into off[i + 1] */
static void
hcountfn(void *ctx, int64_t lo, int64_t hi)
{
	const hjob *j = (const hjob *)ctx;
	int64_t i, at, deg;

	for (i = lo; i < hi; i++) {
		deg = eligible(j, i, &at);
		j->s->off[i + 1] = deg < j->k ? deg : j->k;
	}
}

/* pass 3: node f0+i's draws, as the relation's edge ids, at edge
 * base + off[i] of the slot */
static void
hdrawfn(void *ctx, int64_t lo, int64_t hi)
{
	const hjob *j = (const hjob *)ctx;
	const gnn_hsampler *s = j->s;
	int d = s->dstt[j->r];
	const int64_t *ord = s->sorted[j->r] ? s->sorted[j->r] : s->order[j->r];
	int64_t i, q, at, deg, c, *out;
	uint32_t ctr[4];

	ctr[3] = (uint32_t)j->seq;
	for (i = lo; i < hi; i++) {
		deg = eligible(j, i, &at);
		c = s->off[i + 1] - s->off[i];
		out = j->sl->eid[j->r] + j->base + s->off[i];
		if (c == deg) {
			for (q = 0; q < c; q++)
				out[q] = q;
		} else {
			ctr[0] = (uint32_t)j->sl->node[d][j->f0 + i];
			ctr[1] = (uint32_t)j->sl->root[d][j->f0 + i];
			gnn_sample_floyd_(s->cfg.seed, ctr, STREAM_HDRAW | (uint32_t)j->hop << 25 | (uint32_t)j->r << 16,
			                  deg, c, out);
		}
		for (q = 0; q < c; q++)
			out[q] = ord[at + out[q]];
	}
}

/* registered row array q's rows of the batch's nodes of its type */
static void
hgatherfn(void *ctx, int64_t lo, int64_t hi)
{
	const hjob *j = (const hjob *)ctx;
	const gnn_hsampler *s = j->s;
	int q = j->q, t = s->rowtype[q];

	for (int64_t i = lo; i < hi; i++)
		memcpy((char *)j->sl->rows[q] + (size_t)i * s->rowbytes[q],
		       (const char *)s->rowdata[q] + (size_t)j->sl->node[t][i] * s->rowbytes[q], s->rowbytes[q]);
}

/* batch seq into its slot */
static gnn_status
fill(void *owner, int64_t seq)
{
	gnn_hsampler *s = (gnn_hsampler *)owner;
	hslot *sl = &s->slot[seq % NSLOT];
	gnn_hbatch *b = &sl->b;
	int64_t epoch = seq / s->nbatch, first = (seq % s->nbatch) * s->cfg.batch_size;
	int64_t f0[MAXT] = {0}, f1[MAXT], i, q, e, nb;
	int t, r, hop;
	gnn_status st = GNN_OK;

	for (r = 0; r < s->nr; r++) {
		gnn_graph_destroy(b->graph[r]);
		b->graph[r] = NULL;
		b->num_edges[r] = 0;
	}
	if (s->idxepoch != epoch) {
		for (i = 0; i < s->nseeds; i++)
			s->idx[i] = i;
		if (s->cfg.shuffle)
			gnn_sample_shuffle_(s->cfg.seed, epoch, s->idx, s->nseeds);
		s->idxepoch = epoch;
	}
	nb = s->nseeds - first < s->cfg.batch_size ? s->nseeds - first : s->cfg.batch_size;
	b->epoch = epoch;
	b->index = seq % s->nbatch;
	b->num_seeds = nb;
	for (t = 0; t < s->nt; t++)
		b->num_nodes[t] = 0;
	for (q = 0; q < s->nkey; q++)
		s->key[q] = EMPTY;
	for (i = 0; i < nb; i++) {
		sl->seedidx[i] = s->idx[first + i];
		sl->bt[i] = s->temporal ? s->seedtime[s->idx[first + i]] : 0;
		local(s, sl, s->seedtype, s->temporal ? i : 0, s->seeds[s->idx[first + i]]);
	}
	for (t = 0; t < s->nt; t++)
		f1[t] = b->num_nodes[t];
	for (hop = 0; hop < s->cfg.nhops; hop++) {
		for (r = 0; r < s->nr; r++) {
			int d = s->dstt[r], st_ = s->srct[r];
			hjob jb = {.s = s, .sl = sl, .seq = seq, .f0 = f0[d], .k = s->cfg.fanout[r][hop],
			           .base = b->num_edges[r], .r = r, .hop = hop};
			int64_t nf = f1[d] - f0[d], *ei = sl->ei[r], *eid = sl->eid[r];
			if (jb.k == 0 || nf == 0)
				continue;
			gnn_sample_forall_(s->cfg.threads, hcountfn, &jb, nf);
			s->off[0] = 0;
			for (i = 0; i < nf; i++)
				s->off[i + 1] += s->off[i];
			gnn_sample_forall_(s->cfg.threads, hdrawfn, &jb, nf);
			/* relabel: new nodes in order of first appearance */
			for (i = 0; i < nf; i++)
				for (q = s->off[i]; q < s->off[i + 1]; q++) {
					e = jb.base + q;
					ei[e] = local(s, sl, st_, sl->root[d][f0[d] + i], s->src[r][eid[e]]);
					ei[s->cape[r] + e] = f0[d] + i;
				}
			b->num_edges[r] += s->off[nf];
		}
		for (t = 0; t < s->nt; t++) {
			f0[t] = f1[t];
			f1[t] = b->num_nodes[t];
		}
	}
	memset(sl->mask, 0, (size_t)b->num_nodes[s->seedtype]);
	memset(sl->mask, 1, (size_t)nb);
	for (q = 0; q < s->nrows; q++) {
		hjob jb = {.s = s, .sl = sl, .q = (int)q};
		gnn_sample_forall_(s->cfg.threads, hgatherfn, &jb, b->num_nodes[s->rowtype[q]]);
	}
	for (r = 0; r < s->nr && st == GNN_OK; r++) {
		e = b->num_edges[r];
		/* [2, E] contiguous: the targets after the sources */
		memmove(sl->ei[r] + e, sl->ei[r] + s->cape[r], (size_t)e * sizeof *sl->ei[r]);
		if ((st = gnn_graph_relation_from_edge_index(&b->graph[r], sl->ei[r], GNN_I64, e,
		        b->num_nodes[s->srct[r]], b->num_nodes[s->dstt[r]])) == GNN_OK)
			st = gnn_graph_csr_(b->graph[r]);
	}
	if (st != GNN_OK)
		snprintf(sl->err, sizeof sl->err, "%s", gnn_errmsg());
	return st;
}

/* ---- create and destroy ------------------------------------------------ */

static int64_t
sat(int64_t a, int64_t b, int mul)
{
	const int64_t lim = INT64_MAX / 4;

	if (mul)
		return b && a > lim / b ? lim : a * b;
	return a > lim - b ? lim : a + b;
}

/* sizes + 1: no buffer of zero bytes is NULL */
static void *
zget(size_t n, int *fail)
{
	return gnn_sample_zget_(n + 1, fail);
}

static void
zput(void *p, size_t n)
{
	gnn_sample_zput_(p, n + 1);
}

/* every buffer whose size the capacities give, got or put back */
static void
buffers(gnn_hsampler *s, int get, int *fail)
{
	int k, t, r;
	int64_t maxcap = 0;

	for (t = 0; t < s->nt; t++)
		maxcap = s->capn[t] > maxcap ? s->capn[t] : maxcap;
#define BUF(p, n) do { if (get) (p) = zget((n), fail); else zput((p), (n)); } while (0)
	BUF(s->seeds, (size_t)s->nseeds * sizeof *s->seeds);
	BUF(s->seedtime, (size_t)s->nseeds * sizeof *s->seedtime);
	BUF(s->idx, (size_t)s->nseeds * sizeof *s->idx);
	BUF(s->key, (size_t)s->nkey * sizeof *s->key);
	BUF(s->val, (size_t)s->nkey * sizeof *s->val);
	BUF(s->off, (size_t)(maxcap + 1) * sizeof *s->off);
	for (k = 0; k < NSLOT; k++) {
		hslot *sl = &s->slot[k];
		for (t = 0; t < s->nt; t++) {
			BUF(sl->node[t], (size_t)s->capn[t] * sizeof *sl->node[t]);
			BUF(sl->root[t], (size_t)s->capn[t] * sizeof *sl->root[t]);
		}
		for (r = 0; r < s->nr; r++) {
			BUF(sl->ei[r], 2 * (size_t)s->cape[r] * sizeof *sl->ei[r]);
			BUF(sl->eid[r], (size_t)s->cape[r] * sizeof *sl->eid[r]);
		}
		BUF(sl->mask, (size_t)s->capn[s->seedtype]);
		BUF(sl->seedidx, (size_t)s->cfg.batch_size * sizeof *sl->seedidx);
		BUF(sl->bt, (size_t)s->cfg.batch_size * sizeof *sl->bt);
	}
#undef BUF
}

/* a stable merge sort of e[0..n) by time[e[.]] (tmp: n scratch) */
static void
sortbytime(int64_t *e, int64_t n, const int64_t *time, int64_t *tmp)
{
	int64_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	sortbytime(e, h, time, tmp);
	sortbytime(e + h, n - h, time, tmp);
	while (i < h && j < n)
		tmp[k++] = time[e[j]] < time[e[i]] ? e[j++] : e[i++];
	while (i < h)
		tmp[k++] = e[i++];
	while (j < n)
		tmp[k++] = e[j++];
	memcpy(e, tmp, (size_t)n * sizeof *e);
}

/* timed relation r's rows by (time, edge id), and the times in that order */
static gnn_status
sortrows(gnn_hsampler *s, int r, const int64_t *time)
{
	int64_t ne = s->ne[r], *tmp, v;
	int fail = 0;

	s->sorted[r] = zget((size_t)ne * sizeof *s->sorted[r], &fail);
	s->stime[r] = zget((size_t)ne * sizeof *s->stime[r], &fail);
	tmp = zget((size_t)ne * sizeof *tmp, &fail);
	if (fail) {
		zput(tmp, (size_t)ne * sizeof *tmp);
		return gnn_error(GNN_ERR_MEM, "gnn_hsampler_create: out of memory for relation %d's times", r);
	}
	memcpy(s->sorted[r], s->order[r], (size_t)ne * sizeof *s->sorted[r]);
	for (v = 0; v < s->n[s->dstt[r]]; v++)
		sortbytime(s->sorted[r] + s->rowptr[r][v], s->rowptr[r][v + 1] - s->rowptr[r][v], time, tmp);
	for (v = 0; v < ne; v++)
		s->stime[r][v] = time[s->sorted[r][v]];
	zput(tmp, (size_t)ne * sizeof *tmp);
	return GNN_OK;
}

void
gnn_hsampler_destroy(gnn_hsampler *s)
{
	int k, r;

	if (!s)
		return;
	gnn_prefetch_destroy_(&s->pf);
	for (k = 0; k < NSLOT; k++) {
		for (r = 0; r < s->nr; r++)
			gnn_graph_destroy(s->slot[k].b.graph[r]);
		for (r = 0; r < s->nrows; r++)
			gnn_sample_zput_(s->slot[k].rows[r], (size_t)s->capn[s->rowtype[r]] * s->rowbytes[r] + 1);
	}
	for (r = 0; r < s->nr; r++) {
		zput(s->sorted[r], (size_t)s->ne[r] * sizeof *s->sorted[r]);
		zput(s->stime[r], (size_t)s->ne[r] * sizeof *s->stime[r]);
	}
	buffers(s, 0, NULL);
	gnn_free(s, sizeof *s);
}

/* the settings' and the graph's errors, before anything is allocated */
static gnn_status
check(const gnn_hetero_desc *h, int seedtype, const int64_t *seeds, const int64_t *seedtime, int64_t nseeds,
      const gnn_hsampler_config *cfg, int *temporal)
{
	int t, r, hop;

	if (!h || !cfg || (nseeds && !seeds) || !h->num_nodes || !h->rel || !h->src_type || !h->dst_type)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: NULL argument");
	if (h->num_types < 1 || h->num_types > MAXT)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: num_types is %d, it must be in [1, %d]", h->num_types,
		                 MAXT);
	if (h->num_rels < 1 || h->num_rels > MAXR)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: num_rels is %d, it must be in [1, %d]", h->num_rels,
		                 MAXR);
	for (t = 0; t < h->num_types; t++)
		if (h->num_nodes[t] < 0 || h->num_nodes[t] > INT32_MAX)
			return gnn_error(GNN_ERR_SHAPE, "gnn_hsampler_create: type %d has %lld nodes, not in [0, %d]", t,
			                 (long long)h->num_nodes[t], INT32_MAX);
	*temporal = 0;
	for (r = 0; r < h->num_rels; r++) {
		int s = h->src_type[r], d = h->dst_type[r];
		if (!h->rel[r])
			return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: relation %d is NULL", r);
		if (s < 0 || s >= h->num_types || d < 0 || d >= h->num_types)
			return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: relation %d's types %d -> %d are not in [0, %d)", r,
			                 s, d, h->num_types);
		if (gnn_graph_num_src_nodes(h->rel[r]) != h->num_nodes[s] || gnn_graph_num_nodes(h->rel[r]) != h->num_nodes[d])
			return gnn_error(GNN_ERR_SHAPE,
			                 "gnn_hsampler_create: relation %d is %lld -> %lld nodes, its types have %lld -> %lld", r,
			                 (long long)gnn_graph_num_src_nodes(h->rel[r]), (long long)gnn_graph_num_nodes(h->rel[r]),
			                 (long long)h->num_nodes[s], (long long)h->num_nodes[d]);
		if (h->edge_time && h->edge_time[r])
			*temporal = 1;
	}
	if (seedtype < 0 || seedtype >= h->num_types)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: seed type %d is not in [0, %d)", seedtype, h->num_types);
	if (nseeds <= 0)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: no seed nodes (%lld)", (long long)nseeds);
	if (*temporal && !seedtime)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: edges have times, and the seeds none (seed_time is NULL)");
	if (!*temporal && seedtime)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: seed times, and no relation has edge times");
	if (cfg->batch_size <= 0 || cfg->batch_size > ((int64_t)1 << 26))
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: batch_size is %lld, it must be in [1, 2^26]",
		                 (long long)cfg->batch_size);
	if (cfg->threads < 0)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: threads is %d, it must be >= 0", cfg->threads);
	if (cfg->nhops < 1 || cfg->nhops > GNN_SAMPLER_MAX_HOPS)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: nhops is %d, it must be in [1, %d]", cfg->nhops,
		                 GNN_SAMPLER_MAX_HOPS);
	for (r = 0; r < h->num_rels; r++)
		for (hop = 0; hop < cfg->nhops; hop++)
			if (cfg->fanout[r][hop] < 0 || cfg->fanout[r][hop] > GNN_SAMPLER_MAX_FANOUT)
				return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: fanout[%d][%d] is %lld, it must be in [0, %d]", r,
				                 hop, (long long)cfg->fanout[r][hop], GNN_SAMPLER_MAX_FANOUT);
	for (int64_t i = 0; i < nseeds; i++)
		if (seeds[i] < 0 || seeds[i] >= h->num_nodes[seedtype])
			return gnn_error(GNN_ERR_RANGE, "gnn_hsampler_create: seed %lld is node %lld, out of range [0, %lld)",
			                 (long long)i, (long long)seeds[i], (long long)h->num_nodes[seedtype]);
	return GNN_OK;
}

/* untimed seeds are distinct (a timed node may be a seed at two times) */
static gnn_status
distinct(const int64_t *seeds, int64_t nseeds, int64_t n)
{
	int64_t *at = gnn_realloc(NULL, 0, (size_t)n * sizeof *at + 1), i;
	gnn_status st = GNN_OK;

	if (!at)
		return gnn_error(GNN_ERR_MEM, "gnn_hsampler_create: out of memory");
	for (i = 0; i < n; i++)
		at[i] = -1;
	for (i = 0; i < nseeds && st == GNN_OK; i++)
		if (at[seeds[i]] >= 0)
			st = gnn_error(GNN_ERR_RANGE, "gnn_hsampler_create: seed %lld is node %lld again (seed %lld)",
			               (long long)i, (long long)seeds[i], (long long)at[seeds[i]]);
		else
			at[seeds[i]] = i;
	gnn_free(at, (size_t)n * sizeof *at + 1);
	return st;
}

gnn_status
gnn_hsampler_create(const gnn_hetero_desc *h, int seedtype, const int64_t *seeds, const int64_t *seedtime,
                    int64_t nseeds, const gnn_hsampler_config *cfg, gnn_hsampler **out)
{
	gnn_hsampler *s;
	int64_t level[MAXT] = {0}, next[MAXT], total = 0;
	int t, r, hop, temporal = 0, fail = 0;
	gnn_status st;

	if (out)
		*out = NULL;
	if (!out)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_create: NULL argument");
	if ((st = check(h, seedtype, seeds, seedtime, nseeds, cfg, &temporal)) != GNN_OK)
		return st;
	if (!temporal && (st = distinct(seeds, nseeds, h->num_nodes[seedtype])) != GNN_OK)
		return st;
	for (r = 0; r < h->num_rels; r++)
		if ((st = gnn_graph_csr_(h->rel[r])) != GNN_OK)
			return st;
	if (!(s = (gnn_hsampler *)gnn_realloc(NULL, 0, sizeof *s)))
		return gnn_error(GNN_ERR_MEM, "gnn_hsampler_create: out of memory");
	memset(s, 0, sizeof *s);
	s->cfg = *cfg;
	s->nt = h->num_types;
	s->nr = h->num_rels;
	s->seedtype = seedtype;
	s->temporal = temporal;
	s->nseeds = nseeds;
	s->nbatch = (nseeds + cfg->batch_size - 1) / cfg->batch_size;
	s->idxepoch = -1;
	gnn_prefetch_init_(&s->pf, fill, s);
	/* capacities: the frontier of each type, hop by hop; untimed, never
	 * more than a type's nodes or a relation's edges, timed (a subgraph
	 * a seed) never more than that times the batch */
	level[seedtype] = cfg->batch_size;
	for (t = 0; t < s->nt; t++) {
		s->n[t] = h->num_nodes[t];
		s->capn[t] = level[t];
	}
	for (hop = 0; hop < cfg->nhops; hop++) {
		memset(next, 0, sizeof next);
		for (r = 0; r < s->nr; r++) {
			int64_t e = sat(level[h->dst_type[r]], cfg->fanout[r][hop], 1);
			s->cape[r] = sat(s->cape[r], e, 0);
			next[h->src_type[r]] = sat(next[h->src_type[r]], e, 0);
		}
		for (t = 0; t < s->nt; t++) {
			level[t] = next[t];
			s->capn[t] = sat(s->capn[t], next[t], 0);
		}
	}
	for (t = 0; t < s->nt; t++) {
		int64_t lim = temporal ? sat(s->n[t], cfg->batch_size, 1) : s->n[t];
		s->capn[t] = s->capn[t] < lim ? s->capn[t] : lim;
		total = sat(total, s->capn[t], 0);
	}
	for (r = 0; r < s->nr; r++) {
		int64_t lim;
		s->ne[r] = gnn_graph_num_edges(h->rel[r]);
		lim = temporal ? sat(s->ne[r], cfg->batch_size, 1) : s->ne[r];
		s->cape[r] = s->cape[r] < lim ? s->cape[r] : lim;
		s->srct[r] = h->src_type[r];
		s->dstt[r] = h->dst_type[r];
		s->rowptr[r] = gnn_graph_rowptr(h->rel[r]);
		s->order[r] = gnn_graph_perm(h->rel[r]);
		s->src[r] = gnn_graph_src(h->rel[r]);
		if ((uint64_t)s->cape[r] > SIZE_MAX / 64)
			fail = 2;
	}
	for (s->nkey = 2; s->nkey < 2 * total + 2 && s->nkey < ((int64_t)1 << 60); s->nkey *= 2)
		;
	if (fail || (uint64_t)s->nkey > SIZE_MAX / 64) {
		gnn_hsampler_destroy(s);
		return gnn_error(GNN_ERR_SHAPE, "gnn_hsampler_create: a batch's nodes and edges do not fit in memory");
	}
	buffers(s, 1, &fail);
	for (r = 0; r < s->nr && !fail; r++)
		if (temporal && h->edge_time[r] && (st = sortrows(s, r, h->edge_time[r])) != GNN_OK) {
			gnn_hsampler_destroy(s);
			return st;
		}
	if (fail) {
		gnn_hsampler_destroy(s);
		return gnn_error(GNN_ERR_MEM, "gnn_hsampler_create: out of memory (capacity %lld nodes)", (long long)total);
	}
	memcpy(s->seeds, seeds, (size_t)nseeds * sizeof *seeds);
	if (seedtime)
		memcpy(s->seedtime, seedtime, (size_t)nseeds * sizeof *seedtime);
	for (int k = 0; k < NSLOT; k++)
		for (t = 0; t < s->nt; t++)
			s->slot[k].b.root[t] = temporal ? s->slot[k].root[t] : NULL;
	*out = s;
	return GNN_OK;
}

/* ---- the API ----------------------------------------------------------- */

gnn_status
gnn_hsampler_add_rows(gnn_hsampler *s, int type, const void *data, size_t row_bytes)
{
	void **dst[NSLOT];
	int k;
	gnn_status st;

	if (!s || type < 0 || type >= s->nt || (!data && s->n[type] && row_bytes))
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_add_rows: NULL argument or no type %d", type);
	for (k = 0; k < NSLOT; k++)
		dst[k] = &s->slot[k].rows[s->nrows < GNN_SAMPLER_MAX_ROWS ? s->nrows : 0];
	if ((st = gnn_sample_rows_(&s->pf, s->nrows, s->capn[type], row_bytes, dst, "gnn_hsampler_add_rows")) != GNN_OK)
		return st;
	s->rowtype[s->nrows] = type;
	s->rowdata[s->nrows] = data;
	s->rowbytes[s->nrows] = row_bytes;
	for (k = 0; k < NSLOT; k++)
		s->slot[k].b.rows[s->nrows] = s->slot[k].rows[s->nrows];
	s->nrows++;
	return GNN_OK;
}

gnn_status
gnn_hsampler_next(gnn_hsampler *s, const gnn_hbatch **out)
{
	int64_t k;
	hslot *sl;
	gnn_status st;
	int t, r;

	if (out)
		*out = NULL;
	if (!s || !out)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_next: NULL argument");
	{
		char *const err[NSLOT] = {s->slot[0].err, s->slot[1].err, s->slot[2].err};
		if ((st = gnn_sample_take_(&s->pf, s->cfg.prefetch, s->nbatch, err, "gnn_hsampler_next", &k)) != GNN_OK)
			return st;
	}
	sl = &s->slot[k % NSLOT];
	for (t = 0; t < s->nt; t++)
		sl->b.node[t] = sl->node[t];
	for (r = 0; r < s->nr; r++) {
		sl->b.edge_index[r] = sl->ei[r];
		sl->b.edge_id[r] = sl->eid[r];
	}
	sl->b.mask = sl->mask;
	sl->b.seed_index = sl->seedidx;
	sl->b.seed_time = s->temporal ? sl->bt : NULL;
	*out = &sl->b;
	return GNN_OK;
}

int64_t
gnn_hsampler_batches(const gnn_hsampler *s)
{
	return s ? s->nbatch : 0;
}

void
gnn_hsampler_capacity(const gnn_hsampler *s, int64_t *nodes, int64_t *edges)
{
	for (int t = 0; s && nodes && t < s->nt; t++)
		nodes[t] = s->capn[t];
	for (int r = 0; s && edges && r < s->nr; r++)
		edges[r] = s->cape[r];
}

gnn_status
gnn_hsampler_capacity_graphs(const gnn_hsampler *s, gnn_graph **out)
{
	int r, q;
	gnn_status st = GNN_OK;

	if (!s || !out)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_capacity_graphs: NULL argument");
	for (r = 0; r < s->nr; r++)
		out[r] = NULL;
	for (r = 0; r < s->nr && st == GNN_OK; r++) {
		int64_t e = s->cape[r], ns = s->capn[s->srct[r]], nd = s->capn[s->dstt[r]], k;
		size_t nb = (2 * (size_t)e + 1) * sizeof(int64_t);
		int64_t *ei = (int64_t *)gnn_realloc(NULL, 0, nb);
		if (!ei) {
			st = gnn_error(GNN_ERR_MEM, "gnn_hsampler_capacity_graphs: out of memory");
			break;
		}
		for (k = 0; k < e; k++) {
			ei[k] = k % ns;
			ei[e + k] = k % nd;
		}
		st = gnn_graph_relation_from_edge_index(&out[r], ei, GNN_I64, e, ns, nd);
		gnn_free(ei, nb);
	}
	if (st != GNN_OK)
		for (q = 0; q < s->nr; q++) {
			gnn_graph_destroy(out[q]);
			out[q] = NULL;
		}
	return st;
}

/* one array of the batch, dir/bK_WHAT[_IDX].npy */
static gnn_status
save(const char *dir, int64_t k, const char *what, int idx, gnn_dtype dt, int rank, int64_t d0, int64_t d1,
     const void *p)
{
	char path[4096];
	gnn_array a = {.dtype = dt, .rank = rank, .shape = {d0, d1}, .data = (void *)p};

	a.nbytes = (size_t)(d0 * (rank > 1 ? d1 : 1)) * gnn_dtype_size(dt);
	if (idx < 0)
		snprintf(path, sizeof path, "%s/b%lld_%s.npy", dir, (long long)k, what);
	else
		snprintf(path, sizeof path, "%s/b%lld_%s_%d.npy", dir, (long long)k, what, idx);
	return gnn_npy_write(path, &a);
}

gnn_status
gnn_hsampler_save_batch(const gnn_hsampler *s, const gnn_hbatch *b, const char *dir, int64_t k)
{
	int64_t meta[3];
	gnn_status st;
	int t, r;

	if (!s || !b || !dir)
		return gnn_error(GNN_ERR_ARG, "gnn_hsampler_save_batch: NULL argument");
	meta[0] = b->epoch;
	meta[1] = b->index;
	meta[2] = b->num_seeds;
	if ((st = save(dir, k, "meta", -1, GNN_I64, 1, 3, 0, meta)) != GNN_OK ||
	    (st = save(dir, k, "seed_index", -1, GNN_I64, 1, b->num_seeds, 0, b->seed_index)) != GNN_OK ||
	    (s->temporal && (st = save(dir, k, "seed_time", -1, GNN_I64, 1, b->num_seeds, 0, b->seed_time)) != GNN_OK) ||
	    (st = save(dir, k, "mask", -1, GNN_BOOL, 1, b->num_nodes[s->seedtype], 0, b->mask)) != GNN_OK)
		return st;
	for (t = 0; t < s->nt; t++)
		if ((st = save(dir, k, "node", t, GNN_I64, 1, b->num_nodes[t], 0, b->node[t])) != GNN_OK ||
		    (s->temporal && (st = save(dir, k, "root", t, GNN_I64, 1, b->num_nodes[t], 0, b->root[t])) != GNN_OK))
			return st;
	for (r = 0; r < s->nr; r++)
		if ((st = save(dir, k, "ei", r, GNN_I64, 2, 2, b->num_edges[r], b->edge_index[r])) != GNN_OK ||
		    (st = save(dir, k, "eid", r, GNN_I64, 1, b->num_edges[r], 0, b->edge_id[r])) != GNN_OK)
			return st;
	return GNN_OK;
}
