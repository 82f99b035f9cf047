/*
** test_split.c: split plans (runtime/split.c), the bind-time half of the
** cuda target's edge-balanced walks.
**
** For degree sequences with hubs (one row holding 10% or 60% of the
** edges), empty rows, a single row, all rows empty and no rows, and for
** several minimum chunk lengths, the test rebuilds what the plan must
** say from the degrees alone: the chunk length (the balance rule, by
** brute force over every candidate), which rows are long, the chunks
** (each row's edges, in order, C at a time), and then runs the reduce
** levels the way the generated reduce kernel does -- windows in item
** order, a cut window's value to its carry slot, a whole row's to lr --
** on integer-valued sums and on maxima, and compares every long row with
** its sum and maximum computed directly.  Each level's windows are
** rebuilt by the prefix rule from its rows' item counts and must be the
** plan's; and the shape claims: windows of at most C items, a cut
** window holding one row, levels shrinking, scratch offsets
** consecutive, and the busiest row's work within twice the mean row's
** whenever the rule found such a C.  The row windows: exactly the
** prefix rule's (a row opens one where the work before it passes a
** multiple of h, or where it or the row before it is heavy), covering
** all rows; below 2^16 rows each within C + 1, from 2^16 rows each under
** h + C + 1, at most ceil(total / h) of them, and the busiest within
** 1.5x the mean plus one window.
** Usage: test_split [shared-dir] (the folder is not used)
*/
#include "rtcheck.h"
#include "../../runtime/split.h"

#include <math.h>
#include <stdint.h>


/* the balance rule, as split.c states it, by brute force */
static int
balanced(const int64_t *rp, int64_t t, int64_t c)
{
	double sum = 0;
	int64_t busiest = 0;

	for (int64_t r = 0; r < t; r++) {
		int64_t d = rp[r + 1] - rp[r], w = 1 + (d <= c ? d : 1);
		sum += (double)w;
		busiest = w > busiest ? w : busiest;
	}
	return (double)busiest * (double)t <= 2 * sum;
}

/* each edge's value: small integers, so that float sums are exact */
static float
val(int64_t e)
{
	return (float)(e % 7) + 1.0f;
}

/* one reduce level, as the generated kernel runs it (all columns alike) */
static void
level(const int64_t *plan, int l, int max, const float *s, float *carry, float *lr)
{
	const int64_t *h = plan + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;
	const int64_t *irow = plan + h[4], *wstart = plan + h[5], *wdest = plan + h[6];

	for (int64_t w = 0; w < h[1]; w++) {
		int64_t a = wstart[w], b = wstart[w + 1], d = wdest[w];
		CHECK(b - a >= 1 && b - a <= plan[GNN_SPLIT_C]);
		for (int64_t i = a; i < b;) {
			int64_t row = irow[i], k = i + 1;
			float acc = s[i];
			for (; k < b && irow[k] == row; k++)
				acc = max ? (s[k] > acc ? s[k] : acc) : acc + s[k];
			if (d >= 0) {
				CHECK(i == a && k == b);   /* a cut window holds one row */
				carry[d] = acc;
			} else
				lr[row] = acc;
			i = k;
		}
	}
}

/*
 * A level's windows by the rule, from its rows' item counts (irow's
 * runs): a row of more than C items is cut into windows of C, each a
 * carry, in order; a shorter row opens a window when it or the row
 * before it holds more than C / 2 items, or its first item's offset in
 * the level passes a multiple of C - C / 2.
 */
static void
levelrule(const int64_t *plan, int l)
{
	const int64_t *h = plan + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l, c = plan[GNN_SPLIT_C];
	const int64_t *irow = plan + h[4], *wstart = plan + h[5], *wdest = plan + h[6];
	int64_t nw = 0, carry = 0, prev = 0, kprev = 0, bad = 0;

	for (int64_t i = 0; i < h[0];) {
		int64_t k = 1;
		while (i + k < h[0] && irow[i + k] == irow[i])
			k++;
		if (k > c) {
			for (int64_t q = 0; q < k; q += c, nw++, carry++)
				bad += nw >= h[1] || wstart[nw] != i + q || wdest[nw] != carry;
		} else if (i == 0 || k > c / 2 || kprev > c / 2 || prev / (c - c / 2) != i / (c - c / 2)) {
			bad += nw >= h[1] || wstart[nw] != i || wdest[nw] != -1;
			nw++;
		}
		prev = i;
		kprev = k;
		i += k;
	}
	CHECK(!bad && nw == h[1] && wstart[nw] == h[0]);
	CHECK(l + 1 < plan[GNN_SPLIT_NLEV] ? (h + GNN_SPLIT_LEVELSLOTS)[0] == carry : carry == 0);
}

static void
check_plan(const int64_t *rp, int64_t t, int64_t c0)
{
	int64_t *plan = NULL, c, want, nlong = 0, n0 = 0, maxdeg = 0;
	size_t nb = 0;
	float *sum, *mx, *lrs, *lrm;

	if (!CHECK_ST(gnn_split_plan(rp, t, c0, &plan, &nb), GNN_OK))
		return;
	c = plan[GNN_SPLIT_C];
	for (int64_t r = 0; r < t; r++)
		maxdeg = rp[r + 1] - rp[r] > maxdeg ? rp[r + 1] - rp[r] : maxdeg;
	/* the rule: the largest of c0, 2c0, ... (up to the first at or
	 * above the longest row) that is balanced, else c0 */
	want = c0 < 2 ? 2 : c0;
	for (int64_t k = want; t > 0; k *= 2) {
		if (balanced(rp, t, k))
			want = k;
		if (k >= maxdeg)
			break;
	}
	CHECK(c == want);
	if (t > 0 && c > (c0 < 2 ? 2 : c0))
		CHECK(balanced(rp, t, c));
	CHECK(plan[GNN_SPLIT_T] == t);
	/* long rows and their chunks */
	{
		const int64_t *lix = plan + plan[GNN_SPLIT_LIX], *crow = plan + plan[GNN_SPLIT_CHUNKS];
		int64_t nc = plan[GNN_SPLIT_NCHUNK], k = 0;
		for (int64_t r = 0; r < t; r++) {
			int64_t d = rp[r + 1] - rp[r];
			if (d <= c) {
				CHECK(lix[r] == -1);
				continue;
			}
			CHECK(lix[r] == nlong);
			nlong++;
			for (int64_t e = rp[r]; e < rp[r + 1]; e += c, k++) {
				CHECK(k < nc && crow[k] == r && crow[nc + k] == e && crow[2 * nc + k] == (rp[r + 1] - e > c ? e + c : rp[r + 1]));
				n0++;
			}
		}
		CHECK(plan[GNN_SPLIT_NLONG] == nlong && nc == n0);
	}
	/* the row windows.  From 2^16 rows, row r opens one where the rows'
	 * work before it, P_r, passes a multiple of h = 2(C + 1): a window
	 * works less than h + C + 1, there are at most ceil(total / h), so
	 * the busiest is within 1.5x the mean plus one window.  Below, a row
	 * of more than tau = (C + 1) / 2 has one of its own (and the next row
	 * opens one too), the rest open one where P_r passes a multiple of
	 * h = C + 1 - tau: none works more than C + 1. */
	{
		const int64_t *rw = plan + plan[GNN_SPLIT_WINS];
		const int big = t >= GNN_SPLIT_BUNDLE;
		int64_t nw = plan[GNN_SPLIT_NWIN], tau = big ? c + 1 : (c + 1) / 2, h = big ? 2 * (c + 1) : c + 1 - tau;
		int64_t most = 0, p = 0, k = 0, bad = 0;
		double total = 0;
		for (int64_t r = 0, q = 0, wq = 0; r < t; r++) {
			int64_t w = 1 + (rp[r + 1] - rp[r] <= c ? rp[r + 1] - rp[r] : 1);
			if (r == 0 || w > tau || wq > tau || floor((double)p / (double)h) != floor((double)q / (double)h))
				bad += k >= nw || rw[k++] != r;
			q = p;
			wq = w;
			p += w;
		}
		CHECK(!bad && k == nw);
		CHECK(rw[0] == 0 && rw[nw] == t && (t == 0) == (nw == 0));
		if (big)
			CHECK(nw <= (p + h - 1) / h);
		for (int64_t w = 0; w < nw; w++) {
			int64_t work = 0;
			CHECK(rw[w] < rw[w + 1]);
			for (int64_t r = rw[w]; r < rw[w + 1]; r++)
				work += 1 + (rp[r + 1] - rp[r] <= c ? rp[r + 1] - rp[r] : 1);
			CHECK(big ? work < h + c + 1 : work <= c + 1);
			most = work > most ? work : most;
			total += (double)work;
		}
		if (big)
			CHECK((double)most * (double)nw <= 1.5 * total + (double)most);
	}
	/* the levels on sums and maxima */
	sum = calloc((size_t)(plan[GNN_SPLIT_NITEMS] + 1), sizeof *sum);
	mx = calloc((size_t)(plan[GNN_SPLIT_NITEMS] + 1), sizeof *mx);
	lrs = calloc((size_t)(nlong + 1), sizeof *lrs);
	lrm = calloc((size_t)(nlong + 1), sizeof *lrm);
	{
		const int64_t *crow = plan + plan[GNN_SPLIT_CHUNKS];
		int64_t nc = plan[GNN_SPLIT_NCHUNK], nlev = plan[GNN_SPLIT_NLEV], item0 = 0;
		for (int64_t k = 0; k < nc; k++) {
			float s = 0, m = 0;
			for (int64_t e = crow[nc + k]; e < crow[2 * nc + k]; e++) {
				s += val(e);
				m = e == crow[nc + k] || val(e) > m ? val(e) : m;
			}
			sum[k] = s;
			mx[k] = m;
		}
		CHECK(nlev >= (nlong > 0) && nlev <= GNN_SPLIT_MAXLEV);
		/* log_C of the longest row's chunks, plus one, bounds the levels */
		if (nlong)
			CHECK(nlev <= 1 + (int64_t)ceil(log((double)((maxdeg + c - 1) / c)) / log((double)c)) + 1);
		for (int l = 0; l < nlev; l++) {
			const int64_t *h = plan + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;
			CHECK(h[2] == item0 && h[3] == item0 + h[0]);
			CHECK(l == 0 ? h[0] == nc : h[0] < (h - GNN_SPLIT_LEVELSLOTS)[0]);
			levelrule(plan, l);
			level(plan, l, 0, sum + h[2], sum + h[3], lrs);
			level(plan, l, 1, mx + h[2], mx + h[3], lrm);
			item0 += h[0];
		}
		CHECK(item0 == plan[GNN_SPLIT_NITEMS]);
	}
	for (int64_t r = 0, j = 0; r < t; r++) {
		double s = 0;
		float m = 0;
		if (rp[r + 1] - rp[r] <= c)
			continue;
		for (int64_t e = rp[r]; e < rp[r + 1]; e++) {
			s += val(e);
			m = e == rp[r] || val(e) > m ? val(e) : m;
		}
		if (!CHECK((double)lrs[j] == s && lrm[j] == m))
			printf("  t=%lld c0=%lld row %lld: sum %g (want %g), max %g (want %g)\n", (long long)t, (long long)c0,
			       (long long)r, lrs[j], s, lrm[j], m);
		j++;
	}
	free(sum);
	free(mx);
	free(lrs);
	free(lrm);
	gnn_free(plan, nb);
}

/* rowptr of t rows from degrees deg[] */
static int64_t *
rowptr(const int64_t *deg, int64_t t)
{
	int64_t *rp = malloc((size_t)(t + 1) * sizeof *rp);

	rp[0] = 0;
	for (int64_t r = 0; r < t; r++)
		rp[r + 1] = rp[r] + deg[r];
	return rp;
}

static void
test_shapes(void)
{
	static const int64_t c0s[] = {0, 2, 3, 4, 8, 32};
	enum { T = 3000 };
	int64_t *deg = malloc(T * sizeof *deg), *rp;

	for (int shape = 0; shape < 7; shape++) {
		int64_t t = shape == 5 ? 1 : shape == 6 ? 0 : T, e = 0;
		for (int64_t r = 0; r < t; r++) {
			/* heavy tail: most rows short, a third empty */
			uint32_t u = rt_next();
			deg[r] = u % 3 == 0 ? 0 : (int64_t)(1.0 / (1e-3 + (double)(rt_next() % 1000) / 1000.0));
			if (shape == 3)
				deg[r] = 0;
			e += deg[r];
		}
		if (shape == 1 && t)
			deg[t / 2] += e / 9;          /* one row with 10% of the edges */
		if (shape == 2 && t)
			deg[7] += e * 3 / 2;          /* one with 60% */
		if (shape == 4)
			for (int64_t r = 0; r < t; r++)
				deg[r] = 5;               /* uniform: nothing is long at C >= 8 */
		if (shape == 5)
			deg[0] = 100000;               /* a single row */
		rp = rowptr(deg, t);
		for (size_t k = 0; k < sizeof c0s / sizeof c0s[0]; k++)
			check_plan(rp, t, c0s[k]);
		free(rp);
	}
	free(deg);
	/* rows enough for windows of 2(C + 1), with a hub of 10% */
	{
		int64_t t = GNN_SPLIT_BUNDLE + 1000, e = 0;
		deg = malloc((size_t)t * sizeof *deg);
		for (int64_t r = 0; r < t; r++) {
			deg[r] = rt_next() % 3 == 0 ? 0 : (int64_t)(1.0 / (1e-3 + (double)(rt_next() % 1000) / 1000.0));
			e += deg[r];
		}
		deg[t / 3] += e / 9;
		rp = rowptr(deg, t);
		check_plan(rp, t, 32);
		free(rp);
		free(deg);
	}
}

static const int64_t *oom_rp;

static gnn_status
oom_op(void *ctx)
{
	int64_t *plan;
	size_t nb;
	gnn_status s = gnn_split_plan(oom_rp, 3, 2, &plan, &nb);

	(void)ctx;
	if (s == GNN_OK)
		gnn_free(plan, nb);
	return s;
}

static void
test_errors(void)
{
	static const int64_t rp[] = {0, 10, 10, 30};
	int64_t *plan = (int64_t *)&plan;
	size_t nb = 1;

	CHECK_ST(gnn_split_plan(NULL, 3, 2, &plan, &nb), GNN_ERR_ARG);
	CHECK(plan == NULL && nb == 0);
	CHECK_ST(gnn_split_plan(rp, -1, 2, &plan, &nb), GNN_ERR_ARG);
	oom_rp = rp;
	CHECK(check_oom("gnn_split_plan", oom_op, NULL) >= 2);
}

int
main(int argc, char **argv)
{
	(void)argc, (void)argv;
	test_shapes();
	test_errors();
	return summary();
}
