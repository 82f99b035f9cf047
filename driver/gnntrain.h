/*
 * gnnrun --train (gnntrain.c): a model's training step run for some
 * epochs on one engine, then its forward.
 */
#ifndef GNNCC_GNNTRAIN_H
#define GNNCC_GNNTRAIN_H

#include <stdbool.h>

#include "../ir/interp.h"
#include "../runtime/gnnrt.h"

enum { MaxTrainIO = 64 };

typedef struct TrainJob {
	Mod *m;
	Fn *model, *step;         /* the model and its training step (step->train) */
	IValue *args;             /* the step's inputs; the last (the key) is filled here */
	IParamFn param;           /* initial weights (the interpreter), or NULL: */
	void *ud;
	const char *weights;      /* the same for the compiled engines; NULL: init */
	const char *engine;       /* "interp" or a compiled one, with: */
	int target, cpu, gpumath, emu;
	const char *source;
	int64_t epochs;
	gnn_optim_config opt;
	uint64_t seed;
	const char *save;         /* --save-weights, or NULL */
	bool quiet;
	/* mini-batch training (batch > 0): the sampler's settings, the
	 * step's input that is the train mask (its true nodes are the
	 * seeds), and whether the trained model's outputs are wanted (a
	 * forward over the whole graph) */
	int64_t batch;
	gnn_sampler_config sample;
	int maskarg;
	bool wantout;
	/* temporal sampling of a heterogeneous model: relation etname[k]'s
	 * edge times from etfile[k], the seed type's node times from
	 * seedtime (NULL: untimed) */
	int netime;
	const char *etname[MaxTrainIO], *etfile[MaxTrainIO], *seedtime;
	/* a heterogeneous model's fanouts: relation rfname[k]'s rfanout[k]
	 * (sample.nhops of them), the others' sample.fanout; and where to
	 * write its batches (gnn_hsampler_save_batch), or NULL */
	int nrfan;
	const char *rfname[MaxTrainIO];
	int64_t rfanout[MaxTrainIO][GNN_SAMPLER_MAX_HOPS];
	const char *dumpdir;
} TrainJob;

/* Train; outs receives the model's outputs after training (free with
 * ivaluefree; none after mini-batch training without wantout).  0, or
 * -1 after reporting with opterror. */
int gnntrain(TrainJob *j, IValue *outs);

#endif
