/*
 * Dtypes and value types.  Types are small structs passed by value; two
 * types are equal when every field is, which interning of dims makes an
 * integer comparison.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[NDType] = {
	[DNone] = {"none", 0},
	[DF32] = {"f32", 4},
	[DF64] = {"f64", 8},
	[DF16] = {"f16", 2},
	[DBF16] = {"bf16", 2},
	[DI32] = {"i32", 4},
	[DI64] = {"i64", 8},
	[DBool] = {"bool", 1},
};

const char *
dtypename(int dt)
{
	if (dt < 0 || dt >= NDType)
		die("bad dtype %d", dt);
	return dtypes[dt].name;
}

int
dtypefromname(const char *s)
{
	int i;

	for (i = 1; i < NDType; i++)
		if (strcmp(dtypes[i].name, s) == 0)
			return i;
	return DNone;
}

size_t
dtypesize(int dt)
{
	return dtypes[dt].size;
}

bool
dtypeisfloat(int dt)
{
	return dt == DF32 || dt == DF64 || dt == DF16 || dt == DBF16;
}

bool
dtypeisint(int dt)
{
	return dt == DI32 || dt == DI64;
}

Type
tensortype(int dtype, int rank, const Dim *dim)
{
	Type t = {.kind = TTensor, .dtype = dtype, .rank = rank};

	if (rank < 0 || rank > MaxRank)
		die("bad rank %d", rank);
	if (rank)
		memcpy(t.dim, dim, rank * sizeof(Dim));
	return t;
}

Type
graphtype(Dim nodes, Dim edges)
{
	return (Type){.kind = TGraph, .rank = 2, .dim = {nodes, edges}};
}

Type
batchgraphtype(Dim nodes, Dim edges, Dim graphs)
{
	return (Type){.kind = TGraph, .rank = 3, .dim = {nodes, edges, graphs}};
}

Type
relationtype(Dim srcnodes, Dim dstnodes, Dim edges)
{
	if (srcnodes == dstnodes)
		return graphtype(dstnodes, edges);
	return (Type){.kind = TGraph, .rank = 4, .dim = {dstnodes, edges, dimconst(1), srcnodes}};
}

bool
isrelation(Type t)
{
	return t.kind == TGraph && t.rank == 4;
}

Dim
graphsrcnodes(Type t)
{
	return isrelation(t) ? t.dim[3] : t.dim[0];
}

bool
typeeq(Type a, Type b)
{
	int i;

	if (a.kind != b.kind || a.dtype != b.dtype || a.rank != b.rank)
		return false;
	for (i = 0; i < a.rank; i++)
		if (a.dim[i] != b.dim[i])
			return false;
	return true;
}

int
snprinttype(char *buf, size_t n, const Mod *m, Type t)
{
	size_t len;
	int i;
	char dummy[1];

	if (!buf)
		buf = dummy, n = 0;
#define AT buf + (len < n ? len : n), (len < n ? n - len : 0)
	if (isrelation(t)) {
		len = snprintf(buf, n, "graph[");
		len += snprintdim(AT, m, t.dim[3]);
		len += snprintf(AT, " -> ");
		len += snprintdim(AT, m, t.dim[0]);
		len += snprintf(AT, ", ");
		len += snprintdim(AT, m, t.dim[1]);
		len += snprintf(AT, "]");
		return (int)len;
	}
	len = snprintf(buf, n, "%s[", t.kind == TGraph ? "graph" : dtypename(t.dtype));
	for (i = 0; i < t.rank; i++) {
		if (i)
			len += snprintf(AT, ", ");
		len += snprintdim(AT, m, t.dim[i]);
	}
	len += snprintf(AT, "]");
#undef AT
	return (int)len;
}

void
fprinttype(FILE *f, const Mod *m, Type t)
{
	char *s = typestr(NULL, m, t);

	fputs(s, f);
	free(s);
}

bool
typenumelok(Mod *m, Type t)
{
	Dim n = 1;
	bool ok = true;
	int i;

	if (t.kind != TTensor)
		return true;
	for (i = 0; i < t.rank && ok; i++)
		if (t.dim[i] != 0)
			n = dimmul(m, n, t.dim[i], &ok);
	return ok;
}

char *
typestr(Arena *a, const Mod *m, Type t)
{
	size_t n = (size_t)snprinttype(NULL, 0, m, t) + 1;
	char *s = a ? arena_alloc(a, n) : emalloc(n);

	snprinttype(s, n, m, t);
	return s;
}

char *
dimstr(Arena *a, const Mod *m, Dim d)
{
	size_t n = (size_t)snprintdim(NULL, 0, m, d) + 1;
	char *s = a ? arena_alloc(a, n) : emalloc(n);

	snprintdim(s, n, m, d);
	return s;
}

/* Scaling by powers of two is exact, and nearbyint rounds ties to even
 * in the default rounding mode, so the quantum of x's binade (clamped to
 * the subnormal one) gives the correctly rounded value in one step, with
 * no double rounding through float. */
double
round16(double x, int dt)
{
	int mant = dt == DBF16 ? 7 : 10, emin = dt == DBF16 ? -126 : -14, e;
	double max = dt == DBF16 ? ldexp(256 - 1, 127 - 7) : 65504, q;

	if (dt != DBF16 && dt != DF16)
		die("round16: %s is not a 16-bit float", dtypename(dt));
	if (!isfinite(x) || x == 0)
		return x;
	e = ilogb(x);
	if (e < emin)
		e = emin;
	q = ldexp(nearbyint(ldexp(x, mant - e)), e - mant);
	return fabs(q) > max ? copysign(INFINITY, x) : q;
}
