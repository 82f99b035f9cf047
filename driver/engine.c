/*
 * Building a model into a shared object for gnnrun: the generated source
 * and header go to a private temporary directory, the target's compiler
 * makes model.so there (the same flags as gnncc's objects, plus -shared),
 * and dlopen loads it.  The runtime's symbols resolve to gnnrun's own
 * copy (gnnrun exports them), so errors set inside the model reach
 * gnn_errmsg() here.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "engine.h"
#include "toolchain.h"

static int
writesources(Mod *m, const CodegenOpts *o, const char *src, const char *hdr)
{
	FILE *f;

	if (codegencheck(m, o))
		return -1;
	if (!(f = fopen(src, "w")))
		return -1;
	emitsource(f, m, o);
	if (fclose(f) != 0 || !(f = fopen(hdr, "w")))
		return -1;
	emitheader(f, m, o);
	return fclose(f) == 0 ? 0 : -1;
}

int
engineload(Engine *en, Mod *m, Fn *fn, int target, const char *source)
{
	CodegenOpts o = {.target = target, .source = source, .header = "model.h"};
	char sym[512];

	if (enginebuild(en, m, &o, false, "gnnrun") < 0)
		return -1;
	snprintf(sym, sizeof sym, "%s_desc", fn->name);
	if (!(en->desc = (const gnn_model_desc *)dlsym(en->handle, sym))) {
		fprintf(stderr, "gnnrun: error: the compiled model has no %s\n", sym);
		engineclose(en);
		return -1;
	}
	return 0;
}

int
enginebuild(Engine *en, Mod *m, const CodegenOpts *co, bool openmp, const char *who)
{
	int target = co->target;
	bool cuda = target == TargetCUDA;
	char *src = tempname(cuda ? "model.cu" : "model.c");
	char *hdr = tempname("model.h");
	char *so = tempname("model.so");
	char why[128], inc[4096];
	const char *cc;
	char *prog, *nvcc = NULL;
	Layout l;
	Cmd c = {0};
	int rc = -1;

	memset(en, 0, sizeof *en);
	if (writesources(m, co, src, hdr) < 0) {
		fprintf(stderr, "%s: error: cannot generate code\n", who);
		goto out;
	}
	if (!findlayout(&l)) {
		fprintf(stderr, "%s: error: cannot find the runtime headers (looked in %s)\n", who, l.where);
		goto out;
	}
	cc = cuda ? getenv("NVCC") : getenv("CC");
	if (cuda && !cc)
		cc = (nvcc = findprogram("nvcc")) ? nvcc : "/usr/local/cuda/bin/nvcc";
	if (!cuda && !cc)
		cc = "cc";
	cmdwords(&c, cc);
	if (!(prog = findprogram(c.argv[0]))) {
		fprintf(stderr, "%s: error: %s not found (the %s %s needs it)\n", who, c.argv[0], cuda ? "cuda" : "cpu",
		        strcmp(who, "gnnrun") == 0 ? "engine" : "target");
		cmdfree(&c);
		goto out;
	}
	free(c.argv[0]);
	c.argv[0] = prog;   /* runcmd does not search PATH */
	snprintf(inc, sizeof inc, "-I%s", l.includedir);
	if (cuda) {
		/* no C++ runtime in the object, as for gnncc's; only this GPU */
		cmdadd(&c, "-O2");
		cmdadd(&c, "-shared");
		cmdadd(&c, "-arch=native");
		cmdadd(&c, "-Xcompiler");
		cmdadd(&c, "-fPIC,-fno-threadsafe-statics,-fno-exceptions");
	} else {
		cmdadd(&c, "-std=c11");
		cmdadd(&c, "-O2");
		cmdadd(&c, "-fPIC");
		cmdadd(&c, "-shared");
		if (openmp)
			cmdadd(&c, "-fopenmp");
	}
	cmdadd(&c, inc);
	cmdadd(&c, src);
	cmdadd(&c, "-o");
	cmdadd(&c, so);
	if (!cuda)
		cmdadd(&c, "-lm");
#ifdef GNNCC_SANITIZE_CFLAGS
	/* a sanitized gnnrun loads a sanitized model */
	if (!cuda)
		cmdwords(&c, GNNCC_SANITIZE_CFLAGS);
#endif
	rc = runcmd(&c, why, sizeof why);
	cmdfree(&c);
	if (rc != 0) {
		fprintf(stderr, "%s: error: compiling the generated %s failed (%s)\n", who, src,
		        rc < 0 ? why : "see above");
		tempforget(src);
		rc = -1;
		goto out;
	}
	rc = -1;
	if (!(en->handle = dlopen(so, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "%s: error: cannot load the compiled model: %s\n", who, dlerror());
		goto out;
	}
	rc = 0;
out:
	/* the temporaries stay registered (removed at exit): only the names go */
	free(src);
	free(hdr);
	free(so);
	free(nvcc);
	return rc;
}

void
engineclose(Engine *en)
{
	if (en->handle)
		dlclose(en->handle);
	memset(en, 0, sizeof *en);
}
