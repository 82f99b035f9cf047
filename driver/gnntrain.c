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
 * The batches of one graph (gnn_sampler) or of a heterogeneous model's
 * relations (gnn_hsampler), seen alike: a batch's graphs, the rows of
 * its k-th registered array and how many, its seed mask.
 */
typedef struct Batches {
	gnn_sampler *s;
	gnn_hsampler *h;
	int ng, nt, rowtype[GNN_SAMPLER_MAX_ROWS], seedtype;
	size_t rowbytes[GNN_SAMPLER_MAX_ROWS];   /* a row's bytes */
	const gnn_batch *b;
	const gnn_hbatch *hb;
} Batches;

static gnn_status
bnext(Batches *B, const gnn_model_desc *d, void *model)
{
	gnn_status st = B->s ? gnn_sampler_next(B->s, &B->b) : gnn_hsampler_next(B->h, &B->hb);

	if (st != GNN_OK)
		return st;
	return B->s ? d->bind(model, B->b->graph) : d->bind_graphs(model, B->hb->graph, B->ng);
}

static const void *
brows(const Batches *B, int k, int64_t *n)
{
	*n = B->s ? B->b->num_nodes : B->hb->num_nodes[B->rowtype[k]];
	return B->s ? B->b->rows[k] : B->hb->rows[k];
}

static const uint8_t *
bmask(const Batches *B, int64_t *n, int64_t *seeds)
{
	*n = B->s ? B->b->num_nodes : B->hb->num_nodes[B->seedtype];
	*seeds = B->s ? B->b->num_seeds : B->hb->num_seeds;
	return B->s ? B->b->mask : B->hb->mask;
}

/* a step input's first dim's name ("N_customer" of "[N_customer, 16]") */
static void
firstdim(const gnn_tensor_info *t, char *out, size_t n)
{
	size_t k = t->rank >= 1 && t->shape[0] < 0 && t->dims[0] == '[' ? strcspn(t->dims + 1, ",]") : 0;

	snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), t->dims + 1);
}

/* an int64 [n] array from path (its data, which the caller frees with a) */
static const int64_t *
loadtimes(const char *path, int64_t n, const char *what, gnn_array *a)
{
	if (gnn_npy_read(path, a) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return NULL;
	}
	if (a->dtype != GNN_I64 || a->rank != 1 || a->shape[0] != n) {
		opterror("%s %s: i64 [%lld] wanted, not %s of %lld elements", what, path, (long long)n,
		         gnn_dtype_name(a->dtype), (long long)gnn_array_numel(a));
		gnn_array_free(a);
		return NULL;
	}
	return a->data;
}

/*
 * A heterogeneous model's sampler: the node types are the relations'
 * node-count dims (dim[k] names relation k's source, dim[ng + k] its
 * target, dim[2 ng + k] its edges), each per-node input's type its first
 * dim (a per-edge input is an error), the seeds the
 * train mask's nodes of its type; --edge-time and --seed-time make it
 * temporal.  Registers the rows (B->rowtype) and sets rowof[].
 */
static int
hsampler(TrainJob *j, const gnn_train_prog *tp, gnn_graph *const *gs, int ng, char *const *dim,
         const char *const *gname, void *const *host, const size_t *nbs, int nin, int maskin, int *rowof,
         Batches *B, gnn_array *times)
{
	const char *tname[GNN_HSAMPLER_MAX_TYPES];
	int64_t n[GNN_HSAMPLER_MAX_TYPES], *seeds = NULL, ns = 0, k;
	int src[GNN_HSAMPLER_MAX_RELS], dst[GNN_HSAMPLER_MAX_RELS], nt = 0, i, r, t, rc = -1;
	const int64_t *etime[GNN_HSAMPLER_MAX_RELS] = {0}, *stime = NULL;
	int64_t *seedtime = NULL;
	gnn_hsampler_config cfg = {.batch_size = j->sample.batch_size, .nhops = j->sample.nhops,
		.shuffle = j->sample.shuffle, .seed = j->sample.seed, .prefetch = j->sample.prefetch,
		.threads = j->sample.threads};
	char want[256];

	if (ng > GNN_HSAMPLER_MAX_RELS) {
		opterror("mini-batch training: %d relations, at most %d", ng, GNN_HSAMPLER_MAX_RELS);
		return -1;
	}
	for (k = 0; k < 2 * ng; k++) {
		for (t = 0; t < nt && strcmp(tname[t], dim[k]) != 0; t++)
			;
		if (t == nt) {
			if (nt == GNN_HSAMPLER_MAX_TYPES) {
				opterror("mini-batch training: more than %d node types", GNN_HSAMPLER_MAX_TYPES);
				return -1;
			}
			tname[nt] = dim[k];
			n[nt++] = k < ng ? gnn_graph_num_src_nodes(gs[k]) : gnn_graph_num_nodes(gs[k - ng]);
		}
		if (k < ng)
			src[k] = t;
		else
			dst[k - ng] = t;
	}
	for (r = 0; r < ng; r++)
		for (int h = 0; h < cfg.nhops; h++)
			cfg.fanout[r][h] = j->sample.fanout[h];
	for (k = 0; k < j->nrfan; k++) {   /* --fanout REL=K1,K2,..., once a relation */
		for (r = 0; r < ng && strcmp(gname[r], j->rfname[k]) != 0; r++)
			;
		for (i = 0; i < k && strcmp(j->rfname[i], j->rfname[k]) != 0; i++)
			;
		if (r == ng || i < k) {
			opterror(r == ng ? "--fanout %s=...: the model has no relation '%s'" :
			         "--fanout %s=...: relation '%s' has a fanout already", j->rfname[k], j->rfname[k]);
			return -1;
		}
		for (int h = 0; h < cfg.nhops; h++)
			cfg.fanout[r][h] = j->rfanout[k][h];
	}
	firstdim(&tp->prog->inputs[maskin], want, sizeof want);
	for (B->seedtype = 0; B->seedtype < nt && strcmp(tname[B->seedtype], want) != 0; B->seedtype++)
		;
	if (B->seedtype == nt || tp->prog->inputs[maskin].dtype != GNN_BOOL || tp->prog->inputs[maskin].rank != 1) {
		opterror("mini-batch training needs the step's input after the labels to be a node mask bool[N_type] "
		         "of one node type (--train-mask)");
		return -1;
	}
	for (k = 0; k < j->netime; k++) {
		for (r = 0; r < ng && strcmp(gname[r], j->etname[k]) != 0; r++)
			;
		if (r == ng) {
			opterror("--edge-time %s=%s: the model has no relation '%s'", j->etname[k], j->etfile[k], j->etname[k]);
			goto out;
		}
		if (!(etime[r] = loadtimes(j->etfile[k], gnn_graph_num_edges(gs[r]), "--edge-time", &times[r])))
			goto out;
	}
	if (j->seedtime && !(stime = loadtimes(j->seedtime, n[B->seedtype], "--seed-time", &times[ng])))
		goto out;
	if (!(seeds = malloc((size_t)(n[B->seedtype] + 1) * sizeof *seeds)) ||
	    !(seedtime = malloc((size_t)(n[B->seedtype] + 1) * sizeof *seedtime))) {
		opterror("out of memory");
		goto out;
	}
	for (k = 0; k < n[B->seedtype]; k++)
		if (((const uint8_t *)host[maskin])[k]) {
			seedtime[ns] = stime ? stime[k] : 0;
			seeds[ns++] = k;
		}
	{
		gnn_hetero_desc hd = {.num_types = nt, .num_nodes = n, .num_rels = ng, .rel = (const gnn_graph *const *)gs,
			.src_type = src, .dst_type = dst, .edge_time = j->netime ? etime : NULL};
		if (gnn_hsampler_create(&hd, B->seedtype, seeds, stime ? seedtime : NULL, ns, &cfg, &B->h) != GNN_OK)
			goto fail;
	}
	B->ng = ng;
	B->nt = nt;
	for (i = 0, r = 0; i < nin; i++) {
		const gnn_tensor_info *ti = &tp->prog->inputs[i];
		rowof[i] = -1;
		if (i == maskin)
			continue;
		firstdim(ti, want, sizeof want);
		for (t = 0; t < nt && strcmp(tname[t], want) != 0; t++)
			;
		for (k = 0; k < ng && strcmp(dim[2 * ng + k], want) != 0; k++)
			;
		if (k < ng) {
			opterror("mini-batch training: the step's input '%s' is per edge of %s; only per-node inputs are "
			         "sampled", ti->name, gname[k]);
			goto out;
		}
		if (t < nt) {
			B->rowtype[r] = t;
			B->rowbytes[r] = n[t] ? nbs[i] / (size_t)n[t] : 0;
			if (gnn_hsampler_add_rows(B->h, t, host[i], B->rowbytes[r]) != GNN_OK)
				goto fail;
			rowof[i] = r++;
		}
	}
	rc = 0;
	goto out;
fail:
	opterror("%s", gnn_errmsg());
out:
	free(seeds);
	free(seedtime);
	return rc;
}

/*
 * Epochs of batches: the seeds are the train mask's nodes; each batch's
 * subgraph is bound (the same compiled model: no recompile; its arenas
 * sized once, by the capacity graph), its node rows of every per-node
 * input are gathered by the sampler, and the mask input is the batch's
 * seed mask, so the loss is over the seeds alone.  The sampler's producer
 * thread samples batch i+1 while batch i trains.  Then, if the outputs
 * are wanted, forward over the whole graph (layer-wise full-graph
 * inference).  A heterogeneous model (ng relations, dim[] their node
 * types and edges) samples them all (gnn_hsampler), temporally with edge times.
 */
static int
trainbatches(TrainJob *j, const gnn_model_desc *d, const gnn_train_prog *tp, void *model, gnn_graph *const *gs,
             int ng, bool hetero, char *const *dim, const char *const *gname, void *const *host, const size_t *nbs,
             int nin, int maskin, IValue *outs)
{
	gnn_graph *g = gs[0];
	int64_t n = gnn_graph_num_nodes(g), k, ns = 0, *seeds = NULL, e, b, nb, capn = 0, cape = 0, binds = 0;
	int rowof[MaxTrainIO], i, r = 0, rc = -1, cuda = d->target == GNN_TARGET_CUDA;
	void *whole[MaxTrainIO] = {0}, *per[MaxTrainIO] = {0};
	const void *in[MaxTrainIO] = {0};
	gnn_graph *cap[GNN_HSAMPLER_MAX_RELS] = {0};
	gnn_array times[GNN_HSAMPLER_MAX_RELS + 1] = {0};
	Batches B = {0};
	gnn_counters c0;

	if (hetero) {
		if (hsampler(j, tp, gs, ng, dim, gname, host, nbs, nin, maskin, rowof, &B, times) != 0)
			goto out;
	} else {
		if (maskin < 0 || tp->prog->inputs[maskin].dtype != GNN_BOOL || !dimis(&tp->prog->inputs[maskin], 'N')) {
			opterror("mini-batch training needs the step's input after the labels to be a node mask bool[N] "
			         "(--train-mask)");
			return -1;
		}
		if (j->netime || j->nrfan || j->dumpdir) {
			opterror("%s is for heterogeneous models (relations)", j->netime ? "temporal sampling (--edge-time)" :
			         j->nrfan ? "a relation's fanout (--fanout REL=...)" : "--dump-batches");
			return -1;
		}
		if (!(seeds = malloc((n + 1) * sizeof *seeds)))
			goto oom;
		for (k = 0; k < n; k++)
			if (((const uint8_t *)host[maskin])[k])
				seeds[ns++] = k;
		if (gnn_sampler_create(g, seeds, ns, &j->sample, &B.s) != GNN_OK)
			goto fail;
		for (i = 0; i < nin; i++) {
			rowof[i] = -1;
			if (i != maskin && dimis(&tp->prog->inputs[i], 'N')) {
				B.rowbytes[r] = n ? nbs[i] / (size_t)n : 0;
				if (gnn_sampler_add_rows(B.s, host[i], B.rowbytes[r]) != GNN_OK)
					goto fail;
				rowof[i] = r++;
			}
		}
	}
	for (i = 0; i < nin; i++) {
		const gnn_tensor_info *t = &tp->prog->inputs[i];
		if (i == maskin || rowof[i] >= 0)
			continue;
		if (!hetero && dimis(t, 'E')) {
			opterror("mini-batch training: the step's input '%s' is per edge; only per-node inputs are sampled",
			         t->name);
			goto out;
		}
		if (cuda && gnn_prog_to_device(model, host[i], nbs[i], &whole[i]) != GNN_OK)
			goto fail;
	}
	if (B.s) {
		gnn_sampler_capacity(B.s, &capn, &cape);
		if (gnn_sampler_capacity_graph(B.s, &cap[0]) != GNN_OK || d->bind(model, cap[0]) != GNN_OK)
			goto fail;
	} else {
		int64_t cn[GNN_HSAMPLER_MAX_TYPES], ce[GNN_HSAMPLER_MAX_RELS];
		/* the most nodes (of all types) and edges (of all relations) */
		gnn_hsampler_capacity(B.h, cn, ce);
		for (i = 0; i < B.nt; i++)
			capn += cn[i];
		for (i = 0; i < ng; i++)
			cape += ce[i];
		if (gnn_hsampler_capacity_graphs(B.h, cap) != GNN_OK || d->bind_graphs(model, cap, ng) != GNN_OK)
			goto fail;
	}
	if (gnn_prog_train_config(model, tp, &j->opt, j->seed) != GNN_OK)
		goto fail;
	gnn_prog_counters(model, &c0);   /* the capacity's arenas: what no batch may add to */
	nb = B.s ? gnn_sampler_batches(B.s) : gnn_hsampler_batches(B.h);
	for (e = 0; e < j->epochs; e++) {
		double sum = 0;
		int64_t seen = 0;
		for (b = 0; b < nb; b++) {
			float loss = NAN;
			int64_t nmask, nseed;
			const uint8_t *mask;
			if (bnext(&B, d, model) != GNN_OK ||
			    (j->dumpdir && gnn_hsampler_save_batch(B.h, B.hb, j->dumpdir, e * nb + b) != GNN_OK))
				goto fail;
			binds++;
			mask = bmask(&B, &nmask, &nseed);
			for (i = 0; i < nin; i++) {
				int64_t rows = 0;
				const void *src = i == maskin ? (const void *)mask : rowof[i] >= 0 ? brows(&B, rowof[i], &rows) : NULL;
				size_t nbytes = i == maskin ? (size_t)nmask : rowof[i] >= 0 ? B.rowbytes[rowof[i]] * (size_t)rows : 0;
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
			sum += (double)loss * (double)nseed;
			seen += nseed;
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
	if ((j->wantout && d->bind_graphs(model, gs, ng) != GNN_OK) ||
	    finish(j, d, model, host, nin, j->wantout, outs) != GNN_OK)
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
	gnn_sampler_destroy(B.s);
	gnn_hsampler_destroy(B.h);
	for (i = 0; i < GNN_HSAMPLER_MAX_RELS; i++)
		gnn_graph_destroy(cap[i]);
	for (i = 0; i <= GNN_HSAMPLER_MAX_RELS; i++)
		if (times[i].data)
			gnn_array_free(&times[i]);
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
	int i, k, nin = 0, rc = -1, maskin = -1, ng = 0;
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
		/* a relation's node counts' names: its types (dim[k] source,
		 * dim[ng + k] target), and its edge count's (dim[2 ng + k]) */
		char *dim[3 * MaxTrainIO] = {0};
		const char *gname[MaxTrainIO];
		bool hetero = ng > 1;
		for (i = 0, k = 0; i < j->step->narg - 1; i++)
			if (j->args[i].kind == TGraph) {
				Type t = j->step->val[j->step->arg[i]].type;
				hetero = hetero || rel[k];
				gname[k] = j->step->val[j->step->arg[i]].name;
				dim[k] = dimstr(NULL, j->m, graphsrcnodes(t));
				dim[ng + k] = dimstr(NULL, j->m, t.dim[0]);
				dim[2 * ng + k++] = dimstr(NULL, j->m, t.dim[1]);
			}
		rc = trainbatches(j, d, tp, model, gs, ng, hetero, dim, gname, host, nbs, nin, maskin, outs);
		for (i = 0; i < 3 * ng; i++)
			free(dim[i]);
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
