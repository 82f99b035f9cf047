/*
** sampler.h: what the homogeneous and the heterogeneous neighbour
** samplers (sample.c, hsample.c) share, defined in sample.c: Philox
** draws keyed by the sampler's seed, Floyd's k-subsets, the epoch's
** shuffle, a pass's chunks on sampling threads, and the producer
** thread that fills batch i+1 in one of three slots while the caller
** holds batch i (the one before may still be bound).
*/
#ifndef GNNRT_SAMPLER_H
#define GNNRT_SAMPLER_H

#include <pthread.h>

#include "internal.h"

enum { GNN_SAMPLE_SLOTS = 3 };
_Static_assert(GNN_SAMPLE_SLOTS == 3, "the samplers list their three slots by hand");

/* a uniform integer in [0, m), m < 2^32, from the Philox block of ctr
** under seed */
uint32_t gnn_sample_uniform_(uint64_t seed, const uint32_t ctr[4], uint32_t m);
/* c distinct positions out of [0, d), every c-subset equally likely,
** c < d: draw t's block is ctr with word 2 = stream | t */
void gnn_sample_floyd_(uint64_t seed, uint32_t ctr[4], uint32_t stream, int64_t d, int64_t c, int64_t *out);
/* fn(ctx, lo, hi) over [0, n) in threads contiguous chunks, each on a
** thread of its own (a pass under 64 nodes a thread on the caller's) */
void gnn_sample_forall_(int threads, void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx, int64_t n);
/* a[0..n) in the order of epoch's Fisher-Yates shuffle under seed */
void gnn_sample_shuffle_(uint64_t seed, int64_t epoch, int64_t *a, int64_t n);

/* batch seq's slot is seq % GNN_SAMPLE_SLOTS; fill(owner, seq) fills it */
typedef struct gnn_prefetch_ {
	gnn_status (*fill)(void *owner, int64_t seq);
	void *owner;
	int started, stop;
	int64_t prod, cons;           /* batches filled, and returned */
	gnn_status status[GNN_SAMPLE_SLOTS];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
} gnn_prefetch_;
void gnn_prefetch_init_(gnn_prefetch_ *p, gnn_status (*fill)(void *, int64_t), void *owner);
/* the next batch's number (*seq) filled, on this thread or (prefetch) by
** the producer, which starts on the first call; its fill's status */
gnn_status gnn_prefetch_next_(gnn_prefetch_ *p, int prefetch, int64_t *seq);
int gnn_prefetch_taken_(const gnn_prefetch_ *p);   /* a batch was asked for */
/* the next batch's number (*seq), as gnn_prefetch_next_, its failure an
** error of who's naming the batch with its slot's message err[slot] */
gnn_status gnn_sample_take_(gnn_prefetch_ *p, int prefetch, int64_t nbatch, char *const err[GNN_SAMPLE_SLOTS],
	const char *who, int64_t *seq);

/* n zeroed bytes through the allocator hook, NULL for n 0; *fail set
** when they cannot be had; and put back */
void *gnn_sample_zget_(size_t n, int *fail);
void gnn_sample_zput_(void *p, size_t n);
/* add_rows' checks (no batch taken, fewer than the most arrays, sizes)
** and the slots' buffers of cap rows of row_bytes: *dst[k] for slot k */
gnn_status gnn_sample_rows_(const gnn_prefetch_ *p, int nrows, int64_t cap, size_t row_bytes,
	void **dst[GNN_SAMPLE_SLOTS], const char *who);
void gnn_prefetch_destroy_(gnn_prefetch_ *p);      /* stops the producer */

#endif
