// The emulated device's work counters (gnnemu_work, GNNEMU_WORK): a
// launch of 3 blocks of 48 threads (a full warp and a half one each)
// where thread t of block b counts (b * 48 + t) % 37 units, in two calls;
// a launch that counts nothing; a 2-D grid whose busiest warp is in
// block (1,1).  The expected lines are worked out in work.test.
#include <cuda_runtime.h>
#include <stdio.h>

GNN_DKERNEL(count)(int unused)
{
	const long n = (long)((blockIdx.x * 48 + threadIdx.x) % 37);
	(void)unused;
	gnnemu_work(n / 2);
	gnnemu_work(n - n / 2);
}

GNN_DKERNEL(quiet)(int *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

GNN_DKERNEL(grid2)(int unused)
{
	(void)unused;
	if (blockIdx.x == 1 && blockIdx.y == 1 && threadIdx.x == 40)
		gnnemu_work(5);
	else
		gnnemu_work(1);
}

int main(void)
{
	int *x;

	GNN_LAUNCH(count, 3, 48, 0, 0)(0);
	cudaMalloc(&x, 64 * sizeof *x);
	GNN_LAUNCH(quiet, 2, 32, 0, 0)(x);
	GNN_LAUNCH(grid2, dim3(2, 2), 64, 0, 0)(0);
	cudaDeviceSynchronize();
	cudaFree(x);
	printf("done\n");
	return 0;
}
