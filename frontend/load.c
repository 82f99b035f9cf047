/*
 * Loading: the embedded layer library, the main file and its imports,
 * and the table of layer and model definitions they declare.
 *
 * Imports resolve against the importing file's directory, then the -I
 * directories in order.  A file is loaded once (by its real path); a file
 * that imports itself through a chain is an import cycle.  Definitions
 * are global: a second layer or model of the same name is an error that
 * points at both.  Only the main file's models are lowered; layers are
 * checked when they are instantiated.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layerlib.h"
#include "sema.h"

typedef struct Def {
	const char *name;
	Node *node;
} Def;

static Def *defs;
static int ndefs;
static const char **loaded;      /* real paths of files read */
static int nloaded;
static const char *stack[64];    /* files being loaded, for cycles */
static int nstack;

Node *
lookupdef(const char *name)
{
	int i;

	for (i = 0; i < ndefs; i++)
		if (strcmp(defs[i].name, name) == 0)
			return defs[i].node;
	return NULL;
}

static void
adddef(Node *n)
{
	Node *old;

	if ((old = lookupdef(n->name))) {
		errorat(n->loc, "redefinition of %s '%s'", n->kind == ND_MODEL ? "model" : "layer", n->name);
		noteat(old->loc, "previous definition is here");
		return;
	}
	if (isbuiltin(n->name)) {
		errorat(n->loc, "'%s' is a primitive and cannot be redefined", n->name);
		return;
	}
	defs = erealloc(defs, (ndefs + 1) * sizeof *defs);
	defs[ndefs++] = (Def){n->name, n};
}

/* Edit distance counting an adjacent transposition as one edit, since
 * "bais" for "bias" is the typical typo. */
static int
editdist(const char *a, const char *b)
{
	int la = strlen(a), lb = strlen(b), i, j, d[64][64], v;

	if (la >= 63 || lb >= 63)
		return 99;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/* A near miss among definitions, primitives and extra names, for
 * "did you mean" hints; NULL if nothing is close. */
const char *
closestname(const char *name, const char *const *extra)
{
	const char *best = NULL;
	int i, d, bestd = 3;

#define TRY(s) do { d = editdist(name, s); if (d < bestd && d * 3 <= (int)strlen(name) + 1) { bestd = d; best = s; } } while (0)
	for (i = 0; i < ndefs; i++)
		TRY(defs[i].name);
	for (i = 0; builtinname(i); i++)
		TRY(builtinname(i));
	for (i = 0; extra && extra[i]; i++)
		TRY(extra[i]);
#undef TRY
	return best;
}


static bool loadtext(const char *path, const char *real, const char *text, size_t len, File **out);

static bool
isloaded(const char *real)
{
	int i;

	for (i = 0; i < nloaded; i++)
		if (strcmp(loaded[i], real) == 0)
			return true;
	return false;
}

/* the importer's directory joined with p, or p itself if absolute */
static char *
joinpath(const char *dir, size_t dirlen, const char *p)
{
	char *s;

	if (p[0] == '/' || dirlen == 0)
		return arena_strdup(S.arena, p);
	s = arena_alloc(S.arena, dirlen + strlen(p) + 2);
	memcpy(s, dir, dirlen);
	s[dirlen] = '/';
	memcpy(s + dirlen + 1, p, strlen(p) + 1);
	return s;
}

static void
doimport(Node *imp, const char *from)
{
	const char *slash = strrchr(from, '/');
	char *cand, *real = NULL, *rp, *text;
	size_t len;
	int i, k;

	if (!imp->str[0]) {
		errorat(imp->loc, "empty import path");
		return;
	}
	cand = joinpath(from, slash ? (size_t)(slash - from) : 0, imp->str);
	for (k = -1; k < (S.opts ? S.opts->nincdir : 0); k++) {
		if (k >= 0)
			cand = joinpath(S.opts->incdir[k], strlen(S.opts->incdir[k]), imp->str);
		/* realpath allocates: no PATH_MAX buffer to outgrow */
		if (access(cand, R_OK) == 0 && (rp = realpath(cand, NULL))) {
			real = arena_strdup(S.arena, rp);
			free(rp);
			break;
		}
		cand = NULL;
		if (imp->str[0] == '/')
			break;
	}
	if (!cand) {
		errorat(imp->loc, "import not found: '%s'", imp->str);
		return;
	}
	for (i = 0; i < nstack; i++)
		if (strcmp(stack[i], real) == 0) {
			errorat(imp->loc, "import cycle: '%s' imports itself", imp->str);
			for (k = i; k < nstack; k++)
				noteat((Loc){0}, "through '%s'", stack[k]);
			return;
		}
	if (isloaded(real))
		return;
	if (nstack == (int)(sizeof stack / sizeof stack[0])) {
		errorat(imp->loc, "imports nested too deeply");
		return;
	}
	if (!(text = readfile(cand, &len))) {
		errorat(imp->loc, "cannot read import '%s': %s", imp->str, strerror(errno));
		return;
	}
	loadtext(cand, real, text, len, NULL);
	free(text);     /* diag keeps its own copy for diagnostics */
}

/* Parse a file, record its definitions, and load what it imports. */
static bool
loadtext(const char *path, const char *real, const char *text, size_t len, File **out)
{
	File *f;
	int i;

	real = arena_strdup(S.arena, real);
	loaded = erealloc(loaded, (nloaded + 1) * sizeof *loaded);
	loaded[nloaded++] = real;
	if (S.opts && S.opts->ondep)
		S.opts->ondep(S.opts->ud, path);
	path = arena_strdup(S.arena, path);
	f = parsefile(S.arena, path, text, len);
	if (out)
		*out = f;
	if (!f)
		return false;
	stack[nstack++] = real;
	for (i = 0; i < f->items.n; i++) {
		Node *n = f->items.v[i];
		if (n->kind == ND_IMPORT)
			doimport(n, path);
		else if (n->kind != ND_TRAIN)   /* train items go with their model: lowertrains */
			adddef(n);
	}
	nstack--;
	return true;
}

/* Free one compilation's state: the tables and the arena (the AST, the
 * scopes, compile-time values).  The module keeps nothing in them: its
 * strings live in its own arena, and its locations name files by diag's
 * copies of their names (diag_addsource). */
static void
release(void)
{
	free(defs);
	free(loaded);
	defs = NULL;
	loaded = NULL;
	ndefs = nloaded = nstack = 0;
	arena_free(S.arena);
	memset(&S, 0, sizeof S);
}

static void
reset(const FrontOpts *o)
{
	release();
	S.arena = arena_new();
	S.opts = o;
}

Mod *
compiletext(const char *path, const char *text, size_t len, const FrontOpts *o)
{
	const LayerSource *ls;
	File *main = NULL;
	char *real;
	int i, nerr = diag_nerrors();
	Mod *m;

	reset(o);
	for (ls = layerlib; ls->name; ls++)
		loadtext(ls->name, ls->name, ls->text, ls->len, NULL);
	if (diag_nerrors() > nerr)
		die("the layer library does not compile");
	/* allocated by realpath, or the path itself: never truncated */
	real = realpath(path, NULL);
	loadtext(path, real ? real : path, text, len, &main);
	free(real);
	m = newmod();
	S.mod = m;
	if (main && diag_nerrors() == nerr)
		for (i = 0; i < main->items.n; i++)
			if (main->items.v[i]->kind == ND_MODEL)
				lowermodel(main->items.v[i]);
	if (main && diag_nerrors() == nerr)
		lowertrains(main, o);
	release();
	if (diag_nerrors() > nerr) {
		freemod(m);
		m = NULL;
	}
	return m;
}

Mod *
compilefile(const char *path, const FrontOpts *o)
{
	char *text;
	size_t len;
	Mod *m;

	if (!(text = readfile(path, &len))) {
		errorat((Loc){0}, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	/* diagnostics quote diag's copy of the text, not this one */
	m = compiletext(path, text, len, o);
	free(text);
	return m;
}
