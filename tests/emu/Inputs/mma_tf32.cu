// The tensor cores' TF32 step (mma.sync m16n8k8 .tf32, FP32 accumulate)
// on the emulated device, checked element by element against a float64
// product of the TF32-rounded inputs computed here.  Each of 3 warps
// multiplies its own A (16 x 8) by B (8 x 8) and adds C, loading and
// storing its fragments as PTX lays them out.  -DMISSING: lane 7 returns
// before the collective, which the emulator must report.
#include <math.h>

#include "common.h"

enum { W = 3 };

GNN_DKERNEL(mma_k1)(const float *a, const float *b, const float *c, float *d)
{
	const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
	const float *aw = a + w * 128, *bw = b + w * 64, *cw = c + w * 128;
	float *dw = d + w * 128;
	// A row-major 16 x 8, B row-major 8 x 8 (k, n), C and D 16 x 8
	const uint32_t af[4] = {gnnemu_cvt_rna_tf32(aw[g * 8 + t]), gnnemu_cvt_rna_tf32(aw[(g + 8) * 8 + t]),
				gnnemu_cvt_rna_tf32(aw[g * 8 + t + 4]), gnnemu_cvt_rna_tf32(aw[(g + 8) * 8 + t + 4])};
	const uint32_t bf[2] = {gnnemu_cvt_rna_tf32(bw[t * 8 + g]), gnnemu_cvt_rna_tf32(bw[(t + 4) * 8 + g])};
	float acc[4] = {cw[g * 8 + 2 * t], cw[g * 8 + 2 * t + 1], cw[(g + 8) * 8 + 2 * t], cw[(g + 8) * 8 + 2 * t + 1]};

#ifdef MISSING
	if (lane == 7)
		return;
#endif
	gnnemu_mma_m16n8k8_tf32(acc, af, bf);
	dw[g * 8 + 2 * t] = acc[0];
	dw[g * 8 + 2 * t + 1] = acc[1];
	dw[(g + 8) * 8 + 2 * t] = acc[2];
	dw[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

// TF32 as its definition says, written differently from the emulator's
// bit arithmetic: 11 significant bits, ties away from zero
static double
tf32(float x)
{
	int e;
	double m = frexp((double)x, &e);   // |m| in [0.5, 1)

	if (x == 0 || !isfinite(x))
		return x;
	return ldexp(round(ldexp(m, 11)), e - 11);
}

int
main(void)
{
	static float ha[W * 128], hb[W * 64], hc[W * 128], hd[W * 128];
	float *a, *b, *c, *d;
	double worst = 0, moved = 0;
	unsigned s = 12345;
	int i, k, n, w;

	for (i = 0; i < W * 128; i++) {
		s = s * 1103515245u + 12345u;
		ha[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * (i % 7 == 0 ? 1000.0f : 2.0f);
		s = s * 1103515245u + 12345u;
		hc[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
	}
	for (i = 0; i < W * 64; i++) {
		s = s * 1103515245u + 12345u;
		hb[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
	}
	// an exact tie (1 + 2^-11 is halfway between TF32 neighbours) goes
	// away from zero, both signs
	ha[0] = 1.0f + 1.0f / 2048.0f;
	ha[1] = -ha[0];
	CHECK(cudaMalloc(&a, sizeof ha));
	CHECK(cudaMalloc(&b, sizeof hb));
	CHECK(cudaMalloc(&c, sizeof hc));
	CHECK(cudaMalloc(&d, sizeof hd));
	CHECK(cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(c, hc, sizeof hc, cudaMemcpyHostToDevice));
	GNN_LAUNCH(mma_k1, 1, W * 32, 0, 0)(a, b, c, d);
	CHECK(cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost));
	for (w = 0; w < W; w++)
		for (i = 0; i < 16; i++)
			for (n = 0; n < 8; n++) {
				double r = hc[w * 128 + i * 8 + n], x = r, mag = fabs(r), got = hd[w * 128 + i * 8 + n];
				for (k = 0; k < 8; k++) {
					r += tf32(ha[w * 128 + i * 8 + k]) * tf32(hb[w * 64 + k * 8 + n]);
					x += (double)ha[w * 128 + i * 8 + k] * hb[w * 64 + k * 8 + n];
					mag += fabs(tf32(ha[w * 128 + i * 8 + k]) * tf32(hb[w * 64 + k * 8 + n]));
				}
				// one rounding to FP32 of the exact sum
				if (fabs(got - r) / mag > worst)
					worst = fabs(got - r) / mag;
				if (fabs(got - x) / mag > moved)
					moved = fabs(got - x) / mag;
			}
	printf("largest error against the TF32 float64 product: %s (%.2g of the sum of magnitudes)\n",
	       worst <= 1.2e-7 ? "within an FP32 rounding" : "TOO LARGE", worst);
	printf("the unrounded product is %s\n", moved > 1e-5 ? "further off (inputs were rounded)" : "as close: NOT ROUNDED");
	printf("cvt.rna.tf32: %08x %08x %08x %08x %08x %08x\n", gnnemu_cvt_rna_tf32(ha[0]),
	       gnnemu_cvt_rna_tf32(ha[1]), gnnemu_cvt_rna_tf32(1.0f + 1.0f / 4096.0f), gnnemu_cvt_rna_tf32(3.4028235e38f),
	       gnnemu_cvt_rna_tf32(INFINITY), gnnemu_cvt_rna_tf32(NAN));
	return 0;
}
