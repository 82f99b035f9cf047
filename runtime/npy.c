/*
** npy.c: NumPy .npy files, and the atomic file writer.
**
** Layout: "\x93NUMPY", major, minor, header length (u16 LE in 1.0, u32 LE
** in 2.0/3.0), then a Python dict literal such as
**	{'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), }
** padded with spaces and a '\n', then the raw data.
**
** The reader parses the dict with a small parser for exactly the Python
** literals numpy writes (strings, True/False, tuples of ints) rather than
** by pattern matching, so key order, spacing, trailing commas and Python 2
** "3L" ints all work, and anything else is an error at a known byte.
** Nothing in the header is trusted: its length is capped, the shape product
** is overflow-checked, and the data must fill the rest of the file exactly.
** Big-endian data is byte-swapped on load rather than rejected, since the
** swap is cheap and such files are valid.
**
** The writer emits what numpy.save emits, byte for byte.
*/
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

enum {
	ALIGN = 64,          /* numpy's ARRAY_ALIGN */
	GROWTH_DIGITS = 21,  /* numpy's GROWTH_AXIS_MAX_DIGITS */
};

/* descr without its byte-order character */
static const struct {
	const char *code;
	gnn_dtype t;
} descrs[] = {
	{"f4", GNN_F32}, {"f8", GNN_F64}, {"f2", GNN_F16},
	{"i1", GNN_I8}, {"i2", GNN_I16}, {"i4", GNN_I32}, {"i8", GNN_I64},
	{"u1", GNN_U8}, {"u2", GNN_U16}, {"u4", GNN_U32}, {"u8", GNN_U64},
	{"b1", GNN_BOOL},
};

typedef struct Hdr {
	const char *path;
	const char *s, *p, *end;   /* NUL-terminated header text and cursor */
} Hdr;

static gnn_status
herr(Hdr *h, const char *fmt, ...) GNN_PRINTF(2, 3);

/*
** Header text quoted in a message as '%.*s%s' with QUOTE(s, n): at most
** QuoteMax bytes and visibly cut, so that a huge key or descr (the
** header may hold a megabyte) cannot push the rest of the message out.
*/
enum { QuoteMax = 200 };
#define QUOTE(s, n) (int)((n) > QuoteMax ? QuoteMax : (n)), (s), (n) > QuoteMax ? "..." : ""

static gnn_status
herr(Hdr *h, const char *fmt, ...)
{
	char msg[512];      /* a QUOTE and the text around it */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gnn_fail(GNN_ERR_FORMAT, "%s: bad .npy header at byte %d: %s",
		h->path, (int)(h->p - h->s), msg);
}

static void
hws(Hdr *h)
{
	while (*h->p && strchr(" \t\n\r\f\v", *h->p))
		h->p++;
}

/* a quoted string without escapes (numpy never writes any); points into h */
static gnn_status
hstr(Hdr *h, const char **s, int *n)
{
	char q = *h->p;
	const char *e;

	if (q != '\'' && q != '"')
		return herr(h, "expected a string");
	for (e = h->p + 1; e < h->end && *e != q; e++)
		if (*e == '\\' || *e == '\n')
			return herr(h, "escapes and newlines in strings are not supported");
	if (e == h->end)
		return herr(h, "unterminated string");
	*s = h->p + 1;
	*n = (int)(e - *s);
	h->p = e + 1;
	return GNN_OK;
}

/* a Python int: optional sign, digits with '_' between, Python 2 'L' */
static gnn_status
hint(Hdr *h, int64_t *v)
{
	int neg = *h->p == '-';
	uint64_t n = 0;

	if (*h->p == '-' || *h->p == '+')
		h->p++;
	if (*h->p < '0' || *h->p > '9')
		return herr(h, "expected an integer");
	for (;;) {
		if (*h->p == '_' && h->p[1] >= '0' && h->p[1] <= '9')
			h->p++;
		if (*h->p < '0' || *h->p > '9')
			break;
		unsigned d = (unsigned)(*h->p++ - '0');
		if (n > ((uint64_t)INT64_MAX - d) / 10)
			return herr(h, "integer too large");
		n = n * 10 + d;
	}
	if (*h->p == 'L' || *h->p == 'l')
		h->p++;
	*v = neg ? -(int64_t)n : (int64_t)n;
	return GNN_OK;
}

static gnn_status
hbool(Hdr *h, int *v)
{
	if (strncmp(h->p, "True", 4) == 0)
		*v = 1;
	else if (strncmp(h->p, "False", 5) == 0)
		*v = 0;
	else
		return herr(h, "fortran_order must be True or False");
	h->p += *v ? 4 : 5;
	return GNN_OK;
}

/* "()", "(5,)", "(2, 3)", "(2, 3,)"; "(5)" is an int, not a tuple */
static gnn_status
htuple(Hdr *h, int *rank, int64_t *shape)
{
	int n = 0, comma = 0;
	gnn_status s;

	if (*h->p != '(')
		return herr(h, "shape must be a tuple");
	h->p++;
	for (;;) {
		hws(h);
		if (*h->p == ')')
			break;
		if (n == GNN_MAX_RANK)
			return gnn_fail(GNN_ERR_SHAPE, "%s: shape has more than %d dimensions",
				h->path, GNN_MAX_RANK);
		if ((s = hint(h, &shape[n++])) != GNN_OK)
			return s;
		hws(h);
		comma = *h->p == ',';
		if (comma)
			h->p++;
		else if (*h->p != ')')
			return herr(h, "expected ',' or ')' in shape");
	}
	h->p++;
	if (n == 1 && !comma)
		return herr(h, "shape must be a tuple, as in (%lld,)", (long long)shape[0]);
	*rank = n;
	return GNN_OK;
}

/* the descr value: byte order (optional), then a code from descrs[] */
static gnn_status
hdescr(Hdr *h, const char *d, int n, gnn_dtype *t, int *swap)
{
	int off = n > 0 && strchr("<>|=", d[0]);

	*swap = off && d[0] == '>';
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
		if (n - off == 2 && memcmp(d + off, descrs[i].code, 2) == 0) {
			*t = descrs[i].t;
			return GNN_OK;
		}
	return gnn_fail(GNN_ERR_DTYPE, "%s: unsupported dtype '%.*s%s'", h->path, QUOTE(d, n));
}

typedef struct Npy {
	gnn_dtype t;
	int swap, fortran, rank;
	int64_t shape[GNN_MAX_RANK];
} Npy;

static gnn_status
hvalue(Hdr *h, const char *key, int klen, Npy *m, unsigned *seen)
{
	static const char *const keys[] = {"descr", "fortran_order", "shape"};
	const char *d;
	int k, n;
	gnn_status s;

	for (k = 0; k < 3; k++)
		if ((int)strlen(keys[k]) == klen && memcmp(key, keys[k], (size_t)klen) == 0)
			break;
	if (k == 3)
		return herr(h, "unexpected key '%.*s%s'", QUOTE(key, klen));
	if (*seen & 1u << k)
		return herr(h, "duplicate key '%s'", keys[k]);
	*seen |= 1u << k;
	switch (k) {
	case 0:
		if (*h->p == '[')
			return gnn_fail(GNN_ERR_DTYPE, "%s: structured dtypes are not supported", h->path);
		if ((s = hstr(h, &d, &n)) != GNN_OK)
			return s;
		return hdescr(h, d, n, &m->t, &m->swap);
	case 1:
		return hbool(h, &m->fortran);
	default:
		return htuple(h, &m->rank, m->shape);
	}
}

static gnn_status
hparse(Hdr *h, Npy *m)
{
	unsigned seen = 0;
	const char *key;
	int klen;
	gnn_status s;

	hws(h);
	if (*h->p != '{')
		return herr(h, "expected '{'");
	h->p++;
	for (;;) {
		hws(h);
		if (*h->p == '}')
			break;
		if ((s = hstr(h, &key, &klen)) != GNN_OK)
			return s;
		hws(h);
		if (*h->p != ':')
			return herr(h, "expected ':'");
		h->p++;
		hws(h);
		if ((s = hvalue(h, key, klen, m, &seen)) != GNN_OK)
			return s;
		hws(h);
		if (*h->p == ',')
			h->p++;
		else if (*h->p != '}')
			return herr(h, "expected ',' or '}'");
	}
	h->p++;
	hws(h);
	if (h->p != h->end)
		return herr(h, "unexpected text after the dict");
	if (seen != 7)
		return herr(h, "missing key '%s'",
			!(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
	for (int i = 0; i < m->rank; i++)
		if (m->shape[i] < 0)
			return gnn_fail(GNN_ERR_SHAPE, "%s: negative dimension %lld in shape",
				h->path, (long long)m->shape[i]);
	/* rank <= 1 is the same bytes in either order */
	if (m->fortran && m->rank > 1)
		return gnn_fail(GNN_ERR_FORMAT,
			"%s: fortran_order=True is not supported for rank %d; save with C order",
			h->path, m->rank);
	return GNN_OK;
}

static void
byteswap(unsigned char *p, size_t nbytes, size_t size)
{
	for (size_t i = 0; i < nbytes; i += size)
		for (size_t j = 0; j < size / 2; j++) {
			unsigned char c = p[i + j];
			p[i + j] = p[i + size - 1 - j];
			p[i + size - 1 - j] = c;
		}
}

/* reads the header at the cursor of f into m; returns its end offset in *dataoff */
static gnn_status
readhdr(const char *path, FILE *f, uint64_t size, Npy *m, uint64_t *dataoff)
{
	unsigned char pre[12];
	uint64_t hlen, plen;
	char *text;
	gnn_status s;

	if (size < 10 || fread(pre, 1, 10, f) != 10)
		return gnn_fail(GNN_ERR_FORMAT, "%s: too small to be a .npy file (%llu bytes)",
			path, (unsigned long long)size);
	if (memcmp(pre, "\x93NUMPY", 6) != 0)
		return gnn_fail(GNN_ERR_FORMAT, "%s: not a .npy file (bad magic)", path);
	if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0)
		return gnn_fail(GNN_ERR_FORMAT, "%s: unsupported .npy version %d.%d",
			path, pre[6], pre[7]);
	plen = pre[6] == 1 ? 10 : 12;
	if (plen == 12 && (size < 12 || fread(pre + 10, 1, 2, f) != 2))
		return gnn_fail(GNN_ERR_FORMAT, "%s: truncated in the header length", path);
	hlen = pre[8] | (uint64_t)pre[9] << 8;
	if (plen == 12)
		hlen |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
	if (hlen > GNN_NPY_MAX_HEADER)
		return gnn_fail(GNN_ERR_FORMAT, "%s: header length %llu exceeds the limit of %d",
			path, (unsigned long long)hlen, GNN_NPY_MAX_HEADER);
	if (plen + hlen > size)
		return gnn_fail(GNN_ERR_FORMAT, "%s: truncated: header needs %llu bytes, file has %llu",
			path, (unsigned long long)(plen + hlen), (unsigned long long)size);
	if (!(text = gnn_malloc(hlen + 1)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory for the header", path);
	if (fread(text, 1, hlen, f) != hlen) {
		s = gnn_fail(GNN_ERR_IO, "%s: read error in the header", path);
	} else {
		text[hlen] = '\0';
		s = hparse(&(Hdr){path, text, text, text + hlen}, m);
	}
	gnn_free(text, hlen + 1);
	*dataoff = plen + hlen;
	return s;
}

static gnn_status
readnpy(const char *path, FILE *f, gnn_array *out)
{
	struct stat st;
	uint64_t size, off = 0;
	size_t nbytes;
	Npy m = {0};
	gnn_status s;

	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		return gnn_fail(GNN_ERR_IO, "%s: not a regular file", path);
	size = (uint64_t)st.st_size;
	if ((s = readhdr(path, f, size, &m, &off)) != GNN_OK)
		return s;
	if (gnn_shape_nbytes(m.t, m.rank, m.shape, &nbytes) != 0)
		return gnn_fail(GNN_ERR_SHAPE, "%s: shape is too large", path);
	if (size - off != nbytes)
		return gnn_fail(GNN_ERR_FORMAT, "%s: %s: expected %zu data bytes, found %llu", path,
			size - off < nbytes ? "truncated" : "trailing bytes",
			nbytes, (unsigned long long)(size - off));
	if (nbytes && !(out->data = gnn_malloc(nbytes)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory for %zu data bytes", path, nbytes);
	out->nbytes = nbytes;
	out->dtype = m.t;
	out->rank = m.rank;
	memcpy(out->shape, m.shape, sizeof m.shape);
	if (nbytes && fread(out->data, 1, nbytes, f) != nbytes)
		return gnn_fail(GNN_ERR_IO, "%s: read error in the data", path);
	if (m.swap)
		byteswap(out->data, nbytes, gnn_dtype_size(m.t));
	return GNN_OK;
}

gnn_status
gnn_npy_read(const char *path, gnn_array *out)
{
	FILE *f;
	gnn_status s;

	if (!out)
		return gnn_fail(GNN_ERR_ARG, "gnn_npy_read: out is NULL");
	*out = (gnn_array){0};
	if (!path)
		return gnn_fail(GNN_ERR_ARG, "gnn_npy_read: path is NULL");
	if (!(f = fopen(path, "rb")))
		return gnn_fail(GNN_ERR_IO, "%s: %s", path, strerror(errno));
	s = readnpy(path, f, out);
	fclose(f);
	if (s != GNN_OK)
		gnn_array_free(out);
	return s;
}

gnn_status
gnn_npy_write(const char *path, const gnn_array *a)
{
	/* rank <= 8 keeps the header near 300 bytes: version 1.0 always fits */
	char h[512];
	const char *code = NULL;
	int n, pad;
	gnn_status s;

	if (!path)
		return gnn_fail(GNN_ERR_ARG, "gnn_npy_write: path is NULL");
	if ((s = gnn_array_check(path, NULL, a)) != GNN_OK)
		return s;
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
		if (descrs[i].t == a->dtype)
			code = descrs[i].code;
	if (!code)
		return gnn_fail(GNN_ERR_DTYPE, "%s: %s has no .npy dtype", path, gnn_dtype_name(a->dtype));

	/* numpy: sorted keys, repr(shape), growth room for the first dim */
	n = 10 + snprintf(h + 10, sizeof h - 10, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
		gnn_dtype_size(a->dtype) == 1 ? '|' : '<', code);
	for (int i = 0; i < a->rank; i++)
		n += snprintf(h + n, sizeof h - (size_t)n, i ? ", %lld" : "%lld", (long long)a->shape[i]);
	n += snprintf(h + n, sizeof h - (size_t)n, "%s), }", a->rank == 1 ? "," : "");
	if (a->rank > 0)
		n += snprintf(h + n, sizeof h - (size_t)n, "%*s",
			GROWTH_DIGITS - snprintf(NULL, 0, "%lld", (long long)a->shape[0]), "");
	/* then spaces and '\n' up to a multiple of 64; a full 64 if already aligned */
	pad = ALIGN - (n + 1) % ALIGN;
	memset(h + n, ' ', (size_t)pad);
	n += pad;
	h[n++] = '\n';
	memcpy(h, "\x93NUMPY\x01\x00", 8);
	h[8] = (char)((n - 10) & 0xff);
	h[9] = (char)((n - 10) >> 8);
	return gnn_write_atomic(path, (gnn_span[]){{h, (size_t)n}, {a->data, a->nbytes}}, 2);
}

static int
writeall(int fd, const gnn_span *sp)
{
	const char *p = sp->p;
	size_t n = sp->n;

	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

gnn_status
gnn_write_atomic(const char *path, const gnn_span *parts, int nparts)
{
	size_t len = strlen(path) + sizeof ".tmp" + 8;
	char *tmp = gnn_malloc(len);
	/* a name unlikely to collide; O_EXCL makes a collision merely a retry */
	uint64_t x = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&len;
	const char *what = "create";
	int fd = -1, err;

	if (!tmp)
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory", path);
	for (int i = 0; i < 100 && fd < 0; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		snprintf(tmp, len, "%s.tmp%08x", path, (unsigned)(x >> 32));
		/* 0666 lets the umask decide, as for any new file */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		goto fail;
	what = "write";
	for (int i = 0; i < nparts; i++)
		if (writeall(fd, &parts[i]) != 0)
			goto fail;
	/* data must be on disk before the rename makes it the file */
	if (fsync(fd) != 0)
		goto fail;
	err = close(fd);
	fd = -1;
	if (err != 0)
		goto fail;
	what = "rename";
	if (rename(tmp, path) != 0)
		goto fail;
	gnn_free(tmp, len);
	return GNN_OK;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	if (strcmp(what, "create") != 0)
		unlink(tmp);
	gnn_fail(GNN_ERR_IO, "%s: cannot %s %s: %s", path, what, tmp, strerror(err));
	gnn_free(tmp, len);
	return GNN_ERR_IO;
}
