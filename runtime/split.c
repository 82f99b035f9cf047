/*
** split.c: split plans, which balance a row kernel's edge walks by
** edges rather than rows (the cuda target's `split` schedule).
**
** A row kernel gives each target row to one group of lanes, which walks
** the row's in-edges; one node holding millions of edges makes that
** group the whole kernel's critical path.  A split plan cuts every row
** longer than C edges ("long" rows) into chunks of C edges, walked by a
** chunk kernel into partial results, and combines the partials of each
** long row in a fixed tree: reduce levels whose windows take at most
** C items each.  The row kernel then reads one combined value for
** a long row instead of walking it.  Every combine happens in a fixed
** order, so results are bitwise reproducible.
**
** C is chosen here, from the bound graph's degrees: the largest of
** c0, 2c0, 4c0, ... for which the busiest row's work is within twice
** the mean row's (a row costs 1, plus 1 per edge walked, and a long row
** 1 for the value it reads), or c0 if none is.  Per candidate this
** needs only sums and maxima over rows, which one pass collects per
** "bucket" (the first candidate keeping a row whole; split.h).
**
** Every rule below is a prefix sum and a test per element, never a
** sequential packing, so that bind can build the same plan on the
** device (devbind.cu) bit for bit; split.h holds the shared tests.
** Windows come from one rule: with P the elements' offsets (a prefix
** sum of their sizes), an element opens a window when it or the one
** before it is heavy (larger than tau) or its offset passes a multiple
** of h.  A window of light elements then holds at most h - 1 + tau.
** "Fitting" cap (tau = cap / 2, h = cap - tau) gives windows of at most
** cap from elements of at most cap: next fit's bound, without its
** sequential walk.
**
** Reduce levels: level 0's items are the chunks' partials, in long-row
** order.  A long row with more than C items at a level is cut into
** windows of C items (of its own), each leaving one item, a "carry", to
** the next level; its combined value is final otherwise (it goes to the
** row's place in lr).  Those short rows share windows fitting C, at
** their first items' offsets in the level (a cut row before one counts
** as heavy, so a window never spans a cut row): every window holds at
** most C items.  Each level shrinks a cut row's items C-fold, so there
** are at most log_C(max degree) levels.
**
** Row windows: the row kernel itself takes consecutive rows as windows,
** a window to a group of lanes, so a warp's work no longer follows one
** row's degree.  No row works more than C + 1; P_r is the work of the
** rows before row r.
**   - Graphs of GNN_SPLIT_BUNDLE rows and more: h = 2(C + 1) and no row
**     heavy, so a window works less than h + C + 1 and there are at most
**     ceil(total / h) windows: the busiest is within 1.5x the mean (plus
**     one window's work).
**   - Smaller graphs, which a GPU holds in about one wave of warps and
**     where the longest warp is the kernel's time: windows fitting C + 1, so
**     packing never makes a window costlier than the costliest row could
**     be.
**
** The plan is one array of int64 slots: a header (gnnrt.h, GNN_SPLIT_*),
** then lix[T] (each row's index among long rows, or -1), the chunks
** (row, first edge, end edge, as offsets into the segment plan's order),
** per level irow[n] (each item's long row), wstart[nwin + 1] and
** wdest[nwin] (a cut window's carry index, or -1), and last the row
** windows' first rows rwin[nwin + 1].  Partials live in a
** scratch buffer of W floats per item: level l's items from row
** item0(l), and after all items, lr: one row per long row.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "split.h"

int64_t
gnn_split_pick(const int64_t *st, int64_t t, int64_t c0)
{
	const int64_t *rows = st, *edges = st + GNN_SPLIT_NCAND, *top = st + 2 * GNN_SPLIT_NCAND;
	int64_t maxdeg = 0, best, c, whole = 0, walked = 0, busiest = 0;

	if (c0 < 2)
		c0 = 2;
	for (int k = 0; k < GNN_SPLIT_NCAND; k++)
		if (top[k] - 1 > maxdeg)
			maxdeg = top[k] - 1;
	best = c0;
	/* candidate k keeps buckets 0..k whole (1 + degree each); the rest
	 * are long (2 each) */
	c = c0;
	for (int k = 0; t > 0 && k < GNN_SPLIT_NCAND; k++, c *= 2) {
		int64_t sum, most;
		whole += rows[k];
		walked += edges[k];
		busiest = top[k] > busiest ? top[k] : busiest;
		sum = t + walked + (t - whole);
		most = whole < t && busiest < 2 ? 2 : busiest;
		if ((double)most * (double)t <= 2 * (double)sum)
			best = c;
		if (c >= maxdeg || c > INT64_MAX / 2)
			break;
	}
	return best;
}

int64_t
gnn_split_chunk(const int64_t *rowptr, int64_t t, int64_t c0)
{
	int64_t st[3 * GNN_SPLIT_NCAND] = {0};

	if (c0 < 2)
		c0 = 2;
	for (int64_t r = 0; r < t; r++) {
		int64_t d = rowptr[r + 1] - rowptr[r];
		int k = gnn_split_bucket(d, c0);
		st[k]++;
		st[GNN_SPLIT_NCAND + k] += d;
		if (1 + d > st[2 * GNN_SPLIT_NCAND + k])
			st[2 * GNN_SPLIT_NCAND + k] = 1 + d;
	}
	return gnn_split_pick(st, t, c0);
}

size_t
gnn_split_header(int64_t *head, int64_t c, int64_t t, int64_t nlong, int64_t n0, int nlev, const int64_t *n,
                 const int64_t *nwin, int64_t rnwin)
{
	size_t at = GNN_SPLIT_HEADER + (size_t)t + 3 * (size_t)n0;
	int64_t item0 = 0;

	memset(head, 0, GNN_SPLIT_HEADER * sizeof *head);
	head[GNN_SPLIT_C] = c;
	head[GNN_SPLIT_T] = t;
	head[GNN_SPLIT_NLONG] = nlong;
	head[GNN_SPLIT_NCHUNK] = n0;
	head[GNN_SPLIT_NLEV] = nlev;
	head[GNN_SPLIT_LIX] = GNN_SPLIT_HEADER;
	head[GNN_SPLIT_CHUNKS] = GNN_SPLIT_HEADER + t;
	for (int l = 0; l < nlev; l++) {
		int64_t *hd = head + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;
		hd[0] = n[l];
		hd[1] = nwin[l];
		hd[2] = item0;
		hd[3] = item0 + n[l];
		hd[4] = (int64_t)at;
		hd[5] = (int64_t)(at + (size_t)n[l]);
		hd[6] = (int64_t)(at + (size_t)n[l] + (size_t)nwin[l] + 1);
		at += (size_t)n[l] + 2 * (size_t)nwin[l] + 1;
		item0 += n[l];
	}
	head[GNN_SPLIT_NITEMS] = item0;
	head[GNN_SPLIT_NWIN] = rnwin;
	head[GNN_SPLIT_WINS] = (int64_t)at;
	return at + (size_t)rnwin + 1;
}

/* The row windows, walked twice: to count (rwin NULL) and to fill. */
static int64_t
windows(const int64_t *rowptr, int64_t t, int64_t c, int64_t *rwin)
{
	int64_t h, tau, nwin = 0, p = 0, q = 0, wq = 0;

	gnn_split_winrule(t, c, &h, &tau);
	for (int64_t r = 0; r < t; r++) {
		int64_t w = gnn_split_rowwork(rowptr[r + 1] - rowptr[r], c);
		if (!r || gnn_split_opens(q, wq, p, w, h, tau)) {
			if (rwin)
				rwin[nwin] = r;
			nwin++;
		}
		q = p;
		wq = w;
		p += w;
	}
	if (rwin)
		rwin[nwin] = t;
	return nwin;
}

/*
 * One reduce level's windows over cnt[j], long row j's items at this
 * level (0: done), walked twice: to count (wstart NULL) and to fill
 * irow, wstart and wdest.  Sets *ncarry, the next level's items.
 */
static int64_t
levelwins(const int64_t *cnt, int64_t nlong, int64_t c, int64_t *irow, int64_t *wstart, int64_t *wdest, int64_t *ncarry)
{
	int64_t h, tau, nwin = 0, i = 0, carry = 0, q = 0, kq = 0;   /* q, kq: the row before's first item and items */

	gnn_split_fit(c, &h, &tau);
	for (int64_t j = 0; j < nlong; j++) {
		int64_t k = cnt[j];
		if (!k)
			continue;
		if (k > c) {
			for (int64_t e = 0; e < k; e += c, nwin++, carry++)
				if (wstart) {
					wstart[nwin] = i + e;
					wdest[nwin] = carry;
				}
		} else if (!i || gnn_split_opens(q, kq, i, k, h, tau)) {
			if (wstart) {
				wstart[nwin] = i;
				wdest[nwin] = -1;
			}
			nwin++;
		}
		q = i;
		kq = k;
		for (int64_t e = 0; irow && e < k; e++)
			irow[i + e] = j;
		i += k;
	}
	if (wstart)
		wstart[nwin] = i;
	*ncarry = carry;
	return nwin;
}

/* the next level's items: a cut row's carries, none for a finished row */
static void
nextlevel(int64_t *cnt, int64_t nlong, int64_t c)
{
	for (int64_t j = 0; j < nlong; j++)
		cnt[j] = cnt[j] > c ? (cnt[j] + c - 1) / c : 0;
}

/* cnt[j]: long row j's chunks; returns the long rows */
static int64_t
chunkcounts(const int64_t *rowptr, int64_t t, int64_t c, int64_t *cnt)
{
	int64_t j = 0;

	for (int64_t r = 0; r < t; r++)
		if (rowptr[r + 1] - rowptr[r] > c) {
			if (cnt)
				cnt[j] = (rowptr[r + 1] - rowptr[r] + c - 1) / c;
			j++;
		}
	return j;
}

gnn_status
gnn_split_plan(const int64_t *rowptr, int64_t t, int64_t c0, int64_t **out, size_t *nbytes)
{
	int64_t c, nlong, n0 = 0, *cnt = NULL, *plan, head[GNN_SPLIT_HEADER], n[GNN_SPLIT_MAXLEV], nwin[GNN_SPLIT_MAXLEV];
	size_t slots, ncnt;
	int nlev = 0;

	*out = NULL;
	*nbytes = 0;
	if (t < 0 || !rowptr)
		return gnn_fail(GNN_ERR_ARG, "gnn_split_plan: bad segment plan");
	c = gnn_split_chunk(rowptr, t, c0);
	nlong = chunkcounts(rowptr, t, c, NULL);
	ncnt = (size_t)(nlong > 0 ? nlong : 1);
	if (!(cnt = (int64_t *)gnn_malloc(ncnt * sizeof *cnt)))
		return gnn_fail(GNN_ERR_MEM, "gnn_split_plan: out of memory");
	/* count: the levels' items and windows, then the header */
	(void)chunkcounts(rowptr, t, c, cnt);
	for (int64_t j = 0; j < nlong; j++)
		n0 += cnt[j];
	for (int64_t k = n0; k > 0; nlev++) {
		if (nlev >= GNN_SPLIT_MAXLEV)
			abort();   /* C >= 2 halves a cut row's items per level: unreachable */
		n[nlev] = k;
		nwin[nlev] = levelwins(cnt, nlong, c, NULL, NULL, NULL, &k);
		nextlevel(cnt, nlong, c);
	}
	slots = gnn_split_header(head, c, t, nlong, n0, nlev, n, nwin, windows(rowptr, t, c, NULL));
	if (!(plan = (int64_t *)gnn_malloc(slots * sizeof *plan))) {
		gnn_free(cnt, ncnt * sizeof *cnt);
		return gnn_fail(GNN_ERR_MEM, "gnn_split_plan: out of memory");
	}
	memcpy(plan, head, sizeof head);
	/* fill: lix and the chunks, the levels, the row windows */
	{
		int64_t *lix = plan + GNN_SPLIT_HEADER, *crow = plan + head[GNN_SPLIT_CHUNKS], *clo = crow + n0, *chi = clo + n0, k = 0, j = 0;
		for (int64_t r = 0; r < t; r++) {
			int64_t a = rowptr[r], b = rowptr[r + 1];
			if (b - a <= c) {
				lix[r] = -1;
				continue;
			}
			lix[r] = j++;
			for (int64_t e = a; e < b; e += c, k++) {
				crow[k] = r;
				clo[k] = e;
				chi[k] = b - e > c ? e + c : b;
			}
		}
	}
	(void)chunkcounts(rowptr, t, c, cnt);
	for (int l = 0; l < nlev; l++) {
		const int64_t *hd = head + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;
		int64_t k;
		(void)levelwins(cnt, nlong, c, plan + hd[4], plan + hd[5], plan + hd[6], &k);
		nextlevel(cnt, nlong, c);
	}
	(void)windows(rowptr, t, c, plan + head[GNN_SPLIT_WINS]);
	gnn_free(cnt, ncnt * sizeof *cnt);
	*out = plan;
	*nbytes = slots * sizeof *plan;
	return GNN_OK;
}
