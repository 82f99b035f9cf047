/*
 * Vendor libraries as candidates (gnncc --vendor): a cuda dense
 * transform under the schedule vendor=1 is a call of cuBLAS's SGEMM
 * instead of our tiled GEMM.  Opt in only: without --vendor nothing here
 * is emitted, so the object references neither library; with it the
 * prelude includes the libraries' headers and the object needs
 * -lcublas (-lcusparse for --vendor=cusparse), which gnncc's
 * --print-link-flags --vendor=... prints.  On the emulated device the
 * same source compiles against runtime/emu's headers and links
 * libgnnemu_vendor.a instead.
 *
 * The handles live with the model instance: the program's vendor hook
 * (NAME_vendor, gnn_program.vendor) makes them at create, binds them to
 * the model's stream and sets the math mode from --gpu-math (fp32:
 * CUBLAS_PEDANTIC_MATH, no tensor cores and no reduced-precision
 * reductions; tf32: CUBLAS_TF32_TENSOR_OP_MATH), gives cuBLAS a workspace
 * of its own (cublasSetWorkspace: no allocation inside forward's graph
 * capture), and frees all of it at destroy.  A call's status is kept on
 * the instance; forward returns the first failure after its launches, as
 * GNN_ERR_CUDA naming the call and the status, and drops the forward
 * graph it may have captured without the call, so that no later forward
 * replays a graph missing it.
 *
 * Row-major O[M, P] = A[M, K] @ B[K, P] is the column-major product
 * O^T = B^T A^T: cublasSgemm(N, N, P, M, K, B, ld P, A, ld K, O, ld P).
 */
#include "emit.h"

/* cuBLAS's workspace, made once at create: what cuBLAS documents for
 * Hopper (32 MiB); SGEMM without it allocates from a pool of its own */
enum { BlasWorkspace = 32 << 20 };

void
emitvendorprelude(E *e)
{
	out(e, "#include <stdlib.h>\n");
	if (e->o->vendor & VendorCublas)
		out(e, "#include <cublas_v2.h>\n");
	if (e->o->vendor & VendorCusparse)
		out(e, "#include <cusparse.h>\n");
}

void
emitvendorgemm(E *e, int i, Args *a, Str *call)
{
	const Ins *in = &e->fn->ins[i];
	long long K, P;
	const char *O, *A, *B, *M, *Oname, *opnd[EpilogueMax];
	bool bias[EpilogueMax];
	int k0 = a->n, nepi;

	if (!e->cuda || !(e->o->vendor & VendorCublas) || e->p->phase[in->to] != PhaseForward || ty(e, in->to).dtype != DF32)
		die("codegen: a cuBLAS GEMM outside cuda's forward or without --vendor=cublas");
	K = dimconstval(ty(e, in->arg[1]).dim[0]);
	P = dimconstval(ty(e, in->arg[1]).dim[1]);
	/* the operands as the launch would pass them: no kernel, a call */
	Oname = ptrarg(e, a, NULL, gemmstored(e, i), true, true);
	ptrarg(e, a, NULL, in->arg[0], false, true);
	ptrarg(e, a, NULL, in->arg[1], false, true);
	if (a->n != k0 + 3)
		die("codegen: a cuBLAS GEMM whose operands share storage");
	O = a->val[k0];
	A = a->val[k0 + 1];
	B = a->val[k0 + 2];
	nepi = epioperands(e, i, a, opnd, bias);
	M = cdim(e, ty(e, in->arg[0]).dim[0]);
	e->vendorused |= VendorCublas;

	out(e, "\n/* %%%s = matmul", irname(e, in->to));
	if (in->loc.file)
		out(e, " (%s:%d)", in->loc.file, in->loc.line);
	out(e, ": [M, %lld] @ [%lld, %lld], cuBLAS's SGEMM (%s) */\n", K, K, P,
	    e->o->gpumath == GpuMathTF32 ? "TF32 tensor cores" : "pedantic FP32");
	/* M past cuBLAS's int: NOT_SUPPORTED, which forward reports */
	sput(call, "{\n\tconst float one_ = 1.0f, zero_ = 0.0f;\n\tconst int64_t M_ = %s;\n\n", M);
	sput(call, "\tGNN_MPROF(m->prog->dev, %s, 0, 0, 0)\n", launchlit(e, KNAME));
	sput(call, "\t\t%s_vcheck(m, M_ > 2147483647 ? (int)CUBLAS_STATUS_NOT_SUPPORTED : (int)cublasSgemm(%s_blas(m), "
	           "CUBLAS_OP_N, CUBLAS_OP_N, %lld, (int)M_, %lld, &one_, %s, %lld, %s, %lld, &zero_, %s, %lld), \"cublasSgemm\", \"%%%s\");\n\t}",
	     e->nm, e->nm, P, K, B, P, A, K, O, P, irname(e, in->to));
	if (!nepi)
		return;
	/* the epilogue (passes/gemmepilogue.c): a kernel of its own over
	 * the float32 output cuBLAS wrote, each element read and rewritten
	 * by one thread */
	out(e, "\n/* the epilogue of %%%s's cuBLAS GEMM, in place */\n", irname(e, in->to));
	out(e, "GNN_DKERNEL(" KNAME "_epi)(GNN_DRANGE int64_t T_, %s%s)\n", a->decl[k0], epiargs(e, a, opnd, nepi, false));
	blockopen(e->w);
	wopen(e->w, "GNN_DLOOP(t_, T_)");
	out(e, "float v_ = %s[t_];\n\n", Oname);
	epiemit(e, i, opnd, bias, "v_", "t_", pf(e, "t_ %% %lld", P));
	out(e, "%s[t_] = v_;\n", Oname);
	wclose(e->w, "");
	wclose(e->w, "");
	sput(call, "\n\tGNN_DLAUNCH(" KNAME "_epi, %s, %s * %lld, %s%s);", launchlit(e, KNAME "_epi"), M, P, O,
	     epiargs(e, a, opnd, nepi, true));
}

void
emitvendorhook(E *e)
{
	const char *nm = e->nm;

	out(e, "\n/* the vendor libraries' state: handles made at create on the model's stream (codegen/vendor.c) */\n");
	out(e, "typedef struct %s_vendor_t {\n\tcublasHandle_t blas;\n\tvoid *ws;\n\tint err;\n\tconst char *call, *what;\n} %s_vendor_t;\n",
	    nm, nm);
	out(e, "\nstatic cublasHandle_t\n%s_blas(gnn_instance *m)\n{\n\treturn ((%s_vendor_t *)m->vendor)->blas;\n}\n", nm, nm);
	/* the first failure of a forward, reported after its launches */
	out(e, "\nstatic void\n%s_vcheck(gnn_instance *m, int st, const char *call, const char *what)\n{\n", nm);
	out(e, "\t%s_vendor_t *v = (%s_vendor_t *)m->vendor;\n\n", nm, nm);
	out(e, "\tif (st != 0 && !v->err) {\n\t\tv->err = st;\n\t\tv->call = call;\n\t\tv->what = what;\n\t}\n}\n");
	out(e, "\nstatic gnn_status\n%s_vend(gnn_instance *m, gnn_status s)\n{\n", nm);
	out(e, "\t%s_vendor_t *v = (%s_vendor_t *)m->vendor;\n\tconst int st = v->err;\n\n", nm, nm);
	/* a graph captured around the failed call lacks it: never replayed */
	out(e, "\tv->err = 0;\n\tif (st)\n\t\tgnn_prog_graph_drop(m);\n\tif (s != GNN_OK || !st)\n\t\treturn s;\n");
	out(e, "\treturn gnn_error(GNN_ERR_CUDA, \"%%s_forward: %%s for %%s failed: %%s\", m->prog->name, v->call, v->what,\n"
	       "\t                 cublasGetStatusName((cublasStatus_t)st));\n}\n");
	out(e, "\nstatic gnn_status\n%s_vendor(gnn_instance *m, int open)\n{\n", nm);
	out(e, "\t%s_vendor_t *v = (%s_vendor_t *)m->vendor;\n\tint st;\n\n", nm, nm);
	out(e, "\tif (!open) {\n\t\tif (v && v->blas)\n\t\t\tcublasDestroy(v->blas);\n\t\tif (v && v->ws)\n\t\t\tcudaFree(v->ws);\n"
	       "\t\tfree(v);\n\t\tm->vendor = NULL;\n\t\treturn GNN_OK;\n\t}\n");
	out(e, "\tif (!(v = (%s_vendor_t *)calloc(1, sizeof *v)))\n\t\treturn gnn_error(GNN_ERR_MEM, \"%%s_create: out of memory\", m->prog->name);\n", nm);
	out(e, "\tm->vendor = v;\n");
	out(e, "\tif ((st = (int)cublasCreate(&v->blas)) != 0) {\n\t\tv->blas = NULL;\n"
	       "\t\treturn gnn_error(GNN_ERR_CUDA, \"%%s_create: cublasCreate failed: %%s\", m->prog->name, cublasGetStatusName((cublasStatus_t)st));\n\t}\n");
	out(e, "\tif (cudaMalloc(&v->ws, %d) != cudaSuccess) {\n\t\tv->ws = NULL;\n\t\t(void)cudaGetLastError();\n"
	       "\t\treturn gnn_error(GNN_ERR_MEM, \"%%s_create: out of device memory for cuBLAS's workspace (%d bytes)\", m->prog->name);\n\t}\n",
	    (int)BlasWorkspace, (int)BlasWorkspace);
	out(e, "\tif ((st = (int)cublasSetStream(v->blas, (cudaStream_t)m->stream)) != 0 ||\n"
	       "\t    (st = (int)cublasSetWorkspace(v->blas, v->ws, %d)) != 0 ||\n"
	       "\t    (st = (int)cublasSetMathMode(v->blas, %s)) != 0)\n", (int)BlasWorkspace,
	    e->o->gpumath == GpuMathTF32 ? "CUBLAS_TF32_TENSOR_OP_MATH" : "CUBLAS_PEDANTIC_MATH");
	out(e, "\t\treturn gnn_error(GNN_ERR_CUDA, \"%%s_create: setting up cuBLAS failed: %%s\", m->prog->name, cublasGetStatusName((cublasStatus_t)st));\n");
	out(e, "\treturn GNN_OK;\n}\n");
}

void
vendormemory(FILE *f, const Fn *fn)
{
	int i;

	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].hassched && fn->ins[i].sched.vendor) {
			fprintf(f, "  vendor libraries: cuBLAS's workspace, %d bytes a model instance (made at create, outside the arena)\n",
			        (int)BlasWorkspace);
			return;
		}
}

const char *
vendorend(E *e, const char *status)
{
	return e->vendorused ? pf(e, "%s_vend(m, %s)", e->nm, status) : status;
}
