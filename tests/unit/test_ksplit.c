/*
** test_ksplit.c: how cuda's split-K GEMM divides K (gnn_gemm_ksplit,
** runtime/gnnrt.h; codegen/gemmcuda.c's scratch and parts).
**
** Over tile counts 1 .. 600, slab counts 1 .. 100, part limits and
** scratch sizes: at least one part, none above the limit, the slabs or
** what the scratch holds; one part from 264 tiles up; every part gets
** a slab (the kernel gives part p slabs p*c .. min((p+1)*c, slabs) - 1,
** c = ceil(slabs / parts)); and c is as short as the limits allow:
** ceil(slabs / n) for n the most parts they admit (two waves' worth of
** blocks, 264, at most).  Then for several tilings and shapes and every
** tile count that can split, its first and last row counts: the parts a
** launch takes (gemmparts) never write past the scratch gnncc allocates
** for them (gemmkscratch), also where the 16 MiB cap binds.
** Usage: test_ksplit [shared-dir] (the folder is not used)
*/
#include "rtcheck.h"
#include "../../codegen/codegen.h"

#include <stdint.h>

static int64_t
most(int64_t T, int64_t slabs, int64_t smax, int64_t mp, int64_t cap)
{
	int64_t n = (264 + T - 1) / T;

	if (n > smax)
		n = smax;
	if (n > slabs)
		n = slabs;
	while (n > 1 && (n - 1) * mp > cap)
		n--;
	return n < 1 ? 1 : n;
}

static void
test_parts(void)
{
	static const int64_t smaxes[] = {0, 1, 2, 4, 16, 64}, mps[] = {1, 16, 43328, 1 << 20},
	                     caps[] = {0, 1000, 538624, INT64_MAX};
	int bad = 0;

	for (int64_t T = 1; T <= 600; T++)
		for (int64_t slabs = 1; slabs <= 100; slabs++)
			for (size_t a = 0; a < sizeof smaxes / sizeof *smaxes; a++)
				for (size_t b = 0; b < sizeof mps / sizeof *mps; b++)
					for (size_t d = 0; d < sizeof caps / sizeof *caps; d++) {
						int64_t smax = smaxes[a], mp = mps[b], cap = caps[d];
						int64_t S = gnn_gemm_ksplit(T, slabs, smax, mp, cap), c = (slabs + S - 1) / S;
						int64_t n = most(T, slabs, smax, mp, cap);
						bool ok = S >= 1 && (S == 1 || (S <= smax && S <= slabs && (S - 1) * mp <= cap && T < 264)) &&
						          (S - 1) * c < slabs && S * c >= slabs && c == (slabs + n - 1) / n;
						if (!ok && bad++ < 5)
							printf("T=%lld slabs=%lld smax=%lld mp=%lld cap=%lld: %lld parts\n", (long long)T,
							       (long long)slabs, (long long)smax, (long long)mp, (long long)cap, (long long)S);
					}
	CHECK(bad == 0);
	/* Cora's GCN: 22 tiles, 89 full slabs of 16 */
	CHECK(gnn_gemm_ksplit(22, 89, 16, 2708 * 16, INT64_MAX) == 12);
	CHECK(gnn_gemm_ksplit(1323, 89, 16, 169343 * 16, INT64_MAX) == 1);
}

static void
test_scratch(void)
{
	static const int tiles[][3] = {{128, 16, 16}, {32, 8, 8}, {64, 64, 32}, {128, 128, 16}, {16, 8, 8}};
	static const int64_t shapes[][2] = {{1433, 16}, {1433, 256}, {203, 24}, {16, 7}, {4096, 4096}, {64, 1000}};
	int bad = 0;
	bool capped = false;

	for (size_t t = 0; t < sizeof tiles / sizeof *tiles; t++)
		for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
			Sched s;
			int64_t K = shapes[k][0], P = shapes[k][1], scratch;
			scheddefault(&s);
			s.bm = tiles[t][0];
			s.bn = tiles[t][1];
			s.bk = tiles[t][2];
			s.ksplit = 16;
			scratch = gemmkscratch(&s, K, P);
			capped |= scratch == 1 << 22;
			/* each tile count's first and last row count (its parts are
			 * the same, the last's output the largest) */
			for (int64_t q = 0; q <= 2 * 264; q++) {
				int64_t M = q % 2 ? q / 2 * s.bm + 1 : q / 2 * s.bm;
				/* a 16-bit output keeps all S parts in the scratch
				 * when it splits (unsplit, none) */
				for (int o16 = 0; o16 < 2; o16++) {
					int S = gemmparts(&s, M, K, P, o16);
					if (((S > 1 && (S - !o16) * M * P > scratch) || S < 1) && bad++ < 5)
						printf("bm=%d bn=%d bk=%d K=%lld P=%lld M=%lld o16=%d: %d parts, scratch %lld\n", s.bm,
						       s.bn, s.bk, (long long)K, (long long)P, (long long)M, o16, S, (long long)scratch);
				}
			}
		}
	CHECK(bad == 0);
	CHECK(capped);
}

int
main(int argc, char **argv)
{
	(void)argc, (void)argv;
	test_parts();
	test_scratch();
	return summary();
}
