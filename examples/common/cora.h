/*
** cora.h: what the four examples share: loading a Planetoid dataset
** (Cora) from a folder of .npy files, PyG's NormalizeFeatures, the graph,
** the test-mask accuracy of a model's output, and a wall clock.
**
** Design: the examples exist to show the generated API (NAME_create,
** _load_weights, _bind, _forward_host), so everything else lives here,
** once.  The helpers return gnn_status with a message in gnn_errmsg(),
** as the runtime does, so a main() wraps each call in gnn_check() and
** every failure ends with one clear line on stderr.  The folder holds
** x.npy ([N, F]: uint8, bool, float32 or float64), edge_index.npy
** ([2, E], int64 or int32), y.npy ([N], int64 or int32) and
** test_mask.npy ([N], bool or uint8); data/cora/README.md describes them.
*/
#ifndef EXAMPLES_CORA_H
#define EXAMPLES_CORA_H

#include <stdint.h>

#include "gnnrt.h"

typedef struct cora {
	int64_t num_nodes;       /* N: the rows of x.npy */
	int64_t num_features;    /* F */
	float *x;                /* [N, F], row-normalized as PyG's NormalizeFeatures */
	gnn_graph *graph;        /* edge_index.npy over N nodes */
	int64_t *y;              /* [N] class labels */
	unsigned char *test;     /* [N] 1 where the node is in the test split */
	int64_t num_test;        /* how many are */
} cora;

/*
** Loads dir/{x,edge_index,y,test_mask}.npy into *c.  num_features is
** the width the model takes (its input's dims), checked against x.npy;
** 0 accepts any.  On failure *c is zeroed and the message names the file.
*/
gnn_status cora_load(const char *dir, int64_t num_features, cora *c);
void cora_free(cora *c);
/* dir/train_mask.npy, which must be bool [N] of c's N, into *mask (the
** training examples' seeds; free with gnn_array_free). */
gnn_status cora_train_mask(const char *dir, const cora *c, gnn_array *mask);
/* the nodes that mask marks, ascending, into a new array *nodes of *n
** (free with free(); mini-batch training's seeds) */
gnn_status cora_mask_nodes(const gnn_array *mask, int64_t **nodes, int64_t *n);

/*
** Test-mask accuracy in percent of out ([N, num_classes] scores): the
** prediction is each row's argmax (the first on ties, as NumPy's).
*/
gnn_status cora_accuracy(const cora *c, const float *out, int64_t num_classes,
	double *percent);

/* Seconds from an arbitrary origin, monotonic: for timing calls. */
double cora_now(void);

#endif
