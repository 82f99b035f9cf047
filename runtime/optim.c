/*
** optim.c: training's optimizers (gnnrt.h), the host half.
**
** An optimizer is a table of its group's non-empty tensors (gnn_optseg:
** the parameter, its gradient, its state, and its first index in the
** group's concatenation) and one block of state, both in the device's
** memory, so that a step is one launch of the device's gnn_devoptim
** (optim.cu; a loop on the cpu device) with the step's constants as its
** arguments.  The constants are computed here in double, as Python
** computes torch's scalars (beta1 ** step and the rest), then cast to
** float as torch casts a Scalar; optim.h does the float arithmetic.
*/
#include <math.h>
#include <string.h>

#include "device.h"
#include "internal.h"
#include "optim.h"

struct gnn_optim {
	const gnn_device *dev;
	void *stream;
	gnn_optim_config cfg;
	int n;                 /* table entries: the non-empty tensors */
	int64_t total;         /* their elements */
	int64_t t;             /* steps taken */
	int started;           /* SGD: the momentum buffers hold a step */
	gnn_optseg *tab;       /* device memory (host for a shared device) */
	float *state;          /* nstate * total floats, likewise */
	int nstate;
};

static const char *
kindname(int k)
{
	return k == GNN_OPTIM_SGD ? "SGD" : k == GNN_OPTIM_ADAM ? "Adam" : k == GNN_OPTIM_ADAMW ? "AdamW" : "?";
}

/* torch's checks (and finiteness, which torch leaves to chance) */
static gnn_status
checkcfg(const char *who, const gnn_optim_config *c)
{
	const char *k;

	if (!c)
		return gnn_fail(GNN_ERR_ARG, "%s: config is NULL", who);
	if (c->kind != GNN_OPTIM_SGD && c->kind != GNN_OPTIM_ADAM && c->kind != GNN_OPTIM_ADAMW)
		return gnn_fail(GNN_ERR_ARG, "%s: unknown optimizer kind %d", who, (int)c->kind);
	k = kindname(c->kind);
	/* !(x >= 0) also catches NaN */
	if (!(c->lr >= 0) || !isfinite(c->lr))
		return gnn_fail(GNN_ERR_ARG, "%s: %s: invalid learning rate %g (must be finite and >= 0)", who, k, c->lr);
	if (!(c->weight_decay >= 0) || !isfinite(c->weight_decay))
		return gnn_fail(GNN_ERR_ARG, "%s: %s: invalid weight_decay %g (must be finite and >= 0)", who, k,
			c->weight_decay);
	if (c->kind == GNN_OPTIM_SGD) {
		if (!(c->momentum >= 0) || !isfinite(c->momentum))
			return gnn_fail(GNN_ERR_ARG, "%s: SGD: invalid momentum %g (must be finite and >= 0)", who,
				c->momentum);
		if (!isfinite(c->dampening))
			return gnn_fail(GNN_ERR_ARG, "%s: SGD: invalid dampening %g", who, c->dampening);
		if (c->nesterov && (c->momentum <= 0 || c->dampening != 0))
			return gnn_fail(GNN_ERR_ARG, "%s: SGD: nesterov momentum requires a momentum > 0 and zero "
				"dampening (momentum %g, dampening %g)", who, c->momentum, c->dampening);
		return GNN_OK;
	}
	if (!(c->eps >= 0) || !isfinite(c->eps))
		return gnn_fail(GNN_ERR_ARG, "%s: %s: invalid eps %g (must be finite and >= 0)", who, k, c->eps);
	if (!(c->beta1 >= 0 && c->beta1 < 1))
		return gnn_fail(GNN_ERR_ARG, "%s: %s: invalid beta1 %g (must be in [0, 1))", who, k, c->beta1);
	if (!(c->beta2 >= 0 && c->beta2 < 1))
		return gnn_fail(GNN_ERR_ARG, "%s: %s: invalid beta2 %g (must be in [0, 1))", who, k, c->beta2);
	return GNN_OK;
}

/* floats of state a tensor element needs under c */
static int
nstate(const gnn_optim_config *c)
{
	return c->kind == GNN_OPTIM_SGD ? c->momentum != 0 : 2;
}

/* device memory of n bytes (gnn_malloc's on a shared device), zeroed or not */
static gnn_status
devalloc(const gnn_device *dev, void **p, size_t n)
{
	int err;

	*p = NULL;
	if (!n)
		return GNN_OK;
	if (!dev->separate) {
		if (!(*p = gnn_malloc(n)))
			return gnn_fail(GNN_ERR_MEM, "gnn_optim: out of memory for %zu bytes", n);
		return GNN_OK;
	}
	if ((err = dev->alloc(p, n)) != 0) {
		*p = NULL;
		return gnn_devfail_(dev, err, n, "gnn_optim", dev->name);
	}
	return GNN_OK;
}

static void
devfree(const gnn_device *dev, void *p, size_t n)
{
	if (!p)
		return;
	if (dev->separate)
		dev->free(p);
	else
		gnn_free(p, n);
}

static size_t
statebytes(int ns, int64_t total)
{
	return (size_t)ns * (size_t)total * sizeof(float);
}

/* fresh zeroed state of ns floats an element for o, into the table tab
 * (host); the old state stays until the caller swaps it in */
static gnn_status
mkstate(gnn_optim *o, int ns, gnn_optseg *tab, float **state)
{
	size_t nb = statebytes(ns, o->total);
	gnn_status s;
	int err;

	if ((s = devalloc(o->dev, (void **)state, nb)) != GNN_OK)
		return s;
	if (nb && (err = o->dev->optim->zero(*state, nb, o->stream)) != 0) {
		devfree(o->dev, *state, nb);
		*state = NULL;
		return gnn_fail(GNN_ERR_CUDA, "gnn_optim: %s: cannot zero the state: %s", o->dev->name,
			o->dev->errstr(err));
	}
	for (int i = 0; i < o->n; i++) {
		tab[i].m = ns > 0 ? *state + tab[i].off : NULL;
		tab[i].v = ns > 1 ? *state + o->total + tab[i].off : NULL;
	}
	return GNN_OK;
}

/* the table, from host tab, into o->tab (device): a synchronous copy */
static gnn_status
puttab(gnn_optim *o, const gnn_optseg *tab)
{
	int err;

	if (!o->dev->separate || !o->n)
		return GNN_OK;
	if ((err = o->dev->copy(o->tab, tab, (size_t)o->n * sizeof *tab, GNN_H2D, o->stream, 0)) != 0)
		return gnn_fail(GNN_ERR_CUDA, "gnn_optim: %s: cannot copy the tensor table: %s", o->dev->name,
			o->dev->errstr(err));
	return GNN_OK;
}

static gnn_status
checkmem(const gnn_device *dev, const void *p, const char *what, int i)
{
	if (dev->separate && dev->fwd && dev->fwd->memtype && dev->fwd->memtype(p) != GNN_MEM_DEVICE)
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_create: %s[%d] is not %s device memory", what, i, dev->name);
	return GNN_OK;
}

gnn_status
gnn_optim_create(const gnn_device *dev, void *stream, int n, float *const *param, const float *const *grad,
	const int64_t *size, const gnn_optim_config *cfg, gnn_optim **out)
{
	gnn_optim *o = NULL;
	gnn_optseg *tab = NULL;
	size_t tabbytes = 0;
	int64_t total = 0;
	int k = 0;
	gnn_status s;

	if (!out)
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_create: out is NULL");
	*out = NULL;
	if (!dev)
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_create: device is NULL");
	if (!dev->optim)
		return gnn_fail(GNN_ERR_STATE, "gnn_optim_create: the %s device has no optimizer kernels "
			"(built without nvcc?)", dev->name);
	if (n < 0 || (n > 0 && (!param || !grad || !size)))
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_create: bad tensor list (n = %d%s%s%s)", n,
			n > 0 && !param ? ", param NULL" : "", n > 0 && !grad ? ", grad NULL" : "",
			n > 0 && !size ? ", size NULL" : "");
	if ((s = checkcfg("gnn_optim_create", cfg)) != GNN_OK)
		return s;
	for (int i = 0; i < n; i++) {
		if (size[i] < 0)
			return gnn_fail(GNN_ERR_ARG, "gnn_optim_create: size[%d] is %lld", i, (long long)size[i]);
		if (size[i] == 0)
			continue;
		if (!param[i] || !grad[i])
			return gnn_fail(GNN_ERR_ARG, "gnn_optim_create: %s[%d] is NULL", !param[i] ? "param" : "grad", i);
		if ((s = checkmem(dev, param[i], "param", i)) != GNN_OK ||
		    (s = checkmem(dev, grad[i], "grad", i)) != GNN_OK)
			return s;
		/* the state's bytes (two floats an element) must fit size_t too */
		if (size[i] > (INT64_MAX / 8 - total) || (uint64_t)(total + size[i]) > SIZE_MAX / 8)
			return gnn_fail(GNN_ERR_SHAPE, "gnn_optim_create: the tensors' sizes overflow");
		total += size[i];
		k++;
	}
	if (!(o = gnn_malloc(sizeof *o)))
		return gnn_fail(GNN_ERR_MEM, "gnn_optim_create: out of memory");
	*o = (gnn_optim){.dev = dev, .stream = stream, .cfg = *cfg, .n = k, .total = total, .nstate = nstate(cfg)};
	tabbytes = (size_t)k * sizeof *tab;
	if (k && !(tab = gnn_malloc(tabbytes))) {
		s = gnn_fail(GNN_ERR_MEM, "gnn_optim_create: out of memory");
		goto fail;
	}
	k = 0;
	total = 0;
	for (int i = 0; i < n; i++)
		if (size[i] > 0) {
			tab[k++] = (gnn_optseg){total, param[i], grad[i], NULL, NULL};
			total += size[i];
		}
	if ((s = mkstate(o, o->nstate, tab, &o->state)) != GNN_OK)
		goto fail;
	if (dev->separate) {
		if ((s = devalloc(dev, (void **)&o->tab, tabbytes)) != GNN_OK || (s = puttab(o, tab)) != GNN_OK)
			goto fail;
		gnn_free(tab, tabbytes);
	} else
		o->tab = tab;   /* the host table is the device's */
	*out = o;
	return GNN_OK;
fail:
	if (dev->separate)
		devfree(dev, o->tab, tabbytes);
	devfree(dev, o->state, statebytes(o->nstate, total));
	gnn_free(tab, tabbytes);
	gnn_free(o, sizeof *o);
	return s;
}

gnn_status
gnn_optim_step(gnn_optim *o)
{
	const gnn_optim_config *c;
	gnn_optargs a = {0};
	double t;
	int err;

	if (!o)
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_step: optimizer is NULL");
	c = &o->cfg;
	t = (double)(o->t + 1);
	a.kind = c->kind;
	a.wd = c->weight_decay != 0;
	if (c->kind == GNN_OPTIM_SGD) {
		a.momentum = c->momentum != 0;
		a.first = !o->started;
		a.nesterov = c->nesterov;
		a.decay = (float)c->weight_decay;
		a.mom = (float)c->momentum;
		a.damp1 = (float)(1 - c->dampening);
		a.neglr = (float)-c->lr;
	} else {
		/* Python's floats: bias_correction1 = 1 - beta1 ** step, ...,
		 * bias_correction2 ** 0.5 (pow, as CPython's float power) */
		double bc1 = 1 - pow(c->beta1, t), bc2 = 1 - pow(c->beta2, t);
		a.decay = (float)(c->kind == GNN_OPTIM_ADAMW ? 1 - c->lr * c->weight_decay : c->weight_decay);
		a.w1 = (float)(1 - c->beta1);
		a.w1c = 1.0f - a.w1;
		a.small = fabsf(a.w1) < 0.5f;
		a.b2 = (float)c->beta2;
		a.w2 = (float)(1 - c->beta2);
		a.negstep = (float)-(c->lr / bc1);
		a.bc2sqrt = (float)pow(bc2, 0.5);
		a.eps = (float)c->eps;
	}
	if (o->total > 0) {
		err = o->dev->optim->step(o->tab, o->n, o->total, &a, o->stream);
		if (err)
			return gnn_fail(GNN_ERR_CUDA, "gnn_optim_step: %s: %s", o->dev->name, o->dev->errstr(err));
	}
	o->t++;
	if (a.momentum)
		o->started = 1;
	return GNN_OK;
}

gnn_status
gnn_optim_set(gnn_optim *o, const gnn_optim_config *cfg)
{
	gnn_optseg *tab = NULL;
	float *state = NULL;
	size_t tabbytes;
	int ns, err;
	gnn_status s;

	if (!o)
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_set: optimizer is NULL");
	if ((s = checkcfg("gnn_optim_set", cfg)) != GNN_OK)
		return s;
	if (cfg->kind != o->cfg.kind)
		return gnn_fail(GNN_ERR_ARG, "gnn_optim_set: cannot change the optimizer from %s to %s",
			kindname(o->cfg.kind), kindname(cfg->kind));
	ns = nstate(cfg);
	if (ns > o->nstate && o->total > 0) {
		/* SGD's momentum turned on: buffers now, which start at the next
		 * step, as torch's start where momentum_buffer is None */
		tabbytes = (size_t)o->n * sizeof *tab;
		if (!o->dev->separate) {
			if ((s = mkstate(o, ns, o->tab, &state)) != GNN_OK)
				return s;
		} else {
			if (!(tab = gnn_malloc(tabbytes)))
				return gnn_fail(GNN_ERR_MEM, "gnn_optim_set: out of memory");
			if ((err = o->dev->copy(tab, o->tab, tabbytes, GNN_D2H, o->stream, 0)) != 0) {
				s = gnn_fail(GNN_ERR_CUDA, "gnn_optim_set: %s: cannot read the tensor table: %s",
					o->dev->name, o->dev->errstr(err));
				gnn_free(tab, tabbytes);
				return s;
			}
			if ((s = mkstate(o, ns, tab, &state)) != GNN_OK || (s = puttab(o, tab)) != GNN_OK) {
				devfree(o->dev, state, statebytes(ns, o->total));
				gnn_free(tab, tabbytes);
				return s;
			}
			gnn_free(tab, tabbytes);
		}
		devfree(o->dev, o->state, statebytes(o->nstate, o->total));
		o->state = state;
		o->nstate = ns;
		o->started = 0;
	}
	o->cfg = *cfg;
	return GNN_OK;
}

int64_t
gnn_optim_steps(const gnn_optim *o)
{
	return o ? o->t : 0;
}

void
gnn_optim_destroy(gnn_optim *o)
{
	if (!o)
		return;
	if (o->dev->separate)
		devfree(o->dev, o->tab, (size_t)o->n * sizeof *o->tab);
	else
		gnn_free(o->tab, (size_t)o->n * sizeof *o->tab);
	devfree(o->dev, o->state, statebytes(o->nstate, o->total));
	gnn_free(o, sizeof *o);
}
