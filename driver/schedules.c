/*
 * Choosing schedules (schedules.h): forced > tuning cache > tuning run >
 * cost model, kernel by kernel, with the reason kept for the report.
 *
 * The graph a compile is for (--tune-graph, or a synthetic one) gives
 * the cost model its degree statistics and the cache its bucket: log2 of
 * the node count, the edge count and the largest in-degree, so a graph
 * of about the same shape reuses what was tuned on another.  Without a
 * graph the cost model assumes a typical one and the cache takes the
 * newest entry for the kernel whatever its bucket.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../runtime/gnnrt.h"
#include "options.h"
#include "schedules.h"
#include "toolchain.h"

int
parseforce(const char *arg, SchedForce *f)
{
	const char *colon = strchr(arg, ':');
	char err[256];

	f->kernel = NULL;
	if (!colon || colon == arg) {
		opterror("--schedule: expected KERNEL:FIELDS (g0:lanes=8,rows=32, or all:...), not '%s'", arg);
		return -1;
	}
	/* schedparse's messages are its own, short and bounded */
	if (schedparse(colon + 1, &f->s, err, sizeof err) < 0) {
		opterror("%s", err);
		return -1;
	}
	f->kernel = estrdup(arg);
	f->kernel[colon - arg] = '\0';
	return 0;
}

/* in-degree statistics, from the graph's CSR by target */
static void
statsof(const gnn_graph *g, GraphStats *gs)
{
	const int64_t *rp = gnn_graph_rowptr(g);
	int64_t nodes = gnn_graph_num_nodes(g), ne = gnn_graph_num_edges(g), i, mx = 0;
	double mean = nodes ? (double)ne / (double)nodes : 0, var = 0;

	for (i = 0; i < nodes; i++) {
		int64_t d = rp[i + 1] - rp[i];
		var += ((double)d - mean) * ((double)d - mean);
		if (d > mx)
			mx = d;
	}
	gs->nodes = nodes;
	gs->edges = ne;
	gs->maxdeg = mx;
	gs->meandeg = mean;
	gs->cvdeg = nodes && mean > 0 ? sqrt(var / (double)nodes) / mean : 0;
}

static int
ilog2(int64_t x)
{
	int k = 0;

	while (x > 1) {
		x >>= 1;
		k++;
	}
	return k;
}

static void archwhere(const SchedOpts *o, char *buf, size_t n);

/* where the generated code will run, and for cuda how its GEMMs
 * multiply (tf32 timings are not fp32's): the cache's arch field */
static void
archkey(const SchedOpts *o, char *buf, size_t n)
{
	size_t k;

	archwhere(o, buf, n);
	k = strlen(buf);
	if (o->target != TargetCPU && k && o->gpumath != GpuMathFP32)
		snprintf(buf + k, n - k, "/%s", optgpumaths[o->gpumath]);
	k = strlen(buf);
	/* a cached vendor call must not reach a build that cannot link it */
	if (o->target != TargetCPU && k && o->vendor)
		snprintf(buf + k, n - k, "/%s", vendorname(o->vendor));
}

static void
archwhere(const SchedOpts *o, char *buf, size_t n)
{
	buf[0] = 0;
	if (o->target == TargetCPU) {
		struct utsname u;
		char model[96] = "unknown", line[256];
		FILE *f = fopen("/proc/cpuinfo", "r");
		size_t k;
		while (f && fgets(line, sizeof line, f))
			if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
				snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		if (f)
			fclose(f);
		for (k = 0; model[k]; k++)
			if (model[k] == '"' || model[k] == '\\' || (unsigned char)model[k] < ' ')
				model[k] = '_';
		if (snprintf(buf, n, "%s/%s/%ld%s%s%s", uname(&u) == 0 ? u.machine : "?", model,
		             sysconf(_SC_NPROCESSORS_ONLN), o->openmp ? "/omp" : "", o->cpu ? "/" : "",
		             o->cpu ? optcpus[o->cpu] : "") >= (int)n)
			buf[n - 1] = 0;   /* a cut key is still this machine's, and still terminated */
		return;
	}
	/* the emulated device's timings are the CPU's: never a GPU's entries */
	if (o->emu) {
		snprintf(buf, n, "emu");
		return;
	}
	/* cuda: one named architecture, else the GPU here */
	if (o->arch && strncmp(o->arch, "sm_", 3) == 0 && !strchr(o->arch, ',')) {
		snprintf(buf, n, "%s", o->arch);
		return;
	}
	{
		FILE *p = popen("nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null", "r");
		int major, minor;
		if (p && fscanf(p, "%d.%d", &major, &minor) == 2)
			snprintf(buf, n, "sm_%d%d", major, minor);
		if (p)
			pclose(p);
	}
}

/* the graph schedules are chosen for; NULL after a message */
static gnn_graph *
loadgraph(const SchedOpts *o)
{
	gnn_graph *g = NULL;
	int64_t *ei;

	if (o->synnodes <= 0) {
		if (gnn_graph_read_npy(&g, o->graph, o->nodes) != GNN_OK)
			fprintf(stderr, "%s: error: --tune-graph: %s\n", o->who, gnn_errmsg());
		return g;
	}
	{
		gnn_synth_spec sp = {.nodes = o->synnodes, .edges = o->synedges, .alpha = 1.0, .seed = 1};
		if (!(ei = malloc((size_t)(o->synedges > 0 ? 2 * o->synedges : 1) * sizeof *ei))) {
			fprintf(stderr, "%s: error: --tune-synthetic: out of memory\n", o->who);
			return NULL;
		}
		if (gnn_synth_edges(&sp, ei) != GNN_OK || gnn_graph_from_edge_index(&g, ei, GNN_I64, o->synedges, o->synnodes) != GNN_OK)
			fprintf(stderr, "%s: error: --tune-synthetic: %s\n", o->who, gnn_errmsg());
		free(ei);
	}
	return g;
}

static const SchedForce *
forced(const SchedOpts *o, const char *kernel)
{
	int i;

	/* the last one given wins; a named kernel over all */
	for (i = o->nforce - 1; i >= 0; i--)
		if (strcmp(o->force[i].kernel, kernel) == 0)
			return &o->force[i];
	for (i = o->nforce - 1; i >= 0; i--)
		if (strcmp(o->force[i].kernel, "all") == 0)
			return &o->force[i];
	return NULL;
}

/* text with the line "  model why" added (n: the count) */
static char *
addline(char *text, int *n, const char *model, const char *why)
{
	size_t len = text ? strlen(text) : 0, more = strlen(model) + strlen(why) + 5;

	text = erealloc(text, len + more);
	snprintf(text + len, more, "  %s %s\n", model, why);
	++*n;
	return text;
}

int
pickschedules(Mod *m, const SchedOpts *o, Choices *cs)
{
	SchedTarget st = {.target = o->target, .openmp = o->openmp, .vendor = o->vendor};
	const char *tname = o->target == TargetCUDA ? "cuda" : "cpu";
	char *cpath = NULL, err[256];
	Cache *cache = NULL;
	gnn_graph *g = NULL;
	int rc = -1, i, j, n, nf = 0, legal, nall = 0, nnot = 0;
	char *notall = NULL;     /* "  MODEL kernel K: why\n" for each kernel all: missed */
	Fn *fn;

	memset(cs, 0, sizeof *cs);
	defaultstats(&cs->gs);
	if (o->graph || o->synnodes > 0) {
		if (!(g = loadgraph(o)))
			return -1;
		statsof(g, &cs->gs);
		cs->statsknown = true;
		snprintf(cs->bucket, sizeof cs->bucket, "n%d.e%d.x%d", ilog2(cs->gs.nodes), ilog2(cs->gs.edges), ilog2(cs->gs.maxdeg));
	}
	archkey(o, cs->archkey, sizeof cs->archkey);
	if (o->olevel > 0 && !(o->cache && !*o->cache)) {
		cpath = o->cache ? estrdup(o->cache) : defaultcache();
		if (cpath)
			cache = cacheopen(cpath, o->who);
	}
	for (i = 0; i < o->nforce; i++)
		if (strcmp(o->force[i].kernel, "all") != 0)
			nf++;
	/* a block shape the target never runs is wrong whichever kernel it
	 * goes to: an error, for all: too (docs/tuning.md) */
	for (i = 0; i < o->nforce; i++)
		if (schedtargetlegal(&st, &o->force[i].s, err, sizeof err) < 0) {
			char text[128];
			schedprint(text, sizeof text, &o->force[i].s);
			fprintf(stderr, "%s: error: --schedule=%s:%s: %s, which no kernel can run on --target=%s\n", o->who,
			        o->force[i].kernel, text, err, tname);
			goto out;
		}
	for (fn = m->fn; fn; fn = fn->link) {
		Kernel *ks;
		/* cuda with a graph: the cost report's times (codegen/cost.c) */
		CostModel *cm = st.target == TargetCUDA && g ? costmodel(m, fn, g) : NULL;
		n = listkernels(fn, &ks);
		setdensities(fn, ks, n, o->density);
		cs->c = erealloc(cs->c, (cs->n + n + 1) * sizeof *cs->c);
		for (j = 0; j < n; j++) {
			Choice *c = &cs->c[cs->n++];
			const SchedForce *f = forced(o, ks[j].name);
			Sched sp[256];
			CacheHit hit;
			memset(c, 0, sizeof *c);
			c->model = fn->name;
			c->k = ks[j];
			c->ncand = schedspace(&ks[j], &st, sp, 256);
			if (cm)
				costpickgpu(cm, &ks[j], &st, &cs->gs, &c->s);
			else
				costpick(&ks[j], &st, &cs->gs, &c->s);
			c->why = o->olevel > 0 ? WhyCost : WhyReference;
			if (o->olevel == 0)
				scheddefault(&c->s);
			if (hassched(&fn->ins[ks[j].first])) {
				/* IR text that says: kept (codegen checks it) */
				schedof(&fn->ins[ks[j].first], &c->s);
				c->why = WhyIR;
			}
			legal = f ? schedlegal(&ks[j], &st, &f->s, err, sizeof err) : 0;
			if (f && strcmp(f->kernel, "all") == 0 && legal == 0)
				nall++;
			else if (f && legal == SchedIllegal && strcmp(f->kernel, "all") == 0)
				notall = addline(notall, &nnot, fn->name, err);
			if (f && legal == 0) {
				c->s = f->s;
				c->why = WhyForced;
			} else if (f && strcmp(f->kernel, "all") != 0) {
				fprintf(stderr, "%s: error: --schedule=%s:...: %s\n", o->who, f->kernel, err);
				free(ks);
				costmodelfree(cm);
				goto out;
			} else if (cache && cs->archkey[0] && o->olevel > 0 && c->why == WhyCost) {
				CacheKey key = {tname, cs->archkey, cs->statsknown ? cs->bucket : NULL, ks[j].sig};
				if (cachefind(cache, &key, &hit)) {
					if (schedlegal(&ks[j], &st, &hit.s, err, sizeof err) == 0) {
						c->s = hit.s;
						c->why = WhyCache;
						c->us = hit.us;
						c->refus = hit.refus;
						snprintf(c->note, sizeof c->note, "%s", hit.bucket);
					} else
						fprintf(stderr, "%s: warning: %s: the cached schedule of %s %s is not valid for it (%s); ignored\n",
						        o->who, cpath, fn->name, ks[j].name, err);
				}
			}
			setsched(fn, &ks[j], &c->s);
		}
		free(ks);
		costmodelfree(cm);
	}
	/* a kernel named by --schedule must exist */
	for (i = 0; i < o->nforce; i++) {
		if (strcmp(o->force[i].kernel, "all") == 0)
			continue;
		for (j = 0; j < cs->n && strcmp(cs->c[j].k.name, o->force[i].kernel) != 0; j++)
			;
		if (j == cs->n) {
			fprintf(stderr, "%s: error: --schedule: no kernel %s (gnncc --report=schedules lists them)\n", o->who, o->force[i].kernel);
			goto out;
		}
	}
	(void)nf;
	/* all:FIELDS goes to each kernel the fields are for; those of them
	 * that cannot take it are named (docs/tuning.md) */
	for (i = o->nforce - 1; i >= 0 && strcmp(o->force[i].kernel, "all") != 0; i--)
		;
	if (i >= 0) {
		char text[128];
		schedprint(text, sizeof text, &o->force[i].s);
		if (nnot)
			fprintf(stderr, "%s: warning: --schedule=all:%s not applied to:\n%s", o->who, text, notall);
		else if (!nall)
			fprintf(stderr, "%s: warning: --schedule=all:%s applies to no kernel for --target=%s\n", o->who, text, tname);
	}
	if (o->tune) {
		if (!g) {
			fprintf(stderr, "%s: error: --tune needs a graph: --tune-graph=EDGE_INDEX.npy or --tune-synthetic=N,E\n", o->who);
			goto out;
		}
		if (tune(m, o, cs, g) < 0)
			goto out;
		if (cache && cs->archkey[0]) {
			for (j = 0; j < cs->n; j++)
				if (cs->c[j].why == WhyTuned) {
					CacheKey key = {tname, cs->archkey, cs->bucket, cs->c[j].k.sig};
					cacheput(cache, &key, &cs->c[j].s, cs->c[j].us, cs->c[j].refus, cs->c[j].model, cs->c[j].k.name);
				}
			if (cachesave(cache) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	if (cache)
		cacheclose(cache);
	free(notall);
	free(cpath);
	gnn_graph_destroy(g);
	return rc;
}

void
freechoices(Choices *cs)
{
	free(cs->c);
	memset(cs, 0, sizeof *cs);
}

void
reportschedules(FILE *f, const Choices *cs)
{
	const char *last = NULL;
	char text[128];
	int i;

	for (i = 0; i < cs->n; i++) {
		const Choice *c = &cs->c[i];
		if (!last || strcmp(last, c->model) != 0) {
			fprintf(f, "schedules of %s", c->model);
			if (cs->statsknown)
				fprintf(f, " (graph: %lld nodes, %lld edges, in-degree mean %.1f, max %lld; bucket %s)", (long long)cs->gs.nodes,
				        (long long)cs->gs.edges, cs->gs.meandeg, (long long)cs->gs.maxdeg, cs->bucket);
			fprintf(f, ":\n");
			last = c->model;
		}
		schedprint(text, sizeof text, &c->s);
		fprintf(f, "  %-5s %-12s %-22s ", c->k.name, c->k.what, text);
		switch (c->why) {
		case WhyForced: fprintf(f, "forced (--schedule)"); break;
		case WhyReference: fprintf(f, "reference (-O0)"); break;
		case WhyIR: fprintf(f, "from the IR"); break;
		case WhyCache: fprintf(f, "cache hit (tuned for %s): %.1f us, reference %.1f us", c->note, c->us, c->refus); break;
		case WhyTuned: fprintf(f, "tuned: %.1f us, reference %.1f us", c->us, c->refus); break;
		default: fprintf(f, "cost model"); break;
		}
		if (c->why == WhyTuned && c->ntried < c->ncand)
			fprintf(f, " [%d of %d candidates]\n", c->ntried, c->ncand);
		else
			fprintf(f, " [%d candidate%s]\n", c->ncand, c->ncand == 1 ? "" : "s");
		/* why a dense transform runs apart (passes.h's rowmatmul) */
		if (c->k.kind == KernelDense && c->k.weightbytes > RowWeightBytes)
			fprintf(f, "        weights of %lld KB, above the %d KB a row kernel re-reads per row: a GEMM of its own\n",
			        (long long)(c->k.weightbytes + 1023) / 1024, RowWeightBytes / 1024);
	}
}
