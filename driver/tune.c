/*
 * The tuning run (gnncc --tune): every candidate schedule of every
 * kernel that the cost model would otherwise choose for is compiled into
 * one shared object (a tuning build: codegen's CodegenOpts.tune), which
 * runs on the target with the given graph, random weights and random
 * inputs.  Kernels are tuned one at a time in launch order, the earlier
 * ones already at their winners: each candidate first runs a whole
 * forward whose outputs must equal the reference schedule's (1e-5 of
 * the largest output), then is timed alone (median of repeats).  A
 * candidate that disagrees is a compiler bug: reported, never chosen.
 *
 * The tuning build is a copy of the module (printed and parsed back)
 * without memory slots, so that after one forward every kernel's
 * operands are still in place to time it again.  A budget bounds the
 * whole run; kernels not reached keep the cost model's choice.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/gnnrt.h"
#include "engine.h"
#include "schedules.h"
#include "toolchain.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* a copy of m: its text parsed back (the round trip is exact) */
static Mod *
clonemod(Mod *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	Mod *c;

	if (!f)
		die("tune: open_memstream failed");
	printmod(f, m);
	fclose(f);
	c = parseir("<tuning>", text, len);
	if (!c)
		die("tune: the module does not read back");
	free(text);
	return c;
}

/* the tuning build: no shared memory slots, and its candidates in
 * place of the schedules chosen so far */
static void
tuningattrs(Mod *m)
{
	Fn *fn;
	int i;

	for (fn = m->fn; fn; fn = fn->link)
		for (i = 0; i < fn->nins; i++) {
			dropattr(fn, &fn->ins[i], "slot");
			dropattr(fn, &fn->ins[i], "sched");
		}
}

/* a deterministic uniform in [-1, 1) */
static float
rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((double)(*s >> 40) / (double)(1ull << 23) - 1.0);
}

static void
progress(const char *model, int done, int total, double left)
{
	int k, w = 24, fill = total ? done * w / total : w;

	if (!isatty(2))
		return;
	fprintf(stderr, "\rtuning %s [", model);
	for (k = 0; k < w; k++)
		fputc(k < fill ? '#' : '.', stderr);
	if (left < 0)   /* no budget (--tune-budget=0) */
		fprintf(stderr, "] %d/%d kernels ", done, total);
	else
		fprintf(stderr, "] %d/%d kernels, %.0f s left ", done, total, left > 0 ? left : 0);
	if (done == total)
		fputc('\n', stderr);
	fflush(stderr);
}

static bool
endswith(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* random weights for desc's parameters, in a temporary safetensors file */
static char *
randomweights(const gnn_model_desc *d, uint64_t *seed)
{
	char *path = tempname("tune-weights.safetensors");
	const char **names = emalloc((d->nparams + 1) * sizeof *names);
	gnn_array *arr = emalloc((d->nparams + 1) * sizeof *arr);
	int i, k;
	gnn_status s;

	for (i = 0; i < d->nparams; i++) {
		const gnn_tensor_info *t = &d->params[i];
		int64_t n = 1, j;
		names[i] = t->name;
		arr[i].dtype = t->dtype;
		arr[i].rank = t->rank;
		for (k = 0; k < t->rank; k++)
			n *= (arr[i].shape[k] = t->shape[k]);
		arr[i].nbytes = (size_t)n * gnn_dtype_size(t->dtype);
		arr[i].data = emalloc(arr[i].nbytes);
		/* BatchNorm's running variances must be positive, or the
		 * reference is NaN and no candidate can be checked against it */
		if (t->dtype == GNN_F32)
			for (j = 0; j < n; j++)
				((float *)arr[i].data)[j] = endswith(t->name, "running_var") ? 0.75f + 0.25f * rnd(seed) :
				                            0.5f * rnd(seed);
	}
	s = gnn_st_write(path, names, arr, d->nparams);
	for (i = 0; i < d->nparams; i++)
		free(arr[i].data);
	free(arr);
	free(names);
	if (s != GNN_OK) {
		fprintf(stderr, "gnncc: error: tuning: %s\n", gnn_errmsg());
		free(path);
		return NULL;
	}
	return path;
}

/* host buffers for the inputs (random; an input --input-density names
 * has that share of non-zeros, so that a kernel that skips zeros is
 * timed on what it will see) and outputs once bound */
static int
buffers(const gnn_model_desc *d, const char *density, void *model, int64_t nodes, uint64_t *seed, void **in, void **out,
        void **ref, size_t *outn)
{
	int i, k;

	for (i = 0; i < d->ninputs; i++) {
		const gnn_tensor_info *t = &d->inputs[i];
		int64_t n = 1, j;
		double dn;
		const char *dims = t->dims + (t->dims[0] == '[');
		for (k = 0; k < t->rank; k++) {
			int64_t x = t->shape[k];
			if (x < 0) {
				/* a symbolic dim: only N is known from the graph alone */
				if (k != 0 || (strncmp(dims, "N,", 2) != 0 && strcmp(dims, "N]") != 0)) {
					fprintf(stderr, "gnncc: error: tuning: cannot make input '%s' of shape %s (only N is known from a graph)\n", t->name, t->dims);
					return -1;
				}
				x = nodes;
			}
			n *= x;
		}
		if (t->dtype != GNN_F32) {
			fprintf(stderr, "gnncc: error: tuning: input '%s' is %s; only f32 inputs are made up\n", t->name, gnn_dtype_name(t->dtype));
			return -1;
		}
		in[i] = emalloc((size_t)n * sizeof(float));
		dn = densityof(density, t->name);
		for (j = 0; j < n; j++)
			((float *)in[i])[j] = dn > 0 && (rnd(seed) + 1) / 2 >= dn ? 0.0f : rnd(seed);
	}
	for (i = 0; i < d->noutputs; i++) {
		int64_t shape[GNN_MAX_RANK], n = 1;
		if (d->output_shape(model, i, shape) != GNN_OK) {
			fprintf(stderr, "gnncc: error: tuning: %s\n", gnn_errmsg());
			return -1;
		}
		for (k = 0; k < d->outputs[i].rank; k++)
			n *= shape[k];
		outn[i] = (size_t)n;
		out[i] = emalloc((size_t)n * gnn_dtype_size(d->outputs[i].dtype));
		ref[i] = emalloc((size_t)n * gnn_dtype_size(d->outputs[i].dtype));
	}
	return 0;
}

/* every float output finite */
static bool
finite(const gnn_model_desc *d, void **ref, const size_t *outn)
{
	int i;
	size_t j;

	for (i = 0; i < d->noutputs; i++)
		for (j = 0; d->outputs[i].dtype == GNN_F32 && j < outn[i]; j++)
			if (!isfinite(((float *)ref[i])[j]))
				return false;
	return true;
}

/* outputs agree with the reference's to tol of its largest magnitude */
static bool
agrees(const gnn_model_desc *d, void **out, void **ref, const size_t *outn, double tol, double *err)
{
	int i;
	size_t j;

	*err = 0;
	for (i = 0; i < d->noutputs; i++) {
		double mx = 0, e = 0;
		if (d->outputs[i].dtype != GNN_F32)
			return memcmp(out[i], ref[i], outn[i] * gnn_dtype_size(d->outputs[i].dtype)) == 0;
		for (j = 0; j < outn[i]; j++) {
			double r = ((float *)ref[i])[j], o = ((float *)out[i])[j];
			if (fabs(r) > mx)
				mx = fabs(r);
			if (!(fabs(o - r) <= e))
				e = isnan(o - r) ? INFINITY : fabs(o - r);
		}
		e /= mx > 1 ? mx : 1;
		if (e > *err)
			*err = e;
	}
	return *err <= tol;
}

int
tune(Mod *m, const SchedOpts *o, Choices *cs, gnn_graph *g)
{
	SchedTarget st = {.target = o->target, .openmp = o->openmp, .vendor = o->vendor};
	CodegenOpts co = {.target = o->target, .cpu = o->cpu, .gpumath = o->gpumath, .vendor = o->vendor, .source = o->source, .header = "model.h"};
	Mod *tm;
	TuneCands *tc;
	Engine en = {0};
	Fn *fn;
	int nfn = 0, f, i, k, c, rc = -1, total = 0, done = 0;
	double t0 = now(), budget = o->budget;
	uint64_t seed = 42;
	char *sym, text[128];

	for (fn = m->fn; fn; fn = fn->link)
		nfn++;
	tc = emalloc((nfn + 1) * sizeof *tc);
	/* the candidates: the whole space where the cost model chose, the
	 * choice alone where the user or the cache did */
	for (i = 0, f = -1; i < cs->n; i++) {
		Choice *ch = &cs->c[i];
		if (i == 0 || strcmp(ch->model, cs->c[i - 1].model) != 0)
			f++;
		k = tc[f].nkernels++;
		tc[f].ncand = erealloc(tc[f].ncand, tc[f].nkernels * sizeof *tc[f].ncand);
		tc[f].cand = erealloc(tc[f].cand, tc[f].nkernels * sizeof *tc[f].cand);
		tc[f].cand[k] = emalloc(256 * sizeof(Sched));
		if (ch->why == WhyCost && ch->ncand > 1) {
			tc[f].ncand[k] = schedspace(&ch->k, &st, tc[f].cand[k], 256);
			if (o->maxcand > 0 && tc[f].ncand[k] > o->maxcand)
				tc[f].ncand[k] = o->maxcand;   /* the reference is first */
			total++;
		} else {
			tc[f].ncand[k] = 1;
			tc[f].cand[k][0] = ch->s;
		}
	}
	if (total == 0) {
		rc = 0;
		goto out;
	}
	tm = clonemod(m);
	tuningattrs(tm);
	co.tune = tc;
	if (enginebuild(&en, tm, &co, o->openmp, o->emu, "gnncc") < 0) {
		freemod(tm);
		goto out;
	}
	freemod(tm);
	for (fn = m->fn, f = 0; fn; fn = fn->link, f++) {
		const gnn_model_desc *d;
		const gnn_tune_desc *td;
		void *model = NULL, *in[64] = {0}, *out[64] = {0}, *ref[64] = {0};
		size_t outn[64];
		char *wpath = NULL;
		int base;
		bool ok = false;

		for (base = 0; base < cs->n && strcmp(cs->c[base].model, fn->name) != 0; base++)
			;
		d = (const gnn_model_desc *)dlsym(en.handle, sym = astrfmt(NULL, "%s_desc", fn->name));
		free(sym);
		td = (const gnn_tune_desc *)dlsym(en.handle, sym = astrfmt(NULL, "%s_tune", fn->name));
		free(sym);
		if (!d || !td || td->nkernels != tc[f].nkernels)
			die("tune: the tuning build of %s lacks its descriptors", fn->name);
		if (d->ninputs > 64 || d->noutputs > 64) {
			fprintf(stderr, "gnncc: error: tuning: %s has too many inputs or outputs\n", fn->name);
			goto out;
		}
		if (td->arch && td->arch())
			snprintf(cs->archkey, sizeof cs->archkey, "%s", td->arch());
		if (!(wpath = randomweights(d, &seed)))
			goto out;
		if (d->create(&model) != GNN_OK || d->load_weights(model, wpath) != GNN_OK || d->bind(model, g) != GNN_OK)
			goto rterr;
		if (buffers(d, o->density, model, gnn_graph_num_nodes(g), &seed, in, out, ref, outn) < 0)
			goto model_out;   /* it said why */
		if (d->forward_host(model, (const void *const *)in, ref) != GNN_OK)
			goto rterr;
		if (!finite(d, ref, outn)) {
			/* nothing to check candidates against: keep the cost model's */
			fprintf(stderr, "gnncc: warning: tuning: %s's outputs on random weights are not finite; "
			        "its kernels keep the cost model's schedules\n", fn->name);
			ok = true;
			goto model_out;
		}
		for (k = 0; k < td->nkernels; k++) {
			Choice *ch = &cs->c[base + k];
			int best = -1;
			double bt = 0, reft = 0, us, err;
			if (td->ncand[k] <= 1)
				continue;
			progress(fn->name, done, total, budget ? fmax(budget - (now() - t0), 0) : -1);
			if (budget > 0 && now() - t0 > budget) {
				fprintf(stderr, "gnncc: note: the tuning budget (%.0f s) is spent: %s %s keeps the cost model's schedule\n",
				        budget, fn->name, ch->k.name);
				done++;
				continue;
			}
			for (c = 0; c < td->ncand[k]; c++) {
				td->select(model, k, c);
				if (d->forward_host(model, (const void *const *)in, out) != GNN_OK)
					goto rterr;
				/* TF32 GEMMs against the reference's FP32 loops: TF32's
				 * tolerance (docs/cli.md) */
				if (!agrees(d, out, ref, outn, o->gpumath == GpuMathTF32 ? TF32Tol : 1e-5, &err)) {
					schedprint(text, sizeof text, &tc[f].cand[k][c]);
					fprintf(stderr, "gnncc: warning: internal error: schedule %s of %s %s disagrees with the reference (error %.3g); not used\n",
					        text, fn->name, ch->k.name, err);
					continue;
				}
				if (td->time(model, k, o->repeats ? o->repeats : 3, &us) != GNN_OK)
					goto rterr;
				/* more repeats for short kernels, within reason */
				if (!o->repeats && us < 20000 && td->time(model, k, us < 1000 ? 31 : 9, &us) != GNN_OK)
					goto rterr;
				if (c == 0)
					reft = us;
				if (best < 0 || us < bt) {
					best = c;
					bt = us;
				}
			}
			if (best < 0)
				die("tune: the reference schedule of %s %s disagrees with itself", fn->name, ch->k.name);
			td->select(model, k, best);
			ch->s = tc[f].cand[k][best];
			ch->why = WhyTuned;
			ch->ntried = td->ncand[k];
			ch->us = bt;
			ch->refus = reft;
			setsched(fn, &ch->k, &ch->s);
			done++;
		}
		progress(fn->name, done, total, budget ? fmax(budget - (now() - t0), 0) : -1);
		ok = true;
		goto model_out;
	rterr:
		fprintf(stderr, "gnncc: error: tuning %s: %s\n", fn->name, gnn_errmsg());
	model_out:
		for (i = 0; i < 64; i++) {
			free(in[i]);
			free(out[i]);
			free(ref[i]);
		}
		if (model)
			d->destroy(model);
		free(wpath);
		if (!ok)
			goto out;
	}
	rc = 0;
out:
	engineclose(&en);
	for (f = 0; f < nfn; f++) {
		for (k = 0; k < tc[f].nkernels; k++)
			free(tc[f].cand[k]);
		free(tc[f].cand);
		free(tc[f].ncand);
	}
	free(tc);
	return rc;
}
