/*
** main.c: the SAGE example: classify the nodes of Cora with sage.gnn
** (GraphSAGE (aggr=mean)), compiled ahead of time by gnncc, and report the test
** accuracy.
**
**   ./sage [DATA_DIR [WEIGHTS]]
**
** DATA_DIR defaults to ../../data/cora and WEIGHTS to sage.safetensors (seeded
** random weights, not trained: the accuracy is chance level), both
** relative to the current directory: run it from examples/sage (`make run`
** does).  The model is driven through its descriptor, SAGE_desc, by the
** loop the examples share (../common/run.c); examples/gcn/main.c shows
** the typed API (SAGE_create, SAGE_bind, ...) instead.
*/
#include "sage.h"
#include "run.h"

int
main(int argc, char **argv)
{
	return run_example(&SAGE_desc, "sage.safetensors", argc, argv);
}
