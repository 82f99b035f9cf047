/*
** train.c: training a compiled model, and the weights' own life cycle
** (init from a seed, save as safetensors).
**
** A model compiled with a training step carries a second program, the
** step (gnn_train_prog): the model's forward in training mode, the loss
** and its gradients, as one IR function (the compiler's autodiff).  The
** step runs in an instance of its own, bound to the model's graph, whose
** parameters are the model's: its parameter pointers are aliased to the
** model's device buffers, so the optimizer (optim.c, one launch for every
** trained tensor) updates the weights in place and nothing is copied
** between steps.  The model's host copies and load-time values go stale;
** they are refreshed before the model's next forward or save (stale).
**
** A step whose loss is not finite changes nothing: the loss is read back
** before the update is launched.
**
** What the step computes from the graph and its inputs alone (gnncc's
** invariant pass: GIN's sum of x over neighbours, say) is computed by the
** first step after a bind of the model, new input pointers or new
** weights (loaded or initialized: GIN's eps, which training leaves
** alone, may take part), and kept
** in the step's instance for the steps after (ti->keep); a caller that
** writes new values into the same buffers says so
** (gnn_prog_train_inputs_changed).  Binds are told apart by their
** number, not the graph's address, which a later graph may reuse.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "internal.h"

struct gnn_trainer {
	const gnn_train_prog *tp;
	gnn_instance *ti;           /* the step's instance */
	uint64_t bindgen;           /* the model's bind that ti is bound to (0: none) */
	const void **last;          /* the inputs of the last step that ran, for ti->keep */
	int kept;                   /* last holds them: ti's once-time values are theirs */
	uint64_t weightgen;         /* ... and of the model's weights then */
	void **own;                 /* ti's own parameter pointers, restored at destroy */
	void **mine;                /* per model parameter: a device copy made here, or NULL */
	void **outs;                /* loss, gradients, updates: device buffers */
	size_t *outbytes;
	int64_t *key;               /* device: seed, step */
	gnn_optim *opt;
	gnn_optim_config cfg;
	uint64_t seed;
	int64_t step;
};

static int
findparam(const gnn_program *p, const char *name)
{
	int i;

	for (i = 0; i < p->nparam; i++)
		if (strcmp(p->params[i].name, name) == 0)
			return i;
	return -1;
}

static size_t
infobytes(const gnn_tensor_info *t)
{
	size_t n = gnn_dtype_size(t->dtype);
	int k;

	for (k = 0; k < t->rank; k++)
		n *= (size_t)t->shape[k];
	return n;
}

void
gnn_trainer_free_(gnn_instance *m)
{
	struct gnn_trainer *t = m ? m->train : NULL;
	const gnn_program *sp;
	const gnn_device *dev;
	int i;

	if (!t)
		return;
	dev = m->prog->dev;
	if (t->ti) {
		sp = t->ti->prog;
		for (i = 0; t->own && i < sp->nparam; i++)
			t->ti->b[sp->param[i]] = t->own[i];
		gnn_prog_destroy(t->ti);
		for (i = 0; t->outs && i < sp->noutput; i++)
			if (t->outs[i])
				dev->free(t->outs[i]);
		if (t->own)
			gnn_free(t->own, (size_t)sp->nparam * sizeof *t->own);
		if (t->outs)
			gnn_free(t->outs, (size_t)sp->noutput * sizeof *t->outs);
		if (t->outbytes)
			gnn_free(t->outbytes, (size_t)sp->noutput * sizeof *t->outbytes);
		if (t->last)
			gnn_free((void *)t->last, ((size_t)sp->ninput + 1) * sizeof *t->last);
	}
	if (t->key)
		dev->free(t->key);
	for (i = 0; t->mine && i < m->prog->nparam; i++)
		if (t->mine[i]) {
			m->b[m->prog->param[i]] = m->h[m->prog->param[i]];
			dev->free(t->mine[i]);
		}
	if (t->mine)
		gnn_free(t->mine, (size_t)m->prog->nparam * sizeof *t->mine);
	gnn_optim_destroy(t->opt);
	gnn_free(t, sizeof *t);
	m->train = NULL;
}

/* the step's instance, its buffers and the optimizer, on first use */
static gnn_status
trainer(gnn_instance *m, const gnn_train_prog *tp, struct gnn_trainer **out)
{
	const gnn_program *p = m->prog, *sp = tp->prog;
	const gnn_device *dev = p->dev;
	struct gnn_trainer *t = m->train;
	gnn_status s = GNN_OK;
	int i, j, err;

	if (t && t->tp == tp) {
		*out = t;
		return GNN_OK;
	}
	gnn_trainer_free_(m);
	if (!(t = (struct gnn_trainer *)gnn_realloc(NULL, 0, sizeof *t)))
		return gnn_error(GNN_ERR_MEM, "%s_train_step: out of memory", p->name);
	memset(t, 0, sizeof *t);
	m->train = t;
	t->tp = tp;
	t->cfg = tp->cfg;
	t->seed = tp->seed;
	if ((s = gnn_prog_create(sp, sizeof(gnn_instance), &t->ti)) != GNN_OK)
		goto fail;
	if (!(t->own = (void **)gnn_realloc(NULL, 0, ((size_t)sp->nparam + 1) * sizeof *t->own)) ||
	    !(t->outs = (void **)gnn_realloc(NULL, 0, ((size_t)sp->noutput + 1) * sizeof *t->outs)) ||
	    !(t->outbytes = (size_t *)gnn_realloc(NULL, 0, ((size_t)sp->noutput + 1) * sizeof *t->outbytes)) ||
	    !(t->last = (const void **)gnn_realloc(NULL, 0, ((size_t)sp->ninput + 1) * sizeof *t->last))) {
		s = gnn_error(GNN_ERR_MEM, "%s_train_step: out of memory", p->name);
		goto fail;
	}
	memset(t->outs, 0, ((size_t)sp->noutput + 1) * sizeof *t->outs);
	/* what the step's instance owns, for gnn_trainer_free_ to give back
	 * whatever fails below */
	for (i = 0; i < sp->nparam; i++)
		t->own[i] = t->ti->b[sp->param[i]];
	/* every trained parameter (and updated buffer) on the device: forward
	 * may read only what load made of it (a transposed weight) */
	if (!(t->mine = (void **)gnn_realloc(NULL, 0, ((size_t)p->nparam + 1) * sizeof *t->mine))) {
		s = gnn_error(GNN_ERR_MEM, "%s_train_step: out of memory", p->name);
		goto fail;
	}
	memset(t->mine, 0, ((size_t)p->nparam + 1) * sizeof *t->mine);
	for (i = 0; i < p->nparam; i++) {
		int b = p->param[i];
		if (!dev->separate || m->b[b] != m->h[b] || !m->nb[b])
			continue;
		if ((err = dev->alloc(&t->mine[i], m->nb[b]))) {
			s = gnn_devfail_(dev, err, m->nb[b], p->name, "train_step: the weights' device copies");
			goto fail;
		}
		if ((err = dev->copy(t->mine[i], m->h[b], m->nb[b], GNN_H2D, m->stream, 0))) {
			s = gnn_devfail_(dev, err, 0, p->name, "train_step: copying the weights to the device");
			goto fail;
		}
		m->b[b] = t->mine[i];
	}
	/* the step reads the model's parameters where the model keeps them */
	for (i = 0; i < sp->nparam; i++) {
		if ((j = findparam(p, sp->params[i].name)) < 0) {
			s = gnn_error(GNN_ERR_STATE, "%s_train_step: the step's parameter '%s' is not the model's",
			              p->name, sp->params[i].name);
			goto fail;
		}
		t->ti->b[sp->param[i]] = m->b[p->param[j]];
	}
	/* outputs: the loss, the gradients, the buffers' new values (their
	 * shapes are the parameters', constant) */
	for (i = 0; i < sp->noutput; i++) {
		t->outbytes[i] = i == 0 ? sizeof(float) : infobytes(i <= tp->nparam ? &p->params[tp->param[i - 1]]
		                                                  : &p->params[tp->update[i - 1 - tp->nparam]]);
		if (t->outbytes[i] && (err = dev->alloc(&t->outs[i], t->outbytes[i]))) {
			s = gnn_devfail_(dev, err, t->outbytes[i], p->name, "train_step: the gradients");
			goto fail;
		}
	}
	if ((err = dev->alloc((void **)&t->key, 2 * sizeof(int64_t)))) {
		s = gnn_devfail_(dev, err, 2 * sizeof(int64_t), p->name, "train_step: the dropout key");
		goto fail;
	}
fail:
	if (s != GNN_OK) {
		gnn_trainer_free_(m);
		return s;
	}
	*out = t;
	return GNN_OK;
}

/* the optimizer over the model's trained weights and the step's
 * gradients, under t->cfg (made again when the kind changes) */
static gnn_status
optimizer(gnn_instance *m, struct gnn_trainer *t)
{
	const gnn_program *p = m->prog;
	const gnn_device *dev = p->dev;
	const gnn_train_prog *tp = t->tp;
	float **par;
	const float **grad;
	int64_t *size;
	gnn_status s;
	int i;

	if (t->opt)
		return GNN_OK;
	par = (float **)gnn_realloc(NULL, 0, ((size_t)tp->nparam + 1) * sizeof *par);
	grad = (const float **)gnn_realloc(NULL, 0, ((size_t)tp->nparam + 1) * sizeof *grad);
	size = (int64_t *)gnn_realloc(NULL, 0, ((size_t)tp->nparam + 1) * sizeof *size);
	if (!par || !grad || !size) {
		s = gnn_error(GNN_ERR_MEM, "%s_train_step: out of memory", p->name);
		goto out;
	}
	for (i = 0; i < tp->nparam; i++) {
		par[i] = (float *)m->b[p->param[tp->param[i]]];
		grad[i] = (const float *)t->outs[1 + i];
		size[i] = (int64_t)(infobytes(&p->params[tp->param[i]]) / sizeof(float));
	}
	s = gnn_optim_create(dev, m->stream, tp->nparam, par, grad, size, &t->cfg, &t->opt);
out:
	gnn_free(par, ((size_t)tp->nparam + 1) * sizeof *par);
	gnn_free((void *)grad, ((size_t)tp->nparam + 1) * sizeof *grad);
	gnn_free(size, ((size_t)tp->nparam + 1) * sizeof *size);
	return s;
}

/* the step's instance bound to the model's graph, when the model was
 * bound since (its once-time values then go) */
static gnn_status
rebind(gnn_instance *m, struct gnn_trainer *t)
{
	gnn_status s;

	if (t->bindgen == m->bindgen)
		return GNN_OK;
	t->kept = 0;
	/* every graph the model was bound to: a heterogeneous model's relations */
	if ((s = gnn_prog_bind_graphs(t->ti, m->g, m->prog->nbound)) != GNN_OK)
		return s;
	t->bindgen = m->bindgen;
	return GNN_OK;
}

gnn_status
gnn_prog_train_config(void *mv, const gnn_train_prog *tp, const gnn_optim_config *cfg, uint64_t seed)
{
	gnn_instance *m = (gnn_instance *)mv;
	struct gnn_trainer *t;
	gnn_optim_config old;
	gnn_status s;

	if (!m || !cfg)
		return gnn_error(GNN_ERR_ARG, "train_config: NULL argument");
	if ((s = trainer(m, tp, &t)) != GNN_OK)
		return s;
	if (t->opt && cfg->kind != t->cfg.kind) {
		/* another optimizer: its state starts afresh */
		gnn_optim_destroy(t->opt);
		t->opt = NULL;
	}
	if (t->opt && (s = gnn_optim_set(t->opt, cfg)) != GNN_OK)
		return s;
	old = t->cfg;
	t->cfg = *cfg;
	if ((s = optimizer(m, t)) != GNN_OK) {
		t->cfg = old;
		return s;
	}
	t->seed = seed;
	/* the step bound now to the model's graph, not at the first step:
	 * mini-batch training binds a graph of the batches' capacity before
	 * this, so the step's arena fits every batch (docs/sampling.md) */
	if (m->bound)
		return rebind(m, t);
	return GNN_OK;
}

gnn_status
gnn_prog_train_inputs_changed(void *mv)
{
	gnn_instance *m = (gnn_instance *)mv;

	if (!m)
		return gnn_error(GNN_ERR_ARG, "train_inputs_changed: NULL model");
	if (m->train)
		m->train->kept = 0;
	return GNN_OK;
}

static gnn_status
trainstep(void *mv, const gnn_train_prog *tp, const void *const *in, float *loss)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p, *sp = tp->prog;
	const gnn_device *dev;
	struct gnn_trainer *t;
	const void **sin = NULL;
	int64_t key[2];
	float l = NAN;
	gnn_status s;
	int i, k, err, nin = sp->ninput - 1;

	if (!m || !in)
		return gnn_error(GNN_ERR_ARG, "train_step: NULL argument");
	p = m->prog;
	dev = p->dev;
	if (!m->bound)
		return gnn_error(GNN_ERR_STATE, "%s_train_step: no graph is bound (call %s_bind first)", p->name, p->name);
	if ((s = trainer(m, tp, &t)) != GNN_OK || (s = optimizer(m, t)) != GNN_OK)
		return s;
	if ((s = rebind(m, t)) != GNN_OK)
		return s;
	key[0] = (int64_t)t->seed;
	key[1] = t->step;
	if ((err = dev->copy(t->key, key, sizeof key, GNN_H2D, m->stream, 0)))
		return gnn_error(GNN_ERR_CUDA, "%s_train_step: uploading the key: %s", p->name, dev->errstr(err));
	if (!(sin = (const void **)gnn_realloc(NULL, 0, ((size_t)sp->ninput + 1) * sizeof *sin)))
		return gnn_error(GNN_ERR_MEM, "%s_train_step: out of memory", p->name);
	/* the once-time values of the last step serve while its bind and
	 * inputs are this step's */
	for (i = 0; i < nin && (!t->kept || t->last[i] == in[i]); i++)
		;
	t->ti->keep = t->kept && i == nin && t->weightgen == m->weightgen;
	t->weightgen = m->weightgen;
	t->kept = 0;   /* until this step has run */
	for (i = 0; i < nin; i++)
		sin[i] = t->last[i] = in[i];
	sin[nin] = t->key;
	/* the model's queued forwards read what the step will update */
	if ((err = dev->sync(m->stream))) {
		s = gnn_error(GNN_ERR_CUDA, "%s_train_step: an earlier call failed: %s", p->name, dev->errstr(err));
		goto out;
	}
	if ((s = sp->run(t->ti, sin, t->outs)) != GNN_OK || (s = gnn_prog_sync(t->ti)) != GNN_OK)
		goto out;
	t->kept = 1;
	if ((err = dev->copy(&l, t->outs[0], sizeof l, GNN_D2H, t->ti->stream, 0))) {
		s = gnn_error(GNN_ERR_CUDA, "%s_train_step: reading the loss: %s", p->name, dev->errstr(err));
		goto out;
	}
	if (loss)
		*loss = l;
	if (!isfinite(l)) {
		s = gnn_error(GNN_ERR_RANGE, "%s_train_step: the loss is %g at step %lld; the weights are unchanged "
		              "(labels out of range, or a learning rate too high?)", p->name, (double)l, (long long)t->step);
		goto out;
	}
	if ((s = gnn_optim_step(t->opt)) != GNN_OK)
		goto out;
	for (k = 0; k < tp->nupdate; k++) {
		int b = p->param[tp->update[k]];
		if ((err = dev->copy(m->b[b], t->outs[1 + tp->nparam + k], t->outbytes[1 + tp->nparam + k], GNN_ANY,
		                     m->stream, 0))) {
			s = gnn_error(GNN_ERR_CUDA, "%s_train_step: updating buffers: %s", p->name, dev->errstr(err));
			goto out;
		}
	}
	if ((err = dev->sync(m->stream))) {
		s = gnn_error(GNN_ERR_CUDA, "%s_train_step: the update failed: %s", p->name, dev->errstr(err));
		goto out;
	}
	t->step++;
	m->stale = 1;
out:
	gnn_free(sin, ((size_t)sp->ninput + 1) * sizeof *sin);
	return s;
}

gnn_status
gnn_prog_train_step(void *mv, const gnn_train_prog *tp, const void *const *in, float *loss)
{
	/* for the profile's records, the optimizer's update too (optim.cu) */
	const char *ph = gnn_prof_phase_("train", tp && tp->prog ? tp->prog->name : NULL);
	gnn_status s = trainstep(mv, tp, in, loss);

	gnn_prof_phase_(ph, NULL);
	return s;
}

gnn_status
gnn_prog_counters(const void *mv, gnn_counters *out)
{
	const gnn_instance *m = (const gnn_instance *)mv;
	const struct gnn_trainer *t;

	if (!m || !out)
		return gnn_error(GNN_ERR_ARG, "counters: NULL argument");
	t = m->train;
	memset(out, 0, sizeof *out);
	out->binds = m->nbinds;
	out->arena_allocs = m->narenas;
	out->arena_bytes = m->arenasize;
	if (t) {
		out->steps = t->step;
		if (t->ti) {
			out->step_binds = t->ti->nbinds;
			out->step_arena_allocs = t->ti->narenas;
			out->step_arena_bytes = t->ti->arenasize;
		}
	}
	return GNN_OK;
}

/* after training: the host copies of the weights and the values computed
 * from them, again from the device's */
gnn_status
gnn_prog_refresh_(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	int i, b, err;

	if (!m->stale)
		return GNN_OK;
	for (i = 0; i < p->nparam; i++) {
		b = p->param[i];
		if (m->b[b] != m->h[b] && m->nb[b] &&
		    (err = p->dev->copy(m->h[b], m->b[b], m->nb[b], GNN_D2H, m->stream, 0)))
			return gnn_error(GNN_ERR_CUDA, "%s: reading the trained weights back: %s", p->name, p->dev->errstr(err));
	}
	m->stale = 0;
	return gnn_prog_loadtime_(m);
}

gnn_status
gnn_prog_save(void *mv, const char *path)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p;
	const void **src;
	gnn_status s;
	int i;

	if (!m || !path)
		return gnn_error(GNN_ERR_ARG, "save_weights: NULL argument");
	p = m->prog;
	if ((s = gnn_prog_refresh_(m)) != GNN_OK)
		return s;
	if (!(src = (const void **)gnn_realloc(NULL, 0, ((size_t)p->nparam + 1) * sizeof *src)))
		return gnn_error(GNN_ERR_MEM, "%s_save_weights: out of memory", p->name);
	for (i = 0; i < p->nparam; i++)
		src[i] = m->h[p->param[i]];
	s = gnn_save_params(path, p->params, p->nparam, src);
	gnn_free(src, ((size_t)p->nparam + 1) * sizeof *src);
	return s;
}

gnn_status
gnn_prog_init(void *mv, uint64_t seed)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p;
	int i, b, err;
	int64_t k, n;

	if (!m)
		return gnn_error(GNN_ERR_ARG, "init_weights: NULL model");
	p = m->prog;
	if ((err = p->dev->sync(m->stream)))
		return gnn_error(GNN_ERR_CUDA, "%s_init_weights: an earlier call failed: %s", p->name, p->dev->errstr(err));
	for (i = 0; i < p->nparam; i++) {
		const gnn_buffer *d = &p->buf[b = p->param[i]];
		n = (int64_t)(m->nb[b] / gnn_dtype_size((gnn_dtype)d->dtype));
		if (d->flags & GNN_BUF_UNIFORM)
			gnn_init_uniform((float *)m->h[b], n, d->init, seed, (uint32_t)i);
		else
			for (k = 0; k < n; k++)
				switch (d->dtype) {
				case GNN_F32: ((float *)m->h[b])[k] = (float)d->init; break;
				case GNN_F64: ((double *)m->h[b])[k] = d->init; break;
				case GNN_I64: ((int64_t *)m->h[b])[k] = (int64_t)d->init; break;
				case GNN_I32: ((int32_t *)m->h[b])[k] = (int32_t)d->init; break;
				default: ((unsigned char *)m->h[b])[k] = d->init != 0; break;
				}
		if (m->b[b] != m->h[b] && m->nb[b] &&
		    (err = p->dev->copy(m->b[b], m->h[b], m->nb[b], GNN_H2D, m->stream, 0)))
			return gnn_error(GNN_ERR_CUDA, "%s_init_weights: upload failed: %s", p->name, p->dev->errstr(err));
	}
	m->stale = 0;
	m->weightgen++;   /* a training step's once-time values may read them */
	return gnn_prog_loadtime_(m);
}

gnn_status
gnn_prog_to_device(void *mv, const void *src, size_t n, void **out)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_device *dev;
	int err;

	if (!m || !out || (n && !src))
		return gnn_error(GNN_ERR_ARG, "to_device: NULL argument");
	dev = m->prog->dev;
	*out = NULL;
	if ((err = dev->alloc(out, n ? n : 1)))
		return gnn_devfail_(dev, err, n ? n : 1, m->prog->name, "to_device");
	if (n && (err = dev->copy(*out, src, n, GNN_H2D, m->stream, 0))) {
		dev->free(*out);
		*out = NULL;
		return gnn_error(GNN_ERR_CUDA, "%s: copy to the device failed: %s", m->prog->name, dev->errstr(err));
	}
	return GNN_OK;
}

gnn_status
gnn_prog_from_device(void *mv, void *dst, const void *src, size_t n)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_device *dev;
	int err;

	if (!m || (n && (!dst || !src)))
		return gnn_error(GNN_ERR_ARG, "from_device: NULL argument");
	dev = m->prog->dev;
	/* the model's work on its stream first: src may be forward's output */
	if (n && ((err = dev->sync(m->stream)) || (err = dev->copy(dst, src, n, GNN_D2H, m->stream, 0))))
		return gnn_error(GNN_ERR_CUDA, "%s: copy from the device failed: %s", m->prog->name, dev->errstr(err));
	return GNN_OK;
}

void
gnn_prog_free_device(void *mv, void *p)
{
	gnn_instance *m = (gnn_instance *)mv;

	if (m && p)
		m->prog->dev->free(p);
}
