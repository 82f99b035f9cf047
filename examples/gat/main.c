/*
** main.c: the GAT example: classify the nodes of Cora with gat.gnn
** (GAT (8 heads of 8, then 1 head)), compiled ahead of time by gnncc, and report the test
** accuracy.
**
**   ./gat [DATA_DIR [WEIGHTS]]
**
** DATA_DIR defaults to ../../data/cora and WEIGHTS to gat.safetensors (seeded
** random weights, not trained: the accuracy is chance level), both
** relative to the current directory: run it from examples/gat (`make run`
** does).  The model is driven through its descriptor, GAT_desc, by the
** loop the examples share (../common/run.c); examples/gcn/main.c shows
** the typed API (GAT_create, GAT_bind, ...) instead.
*/
#include "gat.h"
#include "run.h"

int
main(int argc, char **argv)
{
	return run_example(&GAT_desc, "gat.safetensors", argc, argv);
}
