/*
 * Choosing each kernel's schedule, for gnncc and gnnrun: a schedule the
 * user forced (--schedule), else the tuning cache's (when its key
 * matches), else a tuning run's (--tune), else the cost model's.  The
 * choice and its reason are kept for --report=schedules.
 */
#ifndef GNNCC_SCHEDULES_H
#define GNNCC_SCHEDULES_H

#include "../codegen/codegen.h"
#include "../runtime/gnnrt.h"

enum { WhyCost, WhyForced, WhyCache, WhyTuned, WhyReference, WhyIR };

typedef struct Choice {
	const char *model;
	Kernel k;
	Sched s;
	int why;                 /* Why* */
	int ncand;               /* the size of its schedule space */
	int ntried;              /* tuned: how many of them ran (--tune-candidates) */
	double us, refus;        /* tuned: measured time and the reference's; cache: recorded */
	char note[96];           /* e.g. the cache entry's bucket */
} Choice;

typedef struct SchedForce {
	char *kernel;            /* "g0", "k12", or "all"; malloc'd */
	Sched s;
} SchedForce;

typedef struct SchedOpts {
	const char *who;         /* "gnncc" or "gnnrun", for messages */
	int target;
	int emu;                 /* cuda on the emulated device (EmuOff: nvcc) */
	bool openmp;
	int cpu;                 /* --cpu (codegen.h's Cpu*): cpu timings differ by it */
	int gpumath;             /* --gpu-math (codegen.h's GpuMath*): the tuning build's */
	unsigned vendor;         /* --vendor: Vendor* (ir.h) bits the schedules may call */
	int olevel;              /* 0: reference schedules unless forced */
	SchedForce *force;
	int nforce;
	/* the graph schedules are for (cost model statistics, cache bucket,
	 * tuning): an edge_index .npy, or a synthetic graph of nodes, edges */
	const char *graph;
	int64_t nodes;           /* -1: the largest index + 1 */
	const char *density;     /* --input-density's list, or NULL */
	int64_t synnodes, synedges;   /* --tune-synthetic; 0 when not asked */
	bool tune;
	double budget;           /* seconds for the whole tuning run; 0: no limit */
	int repeats;             /* timed runs per candidate; 0: adaptive */
	int maxcand;             /* candidates tried per kernel; 0: all */
	const char *cache;       /* NULL: the default file; "" : no cache */
	const char *arch;        /* --arch as given (for the cuda cache key) */
	const char *source;      /* the input, for generated banners */
} SchedOpts;

typedef struct Choices {
	Choice *c;
	int n;
	bool statsknown;
	GraphStats gs;
	char bucket[64];
	char archkey[160];
} Choices;

/* --schedule=KERNEL:FIELDS: 0, or -1 after a message */
int parseforce(const char *arg, SchedForce *f);
/*
 * Choose and set the schedule of every forward kernel of every model of
 * m (optimized).  Returns 0, or -1 after a message (a forced schedule
 * that is not legal, a graph that cannot be read, a failed tuning run).
 */
int pickschedules(Mod *m, const SchedOpts *o, Choices *cs);
void freechoices(Choices *cs);
/* --report=schedules */
void reportschedules(FILE *f, const Choices *cs);

/* tunecache.c ------------------------------------------------------------ */

/* the default cache file: $GNNCC_TUNE_CACHE, $XDG_CACHE_HOME/gnncc/tune.jsonl
 * or ~/.cache/gnncc/tune.jsonl (malloc'd; NULL if no home) */
char *defaultcache(void);
typedef struct CacheKey {
	const char *target, *arch, *bucket;
	uint64_t sig;
} CacheKey;
typedef struct CacheHit {
	Sched s;
	double us, refus;
	char bucket[64];
} CacheHit;
typedef struct Cache Cache;
/* Read path (absent: empty); problems are warnings naming file:line,
 * and those entries are never used.  Never NULL. */
Cache *cacheopen(const char *path, const char *who);
/* an entry with this key (bucket NULL: any bucket, the newest) */
bool cachefind(Cache *c, const CacheKey *k, CacheHit *hit);
void cacheput(Cache *c, const CacheKey *k, const Sched *s, double us, double refus, const char *model, const char *kernel);
/* write back atomically if anything was put; -1 after a message */
int cachesave(Cache *c);
void cacheclose(Cache *c);

/* tune.c ----------------------------------------------------------------- */

/*
 * Compile every candidate of every kernel of m into one shared object,
 * run it on graph g with random weights and
 * inputs, check each candidate against the reference schedule and time
 * it; the winners go to cs (why = WhyTuned) and their attributes.
 */
int tune(Mod *m, const SchedOpts *o, Choices *cs, gnn_graph *g);

#endif
