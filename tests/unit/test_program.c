/*
** test_program.c: the runtime's host half (program.c) and its CUDA device
** layer (device_cuda.c), compiled here against a fake CUDA runtime
** (fakecuda/) that fails any call on demand.
**
** A small hand-written program -- an input, a parameter filled at create
** and replaced by load, a load-time value, a bind-time degree vector, a
** segment plan, two forward values sharing memory -- is run on the cpu
** device and on the fake one, and its output checked against the same
** arithmetic done here.  Then every CUDA call of a whole session (create,
** load, bind, forward_host, forward, tuning) is made to fail in turn:
** each failure is GNN_ERR_CUDA with the device's message, leaves the model
** usable (a rebind and a forward give the right numbers again), and
** nothing leaks on the device or in the allocator.
** Usage: test_program
*/
#include "rtcheck.h"

#include <stdint.h>

#define GNN_DEVICE_SYMBOL fake_cuda
#include "../../runtime/device_cuda.c"

enum { N = 3 };

/* sizes: 0: 2N, 4: 2, 7: N, 11: 5 */
static const int64_t poly[] = {1, 2, 1, 0, 1, 2, 0, 1, 1, 1, 0, 1, 5, 0};
static const gnn_buffer bufs[] = {
	{"x", GNN_BUF_INPUT, GNN_F32, GNN_BUF_DEVICE, 0, -1, 0},
	{"w", GNN_BUF_PARAM, GNN_F32, GNN_BUF_DEVICE | GNN_BUF_FILL, 4, -1, 0.5},
	{"deg", GNN_BUF_BIND, GNN_F32, GNN_BUF_DEVICE, 7, -1, 0},
	{"y", GNN_BUF_FWD, GNN_F32, GNN_BUF_DEVICE, 0, -1, 0},
	{"w2", GNN_BUF_LOAD, GNN_F32, GNN_BUF_DEVICE, 4, -1, 0},
	{"z", GNN_BUF_FWD, GNN_F32, GNN_BUF_DEVICE, 0, 3, 0},
};
static const gnn_step bindsteps[] = {
	{GNN_STEP_IN_DEGREE, 2, 0, 0, 0, 0},
	{GNN_STEP_EDGEPLAN, 0, 0, 0, 0, 0},
};
static const gnn_step loadsteps[] = {{GNN_STEP_KERNEL, 4, -1, 0, 0, 0}};
static const unsigned char segdev[] = {1};
static const int io[] = {0, 5, 1};
static const int outshape[] = {7, 4};
static const gnn_tensor_info inputs[] = {{"x", GNN_F32, 2, {-1, 2}, "[N, 2]"}};
static const gnn_tensor_info outputs[] = {{"output0", GNN_F32, 2, {-1, 2}, "[N, 2]"}};
static const gnn_tensor_info params[] = {{"w", GNN_F32, 1, {2}, "[2]"}};

static int launchfail;   /* the next forward's "kernel" fails to launch */

/* the load-time kernel: w2 = 2 w */
static void
kernel(gnn_instance *m, int k)
{
	CHECK(k == 0);
	for (int j = 0; j < 2; j++)
		((float *)m->h[4])[j] = 2 * ((float *)m->h[1])[j];
}

/* forward: y = x * w2 + deg (the rows' in-degree, from the CSR), z = y + 1 */
static void
compute(gnn_instance *m)
{
	const float *x = m->b[0], *w2 = m->b[4], *deg = m->b[2];
	const int64_t *rowptr = m->seg[0];
	float *y = m->b[3], *z = m->b[5];

	for (int64_t i = 0; i < m->sym[0]; i++)
		for (int j = 0; j < 2; j++) {
			y[i * 2 + j] = x[i * 2 + j] * w2[j] + deg[i];
			CHECK(deg[i] == (float)(rowptr[i + 1] - rowptr[i]));
		}
	for (int64_t i = 0; i < 2 * m->sym[0]; i++)
		z[i] = y[i] + 1;   /* z shares y's memory */
	if (launchfail)
		fake_pending = 1;
	launchfail = 0;
}

static gnn_status
run(void *mv, const void *const *in, void *const *out)
{
	gnn_instance *m = mv;
	gnn_status s = gnn_prog_begin(m, in, out);

	if (s != GNN_OK)
		return s;
	while (gnn_prog_issue(m))
		compute(m);
	return gnn_prog_end(m, out);
}

static void
launch(gnn_instance *m, int k)
{
	CHECK(k == 0);
	compute(m);
}

/* the graph sets N (symbol 0) and E (1); bound[4]: the node count it must have instead */
static int bound[8] = {0, 1, -1, -1, -1, -1, -1, -1};

static gnn_program prog = {
	"T", &gnn_device_cpu, 2, poly, 6, bufs, 1, 1, segdev, 2, 1, bindsteps, loadsteps,
	1, bound, 1, 1, 1, io, io + 1, io + 2, outshape,
	inputs, outputs, params, 1, kernel, run, launch, NULL, NULL, NULL, NULL,
};

static gnn_graph *graph;
static const char *weights;
static const float x[2 * N] = {1, 2, 3, 4, 5, 6};

/* the output for weights w = {1, 3}: in-degrees 0, 1, 2 */
static int
right(const float *z)
{
	const float deg[N] = {0, 1, 2}, w2[2] = {2, 6};

	for (int i = 0; i < N; i++)
		for (int j = 0; j < 2; j++)
			if (z[i * 2 + j] != x[i * 2 + j] * w2[j] + deg[i] + 1)
				return 0;
	return 1;
}

/* w = {1, 3} as a safetensors file */
static const char *
mkweights(void)
{
	const char *hdr = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
	size_t h = strlen(hdr);
	unsigned char b[256] = {0};
	float w[2] = {1, 3};

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)h >> 8 * i);
	memcpy(b + 8, hdr, h);
	memcpy(b + 8 + h, w, sizeof w);
	putfile(tmppath("w.safetensors"), b, 8 + h + sizeof w);
	return tmppath("w.safetensors");
}

/* a whole session; the first failure is returned (the model destroyed) */
static gnn_status
session(void *ctx)
{
	gnn_instance *m = NULL;
	float z[2 * N], dz[2 * N];
	const void *in[] = {x};
	void *out[] = {z}, *dout[] = {dz};
	double us;
	int64_t shape[2];
	gnn_status s;

	(void)ctx;
	if ((s = gnn_prog_create(&prog, sizeof *m, &m)) != GNN_OK)
		return s;
	if ((s = gnn_prog_load(m, weights)) != GNN_OK || (s = gnn_prog_bind(m, graph)) != GNN_OK ||
	    (s = gnn_prog_run_host(m, in, out)) != GNN_OK)
		goto out;
	CHECK(right(z));
	CHECK_ST(gnn_prog_output_shape(m, 0, shape), GNN_OK);
	CHECK(shape[0] == N && shape[1] == 2);
	/* forward on device pointers (the fake device's are host memory) */
	in[0] = prog.dev->separate ? m->stage[0] : (const void *)x;   /* forward_host staged x */
	if ((s = prog.run(m, in, dout)) != GNN_OK || (s = gnn_prog_sync(m)) != GNN_OK)
		goto out;
	CHECK(right(dz));
	gnn_prog_tune_select(m, 0, 0);
	s = gnn_prog_tune_time(m, 0, 3, &us);
out:
	gnn_prog_destroy(m);
	return s;
}

/* every CUDA call of a session fails in turn */
static void
failures(void)
{
	long k;
	int nfailed = 0;

	for (k = 0;; k++) {
		gnn_instance *m = NULL;
		float z[2 * N];
		const void *in[] = {x};
		void *out[] = {z};
		gnn_status s;

		fake_calls = 0;
		fake_failat = k;
		s = session(NULL);
		fake_failat = -1;
		if (fake_calls <= k) {   /* no call was left to fail */
			CHECK_ST(s, GNN_OK);
			break;
		}
		nfailed++;
		if (!CHECK_ST(s, GNN_ERR_CUDA) || !CHECK_MSG("fake failure") || !CHECK(fake_live == 0))
			printf("  with CUDA call %ld failing\n", k);
		/* a failure in the middle of bind leaves a model that binds again */
		if (gnn_prog_create(&prog, sizeof *m, &m) == GNN_OK) {
			CHECK_ST(gnn_prog_load(m, weights), GNN_OK);
			fake_calls = 0;
			fake_failat = k;
			s = gnn_prog_bind(m, graph);
			fake_failat = -1;
			if (s != GNN_OK) {
				CHECK(!m->bound);
				CHECK_ST(gnn_prog_run_host(m, in, out), GNN_ERR_STATE);
				CHECK_ST(gnn_prog_bind(m, graph), GNN_OK);
			}
			CHECK_ST(gnn_prog_run_host(m, in, out), GNN_OK);
			CHECK(right(z));
			gnn_prog_destroy(m);
		}
		CHECK(fake_live == 0);
	}
	CHECK(nfailed >= 12);   /* stream, allocations, uploads, syncs, copies, events */
	printf("%d CUDA calls failed in turn\n", nfailed);
}

int
main(void)
{
	static const int64_t ei[] = {0, 0, 1, 1, 2, 2};
	gnn_instance *m = NULL;
	float z[2 * N];
	const void *in[] = {x};
	void *out[] = {z};

	mktmpdir();
	weights = mkweights();
	CHECK_ST(gnn_graph_from_edge_index(&graph, ei, GNN_I64, 3, N), GNN_OK);

	/* the cpu device: host memory throughout */
	CHECK_ST(session(NULL), GNN_OK);
	check_oom("a cpu session", session, NULL);
	CHECK_ST(gnn_prog_create(&prog, sizeof *m, NULL), GNN_ERR_ARG);
	CHECK_ST(gnn_prog_create(&prog, sizeof *m, &m), GNN_OK);
	CHECK_ST(gnn_prog_run_host(m, in, out), GNN_ERR_STATE);
	CHECK_MSG("no graph is bound");
	CHECK_ST(gnn_prog_bind(m, NULL), GNN_ERR_ARG);
	{
		gnn_graph *two[2] = {graph, graph};
		CHECK_ST(gnn_prog_bind_graphs(m, two, 2), GNN_ERR_ARG);
		CHECK_MSG("T_bind: the model takes 1 graph, got 2");
	}
	CHECK_ST(gnn_prog_load(m, tmppath("missing.safetensors")), GNN_ERR_IO);
	gnn_prog_destroy(m);

	/* a size the model was specialized for */
	bound[0] = -1;
	bound[4] = 11;
	CHECK_ST(gnn_prog_create(&prog, sizeof *m, &m), GNN_OK);
	CHECK_ST(gnn_prog_bind(m, graph), GNN_ERR_SHAPE);
	CHECK_MSG("compiled for 5 nodes, the graph has 3");
	gnn_prog_destroy(m);
	bound[0] = 0;
	bound[4] = -1;

	/* the fake CUDA device: device copies, staging, events.  It cannot
	 * capture graphs (its kernels are host code): forward falls back to
	 * plain launches, and without page-locked memory to pageable copies */
	prog.dev = &fake_cuda;
	CHECK_ST(session(NULL), GNN_OK);
	CHECK(fake_live == 0);
	fake_nopin = 1;
	CHECK_ST(session(NULL), GNN_OK);
	fake_nopin = 0;
	CHECK(fake_live == 0);
	/* the rest without graphs: a capture's fallback clears the error of
	 * the capture that failed, a call the failures below would count */
	setenv("GNN_CUDA_GRAPHS", "0", 1);
	check_oom("a cuda session", session, NULL);
	CHECK(fake_live == 0);
	CHECK(strcmp(gnn_prog_arch(&prog), "sm_90") == 0);
	failures();
	/* a kernel that fails to launch shows at the end of forward */
	CHECK_ST(gnn_prog_create(&prog, sizeof *m, &m), GNN_OK);
	CHECK_ST(gnn_prog_bind(m, graph), GNN_OK);
	launchfail = 1;
	CHECK_ST(gnn_prog_run_host(m, in, out), GNN_ERR_CUDA);
	CHECK_MSG("T: forward: fake failure");
	CHECK_ST(gnn_prog_run_host(m, in, out), GNN_OK);
	gnn_prog_destroy(m);
	CHECK(fake_live == 0);

	gnn_graph_destroy(graph);
	rmtmpdir();
	return summary();
}
