/*
 * gnngen: synthetic graphs with power-law degrees (runtime/synth.c) as
 * .npy files, shaped like real datasets, for benchmarks and autotuning.
 *
 *	gnngen --nodes=N --edges=E [--features=F] [--alpha=A] [--seed=S] --out=DIR
 *	gnngen --preset=NAME [overrides] [--seed=S] --out=DIR
 *	gnngen --stats EDGE_INDEX.npy [--nodes=N]
 *
 * A preset fixes the sizes of a real dataset; options given beside it
 * override them.  DIR gets edge_index.npy (int64 [2, E]) and, when F > 0,
 * x.npy (float32 [N, F]); then one line of degree statistics is printed,
 * the same line that --stats prints for any edge_index.
 *
 * All outputs or none: both files are written (atomically, by the runtime)
 * under temporary names in DIR and renamed into place only when both are
 * complete, and a DIR that gnngen created is removed again after a
 * failure.  Errors print "gnngen: error: ..." and exit 1.  Only the
 * runtime and the drivers' option table (options.c) are linked: gnngen
 * is a small tool to ship with benchmarks.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gnnrt.h"
#include "options.h"


/* the shapes of the usual benchmark datasets, in the order of --preset's
 * names (options.c) */
enum { NPRESET = sizeof optpresetsizes / sizeof optpresetsizes[0] };
_Static_assert(NPRESET + 1 == sizeof optpresets / sizeof optpresets[0], "a preset without its name");

typedef struct Opts {
	gnn_synth_spec spec;
	bool hasnodes, hasedges, hasfeatures;
	int preset;               /* in optpresetsizes[]; -1: none */
	const char *out;
	const char *stats;        /* --stats FILE */
	bool generating;          /* some option only generation takes */
} Opts;

static void
usage(FILE *f)
{
	fputs("usage: gnngen --nodes=N --edges=E [--features=F] [--alpha=A] [--seed=S] --out=DIR\n"
	      "       gnngen --preset=NAME [options] --out=DIR\n"
	      "       gnngen --stats EDGE_INDEX.npy [--nodes=N]\n"
	      "Writes DIR/edge_index.npy (int64 [2, E]) and, with F > 0, DIR/x.npy\n"
	      "(float32 [N, F]) of a graph with power-law in- and out-degrees, the same\n"
	      "for the same options on every machine, and prints its degree statistics.\n"
	      "\n", f);
	opthelp(f, ForGen);
	fputs("\npresets:\n", f);
	for (int k = 0; k < NPRESET; k++)
		fprintf(f, "  %-10s N=%-9lld E=%-11lld F=%lld\n", optpresets[k],
			(long long)optpresetsizes[k].nodes, (long long)optpresetsizes[k].edges, (long long)optpresetsizes[k].features);
}

static bool
parseargs(int argc, char **argv, Opts *o)
{
	OptParser p;
	const char *v;
	char *end;
	Opt id;

	*o = (Opts){.spec = {.alpha = 1.0}, .preset = -1};
	optstart(&p, "gnngen", ForGen, argc, argv);
	while ((id = optnext(&p, &v)) != OptEnd) {
		/* all but --nodes and --stats make a graph */
		o->generating = o->generating || (id != OptNodes && id != OptStats);
		switch (id) {
		case OptOperand:
			opterror("unexpected argument '%s' (see --help)", v);
			return false;
		case OptHelp:
			usage(stdout);
			exit(0);
		case OptVersion:
			puts("gnngen " GNNCC_VERSION);
			exit(0);
		case OptNodes:
			o->spec.nodes = optint("--nodes", v, 0, INT64_MAX, NULL);
			o->hasnodes = true;
			break;
		case OptEdges:
			o->spec.edges = optint("--edges", v, 0, INT64_MAX, NULL);
			o->hasedges = true;
			break;
		case OptFeatures:
			o->spec.features = optint("--features", v, 0, INT64_MAX, NULL);
			o->hasfeatures = true;
			break;
		case OptAlpha:
			errno = 0;
			o->spec.alpha = strtod(v, &end);
			if (!*v || *end || errno || !(o->spec.alpha >= 0 && o->spec.alpha <= 8)) {
				opterror("--alpha takes a number from 0 to 8, not '%s'", v);
				return false;
			}
			break;
		case OptSeed:
			errno = 0;
			o->spec.seed = strtoull(v, &end, 10);
			/* strtoull would take "-1" as 2^64 - 1 */
			if (!*v || *end || errno || strchr(v, '-')) {
				opterror("--seed takes an unsigned 64-bit integer, not '%s'", v);
				return false;
			}
			break;
		case OptPreset: o->preset = p.choice; break;
		case OptGenOut: o->out = v; break;
		case OptStats: o->stats = v; break;
		default:
			opterror("internal error: option %d has no case", (int)id);
			return false;
		}
	}
	if (o->stats) {
		if (o->generating)
			opterror("--stats reads a graph: it takes no generation options");
		return !o->generating;
	}
	if (o->preset >= 0) {
		const OptPresetSize *pr = &optpresetsizes[o->preset];
		o->spec.nodes = o->hasnodes ? o->spec.nodes : pr->nodes;
		o->spec.edges = o->hasedges ? o->spec.edges : pr->edges;
		o->spec.features = o->hasfeatures ? o->spec.features : pr->features;
	} else if (!o->hasnodes || !o->hasedges) {
		opterror("give --nodes and --edges, or --preset (see --help)");
		return false;
	}
	if (!o->out) {
		opterror("no --out directory given");
		return false;
	}
	return true;
}

/* --- statistics ------------------------------------------------------------ */

/*
 * The statistics line of a graph whose edges are ei[0..e) -> ei[e..2e),
 * on n nodes, or on as many as the largest index needs when n < 0.  An
 * index out of range is an error about what.
 */
static bool
printstats(const char *what, const int64_t *ei, int64_t e, int64_t n)
{
	int64_t *deg, maxin = 0, maxout = 0;

	if (n < 0)
		for (int64_t i = n = 0; i < 2 * e; i++)
			n = ei[i] + 1 > n ? ei[i] + 1 : n;
	for (int64_t i = 0; i < e; i++)
		if (ei[i] < 0 || ei[i] >= n || ei[e + i] < 0 || ei[e + i] >= n) {
			opterror("%s: edge %lld (%lld -> %lld) is out of range for %lld nodes", what,
				(long long)i, (long long)ei[i], (long long)ei[e + i], (long long)n);
			return false;
		}
	/* out-degrees in deg[0..n), in-degrees in deg[n..2n) */
	if (!(deg = calloc(n > 0 ? 2 * (size_t)n : 1, sizeof *deg))) {
		opterror("out of memory for the degrees of %lld nodes", (long long)n);
		return false;
	}
	for (int64_t i = 0; i < e; i++) {
		int64_t out = ++deg[ei[i]], in = ++deg[n + ei[e + i]];
		maxout = out > maxout ? out : maxout;
		maxin = in > maxin ? in : maxin;
	}
	printf("nodes=%lld edges=%lld in_degree_mean=%.2f in_degree_max=%lld out_degree_max=%lld\n",
		(long long)n, (long long)e, n ? (double)e / (double)n : 0.0, (long long)maxin, (long long)maxout);
	free(deg);
	return true;
}

/* --stats: an int32 or int64 [2, E] edge_index */
static int
stats(const char *path, int64_t n)
{
	gnn_array a;
	int64_t e, *ei;
	bool ok;

	if (gnn_npy_read(path, &a) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return 1;
	}
	if (a.rank != 2 || a.shape[0] != 2 || (a.dtype != GNN_I64 && a.dtype != GNN_I32)) {
		char shape[GNN_MAX_RANK * 22 + 3];
		int len = snprintf(shape, sizeof shape, "[");
		for (int k = 0; k < a.rank; k++)
			len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%lld", k ? ", " : "",
				(long long)a.shape[k]);
		snprintf(shape + len, sizeof shape - (size_t)len, "]");
		opterror("%s: edge_index must be int32 or int64 of shape [2, E], not %s %s",
			path, gnn_dtype_name(a.dtype), shape);
		gnn_array_free(&a);
		return 1;
	}
	e = a.shape[1];
	/* int32 indices widened in a copy; int64 ones are read in place */
	ei = a.data;
	if (a.dtype == GNN_I32) {
		if (!(ei = malloc(2 * (size_t)e * sizeof *ei + 1))) {
			opterror("%s: out of memory", path);
			gnn_array_free(&a);
			return 1;
		}
		for (int64_t i = 0; i < 2 * e; i++)
			ei[i] = ((const int32_t *)a.data)[i];
	}
	ok = printstats(path, ei, e, n);
	if (a.dtype == GNN_I32)
		free(ei);
	gnn_array_free(&a);
	return ok ? 0 : 1;
}

/* --- generation ------------------------------------------------------------ */

enum { NFILE = 2 };
static const char *const outname[NFILE] = {"edge_index.npy", "x.npy"};

/* DIR/name, or DIR/name.gnngenPID.tmp; malloc'd */
static char *
outpath(const char *dir, const char *name, bool tmp)
{
	size_t len = strlen(dir) + strlen(name) + 40;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, tmp ? "%s/%s.gnngen%ld.tmp" : "%s/%s", dir, name, (long)getpid());
	return p;
}

/* n elements of t with shape [rows, cols] written to path */
static bool
writenpy(const char *path, gnn_dtype t, int64_t rows, int64_t cols, void *data)
{
	gnn_array a = {.dtype = t, .rank = 2, .shape = {rows, cols}, .data = data,
		.nbytes = (size_t)rows * (size_t)cols * gnn_dtype_size(t)};

	if (gnn_npy_write(path, &a) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return false;
	}
	return true;
}

/* the graph's files under tmp[] (x only when it has features) and its
 * statistics, for a spec that gnn_synth_check accepts */
static bool
generate(const gnn_synth_spec *s, char *const tmp[NFILE])
{
	size_t ne = (size_t)s->edges, nx = (size_t)s->nodes * (size_t)s->features;
	int64_t *ei;
	float *x;
	bool ok;

	if (!(ei = malloc(2 * ne * sizeof *ei + 1))) {
		opterror("out of memory for %lld edges", (long long)s->edges);
		return false;
	}
	if (gnn_synth_edges(s, ei) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		free(ei);
		return false;
	}
	ok = writenpy(tmp[0], GNN_I64, 2, s->edges, ei) && printstats("edge_index", ei, s->edges, s->nodes);
	free(ei);
	if (!ok || nx == 0)
		return ok;
	if (!(x = malloc(nx * sizeof *x))) {
		opterror("out of memory for x of %lld x %lld", (long long)s->nodes, (long long)s->features);
		return false;
	}
	if (gnn_synth_features(s, x) != GNN_OK)
		opterror("%s", gnn_errmsg());
	else
		ok = writenpy(tmp[1], GNN_F32, s->nodes, s->features, x);
	free(x);
	return ok;
}

static int
gen(const Opts *o)
{
	char *tmp[NFILE] = {0}, *dst[NFILE] = {0};
	int nfile = o->spec.features > 0 ? 2 : 1, i;
	bool made = false, ok = true;
	struct stat st;

	/* a bad spec is reported before anything is made */
	if (gnn_synth_check(&o->spec) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return 1;
	}
	if (stat(o->out, &st) != 0) {
		if (mkdir(o->out, 0777) != 0) {
			opterror("cannot create directory '%s': %s", o->out, strerror(errno));
			return 1;
		}
		made = true;
	} else if (!S_ISDIR(st.st_mode)) {
		opterror("'%s' is not a directory", o->out);
		return 1;
	}
	for (i = 0; i < nfile; i++)
		if (!(tmp[i] = outpath(o->out, outname[i], true)) || !(dst[i] = outpath(o->out, outname[i], false)))
			ok = false;
	if (!ok)
		opterror("out of memory");
	/* a rename over a directory would fail after the other file is in place */
	for (i = 0; ok && i < nfile; i++)
		if (stat(dst[i], &st) == 0 && !S_ISREG(st.st_mode)) {
			opterror("'%s' exists and is not a file", dst[i]);
			ok = false;
		}
	ok = ok && generate(&o->spec, tmp);
	for (i = 0; ok && i < nfile; i++)
		if (rename(tmp[i], dst[i]) != 0) {
			opterror("cannot rename '%s' to '%s': %s", tmp[i], dst[i], strerror(errno));
			ok = false;
		}
	/* after a failure nothing new is left: a renamed file is gone already */
	for (i = 0; !ok && i < nfile; i++)
		if (tmp[i])
			unlink(tmp[i]);
	if (!ok && made)
		rmdir(o->out);
	for (i = 0; i < nfile; i++) {
		free(tmp[i]);
		free(dst[i]);
	}
	return ok ? 0 : 1;
}

int
main(int argc, char **argv)
{
	Opts o;

	if (!parseargs(argc, argv, &o))
		return 1;
	if (o.stats)
		return stats(o.stats, o.hasnodes ? o.spec.nodes : -1);
	return gen(&o);
}
