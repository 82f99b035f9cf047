/*
 * Kernel schedules: how a kernel maps its work onto the machine, kept in
 * the IR as a typed field of the kernel's first instruction (Ins.sched,
 * present when Ins.hassched).  Text ("lanes=8,rows=32") exists only at
 * the boundaries: the IR's sched = "..." attribute (the parser calls
 * schedtake, the printer schedprint), --schedule and the tuning cache,
 * so a misspelt field is an error where it is read, never a silent
 * default later.  A schedule never changes what a kernel computes, only
 * how: every legal schedule gives the same result, which the tuner
 * checks and the tests rely on (the same bits, but for ksplit, whose parts
 * add in another order than one chain, gemm: its fused multiply-adds
 * round differently from the loops', and sparse where B holds an
 * infinity or a NaN, which a skipped zero of A would have multiplied
 * into a NaN).  No schedule is the reference schedule
 * (every field at its default), so -O0 and hand-written IR need none.
 *
 * The fields (which ones apply to which kernel and target is the
 * business of passes/schedule.c):
 *   lanes  threads that share one row (cuda: within a warp; cpu: run one
 *          after another, the same arithmetic in the same order, which
 *          lets the CPU check the GPU's indexing)
 *   rows   rows per block (cuda)
 *   tile   rows per task of a dense transform
 *   axpy   a dense transform's loop order: 1 accumulates whole output
 *          rows (k outer), 0 takes one dot product per output
 *   chunk  rows per OpenMP chunk on the cpu (0: static partition)
 *   gemm   a dense transform through the runtime's blocked GEMM
 *          (gnn_sgemm, cpu), in tasks of this many rows; 0: the loops
 *          of tile and axpy
 *   kc     the GEMM's K-block length (0: the library's choice)
 *   bm, bn, bk, tm, tn
 *          a dense transform as cuda's tiled GEMM (codegen/gemmcuda.c):
 *          a block computes a bm x bn tile of the output through
 *          bk-deep slabs of A and B in shared memory, each thread a
 *          tm x tn register tile ((bm/tm) * (bn/tn) threads); all five
 *          together, or none (0: the loops of tile)
 *   ksplit the tiled GEMM's K split into at most this many parts when
 *          its output tiles are too few to fill the device (cuda):
 *          each block sums its part's slabs, a second kernel adds the
 *          parts in order (gnn_gemm_ksplit, runtime/gnnrt.h, takes the
 *          count from the row count at launch); 0 and 1: one part
 *   sparse a dense transform as cuda's sparse-input GEMM
 *          (codegen/spgemmcuda.c): a warp a row of A finds the row's
 *          non-zeros by ballots and adds only their rows of B, this many
 *          warps (rows) a block; correct for any A, fast for a mostly
 *          zero one (bag-of-words features); takes no other field
 *   split  edge-balanced walks (cuda row kernels): rows longer than a
 *          chunk of at least this many edges are walked in chunks by
 *          kernels of their own and combined in a fixed tree
 *          (runtime/split.c); 0: every row walked by its own lanes
 *   vendor a dense transform as a vendor library's call (cuda, gnncc
 *          --vendor): 1 is cuBLAS's SGEMM (codegen/vendor.c); 0: our
 *          own kernels.  Alone: it takes no other GEMM field
 *   slices the most edge slices a narrow sum's or mean's walk takes
 *          (cuda lanes, codegen/rowkernel.c's rowslices); 1: the lanes
 *          share the columns and walk the row's edges together; 0: as
 *          many as rowslices' rule gives
 *   perm   how a cuda walk reads the bind-time arrays of its edges (a
 *          gather's src index, GCN's norm): 0, copies of them in its
 *          plan's order made at bind, the index as int32 where the ids
 *          fit, read at the walk's position; 1, the arrays themselves
 *          through the plan's permutation (one dependent load more an
 *          edge: the form the H100 record measured)
 *   single 1: a cuda sum's walk whose width its lanes do not divide
 *          takes one edge a step (the form the H100 record measured);
 *          0: two (codegen/rowkernel.c's pairededges)
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const struct {
	const char *key;
	size_t off;
	int dflt, min, max;
} fields[] = {
	{"lanes", offsetof(Sched, lanes), 1, 1, 32},
	{"rows", offsetof(Sched, rows), 1, 1, 1024},
	{"tile", offsetof(Sched, tile), 1, 1, 64},
	{"axpy", offsetof(Sched, axpy), 0, 0, 1},
	{"chunk", offsetof(Sched, chunk), 0, 0, 1 << 20},
	{"gemm", offsetof(Sched, gemm), 0, 0, 4096},
	{"kc", offsetof(Sched, kc), 0, 0, 1 << 16},
	{"bm", offsetof(Sched, bm), 0, 0, 256},
	{"bn", offsetof(Sched, bn), 0, 0, 256},
	{"bk", offsetof(Sched, bk), 0, 0, 64},
	{"tm", offsetof(Sched, tm), 0, 0, 16},
	{"tn", offsetof(Sched, tn), 0, 0, 16},
	{"split", offsetof(Sched, split), 0, 0, 1 << 20},
	{"ksplit", offsetof(Sched, ksplit), 0, 0, 64},
	{"sparse", offsetof(Sched, sparse), 0, 0, 32},
	{"vendor", offsetof(Sched, vendor), 0, 0, 1},
	{"slices", offsetof(Sched, slices), 0, 0, 32},
	{"perm", offsetof(Sched, perm), 0, 0, 1},
	{"single", offsetof(Sched, single), 0, 0, 1},
};
enum { NField = sizeof fields / sizeof fields[0] };

static int *
field(Sched *s, int k)
{
	return (int *)((char *)s + fields[k].off);
}

void
scheddefault(Sched *s)
{
	int k;

	for (k = 0; k < NField; k++)
		*field(s, k) = fields[k].dflt;
}

bool
schedequal(const Sched *a, const Sched *b)
{
	return memcmp(a, b, sizeof *a) == 0;
}

int
schedparse(const char *text, Sched *s, char *err, size_t errlen)
{
	const char *p = text;
	bool seen[NField] = {0};
	int k;

	scheddefault(s);
	if (strcmp(text, "default") == 0)
		return 0;
	while (*p) {
		size_t n = strcspn(p, "=,");
		char *end;
		long v;

		for (k = 0; k < NField; k++)
			if (strlen(fields[k].key) == n && strncmp(p, fields[k].key, n) == 0)
				break;
		if (k == NField) {
			snprintf(err, errlen, "unknown schedule field '%.*s'", (int)(n > 32 ? 32 : n), p);
			return -1;
		}
		if (seen[k]) {
			snprintf(err, errlen, "schedule field '%s' given twice", fields[k].key);
			return -1;
		}
		seen[k] = true;
		if (p[n] != '=') {
			snprintf(err, errlen, "schedule field '%s' needs a value ('%s=N')", fields[k].key, fields[k].key);
			return -1;
		}
		p += n + 1;
		if (*p < '0' || *p > '9') {
			snprintf(err, errlen, "schedule field '%s': expected a number", fields[k].key);
			return -1;
		}
		v = strtol(p, &end, 10);
		if (v < fields[k].min || v > fields[k].max) {
			snprintf(err, errlen, "schedule field '%s' is %ld, not in [%d, %d]", fields[k].key, v, fields[k].min, fields[k].max);
			return -1;
		}
		*field(s, k) = (int)v;
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p) {
			snprintf(err, errlen, "schedule: expected ',' after the value of '%s'", fields[k].key);
			return -1;
		}
	}
	return schedvalid(s, err, errlen);
}

int
gemmsharedbytes(const Sched *s)
{
	/* A's slab transposed, 4 floats of padding per row (fewer bank
	 * conflicts as threads store along k; rows stay 16-byte aligned for
	 * float4 reads), and B's as it is */
	return 4 * s->bk * (s->bm + 4) + 4 * s->bk * s->bn;
}

/* the tiled GEMM's fields: all of them, dividing each other, within a
 * block's 1024 threads and 48 KiB of shared memory */
static int
gemmtilevalid(const Sched *s, char *err, size_t errlen)
{
	int threads;

	if (!s->bm || !s->bn || !s->bk || !s->tm || !s->tn) {
		snprintf(err, errlen, "schedule: bm, bn, bk, tm and tn go together");
		return -1;
	}
	if (s->tile != 1 || s->axpy || s->gemm || s->kc) {
		snprintf(err, errlen, "schedule: bm, bn, bk, tm and tn take neither tile, axpy, gemm nor kc");
		return -1;
	}
	if (s->bm % s->tm || s->bn % s->tn) {
		snprintf(err, errlen, "schedule: tm must divide bm and tn divide bn (bm=%d,tm=%d,bn=%d,tn=%d)", s->bm, s->tm,
		         s->bn, s->tn);
		return -1;
	}
	if (s->bm % 16 || s->bn % 8 || s->bk % 8 || (s->tm * s->tn) % 4) {
		/* the tensor-core form steps through 16 x 8 x 8 tiles, four
		 * accumulators a lane */
		snprintf(err, errlen, "schedule: bm must be a multiple of 16, bn and bk of 8, tm*tn of 4");
		return -1;
	}
	threads = s->bm / s->tm * (s->bn / s->tn);
	if (threads > 1024 || threads % 32) {
		snprintf(err, errlen, "schedule: (bm/tm)*(bn/tn) is %d threads, not a whole number of warps up to 1024", threads);
		return -1;
	}
	if (gemmsharedbytes(s) > 48 * 1024) {
		snprintf(err, errlen, "schedule: bm=%d,bn=%d,bk=%d stage %d bytes in shared memory, above 48 KiB", s->bm, s->bn,
		         s->bk, gemmsharedbytes(s));
		return -1;
	}
	return 0;
}

int
schedvalid(const Sched *s, char *err, size_t errlen)
{
	Sched *m = (Sched *)s;
	int k;

	for (k = 0; k < NField; k++)
		if (*field(m, k) < fields[k].min || *field(m, k) > fields[k].max) {
			snprintf(err, errlen, "schedule field '%s' is %d, not in [%d, %d]", fields[k].key, *field(m, k),
			         fields[k].min, fields[k].max);
			return -1;
		}
	if (s->gemm && (s->tile != 1 || s->axpy)) {
		snprintf(err, errlen, "schedule: gemm takes neither tile nor axpy");
		return -1;
	}
	if (s->kc && !s->gemm) {
		snprintf(err, errlen, "schedule: kc needs gemm");
		return -1;
	}
	if ((s->bm || s->bn || s->bk || s->tm || s->tn) && gemmtilevalid(s, err, errlen) < 0)
		return -1;
	if (s->ksplit && !s->bm) {
		snprintf(err, errlen, "schedule: ksplit needs the tiled GEMM's bm, bn, bk, tm and tn");
		return -1;
	}
	if (s->sparse && (s->tile != 1 || s->axpy || s->gemm || s->kc || s->bm || s->ksplit || s->vendor)) {
		snprintf(err, errlen, "schedule: sparse takes neither tile, axpy, gemm, kc, vendor nor the tiled GEMM's fields");
		return -1;
	}
	if (s->vendor && (s->bm || s->gemm || s->tile != 1 || s->axpy)) {
		snprintf(err, errlen, "schedule: vendor takes no tile, axpy, gemm or tiled GEMM fields");
		return -1;
	}
	if (s->lanes & (s->lanes - 1)) {
		snprintf(err, errlen, "schedule: lanes must be a power of two, not %d", s->lanes);
		return -1;
	}
	return 0;
}

void
schedprint(char *buf, size_t n, const Sched *s)
{
	Sched *m = (Sched *)s;
	size_t len = 0;
	int k;

	buf[0] = 0;
	for (k = 0; k < NField; k++)
		if (*field(m, k) != fields[k].dflt)
			len += snprintf(buf + len, n > len ? n - len : 0, "%s%s=%d", len ? "," : "", fields[k].key, *field(m, k));
	if (!len)
		snprintf(buf, n, "default");
}

void
schedof(const Ins *in, Sched *s)
{
	if (in->hassched)
		*s = in->sched;
	else
		scheddefault(s);
}

bool
hassched(const Ins *in)
{
	return in->hassched;
}

void
putsched(Ins *in, const Sched *s)
{
	in->sched = *s;
	in->hassched = true;
}

void
dropsched(Ins *in)
{
	scheddefault(&in->sched);
	in->hassched = false;
}

int
schedtake(Attr *attr, int *nattr, Sched *s, bool *has, char *err, size_t errlen)
{
	int k;

	*has = false;
	scheddefault(s);
	for (k = 0; k < *nattr && strcmp(attr[k].key, "sched") != 0; k++)
		;
	if (k == *nattr)
		return 0;
	if (attr[k].kind != AStr) {
		snprintf(err, errlen, "attribute 'sched' must be a string");
		return -1;
	}
	if (schedparse(attr[k].u.s, s, err, errlen) < 0)
		return -1;
	*has = true;
	memmove(&attr[k], &attr[k + 1], (size_t)(*nattr - k - 1) * sizeof *attr);
	--*nattr;
	return 0;
}
