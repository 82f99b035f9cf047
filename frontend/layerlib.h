/* The standard layer library, embedded into the compiler at build time
 * (cmake/embed.cmake writes the table from layers/ *.gnn). */
#ifndef GNNCC_LAYERLIB_H
#define GNNCC_LAYERLIB_H

#include <stddef.h>

typedef struct LayerSource {
	const char *name;   /* "layers/gcn.gnn": used in diagnostics */
	const char *text;
	size_t len;
} LayerSource;

extern const LayerSource layerlib[];  /* ends with a NULL name */

#endif
