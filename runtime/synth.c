/*
** synth.c: deterministic synthetic graphs with power-law degrees, shaped
** like real datasets, for benchmarks and autotuning.
**
** Model (Chung-Lu style, directed). The node of rank r (1-based) weighs
** r^-alpha. Each edge draws its source by weight from one random ranking
** of the nodes and its target from another, so out- and in-degrees are
** both Zipf-like over ranks with exponent alpha, hubs sit at random ids,
** and the biggest in-hub is usually not the biggest out-hub. A target
** equal to its source is drawn again, so there are no self loops when
** N >= 2 (with one node every edge is 0 -> 0); repeated edges are kept,
** as in a multigraph. Edges come out in the order they are drawn.
**
** Speed. Ranks are grouped into blocks within which the weight changes
** by less than 0.4%; a draw picks a block from a small cumulative table
** (through a guide table: expected O(1), all in cache), a rank in it
** uniformly, and the node id from the side's ranking. Only that last
** lookup touches memory of size N, so edges are drawn in batches whose
** lookups are prefetched together. About 8 bytes a node of tables.
**
** Determinism. The same spec gives the same bytes on every platform and
** compiler: the PRNG is our own (xoshiro256**, seeded by splitmix64), and
** everything that shapes a table is integer arithmetic: weights come from
** fixed-point log2 and exp2 (alpha rounded to 1/65536), so neither libm's
** pow nor a fused multiply-add can move a block boundary. Every edge
** takes the same four numbers of its stream whatever the batch size; the
** rare redraws of self loops take theirs from a stream of their own.
** Features are uniform in [-1, 1): 24 random bits scaled exactly.
**
** Limits: N < 2^32 (ids are 32-bit in the tables), 0 <= alpha <= 8.
*/
#include "internal.h"

enum {
	ALPHA_ONE = 1 << 16,   /* alpha's fixed-point scale */
	MAX_TRIES = 64,        /* target redraws before the uniform fallback */
	BATCH = 256,           /* edges whose id lookups are in flight together */
};

/* --- the PRNG ------------------------------------------------------------ */

typedef struct Rng {
	uint64_t s[4];
} Rng;

/* the streams of one seed, apart so that features need no edges */
enum { STREAM_PERMS = 1, STREAM_EDGES, STREAM_REDRAWS, STREAM_FEATURES, STREAM_INTS };

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9u;
	z = (z ^ z >> 27) * 0x94d049bb133111ebu;
	return z ^ z >> 31;
}

static void
rng_init(Rng *g, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ stream * 0xd1b54a32d192ed03u;

	/* splitmix64 never yields four zeros in a row: the state is valid */
	for (int i = 0; i < 4; i++)
		g->s[i] = splitmix64(&x);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return x << k | x >> (64 - k);
}

static inline uint64_t
rng_next(Rng *g)
{
	uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

/* an integer in [0, m), m <= 2^32, from r's high half (Lemire's method
** without its rejection step: the bias is below m / 2^32) */
static inline uint64_t
below(uint64_t r, uint64_t m)
{
	return (r >> 32) * m >> 32;
}

/* --- weights in fixed point ---------------------------------------------- */

/* log2(r) in Q32 for r >= 1: the integer part by shifting, the fraction
** bit by bit by squaring the mantissa (Q31 in [1, 2), so squares fit) */
static uint64_t
log2q32(uint32_t r)
{
	int k = 31;
	uint64_t m, frac = 0;

	while (!(r >> k))
		k--;
	m = (uint64_t)r << (31 - k);
	for (int b = 31; b >= 0; b--) {
		m = m * m >> 31;
		if (m >> 32) {
			m >>= 1;
			frac |= (uint64_t)1 << b;
		}
	}
	return (uint64_t)k << 32 | frac;
}

/* c[j] = 2^(-2^-(j+1)) in Q31: each the square root of the one before,
** by integer square roots, so that no libm value enters the tables */
static void
exp2table(uint32_t c[32])
{
	uint64_t prev = (uint64_t)1 << 30;   /* 2^-1 in Q31 */

	for (int j = 0; j < 32; j++) {
		uint64_t v = prev << 31, x = 0;   /* x = isqrt(v), v < 2^62 */
		for (uint64_t bit = (uint64_t)1 << 62; bit; bit >>= 2)
			if (v >= x + bit) {
				v -= x + bit;
				x = (x >> 1) + bit;
			} else
				x >>= 1;
		c[j] = (uint32_t)x;
		prev = x;
	}
}

/*
** count * 2^(top - e), rounded down, for e in Q32, count < 2^32 and
** count * 2^top < 2^63. The mantissa 2^-frac(e) (Q31) is multiplied by
** count before the shift, so a long tail of tiny weights keeps its mass.
*/
static uint64_t
exp2neg(uint64_t e, uint64_t count, int top, const uint32_t c[32])
{
	uint64_t x = (uint64_t)1 << 31, shift = (e >> 32) + 31;

	for (int j = 0; j < 32; j++)
		if (e >> (31 - j) & 1)
			x = x * c[j] >> 31;
	x *= count;
	if (shift >= (uint64_t)top + 64)
		return 0;
	return shift >= (uint64_t)top ? x >> (shift - (uint64_t)top) : x << ((uint64_t)top - shift);
}

/* --- tables -------------------------------------------------------------- */

/*
** A block starting at rank r holds about r / (256 alpha) ranks (1 at the
** head), so its weights differ by a factor below e^(1/256): drawing a
** block by its total weight and a rank in it uniformly is Zipf to within
** 0.4%, far below the Poisson noise of any degree. There are about
** 256 alpha (1 + ln N) blocks (2800 for alpha 1 and N = 2.4M), and a
** guide table (Chen and Asau's cut points) with about four entries a
** block starts the scan of their cumulative weights one or two blocks
** before the answer.
*/
typedef struct Block {
	uint64_t end;            /* cumulative weight up to here, of 2^63 */
	uint32_t first, size;    /* ranks, 0-based */
} Block;

typedef struct Tables {
	uint32_t n, nblock;
	Block *block;            /* the last one ends at 2^63 */
	uint32_t *guide;         /* [2^gbits]: first block ending after i * 2^(63 - gbits) */
	int gbits;
	uint32_t *perm[2];       /* rank -> node id, of sources and of targets */
} Tables;

static void *
alloc_n(size_t n, size_t size)
{
	return n <= SIZE_MAX / size ? gnn_malloc(n * size) : NULL;
}

static void
freetables(Tables *t)
{
	gnn_free(t->block, (size_t)t->nblock * sizeof *t->block);
	if (t->guide)
		gnn_free(t->guide, ((size_t)1 << t->gbits) * sizeof *t->guide);
	for (int i = 0; i < 2; i++)
		gnn_free(t->perm[i], (size_t)t->n * sizeof *t->perm[i]);
}

/* the size of the block that starts at 1-based rank r of n */
static uint64_t
blocksize(uint64_t r, uint64_t n, uint64_t alpha)
{
	uint64_t s = alpha ? (r << 8) / alpha : n;

	s = s ? s : 1;
	return s < n - r + 1 ? s : n - r + 1;
}

/* floor(v * 2^63 / w) for v < w < 2^63, by long division */
static uint64_t
scale63(uint64_t v, uint64_t w)
{
	uint64_t q = 0;

	for (int i = 0; i < 63; i++) {
		v <<= 1;
		q = q << 1 | (v >= w);
		if (v >= w)
			v -= w;
	}
	return q;
}

/*
** The blocks and the guide for weights r^-alpha, alpha in 1/65536ths.
** A weight is at most 2^top with n * 2^top < 2^63, so the total fits; a
** block weighs its size times the weight at its middle.
*/
static int
mkblocks(Tables *t, uint64_t alpha)
{
	uint32_t c[32], k = 0;
	uint64_t n = t->n, total = 0, r, g;
	int top = 62;

	exp2table(c);
	while (n >> (63 - top))
		top--;
	for (r = 1; r <= n; r += blocksize(r, n, alpha))
		t->nblock++;
	if (!(t->block = alloc_n(t->nblock, sizeof *t->block)))
		return -1;
	for (r = 1; r <= n; r += blocksize(r, n, alpha)) {
		uint64_t s = blocksize(r, n, alpha);
		/* alpha < 2^20, log2 < 2^37: the product fits */
		total += exp2neg(alpha * log2q32((uint32_t)(r + s / 2)) >> 16, s, top, c);
		t->block[k++] = (Block){total, (uint32_t)(r - 1), (uint32_t)s};
	}
	/* blocks of (rounded) weight 0 end where the one before does: never drawn */
	for (k = 0; k < t->nblock; k++)
		t->block[k].end = t->block[k].end < total ? scale63(t->block[k].end, total)
			: (uint64_t)1 << 63;
	while (t->gbits < 30 && (uint64_t)1 << t->gbits < 4 * (uint64_t)t->nblock)
		t->gbits++;
	if (!(t->guide = alloc_n((size_t)1 << t->gbits, sizeof *t->guide)))
		return -1;
	for (g = 0, k = 0; g < (uint64_t)1 << t->gbits; g++) {
		while (t->block[k].end <= g << (63 - t->gbits))
			k++;
		t->guide[g] = k;
	}
	return 0;
}

/* a random ranking: Fisher-Yates over the identity */
static void
shuffle(uint32_t *perm, uint32_t n, Rng *g)
{
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)below(rng_next(g), (uint64_t)i + 1), x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
}

/* a rank by weight: two numbers of g */
static inline uint32_t
drawrank(const Tables *t, Rng *g)
{
	uint64_t u = rng_next(g) >> 1;
	const Block *b = &t->block[t->guide[u >> (63 - t->gbits)]];

	while (b->end <= u)
		b++;
	return b->first + (uint32_t)below(rng_next(g), b->size);
}

static inline void
prefetch(const void *p)
{
#if defined(__GNUC__)
	__builtin_prefetch(p);
#else
	(void)p;
#endif
}

/* a target other than src (n >= 2), from the redraw stream */
static uint32_t
redraw(const Tables *t, uint32_t src, Rng *g)
{
	for (int i = 0; i < MAX_TRIES; i++) {
		uint32_t dst = t->perm[1][drawrank(t, g)];
		if (dst != src)
			return dst;
	}
	/* a hub that takes nearly all the weight (alpha near 8): any other node */
	return (uint32_t)((src + 1 + below(rng_next(g), t->n - 1)) % t->n);
}

/* --- the API ------------------------------------------------------------- */

/* alpha in 1/65536ths, rounded to nearest: alpha * 2^16 and the
** difference are exact in any floating-point mode (FMA, x87), so is this */
static uint64_t
fixalpha(double alpha)
{
	double v = alpha * ALPHA_ONE;
	uint64_t a = (uint64_t)v;

	return a + (v - (double)a >= 0.5);
}

/* messages say "synthetic graph:" rather than a function's name: gnngen
** shows them to people who never called one */
gnn_status
gnn_synth_check(const gnn_synth_spec *s)
{
	static const char who[] = "synthetic graph";

	if (!s)
		return gnn_fail(GNN_ERR_ARG, "%s: spec is NULL", who);
	if (s->nodes < 0 || s->edges < 0 || s->features < 0)
		return gnn_fail(GNN_ERR_ARG, "%s: negative size (%lld nodes, %lld edges, %lld features)",
			who, (long long)s->nodes, (long long)s->edges, (long long)s->features);
	if (s->edges > 0 && s->nodes == 0)
		return gnn_fail(GNN_ERR_ARG, "%s: %lld edges need at least one node",
			who, (long long)s->edges);
	/* written so that NaN fails too */
	if (!(s->alpha >= 0 && s->alpha <= 8))
		return gnn_fail(GNN_ERR_ARG, "%s: alpha %g is not in [0, 8]", who, s->alpha);
	if (s->nodes > (int64_t)UINT32_MAX)
		return gnn_fail(GNN_ERR_SHAPE, "%s: %lld nodes: at most %lu are supported",
			who, (long long)s->nodes, (unsigned long)UINT32_MAX);
	/* edge_index is 2 * edges int64s, x nodes * features floats */
	if ((uint64_t)s->edges > (uint64_t)INT64_MAX / 16 || (uint64_t)s->edges > SIZE_MAX / 16)
		return gnn_fail(GNN_ERR_SHAPE, "%s: %lld edges: edge_index is too large to address",
			who, (long long)s->edges);
	if (s->features > 0 && ((uint64_t)s->nodes > (uint64_t)INT64_MAX / 4 / (uint64_t)s->features
	    || (uint64_t)s->nodes > SIZE_MAX / 4 / (uint64_t)s->features))
		return gnn_fail(GNN_ERR_SHAPE, "%s: %lld nodes x %lld features: x is too large to address",
			who, (long long)s->nodes, (long long)s->features);
	return GNN_OK;
}

gnn_status
gnn_synth_edges(const gnn_synth_spec *s, int64_t *edge_index)
{
	Tables t = {0};
	Rng g, rg;
	uint32_t rank[2][BATCH];
	int64_t ne;
	gnn_status st;

	if ((st = gnn_synth_check(s)) != GNN_OK)
		return st;
	if (s->edges == 0)
		return GNN_OK;
	if (!edge_index)
		return gnn_fail(GNN_ERR_ARG, "gnn_synth_edges: edge_index is NULL");
	t.n = (uint32_t)s->nodes;
	ne = s->edges;
	if (mkblocks(&t, fixalpha(s->alpha)) != 0
	    || !(t.perm[0] = alloc_n(t.n, sizeof *t.perm[0]))
	    || !(t.perm[1] = alloc_n(t.n, sizeof *t.perm[1]))) {
		freetables(&t);
		return gnn_fail(GNN_ERR_MEM, "synthetic graph: out of memory for the tables of %lu nodes",
			(unsigned long)t.n);
	}
	rng_init(&g, s->seed, STREAM_PERMS);
	shuffle(t.perm[0], t.n, &g);
	shuffle(t.perm[1], t.n, &g);
	rng_init(&g, s->seed, STREAM_EDGES);
	rng_init(&rg, s->seed, STREAM_REDRAWS);
	for (int64_t e0 = 0; e0 < ne; e0 += BATCH) {
		int k = ne - e0 < BATCH ? (int)(ne - e0) : BATCH;
		for (int i = 0; i < k; i++)
			for (int side = 0; side < 2; side++) {
				rank[side][i] = drawrank(&t, &g);
				prefetch(&t.perm[side][rank[side][i]]);
			}
		for (int i = 0; i < k; i++) {
			uint32_t src = t.perm[0][rank[0][i]], dst = t.perm[1][rank[1][i]];
			if (dst == src && t.n > 1)
				dst = redraw(&t, src, &rg);
			edge_index[e0 + i] = src;
			edge_index[ne + e0 + i] = dst;
		}
	}
	freetables(&t);
	return GNN_OK;
}

gnn_status
gnn_synth_features(const gnn_synth_spec *s, float *x)
{
	const float scale = 1.0f / 8388608.0f;   /* 2^-23 */
	size_t n, i;
	Rng g;
	gnn_status st;

	if ((st = gnn_synth_check(s)) != GNN_OK)
		return st;
	n = (size_t)s->nodes * (size_t)s->features;
	if (n == 0)
		return GNN_OK;
	if (!x)
		return gnn_fail(GNN_ERR_ARG, "gnn_synth_features: x is NULL");
	rng_init(&g, s->seed, STREAM_FEATURES);
	/* two values a number, 24 bits each: k * 2^-23 - 1 is exact in float */
	for (i = 0; i + 1 < n; i += 2) {
		uint64_t r = rng_next(&g);
		x[i] = ((float)(r >> 40) - 8388608.0f) * scale;
		x[i + 1] = ((float)(r >> 8 & 0xffffff) - 8388608.0f) * scale;
	}
	if (i < n)
		x[i] = ((float)(rng_next(&g) >> 40) - 8388608.0f) * scale;
	return GNN_OK;
}

gnn_status
gnn_synth_ints(uint64_t seed, uint64_t stream, int64_t n, int64_t lo, int64_t hi, int64_t *out)
{
	Rng g;

	if (n < 0 || hi <= lo || (uint64_t)hi - (uint64_t)lo > (uint64_t)1 << 32)
		return gnn_fail(GNN_ERR_ARG, "gnn_synth_ints: %lld integers in [%lld, %lld): a bad range or count",
			(long long)n, (long long)lo, (long long)hi);
	if (n > 0 && !out)
		return gnn_fail(GNN_ERR_ARG, "gnn_synth_ints: out is NULL");
	/* a stream of its own per caller's stream: another stream, other numbers */
	rng_init(&g, seed ^ stream * 0x9e3779b97f4a7c15u, STREAM_INTS);
	for (int64_t i = 0; i < n; i++)
		out[i] = lo + (int64_t)below(rng_next(&g), (uint64_t)hi - (uint64_t)lo);
	return GNN_OK;
}
