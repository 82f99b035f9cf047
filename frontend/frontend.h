/*
 * The frontend's entry point: source files in, an IR module out.
 * It loads the embedded layer library, the file and its imports, then
 * sema.c instantiates layers and lowers every model of the file to one
 * IR function.  Errors are reported through errorat (diag.c); the result
 * is NULL when there was any.
 */
#ifndef GNNCC_FRONTEND_H
#define GNNCC_FRONTEND_H

#include "../ir/ir.h"

typedef struct FrontOpts {
	const char **incdir;     /* -I directories, searched after the importer's own */
	int nincdir;
	/* Called once per source file read (the main file, imports, library
	 * files), for dependency output (-MD).  May be NULL. */
	void (*ondep)(void *ud, const char *path);
	void *ud;
	/* training: with train, every model gets a training step (NAME_train)
	 * even without a train item; loss (a name, see lowerloss) replaces
	 * the train items' own.  NULL/false: only the file's train items. */
	bool train;
	const char *loss;
} FrontOpts;

/* Compile the models of the file at path.  NULL on error. */
Mod *compilefile(const char *path, const FrontOpts *o);
/* The same from text in memory (for tests and gnnrun); path names it. */
Mod *compiletext(const char *path, const char *text, size_t len, const FrontOpts *o);

#endif
