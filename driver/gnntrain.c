/*
 * gnnrun --train: full-graph training from files, on any engine.
 *
 * The model's training step (NAME_train, frontend/sema.c's lowertrain)
 * is one IR function: the interpreter runs it in float64 with the
 * weights kept as the compiled engines keep them (float32, through the
 * same optimizer code, runtime/optim.c), and the compiled engines run it
 * through the model's train_step.  Either way the loop is: a step per
 * epoch with the key (seed, epoch), the loss printed, a non-finite loss
 * an error that writes nothing; then the model's forward (dropout off)
 * for --output and the test accuracy, and the weights saved.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gnntrain.h"
#include "engine.h"
#include "options.h"

static void
progress(const TrainJob *j, int64_t e, double loss)
{
	if (j->quiet)
		return;
	if (isatty(1))
		printf("\repoch %lld/%lld  loss %.6f", (long long)e + 1, (long long)j->epochs, loss);
	else
		printf("epoch %lld loss %.6f\n", (long long)e + 1, loss);
	if (isatty(1) && e + 1 == j->epochs)
		putchar('\n');
	fflush(stdout);
}

/* --- the interpreter -------------------------------------------------------- */

typedef struct PStore {
	int n;
	const char **name;
	ITensor *t;        /* float64 values, as the interpreter takes them */
	float **f;         /* float32 copies of the f32 ones: what the optimizer updates */
	int64_t *numel;
} PStore;

static bool
storeparam(void *ud, const char *name, ITensor *t)
{
	PStore *s = ud;
	int64_t k, n;
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			break;
	if (i == s->n)
		return false;
	*t = s->t[i];
	n = s->numel[i];
	if (!(t->data = malloc((n + 1) * sizeof *t->data)))
		return false;
	for (k = 0; k < n; k++)
		t->data[k] = s->f[i] ? (double)s->f[i][k] : s->t[i].data[k];
	return true;
}

static void
storefree(PStore *s)
{
	int i;

	for (i = 0; i < s->n; i++) {
		free(s->t[i].data);
		free(s->f[i]);
	}
	free(s->name);
	free(s->t);
	free(s->f);
	free(s->numel);
}

/* the model's params: from the job's weights, or drawn as declared */
static bool
storeinit(PStore *s, const TrainJob *j)
{
	const Fn *fn = j->model;
	int i, k, n = 0;
	int64_t e;

	for (i = 0; i < fn->nins; i++)
		n += fn->ins[i].op == Oparam;
	s->n = n;
	s->name = calloc(n + 1, sizeof *s->name);
	s->t = calloc(n + 1, sizeof *s->t);
	s->f = calloc(n + 1, sizeof *s->f);
	s->numel = calloc(n + 1, sizeof *s->numel);
	if (!s->name || !s->t || !s->f || !s->numel)
		return false;
	for (i = 0, k = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		Type ty = fn->val[in->to].type;
		ITensor *t = &s->t[k];
		if (in->op != Oparam)
			continue;
		s->name[k] = attrstr(in, "name");
		if (j->param && j->param(j->ud, s->name[k], t)) {
			/* as given */
		} else {
			t->dtype = ty.dtype;
			t->rank = ty.rank;
			s->numel[k] = 1;
			for (e = 0; e < ty.rank; e++)
				s->numel[k] *= t->shape[e] = dimconstval(ty.dim[e]);
			if (!(t->data = calloc(s->numel[k] + 1, sizeof *t->data)))
				return false;
			if (findattr(in, "uniform")) {
				float *f = malloc((s->numel[k] + 1) * sizeof *f);
				if (!f)
					return false;
				gnn_init_uniform(f, s->numel[k], attrfloat(in, "uniform", 0), j->seed, (uint32_t)k);
				for (e = 0; e < s->numel[k]; e++)
					t->data[e] = f[e];
				free(f);
			} else {
				for (e = 0; e < s->numel[k]; e++)
					t->data[e] = attrfloat(in, "init", 0);
			}
		}
		t->dtype = ty.dtype;
		s->numel[k] = 1;
		for (e = 0; e < t->rank; e++)
			s->numel[k] *= t->shape[e];
		if (ty.dtype == DF32) {
			if (!(s->f[k] = malloc((s->numel[k] + 1) * sizeof(float))))
				return false;
			for (e = 0; e < s->numel[k]; e++)
				s->f[k][e] = (float)t->data[e];
		}
		k++;
	}
	return true;
}

static int
storefind(const PStore *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return i;
	return -1;
}

static int
trainhost(TrainJob *j, IValue *outs)
{
	const TrainInfo *ti = j->step->train;
	PStore s = {0};
	IValue *args = j->args;
	ITensor *key = &args[j->step->narg - 1].t;
	IRun run = {.fn = j->step, .args = args, .param = storeparam, .ud = &s};
	IRun fwd = {.fn = j->model, .args = args, .param = storeparam, .ud = &s};
	float **par = NULL, **grad = NULL;
	int64_t *size = NULL, e, x;
	gnn_optim *opt = NULL;
	int k, idx, rc = -1;

	if (!storeinit(&s, j)) {
		opterror("out of memory");
		goto out;
	}
	par = calloc(ti->nparam + 1, sizeof *par);
	grad = calloc(ti->nparam + 1, sizeof *grad);
	size = calloc(ti->nparam + 1, sizeof *size);
	if (!par || !grad || !size) {
		opterror("out of memory");
		goto out;
	}
	for (k = 0; k < ti->nparam; k++) {
		idx = storefind(&s, ti->param[k]);
		par[k] = s.f[idx];
		size[k] = s.numel[idx];
		if (!(grad[k] = malloc((size[k] + 1) * sizeof(float)))) {
			opterror("out of memory");
			goto out;
		}
	}
	if (gnn_optim_create(&gnn_device_cpu, NULL, ti->nparam, par, (const float *const *)grad, size, &j->opt, &opt) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		goto out;
	}
	for (e = 0; e < j->epochs; e++) {
		double loss;
		key->data[0] = (double)j->seed;
		key->data[1] = (double)e;
		if (interp(&run) != 0) {
			opterror("%s", run.err);
			goto out;
		}
		loss = run.outs[0].t.data[0];
		if (!isfinite(loss)) {
			opterror("the loss is %g at epoch %lld; nothing is written (labels out of range, or a learning "
			         "rate too high?)", loss, (long long)e + 1);
			goto out;
		}
		for (k = 0; k < ti->nparam; k++)
			for (x = 0; x < size[k]; x++)
				grad[k][x] = (float)run.outs[1 + k].t.data[x];
		if (gnn_optim_step(opt) != GNN_OK) {
			opterror("%s", gnn_errmsg());
			goto out;
		}
		for (k = 0; k < ti->nupdate; k++) {
			ITensor *u = &run.outs[1 + ti->nparam + k].t;
			idx = storefind(&s, ti->update[k]);
			for (x = 0; x < s.numel[idx]; x++) {
				double v = u->data[x];
				if (s.f[idx])
					s.f[idx][x] = (float)v;
				else
					s.t[idx].data[x] = v;
			}
		}
		interpfree(&run);
		progress(j, e, loss);
	}
	if (interp(&fwd) != 0) {
		opterror("%s", fwd.err);
		goto out;
	}
	for (k = 0; k < j->model->nret; k++) {
		outs[k] = fwd.outs[k];
		fwd.outs[k] = (IValue){0};
	}
	if (j->save) {
		const void **src = calloc(s.n + 1, sizeof *src);
		gnn_tensor_info *info = calloc(s.n + 1, sizeof *info);
		void **tmp = calloc(s.n + 1, sizeof *tmp);
		gnn_status st = GNN_ERR_MEM;
		if (src && info && tmp) {
			for (k = 0; k < s.n; k++) {
				int64_t n = s.numel[k];
				info[k].name = s.name[k];
				info[k].rank = s.t[k].rank;
				memcpy(info[k].shape, s.t[k].shape, sizeof info[k].shape);
				info[k].dtype = s.t[k].dtype == DF32 ? GNN_F32 : s.t[k].dtype == DI64 ? GNN_I64 : GNN_F64;
				if (s.f[k]) {
					src[k] = s.f[k];
				} else if ((tmp[k] = malloc((n + 1) * 8))) {
					for (x = 0; x < n; x++)
						if (info[k].dtype == GNN_I64)
							((int64_t *)tmp[k])[x] = (int64_t)s.t[k].data[x];
						else
							((double *)tmp[k])[x] = s.t[k].data[x];
					src[k] = tmp[k];
				}
			}
			st = gnn_save_params(j->save, info, s.n, src);
		}
		for (k = 0; tmp && k < s.n; k++)
			free(tmp[k]);
		free(tmp);
		free(info);
		free(src);
		if (st != GNN_OK) {
			opterror("%s", st == GNN_ERR_MEM ? "out of memory" : gnn_errmsg());
			goto out;
		}
	}
	rc = 0;
out:
	interpfree(&run);
	interpfree(&fwd);
	gnn_optim_destroy(opt);
	for (k = 0; grad && k < ti->nparam; k++)
		free(grad[k]);
	free(par);
	free(grad);
	free(size);
	storefree(&s);
	return rc;
}

/* --- the compiled engines ----------------------------------------------------- */

/* after training: the model's outputs on the bound graph (forward's
 * inputs are the step's first ones), and the weights saved */
static gnn_status
finish(const TrainJob *j, const gnn_model_desc *d, void *model, void *const *host, int nin, bool forward,
       IValue *outs)
{
	const void *fin[MaxTrainIO] = {0};
	gnn_status s;
	int i;

	for (i = 0; i < nin; i++)
		fin[i] = host[i];
	if (forward && (s = forwardoutputs(d, model, fin, outs)) != GNN_OK)
		return s;
	return j->save ? gnn_prog_save(model, j->save) : GNN_OK;
}

/* --- mini-batch training -------------------------------------------------------- */

/* a step input indexed by node (its first dim is N: "[N" in its dims),
 * or by edge ("[E") */
static bool
dimis(const gnn_tensor_info *t, char sym)
{
	return t->rank >= 1 && t->shape[0] < 0 && t->dims[0] == '[' && t->dims[1] == sym &&
	       (t->dims[2] == ',' || t->dims[2] == ']');
}

/*
 * Epochs of batches: the seeds are the train mask's nodes; each batch's
 * subgraph is bound (the same compiled model: no recompile; its arenas
 * sized once, by the capacity graph), its node rows of every per-node
 * input are gathered by the sampler, and the mask input is the batch's
 * seed mask, so the loss is over the seeds alone.  The sampler's producer
 * thread samples batch i+1 while batch i trains.  Then, if the outputs
 * are wanted, forward over the whole graph (layer-wise full-graph
 * inference).
 */
static int
trainbatches(TrainJob *j, const gnn_model_desc *d, const gnn_train_prog *tp, void *model, gnn_graph *g,
             void *const *host, const size_t *nbs, int nin, int maskin, IValue *outs)
{
	int64_t n = gnn_graph_num_nodes(g), k, ns = 0, *seeds = NULL, e, b, nb, capn, cape, binds = 0;
	int rowof[MaxTrainIO], i, r = 0, rc = -1, cuda = d->target == GNN_TARGET_CUDA;
	void *whole[MaxTrainIO] = {0}, *per[MaxTrainIO] = {0};
	const void *in[MaxTrainIO] = {0};
	gnn_sampler *s = NULL;
	gnn_graph *cap = NULL;
	const gnn_batch *bt;
	gnn_counters c0;

	if (maskin < 0 || tp->prog->inputs[maskin].dtype != GNN_BOOL || !dimis(&tp->prog->inputs[maskin], 'N')) {
		opterror("mini-batch training needs the step's input after the labels to be a node mask bool[N] "
		         "(--train-mask)");
		return -1;
	}
	if (!(seeds = malloc((n + 1) * sizeof *seeds)))
		goto oom;
	for (k = 0; k < n; k++)
		if (((const uint8_t *)host[maskin])[k])
			seeds[ns++] = k;
	if (gnn_sampler_create(g, seeds, ns, &j->sample, &s) != GNN_OK)
		goto fail;
	for (i = 0; i < nin; i++) {
		const gnn_tensor_info *t = &tp->prog->inputs[i];
		rowof[i] = -1;
		if (i == maskin)
			continue;
		if (dimis(t, 'E')) {
			opterror("mini-batch training: the step's input '%s' is per edge; only per-node inputs are sampled",
			         t->name);
			goto out;
		}
		if (dimis(t, 'N')) {
			if (gnn_sampler_add_rows(s, host[i], n ? nbs[i] / (size_t)n : 0) != GNN_OK)
				goto fail;
			rowof[i] = r++;
		} else if (cuda && gnn_prog_to_device(model, host[i], nbs[i], &whole[i]) != GNN_OK) {
			goto fail;
		}
	}
	gnn_sampler_capacity(s, &capn, &cape);
	if (gnn_sampler_capacity_graph(s, &cap) != GNN_OK || d->bind(model, cap) != GNN_OK ||
	    gnn_prog_train_config(model, tp, &j->opt, j->seed) != GNN_OK)
		goto fail;
	gnn_prog_counters(model, &c0);   /* the capacity's arenas: what no batch may add to */
	nb = gnn_sampler_batches(s);
	for (e = 0; e < j->epochs; e++) {
		double sum = 0;
		int64_t seen = 0;
		for (b = 0; b < nb; b++) {
			float loss = NAN;
			if (gnn_sampler_next(s, &bt) != GNN_OK || d->bind(model, bt->graph) != GNN_OK)
				goto fail;
			binds++;
			for (i = 0; i < nin; i++) {
				const void *src = i == maskin ? (const void *)bt->mask : rowof[i] >= 0 ? bt->rows[rowof[i]] : NULL;
				size_t nbytes = i == maskin ? (size_t)bt->num_nodes :
				                rowof[i] >= 0 ? nbs[i] / (size_t)n * (size_t)bt->num_nodes : 0;
				if (!src)
					in[i] = cuda ? whole[i] : host[i];
				else if (!cuda)
					in[i] = src;
				else if (gnn_prog_to_device(model, src, nbytes, &per[i]) != GNN_OK)
					goto fail;
				else
					in[i] = per[i];
			}
			if (gnn_prog_train_step(model, tp, in, &loss) != GNN_OK)
				goto fail;
			for (i = 0; i < nin; i++)
				if (per[i]) {
					gnn_prog_free_device(model, per[i]);
					per[i] = NULL;
				}
			sum += (double)loss * (double)bt->num_seeds;
			seen += bt->num_seeds;
		}
		progress(j, e, seen ? sum / (double)seen : NAN);
	}
	if (!j->quiet) {
		/* the runtime's own counts: every batch a bind of the model and
		 * of its step, each arena allocated once (at the capacity's) */
		gnn_counters c;
		gnn_prog_counters(model, &c);
		printf("mini-batch: %lld batches an epoch of at most %lld nodes and %lld edges; %lld binds, "
		       "forward's arena %zu bytes%s; the runtime's counts: %lld binds and %lld arena allocations, the "
		       "step's %lld and %lld, its arena %zu bytes\n", (long long)nb, (long long)capn, (long long)cape,
		       (long long)binds, c.arena_bytes,
		       c.arena_allocs == c0.arena_allocs && c.step_arena_allocs == c0.step_arena_allocs ?
		       " (as sized for the capacity: never grew)" : " (grew)", (long long)c.binds,
		       (long long)c.arena_allocs, (long long)c.step_binds, (long long)c.step_arena_allocs,
		       c.step_arena_bytes);
		fflush(stdout);
	}
	/* layer-wise inference over the whole graph: the forward */
	if ((j->wantout && d->bind(model, g) != GNN_OK) || finish(j, d, model, host, nin, j->wantout, outs) != GNN_OK)
		goto fail;
	rc = 0;
	goto out;
oom:
	opterror("out of memory");
	goto out;
fail:
	opterror("%s", gnn_errmsg());
out:
	for (i = 0; i < MaxTrainIO; i++) {
		if (whole[i])
			gnn_prog_free_device(model, whole[i]);
		if (per[i])
			gnn_prog_free_device(model, per[i]);
	}
	/* the model may still be bound to a batch's graph, which goes now:
	 * the caller destroys the model next, which reads no graph then */
	gnn_sampler_destroy(s);
	gnn_graph_destroy(cap);
	free(seeds);
	return rc;
}

static int
traincompiled(TrainJob *j, IValue *outs)
{
	Engine en;
	const gnn_model_desc *d;
	const gnn_train_prog *tp;
	void *model = NULL, *host[MaxTrainIO] = {0}, *dev[MaxTrainIO] = {0};
	int64_t e;
	size_t nbs[MaxTrainIO] = {0};
	int i, nin = 0, rc = -1, maskin = -1, ng = 0;
	/* the graph inputs: one, or a heterogeneous model's relations */
	const IGraph *ig[MaxTrainIO];
	bool rel[MaxTrainIO];
	gnn_graph *gs[MaxTrainIO] = {0};

	if (engineload(&en, j->m, j->model, j->target, j->cpu, j->gpumath, j->emu, 0, j->source) < 0)
		return -1;
	d = en.desc;
	if (!(tp = d->train)) {
		opterror("the compiled model %s has no training step", j->model->name);
		goto done;
	}
	for (i = 0; i < j->step->narg - 1; i++) {
		if (j->args[i].kind == TGraph) {
			if (ng >= MaxTrainIO)
				goto oom;
			ig[ng] = &j->args[i].g;
			rel[ng++] = isrelation(j->step->val[j->step->arg[i]].type);
			continue;
		}
		if (nin >= MaxTrainIO)
			goto oom;
		if (i == j->maskarg)
			maskin = nin;
		if (!(host[nin] = itensorbytes(&j->args[i].t, tp->prog->inputs[nin].dtype, &nbs[nin])))
			goto oom;
		nin++;
	}
	for (i = 0; i < ng; i++)
		if (igraphruntime(ig[i], rel[i], &gs[i]) != GNN_OK)
			goto fail;
	if (d->create(&model) != GNN_OK)
		goto fail;
	if (j->weights ? d->load_weights(model, j->weights) != GNN_OK : gnn_prog_init(model, j->seed) != GNN_OK)
		goto fail;
	if (j->batch > 0) {
		if (ng != 1) {
			opterror("mini-batch training (--batch-size) takes a model of one graph; a heterogeneous model's "
			         "batches come from the C API (gnn_hsampler_*, docs/sampling.md)");
			goto done;
		}
		rc = trainbatches(j, d, tp, model, gs[0], host, nbs, nin, maskin, outs);
		goto done;
	}
	if (d->bind_graphs(model, gs, ng) != GNN_OK || gnn_prog_train_config(model, tp, &j->opt, j->seed) != GNN_OK)
		goto fail;
	for (i = 0; i < nin; i++)
		if (gnn_prog_to_device(model, host[i], nbs[i], &dev[i]) != GNN_OK)
			goto fail;
	for (e = 0; e < j->epochs; e++) {
		float loss = NAN;
		if (gnn_prog_train_step(model, tp, (const void *const *)dev, &loss) != GNN_OK)
			goto fail;
		progress(j, e, loss);
	}
	if (finish(j, d, model, host, nin, true, outs) != GNN_OK)
		goto fail;
	rc = 0;
	goto done;
oom:
	opterror("out of memory");
	goto done;
fail:
	opterror("%s", gnn_errmsg());
done:
	for (i = 0; i < MaxTrainIO; i++) {
		if (dev[i])
			gnn_prog_free_device(model, dev[i]);
		free(host[i]);
	}
	if (model)
		d->destroy(model);
	for (i = 0; i < ng; i++)
		gnn_graph_destroy(gs[i]);
	engineclose(&en);
	return rc;
}

int
gnntrain(TrainJob *j, IValue *outs)
{
	if (strcmp(j->engine, "interp") == 0)
		return trainhost(j, outs);
	return traincompiled(j, outs);
}
