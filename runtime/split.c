/*
** split.c: split plans, which balance a row kernel's edge walks by
** edges rather than rows (the cuda target's `split` schedule).
**
** A row kernel gives each target row to one group of lanes, which walks
** the row's in-edges; one node holding millions of edges makes that
** group the whole kernel's critical path.  A split plan cuts every row
** longer than C edges ("long" rows) into chunks of C edges, walked by a
** chunk kernel into partial results, and combines the partials of each
** long row in a fixed tree: reduce levels whose windows take at most C
** items each.  The row kernel then reads one combined value for a long
** row instead of walking it.  Every combine happens in a fixed order,
** so results are bitwise reproducible.
**
** C is chosen here, from the bound graph's degrees: the largest of
** c0, 2c0, 4c0, ... for which the busiest row's work is within twice
** the mean row's (a row costs 1, plus 1 per edge walked, and a long row
** 1 for the value it reads), or c0 if none is.
**
** Reduce levels: level 0's items are the chunks' partials, in long-row
** order.  A long row with more than C items at a level is cut into
** windows of C items (of its own), each leaving one item, a "carry", to
** the next level; rows with at most C items are packed whole into
** windows of at most C items (next fit), and their combined value is
** final (it goes to the row's place in lr).  Each level shrinks a cut
** row's items C-fold, so there are at most log_C(max degree) levels.
**
** Row windows: the row kernel itself takes consecutive rows packed
** next fit into windows of at most K work (the row work above), a
** window to a group of lanes, so a warp's work no longer follows one
** row's degree: every window but the last holds more than K - (C + 1),
** and no row costs more than C + 1.  K is 2(C + 1) on graphs of
** BundleRows rows and more, so a window's work is within 2x of any
** other's; on smaller graphs, which a GPU holds in one wave of warps and
** where the longest warp is the kernel's time, K = C + 1: packing never
** makes a window costlier than the costliest row could be.
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

/* rows from which windows take 2(C + 1) work: about the threads an H100
 * keeps resident (132 SMs x 2048) */
enum { BundleRows = 1 << 18 };

/* the work of row r under chunk length c: 1, plus its edges, or 1 when long */
static int64_t
rowwork(int64_t deg, int64_t c)
{
	return 1 + (deg <= c ? deg : 1);
}

int64_t
gnn_split_chunk(const int64_t *rowptr, int64_t t, int64_t c0)
{
	int64_t maxdeg = 0, best, c;

	if (c0 < 2)
		c0 = 2;
	for (int64_t r = 0; r < t; r++)
		if (rowptr[r + 1] - rowptr[r] > maxdeg)
			maxdeg = rowptr[r + 1] - rowptr[r];
	best = c0;
	for (c = c0; t > 0; c *= 2) {
		int64_t busiest = 0;
		double sum = 0;
		for (int64_t r = 0; r < t; r++) {
			int64_t w = rowwork(rowptr[r + 1] - rowptr[r], c);
			sum += (double)w;
			if (w > busiest)
				busiest = w;
		}
		if ((double)busiest * (double)t <= 2 * sum)
			best = c;
		if (c >= maxdeg || c > INT64_MAX / 2)
			break;
	}
	return best;
}

/* The row windows, walked twice: to count (rwin NULL) and to fill. */
static int64_t
windows(const int64_t *rowptr, int64_t t, int64_t c, int64_t *rwin)
{
	int64_t cap = t >= BundleRows ? 2 * (c + 1) : c + 1, nwin = 0, fill = 0;

	for (int64_t r = 0; r < t; r++) {
		int64_t w = rowwork(rowptr[r + 1] - rowptr[r], c);
		if (fill && fill + w > cap) {
			nwin++;
			fill = 0;
		}
		if (!fill && rwin)
			rwin[nwin] = r;
		fill += w;
	}
	if (fill)
		nwin++;
	if (rwin)
		rwin[nwin] = t;
	return nwin;
}

/*
 * The reduce levels, walked twice: to count (plan NULL) and to fill.
 * cnt[j] holds long row j's items at the current level (0: done).
 * Returns the slots the levels' arrays take; sets the level headers.
 */
static size_t
levels(int64_t *plan, int64_t *cnt, int64_t nlong, int64_t c, int64_t n0, size_t at, int *nlev)
{
	int64_t n = n0, item0 = 0;
	int l;

	for (l = 0; n > 0; l++) {
		int64_t nwin = 0, ncarry = 0, fill = 0, i = 0;
		int64_t *hd = plan ? plan + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l : NULL;
		int64_t *irow = NULL, *wstart = NULL, *wdest = NULL;

		if (l >= GNN_SPLIT_MAXLEV)
			abort();   /* C >= 2 halves a cut row's items per level: unreachable */
		/* windows: count first, then place the arrays */
		for (int64_t j = 0; j < nlong; j++) {
			if (!cnt[j])
				continue;
			if (cnt[j] > c) {
				if (fill)
					nwin++, fill = 0;
				nwin += (cnt[j] + c - 1) / c;
			} else {
				if (fill + cnt[j] > c)
					nwin++, fill = 0;
				fill += cnt[j];
			}
		}
		if (fill)
			nwin++;
		if (hd) {
			irow = plan + at;
			wstart = irow + n;
			wdest = wstart + nwin + 1;
			hd[0] = n;
			hd[1] = nwin;
			hd[2] = item0;
			hd[3] = item0 + n;
			hd[4] = (int64_t)at;
			hd[5] = (int64_t)(at + (size_t)n);
			hd[6] = (int64_t)(at + (size_t)n + (size_t)nwin + 1);
		}
		at += (size_t)n + 2 * (size_t)nwin + 1;
		/* fill the windows and the next level's counts */
		nwin = 0;
		fill = 0;
		for (int64_t j = 0; j < nlong; j++) {
			int64_t k = cnt[j];
			if (!k)
				continue;
			if (k > c) {
				if (fill) {
					nwin++;
					fill = 0;
				}
				for (int64_t q = 0; q < k; q += c) {
					if (hd) {
						wstart[nwin] = i;
						wdest[nwin] = ncarry;
					}
					nwin++;
					ncarry++;
					for (int64_t e = q; e < k && e < q + c; e++, i++)
						if (hd)
							irow[i] = j;
				}
				cnt[j] = (k + c - 1) / c;
			} else {
				if (fill + k > c) {
					nwin++;
					fill = 0;
				}
				if (!fill && hd) {
					wstart[nwin] = i;
					wdest[nwin] = -1;
				}
				fill += k;
				for (int64_t e = 0; e < k; e++, i++)
					if (hd)
						irow[i] = j;
				cnt[j] = 0;
			}
		}
		if (fill)
			nwin++;
		if (hd)
			wstart[nwin] = i;
		item0 += n;
		n = ncarry;
	}
	*nlev = l;
	return at;
}

gnn_status
gnn_split_plan(const int64_t *rowptr, int64_t t, int64_t c0, int64_t **out, size_t *nbytes)
{
	int64_t c, nlong = 0, n0 = 0, nwin, *cnt = NULL, *plan;
	size_t slots, chunks, ncnt, wins;
	int nlev = 0;

	*out = NULL;
	*nbytes = 0;
	if (t < 0 || !rowptr)
		return gnn_fail(GNN_ERR_ARG, "gnn_split_plan: bad segment plan");
	c = gnn_split_chunk(rowptr, t, c0);
	for (int64_t r = 0; r < t; r++)
		if (rowptr[r + 1] - rowptr[r] > c) {
			nlong++;
			n0 += (rowptr[r + 1] - rowptr[r] + c - 1) / c;
		}
	ncnt = (size_t)(nlong > 0 ? nlong : 1);
	if (!(cnt = (int64_t *)gnn_malloc(ncnt * sizeof *cnt)))
		return gnn_fail(GNN_ERR_MEM, "gnn_split_plan: out of memory");
	/* count: header, lix, chunks, levels */
	chunks = GNN_SPLIT_HEADER + (size_t)t;
	slots = chunks + 3 * (size_t)n0;
	for (int64_t r = 0, j = 0; r < t; r++)
		if (rowptr[r + 1] - rowptr[r] > c)
			cnt[j++] = (rowptr[r + 1] - rowptr[r] + c - 1) / c;
	slots = levels(NULL, cnt, nlong, c, n0, slots, &nlev);
	nwin = windows(rowptr, t, c, NULL);
	wins = slots;
	slots += (size_t)nwin + 1;
	if (!(plan = (int64_t *)gnn_malloc(slots * sizeof *plan))) {
		gnn_free(cnt, ncnt * sizeof *cnt);
		return gnn_fail(GNN_ERR_MEM, "gnn_split_plan: out of memory");
	}
	memset(plan, 0, GNN_SPLIT_HEADER * sizeof *plan);
	plan[GNN_SPLIT_C] = c;
	plan[GNN_SPLIT_T] = t;
	plan[GNN_SPLIT_NLONG] = nlong;
	plan[GNN_SPLIT_NCHUNK] = n0;
	plan[GNN_SPLIT_LIX] = GNN_SPLIT_HEADER;
	plan[GNN_SPLIT_CHUNKS] = (int64_t)chunks;
	plan[GNN_SPLIT_NWIN] = nwin;
	plan[GNN_SPLIT_WINS] = (int64_t)wins;
	(void)windows(rowptr, t, c, plan + wins);
	{
		int64_t *lix = plan + GNN_SPLIT_HEADER, *crow = plan + chunks, *clo = crow + n0, *chi = clo + n0, k = 0, j = 0;
		for (int64_t r = 0; r < t; r++) {
			int64_t a = rowptr[r], b = rowptr[r + 1];
			if (b - a <= c) {
				lix[r] = -1;
				continue;
			}
			cnt[j] = (b - a + c - 1) / c;
			lix[r] = j++;
			for (int64_t e = a; e < b; e += c, k++) {
				crow[k] = r;
				clo[k] = e;
				chi[k] = b - e > c ? e + c : b;
			}
		}
	}
	(void)levels(plan, cnt, nlong, c, n0, chunks + 3 * (size_t)n0, &nlev);
	plan[GNN_SPLIT_NLEV] = nlev;
	{
		int64_t items = 0;
		for (int l = 0; l < nlev; l++)
			items += plan[GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l];
		plan[GNN_SPLIT_NITEMS] = items;
	}
	gnn_free(cnt, ncnt * sizeof *cnt);
	*out = plan;
	*nbytes = slots * sizeof *plan;
	return GNN_OK;
}
