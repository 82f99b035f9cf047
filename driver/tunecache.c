/*
 * The tuning cache: one JSON object per line (docs/tuning.md), e.g.
 *
 *   {"gnncc":"0.1.0","target":"cpu","arch":"x86_64/.../2","kernel":"9f0c...",
 *    "bucket":"n11.e13.x7","schedule":"axpy=1,tile=4","us":81.2,"ref_us":240.5,
 *    "model":"GCN","name":"k10","check":"5e1d..."}
 *
 * keyed by gnncc's version, target, arch, the kernel's signature (a hash
 * of its instructions) and the graph's bucket.  "check" is a hash of the
 * other fields, so an edited or damaged line is noticed.  Nothing in the
 * file is trusted: a line that does not parse, fails its check or names
 * an unknown schedule is reported (file:line) and never used; entries
 * from another gnncc version are stale, reported and not used, but kept
 * for that version.  Writes replace the file atomically; later entries
 * for a key replace earlier ones.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schedules.h"
#include "toolchain.h"

#ifndef GNNCC_VERSION
#define GNNCC_VERSION "0.1.0"
#endif

enum { FVersion, FTarget, FArch, FKernel, FBucket, FSchedule, FUs, FRefUs, FModel, FName, FCheck, NF };
static const char *const fname[NF] = {"gnncc", "target", "arch", "kernel", "bucket", "schedule", "us", "ref_us", "model", "name", "check"};

typedef struct Entry {
	char *f[NF];             /* the fields' text */
	char *line;              /* stale entries are kept as read */
	bool valid;              /* this version's, checked */
} Entry;

struct Cache {
	char *path;
	const char *who;
	Entry *e;
	int n;
	bool dirty;
};

char *
defaultcache(void)
{
	const char *p = getenv("GNNCC_TUNE_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");

	if (p && *p)
		return estrdup(p);
	if (x && *x)
		return astrfmt(NULL, "%s/gnncc/tune.jsonl", x);
	if (h && *h)
		return astrfmt(NULL, "%s/.cache/gnncc/tune.jsonl", h);
	return NULL;
}

static uint64_t
checksum(char *const *f)
{
	uint64_t h = HashSeed;
	int k;

	for (k = 0; k < FCheck; k++)
		h = hashstr(h, f[k] ? f[k] : "");
	return h;
}

/* a flat JSON object of strings and numbers; 0, or -1 with why */
static int
parseline(const char *s, char **f, char *why, size_t nwhy)
{
	const char *p = s;
	int k;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '{') {
		snprintf(why, nwhy, "not a JSON object");
		return -1;
	}
	for (;;) {
		const char *key, *val;
		size_t kn, vn;
		bool str;
		while (*p == ' ')
			p++;
		if (*p != '"') {
			snprintf(why, nwhy, "expected a key");
			return -1;
		}
		key = ++p;
		while (*p && *p != '"' && *p != '\\')
			p++;
		if (*p != '"') {
			snprintf(why, nwhy, "bad key");
			return -1;
		}
		kn = (size_t)(p - key);
		p++;
		while (*p == ' ')
			p++;
		if (*p++ != ':') {
			snprintf(why, nwhy, "expected ':'");
			return -1;
		}
		while (*p == ' ')
			p++;
		str = *p == '"';
		if (str)
			p++;
		val = p;
		if (str)
			while (*p && *p != '"' && *p != '\\')
				p++;
		else
			while (*p && (strchr("0123456789+-.eE", *p)))
				p++;
		vn = (size_t)(p - val);
		if (str && *p++ != '"') {
			snprintf(why, nwhy, "bad string (escapes are not used in this file)");
			return -1;
		}
		if (!str && vn == 0) {
			snprintf(why, nwhy, "expected a string or a number");
			return -1;
		}
		for (k = 0; k < NF; k++)
			if (strlen(fname[k]) == kn && strncmp(fname[k], key, kn) == 0)
				break;
		if (k == NF) {
			snprintf(why, nwhy, "unknown field '%.*s'", (int)(kn > 20 ? 20 : kn), key);
			return -1;
		}
		if (f[k]) {
			snprintf(why, nwhy, "field '%s' twice", fname[k]);
			return -1;
		}
		f[k] = memcpy(emalloc(vn + 1), val, vn);   /* zeroed: terminated */
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != '}') {
			snprintf(why, nwhy, "expected ',' or '}'");
			return -1;
		}
		while (*p == ' ' || *p == '\r' || *p == '\n')
			p++;
		if (*p) {
			snprintf(why, nwhy, "text after the object");
			return -1;
		}
		return 0;
	}
}

static void
freeentry(Entry *e)
{
	int k;

	for (k = 0; k < NF; k++)
		free(e->f[k]);
	free(e->line);
}

/* the entry is this version's and sound; else why */
static bool
checkentry(Entry *e, char *why, size_t nwhy)
{
	char want[32], err[128];
	Sched s;
	char *end;
	int k;

	for (k = 0; k < NF; k++)
		if (!e->f[k]) {
			snprintf(why, nwhy, "no field '%s'", fname[k]);
			return false;
		}
	snprintf(want, sizeof want, "%016llx", (unsigned long long)checksum(e->f));
	if (strcmp(want, e->f[FCheck]) != 0) {
		snprintf(why, nwhy, "its check does not match its fields (an edited or damaged line)");
		return false;
	}
	if (strlen(e->f[FKernel]) != 16 || strspn(e->f[FKernel], "0123456789abcdef") != 16) {
		snprintf(why, nwhy, "bad kernel signature");
		return false;
	}
	if (schedparse(e->f[FSchedule], &s, err, sizeof err) < 0) {
		snprintf(why, nwhy, "%s", err);
		return false;
	}
	strtod(e->f[FUs], &end);
	if (*end) {
		snprintf(why, nwhy, "bad time");
		return false;
	}
	return true;
}

Cache *
cacheopen(const char *path, const char *who)
{
	Cache *c = emalloc(sizeof *c);
	FILE *f;
	char *line = NULL, why[160];
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, stale = 0, bad = 0;

	c->path = estrdup(path);
	c->who = who;
	if (!(f = fopen(path, "r"))) {
		if (errno != ENOENT)
			fprintf(stderr, "%s: warning: cannot read the tuning cache %s: %s; not used\n", who, path, strerror(errno));
		return c;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		Entry e = {0};
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = 0;
		if (len == 0)
			continue;
		if ((size_t)len != strlen(line) || parseline(line, e.f, why, sizeof why) < 0 || !e.f[FVersion]) {
			if ((size_t)len != strlen(line))
				snprintf(why, sizeof why, "a NUL byte");
			else if (!e.f[FVersion] && !why[0])
				snprintf(why, sizeof why, "no field 'gnncc'");
			if (bad++ < 5)
				fprintf(stderr, "%s: warning: %s:%d: corrupt tuning cache entry (%s); ignored\n", who, path, lineno, why);
			freeentry(&e);
			c->dirty = true;   /* the next save drops it */
			continue;
		}
		why[0] = 0;
		if (strcmp(e.f[FVersion], GNNCC_VERSION) != 0) {
			stale++;
			e.line = estrdup(line);
		} else if (!checkentry(&e, why, sizeof why)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: warning: %s:%d: corrupt tuning cache entry (%s); ignored\n", who, path, lineno, why);
			freeentry(&e);
			c->dirty = true;
			continue;
		} else
			e.valid = true;
		c->e = erealloc(c->e, (c->n + 1) * sizeof *c->e);
		c->e[c->n++] = e;
	}
	if (bad > 5)
		fprintf(stderr, "%s: warning: %s: %d corrupt entries in all; ignored\n", who, path, bad);
	if (stale)
		fprintf(stderr, "%s: warning: %s: %d stale entr%s from another gnncc version; ignored\n", who, path, stale, stale == 1 ? "y" : "ies");
	if (ferror(f))
		fprintf(stderr, "%s: warning: reading the tuning cache %s failed; the rest is not used\n", who, path);
	free(line);
	fclose(f);
	return c;
}

static bool
matches(const Entry *e, const CacheKey *k, bool bucket)
{
	char sig[32];

	snprintf(sig, sizeof sig, "%016llx", (unsigned long long)k->sig);
	return e->valid && strcmp(e->f[FTarget], k->target) == 0 && strcmp(e->f[FArch], k->arch) == 0 &&
	       strcmp(e->f[FKernel], sig) == 0 && (!bucket || strcmp(e->f[FBucket], k->bucket) == 0);
}

bool
cachefind(Cache *c, const CacheKey *k, CacheHit *hit)
{
	char err[128];
	int i;

	for (i = c->n - 1; i >= 0; i--) {
		if (!matches(&c->e[i], k, k->bucket != NULL))
			continue;
		if (schedparse(c->e[i].f[FSchedule], &hit->s, err, sizeof err) < 0)
			continue;
		hit->us = strtod(c->e[i].f[FUs], NULL);
		hit->refus = strtod(c->e[i].f[FRefUs], NULL);
		snprintf(hit->bucket, sizeof hit->bucket, "%s", c->e[i].f[FBucket]);
		return true;
	}
	return false;
}

/* JSON string values here never need escapes: keep them so */
static char *
plain(const char *s)
{
	char *d = estrdup(s ? s : "");
	size_t i;

	for (i = 0; d[i]; i++)
		if (d[i] == '"' || d[i] == '\\' || (unsigned char)d[i] < ' ')
			d[i] = '_';
	return d;
}

void
cacheput(Cache *c, const CacheKey *k, const Sched *s, double us, double refus, const char *model, const char *kernel)
{
	Entry e = {0};
	char buf[128];
	int i;

	e.f[FVersion] = plain(GNNCC_VERSION);
	e.f[FTarget] = plain(k->target);
	e.f[FArch] = plain(k->arch);
	snprintf(buf, sizeof buf, "%016llx", (unsigned long long)k->sig);
	e.f[FKernel] = plain(buf);
	e.f[FBucket] = plain(k->bucket);
	schedprint(buf, sizeof buf, s);
	e.f[FSchedule] = plain(buf);
	snprintf(buf, sizeof buf, "%.3f", us);
	e.f[FUs] = plain(buf);
	snprintf(buf, sizeof buf, "%.3f", refus);
	e.f[FRefUs] = plain(buf);
	e.f[FModel] = plain(model);
	e.f[FName] = plain(kernel);
	snprintf(buf, sizeof buf, "%016llx", (unsigned long long)checksum(e.f));
	e.f[FCheck] = plain(buf);
	e.valid = true;
	/* one entry per key */
	for (i = 0; i < c->n; i++)
		if (matches(&c->e[i], k, true)) {
			freeentry(&c->e[i]);
			c->e[i] = e;
			c->dirty = true;
			return;
		}
	c->e = erealloc(c->e, (c->n + 1) * sizeof *c->e);
	c->e[c->n++] = e;
	c->dirty = true;
}

/* mkdir -p of path's directory */
static void
mkparents(const char *path)
{
	char *d = estrdup(path), *p;

	for (p = d + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(d, 0777);
			*p = '/';
		}
	free(d);
}

int
cachesave(Cache *c)
{
	OutFile o;
	int i, k, err;

	if (!c->dirty)
		return 0;
	mkparents(c->path);
	if ((err = outopen(&o, c->path)) != 0) {
		fprintf(stderr, "%s: error: cannot write the tuning cache %s: %s\n", c->who, c->path, strerror(err));
		return -1;
	}
	for (i = 0; i < c->n; i++) {
		if (c->e[i].line) {
			fprintf(o.f, "%s\n", c->e[i].line);
			continue;
		}
		fputc('{', o.f);
		for (k = 0; k < NF; k++)
			fprintf(o.f, k == FUs || k == FRefUs ? "%s\"%s\":%s" : "%s\"%s\":\"%s\"", k ? "," : "", fname[k], c->e[i].f[k]);
		fputs("}\n", o.f);
	}
	if ((err = outcommit(&o, false)) != 0) {
		fprintf(stderr, "%s: error: cannot write the tuning cache %s: %s\n", c->who, c->path, strerror(err));
		return -1;
	}
	c->dirty = false;
	return 0;
}

void
cacheclose(Cache *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		freeentry(&c->e[i]);
	free(c->e);
	free(c->path);
	free(c);
}
