/*
 * Bad input through the C API, as an application meets it: NULL for
 * every pointer of every public entry point (the runtime's and the
 * generated model's), broken graphs and files, NaN, allocation failure at
 * every allocation of bind and load_weights, and graphs with no nodes, no
 * edges or isolated nodes.  Every failing call must return a status with
 * a message and leave the model usable: after each one, a valid forward
 * succeeds and gives the reference result bit for bit.  The test runs
 * under valgrind, so a leak or a bad access fails it too.
 *
 *	badapi DIR WEIGHTS   (DIR: what badfiles.py wrote)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn.h"

enum { F = 1433, C = 7 };

static int nfail;
static GCN *m;
static gnn_graph *g7;
static float *x, *ref, *out;
static const char *dir;

static const char *
at(const char *name)
{
	static char buf[4][4096];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* what: the status and the message; a mismatch with want is a failure */
static void
expect(const char *what, gnn_status s, gnn_status want)
{
	printf("%s: %s%s%s\n", what, gnn_status_name(s), s ? ": " : "", s ? gnn_errmsg() : "");
	if (s != want) {
		printf("FAIL %s: want %s\n", what, gnn_status_name(want));
		nfail++;
	}
}

static void
truth(const char *what, int ok)
{
	if (!ok) {
		printf("FAIL %s\n", what);
		nfail++;
	}
}

/* the model still works: a valid forward gives the reference bits */
static void
again(const char *after)
{
	gnn_status s = GCN_forward_host(m, x, out);

	if (s != GNN_OK || memcmp(out, ref, 7 * C * sizeof *out) != 0) {
		printf("FAIL after %s: forward %s (%s)\n", after, gnn_status_name(s), s ? gnn_errmsg() : "other bits");
		nfail++;
	}
}

/* an allocator that fails from its failat-th call on (lua_Alloc's contract) */
static long ncalls, failat = -1;

static void *
failing(void *ud, void *p, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(p);
		return NULL;
	}
	if (failat >= 0 && ncalls++ >= failat)
		return NULL;
	return realloc(p, nsize);
}

static void
runtime_nulls(void)
{
	gnn_array a = {0}, v;
	gnn_safetensors *st = NULL;
	gnn_graph *g = NULL, *o = NULL;
	const char *names[1] = {NULL};
	int64_t idx[2] = {0, 1}, rp[4], ord[2];
	float deg[7];
	void *dst[4] = {0};

	expect("gnn_npy_read(NULL path)", gnn_npy_read(NULL, &a), GNN_ERR_ARG);
	expect("gnn_npy_read(NULL out)", gnn_npy_read(at("x.npy"), NULL), GNN_ERR_ARG);
	expect("gnn_npy_write(NULL path)", gnn_npy_write(NULL, &a), GNN_ERR_ARG);
	expect("gnn_npy_write(NULL array)", gnn_npy_write(at("new.npy"), NULL), GNN_ERR_ARG);
	expect("gnn_st_open(NULL path)", gnn_st_open(NULL, &st), GNN_ERR_ARG);
	expect("gnn_st_open(NULL out)", gnn_st_open(at("w.safetensors"), NULL), GNN_ERR_ARG);
	gnn_st_close(NULL);
	truth("gnn_st_count(NULL)", gnn_st_count(NULL) == 0);
	truth("gnn_st_name(NULL)", gnn_st_name(NULL, 0) == NULL);
	truth("gnn_st_find(NULL)", gnn_st_find(NULL, "conv1.bias") == -1);
	truth("gnn_st_metadata(NULL)", gnn_st_metadata(NULL, "k") == NULL);
	expect("gnn_st_get(NULL st)", gnn_st_get(NULL, 0, &v), GNN_ERR_ARG);
	expect("gnn_st_open", gnn_st_open(at("w.safetensors"), &st), GNN_OK);
	truth("gnn_st_find(NULL name)", gnn_st_find(st, NULL) == -1);
	truth("gnn_st_metadata(NULL key)", gnn_st_metadata(st, NULL) == NULL);
	expect("gnn_st_get(NULL view)", gnn_st_get(st, 0, NULL), GNN_ERR_ARG);
	gnn_st_close(st);
	expect("gnn_st_write(NULL path)", gnn_st_write(NULL, names, &a, 1), GNN_ERR_ARG);
	expect("gnn_st_write(NULL names)", gnn_st_write(at("new.safetensors"), NULL, &a, 1), GNN_ERR_ARG);
	expect("gnn_st_write(NULL arrays)", gnn_st_write(at("new.safetensors"), names, NULL, 1), GNN_ERR_ARG);
	expect("gnn_st_write(NULL name)", gnn_st_write(at("new.safetensors"), names, &a, 1), GNN_ERR_ARG);

	expect("gnn_graph_from_edge_index(NULL g)", gnn_graph_from_edge_index(NULL, idx, GNN_I64, 1, 2), GNN_ERR_ARG);
	expect("gnn_graph_from_edge_index(NULL edge_index)", gnn_graph_from_edge_index(&g, NULL, GNN_I64, 1, 2), GNN_ERR_ARG);
	truth("failed graph is NULL", g == NULL);
	expect("gnn_graph_set_edge_weight(NULL g)", gnn_graph_set_edge_weight(NULL, deg), GNN_ERR_ARG);
	expect("gnn_graph_set_edge_weight(NULL weight)", gnn_graph_set_edge_weight(g7, NULL), GNN_ERR_ARG);
	expect("gnn_graph_set_batch(NULL g)", gnn_graph_set_batch(NULL, idx, GNN_I64, 1), GNN_ERR_ARG);
	expect("gnn_graph_set_batch(NULL batch)", gnn_graph_set_batch(g7, NULL, GNN_I64, 1), GNN_ERR_ARG);
	gnn_graph_destroy(NULL);
	truth("graph getters of NULL", gnn_graph_num_nodes(NULL) == 0 && gnn_graph_num_edges(NULL) == 0
		&& gnn_graph_num_graphs(NULL) == 0 && !gnn_graph_src(NULL) && !gnn_graph_dst(NULL)
		&& !gnn_graph_weight(NULL) && !gnn_graph_batch(NULL) && !gnn_graph_rowptr(NULL)
		&& !gnn_graph_perm(NULL));
	expect("gnn_graph_add_self_loops(NULL g)", gnn_graph_add_self_loops(NULL, &o), GNN_ERR_ARG);
	expect("gnn_graph_add_self_loops(NULL out)", gnn_graph_add_self_loops(g7, NULL), GNN_ERR_ARG);
	expect("gnn_graph_remove_self_loops(NULL g)", gnn_graph_remove_self_loops(NULL, &o), GNN_ERR_ARG);
	expect("gnn_graph_remove_self_loops(NULL out)", gnn_graph_remove_self_loops(g7, NULL), GNN_ERR_ARG);
	expect("gnn_graph_add_remaining_self_loops(NULL g)", gnn_graph_add_remaining_self_loops(NULL, 1, &o), GNN_ERR_ARG);
	expect("gnn_graph_add_remaining_self_loops(NULL out)", gnn_graph_add_remaining_self_loops(g7, 1, NULL), GNN_ERR_ARG);
	gnn_graph_in_degree(NULL, deg);
	gnn_graph_in_degree(g7, NULL);
	gnn_graph_out_degree(NULL, deg);
	gnn_graph_edge_weight(NULL, deg);
	gnn_graph_gcn_norm(g7, NULL);
	expect("gnn_segment_plan(NULL index)", gnn_segment_plan(NULL, 2, 3, rp, ord), GNN_ERR_ARG);
	expect("gnn_segment_plan(NULL rowptr)", gnn_segment_plan(idx, 2, 3, NULL, ord), GNN_ERR_ARG);
	expect("gnn_segment_plan(NULL order)", gnn_segment_plan(idx, 2, 3, rp, NULL), GNN_ERR_ARG);

	expect("gnn_load_params(NULL path)", gnn_load_params(NULL, GCN_desc.params, 4, dst), GNN_ERR_ARG);
	expect("gnn_load_params(NULL params)", gnn_load_params(at("w.safetensors"), NULL, 4, dst), GNN_ERR_ARG);
	expect("gnn_load_params(NULL dst)", gnn_load_params(at("w.safetensors"), GCN_desc.params, 4, NULL), GNN_ERR_ARG);
	expect("gnn_load_params(NULL dst[0])", gnn_load_params(at("w.safetensors"), GCN_desc.params, 4, dst), GNN_ERR_ARG);
	expect("gnn_check_finite(NULL array)", gnn_check_finite(NULL, "x"), GNN_ERR_ARG);
	gnn_array_free(NULL);
	truth("gnn_array_numel(NULL)", gnn_array_numel(NULL) == 0);
	truth("gnn_status_name(99)", strcmp(gnn_status_name((gnn_status)99), "GNN_ERR_UNKNOWN") == 0);
	truth("gnn_dtype_name(0)", strcmp(gnn_dtype_name((gnn_dtype)0), "?") == 0 && gnn_dtype_size((gnn_dtype)0) == 0);
	gnn_free(NULL, 0);
	truth("gnn_malloc(0)", gnn_malloc(0) == NULL);
	again("the runtime's NULL arguments");
}

static void
model_nulls(void)
{
	const void *in[1] = {x};
	void *outs[1] = {out};
	int64_t shape[2];

	expect("GCN_create(NULL)", GCN_create(NULL), GNN_ERR_ARG);
	expect("GCN_load_weights(NULL model)", GCN_load_weights(NULL, at("w.safetensors")), GNN_ERR_ARG);
	again("GCN_load_weights(NULL model)");
	expect("GCN_load_weights(NULL path)", GCN_load_weights(m, NULL), GNN_ERR_ARG);
	again("GCN_load_weights(NULL path)");
	expect("GCN_bind(NULL model)", GCN_bind(NULL, g7), GNN_ERR_ARG);
	again("GCN_bind(NULL model)");
	expect("GCN_bind(NULL graph)", GCN_bind(m, NULL), GNN_ERR_ARG);
	again("GCN_bind(NULL graph)");
	expect("GCN_forward(NULL model)", GCN_forward(NULL, x, out), GNN_ERR_ARG);
	expect("GCN_forward(NULL x)", GCN_forward(m, NULL, out), GNN_ERR_ARG);
	again("GCN_forward(NULL x)");
	expect("GCN_forward(NULL out)", GCN_forward(m, x, NULL), GNN_ERR_ARG);
	again("GCN_forward(NULL out)");
	expect("GCN_forward_host(NULL model)", GCN_forward_host(NULL, x, out), GNN_ERR_ARG);
	expect("GCN_forward_host(NULL x)", GCN_forward_host(m, NULL, out), GNN_ERR_ARG);
	expect("GCN_forward_host(NULL out)", GCN_forward_host(m, x, NULL), GNN_ERR_ARG);
	again("GCN_forward_host(NULL out)");
	expect("GCN_synchronize(NULL)", GCN_synchronize(NULL), GNN_ERR_ARG);
	GCN_destroy(NULL);

	/* the descriptor, as generic tools drive a model */
	expect("desc.create(NULL)", GCN_desc.create(NULL), GNN_ERR_ARG);
	expect("desc.load_weights(NULL path)", GCN_desc.load_weights(m, NULL), GNN_ERR_ARG);
	expect("desc.bind(NULL model)", GCN_desc.bind(NULL, g7), GNN_ERR_ARG);
	expect("desc.output_shape(NULL model)", GCN_desc.output_shape(NULL, 0, shape), GNN_ERR_ARG);
	expect("desc.output_shape(NULL shape)", GCN_desc.output_shape(m, 0, NULL), GNN_ERR_ARG);
	expect("desc.output_shape(no output 1)", GCN_desc.output_shape(m, 1, shape), GNN_ERR_ARG);
	expect("desc.forward(NULL inputs)", GCN_desc.forward(m, NULL, outs), GNN_ERR_ARG);
	expect("desc.forward(NULL outputs)", GCN_desc.forward(m, in, NULL), GNN_ERR_ARG);
	expect("desc.forward_host(NULL inputs)", GCN_desc.forward_host(m, NULL, outs), GNN_ERR_ARG);
	GCN_desc.destroy(NULL);

	/* an input array against its declaration under the bound graph (7 nodes) */
	{
		gnn_array a = {.dtype = GNN_F32, .rank = 2, .shape = {7, F}, .data = x};
		GCN *fresh = NULL;

		expect("check_input(x)", gnn_prog_check_input(m, 0, &a), GNN_OK);
		expect("check_input(NULL model)", gnn_prog_check_input(NULL, 0, &a), GNN_ERR_ARG);
		expect("check_input(NULL array)", gnn_prog_check_input(m, 0, NULL), GNN_ERR_ARG);
		expect("check_input(no input 1)", gnn_prog_check_input(m, 1, &a), GNN_ERR_ARG);
		a.dtype = GNN_F64;
		expect("check_input(f64)", gnn_prog_check_input(m, 0, &a), GNN_ERR_DTYPE);
		a.dtype = GNN_F32;
		a.shape[0] = 8;
		expect("check_input(8 rows)", gnn_prog_check_input(m, 0, &a), GNN_ERR_SHAPE);
		a.shape[0] = 7;
		a.shape[1] = F + 1;
		expect("check_input(wide)", gnn_prog_check_input(m, 0, &a), GNN_ERR_SHAPE);
		a.shape[1] = F;
		a.rank = 99;
		expect("check_input(rank 99)", gnn_prog_check_input(m, 0, &a), GNN_ERR_SHAPE);
		a.rank = 2;
		if (GCN_create(&fresh) == GNN_OK) {
			expect("check_input(unbound)", gnn_prog_check_input(fresh, 0, &a), GNN_ERR_STATE);
			GCN_destroy(fresh);
		}
		again("check_input");
	}
	{
		float back[2] = {0, 0};

		expect("from_device(NULL model)", gnn_prog_from_device(NULL, back, x, sizeof back), GNN_ERR_ARG);
		expect("from_device(NULL dst)", gnn_prog_from_device(m, NULL, x, sizeof back), GNN_ERR_ARG);
		expect("from_device(x)", gnn_prog_from_device(m, back, x, sizeof back), GNN_OK);
		truth("from_device(x) copies", back[0] == x[0] && back[1] == x[1]);
	}
	again("the model's NULL arguments");
}

static void
bad_graphs(void)
{
	gnn_array a;
	gnn_graph *g = NULL;
	int64_t ei[2][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}};

	/* the files of badfiles.py, read and handed over as they are */
	expect("read ei-big.npy", gnn_npy_read(at("ei-big.npy"), &a), GNN_OK);
	expect("graph from ei-big (index >= N)", gnn_graph_from_edge_index(&g, a.data, a.dtype, a.shape[1], 7), GNN_ERR_RANGE);
	gnn_array_free(&a);
	expect("read ei-neg.npy", gnn_npy_read(at("ei-neg.npy"), &a), GNN_OK);
	expect("graph from ei-neg (negative index)", gnn_graph_from_edge_index(&g, a.data, a.dtype, a.shape[1], 7), GNN_ERR_RANGE);
	gnn_array_free(&a);
	expect("read ei-f32.npy", gnn_npy_read(at("ei-f32.npy"), &a), GNN_OK);
	expect("graph from ei-f32 (float edge_index)", gnn_graph_from_edge_index(&g, a.data, a.dtype, a.shape[1], 7), GNN_ERR_DTYPE);
	gnn_array_free(&a);
	expect("read ei-trunc.npy", gnn_npy_read(at("ei-trunc.npy"), &a), GNN_ERR_FORMAT);
	truth("a failed read leaves an empty array", a.data == NULL && a.nbytes == 0);
	expect("graph with -1 edges", gnn_graph_from_edge_index(&g, ei, GNN_I64, -1, 4), GNN_ERR_ARG);
	expect("graph with -1 nodes", gnn_graph_from_edge_index(&g, ei, GNN_I64, 4, -1), GNN_ERR_ARG);
	expect("graph with bad dtype", gnn_graph_from_edge_index(&g, ei, (gnn_dtype)99, 4, 4), GNN_ERR_DTYPE);
	expect("batch out of range", gnn_graph_set_batch(g7, (int64_t[7]){0, 0, 0, 1, 1, 1, 5}, GNN_I64, 2), GNN_ERR_RANGE);
	truth("failed graphs are NULL", g == NULL);
	again("bad graphs");
}

static void
bad_files(void)
{
	static const char *const weights[] = {
		"w-trunc.safetensors", "w-hlen.safetensors", "w-lie.safetensors", "w-dup.safetensors",
		"w-missing.safetensors", "w-extra.safetensors", "w-shape.safetensors",
		"w-dtype.safetensors", "nothere.safetensors", "g",
	};
	static const gnn_status want[] = {
		GNN_ERR_FORMAT, GNN_ERR_FORMAT, GNN_ERR_FORMAT, GNN_ERR_FORMAT,
		GNN_ERR_FORMAT, GNN_ERR_FORMAT, GNN_ERR_SHAPE,
		GNN_ERR_DTYPE, GNN_ERR_IO, GNN_ERR_IO,
	};
	static const char *const inputs[] = {"x-trunc.npy", "x-lie.npy", "x-hlen.npy", "nothere.npy"};
	char what[256];
	gnn_array a;

	for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++) {
		snprintf(what, sizeof what, "load %s", weights[i]);
		expect(what, GCN_load_weights(m, at(weights[i])), want[i]);
		again(what);   /* the previous weights stayed */
	}
	for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		snprintf(what, sizeof what, "read %s", inputs[i]);
		expect(what, gnn_npy_read(at(inputs[i]), &a), i < 3 ? GNN_ERR_FORMAT : GNN_ERR_IO);
	}
	/* dtype and shape are the caller's to check: the file is valid */
	expect("read x-f16.npy", gnn_npy_read(at("x-f16.npy"), &a), GNN_OK);
	printf("x-f16.npy holds %s [%lld, %lld]\n", gnn_dtype_name(a.dtype), (long long)a.shape[0], (long long)a.shape[1]);
	gnn_array_free(&a);
	again("bad files");
}

static void
nonfinite(void)
{
	gnn_array a;
	gnn_safetensors *st;
	uint16_t h[6] = {0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x7e00, 0xfc00};   /* f16 1, nan, -inf */
	uint16_t b[2] = {0x3f80, 0xff80};                                     /* bf16 1, -inf */
	int64_t i[3] = {1, 2, 3};
	int k;

	expect("read x-nan.npy", gnn_npy_read(at("x-nan.npy"), &a), GNN_OK);
	expect("check_finite x-nan", gnn_check_finite(&a, "x"), GNN_ERR_RANGE);
	gnn_array_free(&a);
	expect("read x-inf.npy", gnn_npy_read(at("x-inf.npy"), &a), GNN_OK);
	expect("check_finite x-inf", gnn_check_finite(&a, "x"), GNN_ERR_RANGE);
	gnn_array_free(&a);
	expect("read x.npy", gnn_npy_read(at("x.npy"), &a), GNN_OK);
	expect("check_finite x", gnn_check_finite(&a, "x"), GNN_OK);
	gnn_array_free(&a);
	expect("open w-nan", gnn_st_open(at("w-nan.safetensors"), &st), GNN_OK);
	k = gnn_st_find(st, "conv1.bias");
	expect("get conv1.bias", gnn_st_get(st, k, &a), GNN_OK);
	expect("check_finite conv1.bias", gnn_check_finite(&a, "conv1.bias"), GNN_ERR_RANGE);
	gnn_st_close(st);
	a = (gnn_array){.dtype = GNN_F16, .rank = 2, .shape = {3, 2}, .data = h, .nbytes = sizeof h};
	expect("check_finite f16", gnn_check_finite(&a, "h"), GNN_ERR_RANGE);
	a = (gnn_array){.dtype = GNN_BF16, .rank = 1, .shape = {2}, .data = b, .nbytes = sizeof b};
	expect("check_finite bf16", gnn_check_finite(&a, "h"), GNN_ERR_RANGE);
	a = (gnn_array){.dtype = GNN_I64, .rank = 1, .shape = {3}, .data = i, .nbytes = sizeof i};
	expect("check_finite i64", gnn_check_finite(&a, "i"), GNN_OK);
	a.nbytes = 8;
	expect("check_finite lying nbytes", gnn_check_finite(&a, "i"), GNN_ERR_ARG);
	again("non-finite checks");
}

/* allocation failure at each allocation of bind, then of load_weights */
static void
oom(void)
{
	gnn_status s;
	int fails = 0;

	for (failat = 0;; failat++) {
		ncalls = 0;
		gnn_set_allocator(failing, NULL);
		s = GCN_bind(m, g7);
		gnn_set_allocator(NULL, NULL);
		if (s == GNN_OK)
			break;
		fails++;
		truth("bind fails with GNN_ERR_MEM", s == GNN_ERR_MEM);
		truth("a failed bind leaves no graph bound", GCN_forward_host(m, x, out) == GNN_ERR_STATE);
		truth("bind again", GCN_bind(m, g7) == GNN_OK);
		again("a bind out of memory");
	}
	printf("bind: failed cleanly at each of its %d allocations\n", fails);
	again("bind after the out-of-memory runs");
	fails = 0;
	for (failat = 0;; failat++) {
		ncalls = 0;
		gnn_set_allocator(failing, NULL);
		s = GCN_load_weights(m, at("w.safetensors"));
		gnn_set_allocator(NULL, NULL);
		if (s == GNN_OK)
			break;
		fails++;
		truth("load_weights fails with GNN_ERR_MEM", s == GNN_ERR_MEM);
		again("a load_weights out of memory");
	}
	printf("load_weights: failed cleanly at each of its %d allocations\n", fails);
	failat = -1;
	again("load_weights after the out-of-memory runs");
}

/* bind and forward, then the output's shape from the descriptor */
static void
run(const char *what, gnn_graph *g, const float *xin, float *o, int64_t n)
{
	int64_t shape[2] = {-1, -1};
	char buf[256];

	snprintf(buf, sizeof buf, "%s: bind", what);
	expect(buf, GCN_bind(m, g), GNN_OK);
	snprintf(buf, sizeof buf, "%s: output shape", what);
	expect(buf, GCN_desc.output_shape(m, 0, shape), GNN_OK);
	printf("%s: output [%lld, %lld]\n", what, (long long)shape[0], (long long)shape[1]);
	truth(what, shape[0] == n && shape[1] == C);
	snprintf(buf, sizeof buf, "%s: forward", what);
	expect(buf, GCN_forward_host(m, xin, o), GNN_OK);
}

static void
empty_graphs(void)
{
	gnn_graph *g0, *g5, *g1;
	float o5[5 * C], o1[C];
	int same = 1, finite = 1;

	/* N = 0, E = 0: no arrays at all are needed */
	expect("graph N=0 E=0", gnn_graph_from_edge_index(&g0, NULL, GNN_I64, 0, 0), GNN_OK);
	run("N=0 E=0", g0, NULL, NULL, 0);
	expect("N=0 E=0: forward with buffers", GCN_forward_host(m, x, out), GNN_OK);
	/* E = 0: every node isolated; each row is that node alone */
	expect("graph N=5 E=0", gnn_graph_from_edge_index(&g5, NULL, GNN_I32, 0, 5), GNN_OK);
	run("N=5 E=0", g5, x, o5, 5);
	expect("graph N=1 E=0", gnn_graph_from_edge_index(&g1, NULL, GNN_I64, 0, 1), GNN_OK);
	for (int i = 0; i < 5; i++) {
		run("N=1 E=0", g1, x + (size_t)i * F, o1, 1);
		same &= memcmp(o1, o5 + i * C, sizeof o1) == 0;
	}
	for (int i = 0; i < 5 * C; i++)
		finite &= isfinite(o5[i]) != 0;
	printf("E=0 rows finite: %s; each row as its node alone: %s\n", finite ? "yes" : "no", same ? "yes" : "no");
	truth("E=0 rows", same && finite);
	/* node 6 of the 7-node graph is isolated: its row is that of node 6 alone */
	run("isolated node 6 alone", g1, x + 6 * F, o1, 1);
	printf("isolated node: %s\n", memcmp(o1, ref + 6 * C, sizeof o1) == 0 ? "same row" : "other row");
	truth("isolated node", memcmp(o1, ref + 6 * C, sizeof o1) == 0);
	/* while a small graph is bound, the 7-node input buffers are fine */
	expect("rebind the 7-node graph", GCN_bind(m, g7), GNN_OK);
	again("the empty graphs");
	gnn_graph_destroy(g0);
	gnn_graph_destroy(g5);
	gnn_graph_destroy(g1);
}

int
main(int argc, char **argv)
{
	gnn_array xa, ei;

	if (argc != 3) {
		fprintf(stderr, "usage: badapi DIR WEIGHTS\n");
		return 2;
	}
	dir = argv[1];
	gnn_check(gnn_npy_read(at("x.npy"), &xa));
	gnn_check(gnn_npy_read(at("ei.npy"), &ei));
	if (xa.dtype != GNN_F32 || xa.shape[0] != 7 || xa.shape[1] != F || ei.dtype != GNN_I64)
		return 2;
	x = xa.data;
	ref = calloc(7 * C, sizeof *ref);
	out = calloc(7 * C, sizeof *out);
	gnn_check(gnn_graph_from_edge_index(&g7, ei.data, GNN_I64, ei.shape[1], 7));
	gnn_check(GCN_create(&m));
	gnn_check(GCN_load_weights(m, argv[2]));
	gnn_check(GCN_bind(m, g7));
	gnn_check(GCN_forward_host(m, x, ref));

	runtime_nulls();
	model_nulls();
	bad_graphs();
	bad_files();
	nonfinite();
	oom();
	empty_graphs();

	GCN_destroy(m);
	gnn_graph_destroy(g7);
	gnn_array_free(&xa);
	gnn_array_free(&ei);
	free(ref);
	free(out);
	printf("failures: %d\n", nfail);
	return nfail != 0;
}
