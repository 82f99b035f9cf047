/*
** optim.cu: training's optimizer update as one CUDA kernel (the
** gnn_devoptim table of device.h): every tensor of a parameter group in
** one launch, a grid-stride loop over their concatenated elements, each
** thread finding its tensor by a binary search of the table's offsets.
** The update itself is optim.h's, the cpu device's too, with every
** operation rounded on its own, so the bits are the cpu's.
**
** Built as devbind.cu is: by nvcc into libgnnrt_cuda.a
** (gnn_devoptim_cuda), and as C++ against the emulated device's
** cuda_runtime.h into libgnnemu.a (GNN_DEVOPTIM_SYMBOL set to
** gnn_devoptim_cuda_emu).
*/
#include <stdint.h>

#include <cuda_runtime.h>

#include "device.h"
#include "optim.h"

#ifndef GNN_EMU
#define GNN_DKERNEL(k) static __global__ void k
#define GNN_LAUNCH(k, grid, block, shmem, stream) k<<<grid, block, shmem, stream>>>
#endif
#ifndef GNN_DEVOPTIM_SYMBOL
#define GNN_DEVOPTIM_SYMBOL gnn_devoptim_cuda
#endif

enum { NT = 256, PER = 4 };   /* threads a block; elements a thread, roughly */

/* a is by value: kernel parameters, no copy of it to the device */
GNN_DKERNEL(opt_step)(const gnn_optseg *tab, int n, int64_t total, gnn_optargs a)
{
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total;
	     t += (int64_t)blockDim.x * gridDim.x) {
		const gnn_optseg *s = &tab[gnn_optim_seg(tab, n, t)];
		gnn_optim_elem(&a, s, t - s->off);
	}
}

static int
opt_launch(const gnn_optseg *tab, int n, int64_t total, const gnn_optargs *a, void *s)
{
	int64_t b = (total + NT * PER - 1) / (NT * PER);

	if (total <= 0)
		return 0;
	/* recorded while profiling (gnnrt.h: the train phase's program) */
	GNN_PROF(GNN_CUDA_SELF, s, NULL, "opt_step", "-", b > (1 << 16) ? 1 << 16 : b, NT, 0)
		GNN_LAUNCH(opt_step, (unsigned)(b > (1 << 16) ? 1 << 16 : b), NT, 0, (cudaStream_t)s)(tab, n, total, *a);
	return (int)cudaGetLastError();
}

static int
opt_zero(void *p, size_t n, void *s)
{
	return n ? (int)cudaMemsetAsync(p, 0, n, (cudaStream_t)s) : 0;
}

extern "C" const gnn_devoptim GNN_DEVOPTIM_SYMBOL = {opt_launch, opt_zero};
