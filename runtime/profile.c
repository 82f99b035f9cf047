/*
** profile.c: per-launch profiling (gnnrt.h, docs/cli.md "Profiling").
**
** Generated launches test gnn_prof_on_ and, when it is set, bracket the
** launch with gnn_prof_begin_ / gnn_prof_end_: begin appends a record
** and starts the device's timer (dev->prof: CUDA events on the model's
** stream; the host clock where the device has none), end stops it, waits
** for it and fills in the time and the emulated device's work counters.
** Names are interned here, since a record outlives the model (and the
** shared object) that launched it.  Each finished record is also a JSON
** line of the output file, flushed at once, so a run that dies keeps
** what it profiled.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "internal.h"

int gnn_prof_on_;

/* a record, and its timer while the launch runs */
typedef struct Slot {
	gnn_launch_record rec;
	const gnn_device *dev;
	void *stream;
	void *tok;               /* the device's timer ... */
	struct timespec t0;      /* ... or the host clock's start */
} Slot;

static struct {
	Slot *s;
	size_t n, cap;
	char **str;              /* interned names */
	size_t nstr, capstr;
	FILE *out;
	int envread, envlock;    /* GNN_PROFILE read; the lock that reads it */
} P;

/* The phase of a call and its program are the calling thread's: models
 * of other threads create, bind and run meanwhile (docs/threads.md), and
 * every create sets them, profiled or not. */
static _Thread_local const char *cur_phase;   /* NULL: forward */
static _Thread_local const char *cur_model;   /* the phase's program (gnn_prof_phase_) */

static const char *
intern(const char *s)
{
	size_t i, n;
	char *c;

	if (!s)
		s = "";
	for (i = 0; i < P.nstr; i++)
		if (!strcmp(P.str[i], s))
			return P.str[i];
	if (P.nstr == P.capstr) {
		size_t cap = P.capstr ? 2 * P.capstr : 32;
		char **t = (char **)gnn_realloc(P.str, P.capstr * sizeof *t, cap * sizeof *t);
		if (!t)
			return NULL;
		P.str = t;
		P.capstr = cap;
	}
	n = strlen(s) + 1;
	if (!(c = (char *)gnn_malloc(n)))
		return NULL;
	memcpy(c, s, n);
	return P.str[P.nstr++] = c;
}

static void
clear(void)
{
	size_t i;

	for (i = 0; i < P.nstr; i++)
		gnn_free(P.str[i], strlen(P.str[i]) + 1);
	gnn_free(P.str, P.capstr * sizeof *P.str);
	gnn_free(P.s, P.cap * sizeof *P.s);
	P.str = NULL;
	P.s = NULL;
	P.n = P.cap = P.nstr = P.capstr = 0;
}

gnn_status
gnn_profile_start(const char *path)
{
	FILE *f = NULL;

	if (path && *path && !(f = fopen(path, "w")))
		return gnn_fail(GNN_ERR_IO, "gnn_profile_start: %s: cannot open it for writing", path);
	gnn_profile_stop();
	clear();
	P.out = f;
	gnn_prof_on_ = 1;
	return GNN_OK;
}

gnn_status
gnn_profile_stop(void)
{
	int bad = 0;

	gnn_prof_on_ = 0;
	if (P.out)
		bad = ferror(P.out) | (fclose(P.out) != 0);
	P.out = NULL;
	return bad ? gnn_fail(GNN_ERR_IO, "gnn_profile_stop: writing the profile failed") : GNN_OK;
}

size_t
gnn_profile_count(void)
{
	return P.n;
}

const gnn_launch_record *
gnn_profile_record(size_t i)
{
	return i < P.n ? &P.s[i].rec : NULL;
}

/* GNN_PROFILE=FILE: on from the first model's creation, until exit */
gnn_status
gnn_prof_env_(void)
{
	const char *path;
	int fail = 0;

	if (__atomic_load_n(&P.envread, __ATOMIC_ACQUIRE))
		return GNN_OK;
	/* the first creations of several threads: one reads it */
	gnn_spin_lock_(&P.envlock);
	path = getenv("GNN_PROFILE");
	if (!P.envread) {
		/* a file that cannot be written fails every creation, not only the first */
		if (path && *path && !gnn_prof_on_ && gnn_profile_start(path) != GNN_OK)
			fail = 1;
		else
			__atomic_store_n(&P.envread, 1, __ATOMIC_RELEASE);
	}
	gnn_spin_unlock_(&P.envlock);
	if (fail)
		return gnn_fail(GNN_ERR_IO, "GNN_PROFILE=%s: cannot open it for writing", path);
	return GNN_OK;
}

const char *
gnn_prof_phase_(const char *phase, const char *model)
{
	const char *old = cur_phase;

	cur_phase = phase;
	if (model)
		cur_model = model;
	return old;
}

int
gnn_prof_begin_(const gnn_device *dev, void *stream, const char *model, const char *kernel,
                const char *schedule, unsigned grid, unsigned block, unsigned shmem)
{
	gnn_launch_record *r;
	Slot *sl;

	if (P.n == P.cap) {
		size_t cap = P.cap ? 2 * P.cap : 256;
		Slot *t = (Slot *)gnn_realloc(P.s, P.cap * sizeof *t, cap * sizeof *t);
		if (!t)
			return 0;   /* the launch goes on, unrecorded */
		P.s = t;
		P.cap = cap;
	}
	sl = &P.s[P.n];
	r = &sl->rec;
	r->model = intern(model ? model : cur_model);
	r->phase = intern(cur_phase ? cur_phase : "forward");
	r->kernel = intern(kernel);
	r->schedule = intern(schedule);
	if (!r->model || !r->phase || !r->kernel || !r->schedule)
		return 0;
	r->grid = grid;
	r->block = block;
	r->shmem = shmem;
	r->us = -1;
	r->warps = r->work = r->busiest = -1;
	sl->dev = dev;
	sl->stream = stream;
	sl->tok = NULL;
	if (dev && dev->prof) {
		if (dev->prof->begin(stream, &sl->tok) != 0)
			sl->tok = NULL;
	} else
		timespec_get(&sl->t0, TIME_UTC);
	return (int)++P.n;
}

static void
writeline(const gnn_launch_record *r)
{
	fprintf(P.out, "{\"model\": \"%s\", \"phase\": \"%s\", \"kernel\": \"%s\", \"schedule\": \"%s\", "
	        "\"grid\": %u, \"block\": %u, \"shmem\": %u, \"us\": %.3f", r->model, r->phase, r->kernel,
	        r->schedule, r->grid, r->block, r->shmem, r->us);
	if (r->warps >= 0)
		fprintf(P.out, ", \"warps\": %lld, \"work\": %lld, \"busiest\": %lld", r->warps, r->work, r->busiest);
	fprintf(P.out, "}\n");
	fflush(P.out);
}

void
gnn_prof_end_(int h)
{
	Slot *sl;
	gnn_launch_record *r;

	if (h <= 0 || (size_t)h > P.n)
		return;
	sl = &P.s[h - 1];
	r = &sl->rec;
	if (sl->dev && sl->dev->prof) {
		long long w[3];
		double us;
		if (sl->tok && sl->dev->prof->end(sl->stream, sl->tok, &us, w) == 0) {
			r->us = us;
			r->warps = w[0];
			r->work = w[1];
			r->busiest = w[2];
		}
		sl->tok = NULL;
	} else {
		struct timespec b;
		timespec_get(&b, TIME_UTC);
		r->us = (double)(b.tv_sec - sl->t0.tv_sec) * 1e6 + (double)(b.tv_nsec - sl->t0.tv_nsec) / 1e3;
	}
	if (P.out)
		writeline(r);
}

gnn_status
gnn_profile_print(FILE *f)
{
	size_t i, j, k;

	fprintf(f, "profile: %zu launches (microseconds: CUDA events on a GPU, the host clock on the cpu\n"
	        "target and on the emulated device, where they are not GPU time)\n", P.n);
	fprintf(f, "%-8s %-24s %-28s %8s %6s %6s %11s %9s %11s %9s\n", "phase", "kernel", "schedule", "grid",
	        "block", "shmem", "us", "warps", "work", "busiest");
	for (i = 0; i < P.n; i++) {
		const gnn_launch_record *r = &P.s[i].rec;
		fprintf(f, "%-8s %-24s %-28s %8u %6u %6u %11.3f", r->phase, r->kernel, r->schedule, r->grid, r->block,
		        r->shmem, r->us);
		if (r->warps >= 0)
			fprintf(f, " %9lld %11lld %9lld\n", r->warps, r->work, r->busiest);
		else
			fprintf(f, " %9s %11s %9s\n", "-", "-", "-");
	}
	/* totals per (model, phase), in the order they first ran */
	for (i = 0; i < P.n; i++) {
		const gnn_launch_record *r = &P.s[i].rec;
		double us = 0;
		for (j = 0; j < i; j++)
			if (P.s[j].rec.model == r->model && P.s[j].rec.phase == r->phase)
				break;
		if (j < i)
			continue;
		for (j = i, k = 0; j < P.n; j++)
			if (P.s[j].rec.model == r->model && P.s[j].rec.phase == r->phase) {
				k++;
				us += P.s[j].rec.us > 0 ? P.s[j].rec.us : 0;
			}
		fprintf(f, "total %s %s: %zu launches, %.3f us\n", r->model, r->phase, k, us);
	}
	return ferror(f) ? gnn_fail(GNN_ERR_IO, "gnn_profile_print: writing the table failed") : GNN_OK;
}
