// The tensor cores' bfloat16 step (mma.sync m16n8k16 .bf16, FP32
// accumulate) on the emulated device, checked element by element against
// a float64 product computed here.  Each of 3 warps multiplies its own A
// (16 x 16) by B (16 x 8) and adds C, packing its fragments two words to
// a register as PTX lays them out (the lower column or row in the low
// half).  The words are rounded here, to nearest even, from frexp: not
// the runtime's bit arithmetic.  -DMISSING: lane 7 returns before the
// collective, which the emulator must report.
#include <math.h>

#include "common.h"

enum { W = 3 };

// x rounded to bfloat16 (8 significant bits, ties to even); finite x only
static double
bf16(float x)
{
	int e;
	double m = frexp((double)x, &e), r;   // |m| in [0.5, 1)

	if (x == 0)
		return x;
	r = ldexp(m, 8);
	r = nearbyint(r);   // the default rounding mode: ties to even
	return ldexp(r, e - 8);
}

static uint16_t
word(float x)
{
	float r = (float)bf16(x);
	uint32_t u;

	memcpy(&u, &r, sizeof u);
	return (uint16_t)(u >> 16);
}

static uint32_t
pack(uint16_t lo, uint16_t hi)
{
	return (uint32_t)lo | (uint32_t)hi << 16;
}

GNN_DKERNEL(mma_k1)(const uint16_t *a, const uint16_t *b, const float *c, float *d)
{
	const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
	const uint16_t *aw = a + w * 256, *bw = b + w * 128;
	const float *cw = c + w * 128;
	float *dw = d + w * 128;
	// A row-major 16 x 16, B row-major 16 x 8 (k, n), C and D 16 x 8
	const uint32_t af[4] = {pack(aw[g * 16 + 2 * t], aw[g * 16 + 2 * t + 1]),
				pack(aw[(g + 8) * 16 + 2 * t], aw[(g + 8) * 16 + 2 * t + 1]),
				pack(aw[g * 16 + 2 * t + 8], aw[g * 16 + 2 * t + 9]),
				pack(aw[(g + 8) * 16 + 2 * t + 8], aw[(g + 8) * 16 + 2 * t + 9])};
	const uint32_t bf[2] = {pack(bw[2 * t * 8 + g], bw[(2 * t + 1) * 8 + g]),
				pack(bw[(2 * t + 8) * 8 + g], bw[(2 * t + 9) * 8 + g])};
	float acc[4] = {cw[g * 8 + 2 * t], cw[g * 8 + 2 * t + 1], cw[(g + 8) * 8 + 2 * t], cw[(g + 8) * 8 + 2 * t + 1]};

#ifdef MISSING
	if (lane == 7)
		return;
#endif
	gnnemu_mma_m16n8k16_bf16(acc, af, bf);
	dw[g * 8 + 2 * t] = acc[0];
	dw[g * 8 + 2 * t + 1] = acc[1];
	dw[(g + 8) * 8 + 2 * t] = acc[2];
	dw[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

int
main(void)
{
	static float ha[W * 256], hb[W * 128], hc[W * 128], hd[W * 128];
	static uint16_t wa[W * 256], wb[W * 128];
	uint16_t *a, *b;
	float *c, *d;
	double worst = 0;
	unsigned s = 12345;
	int i, k, n, w;

	for (i = 0; i < W * 256; i++) {
		s = s * 1103515245u + 12345u;
		ha[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * (i % 7 == 0 ? 1000.0f : 2.0f);
		wa[i] = word(ha[i]);
	}
	for (i = 0; i < W * 128; i++) {
		s = s * 1103515245u + 12345u;
		hb[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
		wb[i] = word(hb[i]);
		s = s * 1103515245u + 12345u;
		hc[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
	}
	CHECK(cudaMalloc(&a, sizeof wa));
	CHECK(cudaMalloc(&b, sizeof wb));
	CHECK(cudaMalloc(&c, sizeof hc));
	CHECK(cudaMalloc(&d, sizeof hd));
	CHECK(cudaMemcpy(a, wa, sizeof wa, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, wb, sizeof wb, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(c, hc, sizeof hc, cudaMemcpyHostToDevice));
	GNN_LAUNCH(mma_k1, 1, W * 32, 0, 0)(a, b, c, d);
	CHECK(cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost));
	for (w = 0; w < W; w++)
		for (i = 0; i < 16; i++)
			for (n = 0; n < 8; n++) {
				double r = hc[w * 128 + i * 8 + n], mag = fabs(r), got = hd[w * 128 + i * 8 + n];
				for (k = 0; k < 16; k++) {
					double p = bf16(ha[w * 256 + i * 16 + k]) * bf16(hb[w * 128 + k * 8 + n]);
					r += p;
					mag += fabs(p);
				}
				if (fabs(got - r) / mag > worst)
					worst = fabs(got - r) / mag;
			}
	printf("largest error against the bfloat16 float64 product: %s (%.2g of the sum of magnitudes)\n",
	       worst <= 1.2e-7 ? "within an FP32 rounding" : "TOO LARGE", worst);
	return 0;
}
