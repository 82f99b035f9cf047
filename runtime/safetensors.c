/*
** safetensors.c: reading and writing .safetensors files.
**
** Layout: u64 LE header length N, N bytes of JSON
**	{"name": {"dtype": "F32", "shape": [16, 1433], "data_offsets": [B, E]}, ...,
**	 "__metadata__": {"key": "value"}}
** (right-padded with spaces), then the byte buffer that the offsets index.
**
** The JSON parser is strict and schema-directed: it knows the three levels
** of the header, so it needs no tree and no recursion, and any other shape
** is an error at a known byte. Strings are decoded in place in the header
** buffer (an escape never decodes longer than it is written), which keeps
** tensor names and metadata allocation-free.
**
** The data buffer is a separate allocation, so each tensor is as aligned
** in memory as its offset is in the buffer; offsets that are not a multiple
** of the element size are rejected (the reference writer never makes them)
** so that views can be used as typed arrays.
**
** The file is untrusted (a downloaded model): the header's length, the
** number of tensors and __metadata__ entries and each rank are capped
** (gnnrt.h's GNN_ST_MAX_*, GNN_MAX_RANK), so that the tables grow with the
** file only up to a bound; tests/fuzz/fuzz_safetensors.c fuzzes it.
*/
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* in the reference's Dtype order: the writer sorts by it */
static const struct {
	const char *name;
	gnn_dtype t;
} dtypes[] = {
	{"BOOL", GNN_BOOL}, {"U8", GNN_U8}, {"I8", GNN_I8}, {"I16", GNN_I16},
	{"U16", GNN_U16}, {"F16", GNN_F16}, {"BF16", GNN_BF16}, {"I32", GNN_I32},
	{"U32", GNN_U32}, {"F32", GNN_F32}, {"F64", GNN_F64}, {"I64", GNN_I64},
	{"U64", GNN_U64},
};
enum { NDTYPES = sizeof dtypes / sizeof dtypes[0] };

typedef struct Tensor {
	const char *name;   /* points into the header */
	gnn_dtype t;
	int rank;
	int64_t shape[GNN_MAX_RANK];
	uint64_t begin, end;
} Tensor;

typedef struct Meta {
	const char *key, *val;
} Meta;

struct gnn_safetensors {
	char *hdr;              /* the JSON, NUL-terminated, strings decoded */
	size_t hdrsize;         /* N */
	unsigned char *data;    /* the byte buffer */
	size_t datasize;
	Tensor *t;              /* sorted by data offset */
	int nt, capt;
	Tensor **byname;        /* nt pointers into t, sorted by name */
	Meta *meta;             /* sorted by key */
	int nmeta, capmeta;
};

/* a valid UTF-8 sequence's length at p, 0 if invalid (overlong, surrogate, > U+10FFFF) */
static int
utf8len(const unsigned char *p, const unsigned char *end)
{
	unsigned lo = 0x80, hi = 0xbf;
	int n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, lo = p[0] == 0xe0 ? 0xa0 : lo, hi = p[0] == 0xed ? 0x9f : hi;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, lo = p[0] == 0xf0 ? 0x90 : lo, hi = p[0] == 0xf4 ? 0x8f : hi;
	else
		return 0;
	if (end - p < n || p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
** A name from the file, quoted in a message as '%.*s%s' with QUOTE(s):
** at most QuoteMax bytes and visibly cut, so that a huge name cannot push
** the rest of the message out of the error buffer.  Lookups always use
** the whole name.
*/
enum { QuoteMax = 200 };
#define QUOTE(s) (int)(strlen(s) > QuoteMax ? QuoteMax : strlen(s)), (s), \
	strlen(s) > QuoteMax ? "..." : ""

/* "[16, 1433]" into buf, for messages; rank <= GNN_MAX_RANK bounds it */
static const char *
fmtshape(char *buf, size_t size, int rank, const int64_t *shape)
{
	size_t n = (size_t)snprintf(buf, size, "[");

	for (int i = 0; i < rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, i ? ", %lld" : "%lld", (long long)shape[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
	return buf;
}

/* reading */

typedef struct Json {
	const char *path;
	char *s, *p, *end;   /* header text (NUL-terminated) and cursor */
} Json;

static gnn_status
jerr(Json *j, const char *fmt, ...) GNN_PRINTF(2, 3);

static gnn_status
jerr(Json *j, const char *fmt, ...)
{
	char msg[1024];     /* two QUOTEs and the text around them */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gnn_fail(GNN_ERR_FORMAT, "%s: bad JSON header at byte %d: %s",
		j->path, (int)(j->p - j->s), msg);
}

static void
jws(Json *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* the 4 hex digits after "\u" at p, -1 if malformed */
static long
hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int d = hexval((unsigned char)p[i]);
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* writes code point c as UTF-8 at w, returns the byte count */
static int
pututf8(char *w, long c)
{
	static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
	int n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

	for (int i = n - 1; i > 0; i--, c >>= 6)
		w[i] = (char)(0x80 | (c & 0x3f));
	w[0] = (char)(lead[n] | c);
	return n;
}

/* "\uXXXX" or a surrogate pair "\uD8XX\uDCXX" at j->p, decoded to *w */
static gnn_status
junicode(Json *j, char **w)
{
	long u = hex4(j->p + 2), lo;

	if (u < 0)
		return jerr(j, "bad \\u escape");
	if (u >= 0xdc00 && u <= 0xdfff)
		return jerr(j, "unpaired surrogate in \\u escape");
	if (u >= 0xd800 && u <= 0xdbff) {
		if (j->p[6] != '\\' || j->p[7] != 'u' || (lo = hex4(j->p + 8)) < 0xdc00 || lo > 0xdfff)
			return jerr(j, "unpaired surrogate in \\u escape");
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		j->p += 6;
	}
	/* names become C strings */
	if (u == 0)
		return jerr(j, "\\u0000 is not allowed in a string");
	j->p += 6;
	*w += pututf8(*w, u);
	return GNN_OK;
}

/* a string, decoded in place and NUL-terminated; *out points at it */
static gnn_status
jstr(Json *j, char **out)
{
	char *w;
	gnn_status s;

	if (*j->p != '"')
		return jerr(j, "expected a string");
	*out = w = ++j->p;
	for (;;) {
		unsigned char c = (unsigned char)*j->p;
		int n;

		if (j->p == j->end)
			return jerr(j, "unterminated string");
		if (c == '"')
			break;
		if (c < 0x20)
			return jerr(j, "control character 0x%02x in a string", c);
		if (c >= 0x80) {
			if (!(n = utf8len((unsigned char *)j->p, (unsigned char *)j->end)))
				return jerr(j, "invalid UTF-8");
			memmove(w, j->p, (size_t)n);
			w += n, j->p += n;
			continue;
		}
		if (c != '\\') {
			*w++ = *j->p++;
			continue;
		}
		switch (j->p[1]) {
		case 'u':
			if ((s = junicode(j, &w)) != GNN_OK)
				return s;
			continue;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case '"': case '\\': case '/': c = (unsigned char)j->p[1]; break;
		default: return jerr(j, "bad escape");
		}
		*w++ = (char)c;
		j->p += 2;
	}
	j->p++;
	*w = '\0';   /* w <= the closing quote, which has been read */
	return GNN_OK;
}

/* a non-negative JSON integer no larger than max */
static gnn_status
juint(Json *j, uint64_t max, uint64_t *v)
{
	uint64_t n = 0;

	if (*j->p < '0' || *j->p > '9')
		return jerr(j, "expected a non-negative integer");
	if (*j->p == '0' && j->p[1] >= '0' && j->p[1] <= '9')
		return jerr(j, "leading zero in an integer");
	while (*j->p >= '0' && *j->p <= '9') {
		unsigned d = (unsigned)(*j->p - '0');
		if (n > (max - d) / 10)
			return jerr(j, "integer too large");
		n = n * 10 + d;
		j->p++;
	}
	if (*j->p == '.' || *j->p == 'e' || *j->p == 'E')
		return jerr(j, "expected an integer");
	*v = n;
	return GNN_OK;
}

static gnn_status
jexpect(Json *j, char c)
{
	jws(j);
	if (*j->p != c)
		return jerr(j, "expected '%c'", c);
	j->p++;
	return GNN_OK;
}

/*
** Before each element of an array or object (after its opening bracket):
** eats the ',' that separates elements and sets *more, or eats the closing
** bracket and clears *more. *count starts at 0.
*/
static gnn_status
jnext(Json *j, char close, int *count, int *more)
{
	jws(j);
	*more = *j->p != close;
	if (!*more) {
		j->p++;
		return GNN_OK;
	}
	if ((*count)++ > 0) {
		if (*j->p != ',')
			return jerr(j, "expected ',' or '%c'", close);
		j->p++;
		jws(j);
	}
	return GNN_OK;
}

/* "key": */
static gnn_status
jkey(Json *j, char **key)
{
	gnn_status s;

	jws(j);
	if ((s = jstr(j, key)) != GNN_OK)
		return s;
	if ((s = jexpect(j, ':')) != GNN_OK)
		return s;
	jws(j);
	return GNN_OK;
}

/* an array of non-negative integers up to vmax; stores max of them, *n = max + 1 if more */
static gnn_status
juints(Json *j, int max, uint64_t vmax, uint64_t *v, int *n)
{
	int more;
	gnn_status s;

	*n = 0;
	if ((s = jexpect(j, '[')) != GNN_OK)
		return s;
	for (int count = 0;;) {
		uint64_t x = 0;
		if ((s = jnext(j, ']', &count, &more)) != GNN_OK || !more)
			return s;
		if ((s = juint(j, vmax, &x)) != GNN_OK)
			return s;
		if (*n == max) {
			*n = max + 1;   /* too many: the caller says why that matters */
			return GNN_OK;
		}
		v[(*n)++] = x;
	}
}

/* grows v, an array of *cap elements of size sz, to hold n + 1; NULL if out of memory */
static void *
grow(void *v, int *cap, int n, size_t sz)
{
	int ncap = *cap ? *cap * 2 : 16;

	if (n < *cap)
		return v;
	if (!(v = gnn_realloc(v, (size_t)*cap * sz, (size_t)ncap * sz)))
		return NULL;
	*cap = ncap;
	return v;
}

static gnn_status
jtensor(Json *j, gnn_safetensors *st, const char *name)
{
	static const char *const keys[] = {"dtype", "shape", "data_offsets"};
	char *key, *dt;
	uint64_t v[GNN_MAX_RANK];
	unsigned seen = 0;
	int more, k, n;
	Tensor *t;
	gnn_status s;

	if (st->nt == GNN_ST_MAX_TENSORS)
		return gnn_fail(GNN_ERR_FORMAT, "%s: more than %d tensors, the limit of a header",
			j->path, GNN_ST_MAX_TENSORS);
	if (!(t = grow(st->t, &st->capt, st->nt, sizeof *t)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory for the tensor table", j->path);
	st->t = t;
	t = &st->t[st->nt++];
	*t = (Tensor){.name = name};
	if ((s = jexpect(j, '{')) != GNN_OK)
		return s;
	for (int count = 0;;) {
		if ((s = jnext(j, '}', &count, &more)) != GNN_OK)
			return s;
		if (!more)
			break;
		if ((s = jkey(j, &key)) != GNN_OK)
			return s;
		for (k = 0; k < 3 && strcmp(key, keys[k]) != 0; k++)
			;
		if (k == 3 || seen & 1u << k)
			return jerr(j, "tensor '%.*s%s': %s key '%.*s%s'", QUOTE(name),
				k == 3 ? "unexpected" : "duplicate", QUOTE(key));
		seen |= 1u << k;
		if (k == 0) {
			if ((s = jstr(j, &dt)) != GNN_OK)
				return s;
			for (n = 0; n < NDTYPES && strcmp(dt, dtypes[n].name) != 0; n++)
				;
			if (n == NDTYPES)
				return gnn_fail(GNN_ERR_DTYPE, "%s: tensor '%.*s%s': dtype '%.*s%s' is not supported",
					j->path, QUOTE(name), QUOTE(dt));
			t->t = dtypes[n].t;
		} else if (k == 1) {
			if ((s = juints(j, GNN_MAX_RANK, INT64_MAX, v, &t->rank)) != GNN_OK)
				return s;
			if (t->rank > GNN_MAX_RANK)
				return gnn_fail(GNN_ERR_SHAPE, "%s: tensor '%.*s%s': rank above %d",
					j->path, QUOTE(name), GNN_MAX_RANK);
			for (int i = 0; i < t->rank; i++)
				t->shape[i] = (int64_t)v[i];
		} else {
			if ((s = juints(j, 2, UINT64_MAX, v, &n)) != GNN_OK)
				return s;
			if (n != 2)
				return jerr(j, "tensor '%.*s%s': data_offsets must have 2 entries", QUOTE(name));
			t->begin = v[0], t->end = v[1];
		}
	}
	if (seen != 7)
		return gnn_fail(GNN_ERR_FORMAT, "%s: tensor '%.*s%s': missing '%s'", j->path, QUOTE(name),
			keys[!(seen & 1) ? 0 : !(seen & 2) ? 1 : 2]);
	return GNN_OK;
}

static gnn_status
jmeta(Json *j, gnn_safetensors *st)
{
	char *key, *val;
	int more;
	Meta *m;
	gnn_status s;

	if ((s = jexpect(j, '{')) != GNN_OK)
		return s;
	for (int count = 0;;) {
		if ((s = jnext(j, '}', &count, &more)) != GNN_OK || !more)
			return s;
		if ((s = jkey(j, &key)) != GNN_OK)
			return s;
		if (*j->p != '"')
			return jerr(j, "__metadata__ value of '%.*s%s' must be a string", QUOTE(key));
		if ((s = jstr(j, &val)) != GNN_OK)
			return s;
		if (st->nmeta == GNN_ST_MAX_TENSORS)
			return gnn_fail(GNN_ERR_FORMAT, "%s: more than %d __metadata__ entries, the limit "
				"of a header", j->path, GNN_ST_MAX_TENSORS);
		if (!(m = grow(st->meta, &st->capmeta, st->nmeta, sizeof *m)))
			return gnn_fail(GNN_ERR_MEM, "%s: out of memory for metadata", j->path);
		st->meta = m;
		st->meta[st->nmeta++] = (Meta){key, val};
	}
}

static gnn_status
jheader(Json *j, gnn_safetensors *st)
{
	char *key;
	int more, seenmeta = 0;
	gnn_status s;

	/* the spec: the header starts with '{', no leading whitespace */
	if (*j->p != '{')
		return jerr(j, "header must start with '{'");
	j->p++;
	for (int count = 0;;) {
		if ((s = jnext(j, '}', &count, &more)) != GNN_OK)
			return s;
		if (!more)
			break;
		if ((s = jkey(j, &key)) != GNN_OK)
			return s;
		if (strcmp(key, "__metadata__") != 0)
			s = jtensor(j, st, key);
		else if (seenmeta++)
			s = jerr(j, "duplicate key '__metadata__'");
		else
			s = jmeta(j, st);
		if (s != GNN_OK)
			return s;
	}
	/* the reference trims trailing whitespace; the writer pads with spaces */
	jws(j);
	if (j->p != j->end)
		return jerr(j, "unexpected text after the header object");
	return GNN_OK;
}

/* qsort, which must not be given the NULL of an empty table */
static void
sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int
byoffset(const void *a, const void *b)
{
	const Tensor *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return strcmp(x->name, y->name);   /* empty tensors tie: keep the order deterministic */
}

static int
byname(const void *a, const void *b)
{
	return strcmp((*(Tensor *const *)a)->name, (*(Tensor *const *)b)->name);
}

static int
bykey(const void *a, const void *b)
{
	return strcmp(((const Meta *)a)->key, ((const Meta *)b)->key);
}

/* each tensor's size and alignment, then unique names, then exact cover of the buffer */
static gnn_status
validate(const char *path, gnn_safetensors *st)
{
	uint64_t at = 0;
	char sh[256];
	size_t nbytes;

	for (int i = 0; i < st->nt; i++) {
		Tensor *t = &st->t[i];
		size_t size = gnn_dtype_size(t->t);
		if (gnn_shape_nbytes(t->t, t->rank, t->shape, &nbytes) != 0)
			return gnn_fail(GNN_ERR_SHAPE, "%s: tensor '%.*s%s': shape %s is too large",
				path, QUOTE(t->name), fmtshape(sh, sizeof sh, t->rank, t->shape));
		if (t->end < t->begin || t->end - t->begin != nbytes)
			return gnn_fail(GNN_ERR_FORMAT,
				"%s: tensor '%.*s%s': data_offsets [%llu, %llu] do not hold %s%s (%zu bytes)",
				path, QUOTE(t->name), (unsigned long long)t->begin, (unsigned long long)t->end,
				gnn_dtype_name(t->t),
				fmtshape(sh, sizeof sh, t->rank, t->shape), nbytes);
		if (t->end > st->datasize)
			return gnn_fail(GNN_ERR_FORMAT,
				"%s: tensor '%.*s%s': data_offsets end %llu is past the buffer end %zu",
				path, QUOTE(t->name), (unsigned long long)t->end, st->datasize);
		if (t->begin % size != 0)
			return gnn_fail(GNN_ERR_FORMAT,
				"%s: tensor '%.*s%s': data offset %llu is not aligned to its %zu-byte elements",
				path, QUOTE(t->name), (unsigned long long)t->begin, size);
	}

	if (st->nt > 0 && !(st->byname = gnn_malloc((size_t)st->nt * sizeof *st->byname)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory for the name index", path);
	sort(st->t, (size_t)st->nt, sizeof *st->t, byoffset);
	for (int i = 0; i < st->nt; i++)
		st->byname[i] = &st->t[i];
	sort(st->byname, (size_t)st->nt, sizeof *st->byname, byname);
	for (int i = 1; i < st->nt; i++)
		if (strcmp(st->byname[i - 1]->name, st->byname[i]->name) == 0)
			return gnn_fail(GNN_ERR_FORMAT, "%s: duplicate tensor name '%.*s%s'",
				path, QUOTE(st->byname[i]->name));
	sort(st->meta, (size_t)st->nmeta, sizeof *st->meta, bykey);
	for (int i = 1; i < st->nmeta; i++)
		if (strcmp(st->meta[i - 1].key, st->meta[i].key) == 0)
			return gnn_fail(GNN_ERR_FORMAT, "%s: duplicate __metadata__ key '%.*s%s'",
				path, QUOTE(st->meta[i].key));

	for (int i = 0; i < st->nt; i++) {
		Tensor *t = &st->t[i];
		if (t->begin != at)
			return gnn_fail(GNN_ERR_FORMAT, "%s: tensor '%.*s%s': data_offsets [%llu, %llu] %s",
				path, QUOTE(t->name), (unsigned long long)t->begin, (unsigned long long)t->end,
				t->begin < at ? "overlap the previous tensor" : "leave a hole before them");
		at = t->end;
	}
	if (at != st->datasize)
		return gnn_fail(GNN_ERR_FORMAT, "%s: %llu bytes after the last tensor belong to none",
			path, (unsigned long long)(st->datasize - at));
	return GNN_OK;
}

static gnn_status
load(const char *path, FILE *f, gnn_safetensors *st)
{
	unsigned char len[8];
	struct stat sb;
	uint64_t size, n = 0;
	gnn_status s;

	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode))
		return gnn_fail(GNN_ERR_IO, "%s: not a regular file", path);
	size = (uint64_t)sb.st_size;
	if (size < 8 || fread(len, 1, 8, f) != 8)
		return gnn_fail(GNN_ERR_FORMAT, "%s: too small (%llu bytes) to be a safetensors file",
			path, (unsigned long long)size);
	for (int i = 7; i >= 0; i--)
		n = n << 8 | len[i];
	if (n > GNN_ST_MAX_HEADER)
		return gnn_fail(GNN_ERR_FORMAT, "%s: header length %llu exceeds the limit of %d",
			path, (unsigned long long)n, GNN_ST_MAX_HEADER);
	if (n > size - 8)
		return gnn_fail(GNN_ERR_FORMAT, "%s: header length %llu runs past the end of the "
			"file (%llu bytes)", path, (unsigned long long)n, (unsigned long long)size);
	if (!(st->hdr = gnn_malloc(n + 1)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory for the header", path);
	st->hdrsize = n;
	st->datasize = size - 8 - n;
	if (fread(st->hdr, 1, n, f) != n)
		return gnn_fail(GNN_ERR_IO, "%s: read error in the header", path);
	st->hdr[n] = '\0';
	if ((s = jheader(&(Json){path, st->hdr, st->hdr, st->hdr + n}, st)) != GNN_OK)
		return s;
	if ((s = validate(path, st)) != GNN_OK)
		return s;
	/* read the data only once the header has proved worth it */
	if (st->datasize && !(st->data = gnn_malloc(st->datasize)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory for %zu data bytes", path, st->datasize);
	if (st->datasize && fread(st->data, 1, st->datasize, f) != st->datasize)
		return gnn_fail(GNN_ERR_IO, "%s: read error in the data", path);
	return GNN_OK;
}

gnn_status
gnn_st_open(const char *path, gnn_safetensors **out)
{
	gnn_safetensors *st;
	FILE *f;
	gnn_status s;

	if (!out)
		return gnn_fail(GNN_ERR_ARG, "gnn_st_open: out is NULL");
	*out = NULL;
	if (!path)
		return gnn_fail(GNN_ERR_ARG, "gnn_st_open: path is NULL");
	if (!(f = fopen(path, "rb")))
		return gnn_fail(GNN_ERR_IO, "%s: %s", path, strerror(errno));
	if (!(st = gnn_malloc(sizeof *st))) {
		fclose(f);
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory", path);
	}
	*st = (gnn_safetensors){0};
	s = load(path, f, st);
	fclose(f);
	if (s != GNN_OK) {
		gnn_st_close(st);
		return s;
	}
	*out = st;
	return GNN_OK;
}

void
gnn_st_close(gnn_safetensors *st)
{
	if (!st)
		return;
	gnn_free(st->hdr, st->hdrsize + 1);
	gnn_free(st->data, st->datasize);
	gnn_free(st->t, (size_t)st->capt * sizeof *st->t);
	gnn_free(st->byname, (size_t)st->nt * sizeof *st->byname);
	gnn_free(st->meta, (size_t)st->capmeta * sizeof *st->meta);
	gnn_free(st, sizeof *st);
}

int
gnn_st_count(const gnn_safetensors *st)
{
	return st ? st->nt : 0;
}

const char *
gnn_st_name(const gnn_safetensors *st, int i)
{
	return st && i >= 0 && i < st->nt ? st->t[i].name : NULL;
}

int
gnn_st_find(const gnn_safetensors *st, const char *name)
{
	Tensor key = {.name = name}, *kp = &key, **hit;

	if (!st || !name || st->nt == 0)
		return -1;
	hit = bsearch(&kp, st->byname, (size_t)st->nt, sizeof *st->byname, byname);
	return hit ? (int)(*hit - st->t) : -1;
}

gnn_status
gnn_st_get(const gnn_safetensors *st, int i, gnn_array *view)
{
	const Tensor *t;

	if (!view)
		return gnn_fail(GNN_ERR_ARG, "gnn_st_get: view is NULL");
	*view = (gnn_array){0};
	if (!st)
		return gnn_fail(GNN_ERR_ARG, "gnn_st_get: st is NULL");
	if (i < 0 || i >= st->nt)
		return gnn_fail(GNN_ERR_RANGE, "gnn_st_get: tensor index %d not in [0, %d)", i, st->nt);
	t = &st->t[i];
	view->dtype = t->t;
	view->rank = t->rank;
	memcpy(view->shape, t->shape, sizeof t->shape);
	view->data = st->data ? st->data + t->begin : NULL;
	view->nbytes = (size_t)(t->end - t->begin);
	return GNN_OK;
}

const char *
gnn_st_metadata(const gnn_safetensors *st, const char *key)
{
	Meta k = {.key = key}, *hit;

	if (!st || !key || st->nmeta == 0)
		return NULL;
	hit = bsearch(&k, st->meta, (size_t)st->nmeta, sizeof *st->meta, bykey);
	return hit ? hit->val : NULL;
}

/* writing */

typedef struct Out {
	char *p;     /* NULL: only count */
	size_t n;
} Out;

static void
put(Out *o, const char *s, size_t n)
{
	if (o->p)
		memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void
putf(Out *o, const char *fmt, unsigned long long v)
{
	char buf[32];

	put(o, buf, (size_t)snprintf(buf, sizeof buf, fmt, v));
}

/* a JSON string, escaped as serde_json does */
static void
putstr(Out *o, const char *s)
{
	put(o, "\"", 1);
	for (; *s; s++) {
		switch (*s) {
		case '"': put(o, "\\\"", 2); break;
		case '\\': put(o, "\\\\", 2); break;
		case '\b': put(o, "\\b", 2); break;
		case '\f': put(o, "\\f", 2); break;
		case '\n': put(o, "\\n", 2); break;
		case '\r': put(o, "\\r", 2); break;
		case '\t': put(o, "\\t", 2); break;
		default:
			if ((unsigned char)*s < 0x20)
				putf(o, "\\u%04llx", (unsigned char)*s);
			else
				put(o, s, 1);
		}
	}
	put(o, "\"", 1);
}

typedef struct Item {
	const char *name;
	const gnn_array *a;
	int order;   /* index in dtypes[] */
	int pos;     /* index in the caller's list */
	uint64_t off;   /* its data's offset in the buffer */
} Item;

static int
itemname(const void *a, const void *b)
{
	return strcmp(((const Item *)a)->name, ((const Item *)b)->name);
}

/* the reference's order: descending alignment (dtype order), then name */
static int
itemorder(const void *a, const void *b)
{
	const Item *x = a, *y = b;

	if (x->order != y->order)
		return y->order - x->order;
	return strcmp(x->name, y->name);
}

/* gnn_save_params' data order: descending element size (so that every
 * tensor is aligned without gaps), then the caller's order */
static int
itemsize(const void *a, const void *b)
{
	const Item *x = a, *y = b;
	size_t sx = gnn_dtype_size(x->a->dtype), sy = gnn_dtype_size(y->a->dtype);

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return x->pos - y->pos;
}

/* the caller's order (gnn_save_params' header) */
static int
itempos(const void *a, const void *b)
{
	return ((const Item *)a)->pos - ((const Item *)b)->pos;
}

/* the header JSON for items in order, with 8 bytes of length in front and padding */
static size_t
header(Out *o, const Item *it, int n)
{
	o->n = 8;
	put(o, "{", 1);
	for (int i = 0; i < n; i++) {
		const gnn_array *a = it[i].a;
		if (i)
			put(o, ",", 1);
		putstr(o, it[i].name);
		put(o, ":{\"dtype\":", 10);
		putstr(o, dtypes[it[i].order].name);
		put(o, ",\"shape\":[", 10);
		for (int d = 0; d < a->rank; d++)
			putf(o, d ? ",%llu" : "%llu", (unsigned long long)a->shape[d]);
		putf(o, "],\"data_offsets\":[%llu,", (unsigned long long)it[i].off);
		putf(o, "%llu]}", (unsigned long long)(it[i].off + a->nbytes));
	}
	put(o, "}", 1);
	while (o->n % 8)
		put(o, " ", 1);
	if (o->p)
		for (int i = 0; i < 8; i++)
			o->p[i] = (char)((o->n - 8) >> 8 * i & 0xff);
	return o->n;
}

static gnn_status
checkitems(const char *path, const char *const *names, const gnn_array *arrays, Item *it, int n)
{
	gnn_status s;

	for (int i = 0; i < n; i++) {
		const unsigned char *p = (const unsigned char *)names[i], *end;
		if (!p)
			return gnn_fail(GNN_ERR_ARG, "%s: name %d is NULL", path, i);
		end = p + strlen(names[i]);
		for (int k; p < end; p += k)
			if (!(k = utf8len(p, end)))
				return gnn_fail(GNN_ERR_ARG, "%s: name %d is not valid UTF-8", path, i);
		if (strcmp(names[i], "__metadata__") == 0)
			return gnn_fail(GNN_ERR_ARG, "%s: '__metadata__' cannot name a tensor", path);
		if ((s = gnn_array_check(path, names[i], &arrays[i])) != GNN_OK)
			return s;
		it[i] = (Item){names[i], &arrays[i], 0, i, 0};
		while (dtypes[it[i].order].t != arrays[i].dtype)
			it[i].order++;
	}
	sort(it, (size_t)n, sizeof *it, itemname);
	for (int i = 1; i < n; i++)
		if (strcmp(it[i - 1].name, it[i].name) == 0)
			return gnn_fail(GNN_ERR_ARG, "%s: duplicate tensor name '%.*s%s'", path, QUOTE(it[i].name));
	return GNN_OK;
}

gnn_status
gnn_st_write(const char *path, const char *const *names, const gnn_array *arrays, int n)
{
	return gnn_st_write_(path, names, arrays, n, 0);
}

gnn_status
gnn_st_write_(const char *path, const char *const *names, const gnn_array *arrays, int n, int inorder)
{
	Item *it = NULL;
	gnn_span *parts = NULL;
	Out o = {0};
	size_t hlen = 0;
	gnn_status s;

	if (!path)
		return gnn_fail(GNN_ERR_ARG, "gnn_st_write: path is NULL");
	if (n < 0 || (n > 0 && (!names || !arrays)))
		return gnn_fail(GNN_ERR_ARG, "%s: bad tensor list (n = %d)", path, n);
	/* a file the reader would refuse is not written */
	if (n > GNN_ST_MAX_TENSORS)
		return gnn_fail(GNN_ERR_ARG, "%s: %d tensors exceed the limit of %d", path, n,
			GNN_ST_MAX_TENSORS);
	if ((n > 0 && !(it = gnn_malloc((size_t)n * sizeof *it)))
	    || !(parts = gnn_malloc((size_t)(n + 1) * sizeof *parts))) {
		s = gnn_fail(GNN_ERR_MEM, "%s: out of memory", path);
		goto out;
	}
	if ((s = checkitems(path, names, arrays, it, n)) != GNN_OK)
		goto out;
	/* it in the data's order, each at its offset; then the header's order */
	sort(it, (size_t)n, sizeof *it, inorder ? itemsize : itemorder);
	for (int i = 1; i < n; i++)
		it[i].off = it[i - 1].off + it[i - 1].a->nbytes;
	for (int i = 0; i < n; i++)
		parts[i + 1] = (gnn_span){it[i].a->data, it[i].a->nbytes};
	if (inorder)
		sort(it, (size_t)n, sizeof *it, itempos);
	hlen = header(&o, it, n);
	if (hlen - 8 > GNN_ST_MAX_HEADER) {
		s = gnn_fail(GNN_ERR_ARG, "%s: header of %zu bytes exceeds the limit of %d",
			path, hlen - 8, GNN_ST_MAX_HEADER);
		goto out;
	}
	if (!(o.p = gnn_malloc(hlen))) {
		s = gnn_fail(GNN_ERR_MEM, "%s: out of memory for the header", path);
		goto out;
	}
	header(&o, it, n);
	parts[0] = (gnn_span){o.p, hlen};
	s = gnn_write_atomic(path, parts, n + 1);
out:
	gnn_free(o.p, hlen);
	gnn_free(parts, (size_t)(n + 1) * sizeof *parts);
	gnn_free(it, (size_t)n * sizeof *it);
	return s;
}
