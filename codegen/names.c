/*
 * The C names of IR values in generated kernels: a value is called what
 * the model calls it (conv1_lin_y), so --dump-ir and --emit=cuda read side
 * by side.  The name --dump-ir prints (valnames(): "conv1.lin.y", "x.1",
 * "12" for a value the model did not name) becomes an identifier (other
 * characters '_', a leading non-letter prefixed "v": %12 is v12); a name
 * taken already, a C or C++ keyword, a name the kernels call (expf) or a
 * name ending in '_' gets "_<id>".  Kernel-internal names all end in '_',
 * so they never meet a value's.
 *
 * The names of a function are made once, in value order, and cached: the
 * same (fn, v) gives the same text on every call.
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"

static const char *const reserved[] = {
	/* C11 and C++17 keywords */
	"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
	"char", "char16_t", "char32_t", "class", "compl", "const", "constexpr", "const_cast", "continue",
	"decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
	"extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
	"namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
	"protected", "public", "register", "reinterpret_cast", "restrict", "return", "short", "signed",
	"sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
	"thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
	"virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
	/* what generated kernels name */
	"int64_t", "uint8_t", "int32_t", "size_t", "NAN", "INFINITY", "exp", "expf", "expm1", "expm1f",
	"log", "logf", "sqrt", "sqrtf", "tanh", "tanhf", "fabs", "fabsf", "pow", "powf", "threadIdx",
	"blockIdx", "blockDim", "gridDim", "warpSize", "main", NULL,
};

static bool
isreserved(const char *s)
{
	int k;

	for (k = 0; reserved[k]; k++)
		if (!strcmp(s, reserved[k]))
			return true;
	return strncmp(s, "GNN_", 4) == 0 || strncmp(s, "gnn_", 4) == 0;
}

/* the cache: the function it is for and its names */
static Fn *cfn;
static const void *cval;   /* fn->val when made: another function at fn's address differs */
static int cnval;
static char **cname;
static char **cir;         /* the names --dump-ir prints */

static void
dropcache(void)
{
	int i;

	for (i = 0; i < cnval; i++)
		free(cname[i]);
	free(cname);
	cname = NULL;
	if (cir)
		freevalnames(cir);
	cir = NULL;
	cfn = NULL;
	cnval = 0;
}

static bool
taken(int upto, const char *s)
{
	int i;

	for (i = 0; i < upto; i++)
		if (cname[i] && !strcmp(cname[i], s))
			return true;
	return false;
}

static void
makenames(E *e, Fn *fn)
{
	Str b = {0};
	const char *p;
	int v;

	dropcache();
	cfn = fn;
	cval = fn->val;
	cnval = fn->nval;
	cname = emalloc((cnval + 1) * sizeof *cname);
	cir = valnames(fn);
	for (v = 0; v < cnval; v++) {
		cname[v] = NULL;
		p = cir[v];   /* "conv1.lin.y", "x.1", "12": as --dump-ir prints it */
		if (p && *p) {
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
				sput(&b, "v");
			for (; *p; p++) {
				bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
				sput(&b, "%c", ok ? *p : '_');
			}
			/* the model's own symbols start with its name and '_' */
			if (b.s[b.len - 1] == '_' || isreserved(b.s) || taken(v, b.s) ||
			    (!strncmp(b.s, e->nm, strlen(e->nm)) && b.s[strlen(e->nm)] == '_'))
				sput(&b, "_%d", v);
		} else
			sput(&b, "v%d", v);
		/* "_<id>" and "v<id>" are unique unless a model named a value so */
		while (taken(v, b.s))
			sput(&b, "_%d", v);
		cname[v] = estrdup(b.s);
		sfree(&b);
	}
}

static void
cached(E *e, Ref v)
{
	if (cfn != e->fn || cval != (const void *)e->fn->val || cnval != e->fn->nval)
		makenames(e, e->fn);
	if (v < 0 || v >= cnval)
		die("codegen: the name of %d, which is not a value", v);
}

const char *
valname(E *e, Ref v)
{
	cached(e, v);
	return pf(e, "%s", cname[v]);
}

const char *
irname(E *e, Ref v)
{
	cached(e, v);
	return pf(e, "%s", cir[v]);
}
