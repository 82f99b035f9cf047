/*
** check.c: opt-in checks of the values inside arrays.
**
** The readers check that a file is well formed, never what its numbers
** are: a NaN or an infinity is a valid float, and scanning every element
** of every input costs a pass over memory that most applications do not
** want to pay. gnn_check_finite is that pass, for callers (gnnrun's
** --check-finite) who would rather fail early with the position of the
** first bad feature than get NaN logits from a model with no clue where
** they came from.
**
** f16 and bf16 are checked on their bits (exponent all ones), so no
** conversion is needed; integer and bool arrays are finite by definition.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* whether element i of a float array of dtype t is finite; any other dtype is */
static int
finite(const void *p, gnn_dtype t, size_t i)
{
	uint16_t h;

	switch (t) {
	case GNN_F32:
		return isfinite(((const float *)p)[i]);
	case GNN_F64:
		return isfinite(((const double *)p)[i]);
	case GNN_F16:
		memcpy(&h, (const char *)p + 2 * i, 2);
		return (h & 0x7c00) != 0x7c00;
	case GNN_BF16:
		memcpy(&h, (const char *)p + 2 * i, 2);
		return (h & 0x7f80) != 0x7f80;
	default:
		return 1;
	}
}

/* "nan", "inf" or "-inf" for a non-finite element */
static const char *
kind(const void *p, gnn_dtype t, size_t i)
{
	uint16_t h;
	int nan, neg;

	switch (t) {
	case GNN_F32:
		nan = isnan(((const float *)p)[i]), neg = signbit(((const float *)p)[i]);
		break;
	case GNN_F64:
		nan = isnan(((const double *)p)[i]), neg = signbit(((const double *)p)[i]);
		break;
	default:
		memcpy(&h, (const char *)p + 2 * i, 2);
		nan = (h & (t == GNN_F16 ? 0x03ff : 0x007f)) != 0, neg = h >> 15;
		break;
	}
	return nan ? "nan" : neg ? "-inf" : "inf";
}

/* "[3, 17]": the multi-index of flat index i in a's shape */
static void
position(char *buf, size_t size, const gnn_array *a, size_t i)
{
	int64_t idx[GNN_MAX_RANK];
	size_t n;

	for (int k = a->rank - 1; k >= 0; k--) {
		idx[k] = (int64_t)(i % (size_t)a->shape[k]);
		i /= (size_t)a->shape[k];
	}
	n = (size_t)snprintf(buf, size, "[");
	for (int k = 0; k < a->rank && n < size; k++)
		n += (size_t)snprintf(buf + n, size - n, k ? ", %lld" : "%lld", (long long)idx[k]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

gnn_status
gnn_check_finite(const gnn_array *a, const char *what)
{
	char pos[256];
	size_t n, first = 0, bad = 0;
	gnn_status s;

	if (!what)
		what = "array";
	/* a malformed array would make the scan itself read out of bounds */
	if ((s = gnn_array_check(what, NULL, a)) != GNN_OK)
		return s;
	if (a->dtype != GNN_F32 && a->dtype != GNN_F64 && a->dtype != GNN_F16
	    && a->dtype != GNN_BF16)
		return GNN_OK;
	n = a->nbytes / gnn_dtype_size(a->dtype);
	/* count them all: "the first of 3" tells a stray value from a broken column */
	for (size_t i = 0; i < n; i++)
		if (!finite(a->data, a->dtype, i) && bad++ == 0)
			first = i;
	if (bad == 0)
		return GNN_OK;
	position(pos, sizeof pos, a, first);
	return gnn_fail(GNN_ERR_RANGE, "%s: element %s is %s (%zu of %zu elements are not finite)",
		what, pos, kind(a->data, a->dtype, first), bad, n);
}
