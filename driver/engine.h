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

typedef struct Engine {
	void *handle;                /* dlopen handle */
	const gnn_model_desc *desc;
} Engine;

/*
 * Generate the module's code for target (TargetCPU or TargetCUDA),
 * compile it into a shared object in a temporary directory and load the
 * descriptor of model fn.  Prints the problem and returns -1 on failure.
 */
int engineload(Engine *en, Mod *m, Fn *fn, int target, const char *source);
void engineclose(Engine *en);

#endif
