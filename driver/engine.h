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
int engineload(Engine *en, Mod *m, Fn *fn, int target, int cpu, int gpumath, int emu, const char *source);
/* The same for the whole module under codegen options co (a tuning
 * build, say), for the program who; find symbols with dlsym(en->handle). */
int enginebuild(Engine *en, Mod *m, const CodegenOpts *co, bool openmp, int emu, const char *who);
void engineclose(Engine *en);

#endif
