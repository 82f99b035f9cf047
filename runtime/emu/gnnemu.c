/*
 * gnnemu core: runs CUDA grids on the CPU (see gnnemu.h for the contract).
 *
 * Design.  A launch runs its blocks one after another on the calling OS
 * thread.  Each GPU thread of a block is a fiber with its own mmap'ed stack
 * (guard page below it); a small scheduler loop on the host stack resumes
 * runnable fibers in a chosen order, and a fiber runs until it waits at a
 * barrier or a warp collective, or exits (then, but under TSan, it
 * switches to the queue's next fiber itself, as the loop would).  The last thread to arrive at a
 * barrier releases the others (collectives compute every participant's
 * result at that moment, so no lane can overwrite a value another still
 * has to read).  When nothing is runnable but threads still wait, the
 * barrier can never complete: that is reported, never waited on.
 *
 * Device memory is one reserved mapping, PROT_NONE whenever the host
 * runs, so a host access faults into our SIGSEGV handler.  Sanitizers are
 * found through weak symbols (this file is linked both uninstrumented into
 * TSan processes and instrumented into ASan builds): with TSan, every GPU
 * thread is a TSan fiber, switches carry no synchronization, and CUDA's
 * happens-before edges are made explicit with __tsan_release/acquire;
 * shared memory and the sync objects of a block are mapped afresh for
 * each block so that TSan forgets them between blocks, and TSan fibers
 * (costly to make) are recycled in two rows, each stack only ever used by
 * its own fiber; a shadow of the heap of our own finds the races between
 * blocks that the recycled fibers' clocks hide.
 *
 * Threads.  CUDA's runtime may be called from several host threads, and
 * so may the emulator: its state (the heap, the fibers, the block being
 * run, captures, pinned memory) is one per process, so each host entry
 * point holds one recursive lock for its whole call (API_LOCK), a launch
 * its whole grid: kernels of different host threads run one after the
 * other, as they may on a GPU.  Device-side calls (barriers, collectives,
 * shared memory) run inside a launch, on its host thread, and take no
 * lock.  What CUDA keeps per thread is per thread here too: the last
 * error, the kernel running (a fault in another thread is that thread's),
 * and a thread-local capture's reach.  Under TSan the lock orders one
 * thread's calls before the next one's, as a GPU's runtime does.
 */
#define _GNU_SOURCE
#include "gnnemu.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__) || defined(GNNEMU_UCONTEXT)
#include <ucontext.h>
#define GNNEMU_USE_UCONTEXT 1
#endif

/* ---- sanitizer hooks (weak: NULL when the runtime is absent) ---- */
extern void *__tsan_get_current_fiber(void) __attribute__((weak));
extern void *__tsan_create_fiber(unsigned flags) __attribute__((weak));
extern void __tsan_destroy_fiber(void *fiber) __attribute__((weak));
extern void __tsan_switch_to_fiber(void *fiber, unsigned flags) __attribute__((weak));
extern void __tsan_set_fiber_name(void *fiber, const char *name) __attribute__((weak));
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));
extern void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
extern void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
extern void *__asan_region_is_poisoned(void *beg, size_t size) __attribute__((weak));
extern void __sanitizer_start_switch_fiber(void **save, const void *bottom, size_t size) __attribute__((weak));
extern void __sanitizer_finish_switch_fiber(void *save, const void **bottom, size_t *size) __attribute__((weak));
extern void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out, size_t n) __attribute__((weak));

#define TSAN_NO_SYNC 1u   /* __tsan_switch_to_fiber_no_sync */

static int have_tsan, have_asan;

/* the lock of every host entry point, released on each of its returns */
static pthread_mutex_t api_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int
api_lock(void)
{
	pthread_mutex_lock(&api_mutex);
	return 0;
}

static void
api_unlock(int *held)
{
	(void)held;
	pthread_mutex_unlock(&api_mutex);
}

#define API_LOCK() int api_held_ __attribute__((cleanup(api_unlock), unused)) = api_lock()

/* ---- constants ---- */
#define POISON 0x7fbadbadu
#define POISON_QUIET 0x7ffadbadu
#define ALIGN 256u
#define REDZONE 256u
#define SHARED_LIMIT (48u * 1024u)
#define SHARED_RZ 64u
#define SHARED_SITES 1024u   /* declarations per kernel: CUDA bounds only their bytes */
#define SHARED_ARENA (SHARED_LIMIT + SHARED_SITES * (SHARED_RZ + 64u) + 4096u)
#define MAX_THREADS 1024u

/* cudaError_t values */
enum {
	E_OK = 0, E_INVALID_VALUE = 1, E_MEMORY = 2, E_INVALID_DEVICE = 101,
	E_INVALID_HANDLE = 400, E_ILLEGAL_STATE = 401, E_CAPTURE_UNSUPPORTED = 900,
	E_CAPTURE_INVALIDATED = 901, E_CAPTURE_UNMATCHED = 903, E_GRAPH_UPDATE = 910
};

/* ---- configuration ---- */
static int cfg_read;
static int order = GNNEMU_FORWARD;
static unsigned long long order_seed = 1;
static unsigned grid_max;
static size_t stack_size;
static int initcheck = 1;
static size_t page;
static const char *work_path;   /* GNNEMU_WORK: where launches' work goes, or NULL */
static int defer;               /* GNNEMU_DEFER=1: stream work waits for a synchronization */

static size_t
parse_size(const char *s, size_t dflt)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return dflt;
	switch (*end) {
	case 'k': case 'K': v <<= 10; break;
	case 'm': case 'M': v <<= 20; break;
	case 'g': case 'G': v <<= 30; break;
	default: break;
	}
	return (size_t)v;
}

static void
parse_order(const char *s)
{
	if (!s || !*s || !strcmp(s, "forward"))
		order = GNNEMU_FORWARD;
	else if (!strcmp(s, "reverse"))
		order = GNNEMU_REVERSE;
	else if (!strncmp(s, "random", 6)) {
		order = GNNEMU_RANDOM;
		order_seed = s[6] == ':' ? strtoull(s + 7, NULL, 0) : 1;
	} else {
		fprintf(stderr, "gnnemu: error: GNNEMU_ORDER=%s: expected forward, reverse or random[:SEED]\n", s);
		fflush(stderr);
		_exit(1);
	}
}

static void
config(void)
{
	const char *s;

	if (cfg_read)
		return;
	cfg_read = 1;
	have_tsan = __tsan_create_fiber && __tsan_switch_to_fiber && __tsan_get_current_fiber &&
		    __tsan_destroy_fiber && __tsan_acquire && __tsan_release;
	have_asan = __asan_poison_memory_region && __asan_unpoison_memory_region &&
		    __sanitizer_start_switch_fiber && __sanitizer_finish_switch_fiber;
	page = (size_t)sysconf(_SC_PAGESIZE);
	parse_order(getenv("GNNEMU_ORDER"));
	if ((s = getenv("GNNEMU_GRID_MAX")) && *s)
		grid_max = (unsigned)strtoul(s, NULL, 0);
	stack_size = parse_size(getenv("GNNEMU_STACK"), have_asan ? 256u << 10 : 64u << 10);
	if (stack_size < 16384)
		stack_size = 16384;
	stack_size = (stack_size + page - 1) / page * page;
	if ((s = getenv("GNNEMU_INITCHECK")) && !strcmp(s, "0"))
		initcheck = 0;
	if ((s = getenv("GNNEMU_WORK")) && *s)
		work_path = s;
	if ((s = getenv("GNNEMU_DEFER")) && !strcmp(s, "1"))
		defer = 1;
}

void
gnnemu_set_order(int o, unsigned long long seed)
{
	API_LOCK();
	config();
	order = o;
	order_seed = seed;
}

void
gnnemu_set_grid_max(unsigned n)
{
	API_LOCK();
	config();
	grid_max = n;
}

static int defer_flush(void);

void
gnnemu_set_defer(int on)
{
	API_LOCK();
	config();
	if (!on)
		defer_flush();
	defer = on != 0;
}

/* ---- errors ---- */
/* Per host thread, as CUDA's are.  initial-exec: gnnrun dlopens the
 * emulator inside a model's object, and LeakSanitizer's tracer crashes
 * walking dynamic TLS blocks (memcheck runs end with "Tracer caught
 * signal 11"); two words fit the static TLS glibc keeps for dlopen. */
#define EMU_TLS __attribute__((tls_model("initial-exec")))
gnnemu_thread *gnnemu_self;
static _Thread_local const char *cur_kernel EMU_TLS;   /* the kernel this thread runs, or NULL */
static const char *last_kernel;     /* the last kernel launched */
static _Thread_local int last_error EMU_TLS;

static void
die_write(const char *msg)
{
	size_t n = strlen(msg);

	fflush(stdout);
	while (n > 0) {
		ssize_t w = write(2, msg, n);
		if (w <= 0)
			break;
		msg += w;
		n -= (size_t)w;
	}
	_exit(1);
}

/* Formats "gnnemu: error: [kernel 'K' block (..) thread (..): ]WHAT[, at F:L]". */
static void __attribute__((noreturn, format(printf, 4, 0)))
vfatal_for(const gnnemu_thread *t, const char *file, int line, const char *fmt, va_list ap)
{
	char buf[2048];
	size_t n;

	n = (size_t)snprintf(buf, sizeof buf, "gnnemu: error: ");
	if (cur_kernel && t)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "kernel '%s' block (%u,%u,%u) thread (%u,%u,%u): ",
				      cur_kernel, t->bid.x, t->bid.y, t->bid.z, t->tid.x, t->tid.y, t->tid.z);
	else if (cur_kernel)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "kernel '%s': ", cur_kernel);
	if (n < sizeof buf)
		n += (size_t)vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	if (file && n < sizeof buf)
		n += (size_t)snprintf(buf + n, sizeof buf - n, ", at %s:%d", file, line);
	if (n >= sizeof buf - 1)
		n = sizeof buf - 2;
	buf[n] = '\n';
	buf[n + 1] = 0;
	die_write(buf);
	_exit(1);
}

static void __attribute__((noreturn, format(printf, 4, 5)))
fatal_for(const gnnemu_thread *t, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfatal_for(t, file, line, fmt, ap);
}

void
gnnemu_fatal(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfatal_for(gnnemu_self, file, line, fmt, ap);
}

/* a host-side error: no thread, and the kernel only when one runs */
#define host_fatal(...) fatal_for(NULL, NULL, 0, __VA_ARGS__)

static int
set_error(int e)
{
	if (e)
		last_error = e;
	return e;
}

int
gnnemu_last_error(int reset)
{
	int e = last_error;

	if (reset)
		last_error = 0;
	return e;
}

static const struct {
	int code;
	const char *name, *text;
} errors[] = {
	{0, "cudaSuccess", "no error"},
	{1, "cudaErrorInvalidValue", "invalid argument"},
	{2, "cudaErrorMemoryAllocation", "out of memory"},
	{3, "cudaErrorInitializationError", "initialization error"},
	{9, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
	{17, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
	{21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
	{100, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
	{101, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{400, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
	{401, "cudaErrorIllegalState", "the operation cannot be performed in the present state"},
	{600, "cudaErrorNotReady", "device not ready"},
	{700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
	{701, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
	{719, "cudaErrorLaunchFailure", "unspecified launch failure"},
	{900, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
	{901, "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
	{903, "cudaErrorStreamCaptureUnmatched", "capture was not initiated in this stream"},
	{910, "cudaErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
	{999, "cudaErrorUnknown", "unknown error"},
};

const char *
gnnemu_error_name(int e)
{
	size_t i;

	for (i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e)
			return errors[i].name;
	return "cudaErrorUnknown";
}

const char *
gnnemu_error_string(int e)
{
	size_t i;

	for (i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e)
			return errors[i].text;
	return "unrecognized error code";
}

/* stream capture (its section is at the end): does an active capture
 * forbid a call such as cudaMalloc (and invalidate itself)?  Does d go
 * into a capturing stream's graph rather than run? */
static int capture_forbids(void);
static int capture_launch(const gnnemu_launch_desc *d);
static int graph_replaying;   /* inside cudaGraphLaunch */
static unsigned long long copies_run;   /* gnnemu_stats.copies */

/* ---- the device heap ---- */
struct rec {
	size_t off, size, span;   /* span: to the next record (redzone included) */
	int live;
};

static struct {
	unsigned char *base;
	size_t size, top, hi;     /* hi: top rounded up to a page; PROT_NONE below when closed */
	int depth;                /* open (RW) while > 0 */
	size_t lo, openhi;        /* while open: [lo, openhi) is RW */
	struct rec *recs;
	size_t nrec, cap;
	/* accounting, in allocation units (ALIGN-rounded sizes): what is
	 * live, the most that was at once, the cudaMalloc calls made */
	size_t inuse, peak, nlive;
	unsigned long long nmalloc;
	size_t cap_bytes;         /* GNNEMU_MEM_CAP / gnnemu_set_mem_cap: 0 none */
	unsigned long long fail_at;   /* the cudaMalloc call (nmalloc) that fails, 0 none */
} H;

/* the bytes an allocation of n counts for against the cap */
static size_t
units(size_t n)
{
	return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* the device memory there is: the cap, or the whole heap */
static size_t
mem_total(void)
{
	return H.cap_bytes && H.cap_bytes < H.size ? H.cap_bytes : H.size;
}

static void install_segv(void);

static void
fill_poison(unsigned char *p, size_t n, size_t phase)
{
	static const unsigned char pat[4] = {0xad, 0xdb, 0xba, 0x7f};   /* 0x7fbadbad, little endian */
	size_t i = 0;

	while (i < n && ((phase + i) & 3))
		p[i] = pat[(phase + i) & 3], i++;
	for (; i + 4 <= n; i += 4) {
		uint32_t w = POISON;
		memcpy(p + i, &w, 4);
	}
	for (; i < n; i++)
		p[i] = pat[(phase + i) & 3];
}

/* first byte offset in [p, p+n) (phase as in fill_poison) that is not poison, or n */
static size_t
check_poison(const unsigned char *p, size_t n, size_t phase)
{
	static const unsigned char pat[4] = {0xad, 0xdb, 0xba, 0x7f};
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pat[(phase + i) & 3])
			return i;
	return n;
}

static void
heap_init(void)
{
	size_t want;
	void *m = MAP_FAILED;

	if (H.base)
		return;
	config();
	want = parse_size(getenv("GNNEMU_DEVICE_MEMORY"), (size_t)16 << 30);
	want = (want + 65535) / 65536 * 65536;
	if (want < ((size_t)1 << 20))
		want = (size_t)1 << 20;
	/* halve until the reservation fits (a ulimit -v, an odd layout) */
	while (want >= ((size_t)64 << 20)) {
		m = mmap(NULL, want, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED)
			break;
		want /= 2;
	}
	if (m == MAP_FAILED)
		host_fatal("cannot reserve the device heap (%s)", strerror(errno));
	H.base = m;
	H.size = want;
	H.top = REDZONE;   /* a redzone before the first allocation */
	H.cap_bytes = parse_size(getenv("GNNEMU_MEM_CAP"), 0);
	H.fail_at = parse_size(getenv("GNNEMU_MALLOC_FAIL"), 0);
	install_segv();
}

/*
 * Kernels and copies open the span from the lowest live allocation to
 * the end of the highest; quarantined memory outside it stays PROT_NONE.
 * A protection change costs in proportion to the pages it covers, and
 * freed memory is never reused before the heap is full, so opening all
 * of it made every launch of a long run slower than the one before.
 */
static void
heap_open(void)
{
	size_t i, lo = 0, hi = 0;

	if (H.depth++ != 0)
		return;
	for (i = 0; i < H.nrec; i++)
		if (H.recs[i].live) {
			lo = H.recs[i].off;
			break;
		}
	for (i = H.nrec; i-- > 0;)
		if (H.recs[i].live) {
			hi = H.recs[i].off + H.recs[i].span;
			break;
		}
	H.lo = lo / page * page;
	H.openhi = (hi + page - 1) / page * page;
	if (H.openhi > H.hi)
		H.openhi = H.hi;
	if (H.openhi > H.lo)
		mprotect(H.base + H.lo, H.openhi - H.lo, PROT_READ | PROT_WRITE);
}

static int in_heap(const void *p);

/* the pages of n device bytes at p while the heap is closed: a copy's
 * (a readback of 8 bytes should not change the protection of the whole
 * heap twice), a record's for cudaMalloc and cudaFree (pages shared with
 * neighbours are closed again with them) */
static void
range_protect(const void *p, size_t n, int prot)
{
	size_t lo, hi;

	if (H.depth != 0 || n == 0 || !in_heap(p))
		return;
	lo = (size_t)((const unsigned char *)p - H.base) / page * page;
	hi = ((size_t)((const unsigned char *)p - H.base) + n + page - 1) / page * page;
	mprotect(H.base + lo, hi - lo, prot);
}

static void
heap_close(void)
{
	size_t hi;

	if (--H.depth != 0)
		return;
	/* and what was carved while open (heap_carve opens it RW) */
	hi = H.hi > H.openhi ? H.hi : H.openhi;
	if (H.openhi > H.lo)
		mprotect(H.base + H.lo, hi - H.lo, PROT_NONE);
	else if (H.hi > H.openhi)
		mprotect(H.base + H.openhi, H.hi - H.openhi, PROT_NONE);
}

/* the record holding byte offset off, or NULL */
static struct rec *
find_rec(size_t off)
{
	size_t lo = 0, hi = H.nrec;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (H.recs[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (off < H.recs[lo - 1].off + H.recs[lo - 1].span)
		return &H.recs[lo - 1];
	return NULL;
}

static int
in_heap(const void *p)
{
	return H.base && (const unsigned char *)p >= H.base && (const unsigned char *)p < H.base + H.size;
}

/* the live allocation holding [p, p+n) or NULL (p may be its end when n == 0) */
static struct rec *
live_rec(const void *p)
{
	struct rec *r;

	if (!in_heap(p))
		return NULL;
	r = find_rec((size_t)((const unsigned char *)p - H.base));
	if (!r || !r->live)
		return NULL;
	if ((size_t)((const unsigned char *)p - H.base) > r->off + r->size)
		return NULL;
	return r;
}

int
gnnemu_is_device_pointer(const void *p)
{
	API_LOCK();
	return live_rec(p) != NULL;
}

static const char *describe_ptr(const void *p, char *buf, size_t n);

void
gnnemu_check_range(const char *call, const char *what, const void *p, size_t n)
{
	API_LOCK();
	struct rec *r;
	char buf[160];
	size_t off;
	void *bad;

	if (n == 0)
		return;
	if (!(r = live_rec(p))) {
		if (in_heap(p))
			host_fatal("%s: %s points to %s", call, what, describe_ptr(p, buf, sizeof buf));
		host_fatal("%s: %s is not device memory (%p)", call, what, p);
	}
	off = (size_t)((const unsigned char *)p - H.base) - r->off;
	if (n > r->size - off)
		host_fatal("%s: %s's %zu bytes from offset %zu overrun its %zu-byte allocation", call, what, n, off, r->size);
	/* a redzone between the arena's buffers (the runtime's gnnemu_redzone) */
	if (have_asan && __asan_region_is_poisoned && (bad = __asan_region_is_poisoned((void *)p, n)))
		host_fatal("%s: %s's %zu bytes from offset %zu reach a redzone at offset %zu", call, what, n, off,
			   off + (size_t)((unsigned char *)bad - (const unsigned char *)p));
}

int
gnnemu_redzones(void)
{
	API_LOCK();
	heap_init();
	return have_asan;
}

size_t
gnnemu_device_memory(void)
{
	API_LOCK();
	heap_init();
	return mem_total();
}

/* Space for span bytes: the top of the heap, else (quarantine exhausted) a
 * run of freed records.  Returns the record, or NULL. */
static struct rec *
heap_carve(size_t span)
{
	size_t i, j, sum;

	if (H.top + span <= H.size && H.top + span > H.top) {
		struct rec *r;
		if (H.nrec == H.cap) {
			size_t cap = H.cap ? H.cap * 2 : 64;
			struct rec *n = realloc(H.recs, cap * sizeof *n);
			if (!n)
				return NULL;
			H.recs = n;
			H.cap = cap;
		}
		r = &H.recs[H.nrec++];
		r->off = H.top;
		r->span = span;
		H.top += span;
		if (H.top > H.hi) {
			size_t hi = (H.top + page - 1) / page * page;
			if (mprotect(H.base + H.hi, hi - H.hi, H.depth ? PROT_READ | PROT_WRITE : PROT_NONE) != 0) {
				H.nrec--;
				H.top -= span;
				return NULL;
			}
			if (have_asan)
				__asan_poison_memory_region(H.base + H.hi, hi - H.hi);
			H.hi = hi;
		}
		return r;
	}
	/* reuse the oldest-address run of freed records that fits */
	for (i = 0; i < H.nrec; i = j + 1) {
		j = i;
		if (H.recs[i].live)
			continue;
		sum = H.recs[i].span;
		while (sum < span && j + 1 < H.nrec && !H.recs[j + 1].live)
			sum += H.recs[++j].span;
		if (sum >= span) {
			H.recs[i].span = sum;
			memmove(&H.recs[i + 1], &H.recs[j + 1], (H.nrec - j - 1) * sizeof H.recs[0]);
			H.nrec -= j - i;
			return &H.recs[i];
		}
	}
	return NULL;
}

int
gnnemu_malloc(void **p, size_t n)
{
	API_LOCK();
	size_t span;
	struct rec *r;
	unsigned char *b;

	heap_init();
	if (!p)
		return set_error(E_INVALID_VALUE);
	*p = NULL;
	if (capture_forbids())
		return set_error(E_CAPTURE_UNSUPPORTED);
	if (n == 0)
		return 0;
	if (++H.nmalloc == H.fail_at || n > H.size || H.inuse > mem_total() || units(n) > mem_total() - H.inuse)
		return set_error(E_MEMORY);
	span = units(n) + REDZONE;
	r = heap_carve(span);
	if (!r)
		return set_error(E_MEMORY);
	r->size = n;
	r->live = 1;
	H.inuse += units(n);
	H.nlive++;
	if (H.inuse > H.peak)
		H.peak = H.inuse;
	b = H.base + r->off;
	range_protect(H.base + r->off, r->span, PROT_READ | PROT_WRITE);
	if (have_asan) {
		/* the core itself may be instrumented: unpoison before writing */
		__asan_unpoison_memory_region(b, n);
		fill_poison(b, n, 0);
	} else {
		fill_poison(b, r->span, 0);   /* the tail is the redzone canary */
	}
	range_protect(H.base + r->off, r->span, PROT_NONE);
	*p = b;
	return 0;
}

static void
check_redzone(struct rec *r)
{
	size_t tail, bad;

	if (have_asan)
		return;
	tail = r->span - r->size;
	bad = check_poison(H.base + r->off + r->size, tail, r->size);
	if (bad < tail)
		host_fatal("device memory was written %zu bytes past the end of a %zu-byte cudaMalloc allocation "
			   "(at %p, offset %zu)%s%s%s", bad, r->size, (void *)(H.base + r->off + r->size + bad),
			   r->size + bad, last_kernel ? ", last kernel '" : "", last_kernel ? last_kernel : "",
			   last_kernel ? "'" : "");
}

int
gnnemu_free(void *p)
{
	API_LOCK();
	struct rec *r;

	if (!p)
		return 0;
	heap_init();
	if (capture_forbids())
		return set_error(E_CAPTURE_UNSUPPORTED);
	if (!in_heap(p))
		host_fatal("cudaFree(%p): not device memory", p);
	defer_flush();   /* cudaFree synchronizes with the device */
	r = find_rec((size_t)((unsigned char *)p - H.base));
	if (!r || H.base + r->off != (unsigned char *)p)
		host_fatal("cudaFree(%p): not a pointer returned by cudaMalloc", p);
	if (!r->live)
		host_fatal("cudaFree(%p): the allocation was already freed", p);
	range_protect(H.base + r->off, r->span, PROT_READ | PROT_WRITE);
	check_redzone(r);
	r->live = 0;
	H.inuse -= units(r->size);
	H.nlive--;
	if (have_asan)
		__asan_poison_memory_region(p, r->size);
	else
		fill_poison(p, r->size, 0);   /* reads through a stale pointer see poison */
	range_protect(H.base + r->off, r->span, PROT_NONE);
	return 0;
}

void
gnnemu_redzone(void *p, size_t n, int on)
{
	API_LOCK();
	struct rec *r;

	heap_init();
	if (n == 0)
		return;
	r = live_rec(p);
	if (!r || (size_t)((unsigned char *)p - H.base) - r->off + n > r->size)
		host_fatal("gnnemu_redzone(%p, %zu): not inside one live allocation", p, n);
	if (!have_asan)
		return;
	if (on)
		__asan_poison_memory_region(p, n);
	else
		__asan_unpoison_memory_region(p, n);
}

int
gnnemu_mem_info(size_t *f, size_t *t)
{
	API_LOCK();
	heap_init();
	if (f)
		*f = mem_total() > H.inuse ? mem_total() - H.inuse : 0;
	if (t)
		*t = mem_total();
	return 0;
}

void
gnnemu_set_mem_cap(size_t bytes)
{
	API_LOCK();
	heap_init();
	H.cap_bytes = bytes;
}

void
gnnemu_fail_malloc(unsigned long long k)
{
	API_LOCK();
	heap_init();
	H.fail_at = k ? H.nmalloc + k : 0;
}

void
gnnemu_reset_peak(void)
{
	API_LOCK();
	heap_init();
	H.peak = H.inuse;
}

static const char *
describe_ptr(const void *p, char *buf, size_t n)
{
	struct rec *r;
	size_t off;

	if (!in_heap(p)) {
		snprintf(buf, n, "host memory");
		return buf;
	}
	off = (size_t)((const unsigned char *)p - H.base);
	r = find_rec(off);
	if (!r)
		snprintf(buf, n, "device memory outside any allocation");
	else if (!r->live)
		snprintf(buf, n, "freed device memory (offset %zu in a %zu-byte allocation)", off - r->off, r->size);
	else if (off - r->off >= r->size)
		snprintf(buf, n, "%zu bytes past the end of a %zu-byte allocation", off - r->off - r->size, r->size);
	else
		snprintf(buf, n, "offset %zu in a %zu-byte allocation", off - r->off, r->size);
	return buf;
}

static const char *kind_names[] = {
	"cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost",
	"cudaMemcpyDeviceToDevice", "cudaMemcpyDefault"
};

/* a copy's device side: [p, p+n) inside one live allocation */
static struct rec *
check_dev_range(const char *what, const char *kind, const char *side, const void *p, size_t n)
{
	struct rec *r = live_rec(p);
	char buf[160];

	if (!r)
		host_fatal("%s(%s): %s %p is not device memory (%s)", what, kind, side, p, describe_ptr(p, buf, sizeof buf));
	if ((size_t)((const unsigned char *)p - H.base) - r->off + n > r->size)
		host_fatal("%s(%s): %s range of %zu bytes at offset %zu overruns its %zu-byte allocation",
			   what, kind, side, n, (size_t)((const unsigned char *)p - H.base) - r->off, r->size);
	return r;
}

static void
check_host_range(const char *what, const char *kind, const char *side, const void *p, size_t n)
{
	const unsigned char *a = p, *b = a + n;
	char buf[160];

	if (!p)
		host_fatal("%s(%s): %s is NULL", what, kind, side);
	if (H.base && a < H.base + H.size && b > H.base)
		host_fatal("%s(%s): %s %p is device memory (%s), not host memory", what, kind, side, p,
			   describe_ptr(a >= H.base ? p : H.base, buf, sizeof buf));
}

static void
init_check(const struct rec *r, const unsigned char *src, size_t n)
{
	size_t off = (size_t)(src - H.base) - r->off, i, count = 0, first = 0;

	/* words aligned within the allocation */
	for (i = (4 - (off & 3)) & 3; i + 4 <= n; i += 4) {
		uint32_t w;
		memcpy(&w, src + i, 4);
		if (w == POISON || w == POISON_QUIET) {
			if (!count++)
				first = off + i;
		}
	}
	if (count)
		host_fatal("cudaMemcpy copies %zu words of uninitialized device memory (first at byte offset %zu "
			   "of the %zu-byte allocation), last kernel '%s'", count, first, r->size,
			   last_kernel ? last_kernel : "(none)");
}

/* a copy's pointers against its kind (0..4, n > 0); returns the kind
 * resolved (bit 1: device source, bit 0: device destination) and in *rs
 * the source's allocation when it is device memory */
static int
copy_check(void *dst, const void *src, size_t n, int kind, struct rec **rs)
{
	const char *kn = kind_names[kind];

	*rs = NULL;
	if (kind == 4)   /* cudaMemcpyDefault: what the pointers are */
		kind = (in_heap(src) ? 2 : 0) | (in_heap(dst) ? 1 : 0);
	if (kind == 1 || kind == 3)
		check_dev_range("cudaMemcpy", kn, "destination", dst, n);
	else
		check_host_range("cudaMemcpy", kn, "destination", dst, n);
	if (kind == 2 || kind == 3)
		*rs = check_dev_range("cudaMemcpy", kn, "source", src, n);
	else
		check_host_range("cudaMemcpy", kn, "source", src, n);
	return kind;
}

int
gnnemu_memcpy(void *dst, const void *src, size_t n, int kind)
{
	API_LOCK();
	struct rec *rs;

	heap_init();
	if (kind < 0 || kind > 4)
		return set_error(21);
	if (capture_forbids())
		return set_error(E_CAPTURE_UNSUPPORTED);
	if (n == 0)
		return 0;
	defer_flush();   /* a synchronous copy waits for the work before it */
	kind = copy_check(dst, src, n, kind, &rs);
	copies_run++;
	range_protect(dst, n, PROT_READ | PROT_WRITE);
	range_protect(src, n, PROT_READ | PROT_WRITE);
	if (rs && kind == 2 && initcheck)
		init_check(rs, src, n);
	memmove(dst, src, n);
	range_protect(dst, n, PROT_NONE);
	range_protect(src, n, PROT_NONE);
	return 0;
}

int
gnnemu_memset(void *dst, int v, size_t n)
{
	API_LOCK();
	heap_init();
	if (capture_forbids())
		return set_error(E_CAPTURE_UNSUPPORTED);
	if (n == 0)
		return 0;
	defer_flush();
	check_dev_range("cudaMemset", "", "destination", dst, n);
	range_protect(dst, n, PROT_READ | PROT_WRITE);
	memset(dst, v, n);
	range_protect(dst, n, PROT_NONE);
	return 0;
}

/* page-locked host memory is host memory the emulator keeps a list of
 * (pinned_*, with the graphs at the end), so that cudaPointerGetAttributes
 * knows it and cudaFreeHost takes nothing else */
static int pinned_add(void *p, size_t n);
static int pinned_remove(void *p);

int
gnnemu_malloc_host(void **p, size_t n)
{
	API_LOCK();
	if (!p)
		return set_error(E_INVALID_VALUE);
	*p = NULL;
	if (capture_forbids())
		return set_error(E_CAPTURE_UNSUPPORTED);
	*p = malloc(n ? n : 1);
	if (*p && pinned_add(*p, n) != 0) {
		free(*p);
		*p = NULL;
	}
	return *p ? 0 : set_error(E_MEMORY);
}

int
gnnemu_free_host(void *p)
{
	API_LOCK();
	if (!p)
		return 0;
	if (capture_forbids())
		return set_error(E_CAPTURE_UNSUPPORTED);
	defer_flush();
	if (pinned_remove(p) != 0)
		return set_error(E_INVALID_VALUE);   /* not from cudaMallocHost */
	free(p);
	return 0;
}

/* ---- streams and events (kernels run eagerly: streams are handles) ----
 * One handle type for both, told apart by its magic; t is an event's time. */
struct capture;
struct handle { unsigned magic; double t; struct capture *cap; };
#define STREAM_MAGIC 0x57eeu
#define EVENT_MAGIC 0xe7e7u

static int
handle_create(void **h, unsigned magic)
{
	struct handle *p = malloc(sizeof *p);

	if (!h || !p) {
		free(p);
		return set_error(h ? E_MEMORY : E_INVALID_VALUE);
	}
	p->magic = magic;
	p->t = -1;
	p->cap = NULL;
	*h = p;
	return 0;
}

/* NULL is no handle: CUDA accepts it for a stream (the default one) */
static int
handle_destroy(void *h, unsigned magic, int nullok)
{
	struct handle *p = h;

	if (!p && nullok)
		return 0;
	if (!p || p->magic != magic)
		return set_error(E_INVALID_HANDLE);
	p->magic = 0;
	free(p);
	return 0;
}

int
gnnemu_stream_create(void **s)
{
	API_LOCK();
	return handle_create(s, STREAM_MAGIC);
}

static void capture_drop(struct handle *st);

int
gnnemu_stream_destroy(void *s)
{
	API_LOCK();
	struct handle *st = s;

	if (st && st->magic == STREAM_MAGIC && st->cap)
		capture_drop(st);   /* an unfinished capture goes with its stream */
	return handle_destroy(s, STREAM_MAGIC, 1);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
gnnemu_event_create(void **e)
{
	API_LOCK();
	return handle_create(e, EVENT_MAGIC);
}

int
gnnemu_event_destroy(void *e)
{
	API_LOCK();
	defer_flush();   /* a queued record of it */
	return handle_destroy(e, EVENT_MAGIC, 0);
}

int
gnnemu_event_record(void *e)
{
	API_LOCK();
	struct handle *ev = e;

	if (!ev || ev->magic != EVENT_MAGIC)
		return set_error(E_INVALID_HANDLE);
	ev->t = now_ms();
	return 0;
}

int
gnnemu_event_elapsed(float *ms, void *a, void *b)
{
	API_LOCK();
	struct handle *x = a, *y = b;

	if (!ms || !x || !y || x->magic != EVENT_MAGIC || y->magic != EVENT_MAGIC)
		return set_error(E_INVALID_HANDLE);
	if (x->t < 0 || y->t < 0)
		return set_error(600);   /* cudaErrorNotReady: never recorded */
	*ms = (float)(y->t - x->t);
	return 0;
}

/* ---- fibers ---- */
enum { RUNNABLE, WAIT_BLOCK, WAIT_WARP, WAIT_COLL, EXITED };

struct fiber {
	gnnemu_thread pub;        /* first: gnnemu_self points here */
	unsigned idx;             /* linear thread index */
	int state;
	/* what it waits at */
	unsigned mask;
	const char *file;
	int line;
	int op;
	unsigned long long value, result;
	int arg, width;
	/* context */
#ifdef GNNEMU_USE_UCONTEXT
	ucontext_t uc;
#else
	void *sp;
#endif
	unsigned char *stack_lo;  /* usable stack (guard page below) */
	int started;              /* its context made (fiber_init), or it took over a stack */
	void *tsan_fiber;
	void *asan_fake;
};

struct site {
	const void *key;
	unsigned char *p;
	size_t size;
	const char *file;
	int line;
};

/* A block's memory: [shared arena][guard|stack]*n.
 * Under TSan, each region comes with its own TSan fibers, one per stack:
 * creating a TSan fiber costs about half a millisecond, so they are
 * recycled, and a stack is only ever touched by its own fiber (and the
 * shared arena by its own row of fibers), so that TSan sees no race on
 * reused memory. */
struct region {
	unsigned char *base;
	size_t size, stacks, n, stack;   /* stacks: offset of the first guard page */
	void **tsan;                     /* n TSan fibers */
};

/* the launch and block being run */
static struct {
	const gnnemu_launch_desc *d;
	gnnemu_uint3 grid, block;
	unsigned n;                  /* threads per block */
	struct fiber *f;             /* n fibers */
	unsigned *runq;              /* ring of fiber indices */
	unsigned rq_head, rq_len;
	unsigned nexited, nwait_block;
	unsigned long long rng;
	struct region *reg;          /* the block's memory */
	unsigned char *shared;
	size_t shared_used, shared_static;
	size_t shared_poisoned;      /* the arena's prefix poisoned for this block */
	unsigned warpwait[MAX_THREADS / 32];   /* lanes of each warp waiting at a warp barrier */
	struct site sites[SHARED_SITES];
	unsigned nsites;
} B;

/* the host side of switches */
#ifdef GNNEMU_USE_UCONTEXT
static ucontext_t sched_uc;
#else
static void *sched_sp;
#endif
static void *sched_tsan_fiber;
static void *sched_asan_fake;
static const void *host_stack_bottom;
static size_t host_stack_size;
static int from_host;                 /* the last switch was the host's (ASan: its stack's bounds) */
static void *start_sync;              /* TSan: host -> the block's threads */
static char exit_sync;                /* TSan: every GPU thread -> host */

#ifndef GNNEMU_USE_UCONTEXT
/*
 * gnnemu_ctx_swap(save, to): saves the callee-saved registers, MXCSR and
 * the x87 control word on the current stack, stores its stack pointer in
 * *save and resumes the context whose stack pointer is `to`.  A new
 * context's stack is laid out by fiber_init to "return" into
 * gnnemu_ctx_start, which calls r13(r12) and never returns.
 *
 * gnnemu_ctx_hop(save, to) is the same switch from one fiber to another
 * without MXCSR and the x87 control word (their loads were half of a
 * switch's cost): every fiber runs with the defaults fiber_init gives it,
 * which device code has no way to change (CUDA rounds per instruction),
 * so the hop saves the defaults in their place and leaves them loaded.
 */
/* a context on its stack: [MXCSR, x87 control word] r15 r14 r13 r12 rbx rbp, return address */
#define CTX_PUSH "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\tsubq $8, %rsp\n"
#define CTX_POP "\taddq $8, %rsp\n\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\tret\n"
__asm__(
	".text\n"
	".globl gnnemu_ctx_swap\n"
	".hidden gnnemu_ctx_swap\n"
	".type gnnemu_ctx_swap,@function\n"
	"gnnemu_ctx_swap:\n"
	CTX_PUSH
	"\tstmxcsr (%rsp)\n"
	"\tfnstcw 4(%rsp)\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tldmxcsr (%rsp)\n"
	"\tfldcw 4(%rsp)\n"
	CTX_POP
	".size gnnemu_ctx_swap, .-gnnemu_ctx_swap\n"
	".globl gnnemu_ctx_hop\n"
	".hidden gnnemu_ctx_hop\n"
	".type gnnemu_ctx_hop,@function\n"
	"gnnemu_ctx_hop:\n"
	CTX_PUSH
	"\tmovabsq $0x0000037f00001f80, %rax\n"
	"\tmovq %rax, (%rsp)\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	CTX_POP
	".size gnnemu_ctx_hop, .-gnnemu_ctx_hop\n"
	".globl gnnemu_ctx_start\n"
	".hidden gnnemu_ctx_start\n"
	".type gnnemu_ctx_start,@function\n"
	"gnnemu_ctx_start:\n"
	"\tmovq %r12, %rdi\n"
	"\tcallq *%r13\n"
	"\tud2\n"
	".size gnnemu_ctx_start, .-gnnemu_ctx_start\n");
__attribute__((visibility("hidden"))) void gnnemu_ctx_swap(void **save, void *to);
__attribute__((visibility("hidden"))) void gnnemu_ctx_hop(void **save, void *to);
__attribute__((visibility("hidden"))) void gnnemu_ctx_start(void);
#endif

static void fiber_main(struct fiber *f);

#ifdef GNNEMU_USE_UCONTEXT
static void
fiber_uc_entry(unsigned hi, unsigned lo)
{
	fiber_main((struct fiber *)(((uintptr_t)hi << 32) | (uintptr_t)lo));
}
#endif

static void
fiber_init(struct fiber *f)
{
	unsigned char *top = f->stack_lo + B.reg->stack;
#ifdef GNNEMU_USE_UCONTEXT
	uintptr_t a = (uintptr_t)f;

	getcontext(&f->uc);
	f->uc.uc_stack.ss_sp = f->stack_lo;
	f->uc.uc_stack.ss_size = B.reg->stack;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, (void (*)(void))fiber_uc_entry, 2, (unsigned)(a >> 32), (unsigned)a);
	(void)top;
#else
	uint64_t *sp = (uint64_t *)(void *)top;

	sp -= 2;                                  /* after the ret: 16-byte aligned */
	*--sp = (uint64_t)(uintptr_t)gnnemu_ctx_start;
	*--sp = 0;                                /* rbp: ends frame-pointer walks */
	*--sp = 0;                                /* rbx */
	*--sp = (uint64_t)(uintptr_t)f;           /* r12: the argument */
	*--sp = (uint64_t)(uintptr_t)fiber_main;  /* r13: the function */
	*--sp = 0;                                /* r14 */
	*--sp = 0;                                /* r15 */
	*--sp = 0x1f80u | ((uint64_t)0x037fu << 32);   /* default MXCSR, x87 control word */
	f->sp = sp;
#endif
}

/* a thread's first switch makes its context: a block's threads that
 * never wait run one after another on one stack (fiber_main), and never
 * touch their own */
static void
start(struct fiber *f)
{
	if (!f->started) {
		fiber_init(f);
		f->started = 1;
	}
}

/* host -> fiber */
static void
resume(struct fiber *f)
{
	start(f);
	gnnemu_self = &f->pub;
	from_host = 1;
	if (have_tsan)
		__tsan_switch_to_fiber(f->tsan_fiber, TSAN_NO_SYNC);
	if (have_asan)
		__sanitizer_start_switch_fiber(&sched_asan_fake, f->stack_lo, B.reg->stack);
#ifdef GNNEMU_USE_UCONTEXT
	swapcontext(&sched_uc, &f->uc);
#else
	gnnemu_ctx_swap(&sched_sp, f->sp);
#endif
	if (have_asan)
		__sanitizer_finish_switch_fiber(sched_asan_fake, NULL, NULL);
}

static unsigned runq_pop(void);

/* a fiber runs again (fake: its ASan fake stack, NULL at its start): ASan
 * learns the switch is done and tells whose stack it left, which is the
 * host's to remember when the host switched */
static void
arrived(void *fake)
{
	const void *bottom;
	size_t size;

	if (!have_asan)
		return;
	__sanitizer_finish_switch_fiber(fake, &bottom, &size);
	if (from_host) {
		host_stack_bottom = bottom;
		host_stack_size = size;
	}
}

/* the CPU from fiber f straight to fiber n (not under TSan, whose fibers
 * here are switched through the host's) */
static void
hand_off(struct fiber *f, struct fiber *n)
{
	start(n);
	gnnemu_self = &n->pub;
	from_host = 0;
	if (have_asan)
		__sanitizer_start_switch_fiber(f->state == EXITED ? NULL : &f->asan_fake, n->stack_lo, B.reg->stack);
#ifdef GNNEMU_USE_UCONTEXT
	swapcontext(&f->uc, &n->uc);
#else
	gnnemu_ctx_hop(&f->sp, n->sp);
#endif
	arrived(f->asan_fake);
}

/* fiber -> the next runnable fiber, else the host (for good when it has
 * exited).  Handing off to the run queue's next fiber is what the host's
 * loop would do (the same order), with one switch instead of two: a warp
 * collective suspends 31 lanes, and a block without barriers runs each
 * thread to its end. */
static void
suspend(struct fiber *f)
{
	if (!have_tsan && B.rq_len) {
		hand_off(f, &B.f[runq_pop()]);
		return;
	}
	if (have_asan)
		__sanitizer_start_switch_fiber(f->state == EXITED ? NULL : &f->asan_fake,
					       host_stack_bottom, host_stack_size);
	if (have_tsan)
		__tsan_switch_to_fiber(sched_tsan_fiber, TSAN_NO_SYNC);
#ifdef GNNEMU_USE_UCONTEXT
	swapcontext(&f->uc, &sched_uc);
#else
	gnnemu_ctx_swap(&f->sp, sched_sp);
#endif
	arrived(f->asan_fake);
}

/* Runs threads to their end.  When one ends and the run queue's next
 * thread has not started, that thread runs here, on this stack (the two
 * swap stacks, so each fiber's stack_lo stays the stack it runs on): the
 * same order as a switch to it, without the switch, and without touching
 * a cold stack; it only gets a context of its own if it waits.  Not under
 * TSan, whose fibers are the threads' identities. */
static void
fiber_main(struct fiber *f)
{
	arrived(NULL);
	for (;;) {
		struct fiber *n;
		unsigned char *lo;

		if (have_tsan)
			__tsan_acquire(start_sync);
		B.d->thunk(B.d->arg);
		if (have_tsan)
			__tsan_release(&exit_sync);
		f->state = EXITED;
		B.nexited++;
		if (have_tsan || !B.rq_len || B.f[B.runq[B.rq_head]].started)
			break;
		n = &B.f[runq_pop()];
		lo = n->stack_lo;
		n->stack_lo = f->stack_lo;
		f->stack_lo = lo;
		n->started = 1;
		gnnemu_self = &n->pub;
		f = n;
	}
	suspend(f);
	abort();   /* never resumed */
}

/* ---- scheduling ---- */
static unsigned long long
rng_next(void)
{
	/* xorshift64* */
	B.rng ^= B.rng >> 12;
	B.rng ^= B.rng << 25;
	B.rng ^= B.rng >> 27;
	return B.rng * 2685821657736338717ull;
}

static void
runq_push(unsigned i)
{
	B.runq[(B.rq_head + B.rq_len++) % B.n] = i;
}

static unsigned
runq_pop(void)
{
	unsigned x = B.runq[B.rq_head];

	B.rq_head = (B.rq_head + 1) % B.n;
	B.rq_len--;
	return x;
}

/* makes the fibers in list[0..k) runnable, in the configured order */
static void
make_runnable(unsigned *list, unsigned k)
{
	unsigned i;

	if (order == GNNEMU_RANDOM)
		for (i = k; i > 1; i--) {
			unsigned j = (unsigned)(rng_next() % i), t = list[i - 1];
			list[i - 1] = list[j];
			list[j] = t;
		}
	for (i = 0; i < k; i++) {
		unsigned x = order == GNNEMU_REVERSE ? list[k - 1 - i] : list[i];
		B.f[x].state = RUNNABLE;
		B.warpwait[x / 32] &= ~(1u << x % 32);
		runq_push(x);
	}
}

/* blocks the running fiber f (its wait state set) until released */
static void
wait_here(struct fiber *f)
{
	suspend(f);
}

/* TSan sync objects, a fresh address for each barrier: a sync object
 * accumulates every clock released into it, and TSan has no call to reset
 * one but unmapping its memory */
static char *sync_arena;
static size_t sync_next;
#define SYNC_ARENA ((size_t)1 << 20)

static void *
fresh_sync(void)
{
	if (!sync_arena || sync_next == SYNC_ARENA) {
		if (sync_arena)
			munmap(sync_arena, SYNC_ARENA);
		sync_arena = mmap(NULL, SYNC_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (sync_arena == MAP_FAILED)
			host_fatal("out of memory");
		sync_next = 0;
	}
	sync_next += 8;
	return sync_arena + sync_next - 8;
}

/* self, the last to arrive, releases the others of list[0..k) (self
 * excluded).  With TSan, every participant's clock is joined into one
 * fresh sync object and handed back to all: self acts for each of the
 * waiting fibers by becoming it (a TSan fiber switch without a stack
 * switch), which is what a barrier's arrival and departure would do. */
static void
release(struct fiber *self, unsigned *list, unsigned k)
{
	unsigned i;

	if (have_tsan) {
		void *o = fresh_sync();
		for (i = 0; i < k; i++) {
			__tsan_switch_to_fiber(B.f[list[i]].tsan_fiber, TSAN_NO_SYNC);
			__tsan_release(o);
		}
		__tsan_switch_to_fiber(self->tsan_fiber, TSAN_NO_SYNC);
		__tsan_release(o);
		for (i = 0; i < k; i++) {
			__tsan_switch_to_fiber(B.f[list[i]].tsan_fiber, TSAN_NO_SYNC);
			__tsan_acquire(o);
		}
		__tsan_switch_to_fiber(self->tsan_fiber, TSAN_NO_SYNC);
		__tsan_acquire(o);
	}
	make_runnable(list, k);
}

static struct fiber *
cur_fiber(const char *what, const char *file, int line)
{
	if (!gnnemu_self || !cur_kernel)
		fatal_for(NULL, file, line, "%s called outside a kernel", what);
	return (struct fiber *)(void *)gnnemu_self;
}

static const char *
op_name(int op)
{
	static const char *names[] = {
		"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
		"__ballot_sync", "__all_sync", "__any_sync", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
		"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
	};
	return op >= 0 && op <= GNNEMU_MMA_BF16 ? names[op] : "a warp collective";
}

static void
describe_wait(const struct fiber *f, char *buf, size_t n)
{
	switch (f->state) {
	case WAIT_BLOCK:
		snprintf(buf, n, "waits at __syncthreads() at %s:%d", f->file, f->line);
		break;
	case WAIT_WARP:
		snprintf(buf, n, "waits at __syncwarp(0x%08x) at %s:%d", f->mask, f->file, f->line);
		break;
	case WAIT_COLL:
		snprintf(buf, n, "waits at %s(0x%08x) at %s:%d", op_name(f->op), f->mask, f->file, f->line);
		break;
	case EXITED:
		snprintf(buf, n, "has exited");
		break;
	default:
		snprintf(buf, n, "is runnable");
		break;
	}
}

static const char *
wait_name(const struct fiber *f, char *buf, size_t n)
{
	if (f->state == WAIT_BLOCK)
		snprintf(buf, n, "__syncthreads()");
	else if (f->state == WAIT_WARP)
		snprintf(buf, n, "__syncwarp(0x%08x)", f->mask);
	else
		snprintf(buf, n, "%s(0x%08x)", op_name(f->op), f->mask);
	return buf;
}

/* Nothing is runnable but some threads wait: name one waiter and a thread
 * that keeps its barrier from completing. */
static void __attribute__((noreturn))
deadlock(void)
{
	unsigned i, j;
	struct fiber *w = NULL, *x = NULL;
	char what[96], other[160];

	for (i = 0; i < B.n && !w; i++)
		if (B.f[i].state != EXITED)
			w = &B.f[i];
	if (w->state == WAIT_BLOCK) {
		for (j = 0; j < B.n && !x; j++)
			if (B.f[j].state != WAIT_BLOCK)
				x = &B.f[j];
	} else {
		unsigned base = w->idx & ~31u;
		for (j = 0; j < 32 && !x; j++) {
			struct fiber *o;
			if (!(w->mask >> j & 1) || base + j >= B.n)
				continue;
			o = &B.f[base + j];
			if (o->state != w->state || o->mask != w->mask)
				x = o;
		}
	}
	wait_name(w, what, sizeof what);
	if (!x)
		fatal_for(&w->pub, w->file, w->line, "deadlock: %s never completes", what);
	gnnemu_self = &w->pub;
	if (x->state == EXITED)
		fatal_for(&w->pub, w->file, w->line,
			  "%s waits for thread (%u,%u,%u)%s, which exited without reaching it "
			  "(a barrier or collective in divergent code?)", what, x->pub.tid.x, x->pub.tid.y, x->pub.tid.z,
			  w->state == WAIT_BLOCK ? "" : " (a lane named in the mask)");
	describe_wait(x, other, sizeof other);
	fatal_for(&w->pub, w->file, w->line, "deadlock: %s waits for thread (%u,%u,%u), which %s",
		  what, x->pub.tid.x, x->pub.tid.y, x->pub.tid.z, other);
}

void
gnnemu_syncthreads(const char *file, int line)
{
	struct fiber *f = cur_fiber("__syncthreads()", file, line);
	unsigned i, k = 0, list[MAX_THREADS];

	f->state = WAIT_BLOCK;
	f->file = file;
	f->line = line;
	if (++B.nwait_block < B.n) {
		wait_here(f);
		return;
	}
	/* all here: the same barrier? */
	for (i = 0; i < B.n; i++) {
		struct fiber *o = &B.f[i];
		if (o->line != line || strcmp(o->file, file) != 0)
			fatal_for(&o->pub, o->file, o->line,
				  "divergent __syncthreads(): this thread waits here while thread (%u,%u,%u) waits at %s:%d",
				  f->pub.tid.x, f->pub.tid.y, f->pub.tid.z, file, line);
		if (o != f)
			list[k++] = i;
	}
	B.nwait_block = 0;
	f->state = RUNNABLE;
	release(f, list, k);
}

/* lanes of f's warp that exist */
static unsigned
warp_lanes(const struct fiber *f)
{
	unsigned base = f->idx & ~31u, k = B.n - base;

	return k >= 32 ? 0xffffffffu : (1u << k) - 1;
}

/* f arrives at a warp barrier (state, mask set); true when it completes
 * it, with the other participants in list[0..*k) */
static int
warp_arrive(struct fiber *f, unsigned *list, unsigned *k)
{
	unsigned base = f->idx & ~31u, m = f->mask, j, *w = &B.warpwait[f->idx / 32];

	*k = 0;
	/* the mask's lanes are compared only once all of them wait: an
	 * arrival is O(1), not a walk over the lanes come so far */
	*w |= 1u << f->pub.lane;
	if ((*w & m) != m)
		return 0;
	for (; m; m &= m - 1) {
		struct fiber *o;
		j = (unsigned)__builtin_ctz(m);
		o = &B.f[base + j];
		if (o == f)
			continue;
		if (o->state != f->state || o->mask != f->mask)
			return 0;
		list[(*k)++] = base + j;
	}
	*w &= ~(1u << f->pub.lane);   /* f goes on; release() clears the others */
	return 1;
}

static unsigned
check_mask(struct fiber *f, unsigned mask, const char *what, const char *file, int line)
{
	if (!(mask >> f->pub.lane & 1))
		fatal_for(&f->pub, file, line, "%s(0x%08x): the calling lane %u is not in the mask", what, mask, f->pub.lane);
	return mask & warp_lanes(f);   /* lanes beyond a partial warp do not exist */
}

void
gnnemu_syncwarp(unsigned mask, const char *file, int line)
{
	struct fiber *f = cur_fiber("__syncwarp()", file, line);
	unsigned list[32], k;

	f->mask = check_mask(f, mask, "__syncwarp", file, line);
	f->state = WAIT_WARP;
	f->file = file;
	f->line = line;
	if (!warp_arrive(f, list, &k)) {
		wait_here(f);
		return;
	}
	f->state = RUNNABLE;
	release(f, list, k);
}

/* the result of o's collective, all of mask's lanes having arrived */
static unsigned long long
coll_result(struct fiber *o, unsigned mask)
{
	unsigned base = o->idx & ~31u, lane = o->pub.lane, w = (unsigned)o->width, seg, src, j;
	unsigned long long r = 0;

	switch (o->op) {
	case GNNEMU_BALLOT:
	case GNNEMU_ALL:
	case GNNEMU_ANY:
		for (j = 0; j < 32; j++)
			if (mask >> j & 1 && B.f[base + j].value)
				r |= 1ull << j;
		if (o->op == GNNEMU_BALLOT)
			return r;
		if (o->op == GNNEMU_ALL)
			return r == mask;
		return r != 0;
	default:
		break;
	}
	seg = lane & ~(w - 1);
	switch (o->op) {
	case GNNEMU_SHFL_IDX:
		src = seg + ((unsigned)o->arg & (w - 1));
		break;
	case GNNEMU_SHFL_UP:
		src = (int)lane - o->arg < (int)seg ? lane : lane - (unsigned)o->arg;
		break;
	case GNNEMU_SHFL_DOWN:
		src = lane + (unsigned)o->arg >= seg + w ? lane : lane + (unsigned)o->arg;
		break;
	default:
		src = lane ^ ((unsigned)o->arg & 31u);
		if (src >= seg + w)
			src = lane;
		break;
	}
	if (src != lane && !(mask >> src & 1)) {
		gnnemu_self = &o->pub;
		if (base + src >= B.n)
			fatal_for(&o->pub, o->file, o->line, "%s(0x%08x) reads lane %u, which does not exist "
				  "(the block has %u threads)", op_name(o->op), o->mask, src, B.n);
		if (B.f[base + src].state == EXITED)
			fatal_for(&o->pub, o->file, o->line, "%s(0x%08x) reads lane %u, which has exited",
				  op_name(o->op), o->mask, src);
		fatal_for(&o->pub, o->file, o->line, "%s(0x%08x) reads lane %u, which is not in the mask",
			  op_name(o->op), o->mask, src);
	}
	return B.f[base + src].value;
}

/* ---- warp matrix multiply-accumulate (tensor cores) ---- */
struct mma_frag {
	float *d;
	const unsigned *a, *b;
};

/* a .tf32 operand: the hardware reads the top 19 bits */
static double
tf32_operand(unsigned u)
{
	float x;

	u &= 0xffffe000u;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* a bfloat16 word's value */
static double
bf16_operand(unsigned w)
{
	unsigned u = (w & 0xffffu) << 16;
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

/* every lane of f's warp is at mma op: D = A B + C for all of them, K 8
 * (.tf32: a register an operand) or 16 (.bf16: two, the lower index in
 * the low half) */
static void
mma_warp(struct fiber *f, int op)
{
	unsigned base = f->idx & ~31u, lane, g, t, i, n, k, h, K = op == GNNEMU_MMA_TF32 ? 8 : 16;
	double a[16][16], b[16][8];
	float c[16][8];

	for (lane = 0; lane < 32; lane++) {
		const struct mma_frag *x = (const struct mma_frag *)(uintptr_t)B.f[base + lane].value;
		g = lane / 4;
		t = lane % 4;
		if (op == GNNEMU_MMA_TF32) {
			a[g][t] = tf32_operand(x->a[0]);
			a[g + 8][t] = tf32_operand(x->a[1]);
			a[g][t + 4] = tf32_operand(x->a[2]);
			a[g + 8][t + 4] = tf32_operand(x->a[3]);
			b[t][g] = tf32_operand(x->b[0]);
			b[t + 4][g] = tf32_operand(x->b[1]);
		} else
			for (h = 0; h < 2; h++) {
				a[g][2 * t + h] = bf16_operand(x->a[0] >> 16 * h);
				a[g + 8][2 * t + h] = bf16_operand(x->a[1] >> 16 * h);
				a[g][2 * t + 8 + h] = bf16_operand(x->a[2] >> 16 * h);
				a[g + 8][2 * t + 8 + h] = bf16_operand(x->a[3] >> 16 * h);
				b[2 * t + h][g] = bf16_operand(x->b[0] >> 16 * h);
				b[2 * t + 8 + h][g] = bf16_operand(x->b[1] >> 16 * h);
			}
		c[g][2 * t] = x->d[0];
		c[g][2 * t + 1] = x->d[1];
		c[g + 8][2 * t] = x->d[2];
		c[g + 8][2 * t + 1] = x->d[3];
	}
	/* products of 11-bit (or 8-bit) significands are exact in double,
	 * and so is their sum but for far-apart exponents: one rounding to
	 * FP32 */
	for (i = 0; i < 16; i++)
		for (n = 0; n < 8; n++) {
			double s = c[i][n];
			for (k = 0; k < K; k++)
				s += a[i][k] * b[k][n];
			c[i][n] = (float)s;
		}
	for (lane = 0; lane < 32; lane++) {
		const struct mma_frag *x = (const struct mma_frag *)(uintptr_t)B.f[base + lane].value;
		g = lane / 4;
		t = lane % 4;
		x->d[0] = c[g][2 * t];
		x->d[1] = c[g][2 * t + 1];
		x->d[2] = c[g + 8][2 * t];
		x->d[3] = c[g + 8][2 * t + 1];
	}
}

static void
mma_enter(int op, float *d, const unsigned *a, const unsigned *b, const char *file, int line)
{
	struct mma_frag x = {d, a, b};
	struct fiber *f = cur_fiber(op_name(op), file, line);

	if (warp_lanes(f) != 0xffffffffu)
		fatal_for(&f->pub, file, line, "%s needs a whole warp; this block's last warp has %u threads",
			  op_name(op), B.n % 32);
	gnnemu_collective(op, 0xffffffffu, (unsigned long long)(uintptr_t)&x, 0, 32, file, line);
}

void
gnnemu_mma_tf32(float *d, const unsigned *a, const unsigned *b, const char *file, int line)
{
	mma_enter(GNNEMU_MMA_TF32, d, a, b, file, line);
}

void
gnnemu_mma_bf16(float *d, const unsigned *a, const unsigned *b, const char *file, int line)
{
	mma_enter(GNNEMU_MMA_BF16, d, a, b, file, line);
}

unsigned long long
gnnemu_collective(int op, unsigned mask, unsigned long long value, int arg, int width,
		  const char *file, int line)
{
	struct fiber *f = cur_fiber(op_name(op), file, line);
	unsigned list[32], k, i;

	if (op < GNNEMU_BALLOT && (width < 1 || width > 32 || (width & (width - 1))))
		fatal_for(&f->pub, file, line, "%s: width %d is not a power of two in [1, 32]", op_name(op), width);
	f->mask = check_mask(f, mask, op_name(op), file, line);
	f->state = WAIT_COLL;
	f->file = file;
	f->line = line;
	f->op = op;
	f->value = value;
	f->arg = arg;
	f->width = width;
	if (!warp_arrive(f, list, &k)) {
		wait_here(f);
		return f->result;
	}
	if (op >= GNNEMU_MMA_TF32 || B.f[list[0]].op >= GNNEMU_MMA_TF32)
		for (i = 0; i < k; i++)
			if (B.f[list[i]].op != op) {
				struct fiber *o = &B.f[list[i]];
				fatal_for(&f->pub, file, line, "%s: lane %u is at %s at %s:%d instead", op_name(op), o->pub.lane,
					  op_name(o->op), o->file, o->line);
			}
	if (op >= GNNEMU_MMA_TF32) {
		mma_warp(f, op);
		gnnemu_self = &f->pub;
		f->state = RUNNABLE;
		release(f, list, k);
		return 0;
	}
	/* every result now, before any lane moves on and changes its value */
	for (i = 0; i < k; i++)
		B.f[list[i]].result = coll_result(&B.f[list[i]], f->mask);
	f->result = coll_result(f, f->mask);
	gnnemu_self = &f->pub;
	f->state = RUNNABLE;
	release(f, list, k);
	return f->result;
}

unsigned
gnnemu_activemask(void)
{
	struct fiber *f = cur_fiber("__activemask()", NULL, 0);
	unsigned base = f->idx & ~31u, j, m = 0;

	for (j = 0; j < 32 && base + j < B.n; j++)
		if (B.f[base + j].state != EXITED)
			m |= 1u << j;
	return m;
}

/* ---- shared memory ---- */
void *
gnnemu_shared(const void *key, size_t size, size_t align, const char *file, int line)
{
	struct fiber *f = cur_fiber("__shared__", file, line);
	struct site *s;
	size_t off;
	unsigned i;

	for (i = 0; i < B.nsites; i++)
		if (B.sites[i].key == key)
			return B.sites[i].p;
	if (B.nsites == SHARED_SITES)
		fatal_for(&f->pub, file, line, "more than %u __shared__ declarations", SHARED_SITES);
	B.shared_static += size;
	if (B.shared_static + B.d->shmem > SHARED_LIMIT)
		fatal_for(&f->pub, file, line, "static shared memory of the block exceeds 48 KiB (%zu bytes "
			  "with this declaration of %zu bytes)", B.shared_static + B.d->shmem, size);
	if (align < 16)
		align = 16;
	off = (B.shared_used + SHARED_RZ + align - 1) / align * align;
	s = &B.sites[B.nsites++];
	s->key = key;
	s->p = B.shared + off;
	s->size = size;
	s->file = file;
	s->line = line;
	B.shared_used = off + size;
	if (have_asan) {
		__asan_unpoison_memory_region(s->p, size);
		fill_poison(s->p, size, 0);
	} else {
		/* the padding, the array and the redzone after it, which
		 * check_shared reads: poisoned as the block declares them,
		 * not the whole arena for every block */
		size_t end = B.shared_used + SHARED_RZ < SHARED_ARENA ? B.shared_used + SHARED_RZ : SHARED_ARENA;
		fill_poison(B.shared + B.shared_poisoned, end - B.shared_poisoned, B.shared_poisoned);
		B.shared_poisoned = end;
	}
	return s->p;
}

/* writes past a shared array land in the poison after it */
static void
check_shared(void)
{
	unsigned i;

	if (have_asan)
		return;
	for (i = 0; i < B.nsites; i++) {
		struct site *s = &B.sites[i];
		size_t end = (size_t)(s->p - B.shared) + s->size;
		size_t lim = i + 1 < B.nsites ? (size_t)(B.sites[i + 1].p - B.shared) : end + SHARED_RZ;
		size_t bad = check_poison(s->p + s->size, lim - end, end);
		if (bad < lim - end)
			fatal_for(&B.f[0].pub, s->file, s->line, "shared memory was written %zu bytes past the end of "
				  "the %zu-byte __shared__ array declared here", bad, s->size);
	}
}

/* ---- block memory ---- */
/* TSan: blocks run by the same row of fibers are ordered (a fiber's
 * clock carries what it saw); consecutive blocks use different rows */
#define TSAN_ROWS 2
static struct region plain_region, tsan_rows[TSAN_ROWS];

/* (re)maps r for at least n threads */
static void
region_map(struct region *r, unsigned n)
{
	size_t sb = 0, sh = (SHARED_ARENA + page - 1) / page * page, one = stack_size + page;
	size_t size = sb + sh + one * n, i;
	unsigned char *m;

	if (r->base && r->n >= n && r->stack == stack_size)
		return;
	if (r->base)
		munmap(r->base, r->size);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		host_fatal("cannot map %zu bytes of fiber stacks (%s)", size, strerror(errno));
	for (i = 0; i < n; i++)
		if (mprotect(m + sb + sh + i * one, page, PROT_NONE) != 0)
			host_fatal("cannot protect a stack guard page (%s)", strerror(errno));
	if (have_tsan) {
		void **t = realloc(r->tsan, n * sizeof *t);
		if (!t)
			host_fatal("out of memory");
		for (i = r->tsan ? r->n : 0; i < n; i++)
			t[i] = __tsan_create_fiber(0);
		r->tsan = t;
	}
	r->base = m;
	r->size = size;
	r->n = n;
	r->stack = stack_size;
	r->stacks = sb + sh;
}

/* the memory of the k-th block run in this launch */
static void
block_memory(unsigned n, unsigned long long k)
{
	struct region *r = have_tsan ? &tsan_rows[k % TSAN_ROWS] : &plain_region;

	region_map(r, n);
	B.reg = r;
	B.shared = r->base;
	if (have_tsan) {
		/* a fresh mapping (TSan forgets what the last block did there) */
		B.shared = mmap(NULL, SHARED_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (B.shared == MAP_FAILED)
			host_fatal("cannot map shared memory (%s)", strerror(errno));
	}
	B.shared_used = 0;
	B.shared_static = 0;
	B.shared_poisoned = 0;       /* gnnemu_shared poisons what the block declares */
	B.nsites = 0;
	if (have_asan)
		__asan_poison_memory_region(B.shared, SHARED_ARENA);
}

/* ---- SIGSEGV: host access to device memory, stack overflow ---- */
static struct sigaction old_segv, old_bus;

static void
segv(int sig, siginfo_t *si, void *uc)
{
	const unsigned char *a = si->si_addr;
	struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;
	char buf[160];

	const struct region *r = B.reg;

	if (r && cur_kernel && a >= r->base + r->stacks && a < r->base + r->size) {
		size_t i = (size_t)(a - r->base - r->stacks) / (r->stack + page);
		if ((size_t)(a - r->base - r->stacks) % (r->stack + page) < page)
			/* the running thread's: stacks change hands (fiber_main) */
			fatal_for(gnnemu_self ? gnnemu_self : i < B.n ? &B.f[i].pub : NULL, NULL, 0,
				  "stack overflow (fiber stacks are %zu bytes: set GNNEMU_STACK larger)", r->stack);
	}
	if (in_heap(a)) {
		if (cur_kernel)
			fatal_for(gnnemu_self, NULL, 0, "access to device memory at %p outside every allocation",
				  (const void *)a);
		host_fatal("host code read or wrote device memory at %p (%s)", (const void *)a,
			   describe_ptr(a, buf, sizeof buf));
	}
	/* not ours: the previous handler, or the default action on return */
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction) {
			old->sa_sigaction(sig, si, uc);
			return;
		}
	} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	sigaction(sig, old, NULL);
}

static void
install_segv(void)
{
	struct sigaction sa;
	stack_t ss;

	/* an alternate stack, so that a fiber's stack overflow can be told */
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE)) {
		size_t n = 64 * 1024;
		void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			ss.ss_sp = p;
			ss.ss_size = n;
			ss.ss_flags = 0;
			sigaltstack(&ss, NULL);
		}
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
}

/* ---- launches ---- */
void
gnnemu_check_arg(const char *name, int index, const void *p)
{
	API_LOCK();
	char buf[160];

	if (!p || live_rec(p))
		return;
	if (in_heap(p))
		fatal_for(NULL, NULL, 0, "kernel '%s'%s: argument %d points to %s", name,
			  graph_replaying ? " (replayed by cudaGraphLaunch)" : "", index, describe_ptr(p, buf, sizeof buf));
	fatal_for(NULL, NULL, 0, "kernel '%s'%s: host pointer passed as argument %d (%p)", name,
		  graph_replaying ? " (replayed by cudaGraphLaunch)" : "", index, p);
}

static void
check_config(const gnnemu_launch_desc *d)
{
	const gnnemu_uint3 g = d->grid, b = d->block;
	unsigned long long nt = (unsigned long long)b.x * b.y * b.z;

	if (nt == 0)
		host_fatal("kernel '%s': launch with a block of 0 threads (%u,%u,%u)", d->name, b.x, b.y, b.z);
	if (nt > MAX_THREADS || b.x > 1024 || b.y > 1024 || b.z > 64)
		host_fatal("kernel '%s': block of %llu threads (%u,%u,%u) exceeds CUDA's limits "
			   "(1024 threads, 1024 x 1024 x 64)", d->name, nt, b.x, b.y, b.z);
	if (nt > d->bound)
		host_fatal("kernel '%s': block of %llu threads exceeds the kernel's __launch_bounds__(%u)",
			   d->name, nt, d->bound);
	if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
		host_fatal("kernel '%s': grid (%u,%u,%u) outside CUDA's range (1..2^31-1, 1..65535, 1..65535)",
			   d->name, g.x, g.y, g.z);
	if (d->shmem > SHARED_LIMIT)
		host_fatal("kernel '%s': %zu bytes of dynamic shared memory exceed 48 KiB", d->name, d->shmem);
}

/* ---- work counters ----
 * gnnemu_work(n) adds n to the running thread's counter.  A warp runs a
 * divergent loop until its longest lane is done, so a warp's work is the
 * largest of its lanes'; a launch in which some thread counted appends
 * its warps, their total and its busiest warp to GNNEMU_WORK.  Ties go to
 * the lowest (block, warp), so the line is the same in every run order. */
static struct {
	long long thread[MAX_THREADS];  /* the running block's threads */
	int touched;                    /* some thread of the block counted */
	int any;                        /* ... of the launch */
	unsigned long long warps, total, busiest, busy_lin;
	unsigned busy_warp;
} WK;
static int work_on;                     /* gnnemu_count_work: count without a file */
static unsigned long long work_last[3]; /* the last launch's warps, total, busiest */
static int work_last_any;

void
gnnemu_count_work(int on)
{
	API_LOCK();
	work_on = on;
}

int
gnnemu_last_work(unsigned long long w[3])
{
	API_LOCK();
	memcpy(w, work_last, sizeof work_last);
	return work_last_any;
}

void
gnnemu_work(long n)
{
	if (!gnnemu_self)
		gnnemu_fatal(NULL, 0, "gnnemu_work called outside a kernel");
	if (!work_path && !work_on)
		return;   /* nobody reads the counts: cheap */
	WK.thread[((struct fiber *)(void *)gnnemu_self)->idx] += n;
	WK.touched = 1;
}

static void
work_block(unsigned long long lin)
{
	unsigned i, w, nw = (B.n + 31) / 32;

	WK.warps += nw;
	if (!WK.touched)
		return;
	WK.any = 1;
	for (w = 0; w < nw; w++) {
		long long m = 0;
		for (i = w * 32; i < B.n && i < w * 32 + 32; i++)
			m = WK.thread[i] > m ? WK.thread[i] : m;
		WK.total += (unsigned long long)m;
		if ((unsigned long long)m > WK.busiest ||
		    ((unsigned long long)m == WK.busiest && (lin < WK.busy_lin || (lin == WK.busy_lin && w < WK.busy_warp)))) {
			WK.busiest = (unsigned long long)m;
			WK.busy_lin = lin;
			WK.busy_warp = w;
		}
	}
	memset(WK.thread, 0, B.n * sizeof WK.thread[0]);
	WK.touched = 0;
}

static void
work_launch(const gnnemu_launch_desc *d)
{
	FILE *f;

	if (WK.any && work_path) {
		if (!(f = fopen(work_path, "a")))
			host_fatal("GNNEMU_WORK=%s: cannot open it: %s", work_path, strerror(errno));
		fprintf(f, "%s warps=%llu work=%llu busiest=%llu block=(%llu,%llu,%llu) warp=%u\n", d->name, WK.warps,
			WK.total, WK.busiest, WK.busy_lin % B.grid.x, WK.busy_lin / B.grid.x % B.grid.y,
			WK.busy_lin / B.grid.x / B.grid.y, WK.busy_warp);
		if (fclose(f) != 0)
			host_fatal("GNNEMU_WORK=%s: cannot write it", work_path);
	}
	work_last_any = WK.any;
	work_last[0] = WK.warps;
	work_last[1] = WK.total;
	work_last[2] = WK.busiest;
	memset(&WK, 0, sizeof WK);
}

static void
run_block(unsigned long long lin, unsigned long long k)
{
	unsigned i, n = B.n, list[MAX_THREADS];
	gnnemu_uint3 bid;
	char name[192];

	bid.x = (unsigned)(lin % B.grid.x);
	bid.y = (unsigned)(lin / B.grid.x % B.grid.y);
	bid.z = (unsigned)(lin / B.grid.x / B.grid.y);
	block_memory(n, k);
	for (i = 0; i < n; i++) {
		struct fiber *f = &B.f[i];
		f->pub.tid.x = i % B.block.x;
		f->pub.tid.y = i / B.block.x % B.block.y;
		f->pub.tid.z = i / B.block.x / B.block.y;
		f->pub.bid = bid;
		f->pub.bdim = B.block;
		f->pub.gdim = B.grid;
		f->pub.lane = i % 32;
		f->pub.warp = i / 32;
		f->idx = i;
		f->state = RUNNABLE;
		f->mask = 0;
		f->file = NULL;
		f->line = 0;
		f->asan_fake = NULL;
		f->stack_lo = B.reg->base + B.reg->stacks + i * (B.reg->stack + page) + page;
		if (have_asan)   /* frames a finished fiber never popped */
			__asan_unpoison_memory_region(f->stack_lo + B.reg->stack - 16384, 16384);
		f->started = 0;
		if (have_tsan) {
			f->tsan_fiber = B.reg->tsan[i];
			if (__tsan_set_fiber_name) {
				snprintf(name, sizeof name, "%s block (%u,%u,%u) thread (%u,%u,%u)", B.d->name,
					 bid.x, bid.y, bid.z, f->pub.tid.x, f->pub.tid.y, f->pub.tid.z);
				__tsan_set_fiber_name(f->tsan_fiber, name);
			}
		}
		list[i] = i;
	}
	if (have_tsan) {
		/* what the host did so far (this block's shared memory mapped
		 * included) happens before the block; earlier blocks do not */
		start_sync = fresh_sync();
		__tsan_release(start_sync);
	}
	B.rq_head = B.rq_len = 0;
	B.nexited = B.nwait_block = 0;
	memset(B.warpwait, 0, sizeof B.warpwait);
	make_runnable(list, n);
	while (B.rq_len)   /* without sanitizers, fibers mostly hand off among themselves */
		resume(&B.f[runq_pop()]);
	gnnemu_self = NULL;
	if (B.nexited < n)
		deadlock();
	work_block(lin);
	check_shared();
	if (have_tsan)
		munmap(B.shared, SHARED_ARENA);
}

static unsigned long long
gcd(unsigned long long a, unsigned long long b)
{
	while (b) {
		unsigned long long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * ---- racecheck across blocks ----
 * TSan fibers are recycled, so the blocks that run on one row of them are
 * ordered by the fibers' own clocks, and TSan misses a race between them.
 * Nothing orders two blocks of one launch, so the rule across blocks is
 * simpler than TSan's: a word of the heap that one block writes and
 * another reads or writes in the same launch is a race.  Under TSan the
 * model's instrumentation calls __tsan_readN/__tsan_writeN; the
 * definitions below are hidden, so the model's calls bind to them where
 * libgnnemu.a is linked, and each passes the access on to TSan (with the
 * caller's pc, so TSan's reports are unchanged) and then to a shadow of
 * the heap: per 4-byte word, the launch and block that last wrote it and
 * that read it.  Atomics (TSan's __tsan_atomic*) are not recorded, nor are
 * 1- and 2-byte accesses (neighbouring bytes of one word may belong to
 * different blocks); TSan still sees both.
 */
#define XB_MANY 0xffffffffu   /* read by several blocks */
struct xb_word { uint32_t wl, wb, rl, rb; };   /* launch and block of the last write, of the reads */
static struct xb_word *xb_shadow;    /* one per word of the heap, while TSan runs */
static uint32_t xb_launch;           /* launches run so far */
static uint32_t xb_block;            /* the linear index of the running block */
static volatile int xb_on;           /* a kernel runs and the shadow exists */

static void
xb_init(void)
{
	void *m;

	if (xb_shadow || !have_tsan)
		return;
	m = mmap(NULL, H.size / 4 * sizeof *xb_shadow, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		host_fatal("cannot reserve racecheck's shadow of the device heap (%s)", strerror(errno));
	xb_shadow = m;
}

static void __attribute__((noreturn))
xb_race(const unsigned char *a, size_t n, int write, int other_write, uint32_t other, void *pc)
{
	char where[512], file[512], what[160], who[64];
	const char *colon;
	int line = 0;
	uint32_t gx = B.grid.x, gy = B.grid.y;

	file[0] = 0;
	if (__sanitizer_symbolize_pc) {
		__sanitizer_symbolize_pc((char *)pc - 1, "%s:%l", where, sizeof where);
		if ((colon = strrchr(where, ':')) && colon > where) {
			snprintf(file, sizeof file, "%.*s", (int)(colon - where), where);
			line = atoi(colon + 1);
		}
	}
	if (other == XB_MANY)
		snprintf(who, sizeof who, "several other blocks");
	else
		snprintf(who, sizeof who, "block (%u,%u,%u)", other % gx, other / gx % gy, other / gx / gy);
	fatal_for(gnnemu_self, line > 0 ? file : NULL, line,
		  "data race between blocks: %s %zu bytes at %p (%s), which %s %s in the same launch "
		  "(nothing orders two blocks)", write ? "writes" : "reads", n, (const void *)a,
		  describe_ptr(a, what, sizeof what), who, other_write ? "wrote" : "read");
}

static void
xb_access(const void *p, size_t n, int write, void *pc)
{
	const unsigned char *a = p;
	size_t w, end;

	if ((uintptr_t)a < (uintptr_t)H.base || (uintptr_t)a >= (uintptr_t)H.base + H.size)
		return;
	w = (size_t)(a - H.base) / 4;
	end = ((size_t)(a - H.base) + n + 3) / 4;
	for (; w < end; w++) {
		struct xb_word *e = &xb_shadow[w];
		if (e->wl == xb_launch && e->wb != xb_block)
			xb_race(a, n, write, 1, e->wb, pc);
		if (write) {
			if (e->rl == xb_launch && e->rb != xb_block)
				xb_race(a, n, write, 0, e->rb, pc);
			e->wl = xb_launch;
			e->wb = xb_block;
		} else if (e->rl != xb_launch) {
			e->rl = xb_launch;
			e->rb = xb_block;
		} else if (e->rb != xb_block)
			e->rb = XB_MANY;
	}
}

#define XB_HOOK(kind, N, write)                                                              \
	extern void __tsan_##kind##N##_pc(void *a, void *pc) __attribute__((weak));            \
	__attribute__((visibility("hidden"))) void __tsan_##kind##N(void *a);                  \
	void __tsan_##kind##N(void *a)                                                         \
	{                                                                                      \
		void *pc = __builtin_return_address(0);                                        \
		if (__tsan_##kind##N##_pc)                                                     \
			__tsan_##kind##N##_pc(a, pc);                                          \
		if (xb_on)                                                                     \
			xb_access(a, N, write, pc);                                            \
	}
XB_HOOK(read, 4, 0)
XB_HOOK(read, 8, 0)
XB_HOOK(read, 16, 0)
XB_HOOK(write, 4, 1)
XB_HOOK(write, 8, 1)
XB_HOOK(write, 16, 1)

static struct fiber *fibers;     /* MAX_THREADS of them, made at the first launch */
static unsigned *runq;

void
gnnemu_launch(const gnnemu_launch_desc *d)
{
	API_LOCK();
	unsigned long long nb, i, a = 1, c = 0;
	unsigned n;
	size_t r;

	heap_init();
	check_config(d);
	if (cur_kernel)
		host_fatal("kernel '%s' launched from inside kernel '%s'", d->name, cur_kernel);
	if (capture_launch(d))
		return;
	if (!fibers) {
		fibers = calloc(MAX_THREADS, sizeof *fibers);
		runq = calloc(MAX_THREADS, sizeof *runq);
		if (!fibers || !runq)
			host_fatal("out of memory");
	}
	B.d = d;
	B.grid = d->grid;
	B.block = d->block;
	if (grid_max) {
		if (B.grid.x > grid_max) B.grid.x = grid_max;
		if (B.grid.y > grid_max) B.grid.y = grid_max;
		if (B.grid.z > grid_max) B.grid.z = grid_max;
	}
	n = d->block.x * d->block.y * d->block.z;
	B.n = n;
	B.f = fibers;
	B.runq = runq;
	B.rng = order_seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	if (!B.rng)
		B.rng = 1;
	nb = (unsigned long long)B.grid.x * B.grid.y * B.grid.z;
	if (order == GNNEMU_RANDOM && nb > 1) {
		/* a random affine permutation of the block indices */
		__extension__ typedef unsigned __int128 u128;
		do
			a = rng_next() % nb;
		while (a == 0 || gcd(a, nb) != 1);
		c = rng_next() % nb;
		(void)sizeof(u128);
	}
	cur_kernel = d->name;
	last_kernel = d->name;
	heap_open();
	if (have_tsan) {
		sched_tsan_fiber = __tsan_get_current_fiber();
		xb_init();
		xb_launch++;
		xb_on = 1;
	}
	for (i = 0; i < nb; i++) {
		unsigned long long b;
		if (order == GNNEMU_REVERSE)
			b = nb - 1 - i;
		else if (order == GNNEMU_RANDOM) {
			__extension__ typedef unsigned __int128 u128;
			b = (unsigned long long)(((u128)a * i + c) % nb);
		} else
			b = i;
		xb_block = (uint32_t)b;
		run_block(b, i);
	}
	xb_on = 0;
	if (have_tsan)
		__tsan_acquire(&exit_sync);
	cur_kernel = NULL;
	work_launch(d);
	for (r = 0; r < H.nrec; r++)
		if (H.recs[r].live)
			check_redzone(&H.recs[r]);
	heap_close();
}

/*
 * When the program ends, or the object holding the emulator is unloaded
 * (gnnrun dlcloses its models), its memory goes back: left to the
 * unmapped statics, it would be a leak to LeakSanitizer.
 */
__attribute__((destructor)) static void
gnnemu_release(void)
{
	struct region *rs[TSAN_ROWS + 1];
	size_t i, k;

	if (cur_kernel)
		return;
	rs[0] = &plain_region;
	for (k = 0; k < TSAN_ROWS; k++)
		rs[k + 1] = &tsan_rows[k];
	for (k = 0; k < TSAN_ROWS + 1; k++) {
		struct region *r = rs[k];
		if (r->tsan && have_tsan)
			for (i = 0; i < r->n; i++)
				__tsan_destroy_fiber(r->tsan[i]);
		free(r->tsan);
		if (r->base)
			munmap(r->base, r->size);
		memset(r, 0, sizeof *r);
	}
	free(fibers);
	free(runq);
	fibers = NULL;
	runq = NULL;
	free(H.recs);
	H.recs = NULL;
	H.nrec = H.cap = 0;
}

/* ---- stream capture and graphs ----
 * A capturing stream appends its work to a graph (one stream: a chain of
 * nodes in issue order).  An executable graph is a copy of one, and
 * cudaGraphLaunch runs its nodes in order through the calls eager work
 * takes, so every check applies again at replay: a pointer argument freed
 * since the capture, a launch over its bounds, a copy range that no
 * longer fits.  A global capture (mode 0) forbids, in every host thread,
 * and a thread-local one (1) in the thread that began it: memory
 * allocation and release, synchronous copies and sets, synchronizing
 * (other threads' work goes on, as CUDA's); each such call returns cudaErrorStreamCaptureUnsupported and invalidates the capture,
 * whose end then returns cudaErrorStreamCaptureInvalidated and no graph.
 * A relaxed capture (2) forbids only synchronizing with its own stream.
 * Not emulated: events recorded into a capture, graphs launched into one
 * (both invalidate it), cross-stream capture (fork and join by events).
 */
enum { NODE_KERNEL, NODE_COPY, NODE_SET, NODE_EVENT };
struct gnode {
	int kind;
	gnnemu_launch_desc d;      /* a kernel: d.arg is the node's own copy of the closure */
	void *dst;                 /* an event node: its event */
	const void *src;
	void *own;                 /* a deferred copy's snapshot of pageable host memory */
	size_t n;
	int ckind, value;          /* a copy's kind, a set's byte */
	int replay;                /* deferred: a node of a launched graph */
};
struct graph {
	unsigned magic;
	struct gnode *node;
	size_t n, cap;
};
#define GRAPH_MAGIC 0x9a4fu
#define EXEC_MAGIC 0xe8ecu
struct capture {
	int mode, invalid;         /* invalid: an error ended it, end returns no graph */
	struct graph *g;
	struct handle *stream;
	pthread_t owner;           /* the thread that began it */
	struct capture *next;
};

static struct {
	gnnemu_stats st;
	struct capture *active;    /* every capture in progress */
	struct graph *queue;       /* GNNEMU_DEFER: the work that waits for a synchronization */
	int flushing;              /* running the queue */
	int inner;                 /* a call made by the emulator itself */
	struct { char *p; size_t n; } *pin;   /* cudaMallocHost blocks */
	size_t npin, cappin;
} GR;

static struct capture *
capture_of(void *s)
{
	struct handle *st = s;

	return st && st->magic == STREAM_MAGIC ? st->cap : NULL;
}

static void
capture_invalidate(struct capture *c)
{
	c->invalid = 1;
}

static int
capture_forbids(void)
{
	struct capture *c;
	int hit = 0;

	if (graph_replaying || GR.inner)
		return 0;
	for (c = GR.active; c; c = c->next)
		if (c->mode == 0 || (c->mode == 1 && pthread_equal(c->owner, pthread_self()))) {
			capture_invalidate(c);
			hit = 1;
		}
	return hit;
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		host_fatal("out of memory");
	return p;
}

static struct gnode *
graph_add(struct graph *g, int kind)
{
	struct gnode *nd;

	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		if (!(nd = realloc(g->node, g->cap * sizeof *nd)))
			host_fatal("out of memory");
		g->node = nd;
	}
	nd = &g->node[g->n++];
	memset(nd, 0, sizeof *nd);
	nd->kind = kind;
	return nd;
}

/* a node's parameters from src (a kernel's closure copied) */
static void
node_set(struct gnode *nd, const struct gnode *src)
{
	void *arg = NULL;

	if (src->kind == NODE_KERNEL) {
		arg = xmalloc(src->d.argsize);
		memcpy(arg, src->d.arg, src->d.argsize);
	}
	if (nd->kind == NODE_KERNEL)
		free(nd->d.arg);
	*nd = *src;
	nd->d.arg = arg;
}

static struct graph *
graph_new(unsigned magic)
{
	struct graph *g = xmalloc(sizeof *g);

	memset(g, 0, sizeof *g);
	g->magic = magic;
	return g;
}

/* drops g's nodes, keeps its array */
static void
graph_clear(struct graph *g)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (g->node[i].kind == NODE_KERNEL)
			free(g->node[i].d.arg);
		free(g->node[i].own);
	}
	g->n = 0;
}

static void
graph_free(struct graph *g)
{
	graph_clear(g);
	free(g->node);
	g->magic = 0;
	free(g);
}

/* runs g's nodes in order through the eager paths, so that every check
 * applies again (a pointer argument freed since the capture, a copy
 * range that no longer fits) */
static void
graph_run(struct graph *g)
{
	struct gnode *nd;
	size_t i;

	for (i = 0; i < g->n; i++) {
		nd = &g->node[i];
		graph_replaying = nd->replay;
		if (nd->kind == NODE_KERNEL) {
			nd->d.check(nd->d.arg);   /* the pointers still live? */
			gnnemu_launch(&nd->d);
		} else if (nd->kind == NODE_COPY)
			gnnemu_memcpy(nd->dst, nd->src, nd->n, nd->ckind);
		else if (nd->kind == NODE_SET)
			gnnemu_memset(nd->dst, nd->value, nd->n);
		else
			gnnemu_event_record(nd->dst);
	}
	graph_replaying = 0;
}

/*
 * Deferred execution (GNNEMU_DEFER=1).  A GPU runs stream work after the
 * call that issued it returns, so a host that reads results without
 * synchronizing reads whatever was there.  Eager emulation hides that;
 * deferred, the work waits in one queue in issue order (a legal order
 * for any set of streams) until the host synchronizes, and a copy into
 * page-locked host memory poisons its destination when it is issued, so
 * that an early read sees NaNs.  CUDA's rules for pageable host memory
 * hold: a copy into it is synchronous, a copy out of it is staged when
 * issued (the queue keeps a snapshot).
 */
static struct gnode *
defer_node(int kind)
{
	if (!defer || GR.flushing)
		return NULL;
	if (!GR.queue)
		GR.queue = graph_new(GRAPH_MAGIC);
	return graph_add(GR.queue, kind);
}

/* a synchronization point: runs what waits */
static int
defer_flush(void)
{
	if (!GR.queue || !GR.queue->n || GR.flushing)
		return 0;
	GR.flushing = 1;
	GR.inner++;   /* the queue's copies are async ones: no capture forbids them */
	graph_run(GR.queue);
	GR.inner--;
	GR.flushing = 0;
	graph_clear(GR.queue);
	return 0;
}

/* nd (a new kernel node) keeps a copy of d's closure */
static void
kernel_node(struct gnode *nd, const gnnemu_launch_desc *d, const char *where)
{
	struct gnode tmp;

	if (!d->check || !d->argsize)
		host_fatal("kernel '%s': launched into %s without a closure to keep "
			   "(gnnemu_launch_desc.argsize)", d->name, where);
	memset(&tmp, 0, sizeof tmp);
	tmp.kind = NODE_KERNEL;
	tmp.d = *d;
	tmp.d.stream = NULL;   /* a replay runs it wherever the graph is launched */
	node_set(nd, &tmp);
}

static int
capture_launch(const gnnemu_launch_desc *d)
{
	struct capture *c = capture_of(d->stream);
	struct gnode *nd;

	if (!c) {
		if ((nd = defer_node(NODE_KERNEL))) {
			kernel_node(nd, d, "a deferred stream");
			return 1;
		}
		GR.st.kernels++;
		GR.st.replayed += graph_replaying != 0;
		return 0;
	}
	if (c->invalid) {
		set_error(E_CAPTURE_INVALIDATED);
		return 1;
	}
	kernel_node(graph_add(c->g, NODE_KERNEL), d, "a capturing stream");
	GR.st.recorded++;
	return 1;
}

static void
capture_drop(struct handle *st)
{
	struct capture **pc;

	for (pc = &GR.active; *pc; pc = &(*pc)->next)
		if (*pc == st->cap) {
			*pc = st->cap->next;
			break;
		}
	if (st->cap->g)
		graph_free(st->cap->g);
	free(st->cap);
	st->cap = NULL;
}

int
gnnemu_stream_begin_capture(void *s, int mode)
{
	API_LOCK();
	struct handle *st = s;
	struct capture *c;

	if (!st)
		return set_error(E_CAPTURE_UNSUPPORTED);   /* the legacy stream never captures */
	if (st->magic != STREAM_MAGIC)
		return set_error(E_INVALID_HANDLE);
	if (mode < 0 || mode > 2)
		return set_error(E_INVALID_VALUE);
	if (st->cap)
		return set_error(E_ILLEGAL_STATE);
	c = xmalloc(sizeof *c);
	c->mode = mode;
	c->invalid = 0;
	c->g = graph_new(GRAPH_MAGIC);
	c->stream = st;
	c->owner = pthread_self();
	c->next = GR.active;
	GR.active = c;
	st->cap = c;
	return 0;
}

int
gnnemu_stream_end_capture(void *s, void **graph)
{
	API_LOCK();
	struct handle *st = s;
	struct capture *c = capture_of(s);
	int invalid;

	if (!graph)
		return set_error(E_INVALID_VALUE);
	*graph = NULL;
	if (!st || st->magic != STREAM_MAGIC)
		return set_error(st ? E_INVALID_HANDLE : E_ILLEGAL_STATE);
	if (!c)
		return set_error(E_ILLEGAL_STATE);
	invalid = c->invalid;
	if (!invalid) {
		*graph = c->g;
		c->g = NULL;
		GR.st.captures++;
	}
	capture_drop(st);
	return invalid ? set_error(E_CAPTURE_INVALIDATED) : 0;
}

int
gnnemu_stream_is_capturing(void *s, int *status)
{
	API_LOCK();
	struct capture *c = capture_of(s);

	if (!status)
		return set_error(E_INVALID_VALUE);
	*status = !c ? 0 : c->invalid ? 2 : 1;
	return 0;
}

/* synchronizing with a capturing stream: never legal */
static int
capture_sync(struct capture *c)
{
	if (!c)
		return 0;
	capture_invalidate(c);
	return set_error(E_CAPTURE_UNSUPPORTED);
}

/* all work waits in one queue: synchronizing with one stream runs it all */
int
gnnemu_stream_synchronize(void *s)
{
	API_LOCK();
	return capture_sync(capture_of(s)) ? last_error : defer_flush();
}

int
gnnemu_stream_query(void *s)
{
	API_LOCK();
	return gnnemu_stream_synchronize(s);
}

int
gnnemu_device_synchronize(void)
{
	API_LOCK();
	struct capture *c;
	int err = 0;

	for (c = GR.active; c; c = c->next)
		err = capture_sync(c);
	return err ? err : defer_flush();
}

int
gnnemu_event_record_on(void *e, void *s)
{
	API_LOCK();
	struct capture *c = capture_of(s);
	struct handle *ev = e;
	struct gnode *nd;

	if (c)
		return capture_sync(c);   /* event nodes are not emulated */
	if (ev && ev->magic == EVENT_MAGIC && (nd = defer_node(NODE_EVENT))) {
		nd->dst = e;
		return 0;
	}
	return gnnemu_event_record(e);
}

int
gnnemu_event_synchronize(void *e)
{
	API_LOCK();
	struct handle *ev = e;

	if (!ev || ev->magic != EVENT_MAGIC)
		return set_error(E_INVALID_HANDLE);
	return defer_flush();
}

/* queues an async copy unless CUDA makes it synchronous (into pageable
 * host memory); 1 if queued */
static int
defer_copy(void *dst, const void *src, size_t n, int kind)
{
	struct gnode *nd;
	struct rec *rs;

	heap_init();
	kind = copy_check(dst, src, n, kind, &rs);
	if (!(kind & 1) && gnnemu_pointer_type(dst) != 1)
		return 0;
	nd = defer_node(NODE_COPY);
	nd->dst = dst;
	nd->src = src;
	nd->n = n;
	nd->ckind = kind;
	if (!(kind & 2) && gnnemu_pointer_type(src) != 1) {
		nd->own = xmalloc(n);
		memcpy(nd->own, src, n);
		nd->src = nd->own;
	}
	if (!(kind & 1))
		fill_poison(dst, n, 0);   /* what an early read sees */
	return 1;
}

int
gnnemu_memcpy_async(void *dst, const void *src, size_t n, int kind, void *s)
{
	API_LOCK();
	struct capture *c = capture_of(s);
	struct gnode *nd;
	struct rec *rs;
	int err;

	if (!c) {
		if (defer && !GR.flushing && kind >= 0 && kind <= 4 && n > 0 && defer_copy(dst, src, n, kind))
			return 0;
		GR.inner++;   /* async on another stream: no capture forbids it */
		err = gnnemu_memcpy(dst, src, n, kind);
		GR.inner--;
		return err;
	}
	if (c->invalid)
		return set_error(E_CAPTURE_INVALIDATED);
	if (kind < 0 || kind > 4)
		return set_error(21);
	if (n == 0)
		return 0;
	heap_init();
	copy_check(dst, src, n, kind, &rs);
	nd = graph_add(c->g, NODE_COPY);
	nd->dst = dst;
	nd->src = src;
	nd->n = n;
	nd->ckind = kind;
	return 0;
}

int
gnnemu_memset_async(void *dst, int v, size_t n, void *s)
{
	API_LOCK();
	struct capture *c = capture_of(s);
	struct gnode *nd;
	int err;

	if (!c) {
		if (n > 0 && defer && !GR.flushing) {
			heap_init();
			check_dev_range("cudaMemset", "", "destination", dst, n);
			nd = defer_node(NODE_SET);
			nd->dst = dst;
			nd->n = n;
			nd->value = v;
			return 0;
		}
		GR.inner++;
		err = gnnemu_memset(dst, v, n);
		GR.inner--;
		return err;
	}
	if (c->invalid)
		return set_error(E_CAPTURE_INVALIDATED);
	if (n == 0)
		return 0;
	heap_init();
	check_dev_range("cudaMemset", "", "destination", dst, n);
	nd = graph_add(c->g, NODE_SET);
	nd->dst = dst;
	nd->n = n;
	nd->value = v;
	return 0;
}

int
gnnemu_graph_instantiate(void **exec, void *graph)
{
	API_LOCK();
	struct graph *g = graph, *x;
	size_t i;

	if (!exec || !g || g->magic != GRAPH_MAGIC)
		return set_error(E_INVALID_VALUE);
	x = graph_new(EXEC_MAGIC);
	for (i = 0; i < g->n; i++)
		node_set(graph_add(x, g->node[i].kind), &g->node[i]);
	*exec = x;
	GR.st.instantiated++;
	return 0;
}

/* CUDA's rules, as far as the emulator's nodes go: the same nodes in the
 * same order, a kernel node the same kernel (its closure's type), a copy
 * the same kind; parameters (pointers, sizes, the grid) may change */
int
gnnemu_graph_exec_update(void *exec, void *graph, int *result)
{
	API_LOCK();
	struct graph *x = exec, *g = graph;
	size_t i;
	int r = 0;

	if (!x || x->magic != EXEC_MAGIC || !g || g->magic != GRAPH_MAGIC || !result)
		return set_error(E_INVALID_VALUE);
	if (x->n != g->n)
		r = 2;   /* cudaGraphExecUpdateErrorTopologyChanged */
	for (i = 0; !r && i < g->n; i++)
		if (x->node[i].kind != g->node[i].kind)
			r = 3;   /* ...NodeTypeChanged */
		else if (g->node[i].kind == NODE_KERNEL && (x->node[i].d.thunk != g->node[i].d.thunk ||
							     x->node[i].d.argsize != g->node[i].d.argsize))
			r = 4;   /* ...FunctionChanged */
		else if (g->node[i].kind == NODE_COPY && x->node[i].ckind != g->node[i].ckind)
			r = 5;   /* ...ParametersChanged */
	*result = r;
	if (r)
		return set_error(E_GRAPH_UPDATE);
	for (i = 0; i < g->n; i++)
		node_set(&x->node[i], &g->node[i]);
	GR.st.updated++;
	return 0;
}

int
gnnemu_graph_launch(void *exec, void *s)
{
	API_LOCK();
	struct graph *x = exec;
	struct capture *c = capture_of(s);
	struct gnode *nd;
	size_t i;

	if (!x || x->magic != EXEC_MAGIC)
		return set_error(E_INVALID_HANDLE);
	if (c)
		return capture_sync(c);   /* child graphs are not emulated */
	GR.st.graph_launches++;
	if (defer && !GR.flushing) {
		for (i = 0; i < x->n; i++) {
			node_set(nd = defer_node(x->node[i].kind), &x->node[i]);
			nd->replay = 1;
		}
		return 0;
	}
	for (i = 0; i < x->n; i++)
		x->node[i].replay = 1;
	graph_run(x);
	return 0;
}

/* a graph (GRAPH_MAGIC) or an executable graph (EXEC_MAGIC) goes */
static int
graph_destroy(void *h, unsigned magic)
{
	struct graph *g = h;

	if (!g || g->magic != magic)
		return set_error(E_INVALID_VALUE);
	graph_free(g);
	return 0;
}

int
gnnemu_graph_destroy(void *graph)
{
	API_LOCK();
	return graph_destroy(graph, GRAPH_MAGIC);
}

int
gnnemu_graph_exec_destroy(void *exec)
{
	API_LOCK();
	return graph_destroy(exec, EXEC_MAGIC);
}

void
gnnemu_get_stats(gnnemu_stats *st)
{
	API_LOCK();
	*st = GR.st;
	st->copies = copies_run;
	st->mallocs = H.nmalloc;
	st->live = H.nlive;
	st->live_bytes = H.inuse;
	st->peak_bytes = H.peak;
}

static int
pinned_add(void *p, size_t n)
{
	void *q;

	if (GR.npin == GR.cappin) {
		GR.cappin = GR.cappin ? 2 * GR.cappin : 16;
		if (!(q = realloc(GR.pin, GR.cappin * sizeof *GR.pin)))
			return -1;
		GR.pin = q;
	}
	GR.pin[GR.npin].p = p;
	GR.pin[GR.npin++].n = n;
	return 0;
}

static int
pinned_remove(void *p)
{
	size_t i;

	for (i = 0; i < GR.npin; i++)
		if (GR.pin[i].p == p) {
			GR.pin[i] = GR.pin[--GR.npin];
			return 0;
		}
	return -1;
}

int
gnnemu_pointer_type(const void *p)
{
	API_LOCK();
	size_t i;

	if (live_rec(p))
		return 2;
	if (in_heap(p))
		return -1;
	for (i = 0; i < GR.npin; i++)
		if ((const char *)p >= GR.pin[i].p && (const char *)p < GR.pin[i].p + GR.pin[i].n)
			return 1;
	return 0;
}

/* GNNEMU_STATS=1: what ran, when the program (or the object holding the
 * emulator) ends */
__attribute__((destructor)) static void
gnnemu_stats_report(void)
{
	const char *s = getenv("GNNEMU_STATS");
	char buf[320];

	if (s && !strcmp(s, "1")) {
		snprintf(buf, sizeof buf, "gnnemu: stats: %llu kernels run (%llu replayed by graphs), %llu recorded; "
			 "%llu captures, %llu graphs instantiated, %llu updated, %llu graph launches; %llu copies\n",
			 GR.st.kernels, GR.st.replayed, GR.st.recorded, GR.st.captures, GR.st.instantiated, GR.st.updated,
			 GR.st.graph_launches, copies_run);
		fflush(stdout);
		if (write(2, buf, strlen(buf)) < 0)
			return;
	}
	free(GR.pin);
	GR.pin = NULL;
	GR.npin = GR.cappin = 0;
	if (GR.queue)
		graph_free(GR.queue);
	GR.queue = NULL;
}
