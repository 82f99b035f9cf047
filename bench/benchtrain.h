/*
** benchtrain.h: the training epoch as the benchmark's C programs time it
** (gnnbench.cu on the cuda target, cpu/cpubench.c on the cpu target), so
** that both targets' training rows mean the same thing.
**
** One call of gnn_prog_train_step is one full-graph epoch: forward with
** dropout, nll over the mask, backward, the optimizer's update in place.
** The step returns its loss on the host, so it has waited for the device:
** a host clock around it is the epoch's time on either target.  The
** labels (int64 [N]) and the mask (bool [N]; uint8 is the same bytes) are
** the very files PyG's cells read, checked against the step's declared
** inputs and copied with gnn_prog_to_device outside the timed calls.
** Warm-up steps train too (the parameters move on, the work per step does
** not).  Header-only (static functions), like benchutil.h; include
** gnnrt.h and benchutil.h first.
*/
#ifndef BENCH_BENCHTRAIN_H
#define BENCH_BENCHTRAIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCHTRAIN_MAXIN 16   /* model inputs (a heterogeneous model: one a node type) */

typedef struct BenchTrain {
	double *t;          /* the timed steps' milliseconds (the caller frees) */
	int runs, warmup;
	double first_ms;    /* the first warm-up step */
	float loss_first, loss_last;
	const char *stage;  /* where it failed: "input", "to_device", "train_step", ... */
	char msg[512];
} BenchTrain;

static int
benchtrain_fail(BenchTrain *r, const char *stage, const char *msg)
{
	r->stage = stage;
	snprintf(r->msg, sizeof r->msg, "%s", msg);
	return -1;
}

/*
** Times the training steps of model m (created, initialized, configured
** and bound; xdev: its nx tensor inputs where forward reads them, in the
** model's order; n: the labels' and the mask's length).  At most maxwarm
** warm-up steps, fewer when one step alone takes a quarter of cap_s; then
** nruns(the last warm-up step's seconds, ctx) timed steps.  0, or -1 with
** r->stage and r->msg.
*/
static int
benchtrain_run(void *m, const gnn_train_prog *tp, const void *const *xdev, int nx, int64_t n,
	const char *yfile, const char *maskfile, int maxwarm, double cap_s,
	int (*nruns)(double step_s, const void *ctx), const void *ctx, BenchTrain *r)
{
	const char *files[2] = {yfile, maskfile};
	gnn_array a[2];
	void *dev[2] = {NULL, NULL};
	double t0, last = 0;
	const void *in[BENCHTRAIN_MAXIN + 2];
	float loss = 0;
	int rc = -1;

	memset(r, 0, sizeof *r);
	if (nx < 1 || nx > BENCHTRAIN_MAXIN)
		return benchtrain_fail(r, "model", "unsupported number of model inputs");
	memset(a, 0, sizeof a);
	if (tp->ninputs != 2) {
		snprintf(r->msg, sizeof r->msg, "the train item has %d inputs after the model's; "
			"the benchmark gives 2 (labels, mask)", tp->ninputs);
		r->stage = "model";
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		if (gnn_npy_read(files[k], &a[k]) != GNN_OK) {
			benchtrain_fail(r, "input", gnn_errmsg());
			goto done;
		}
		if (a[k].dtype == GNN_U8 && tp->inputs[k].dtype == GNN_BOOL)
			a[k].dtype = GNN_BOOL;
		if (a[k].dtype != tp->inputs[k].dtype || a[k].rank != 1 || a[k].shape[0] != n) {
			snprintf(r->msg, sizeof r->msg, "%s: want %s [%lld] (the train item's %s)",
				files[k], tp->inputs[k].dtype == GNN_I64 ? "int64" :
				tp->inputs[k].dtype == GNN_BOOL ? "bool" : "its dtype",
				(long long)n, k ? "mask" : "labels");
			r->stage = "input";
			goto done;
		}
	}
	for (int k = 0; k < 2; k++)
		if (gnn_prog_to_device(m, a[k].data, a[k].nbytes, &dev[k]) != GNN_OK) {
			benchtrain_fail(r, "to_device", gnn_errmsg());
			goto done;
		}
	for (int k = 0; k < nx; k++)
		in[k] = xdev[k];
	in[nx] = dev[0];
	in[nx + 1] = dev[1];
	{
		for (r->warmup = 0; r->warmup < maxwarm; ) {
			t0 = now_s();
			if (gnn_prog_train_step(m, tp, in, &loss) != GNN_OK) {
				benchtrain_fail(r, "train_step", gnn_errmsg());
				goto done;
			}
			last = now_s() - t0;
			if (r->warmup++ == 0) {
				r->loss_first = loss;
				r->first_ms = last * 1e3;
			}
			if (last * 4 > cap_s)
				break;
		}
		r->runs = nruns(last, ctx);
		if (!(r->t = (double *)calloc((size_t)r->runs, sizeof *r->t))) {
			benchtrain_fail(r, "time", "out of memory");
			goto done;
		}
		for (int i = 0; i < r->runs; i++) {
			t0 = now_s();
			if (gnn_prog_train_step(m, tp, in, &loss) != GNN_OK) {
				benchtrain_fail(r, "train_step", gnn_errmsg());
				goto done;
			}
			r->t[i] = (now_s() - t0) * 1e3;
		}
		r->loss_last = loss;
	}
	rc = 0;
done:
	for (int k = 0; k < 2; k++) {
		if (dev[k])
			gnn_prog_free_device(m, dev[k]);
		gnn_array_free(&a[k]);
	}
	return rc;
}

static const char *
benchtrain_optim(int kind)
{
	return kind == GNN_OPTIM_SGD ? "sgd" : kind == GNN_OPTIM_ADAM ? "adam" :
		kind == GNN_OPTIM_ADAMW ? "adamw" : "?";
}

/* the record's training fields after "status": the statistics of r's
** timed steps (sorts r->t), its losses and the step's optimizer */
static void
benchtrain_json(const BenchTrain *r, const gnn_train_prog *tp)
{
	double mn = r->t[0], mean = 0;

	for (int i = 0; i < r->runs; i++) {
		mean += r->t[i] / r->runs;
		mn = r->t[i] < mn ? r->t[i] : mn;
	}
	printf(", \"median_ms\": %.6g, \"min_ms\": %.6g, \"mean_ms\": %.6g, \"first_ms\": %.6g, "
		"\"runs\": %d, \"warmup\": %d, \"loss_first\": %.9g, \"loss_last\": %.9g, "
		"\"optimizer\": \"%s lr=%g weight_decay=%g\"",
		median(r->t, r->runs), mn, mean, r->first_ms, r->runs, r->warmup,
		(double)r->loss_first, (double)r->loss_last, benchtrain_optim(tp->cfg.kind),
		(double)tp->cfg.lr, (double)tp->cfg.weight_decay);
}

#endif
