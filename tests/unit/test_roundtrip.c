/*
 * Unit tests of the textual IR that text files cannot express: modules
 * built with the builder (values without names, duplicate and odd name
 * hints), exact round trips of every float bit pattern class, every
 * string byte and the int64 extremes, the verifier on deliberately
 * broken functions, and a mutation smoke test of the parser (run it
 * under ASan).  Prints FAIL lines and exits 1 on failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"

static int failures;

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
		failures++; \
	} \
} while (0)

static char *
printed(Mod *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	printmod(f, m);
	fclose(f);
	return buf;
}

/* Run fn with stderr sent to a buffer; returns what it wrote.  A
 * sanitizer report inside would land there too, so the test only exits
 * 1: rerun with ASAN_OPTIONS=log_path=/tmp/asan to read it. */
static char *
capture(bool (*fn)(void *), void *arg, bool *res)
{
	FILE *tmp = tmpfile();
	char *buf;
	long n;
	int saved;

	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	*res = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = ftell(tmp);
	buf = calloc(1, n + 1);
	rewind(tmp);
	if (fread(buf, 1, n, tmp) != (size_t)n)
		buf[0] = 0;
	fclose(tmp);
	return buf;
}

/* print -> parse -> print must be the identity on the text. */
static Mod *
roundtrip(Mod *m, const char *what)
{
	char *a = printed(m), *b;
	Mod *p = parseir(what, a, strlen(a));

	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "%s", a);
		free(a);
		return NULL;
	}
	CHECK(verifymod(p, NULL));
	b = printed(p);
	CHECK(strcmp(a, b) == 0);
	if (strcmp(a, b) != 0)
		fprintf(stderr, "--- first\n%s--- second\n%s", a, b);
	free(a);
	free(b);
	return p;
}

static const Loc noloc;

static void
testnames(void)
{
	Mod *m = newmod(), *p;
	Fn *fn;
	Dim d[2];
	Type t;
	Ref x, r;
	char *s;
	static const char *hint[] = {
		NULL, "h", "h", NULL, "h.1", "h", "0", "a b", "", "conv1.x", "h",
	};
	const char *want =
		"sym N\n"
		"\n"
		"func @names(%x: f32[N, 4], %x.1: f32[N, 4]) -> f32[N, 4] {\n"
		"\t%0 =f32[N, 4] relu %x\n"
		"\t%h =f32[N, 4] relu %0\n"
		"\t%h.1 =f32[N, 4] relu %h\n"
		"\t%1 =f32[N, 4] relu %h.1\n"
		"\t%h.1.1 =f32[N, 4] relu %1\n"
		"\t%h.2 =f32[N, 4] relu %h.1.1\n"
		"\t%0.1 =f32[N, 4] relu %h.2\n"
		"\t%a_b =f32[N, 4] relu %0.1\n"
		"\t%2 =f32[N, 4] relu %a_b\n"
		"\t%conv1.x =f32[N, 4] relu %2\n"
		"\t%h.3 =f32[N, 4] relu %conv1.x\n"
		"\tret %h.3\n"
		"}\n";
	size_t k;

	d[0] = dimsym(m, symadd(m, "N", false));
	d[1] = 4;
	t = tensortype(DF32, 2, d);
	fn = newfn(m, "names", noloc);
	x = addarg(fn, "x", t);
	addarg(fn, "x", t);
	r = x;
	for (k = 0; k < sizeof hint / sizeof *hint; k++)
		r = emit(fn, Orelu, t, &r, 1, NULL, 0, hint[k], noloc);
	addret(fn, r);
	CHECK(verifymod(m, NULL));
	s = printed(m);
	CHECK(strcmp(s, want) == 0);
	if (strcmp(s, want) != 0)
		fprintf(stderr, "got:\n%swant:\n%s", s, want);
	free(s);
	p = roundtrip(m, "names");
	freemod(p);
	freemod(m);
}

static uint64_t rng = 88172645463325252u;

static uint64_t
xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
testattrs(void)
{
	enum { NF = 400 };
	Mod *m = newmod(), *p;
	Fn *fn;
	Type t = tensortype(DF32, 0, NULL);
	Attr a[3];
	double f[NF];
	char str[256];
	uint64_t u;
	int k, j;
	const Ins *in;

	fn = newfn(m, "attrs", noloc);
	f[0] = 0.1, f[1] = 1e-16, f[2] = 2.0, f[3] = -INFINITY, f[4] = INFINITY;
	f[5] = NAN, f[6] = -0.0, f[7] = 5e-324, f[8] = 1.7976931348623157e308;
	f[9] = 0.30000000000000004, f[10] = 1e16, f[11] = 123456789.0;
	for (k = 12; k < NF; k++) {
		u = xorshift();
		memcpy(&f[k], &u, sizeof u);
		if (k % 3 == 0)
			f[k] = (double)(int64_t)(u >> 20);  /* integral values */
	}
	for (k = 0; k < NF; k++) {
		a[0] = mkattrfloat(m->arena, "value", f[k]);
		emit(fn, Oconst, t, NULL, 0, a, 1, NULL, noloc);
	}
	/* every byte but NUL, in a param name */
	for (k = 1; k < 256; k++)
		str[k - 1] = (char)k;
	str[255] = 0;
	a[0] = mkattrstr(m->arena, "name", str);
	emit(fn, Oparam, t, NULL, 0, a, 1, "p", noloc);
	a[0] = mkattrint(m->arena, "value", INT64_MIN);
	emit(fn, Oconst, t, NULL, 0, a, 1, "lo", noloc);
	a[0] = mkattrint(m->arena, "value", INT64_MAX);
	addret(fn, emit(fn, Oconst, t, NULL, 0, a, 1, "hi", noloc));
	CHECK(verifymod(m, NULL));
	p = roundtrip(m, "attrs");
	if (!p)
		goto out;
	fn = p->fn;
	CHECK(fn->nins == NF + 3);
	for (k = 0; k < NF; k++) {
		in = &fn->ins[k];
		CHECK(in->nattr == 1 && in->attr[0].kind == AFloat);
		if (isnan(f[k]))
			CHECK(isnan(in->attr[0].u.f) && !signbit(in->attr[0].u.f) == !signbit(f[k]));
		else
			CHECK(memcmp(&in->attr[0].u.f, &f[k], sizeof(double)) == 0);
	}
	in = &fn->ins[NF];
	CHECK(in->attr[0].kind == AStr && strcmp(in->attr[0].u.s, str) == 0);
	CHECK(fn->ins[NF + 1].attr[0].kind == AInt && fn->ins[NF + 1].attr[0].u.i == INT64_MIN);
	CHECK(fn->ins[NF + 2].attr[0].kind == AInt && fn->ins[NF + 2].attr[0].u.i == INT64_MAX);
	for (j = 0; j < fn->nins; j++)
		CHECK(fn->val[fn->ins[j].to].name != NULL);
	freemod(p);
out:
	freemod(m);
}

/* A small valid function to break in different ways. */
typedef struct Broken {
	Mod *m;
	Fn *fn;
	Ref x, w, h, o;
} Broken;

static void
mkvalid(Broken *b)
{
	Dim d[2];
	Attr a;

	b->m = newmod();
	d[0] = dimsym(b->m, symadd(b->m, "N", false));
	d[1] = 16;
	b->fn = newfn(b->m, "f", noloc);
	b->x = addarg(b->fn, "x", tensortype(DF32, 2, d));
	d[0] = 16, d[1] = 7;
	a = mkattrstr(b->m->arena, "name", "w");
	b->w = emit(b->fn, Oparam, tensortype(DF32, 2, d), NULL, 0, &a, 1, "w", noloc);
	b->h = buildop(b->fn, Omatmul, (Ref[]){b->x, b->w}, 2, NULL, 0, NULL, "h", noloc);
	b->o = buildop(b->fn, Orelu, &b->h, 1, NULL, 0, NULL, "o", noloc);
	addret(b->fn, b->o);
}

static bool
runverify(void *arg)
{
	return verifymod(arg, "test");
}

/* Break a fresh valid function with how(); the verifier must fail and
 * say want. */
static void
expectbroken(void (*how)(Broken *), const char *want)
{
	Broken b;
	char *msg;
	bool ok;

	mkvalid(&b);
	CHECK(verifymod(b.m, NULL));
	how(&b);
	msg = capture(runverify, b.m, &ok);
	CHECK(!ok);
	CHECK(strstr(msg, want) != NULL);
	if (!strstr(msg, want))
		fprintf(stderr, "verifier said:\n%swanted: %s\n", msg, want);
	free(msg);
	freemod(b.m);
}

static void
swapins(Broken *b)
{
	Ins t = b->fn->ins[1];

	b->fn->ins[1] = b->fn->ins[2];
	b->fn->ins[2] = t;
	filluse(b->fn);
}

static void
wrongtype(Broken *b)
{
	b->fn->val[b->o].type.dim[1] = 8;
}

static void
badref(Broken *b)
{
	b->fn->ins[2].arg[0] = 99;
}

static void
baddef(Broken *b)
{
	b->fn->val[b->h].def = 0;
}

static void
baddim(Broken *b)
{
	b->fn->val[b->h].type.dim[0] = ~(Dim)42;
}

static void
twice(Broken *b)
{
	b->fn->ins[2].to = b->h;
}

static void
badret(Broken *b)
{
	b->fn->ret[0] = -7;
}

static void
badop(Broken *b)
{
	b->fn->ins[2].narg = 3;
}

static void
noattr(Broken *b)
{
	b->fn->ins[0].nattr = 0;
}

static void
testverify(void)
{
	expectbroken(swapins, "verify: after pass 'test': @f: %o: relu: operand 1, %h, is not defined before this use");
	expectbroken(wrongtype, "@f: %o: type mismatch: recorded f32[N, 8], operands give f32[N, 7]");
	expectbroken(badref, "%o: relu: operand 1 is a bad ref 99");
	expectbroken(baddef, "%h: val.def is 0, but instruction 1 defines it");
	expectbroken(baddim, "%h: dim 0 of its type is invalid");
	expectbroken(twice, "%h: defined twice (again by instruction 2)");
	expectbroken(badret, "@f: ret 1 is a bad ref -7");
	expectbroken(badop, "%o: relu: 3 operands, expected 1 to 1");
	expectbroken(noattr, "%w: param: missing attribute 'name'");
}

static const char seed[] =
	"sym N\n"
	"sym E\n"
	"sym E1 derived\n"
	"\n"
	"func @GCN(%g: graph[N, E], %x: f32[N, 16]) -> (f32[N, 7], f32[N]) {\n"
	"\t%w =f32[7, 16] param {name = \"conv1.lin.weight\\n\\x01\"}\n"
	"\t%g.1 =graph[N, E1 + N] add_remaining_self_loops %g {fill = 1.0}\n"
	"\t%nw =f32[E1 + N, 1] gcn_norm %g.1\n"
	"\t%t =f32[16, 7] transpose %w {perm = [1, 0]}\n"
	"\t%h =f32[N, 7] matmul %x, %t\n"
	"\t%s =i64[E1 + N] src %g.1\n"
	"\t%d =i64[E1 + N] dst %g.1\n"
	"\t%m =f32[E1 + N, 7] gather %h, %s\n"
	"\t%mw =f32[E1 + N, 7] mul %m, %nw\n"
	"\t%a =f32[N, 7] scatter_sum %mw, %d {n = N}\n"
	"\t%r =f32[N, 7, 1] reshape %a {shape = [N, 7, 1]}\n"
	"\t%c =f32[] const {value = -1e-16}\n"
	"\t%z =f32[N, 14] concat %a, %h {dim = 1}\n"
	"\t%q =f32[N] sum %a {dim = 1}\n"
	"\tret %a, %q\n"
	"}\n";

static bool
runparse(void *arg)
{
	const char *text = arg;
	Mod *m = parseir("fuzz", text, strlen(text));
	bool ok = m != NULL;

	if (m) {
		ok = verifymod(m, NULL);
		freemod(m);
	}
	return ok;
}

/* Random edits of a valid module must never crash the parser, and what
 * it accepts must verify.  Errors go to a temporary file. */
static void
testmutations(void)
{
	static const char alphabet[] = "%=@,:()[]{}+-*#\"\\\n\t 0123456789eNEx.fgi";
	size_t len = sizeof seed - 1, n, pos;
	char buf[2 * sizeof seed], *msg;
	int k, j, edits;
	bool ok;

	diag_setmaxerrors(0);
	msg = capture(runparse, (void *)seed, &ok);
	CHECK(ok);
	free(msg);
	for (k = 0; k < 1000; k++) {
		memcpy(buf, seed, len + 1);
		n = len;
		edits = 1 + xorshift() % 4;
		for (j = 0; j < edits; j++) {
			pos = xorshift() % n;
			switch (xorshift() % 4) {
			case 0:     /* replace */
				buf[pos] = alphabet[xorshift() % (sizeof alphabet - 1)];
				break;
			case 1:     /* delete */
				memmove(buf + pos, buf + pos + 1, n - pos);
				n--;
				break;
			case 2:     /* insert */
				if (n + 1 < sizeof buf) {
					memmove(buf + pos + 1, buf + pos, n - pos + 1);
					buf[pos] = alphabet[xorshift() % (sizeof alphabet - 1)];
					n++;
				}
				break;
			case 3:     /* truncate */
				buf[pos] = 0;
				n = pos;
				break;
			}
			if (n == 0)
				break;
		}
		buf[n] = 0;
		msg = capture(runparse, buf, &ok);
		free(msg);
		diag_reset();
	}
	diag_setmaxerrors(20);
}

int
main(void)
{
	testnames();
	testattrs();
	testverify();
	testmutations();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("test_roundtrip: ok\n");
	return 0;
}
