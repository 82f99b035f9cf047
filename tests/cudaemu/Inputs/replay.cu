// replay.test's program: one model instance through forwards that must
// replay its CUDA graph, launch directly, capture again, and forwards
// after a rebind to a graph of another size and after new weights, each
// printing what the emulated device did (gnnemu_get_stats) and writing
// its outputs for the comparisons the test makes.
// usage: replay DIR   (replay_data.py's files; writes DIR/*.out*.npy)
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define CK(x) do { gnn_status s_ = (x); if (s_ != GNN_OK) { \
	fprintf(stderr, "%s: %s\n", #x, gnn_errmsg()); exit(2); } } while (0)
#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

static const char *dir;
static gnnemu_stats was;

static const char *
path(const char *name)
{
	static char buf[4][1024];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* what the device did since the last call */
static void
step(const char *what)
{
	gnnemu_stats st;

	gnnemu_get_stats(&st);
	printf("%s: captures %llu, instantiated %llu, updated %llu, graph launches %llu, direct kernels %s, copies %llu\n",
	       what, st.captures - was.captures, st.instantiated - was.instantiated, st.updated - was.updated,
	       st.graph_launches - was.graph_launches, st.kernels - st.replayed > was.kernels - was.replayed ? "yes" : "no",
	       st.copies - was.copies);
	was = st;
}

static void
save(const char *name, const float *p, int64_t n, int64_t w)
{
	gnn_array a = {GNN_F32, 2, {n, w}, (void *)p, (size_t)(n * w) * sizeof(float)};

	CK(gnn_npy_write(path(name), &a));
}

static void
same(const char *what, const float *a, const float *b, size_t n)
{
	printf("%s: %s\n", what, memcmp(a, b, n * sizeof *a) ? "DIFFERENT" : "identical");
}

/* forward_host on x (n rows) into o0, o1, saved as TAG.out0.npy, TAG.out1.npy */
static void
fhost(Replay *m, const gnn_array *x, const char *tag, float *o0, float *o1)
{
	char name[64];

	CK(Replay_forward_host(m, (const float *)x->data, o0, o1));
	step("forward_host");
	snprintf(name, sizeof name, "%s.out0.npy", tag);
	save(name, o0, x->shape[0], 7);
	snprintf(name, sizeof name, "%s.out1.npy", tag);
	save(name, o1, x->shape[0], 8);
}

/* forward_host again into r0, r1: the same bits as o0, o1 */
static void
fagain(Replay *m, const gnn_array *x, const float *o0, const float *o1, float *r0, float *r1)
{
	CK(Replay_forward_host(m, (const float *)x->data, r0, r1));
	step("forward_host again");
	same("  out0", o0, r0, (size_t)x->shape[0] * 7);
	same("  out1", o1, r1, (size_t)x->shape[0] * 8);
}

/* forward on the device's dx into a0, a1 (step what); output k, n floats
 * in device memory (dev) or the host's, read into back and checked
 * against want */
static void
fone(Replay *m, const float *dx, float *a0, float *a1, const char *what, int k, int dev, const float *want, float *back,
     size_t n)
{
	CK(Replay_forward(m, dx, a0, a1));
	CK(Replay_synchronize(m));
	step(what);
	if (dev)
		CU(cudaMemcpy(back, k ? a1 : a0, n * sizeof(float), cudaMemcpyDeviceToHost));
	same(k ? "  out1" : "  out0", want, back, n);
}

int
main(int argc, char **argv)
{
	Replay *m;
	gnn_graph *ga, *gb;
	gnn_array xa, xb;
	int64_t na, nb;
	float *o0, *o1, *r0, *r1, *dx, *d0, *d1, *d1u;

	if (argc != 2)
		return 2;
	dir = argv[1];
	CK(gnn_npy_read(path("x_a.npy"), &xa));
	CK(gnn_npy_read(path("x_b.npy"), &xb));
	na = xa.shape[0];
	nb = xb.shape[0];
	CK(gnn_graph_read_npy(&ga, path("ei_a.npy"), na));
	CK(gnn_graph_read_npy(&gb, path("ei_b.npy"), nb));
	o0 = (float *)calloc((size_t)na * 7, sizeof(float));
	o1 = (float *)calloc((size_t)na * 8, sizeof(float));
	r0 = (float *)calloc((size_t)na * 7, sizeof(float));
	r1 = (float *)calloc((size_t)na * 8, sizeof(float));
	CU(cudaMalloc(&dx, (size_t)na * 16 * sizeof(float)));
	CU(cudaMalloc(&d0, ((size_t)na * 7 + 64) * sizeof(float)));
	CU(cudaMalloc(&d1, (size_t)na * 8 * sizeof(float)));
	CU(cudaMalloc(&d1u, ((size_t)na * 8 + 64) * sizeof(float)));
	CU(cudaMemcpy(dx, xa.data, xa.nbytes, cudaMemcpyHostToDevice));

	CK(Replay_create(&m));
	CK(Replay_load_weights(m, path("w1.safetensors")));
	CK(Replay_bind(m, ga));
	step("bind a");
	fhost(m, &xa, "a", o0, o1);
	fagain(m, &xa, o0, o1, r0, r1);

	/* device pointers: new ones launch directly, the same ones twice
	 * capture again (an update), three times replay */
	for (int k = 0; k < 3; k++) {
		CU(cudaMemset(d0, 0, (size_t)na * 7 * sizeof(float)));
		CK(Replay_forward(m, dx, d0, d1));
		CK(Replay_synchronize(m));
		step(k == 0 ? "forward, new pointers" : k == 1 ? "forward, the same pointers" : "forward, the same again");
		CU(cudaMemcpy(r0, d0, (size_t)na * 7 * sizeof(float), cudaMemcpyDeviceToHost));
		CU(cudaMemcpy(r1, d1, (size_t)na * 8 * sizeof(float), cudaMemcpyDeviceToHost));
		step("  (copies back)");
		same("  out0", o0, r0, na * 7);
		same("  out1", o1, r1, na * 8);
	}
	/* an output not aligned as the arena's buffers: through the arena */
	fone(m, dx, d0 + 1, d1, "forward, out0 unaligned", 0, 1, o0, r0, (size_t)na * 7);
	/* an output in host memory: through the arena too; the kernels take
	 * the same pointers as just before, so the graph is captured again */
	memset(r0, 0, (size_t)na * 7 * sizeof(float));
	fone(m, dx, r0, d1, "forward, out0 on the host", 0, 0, o0, r0, (size_t)na * 7);
	/* out1 (h) alone in its slot takes no arena memory (GNN_BUF_LAZY):
	 * unaligned or on the host it goes through a buffer of its own, made
	 * by the first forward that needs one and kept until unbind */
	fone(m, dx, d0, d1u + 1, "forward, out1 unaligned", 1, 1, o1, r1, (size_t)na * 8);
	memset(r1, 0, (size_t)na * 8 * sizeof(float));
	fone(m, dx, d0, r1, "forward, out1 on the host", 1, 0, o1, r1, (size_t)na * 8);
	fone(m, dx, d0, d1, "forward, out1 in place again", 1, 1, o1, r1, (size_t)na * 8);

	/* another graph of another size, then new weights */
	CK(Replay_bind(m, gb));
	step("bind b");
	fhost(m, &xb, "b", o0, o1);
	CK(Replay_load_weights(m, path("w2.safetensors")));
	step("load_weights w2");
	fhost(m, &xb, "b2", o0, o1);
	fagain(m, &xb, o0, o1, r0, r1);

	Replay_destroy(m);
	CU(cudaFree(dx));
	CU(cudaFree(d0));
	CU(cudaFree(d1));
	CU(cudaFree(d1u));
	gnn_graph_destroy(ga);
	gnn_graph_destroy(gb);
	gnn_array_free(&xa);
	gnn_array_free(&xb);
	free(o0);
	free(o1);
	free(r0);
	free(r1);
	return 0;
}
