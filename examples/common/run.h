/*
** run.h: an example program driven by a model's descriptor alone, so the
** SAGE, GAT and GIN examples share one main loop (the GCN example spells
** out the typed API instead).
*/
#ifndef EXAMPLES_RUN_H
#define EXAMPLES_RUN_H

#include "gnnrt.h"

/*
** ./prog [DATA_DIR [WEIGHTS]]: load Cora (default ../../data/cora), create
** the model, load WEIGHTS (default weights), bind, run forward_host, print
** the test accuracy and the mean wall time of a few forwards.  Returns the
** process exit status.
*/
int run_example(const gnn_model_desc *d, const char *weights, int argc, char **argv);

#endif
