/*
** test_gemm.c: gnn_sgemm_* (runtime/gemm.c) and gnn_dropout_rows and
** gnn_dropout_span (runtime/dropout.c) on every instruction-set path this CPU has.
**
** The path is chosen once per process, so the test runs itself again for
** each of generic, avx2 and avx512 that the CPU supports, with
** GNN_CPU_ISA set (and once with a bogus value, which must be ignored);
** each child checks that its path is the one asked for and prints it.
** A child compares against a double-precision reference (tolerance K
** units in the last place of sum |a||b|), checks the bitwise contract
** (every kc, every row split, sparse == dense on finite B, GNN_SGEMM_ACC)
** and keeps canaries around every buffer and in C's row padding; the
** dropout must give philox.h's scalar mask bit for bit (test_dropout),
** the weight gradient's product gnn_sgemm's (test_wgrad), and the 16-bit
** forms (test_hgemm) gnn_sgemm's on the decoded A with C then encoded,
** word for word, every row range and both forms.
** Usage: test_gemm [shared-dir] (the folder is not used)
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>
#include <sys/wait.h>

#include "../../runtime/philox.h"
#include "../../runtime/gnnhalf.h"

#define GUARD 64           /* canary floats on each side of a buffer */
#define CANARY 12345.678f


/* uniform in [-1, 1) in steps of 2^-23 */
static float
unif(void)
{
	return (float)((double)(rt_next() >> 8) / 8388608.0 - 1.0);
}

/* n floats between canaries */
static float *
galloc(int64_t n)
{
	float *p = malloc((size_t)(n + 2 * GUARD) * sizeof(float));

	for (int64_t i = 0; i < n + 2 * GUARD; i++)
		p[i] = CANARY;
	return p + GUARD;
}

static int
gintact(const float *p, int64_t n)
{
	for (int64_t i = 0; i < GUARD; i++)
		if (p[-1 - i] != CANARY || p[n + i] != CANARY)
			return 0;
	return 1;
}

static void
gfree(float *p)
{
	free(p - GUARD);
}

/* One product's operands. A is M x K in rows of lda (padding holds
** canaries too), B is K x N at B[k*sk + n*sn], packed into Bp. */
typedef struct Prob {
	int64_t M, K, N, lda, ldc, sk, sn, nb;   /* nb: floats at B */
	float *A, *B, *Bp;
	double *ref, *bound;   /* M x N: the exact-ish product and sum |a||b| */
} Prob;

/* density: the share of A's entries that are nonzero (some zeros are -0) */
static void
mkprob(Prob *p, int64_t M, int64_t K, int64_t N, double density, int wlayout)
{
	p->M = M, p->K = K, p->N = N;
	p->lda = K + (int64_t)(rt_next() % 4);
	p->ldc = N + (int64_t)(rt_next() % 3);
	/* W layout (B = W^T, W N x K) with an odd row stride, or row major */
	p->sk = wlayout ? 1 : N;
	p->sn = wlayout ? K + 3 : 1;
	p->A = galloc(M * p->lda);
	p->nb = K * N * (wlayout ? 2 : 1) + 3 * N;
	p->B = galloc(p->nb);
	for (int64_t i = 0; i < M; i++)
		for (int64_t k = 0; k < K; k++) {
			double u = (double)rt_next() / 4294967296.0;
			p->A[i * p->lda + k] = u < density ? unif() : (rt_next() & 1) ? 0.0f : -0.0f;
		}
	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++)
			p->B[k * p->sk + n * p->sn] = unif();
	p->Bp = galloc(gnn_sgemm_packed_floats(K, N));
	gnn_sgemm_pack(p->Bp, p->B, K, N, p->sk, p->sn);
	CHECK(gintact(p->Bp, gnn_sgemm_packed_floats(K, N)));
	p->ref = calloc((size_t)(M * N + 1), sizeof(double));
	p->bound = calloc((size_t)(M * N + 1), sizeof(double));
	for (int64_t i = 0; i < M; i++)
		for (int64_t n = 0; n < N; n++)
			for (int64_t k = 0; k < K; k++) {
				double a = p->A[i * p->lda + k], b = p->B[k * p->sk + n * p->sn];
				p->ref[i * N + n] += a * b;
				p->bound[i * N + n] += fabs(a * b);
			}
}

static void
freeprob(Prob *p)
{
	CHECK(gintact(p->A, p->M * p->lda));
	CHECK(gintact(p->B, p->nb));
	CHECK(gintact(p->Bp, gnn_sgemm_packed_floats(p->K, p->N)));
	gfree(p->A), gfree(p->B), gfree(p->Bp);
	free(p->ref), free(p->bound);
}

/* a C for p with canaries around it and in its row padding; init: the
** values C starts with (for GNN_SGEMM_ACC), NULL for canaries */
static float *
mkc(const Prob *p, const float *init)
{
	float *C = galloc(p->M * p->ldc);

	for (int64_t i = 0; init && i < p->M; i++)
		memcpy(C + i * p->ldc, init + i * p->N, (size_t)p->N * sizeof(float));
	return C;
}

/* canaries intact, padding included */
static int
cintact(const Prob *p, const float *C)
{
	for (int64_t i = 0; i < p->M; i++)
		for (int64_t n = p->N; n < p->ldc; n++)
			if (C[i * p->ldc + n] != CANARY)
				return 0;
	return gintact(C, p->M * p->ldc);
}

static int
sameC(const Prob *p, const float *X, const float *Y)
{
	for (int64_t i = 0; i < p->M; i++)
		if (memcmp(X + i * p->ldc, Y + i * p->ldc, (size_t)p->N * sizeof(float)))
			return 0;
	return 1;
}

/* C against the reference (plus init with GNN_SGEMM_ACC); reports the
** first bad element */
static int
nearref(const Prob *p, const float *C, const float *init, const char *what, int64_t kc)
{
	const double u = 1.0 / 16777216.0;

	for (int64_t i = 0; i < p->M; i++)
		for (int64_t n = 0; n < p->N; n++) {
			double want = p->ref[i * p->N + n], got = C[i * p->ldc + n];
			double tol = (double)(p->K + 2) * u * (p->bound[i * p->N + n] + (init ? fabs(init[i * p->N + n]) : 0));
			if (init)
				want += init[i * p->N + n];
			if (!(fabs(got - want) <= tol)) {
				printf("  %s M %lld K %lld N %lld kc %lld: C[%lld][%lld] = %.9g, want %.9g (tol %.3g)\n",
					what, (long long)p->M, (long long)p->K, (long long)p->N, (long long)kc,
					(long long)i, (long long)n, got, want, tol);
				return 0;
			}
		}
	return 1;
}

/* rows [0, M) in pieces of random sizes */
static void
rowsplit(const Prob *p, float *C, int64_t kc, int flags)
{
	for (int64_t m0 = 0, m1; m0 < p->M; m0 = m1) {
		m1 = m0 + 1 + (int64_t)(rt_next() % 20);
		if (m1 > p->M)
			m1 = p->M;
		gnn_sgemm_rows(m0, m1, p->K, p->N, p->A, p->lda, p->Bp, C, p->ldc, kc, flags);
	}
}

/*
** gnn_sgemm and gnn_sgemm_sparse, which read B where it is (row-major,
** rows ldb apart; what generated code calls), give the packed forms' bits
** C0.  B is copied into a block of exactly K rows of ldb floats from
** malloc, so that a read past its last element (its last row's columns
** past N) is an error under AddressSanitizer.
*/
/* gnn_sgemm_bias and gnn_sgemm_sparse_bias: the product's bits, then one
** float add of the bias per element, as a kernel of its own adds it (row
** ranges of random sizes, and all rows at once) */
static void
biased(const Prob *p, const float *C0, const float *in, const float *B, int64_t ldb, int flags, int64_t kc)
{
	float *bias = malloc((size_t)(p->N + 1) * sizeof(float)), *want = mkc(p, NULL), *C;

	for (int64_t n = 0; n < p->N; n++)
		bias[n] = unif();
	for (int64_t i = 0; i < p->M; i++)
		for (int64_t n = 0; n < p->N; n++)
			want[i * p->ldc + n] = C0[i * p->ldc + n] + bias[n];
	for (int form = 0; form < 3; form++) {
		C = mkc(p, in);
		for (int64_t m0 = 0, m1; m0 < p->M; m0 = m1) {
			m1 = form == 1 ? p->M : m0 + 1 + (int64_t)(rt_next() % 300);
			m1 = m1 < p->M ? m1 : p->M;
			if (form == 2)
				gnn_sgemm_sparse_bias(m0, m1, p->K, p->N, p->A, p->lda, B, ldb, bias, C, p->ldc, flags);
			else
				gnn_sgemm_bias(m0, m1, p->K, p->N, p->A, p->lda, B, ldb, bias, C, p->ldc, kc, flags);
		}
		if (!CHECK(sameC(p, C, want)))
			printf("  %s with a bias differs from the product plus the bias: M %lld K %lld N %lld kc %lld\n",
				form == 2 ? "sparse" : "dense", (long long)p->M, (long long)p->K, (long long)p->N, (long long)kc);
		CHECK(cintact(p, C));
		gfree(C);
	}
	gfree(want);
	free(bias);
}

static void
inplace(const Prob *p, const float *C0, const float *in, int flags, int64_t kc)
{
	int64_t ldb = p->N + (int64_t)(rt_next() % 3);
	float *B = malloc((size_t)(p->K * ldb + 1) * sizeof(float)), *C;

	for (int64_t k = 0; k < p->K; k++)
		for (int64_t n = 0; n < ldb; n++)
			B[k * ldb + n] = n < p->N ? p->B[k * p->sk + n * p->sn] : NAN;
	C = mkc(p, in);
	for (int64_t m0 = 0, m1; m0 < p->M; m0 = m1) {
		m1 = m0 + 1 + (int64_t)(rt_next() % 40);
		gnn_sgemm(m0, m1 < p->M ? m1 : p->M, p->K, p->N, p->A, p->lda, B, ldb, C, p->ldc, kc, flags);
	}
	if (!CHECK(sameC(p, C, C0)))
		printf("  in place differs from packed: M %lld K %lld N %lld ldb %lld kc %lld\n", (long long)p->M,
			(long long)p->K, (long long)p->N, (long long)ldb, (long long)kc);
	CHECK(cintact(p, C));
	gfree(C);
	/* all rows at once: from 64 rows gnn_sgemm packs a B of up to 64 Ki
	 * floats itself (500 x 128 and 128 x 128 among the tall shapes) */
	C = mkc(p, in);
	gnn_sgemm(0, p->M, p->K, p->N, p->A, p->lda, B, ldb, C, p->ldc, kc, flags);
	if (!CHECK(sameC(p, C, C0)))
		printf("  in place, one range, differs from packed: M %lld K %lld N %lld ldb %lld kc %lld\n",
			(long long)p->M, (long long)p->K, (long long)p->N, (long long)ldb, (long long)kc);
	CHECK(cintact(p, C));
	gfree(C);
	C = mkc(p, in);
	gnn_sgemm_sparse(0, p->M, p->K, p->N, p->A, p->lda, B, ldb, C, p->ldc, flags);
	if (!CHECK(sameC(p, C, C0)))
		printf("  sparse in place differs from packed: M %lld K %lld N %lld ldb %lld\n", (long long)p->M,
			(long long)p->K, (long long)p->N, (long long)ldb);
	CHECK(cintact(p, C));
	gfree(C);
	biased(p, C0, in, B, ldb, flags, kc);
	free(B);
}

/*
** One shape: the reference and every kc, bitwise equal to each other and
** to a split run; the sparse form; and the same with GNN_SGEMM_ACC.
*/
static void
shape(int64_t M, int64_t K, int64_t N, double density, int wlayout, const int64_t *kcs, int nkc)
{
	Prob p;
	float *C0, *init = malloc((size_t)(M * N + 1) * sizeof(float));

	mkprob(&p, M, K, N, density, wlayout);
	for (int64_t i = 0; i < M * N; i++)
		init[i] = unif();
	for (int acc = 0; acc < 2; acc++) {
		int flags = acc ? GNN_SGEMM_ACC : 0;
		const float *in = acc ? init : NULL;

		C0 = mkc(&p, in);
		gnn_sgemm_rows(0, M, K, N, p.A, p.lda, p.Bp, C0, p.ldc, 0, flags);
		CHECK(nearref(&p, C0, in, acc ? "acc" : "dense", 0));
		CHECK(cintact(&p, C0));
		for (int j = 0; j < nkc; j++) {
			float *C = mkc(&p, in);
			gnn_sgemm_rows(0, M, K, N, p.A, p.lda, p.Bp, C, p.ldc, kcs[j], flags);
			if (!CHECK(sameC(&p, C, C0)))
				printf("  kc %lld differs from kc 0: M %lld K %lld N %lld\n",
					(long long)kcs[j], (long long)M, (long long)K, (long long)N);
			CHECK(cintact(&p, C));
			gfree(C);
		}
		float *C = mkc(&p, in);
		rowsplit(&p, C, kcs[rt_next() % (unsigned)nkc], flags);
		if (!CHECK(sameC(&p, C, C0)))
			printf("  row split differs: M %lld K %lld N %lld\n", (long long)M, (long long)K, (long long)N);
		CHECK(cintact(&p, C));
		gfree(C);
		/* the sparse form, in pieces too */
		C = mkc(&p, in);
		for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
			m1 = m0 + 1 + (int64_t)(rt_next() % 9);
			gnn_sgemm_rows_sparse(m0, m1 < M ? m1 : M, K, N, p.A, p.lda, p.Bp, C, p.ldc, flags);
		}
		if (!CHECK(sameC(&p, C, C0)))
			printf("  sparse differs from dense: M %lld K %lld N %lld density %g acc %d\n",
				(long long)M, (long long)K, (long long)N, density, acc);
		CHECK(cintact(&p, C));
		gfree(C);
		inplace(&p, C0, in, flags, kcs[rt_next() % (unsigned)nkc]);
		gfree(C0);
	}
	free(init);
	freeprob(&p);
}

/* gnn_dropout_rows against the scalar expression of philox.h, bit for
** bit: ranges that start and end off the vector width and off a block,
** counters (element and block) that carry into their high word, runs
** of +0.0 (skipped) and of -0.0, NaN and infinities (not skipped), in
** place, and canaries around out */
static void
test_dropout(void)
{
	static const struct { int64_t t0, n; uint64_t seed, step; uint32_t stream; float p; } cs[] = {
		{0, 1000, 0, 0, 0, 0.5f},
		{3, 37, 7, 11, 2, 0.6f},
		{((int64_t)1 << 32) - 21, 53, 0x123456789abcdefull, 5, 1, 0.1f},
		/* a block counter (t / 4) carrying into its high word inside a
		 * vector run, from a t0 that is not a block's first */
		{((int64_t)1 << 34) - 99, 300, 99, 3, 4, 0.3f},
		{5, 300, 42, 0x1ffffffffull, 0x7fffffff, 0.0f},
		{17, 0, 1, 1, 1, 0.5f},
	};
	int bad = 0;

	for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
		int64_t n = cs[c].n, t0 = cs[c].t0;
		float scale = 1.0f / (1.0f - cs[c].p);
		float *xb = galloc(n), *ob = galloc(n), *x = xb - t0, *o = ob - t0;

		for (int64_t i = 0; i < n; i++) {
			uint64_t r = rt_next() % 16;
			/* mostly zeros in runs, as bag-of-words rows are */
			xb[i] = (i / 24) % 3 == 0 ? 0.0f : r == 0 ? -0.0f : r == 1 ? NAN : r == 2 ? -INFINITY : unif();
		}
		gnn_dropout_rows(t0, t0 + n, cs[c].seed, cs[c].step, cs[c].stream, cs[c].p, scale, x, o);
		for (int64_t t = t0; t < t0 + n; t++) {
			float want = gnn_dropout_keep(cs[c].seed, cs[c].step, cs[c].stream, (uint64_t)t, cs[c].p) ?
				x[t] * scale : 0.0f;
			if (memcmp(&want, &o[t], sizeof want) != 0 && bad++ < 5)
				printf("  dropout case %zu element %lld: got %a, want %a\n", c, (long long)t, o[t], want);
		}
		CHECK(gintact(ob, n));
		/* gnn_dropout_span: the pointers at element t0 (a 16-bit
		 * kernel's chunk buffers), the same bits */
		{
			float *sb = galloc(n);

			gnn_dropout_span(t0, t0 + n, cs[c].seed, cs[c].step, cs[c].stream, cs[c].p, scale, xb, sb);
			CHECK(memcmp(sb, ob, (size_t)n * sizeof *sb) == 0);
			CHECK(gintact(sb, n));
			gfree(sb);
		}
		/* in place */
		gnn_dropout_rows(t0, t0 + n, cs[c].seed, cs[c].step, cs[c].stream, cs[c].p, scale, x, x);
		CHECK(memcmp(xb, ob, (size_t)n * sizeof *xb) == 0);
		gfree(xb);
		gfree(ob);
	}
	CHECK(bad == 0);
}

/* gnn_sgemm_wgrad: C = A @ B reducing over K, on random column splits,
** sparse (B's zeros skipped, -0.0 among them) and dense, both giving
** gnn_sgemm's bits and near a double reference; M past the sparse
** form's limit (4096) takes the dense one; canaries around C. The same
** for gnn_sgemm_wgradt, A given transposed (K past its k blocks: 512
** rows, 187 for P = 700) */
static void
test_wgrad(void)
{
	static const int64_t Ms[] = {1, 7, 16, 33, 256, 4100}, Ks[] = {1, 50, 300, 1100}, Ps[] = {1, 16, 17, 200, 700};
	/* without GNN_TEST_LARGE, the largest M and K stay with the plain tree */
	size_t nm = sizeof Ms / sizeof *Ms - !rt_large(), nk = sizeof Ks / sizeof *Ks - !rt_large();
	int bad = 0;

	for (size_t a = 0; a < nm; a++)
		for (size_t b = 0; b < nk; b++)
			for (size_t c = 0; c < sizeof Ps / sizeof *Ps; c++) {
				int64_t M = Ms[a], K = Ks[b], P = Ps[c], lda = K + 1, ldc = P + 2;
				if (M * K * P > (P > 256 ? 2000000 : 10000000))
					continue;   /* the reference's time, not news */
				float *A = galloc(M * lda), *B = galloc(K * P), *C0 = galloc(M * ldc), *C = galloc(M * ldc);

				for (int64_t i = 0; i < M * lda; i++)
					A[i] = unif();
				for (int64_t i = 0; i < K * P; i++) {
					uint64_t r = rt_next() % 100;
					B[i] = r < 3 ? unif() : r < 5 ? -0.0f : 0.0f;
				}
				/* A^T as a training step has it (dY, K x M), rows M + 3 apart */
				int64_t ldg = M + 3;
				float *G = galloc(K * ldg);
				for (int64_t k = 0; k < K; k++)
					for (int64_t m = 0; m < M; m++)
						G[k * ldg + m] = A[m * lda + k];
				gnn_sgemm(0, M, K, P, A, lda, B, P, C0, ldc, 0, 0);
				for (int form = 0; form < 4; form++) {
					int sparse = form & 1, transposed = form >> 1;
					for (int64_t p0 = 0, p1; p0 < P; p0 = p1) {
						p1 = p0 + 1 + (int64_t)(rt_next() % 40);
						if (p1 > P)
							p1 = P;
						if (transposed)
							gnn_sgemm_wgradt(p0, p1, M, K, G, ldg, B, P, C, ldc, sparse);
						else
							gnn_sgemm_wgrad(p0, p1, M, K, A, lda, B, P, C, ldc, sparse);
					}
					for (int64_t m = 0; m < M; m++)
						for (int64_t p = 0; p < P; p++) {
							double want = 0, bound = 0;
							for (int64_t k = 0; k < K; k++) {
								want += (double)A[m * lda + k] * B[k * P + p];
								bound += fabs((double)A[m * lda + k] * B[k * P + p]);
							}
							if ((memcmp(&C[m * ldc + p], &C0[m * ldc + p], sizeof(float)) ||
							     !(fabs(C[m * ldc + p] - want) <= (K + 2) * bound / 16777216.0)) && bad++ < 5)
								printf("  wgrad%s M %lld K %lld P %lld sparse %d: C[%lld][%lld] = %a, gemm %a, want %.9g\n",
								       transposed ? "t" : "", (long long)M, (long long)K, (long long)P, sparse, (long long)m,
								       (long long)p, C[m * ldc + p], C0[m * ldc + p], want);
						}
					for (int64_t m = 0; m < M; m++)
						for (int64_t p = P; p < ldc; p++)
							bad += C[m * ldc + p] != CANARY;
					CHECK(gintact(C, M * ldc));
				}
				gfree(A), gfree(B), gfree(C0), gfree(C), gfree(G);
			}
	CHECK(bad == 0);
}

/* gnn_hgemm: A and C in bf16 or f16 words (or float), row ranges that
** cut its 32-row blocks anywhere; the reference decodes A with the
** words' meaning (a shift for bf16, NumPy-checked gnn_ld_f16 for half),
** runs gnn_sgemm over all rows at once and encodes C */
static void
test_hgemm(void)
{
	static const int64_t Ms[] = {1, 31, 33, 100}, Ks[] = {1, 17, 300}, Ns[] = {1, 7, 16, 40};
	static const int dts[] = {GNN_F32, GNN_BF16, GNN_F16};
	int bad = 0;

	for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
		for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
			for (size_t c = 0; c < sizeof Ns / sizeof *Ns; c++)
				for (int ad = 0; ad < 3; ad++)
					for (int cd = 0; cd < 3; cd++) {
						int64_t M = Ms[a], K = Ks[b], N = Ns[c], lda = K + 1, ldc = N + 2;
						int adt = dts[ad], cdt = dts[cd];
						uint16_t *Ah = malloc((size_t)(M * lda) * 2), *Ch = malloc((size_t)(M * ldc) * 2);
						float *Af = malloc((size_t)(M * lda) * 4), *B = malloc((size_t)(K * N) * 4);
						float *C0 = malloc((size_t)(M * ldc) * 4), *Cf = malloc((size_t)(M * ldc) * 4);
						for (int64_t i = 0; i < M * lda; i++) {
							uint64_t r = rt_next() % 100;
							float x = r < 50 ? 0.0f : unif() * 4;
							Ah[i] = adt == GNN_BF16 ? gnn_st_bf16(x) : gnn_st_f16(x);
							Af[i] = adt == GNN_F32 ? x : adt == GNN_BF16 ? gnn_ld_bf16(Ah[i]) : gnn_ld_f16(Ah[i]);
						}
						for (int64_t i = 0; i < K * N; i++)
							B[i] = unif();
						for (int64_t i = 0; i < M * ldc; i++)
							Ch[i] = 0xbeef, Cf[i] = CANARY;
						gnn_sgemm(0, M, K, N, Af, lda, B, N, C0, ldc, 0, 0);
						for (int sp = 0; sp < 2; sp++)
							for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
								m1 = m0 + 1 + (int64_t)(rt_next() % 45);
								if (m1 > M)
									m1 = M;
								gnn_hgemm(m0, m1, K, N, adt == GNN_F32 ? (const void *)Af : Ah, adt, lda, B, N,
								          cdt == GNN_F32 ? (void *)Cf : Ch, cdt, ldc, 0, sp);
								for (int64_t i = m0; i < m1; i++)
									for (int64_t n = 0; n < ldc; n++) {
										float want = C0[i * ldc + n];
										int ok = n >= N ? (cdt == GNN_F32 ? Cf[i * ldc + n] == CANARY : Ch[i * ldc + n] == 0xbeef) :
										         cdt == GNN_F32 ? !memcmp(&Cf[i * ldc + n], &want, 4) :
										         cdt == GNN_BF16 ? Ch[i * ldc + n] == gnn_st_bf16(want) :
										         Ch[i * ldc + n] == gnn_st_f16(want);
										if (!ok && bad++ < 5)
											printf("  hgemm M %lld K %lld N %lld A %d C %d sp %d: C[%lld][%lld] wrong\n",
											       (long long)M, (long long)K, (long long)N, adt, cdt, sp,
											       (long long)i, (long long)n);
									}
							}
						free(Ah), free(Ch), free(Af), free(B), free(C0), free(Cf);
					}
	CHECK(bad == 0);
}

static void
test_small(void)
{
	static const int64_t Ms[] = {0, 1, 2, 5, 7, 12, 13, 17, 33};
	static const int64_t Ks[] = {0, 1, 2, 3, 5, 8, 16, 17, 31, 64, 70};
	static const int64_t Ns[] = {0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 40, 47, 48, 63, 64, 65, 70};
	int n = 0;

	for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
		for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
			for (size_t c = 0; c < sizeof Ns / sizeof *Ns; c++) {
				int64_t K = Ks[b];
				int64_t kcs[] = {1, 2, 3, 7, 16, K + 1, 1000};
				/* dense, sparse and all-zero A, both B layouts */
				double density = n % 3 == 0 ? 1.0 : n % 3 == 1 ? 0.15 : 0.0;
				shape(Ms[a], K, Ns[c], density, n++ & 1, kcs, 7);
			}
}

/* the shapes of the standard models, on a few hundred rows */
static void
test_tall(void)
{
	static const int64_t KN[][2] = {
		{1433, 16}, {3703, 16}, {1433, 64}, {500, 128}, {128, 128},
		{128, 40}, {256, 256}, {16, 7}, {32, 32}, {300, 47},
	};

	for (size_t s = 0; s < sizeof KN / sizeof *KN; s++) {
		int64_t K = KN[s][0], N = KN[s][1];
		int64_t kcs[] = {1, 100, 256, K - 1, K + 5};
		/* bag-of-words-like A for the wide-K shapes; fewer rows under
		 * GNN_TEST_LARGE=0, the same K and N tails */
		shape((rt_large() ? 200 : 40) + (int64_t)s, K, N, K > 1000 ? 0.02 : 1.0, (int)s & 1, kcs, 5);
	}
}

static void
test_misc(void)
{
	float A[6 * 40];

	CHECK(gnn_sgemm_packed_floats(0, 5) == 0 && gnn_sgemm_packed_floats(3, 0) == 0);
	CHECK(gnn_sgemm_packed_floats(3, 16) == 48 && gnn_sgemm_packed_floats(3, 17) == 96);
	CHECK(gnn_sgemm_packed_floats(2, 1) == 32);
	/* K == 0: zeros, or C as it was with GNN_SGEMM_ACC */
	float C[6] = {1, 2, 3, 4, 5, 6};
	gnn_sgemm_rows(0, 2, 0, 3, A, 0, NULL, C, 3, 0, GNN_SGEMM_ACC);
	CHECK(C[0] == 1 && C[5] == 6);
	gnn_sgemm_rows_sparse(0, 2, 0, 3, A, 0, NULL, C, 3, GNN_SGEMM_ACC);
	CHECK(C[0] == 1 && C[5] == 6);
	gnn_sgemm_rows(0, 1, 0, 3, A, 0, NULL, C, 3, 0, 0);
	CHECK(C[0] == 0 && C[2] == 0 && C[3] == 4);
	gnn_sgemm_rows_sparse(1, 2, 0, 3, A, 0, NULL, C, 3, 0);
	CHECK(C[3] == 0 && C[5] == 0);
	/* the sparse test: zeros pay, a dense A does not, nothing does not */
	for (int i = 0; i < 6 * 40; i++)
		A[i] = 0.0f;
	CHECK(gnn_sgemm_sparse_pays(A, 6, 40, 40) == 1);
	A[5] = 1.0f;
	CHECK(gnn_sgemm_sparse_pays(A, 6, 40, 40) == 1);
	for (int i = 0; i < 6 * 40; i++)
		A[i] = (float)i + 1.0f;
	CHECK(gnn_sgemm_sparse_pays(A, 6, 40, 40) == 0);
	CHECK(gnn_sgemm_sparse_pays(A, 0, 40, 40) == 0);
	CHECK(gnn_sgemm_sparse_pays(A, 6, 0, 40) == 0);
}

/* the paths, lowest first, and whether this CPU has each */
static const char *const paths[] = {"generic", "avx2", "avx512"};

static int
has(int l)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (l == 2)
		return __builtin_cpu_supports("avx512f");
	if (l == 1)
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
	return l == 0;
}

static const char *
best(void)
{
	return has(2) ? paths[2] : has(1) ? paths[1] : paths[0];
}

/* runs this program with GNN_CPU_ISA=isa, expecting path want; full:
** run all the tests there, else only check the path */
static void
child(char **argv, const char *isa, const char *want, int full)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setenv("GNN_CPU_ISA", isa, 1);
		setenv("GNN_TEST_GEMM_WANT", want, 1);
		if (!full)
			setenv("GNN_TEST_GEMM_PATHONLY", "1", 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (!CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0))
		printf("  the %s path failed\n", isa);
}

int
main(int argc, char **argv)
{
	const char *want = getenv("GNN_TEST_GEMM_WANT");

	(void)argc;
	if (!want) {
		for (int l = 0; l < 3; l++)
			if (has(l))
				child(argv, paths[l], paths[l], 1);
			else
				printf("path %s: not on this CPU, skipped\n", paths[l]);
		child(argv, "sse9", best(), 0);   /* unknown: ignored */
		return summary();
	}
	printf("path %s (GNN_CPU_ISA=%s)\n", gnn_sgemm_isa(), getenv("GNN_CPU_ISA"));
	CHECK(strcmp(gnn_sgemm_isa(), want) == 0);
	if (getenv("GNN_TEST_GEMM_PATHONLY"))
		return summary();
	test_misc();
	test_dropout();
	test_wgrad();
	test_hgemm();
	test_small();
	test_tall();
	return summary();
}
