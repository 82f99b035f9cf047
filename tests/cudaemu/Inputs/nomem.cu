// nomem.test's program: a compiled model (its descriptor, DESC) on the
// emulated device running out of memory.
//
// The sweep: the model's whole life -- create, load_weights, bind, two
// forwards, and with a training step the inputs' device copies, two
// steps and a forward -- once with room (the reference, which counts its
// cudaMallocs: K), then K times with the k-th cudaMalloc failing
// (gnnemu_fail_malloc).  The call that meets it must fail with
// GNN_ERR_MEM and a message that says out of device memory and what is
// free, hold no more device memory than before it (create, bind,
// forward; a failed step keeps the training state it made, freed at
// destroy), and succeed when called again; the run then ends with the
// reference's outputs and losses, bit for bit, and no device allocation
// live.  Host leaks are LeakSanitizer's (the program is built with ASan).
//
// The cap, lowered step by step: the life again under a cap of 8/8,
// 7/8, ... 1/8 of the most device memory the reference held at once,
// less 256 bytes;
// the first call that does not fit must fail as above, and succeed when
// called again with the cap lifted (the life then ends as the
// reference's).  Bind under a cap of what the unconstrained bind peaked
// at succeeds, and so does a forward on device memory (forward_host's
// staging is made by its first call, not by bind); under a cap of half
// that bind fails before allocating anything (bind's check of its
// room), and the model then binds a smaller graph under the same cap,
// and the first graph again once the cap is lifted, with the
// unconstrained outputs.
//
// usage: nomem WEIGHTS|- NODES EDGES
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnnrt.h"

extern "C" const gnn_model_desc DESC;

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); exit(1); } while (0)
#define CK(x) do { gnn_status s_ = (x); if (s_ != GNN_OK) FAIL("%s: %s", #x, gnn_errmsg()); } while (0)

static const gnn_model_desc *D = &DESC;
static const char *weights;

static gnnemu_stats
stats(void)
{
	gnnemu_stats st;

	gnnemu_get_stats(&st);
	return st;
}

/* a graph of n nodes and e edges (Zipf-like degrees), the last 4 edges
 * self loops (one repeated), so that bind sizes derived graphs by them */
struct Data {
	int64_t n, e;
	gnn_graph *g;
	float *x;
	int64_t *y;
	unsigned char *mask;
	size_t xbytes;
};

static Data
data(int64_t n, int64_t e)
{
	Data d;
	gnn_synth_spec sp = {n, e - 4, 0, 0.6, 7};
	int64_t *ei = (int64_t *)calloc((size_t)(2 * e), sizeof *ei), f = D->inputs[0].shape[1];
	int64_t classes = D->outputs[0].shape[1];

	d.n = n;
	d.e = e;
	CK(gnn_synth_edges(&sp, ei));
	/* [2, e - 4] into [2, e]: the targets move up by 4 */
	memmove(ei + e, ei + (e - 4), (size_t)(e - 4) * sizeof *ei);
	for (int k = 0; k < 4; k++) {
		ei[e - 4 + k] = k == 3 ? 1 : k;
		ei[e + e - 4 + k] = k == 3 ? 1 : k;
	}
	CK(gnn_graph_from_edge_index(&d.g, ei, GNN_I64, e, n));
	free(ei);
	sp.edges = 0;
	sp.features = f;
	d.xbytes = (size_t)(n * f) * sizeof(float);
	d.x = (float *)malloc(d.xbytes);
	CK(gnn_synth_features(&sp, d.x));
	d.y = (int64_t *)malloc((size_t)n * sizeof *d.y);
	d.mask = (unsigned char *)malloc((size_t)n);
	for (int64_t i = 0; i < n; i++) {
		d.y[i] = (i * 7 + 3) % classes;
		d.mask[i] = i % 3 == 0;
	}
	return d;
}

static void
dfree(Data *d)
{
	gnn_graph_destroy(d->g);
	free(d->x);
	free(d->y);
	free(d->mask);
}

/* what a life gives: the outputs of its forwards and its losses */
struct Result {
	float *out[4];
	float loss[2];
	size_t outbytes;
	int nout;
};

static int failures;           /* calls that met the failing cudaMalloc */
static char failmsg[1024];

/* f(); when it fails, it must be for want of device memory, hold no
 * more than before it (strict), and succeed again */
template <class F>
static void
call(const char *what, bool strict, F f)
{
	gnnemu_stats a = stats(), b;
	gnn_status s = f();

	if (s == GNN_OK)
		return;
	b = stats();
	if (s != GNN_ERR_MEM || !strstr(gnn_errmsg(), "out of device memory") || !strstr(gnn_errmsg(), " free"))
		FAIL("%s: %s: %s", what, gnn_status_name(s), gnn_errmsg());
	if (strict && b.live > a.live)
		FAIL("%s: failed holding %llu more device allocations", what, b.live - a.live);
	failures++;
	snprintf(failmsg, sizeof failmsg, "%s: %s", what, gnn_errmsg());
	gnnemu_set_mem_cap(0);
	if ((s = f()) != GNN_OK)
		FAIL("%s again: %s: %s", what, gnn_status_name(s), gnn_errmsg());
}

static void
life(Data *d, Result *r)
{
	void *m = NULL, *dx = NULL, *dy = NULL, *dm = NULL;
	unsigned long long live = stats().live;

	r->nout = 0;
	r->outbytes = (size_t)(d->n * D->outputs[0].shape[1]) * sizeof(float);
	call("create", true, [&] { return D->create(&m); });
	if (weights)
		call("load_weights", true, [&] { return D->load_weights(m, weights); });
	else
		call("init_weights", true, [&] { return gnn_prog_init(m, 1); });
	call("bind", true, [&] { return D->bind(m, d->g); });
	for (int k = 0; k < 2; k++) {
		const void *in[1] = {d->x};
		void *out[1] = {r->out[r->nout++] = (float *)malloc(r->outbytes)};
		call("forward_host", true, [&] { return D->forward_host(m, in, out); });
	}
	{
		/* forward on the device's x into host memory: the output, not
		 * in the arena (GNN_BUF_LAZY), goes through a buffer of its own
		 * that this first such forward makes */
		void *hx = NULL;
		call("to_device x for forward", true, [&] { return gnn_prog_to_device(m, d->x, d->xbytes, &hx); });
		const void *in[1] = {hx};
		void *out[1] = {r->out[r->nout++] = (float *)malloc(r->outbytes)};
		call("forward into host memory", true, [&] { return D->forward(m, in, out); });
		gnn_prog_free_device(m, hx);
	}
	if (D->train) {
		call("to_device x", true, [&] { return gnn_prog_to_device(m, d->x, d->xbytes, &dx); });
		call("to_device y", true, [&] { return gnn_prog_to_device(m, d->y, (size_t)d->n * sizeof *d->y, &dy); });
		call("to_device mask", true, [&] { return gnn_prog_to_device(m, d->mask, (size_t)d->n, &dm); });
		for (int k = 0; k < 2; k++) {
			const void *in[3] = {dx, dy, dm};
			call("train_step", false, [&] { return gnn_prog_train_step(m, D->train, in, &r->loss[k]); });
		}
		const void *in[1] = {d->x};
		void *out[1] = {r->out[r->nout++] = (float *)malloc(r->outbytes)};
		call("forward_host after training", true, [&] { return D->forward_host(m, in, out); });
		gnn_prog_free_device(m, dx);
		gnn_prog_free_device(m, dy);
		gnn_prog_free_device(m, dm);
	}
	D->destroy(m);
	if (stats().live != live)
		FAIL("%llu device allocations outlive the model", stats().live - live);
}

static void
rfree(Result *r)
{
	for (int i = 0; i < r->nout; i++)
		free(r->out[i]);
}

static void
same(const char *what, const Result *a, const Result *b)
{
	for (int i = 0; i < a->nout; i++)
		if (memcmp(a->out[i], b->out[i], a->outbytes))
			FAIL("%s: forward %d differs from the unconstrained run's", what, i);
	if (D->train && memcmp(a->loss, b->loss, sizeof a->loss))
		FAIL("%s: the losses differ from the unconstrained run's", what);
}

static void
forward(void *m, Data *d, float *out)
{
	const void *in[1] = {d->x};
	void *o[1] = {out};

	CK(D->forward_host(m, in, o));
}

/* forward on device memory (Dev: the inputs and outputs, made before a
 * cap is set), into the host's out: no forward_host staging, which its
 * first call makes */
struct Dev {
	void *x, *out;
	size_t outbytes;
};

static Dev
devio(const Data *d, size_t outbytes)
{
	Dev v;

	if (cudaMalloc(&v.x, d->xbytes) != cudaSuccess || cudaMalloc(&v.out, outbytes) != cudaSuccess ||
	    cudaMemcpy(v.x, d->x, d->xbytes, cudaMemcpyHostToDevice) != cudaSuccess)
		FAIL("device copies of the inputs");
	v.outbytes = outbytes;
	return v;
}

static void
fwddev(void *m, const Dev *v, float *out)
{
	const void *in[1] = {v->x};
	void *o[1] = {v->out};

	CK(D->forward(m, in, o));
	if (cudaMemcpy(out, v->out, v->outbytes, cudaMemcpyDeviceToHost) != cudaSuccess)
		FAIL("copying the output back");
}

/* a model with its weights, outside the sweep */
static void *
model(void)
{
	void *m;

	CK(D->create(&m));
	if (weights)
		CK(D->load_weights(m, weights));
	else
		CK(gnn_prog_init(m, 1));
	return m;
}

int
main(int argc, char **argv)
{
	if (argc != 4)
		FAIL("usage: nomem WEIGHTS|- NODES EDGES");
	weights = strcmp(argv[1], "-") ? argv[1] : NULL;
	Data big = data(atoll(argv[2]), atoll(argv[3]));
	int64_t ns = big.n / 10 > 8 ? big.n / 10 : 8;   /* a tenth of big: it fits where half big does not */
	Data small = data(ns, 3 * ns);
	Result ref, got;
	unsigned long long k, K, m0;

	/* the sweep */
	m0 = stats().mallocs;
	size_t base = stats().live_bytes, lifepeak;
	gnnemu_reset_peak();
	life(&big, &ref);
	K = stats().mallocs - m0;
	lifepeak = stats().peak_bytes - base;
	if (failures)
		FAIL("the unconstrained run failed");
	for (k = 1; k <= K; k++) {
		failures = 0;
		gnnemu_fail_malloc(k);
		life(&big, &got);
		gnnemu_fail_malloc(0);
		if (failures != 1)
			FAIL("allocation %llu of %llu: %d calls failed", k, K, failures);
		printf("allocation %llu: %s\n", k, failmsg);
		same(failmsg, &ref, &got);
		rfree(&got);
	}
	printf("sweep: %s, %llu allocations, each failed once: ok\n", D->name, K);
	for (k = 8; k > 0; k--) {
		failures = 0;
		gnnemu_set_mem_cap(base + lifepeak * k / 8 - 256);
		life(&big, &got);
		if (failures != 1)
			FAIL("under a cap of %llu/8 of the peak: %d calls failed", k, failures);
		printf("cap %llu/8: %s\n", k, failmsg);
		same(failmsg, &ref, &got);
		rfree(&got);
	}
	printf("cap sweep: %s, a life's peak of %zu bytes in eighths: ok\n", D->name, lifepeak);

	/* the cap */
	size_t outbytes = ref.outbytes, live, peak;
	float *out = (float *)malloc(outbytes), *sref = (float *)malloc(outbytes);
	void *m = model();
	CK(D->bind(m, small.g));
	forward(m, &small, sref);
	D->destroy(m);

	/* the inputs and outputs on the device, before any cap */
	Dev vbig = devio(&big, outbytes),
	    vsmall = devio(&small, (size_t)(small.n * D->outputs[0].shape[1]) * sizeof(float));
	m = model();
	live = stats().live_bytes;
	gnnemu_reset_peak();
	CK(D->bind(m, big.g));
	peak = stats().peak_bytes - live;
	D->destroy(m);

	m = model();
	gnnemu_set_mem_cap(stats().live_bytes + peak);
	CK(D->bind(m, big.g));
	fwddev(m, &vbig, out);
	if (memcmp(out, ref.out[0], outbytes))
		FAIL("bind under a cap of its peak: the output differs");
	printf("cap: bind peaks at %zu bytes; under that cap: ok\n", peak);
	gnnemu_set_mem_cap(0);
	D->destroy(m);

	m = model();
	gnnemu_set_mem_cap(stats().live_bytes + peak / 2);
	k = stats().mallocs;
	gnn_status s = D->bind(m, big.g);
	if (s != GNN_ERR_MEM || stats().mallocs != k)
		FAIL("bind under half its peak: %s (%s), %llu allocations tried", gnn_status_name(s), gnn_errmsg(),
		     stats().mallocs - k);
	printf("cap: half: %s\n", gnn_errmsg());
	s = D->forward_host(m, (const void *const *)&big.x, (void *const *)&out);
	if (s != GNN_ERR_STATE)
		FAIL("forward after a failed bind: %s", gnn_status_name(s));
	CK(D->bind(m, small.g));
	fwddev(m, &vsmall, out);
	if (memcmp(out, sref, (size_t)(small.n * D->outputs[0].shape[1]) * sizeof(float)))
		FAIL("the smaller graph under the cap: the output differs");
	printf("cap: the smaller graph under it: ok\n");
	gnnemu_set_mem_cap(0);
	CK(D->bind(m, big.g));
	forward(m, &big, out);
	if (memcmp(out, ref.out[0], outbytes))
		FAIL("the first graph, the cap lifted: the output differs");
	printf("cap: the first graph, the cap lifted: ok\n");
	D->destroy(m);
	cudaFree(vbig.x);
	cudaFree(vbig.out);
	cudaFree(vsmall.x);
	cudaFree(vsmall.out);
	if (stats().live)
		FAIL("%llu device allocations outlive the models", stats().live);

	rfree(&ref);
	free(out);
	free(sref);
	dfree(&big);
	dfree(&small);
	printf("nomem: all ok\n");
	return 0;
}
