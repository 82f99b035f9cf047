/*
** split.h: the split plan's rules (split.c), shared by the host's
** reference (split.c) and the device's build (devbind.cu), so that both
** make the same plan bit for bit.  The per-row terms are device code
** too; the functions over sizes run on the host.
*/
#ifndef GNNRT_SPLIT_H
#define GNNRT_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GNN_SPLIT_FN static inline __host__ __device__
#else
#define GNN_SPLIT_FN static inline
#endif

enum {
	/* rows from which row windows span 2(C + 1) work: from 2^16 rows a
	 * row kernel runs many waves of warps on an H100 at any lane width
	 * from 4 up (132 SMs x 2048 threads / L rows at a time) */
	GNN_SPLIT_BUNDLE = 1 << 16,
	GNN_SPLIT_NCAND = 64,         /* chunk candidates c0, 2c0, ... an int64 holds */
};

/* a row's work under chunk length c: 1, plus its edges, or plus 1 (the
 * combined value it reads) when it is long */
GNN_SPLIT_FN int64_t
gnn_split_rowwork(int64_t deg, int64_t c)
{
	return 1 + (deg <= c ? deg : 1);
}

/* the first candidate c0 * 2^k (c0 >= 2) that keeps a row of deg edges
 * whole: the chunk choice needs per candidate only sums over these */
GNN_SPLIT_FN int
gnn_split_bucket(int64_t deg, int64_t c0)
{
	int k = 0;

	for (int64_t c = c0; deg > c && c <= INT64_MAX / 2; c *= 2)
		k++;
	return k;
}

/*
 * Windows by prefix sums (split.c): an element (a row, or a long row's
 * items at a reduce level) of w units at offset p, after one of wq units
 * at offset q, opens a window when either is heavy (more than tau units)
 * or p passes a multiple of h.  A prefix sum and this test per element
 * make the windows in parallel.
 */
GNN_SPLIT_FN int
gnn_split_opens(int64_t q, int64_t wq, int64_t p, int64_t w, int64_t h, int64_t tau)
{
	return w > tau || wq > tau || p / h != q / h;
}

/* windows of at most cap units from elements of at most cap: a heavy
 * one (more than cap / 2) alone, the rest within h - 1 + tau = cap - 1 */
GNN_SPLIT_FN void
gnn_split_fit(int64_t cap, int64_t *h, int64_t *tau)
{
	*tau = cap / 2;
	*h = cap - *tau;
}

/* The row windows of t rows under chunk length C (rows work at most
 * C + 1): from GNN_SPLIT_BUNDLE rows, no row heavy and h = 2(C + 1), so
 * that the busiest window is within 1.5x the mean; below, windows of at
 * most C + 1, the costliest row's work. */
GNN_SPLIT_FN void
gnn_split_winrule(int64_t t, int64_t c, int64_t *h, int64_t *tau)
{
	if (t >= GNN_SPLIT_BUNDLE) {
		*h = 2 * (c + 1);
		*tau = c + 1;
	} else
		gnn_split_fit(c + 1, h, tau);
}

#ifdef __cplusplus
extern "C" {
#endif

/* The chunk length from per-bucket statistics of the rows (st[k]: rows
 * of bucket k, st[NCAND + k]: their edges, st[2 NCAND + k]: their
 * largest 1 + degree, 0 when empty). */
int64_t gnn_split_pick(const int64_t *st, int64_t t, int64_t c0);

/* The header (GNN_SPLIT_HEADER slots) of a plan of t rows, chunk length
 * c, nlong long rows, n0 chunks, nlev levels of n[l] items and nwin[l]
 * windows, and rnwin row windows; returns the plan's slots. */
size_t gnn_split_header(int64_t *head, int64_t c, int64_t t, int64_t nlong, int64_t n0, int nlev, const int64_t *n,
                        const int64_t *nwin, int64_t rnwin);

#ifdef __cplusplus
}
#endif

#endif
