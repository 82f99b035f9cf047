/*
 * gnnrun's compiled engines: a model built by the real backend (cc or
 * nvcc) into a shared object, loaded with dlopen and driven through the
 * descriptor every compiled model exports.  The object resolves the
 * runtime's symbols from gnnrun itself, so both share one runtime (and
 * one error message per thread).
 */
#ifndef GNNCC_ENGINE_H
#define GNNCC_ENGINE_H

#include "../ir/ir.h"
#include "../runtime/gnnrt.h"
#include "../codegen/codegen.h"
#include "../ir/interp.h"

typedef struct Engine {
	void *handle;                /* dlopen handle */
	const gnn_model_desc *desc;
} Engine;

/*
 * Generate the module's code for target (TargetCPU or TargetCUDA; with
 * emu, the cuda code for the emulated device in that mode), compile it
 * into a shared object in a temporary directory and load the
 * descriptor of model fn.  Prints the problem and returns -1 on failure.
 */
int engineload(Engine *en, Mod *m, Fn *fn, int target, int cpu, int gpumath, int emu, unsigned vendor, const char *source);
/* The same for the whole module under codegen options co (a tuning
 * build, say), for the program who; find symbols with dlsym(en->handle). */
int enginebuild(Engine *en, Mod *m, const CodegenOpts *co, bool openmp, int emu, const char *who);
void engineclose(Engine *en);

/* Values between the interpreter's form and the compiled models' (gnnrun,
 * gnnrun --train): a's elements as doubles (false: a dtype without);
 * t's as dtype dt in a malloc'd buffer of *nbytes bytes (NULL: out of
 * memory); the runtime's graph of ig (its own copy); and a bound model's
 * forward_host on in, its outputs as double tensors into outs (the
 * caller frees them, also after a failure).  The last two return the
 * runtime's status, its message in gnn_errmsg(). */
bool arraydoubles(const gnn_array *a, double *out);
void *itensorbytes(const ITensor *t, gnn_dtype dt, size_t *nbytes);
gnn_status igraphruntime(const IGraph *ig, bool rel, gnn_graph **g);   /* rel: a relation (ig->nsrc) */
gnn_status forwardoutputs(const gnn_model_desc *d, void *model, const void *const *in, IValue *outs);

#endif
