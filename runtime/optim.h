/*
** optim.h: one element's optimizer update, shared by the cpu device's
** loop (device_cpu.c) and the CUDA kernel (optim.cu, also built for the
** emulated device), so that every device computes the same bits.
**
** The arithmetic is torch.optim's single-tensor path in float32, op for
** op in its order (SGD's add/mul_/add_, Adam's lerp_, mul_/addcmul_,
** sqrt/div/add_, addcdiv_); optim.c turns the step's Python-float
** scalars (bias corrections, step size) into the floats of gnn_optargs
** in double, as Python does before torch casts them.  Each operation is
** rounded on its own: nvcc would fuse a*b + c into an FMA, which the
** host does not, so device code uses the explicitly rounded intrinsics.
**
** Header-only, for C and CUDA.
*/
#ifndef GNNRT_OPTIM_H
#define GNNRT_OPTIM_H

#include <math.h>
#include <stdint.h>

#include "gnnrt.h"

/* device code only under nvcc: the rounding intrinsics are device functions */
#if defined(__CUDACC__)
#define GNN_OPTIM_FN static __device__ __forceinline__
#else
#define GNN_OPTIM_FN static inline
#endif

/* a tensor of the table (non-empty ones only): its elements are the
 * flat indices [off, off + numel) of the launch; m and v its state, or
 * NULL where the optimizer keeps none */
typedef struct gnn_optseg {
	int64_t off;
	float *p;
	const float *g;
	float *m, *v;
} gnn_optseg;

/* one step's constants, as torch casts them to float */
typedef struct gnn_optargs {
	int kind;            /* GNN_OPTIM_* */
	int wd;              /* weight_decay != 0 (torch's test) */
	int momentum;        /* SGD: momentum != 0 */
	int first;           /* SGD: the momentum buffers start now (buf = g) */
	int nesterov;
	int small;           /* Adam: lerp's weight 1 - beta1 is below 0.5 */
	float decay;         /* SGD, Adam: weight_decay; AdamW: 1 - lr * weight_decay */
	float mom, damp1;    /* SGD: momentum, 1 - dampening */
	float neglr;         /* SGD: -lr */
	float w1, w1c;       /* Adam: 1 - beta1, and 1 - that in float */
	float b2, w2;        /* beta2, 1 - beta2 */
	float negstep;       /* -lr / (1 - beta1^t) */
	float bc2sqrt;       /* (1 - beta2^t) ** 0.5 */
	float eps;
} gnn_optargs;

#if defined(__CUDACC__)
#define GNN_FADD(a, b) __fadd_rn(a, b)
#define GNN_FSUB(a, b) __fsub_rn(a, b)
#define GNN_FMUL(a, b) __fmul_rn(a, b)
#define GNN_FDIV(a, b) __fdiv_rn(a, b)
#define GNN_FSQRT(a) __fsqrt_rn(a)
#else
/* functions, not expressions, so that no compiler contracts across them */
GNN_OPTIM_FN float gnn_fadd_(float a, float b) { return a + b; }
GNN_OPTIM_FN float gnn_fsub_(float a, float b) { return a - b; }
GNN_OPTIM_FN float gnn_fmul_(float a, float b) { return a * b; }
GNN_OPTIM_FN float gnn_fdiv_(float a, float b) { return a / b; }
#define GNN_FADD(a, b) gnn_fadd_(a, b)
#define GNN_FSUB(a, b) gnn_fsub_(a, b)
#define GNN_FMUL(a, b) gnn_fmul_(a, b)
#define GNN_FDIV(a, b) gnn_fdiv_(a, b)
#define GNN_FSQRT(a) sqrtf(a)
#endif

/* element k of segment s */
GNN_OPTIM_FN void
gnn_optim_elem(const gnn_optargs *a, const gnn_optseg *s, int64_t k)
{
	float x = s->p[k], g = s->g[k], e, d, v;

	if (a->kind == GNN_OPTIM_SGD) {
		if (a->wd)          /* grad.add(param, alpha=wd) */
			g = GNN_FADD(g, GNN_FMUL(a->decay, x));
		if (a->momentum) {  /* buf = g, or buf.mul_(momentum).add_(g, alpha=1 - dampening) */
			e = a->first ? g : GNN_FADD(GNN_FMUL(s->m[k], a->mom), GNN_FMUL(a->damp1, g));
			s->m[k] = e;
			g = a->nesterov ? GNN_FADD(g, GNN_FMUL(a->mom, e)) : e;
		}
		s->p[k] = GNN_FADD(x, GNN_FMUL(a->neglr, g));   /* param.add_(g, alpha=-lr) */
		return;
	}
	if (a->wd) {
		if (a->kind == GNN_OPTIM_ADAMW)   /* param.mul_(1 - lr * wd) */
			x = GNN_FMUL(x, a->decay);
		else
			g = GNN_FADD(g, GNN_FMUL(a->decay, x));
	}
	/* exp_avg.lerp_(g, 1 - beta1), ATen's two-sided formula */
	e = s->m[k];
	d = GNN_FSUB(g, e);
	e = a->small ? GNN_FADD(e, GNN_FMUL(a->w1, d)) : GNN_FSUB(g, GNN_FMUL(d, a->w1c));
	s->m[k] = e;
	/* exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2) */
	v = GNN_FADD(GNN_FMUL(s->v[k], a->b2), GNN_FMUL(GNN_FMUL(a->w2, g), g));
	s->v[k] = v;
	/* denom = (sqrt(v) / bc2sqrt).add_(eps); param.addcdiv_(m, denom, value=-step) */
	d = GNN_FADD(GNN_FDIV(GNN_FSQRT(v), a->bc2sqrt), a->eps);
	s->p[k] = GNN_FADD(x, GNN_FDIV(GNN_FMUL(a->negstep, e), d));
}

/* the segment of tab (n entries, by ascending off) holding flat index t */
GNN_OPTIM_FN int
gnn_optim_seg(const gnn_optseg *tab, int n, int64_t t)
{
	int lo = 0, hi = n - 1;

	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (tab[mid].off <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

#endif
