/*
 * Bump allocator for everything the compiler builds: AST, IR, strings.
 * Nothing is freed piecemeal; a whole arena goes at once (QBE's Pfn).
 * Large requests get a chunk of their own so the bump chunks stay small.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum { ChunkSize = 64 * 1024, Align = 16 };

typedef struct Chunk {
	struct Chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char mem[];
} Chunk;

struct Arena {
	Chunk *head;
};

Arena *
arena_new(void)
{
	return emalloc(sizeof(Arena));
}

void *
arena_alloc(Arena *a, size_t n)
{
	Chunk *c;
	size_t size;
	void *p;

	n = (n + Align - 1) & ~(size_t)(Align - 1);
	if (n == 0)
		n = Align;
	c = a->head;
	if (!c || c->size - c->used < n) {
		size = n > ChunkSize / 4 ? n : ChunkSize;
		c = emalloc(sizeof(Chunk) + size);
		c->size = size;
		c->used = 0;
		if (size == n && a->head) {
			/* keep bumping in the current chunk */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->mem + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p;

	p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *
arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void
arena_free(Arena *a)
{
	Chunk *c, *next;

	if (!a)
		return;
	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

char *
vastrfmt(Arena *a, const char *fmt, va_list ap)
{
	va_list aq;
	char *s;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		die("astrfmt: cannot format '%s'", fmt);
	s = a ? arena_alloc(a, (size_t)n + 1) : emalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *
astrfmt(Arena *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vastrfmt(a, fmt, ap);
	va_end(ap);
	return s;
}
