/*
 * gnngen: synthetic graphs with power-law degrees (runtime/synth.c) as
 * .npy files, shaped like real datasets, for benchmarks and autotuning.
 *
 *	gnngen --nodes=N --edges=E [--features=F] [--alpha=A] [--seed=S] --out=DIR
 *	gnngen --preset=NAME [overrides] [--seed=S] --out=DIR
 *	gnngen --preset=rel-NAME [--scale=S] [--alpha=A] [--seed=S] --out=DIR
 *	gnngen --stats EDGE_INDEX.npy [--nodes=N]
 *
 * A preset fixes the sizes of a real dataset; options given beside it
 * override them.  DIR gets edge_index.npy (int64 [2, E]) and, when F > 0,
 * x.npy (float32 [N, F]); then one line of degree statistics is printed,
 * the same line that --stats prints for any edge_index.
 *
 * A relational preset is a database's tables as a heterogeneous graph
 * (docs/hetero.md): a node type a table, a row a node, a relation per
 * foreign key and one per its reverse, each its own edge_index named
 * SRC__REL__DST.npy, features x_TYPE.npy, and, where a table has a time
 * column, that time on every edge of its rows (time_REL.npy).  A foreign
 * key is drawn by the power-law model of the graphs (runtime/synth.c):
 * a key's row count is Zipf-like over a random ranking of the keys.
 *
 * All outputs or none: every file is written (atomically, by the runtime)
 * under temporary names in DIR and renamed into place only when all are
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

/* the foreign keys' Zipf exponent unless --alpha says: real tables'
 * heaviest keys hold a percent or two of the rows, not alpha 1's tenth */
#define RelAlpha 0.8
/* the first relational preset's index in optpresets */
enum { RelShop = NPRESET };
_Static_assert(RelShop + 2 == sizeof optpresets / sizeof optpresets[0], "a relational preset without its tables");

typedef struct Opts {
	gnn_synth_spec spec;
	double scale;             /* a relational preset's */
	bool hasnodes, hasedges, hasfeatures, hasalpha, hasscale;
	int preset;               /* in optpresetsizes[]; -1: none */
	const char *out;
	const char *stats;        /* --stats FILE */
	bool generating;          /* some option only generation takes */
} Opts;

static void relhelp(FILE *f);

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
	relhelp(f);
}

static bool
parseargs(int argc, char **argv, Opts *o)
{
	OptParser p;
	const char *v;
	char *end;
	Opt id;

	*o = (Opts){.spec = {.alpha = 1.0}, .preset = -1, .scale = 1.0};
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
			o->hasalpha = true;
			break;
		case OptScale:
			errno = 0;
			o->scale = strtod(v, &end);
			if (!*v || *end || errno || !(o->scale > 0 && o->scale <= 16)) {
				opterror("--scale takes a number above 0 and at most 16, not '%s'", v);
				return false;
			}
			o->hasscale = true;
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
	if (o->preset >= RelShop) {
		if (o->hasnodes || o->hasedges || o->hasfeatures) {
			opterror("--preset=%s makes tables of fixed shapes: it takes --scale, not --nodes, --edges "
				"or --features", optpresets[o->preset]);
			return false;
		}
		o->spec.alpha = o->hasalpha ? o->spec.alpha : RelAlpha;
	} else if (o->hasscale) {
		opterror("--scale shrinks or grows a relational preset (--preset=rel-...)");
		return false;
	} else if (o->preset >= 0) {
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
 * The largest in- and out-degree of the edges ei[0..e) -> ei[e..2e)
 * from ns source nodes to nd target nodes.  An index out of range is an
 * error about what.
 */
static bool
degrees(const char *what, const int64_t *ei, int64_t e, int64_t ns, int64_t nd, int64_t *maxin, int64_t *maxout)
{
	int64_t *deg;

	*maxin = *maxout = 0;
	for (int64_t i = 0; i < e; i++)
		if (ei[i] < 0 || ei[i] >= ns || ei[e + i] < 0 || ei[e + i] >= nd) {
			if (ns == nd)
				opterror("%s: edge %lld (%lld -> %lld) is out of range for %lld nodes", what,
					(long long)i, (long long)ei[i], (long long)ei[e + i], (long long)ns);
			else
				opterror("%s: edge %lld (%lld -> %lld) is out of range for %lld -> %lld nodes", what,
					(long long)i, (long long)ei[i], (long long)ei[e + i], (long long)ns, (long long)nd);
			return false;
		}
	/* out-degrees in deg[0..ns), in-degrees in deg[ns..ns+nd) */
	if (!(deg = calloc(ns + nd > 0 ? (size_t)(ns + nd) : 1, sizeof *deg))) {
		opterror("out of memory for the degrees of %lld nodes", (long long)(ns + nd));
		return false;
	}
	for (int64_t i = 0; i < e; i++) {
		int64_t out = ++deg[ei[i]], in = ++deg[ns + ei[e + i]];
		*maxout = out > *maxout ? out : *maxout;
		*maxin = in > *maxin ? in : *maxin;
	}
	free(deg);
	return true;
}

/*
 * The statistics line of a graph whose edges are ei[0..e) -> ei[e..2e),
 * on n nodes, or on as many as the largest index needs when n < 0.
 */
static bool
printstats(const char *what, const int64_t *ei, int64_t e, int64_t n)
{
	int64_t maxin, maxout;

	if (n < 0)
		for (int64_t i = n = 0; i < 2 * e; i++)
			n = ei[i] + 1 > n ? ei[i] + 1 : n;
	if (!degrees(what, ei, e, n, n, &maxin, &maxout))
		return false;
	printf("nodes=%lld edges=%lld in_degree_mean=%.2f in_degree_max=%lld out_degree_max=%lld\n",
		(long long)n, (long long)e, n ? (double)e / (double)n : 0.0, (long long)maxin, (long long)maxout);
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

/* the most files one preset writes */
enum { MAXFILE = 16 };
static const char *const graphfiles[] = {"edge_index.npy", "x.npy"};

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

/* rows (x cols when rank 2) elements of t written to path */
static bool
writenpy(const char *path, gnn_dtype t, int rank, int64_t rows, int64_t cols, void *data)
{
	gnn_array a = {.dtype = t, .rank = rank, .shape = {rows, cols}, .data = data,
		.nbytes = (size_t)rows * (size_t)(rank > 1 ? cols : 1) * gnn_dtype_size(t)};

	if (gnn_npy_write(path, &a) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return false;
	}
	return true;
}

/* the graph's files under tmp[] (x only when it has features) and its
 * statistics, for a spec that gnn_synth_check accepts */
static bool
generate(const Opts *o, char *const tmp[])
{
	const gnn_synth_spec *s = &o->spec;
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
	ok = writenpy(tmp[0], GNN_I64, 2, 2, s->edges, ei) && printstats("edge_index", ei, s->edges, s->nodes);
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
		ok = writenpy(tmp[1], GNN_F32, 2, s->nodes, s->features, x);
	free(x);
	return ok;
}

/* --- relational presets ----------------------------------------------------- */

/*
 * rel-shop: an online shop's customers, products and transactions.  A
 * transaction row has two foreign keys (its customer, its product) and a
 * time; the relations are transaction -> customer (by), transaction ->
 * product (of) and their reverses, every edge one transaction, the
 * reverse relation's edge e the forward one's edge e turned round.
 * Transaction ids are in time order (an append-only table).  Customers
 * are labelled, for a task at a time of their own (time_customer.npy, in
 * the second half of the year): the class of how many transactions the
 * customer made up to that time (0; 1-2; 3-7; 8 or more), something a
 * model sees only through the past edges temporal sampling lets through.
 */
enum { NTYPE = 3, NREL = 4, NCLASS = 4, TCUST = 0, TPROD, TTRANS };
static const struct {
	const char *name;
	int64_t rows, features;
} shoptable[NTYPE] = {
	{"customer", 60000, 16},
	{"product", 15000, 32},
	{"transaction", 300000, 8},
};
/* src, name, dst; each foreign key's relation, then its reverse */
static const struct {
	int src, dst;
	const char *name;
} shoprel[NREL] = {
	{TTRANS, TCUST, "transaction__by__customer"},
	{TCUST, TTRANS, "customer__rev_by__transaction"},
	{TTRANS, TPROD, "transaction__of__product"},
	{TPROD, TTRANS, "product__rev_of__transaction"},
};
/* a year of Unix seconds from 2023-11-14 */
#define TIME0 INT64_C(1700000000)
#define TIMESPAN INT64_C(31536000)

/* the files, in this order: x_TYPE, y_customer, time_customer, REL,
 * time_REL (every relation touches the timed table) */
enum { FX = 0, FY = NTYPE, FTIME, FREL, FRELTIME = FREL + NREL, NRELFILE = FRELTIME + NREL };
_Static_assert((int)NRELFILE <= (int)MAXFILE, "too many files");
static char relnames[NRELFILE][64];

static const char *const *
relfiles(void)
{
	static const char *names[NRELFILE + 1];

	for (int t = 0; t < NTYPE; t++)
		snprintf(relnames[FX + t], sizeof relnames[0], "x_%s.npy", shoptable[t].name);
	snprintf(relnames[FY], sizeof relnames[0], "y_%s.npy", shoptable[TCUST].name);
	snprintf(relnames[FTIME], sizeof relnames[0], "time_%s.npy", shoptable[TCUST].name);
	for (int r = 0; r < NREL; r++) {
		snprintf(relnames[FREL + r], sizeof relnames[0], "%s.npy", shoprel[r].name);
		snprintf(relnames[FRELTIME + r], sizeof relnames[0], "time_%s.npy", shoprel[r].name);
	}
	for (int k = 0; k < NRELFILE; k++)
		names[k] = relnames[k];
	return names;
}

static void
relhelp(FILE *f)
{
	fputs("  rel-shop   a shop's tables (rows at --scale=1; the features F):\n", f);
	for (int t = 0; t < NTYPE; t++)
		fprintf(f, "               %-12s %7lld rows  F=%lld\n", shoptable[t].name, (long long)shoptable[t].rows,
			(long long)shoptable[t].features);
	fputs("             relations (SRC__REL__DST.npy, int64 [2, E]; time_REL.npy,\n"
	      "             int64 [E], the transaction's time):\n", f);
	for (int r = 0; r < NREL; r++)
		fprintf(f, "               %s\n", shoprel[r].name);
	fprintf(f, "             y_customer.npy (int64, %d classes) and time_customer.npy\n"
	        "             (int64, the labels' times); foreign keys Zipf, alpha %.1f\n", NCLASS, RelAlpha);
}

/* a table's row count at the scale: at least one row */
static int64_t
scaled(int64_t rows, double scale)
{
	double v = (double)rows * scale + 0.5;

	return v < 1 ? 1 : (int64_t)v;
}

static int
cmpi64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* the seed of a table's column k: apart from every other column's */
static uint64_t
subseed(uint64_t seed, int k)
{
	return seed + (uint64_t)(k + 1) * UINT64_C(0x9e3779b97f4a7c15);
}

/* the class of a count of past transactions */
static int64_t
shopclass(int64_t n)
{
	return n == 0 ? 0 : n <= 2 ? 1 : n <= 7 ? 2 : 3;
}

static bool
generaterel(const Opts *o, char *const tmp[])
{
	int64_t rows[NTYPE], nt, *fk[2] = {0}, *ttime = NULL, *ctime = NULL, *y = NULL, *ei = NULL, *past = NULL;
	bool ok = false;
	int t, r;

	for (t = 0; t < NTYPE; t++)
		rows[t] = scaled(shoptable[t].rows, o->scale);
	nt = rows[TTRANS];
	for (r = 0; r < 2; r++)
		if (!(fk[r] = malloc(2 * (size_t)nt * sizeof **fk))) {
			opterror("out of memory for %lld transactions", (long long)nt);
			goto out;
		}
	ttime = malloc((size_t)nt * sizeof *ttime);
	ctime = malloc((size_t)rows[TCUST] * sizeof *ctime);
	y = malloc((size_t)rows[TCUST] * sizeof *y);
	past = calloc((size_t)rows[TCUST], sizeof *past);
	ei = malloc(2 * (size_t)nt * sizeof *ei);
	if (!ttime || !ctime || !y || !past || !ei) {
		opterror("out of memory for %lld transactions", (long long)nt);
		goto out;
	}
	/* the keys: the targets of a power-law graph on the keyed table's rows
	 * with an edge a transaction (fk[r] + nt) */
	for (r = 0; r < 2; r++) {
		gnn_synth_spec ks = {.nodes = rows[r == 0 ? TCUST : TPROD], .edges = nt, .alpha = o->spec.alpha,
			.seed = subseed(o->spec.seed, r)};
		if (gnn_synth_edges(&ks, fk[r]) != GNN_OK) {
			opterror("%s", gnn_errmsg());
			goto out;
		}
	}
	if (gnn_synth_ints(o->spec.seed, 1, nt, TIME0, TIME0 + TIMESPAN, ttime) != GNN_OK ||
	    gnn_synth_ints(o->spec.seed, 2, rows[TCUST], TIME0 + TIMESPAN / 2, TIME0 + TIMESPAN, ctime) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		goto out;
	}
	qsort(ttime, (size_t)nt, sizeof *ttime, cmpi64);
	for (int64_t i = 0; i < nt; i++)
		past[fk[0][nt + i]] += ttime[i] <= ctime[fk[0][nt + i]];
	for (int64_t c = 0; c < rows[TCUST]; c++)
		y[c] = shopclass(past[c]);
	/* features */
	for (t = 0; t < NTYPE; t++) {
		gnn_synth_spec fs = {.nodes = rows[t], .features = shoptable[t].features, .alpha = 1,
			.seed = subseed(o->spec.seed, 2 + t)};
		size_t nx = (size_t)rows[t] * (size_t)fs.features;
		float *x = malloc(nx * sizeof *x + 1);
		bool w;
		if (!x) {
			opterror("out of memory for x_%s", shoptable[t].name);
			goto out;
		}
		w = gnn_synth_features(&fs, x) == GNN_OK;
		if (!w)
			opterror("%s", gnn_errmsg());
		w = w && writenpy(tmp[FX + t], GNN_F32, 2, rows[t], fs.features, x);
		free(x);
		if (!w)
			goto out;
	}
	if (!writenpy(tmp[FY], GNN_I64, 1, rows[TCUST], 0, y) || !writenpy(tmp[FTIME], GNN_I64, 1, rows[TCUST], 0, ctime))
		goto out;
	/* the relations: transaction i's key, one way or the other */
	for (r = 0; r < NREL; r++) {
		const int64_t *key = fk[r / 2] + nt;
		int64_t mx[2];
		int rev = r % 2;
		for (int64_t i = 0; i < nt; i++) {
			ei[rev ? nt + i : i] = i;
			ei[rev ? i : nt + i] = key[i];
		}
		if (!degrees(shoprel[r].name, ei, nt, rows[shoprel[r].src], rows[shoprel[r].dst], &mx[0], &mx[1]) ||
		    !writenpy(tmp[FREL + r], GNN_I64, 2, 2, nt, ei) ||
		    !writenpy(tmp[FRELTIME + r], GNN_I64, 1, nt, 0, ttime))
			goto out;
		printf("%s: src_nodes=%lld dst_nodes=%lld edges=%lld in_degree_mean=%.2f in_degree_max=%lld "
		       "out_degree_max=%lld\n", shoprel[r].name, (long long)rows[shoprel[r].src],
		       (long long)rows[shoprel[r].dst], (long long)nt, (double)nt / (double)rows[shoprel[r].dst],
		       (long long)mx[0], (long long)mx[1]);
	}
	{
		int64_t count[NCLASS] = {0};
		for (int64_t c = 0; c < rows[TCUST]; c++)
			count[y[c]]++;
		printf("y_customer: classes=%d", NCLASS);
		for (int k = 0; k < NCLASS; k++)
			printf(" %lld", (long long)count[k]);
		printf("\n");
	}
	ok = true;
out:
	free(fk[0]);
	free(fk[1]);
	free(ttime);
	free(ctime);
	free(y);
	free(past);
	free(ei);
	return ok;
}

/* --- writing ---------------------------------------------------------------- */

/*
 * The nfile files names[] in o->out by make, which writes them under the
 * temporary names it is given: all renamed into place, or none and no
 * temporary left (and no directory that gnngen made).
 */
static int
gen(const Opts *o, const char *const *names, int nfile, bool (*make)(const Opts *, char *const tmp[]))
{
	char *tmp[MAXFILE] = {0}, *dst[MAXFILE] = {0};
	int i;
	bool made = false, ok = true;
	struct stat st;

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
		if (!(tmp[i] = outpath(o->out, names[i], true)) || !(dst[i] = outpath(o->out, names[i], false)))
			ok = false;
	if (!ok)
		opterror("out of memory");
	/* a rename over a directory would fail after the other files are in place */
	for (i = 0; ok && i < nfile; i++)
		if (stat(dst[i], &st) == 0 && !S_ISREG(st.st_mode)) {
			opterror("'%s' exists and is not a file", dst[i]);
			ok = false;
		}
	ok = ok && make(o, tmp);
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
	if (o.preset >= RelShop)
		return gen(&o, relfiles(), NRELFILE, generaterel);
	/* a bad spec is reported before anything is made */
	if (gnn_synth_check(&o.spec) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return 1;
	}
	return gen(&o, graphfiles, o.spec.features > 0 ? 2 : 1, generate);
}
