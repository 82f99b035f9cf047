/*
** sample.c: neighbour sampling for mini-batch training, PyG's
** NeighborLoader semantics (gnnrt.h, docs/sampling.md).
**
** A batch is a function of (seed, batch number) alone: the epoch's seed
** order is a Fisher-Yates shuffle drawn from Philox (or the given order),
** and node v's draws at hop h of batch b come from Philox blocks whose
** counter is (v, hop and draw, b), so they depend on no thread schedule.
** A hop runs in three passes over its frontier (the nodes the hop before
** added): each node's count min(k, in-degree), a prefix sum, then the
** draws (Floyd's algorithm over the node's CSR row: k distinct positions
** out of deg, uniform) in parallel chunks into their own places; the
** relabelling that follows is serial, in frontier and draw order, since
** "first appearance" is an order.  A node-id map the size of the graph
** (int32, -1 where absent) makes it O(1) a lookup; it is reset from the
** batch's node list, so a batch costs O(its size), not O(N).
**
** Memory: three batch slots of fixed capacity (batch_size and fanouts
** give the most nodes and edges), one held by the caller, the previous
** one (still bound, maybe, until the caller rebinds), and one the
** producer thread fills; the batch's gnn_graph is the only allocation a
** batch makes.  The producer fills batch i+1 as soon as the caller takes
** batch i, and waits otherwise.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "philox.h"
#include "sampler.h"

enum { NSLOT = GNN_SAMPLE_SLOTS, ErrLen = 512 };

/* Philox streams (counter word 2) of the sampler, apart from dropout's
 * (small numbers) and init's (bit 31) */
#define STREAM_DRAW 0x40000000u   /* | hop << 20 | draw: a node's neighbour draws */
#define STREAM_PERM 0x50000000u   /* an epoch's shuffle */

typedef struct slot {
	gnn_batch b;
	int64_t *node, *ei, *eid;
	uint8_t *mask;
	void *rows[GNN_SAMPLER_MAX_ROWS];
	gnn_status status;
	char err[ErrLen];
} slot;

struct gnn_sampler {
	const gnn_graph *g;
	gnn_sampler_config cfg;
	int64_t n, nseeds, nbatch, capn, cape;
	const int64_t *rowptr, *perm, *src;
	int64_t *seeds, *order, orderepoch;
	int32_t *map;
	int64_t *off, *draw;          /* a hop's per-frontier-node offsets, and its draws */
	int nrows;
	const void *rowdata[GNN_SAMPLER_MAX_ROWS];
	size_t rowbytes[GNN_SAMPLER_MAX_ROWS];
	slot slot[NSLOT];
	gnn_prefetch_ pf;
};

static uint32_t
lo32(uint64_t v)
{
	return (uint32_t)v;
}

/* a uniform integer in [0, m), m < 2^32, from the block of ctr under
 * seed: Lemire's multiply-shift with rejection over the block's four
 * words (all four rejected is < (m / 2^32)^4 likely: then word 0's
 * biased value) */
uint32_t
gnn_sample_uniform_(uint64_t seed, const uint32_t ctr[4], uint32_t m)
{
	uint32_t key[2] = {lo32(seed), lo32(seed >> 32)}, o[4], thr = (uint32_t)(-m) % m;
	uint64_t p = 0;
	int w;

	gnn_philox4x32(ctr, key, o);
	for (w = 0; w < 4; w++) {
		p = (uint64_t)o[w] * m;
		if ((uint32_t)p >= thr)
			return (uint32_t)(p >> 32);
	}
	return (uint32_t)(((uint64_t)o[0] * m) >> 32);
}

/* Floyd: for t = d-c .. d-1, r uniform in [0, t]; r if not taken, else t:
 * c distinct positions, every c-subset equally likely */
void
gnn_sample_floyd_(uint64_t seed, uint32_t ctr[4], uint32_t stream, int64_t d, int64_t c, int64_t *out)
{
	int64_t t, u, q;

	for (t = d - c; t < d; t++) {
		ctr[2] = stream | (uint32_t)(t - (d - c));
		u = gnn_sample_uniform_(seed, ctr, (uint32_t)(t + 1));
		for (q = 0; q < t - (d - c); q++)
			if (out[q] == u)
				break;
		out[t - (d - c)] = q < t - (d - c) ? t : u;
	}
}

void
gnn_sample_shuffle_(uint64_t seed, int64_t epoch, int64_t *a, int64_t n)
{
	int64_t i, r, t;
	uint32_t ctr[4];

	for (i = n - 1; i > 0; i--) {
		ctr[0] = lo32((uint64_t)i);
		ctr[1] = lo32((uint64_t)i >> 32);
		ctr[2] = STREAM_PERM;
		ctr[3] = lo32((uint64_t)epoch);
		r = gnn_sample_uniform_(seed, ctr, (uint32_t)(i + 1));
		t = a[i];
		a[i] = a[r];
		a[r] = t;
	}
}

/* ---- parallel chunks (shared with hsample.c) ----------------------------- */

typedef struct chunk {
	void (*fn)(void *ctx, int64_t lo, int64_t hi);
	void *ctx;
	int64_t lo, hi;
} chunk;

static void *
chunkrun(void *arg)
{
	chunk *c = (chunk *)arg;

	c->fn(c->ctx, c->lo, c->hi);
	return NULL;
}

/* fn over [0, n) in threads contiguous chunks; a chunk whose thread
 * cannot start runs here: the result is the same either way */
void
gnn_sample_forall_(int threads, void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx, int64_t n)
{
	enum { MaxThreads = 64 };
	int t, nt = threads > 1 ? threads : 1, started[MaxThreads] = {0};
	chunk c[MaxThreads];
	pthread_t th[MaxThreads];

	if (nt > MaxThreads)
		nt = MaxThreads;
	if (n < 64 * (int64_t)nt)   /* small: not worth a thread */
		nt = 1;
	for (t = 0; t < nt; t++) {
		c[t] = (chunk){.fn = fn, .ctx = ctx, .lo = n * t / nt, .hi = n * (t + 1) / nt};
		if (t > 0)
			started[t] = pthread_create(&th[t], NULL, chunkrun, &c[t]) == 0;
	}
	for (t = 0; t < nt; t++)
		if (!started[t])
			c[t].fn(c[t].ctx, c[t].lo, c[t].hi);
	for (t = 1; t < nt; t++)
		if (started[t])
			pthread_join(th[t], NULL);
}

/* what a pass's chunks read */
typedef struct job {
	const gnn_sampler *s;
	void (*fn)(void *ctx, int64_t lo, int64_t hi);
	slot *sl;
	int64_t seq, f0, hop;
} job;

static void
forall(const gnn_sampler *s, job *jb, int64_t n)
{
	gnn_sample_forall_(s->cfg.threads, jb->fn, jb, n);
}

/* ---- one batch ------------------------------------------------------------- */

/* hop pass 1: node f0+i's draw count into off[i + 1] */
static void
countfn(void *ctx, int64_t lo, int64_t hi)
{
	const job *j = (const job *)ctx;
	const gnn_sampler *s = j->s;
	int64_t i, v, d, k = s->cfg.fanout[j->hop];

	for (i = lo; i < hi; i++) {
		v = j->sl->node[j->f0 + i];
		d = s->rowptr[v + 1] - s->rowptr[v];
		s->off[i + 1] = d < k ? d : k;
	}
}

/* hop pass 3: node f0+i's draws, as the graph's edge ids, at draw[off[i]] */
static void
drawfn(void *ctx, int64_t lo, int64_t hi)
{
	const job *j = (const job *)ctx;
	const gnn_sampler *s = j->s;
	int64_t i, v, d, c, t, *out;
	uint32_t ctr[4];

	for (i = lo; i < hi; i++) {
		v = j->sl->node[j->f0 + i];
		d = s->rowptr[v + 1] - s->rowptr[v];
		c = s->off[i + 1] - s->off[i];
		out = s->draw + s->off[i];
		if (c == d) {   /* every in-edge, in the CSR's order */
			for (t = 0; t < d; t++)
				out[t] = s->perm[s->rowptr[v] + t];
			continue;
		}
		ctr[0] = lo32((uint64_t)v);
		ctr[1] = lo32((uint64_t)v >> 32);
		ctr[3] = lo32((uint64_t)j->seq);
		gnn_sample_floyd_(s->cfg.seed, ctr, STREAM_DRAW | (uint32_t)j->hop << 20, d, c, out);
		for (t = 0; t < c; t++)
			out[t] = s->perm[s->rowptr[v] + out[t]];
	}
}

/* the registered rows of the batch's nodes */
static void
gatherfn(void *ctx, int64_t lo, int64_t hi)
{
	const job *j = (const job *)ctx;
	const gnn_sampler *s = j->s;
	int64_t i;
	int k;

	for (k = 0; k < s->nrows; k++)
		for (i = lo; i < hi; i++)
			memcpy((char *)j->sl->rows[k] + (size_t)i * s->rowbytes[k],
			       (const char *)s->rowdata[k] + (size_t)j->sl->node[i] * s->rowbytes[k], s->rowbytes[k]);
}

/* the epoch's seed order */
static void
order(gnn_sampler *s, int64_t epoch)
{
	if (s->orderepoch == epoch)
		return;
	memcpy(s->order, s->seeds, (size_t)s->nseeds * sizeof *s->order);
	if (s->cfg.shuffle)
		gnn_sample_shuffle_(s->cfg.seed, epoch, s->order, s->nseeds);
	s->orderepoch = epoch;
}

/* batch number seq (epoch seq / nbatch) into its slot */
static gnn_status
fill(void *owner, int64_t seq)
{
	gnn_sampler *s = (gnn_sampler *)owner;
	slot *sl = &s->slot[seq % NSLOT];
	gnn_batch *b = &sl->b;
	int64_t epoch = seq / s->nbatch, idx = seq % s->nbatch, first = idx * s->cfg.batch_size;
	int64_t n, e = 0, f0, f1, i, t, u, hop;
	job jb = {.s = s, .sl = sl, .seq = seq};
	gnn_status st;

	gnn_graph_destroy(b->graph);
	b->graph = NULL;
	order(s, epoch);
	n = s->nseeds - first < s->cfg.batch_size ? s->nseeds - first : s->cfg.batch_size;
	b->epoch = epoch;
	b->index = idx;
	b->num_seeds = n;
	for (i = 0; i < n; i++) {
		sl->node[i] = s->order[first + i];
		s->map[sl->node[i]] = (int32_t)i;
	}
	f0 = 0;
	f1 = n;
	for (hop = 0; hop < s->cfg.nhops && f1 > f0; hop++) {
		jb.f0 = f0;
		jb.hop = hop;
		jb.fn = countfn;
		forall(s, &jb, f1 - f0);
		s->off[0] = 0;
		for (i = 0; i < f1 - f0; i++)
			s->off[i + 1] += s->off[i];
		jb.fn = drawfn;
		forall(s, &jb, f1 - f0);
		/* relabel: new nodes in order of first appearance */
		for (i = 0; i < f1 - f0; i++)
			for (t = s->off[i]; t < s->off[i + 1]; t++) {
				u = s->src[s->draw[t]];
				if (s->map[u] < 0) {
					s->map[u] = (int32_t)n;
					sl->node[n++] = u;
				}
				sl->ei[e] = s->map[u];
				sl->ei[s->cape + e] = f0 + i;
				sl->eid[e++] = s->draw[t];
			}
		f0 = f1;
		f1 = n;
	}
	for (i = 0; i < n; i++)
		s->map[sl->node[i]] = -1;
	/* [2, E] contiguous: the targets after the sources */
	memmove(sl->ei + e, sl->ei + s->cape, (size_t)e * sizeof *sl->ei);
	memset(sl->mask, 0, (size_t)n);
	memset(sl->mask, 1, (size_t)b->num_seeds);
	b->num_nodes = n;
	b->num_edges = e;
	jb.fn = gatherfn;
	forall(s, &jb, n);
	/* the CSR too, here: bind then finds it built */
	if ((st = gnn_graph_from_edge_index(&b->graph, sl->ei, GNN_I64, e, n)) != GNN_OK ||
	    (st = gnn_graph_csr_(b->graph)) != GNN_OK) {
		snprintf(sl->err, sizeof sl->err, "%s", gnn_errmsg());
		gnn_graph_destroy(b->graph);
		b->graph = NULL;
		return st;
	}
	return GNN_OK;
}

/* ---- the producer (shared with hsample.c) ------------------------------ */

static void *
producer(void *arg)
{
	gnn_prefetch_ *p = (gnn_prefetch_ *)arg;
	int64_t k;
	gnn_status st;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->prod > p->cons)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		k = p->prod;
		pthread_mutex_unlock(&p->mu);
		st = p->fill(p->owner, k);
		pthread_mutex_lock(&p->mu);
		p->status[k % GNN_SAMPLE_SLOTS] = st;
		p->prod++;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void
gnn_prefetch_init_(gnn_prefetch_ *p, gnn_status (*fill)(void *, int64_t), void *owner)
{
	memset(p, 0, sizeof *p);
	p->fill = fill;
	p->owner = owner;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
}

gnn_status
gnn_prefetch_next_(gnn_prefetch_ *p, int prefetch, int64_t *seq)
{
	int64_t k = p->cons;
	gnn_status st;

	*seq = k;
	if (!prefetch) {
		st = p->fill(p->owner, k);
	} else {
		if (!p->started) {
			if (pthread_create(&p->thread, NULL, producer, p) != 0)
				return GNN_ERR_STATE;
			p->started = 1;
		}
		pthread_mutex_lock(&p->mu);
		while (p->prod <= k)
			pthread_cond_wait(&p->cv, &p->mu);
		st = p->status[k % GNN_SAMPLE_SLOTS];
		pthread_mutex_unlock(&p->mu);
	}
	/* the producer may fill batch k + 1 now, in the slot of batch k - 2 */
	pthread_mutex_lock(&p->mu);
	p->cons = k + 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return st;
}

gnn_status
gnn_sample_take_(gnn_prefetch_ *p, int prefetch, int64_t nbatch, char *const err[GNN_SAMPLE_SLOTS], const char *who,
                 int64_t *seq)
{
	gnn_status st = gnn_prefetch_next_(p, prefetch, seq);

	if (st != GNN_OK && !p->started && prefetch)
		return gnn_error(GNN_ERR_STATE, "%s: cannot start the producer thread", who);
	if (st != GNN_OK)
		return gnn_error(st, "%s: batch %lld of epoch %lld: %s", who, (long long)(*seq % nbatch),
		                 (long long)(*seq / nbatch), err[*seq % GNN_SAMPLE_SLOTS]);
	return GNN_OK;
}

int
gnn_prefetch_taken_(const gnn_prefetch_ *p)
{
	return p->started || p->cons;
}

void
gnn_prefetch_destroy_(gnn_prefetch_ *p)
{
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		p->started = 0;
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

/* ---- the API --------------------------------------------------------------- */

/* a + b or a * b saturated at lim (capacities are clipped to the graph's) */
static int64_t
satadd(int64_t a, int64_t b, int64_t lim)
{
	return a > lim - b ? lim : a + b;
}

static int64_t
satmul(int64_t a, int64_t b, int64_t lim)
{
	return b && a > lim / b ? lim : a * b;
}

void *
gnn_sample_zget_(size_t n, int *fail)
{
	void *p = n ? gnn_realloc(NULL, 0, n) : NULL;

	if (n && !p)
		*fail = 1;
	else if (p)
		memset(p, 0, n);
	return p;
}

void
gnn_sample_zput_(void *p, size_t n)
{
	if (p)
		gnn_free(p, n);
}

gnn_status
gnn_sample_rows_(const gnn_prefetch_ *p, int nrows, int64_t cap, size_t row_bytes, void **dst[GNN_SAMPLE_SLOTS],
                 const char *who)
{
	int k, fail = 0;

	if (gnn_prefetch_taken_(p))
		return gnn_error(GNN_ERR_STATE, "%s: batches were taken already", who);
	if (nrows == GNN_SAMPLER_MAX_ROWS)
		return gnn_error(GNN_ERR_ARG, "%s: more than %d arrays", who, GNN_SAMPLER_MAX_ROWS);
	if (row_bytes && (size_t)cap > SIZE_MAX / 4 / row_bytes)
		return gnn_error(GNN_ERR_SHAPE, "%s: rows of %zu bytes overflow", who, row_bytes);
	for (k = 0; k < NSLOT; k++)
		*dst[k] = gnn_sample_zget_((size_t)cap * row_bytes + 1, &fail);
	if (fail) {
		for (k = 0; k < NSLOT; k++) {
			gnn_sample_zput_(*dst[k], (size_t)cap * row_bytes + 1);
			*dst[k] = NULL;
		}
		return gnn_error(GNN_ERR_MEM, "%s: out of memory (%lld rows of %zu bytes)", who, (long long)cap, row_bytes);
	}
	return GNN_OK;
}

static void
buffers(gnn_sampler *s, int get, int *fail)
{
	int k, r;
	size_t capn = (size_t)s->capn, cape = (size_t)s->cape;

#define BUF(p, n) do { if (get) (p) = gnn_sample_zget_((n), fail); else gnn_sample_zput_((p), (n)); } while (0)
	BUF(s->seeds, (size_t)s->nseeds * sizeof *s->seeds);
	BUF(s->order, (size_t)s->nseeds * sizeof *s->order);
	BUF(s->map, (size_t)s->n * sizeof *s->map);
	BUF(s->off, (capn + 1) * sizeof *s->off);
	BUF(s->draw, (cape + 1) * sizeof *s->draw);
	for (k = 0; k < NSLOT; k++) {
		slot *sl = &s->slot[k];
		BUF(sl->node, (capn + 1) * sizeof *sl->node);
		BUF(sl->ei, (2 * cape + 1) * sizeof *sl->ei);
		BUF(sl->eid, (cape + 1) * sizeof *sl->eid);
		BUF(sl->mask, capn + 1);
		for (r = 0; r < s->nrows; r++)
			BUF(sl->rows[r], capn * s->rowbytes[r] + 1);
	}
#undef BUF
}

void
gnn_sampler_destroy(gnn_sampler *s)
{
	int k, r;

	if (!s)
		return;
	gnn_prefetch_destroy_(&s->pf);
	for (k = 0; k < NSLOT; k++) {
		gnn_graph_destroy(s->slot[k].b.graph);
		for (r = 0; r < s->nrows; r++)
			s->slot[k].b.rows[r] = NULL;
	}
	buffers(s, 0, NULL);
	gnn_free(s, sizeof *s);
}

gnn_status
gnn_sampler_create(const gnn_graph *g, const int64_t *seeds, int64_t nseeds, const gnn_sampler_config *cfg,
                   gnn_sampler **out)
{
	gnn_sampler *s;
	int64_t i, level, capn, cape;
	int h, fail = 0;
	gnn_status st;

	if (out)
		*out = NULL;
	if (!g || !cfg || !out || (nseeds && !seeds))
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_create: NULL argument");
	if (nseeds <= 0)
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_create: no seed nodes (%lld)", (long long)nseeds);
	if (cfg->batch_size <= 0)
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_create: batch_size is %lld, it must be at least 1",
		                 (long long)cfg->batch_size);
	if (cfg->nhops < 1 || cfg->nhops > GNN_SAMPLER_MAX_HOPS)
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_create: nhops is %d, it must be in [1, %d]", cfg->nhops,
		                 GNN_SAMPLER_MAX_HOPS);
	for (h = 0; h < cfg->nhops; h++)
		if (cfg->fanout[h] < 1 || cfg->fanout[h] > GNN_SAMPLER_MAX_FANOUT)
			return gnn_error(GNN_ERR_ARG, "gnn_sampler_create: fanout[%d] is %lld, it must be in [1, %d]", h,
			                 (long long)cfg->fanout[h], GNN_SAMPLER_MAX_FANOUT);
	if (cfg->threads < 0)
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_create: threads is %d, it must be >= 0", cfg->threads);
	if (gnn_graph_num_nodes(g) > INT32_MAX)
		return gnn_error(GNN_ERR_SHAPE, "gnn_sampler_create: the graph has %lld nodes, more than %d",
		                 (long long)gnn_graph_num_nodes(g), INT32_MAX);
	for (i = 0; i < nseeds; i++)
		if (seeds[i] < 0 || seeds[i] >= gnn_graph_num_nodes(g))
			return gnn_error(GNN_ERR_RANGE, "gnn_sampler_create: seed %lld is node %lld, out of range [0, %lld)",
			                 (long long)i, (long long)seeds[i], (long long)gnn_graph_num_nodes(g));
	if ((st = gnn_graph_csr_(g)) != GNN_OK)
		return st;
	/* capacities: B (1 + k1 + k1 k2 + ...) nodes, B (k1 + k1 k2 + ...)
	 * edges, and never more than the graph has */
	level = cfg->batch_size;
	capn = level;
	cape = 0;
	for (h = 0; h < cfg->nhops; h++) {
		level = satmul(level, cfg->fanout[h], INT64_MAX / 4);
		capn = satadd(capn, level, INT64_MAX / 4);
		cape = satadd(cape, level, INT64_MAX / 4);
	}
	if (capn > gnn_graph_num_nodes(g))
		capn = gnn_graph_num_nodes(g);
	if (cape > gnn_graph_num_edges(g))
		cape = gnn_graph_num_edges(g);
	if ((uint64_t)cape > SIZE_MAX / 64)
		return gnn_error(GNN_ERR_SHAPE, "gnn_sampler_create: %lld edges a batch do not fit in memory",
		                 (long long)cape);
	if (!(s = (gnn_sampler *)gnn_realloc(NULL, 0, sizeof *s)))
		return gnn_error(GNN_ERR_MEM, "gnn_sampler_create: out of memory");
	memset(s, 0, sizeof *s);
	s->g = g;
	s->cfg = *cfg;
	s->n = gnn_graph_num_nodes(g);
	s->nseeds = nseeds;
	s->nbatch = (nseeds + cfg->batch_size - 1) / cfg->batch_size;
	s->capn = capn;
	s->cape = cape;
	s->rowptr = gnn_graph_rowptr(g);
	s->perm = gnn_graph_perm(g);
	s->src = gnn_graph_src(g);
	s->orderepoch = -1;
	gnn_prefetch_init_(&s->pf, fill, s);
	buffers(s, 1, &fail);
	if (fail) {
		gnn_sampler_destroy(s);
		return gnn_error(GNN_ERR_MEM, "gnn_sampler_create: out of memory (capacity %lld nodes, %lld edges)",
		                 (long long)capn, (long long)cape);
	}
	memcpy(s->seeds, seeds, (size_t)nseeds * sizeof *seeds);
	/* distinct seeds: the map marks them (and is left all -1) */
	for (i = 0; i < s->n; i++)
		s->map[i] = -1;
	for (i = 0; i < nseeds; i++) {
		if (s->map[seeds[i]] >= 0) {
			st = gnn_error(GNN_ERR_RANGE, "gnn_sampler_create: seed %lld is node %lld again (seed %d)",
			               (long long)i, (long long)seeds[i], (int)s->map[seeds[i]]);
			gnn_sampler_destroy(s);
			return st;
		}
		s->map[seeds[i]] = (int32_t)(i < INT32_MAX ? i : INT32_MAX);
	}
	for (i = 0; i < nseeds; i++)
		s->map[seeds[i]] = -1;
	*out = s;
	return GNN_OK;
}

gnn_status
gnn_sampler_add_rows(gnn_sampler *s, const void *data, size_t row_bytes)
{
	void **dst[NSLOT];
	int k;
	gnn_status st;

	if (!s || (!data && s->n && row_bytes))
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_add_rows: NULL argument");
	for (k = 0; k < NSLOT; k++)
		dst[k] = &s->slot[k].rows[s->nrows < GNN_SAMPLER_MAX_ROWS ? s->nrows : 0];
	if ((st = gnn_sample_rows_(&s->pf, s->nrows, s->capn, row_bytes, dst, "gnn_sampler_add_rows")) != GNN_OK)
		return st;
	s->rowdata[s->nrows] = data;
	s->rowbytes[s->nrows] = row_bytes;
	for (k = 0; k < NSLOT; k++)
		s->slot[k].b.rows[s->nrows] = s->slot[k].rows[s->nrows];
	s->nrows++;
	return GNN_OK;
}

gnn_status
gnn_sampler_next(gnn_sampler *s, const gnn_batch **out)
{
	int64_t k;
	slot *sl;
	gnn_status st;

	if (out)
		*out = NULL;
	if (!s || !out)
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_next: NULL argument");
	{
		char *const err[NSLOT] = {s->slot[0].err, s->slot[1].err, s->slot[2].err};
		if ((st = gnn_sample_take_(&s->pf, s->cfg.prefetch, s->nbatch, err, "gnn_sampler_next", &k)) != GNN_OK)
			return st;
	}
	sl = &s->slot[k % NSLOT];
	sl->b.node = sl->node;
	sl->b.edge_index = sl->ei;
	sl->b.edge_id = sl->eid;
	sl->b.mask = sl->mask;
	*out = &sl->b;
	return GNN_OK;
}

int64_t
gnn_sampler_batches(const gnn_sampler *s)
{
	return s ? s->nbatch : 0;
}

void
gnn_sampler_capacity(const gnn_sampler *s, int64_t *nodes, int64_t *edges)
{
	if (nodes)
		*nodes = s ? s->capn : 0;
	if (edges)
		*edges = s ? s->cape : 0;
}

gnn_status
gnn_sampler_capacity_graph(const gnn_sampler *s, gnn_graph **out)
{
	int64_t k, *ei;
	size_t nb;
	gnn_status st;

	if (out)
		*out = NULL;
	if (!s || !out)
		return gnn_error(GNN_ERR_ARG, "gnn_sampler_capacity_graph: NULL argument");
	nb = (2 * (size_t)s->cape + 1) * sizeof *ei;
	if (!(ei = (int64_t *)gnn_realloc(NULL, 0, nb)))
		return gnn_error(GNN_ERR_MEM, "gnn_sampler_capacity_graph: out of memory");
	for (k = 0; k < s->cape; k++) {
		ei[k] = (k + 1) % s->capn;
		ei[s->cape + k] = k % s->capn;
	}
	st = gnn_graph_from_edge_index(out, ei, GNN_I64, s->cape, s->capn);
	gnn_free(ei, nb);
	return st;
}
