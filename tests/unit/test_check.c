/*
** test_check.c: gnn_check_finite, the opt-in scan for NaN and infinity:
** every float dtype (f16 and bf16 by their bits), the position of the
** first bad element in every rank, the count, integer arrays, empty and
** malformed arrays; it must allocate nothing, so it works when memory
** is exhausted.
*/
#include "rtcheck.h"   /* first: it sets _POSIX_C_SOURCE */

#include <math.h>

static gnn_array
arr(gnn_dtype t, int rank, const int64_t *shape, void *data)
{
	gnn_array a = {.dtype = t, .rank = rank, .data = data};
	size_t n = gnn_dtype_size(t);

	for (int i = 0; i < rank; i++)
		n *= (size_t)(a.shape[i] = shape[i]);
	a.nbytes = n;
	return a;
}

static void
test_floats(void)
{
	float f[2][3] = {{1, 2, 3}, {4, 5, 6}};
	double d[4] = {0, -0.0, 1e308, -1e308};
	gnn_array a;

	a = arr(GNN_F32, 2, (int64_t[]){2, 3}, f);
	CHECK_ST(gnn_check_finite(&a, "x"), GNN_OK);
	f[1][2] = NAN;
	CHECK_ST(gnn_check_finite(&a, "x"), GNN_ERR_RANGE);
	CHECK_MSG("x: element [1, 2] is nan (1 of 6 elements are not finite)");
	f[0][1] = INFINITY;
	CHECK_ST(gnn_check_finite(&a, "feat.npy"), GNN_ERR_RANGE);
	CHECK_MSG("feat.npy: element [0, 1] is inf (2 of 6 elements are not finite)");
	f[0][0] = -INFINITY;
	CHECK_ST(gnn_check_finite(&a, NULL), GNN_ERR_RANGE);
	CHECK_MSG("array: element [0, 0] is -inf (3 of 6 elements are not finite)");

	a = arr(GNN_F64, 1, (int64_t[]){4}, d);
	CHECK_ST(gnn_check_finite(&a, "d"), GNN_OK);
	d[3] = -NAN;
	CHECK_ST(gnn_check_finite(&a, "d"), GNN_ERR_RANGE);
	CHECK_MSG("d: element [3] is nan");

	/* rank 0: one element, at [] */
	a = arr(GNN_F64, 0, NULL, d + 3);
	CHECK_ST(gnn_check_finite(&a, "s"), GNN_ERR_RANGE);
	CHECK_MSG("s: element [] is nan (1 of 1 elements are not finite)");
}

static void
test_halves(void)
{
	/* f16: 1, 65504 (max), +inf, nan, -inf; bf16: 1, max, +inf, nan, -inf */
	uint16_t h[5] = {0x3c00, 0x7bff, 0x7c00, 0x7e01, 0xfc00};
	uint16_t b[5] = {0x3f80, 0x7f7f, 0x7f80, 0x7fc1, 0xff80};
	gnn_array a;

	a = arr(GNN_F16, 1, (int64_t[]){2}, h);
	CHECK_ST(gnn_check_finite(&a, "h"), GNN_OK);
	a = arr(GNN_F16, 1, (int64_t[]){5}, h);
	CHECK_ST(gnn_check_finite(&a, "h"), GNN_ERR_RANGE);
	CHECK_MSG("h: element [2] is inf (3 of 5 elements are not finite)");
	a = arr(GNN_F16, 1, (int64_t[]){1}, h + 3);
	CHECK_ST(gnn_check_finite(&a, "h"), GNN_ERR_RANGE);
	CHECK_MSG("h: element [0] is nan");
	a = arr(GNN_F16, 1, (int64_t[]){1}, h + 4);
	CHECK_ST(gnn_check_finite(&a, "h"), GNN_ERR_RANGE);
	CHECK_MSG("is -inf");

	a = arr(GNN_BF16, 1, (int64_t[]){2}, b);
	CHECK_ST(gnn_check_finite(&a, "b"), GNN_OK);
	a = arr(GNN_BF16, 2, (int64_t[]){1, 5}, b);
	CHECK_ST(gnn_check_finite(&a, "b"), GNN_ERR_RANGE);
	CHECK_MSG("b: element [0, 2] is inf (3 of 5 elements are not finite)");
	a = arr(GNN_BF16, 1, (int64_t[]){1}, b + 3);
	CHECK_ST(gnn_check_finite(&a, "b"), GNN_ERR_RANGE);
	CHECK_MSG("is nan");
	a = arr(GNN_BF16, 1, (int64_t[]){1}, b + 4);
	CHECK_ST(gnn_check_finite(&a, "b"), GNN_ERR_RANGE);
	CHECK_MSG("is -inf");
}

static void
test_positions(void)
{
	static float f[2 * 3 * 4 * 5 * 1 * 2 * 1 * 2];
	int64_t shape[8] = {2, 3, 4, 5, 1, 2, 1, 2};
	gnn_array a = arr(GNN_F32, 8, shape, f);
	/* [1, 2, 3, 4, 0, 1, 0, 1] in C order */
	size_t i = ((((((1 * 3 + 2) * 4 + 3) * 5 + 4) * 1 + 0) * 2 + 1) * 1 + 0) * 2 + 1;

	f[i] = NAN;
	CHECK_ST(gnn_check_finite(&a, "r8"), GNN_ERR_RANGE);
	CHECK_MSG("r8: element [1, 2, 3, 4, 0, 1, 0, 1] is nan (1 of 480 elements are not finite)");
	f[i] = 0;
	f[0] = INFINITY;
	CHECK_ST(gnn_check_finite(&a, "r8"), GNN_ERR_RANGE);
	CHECK_MSG("r8: element [0, 0, 0, 0, 0, 0, 0, 0] is inf");
}

static void
test_others(void)
{
	int64_t i[3] = {-1, 0, INT64_MAX};
	uint8_t u[2] = {0xff, 0x7f};
	float f[1] = {NAN};
	gnn_array a;

	a = arr(GNN_I64, 1, (int64_t[]){3}, i);
	CHECK_ST(gnn_check_finite(&a, "i"), GNN_OK);
	a = arr(GNN_U8, 1, (int64_t[]){2}, u);
	CHECK_ST(gnn_check_finite(&a, "u"), GNN_OK);
	a = arr(GNN_BOOL, 1, (int64_t[]){2}, u);
	CHECK_ST(gnn_check_finite(&a, "b"), GNN_OK);
	/* empty arrays, with and without data */
	a = arr(GNN_F32, 2, (int64_t[]){0, 1433}, NULL);
	CHECK_ST(gnn_check_finite(&a, "e"), GNN_OK);
	a = arr(GNN_F32, 2, (int64_t[]){1433, 0}, f);
	CHECK_ST(gnn_check_finite(&a, "e"), GNN_OK);

	/* malformed arrays are refused before the scan could overrun them */
	CHECK_ST(gnn_check_finite(NULL, "n"), GNN_ERR_ARG);
	CHECK_MSG("n: array is NULL");
	a = arr(GNN_F32, 1, (int64_t[]){1}, f);
	a.nbytes = 400;
	CHECK_ST(gnn_check_finite(&a, "l"), GNN_ERR_ARG);
	CHECK_MSG("l: nbytes is 400 but the shape needs 4");
	a = arr(GNN_F32, 1, (int64_t[]){1}, NULL);
	CHECK_ST(gnn_check_finite(&a, "d"), GNN_ERR_ARG);
	CHECK_MSG("d: data is NULL");
	a = arr(GNN_F32, 1, (int64_t[]){1}, f);
	a.rank = 9;
	CHECK_ST(gnn_check_finite(&a, "r"), GNN_ERR_SHAPE);
	a = arr(GNN_F32, 1, (int64_t[]){1}, f);
	a.shape[0] = -1;
	CHECK_ST(gnn_check_finite(&a, "s"), GNN_ERR_SHAPE);
	a = arr(GNN_F32, 1, (int64_t[]){1}, f);
	a.dtype = (gnn_dtype)0;
	CHECK_ST(gnn_check_finite(&a, "t"), GNN_ERR_DTYPE);

	/* numel of what it cannot read */
	CHECK(gnn_array_numel(NULL) == 0);
	a.rank = 9;
	CHECK(gnn_array_numel(&a) == 0);
	a.rank = -1;
	CHECK(gnn_array_numel(&a) == 0);
}

/* no allocation at all: it must work with an allocator that always fails */
static void
test_noalloc(void)
{
	TestAlloc ta = {.failat = 0};
	float f[3] = {0, NAN, 1};
	gnn_array a = arr(GNN_F32, 1, (int64_t[]){3}, f);

	gnn_set_allocator(testalloc, &ta);
	CHECK_ST(gnn_check_finite(&a, "x"), GNN_ERR_RANGE);
	CHECK_MSG("x: element [1] is nan");
	gnn_set_allocator(NULL, NULL);
	CHECK(ta.allocs == 0 && ta.live == 0);
}

int
main(void)
{
	test_floats();
	test_halves();
	test_positions();
	test_others();
	test_noalloc();
	return summary();
}
