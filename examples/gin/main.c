/*
** main.c: the GIN example: classify the nodes of Cora with gin.gnn
** (GIN (MLP with BatchNorm)), compiled ahead of time by gnncc, and report the test
** accuracy.
**
**   ./gin [DATA_DIR [WEIGHTS]]
**
** DATA_DIR defaults to ../../data/cora and WEIGHTS to gin.safetensors (seeded
** random weights, not trained: the accuracy is chance level), both
** relative to the current directory: run it from examples/gin (`make run`
** does).  The model is driven through its descriptor, GIN_desc, by the
** loop the examples share (../common/run.c); examples/gcn/main.c shows
** the typed API (GIN_create, GIN_bind, ...) instead.
*/
#include "gin.h"
#include "run.h"

int
main(int argc, char **argv)
{
	return run_example(&GIN_desc, "gin.safetensors", argc, argv);
}
