/*
 * Building a model into a shared object for gnnrun: the generated source
 * and header go to a private temporary directory, the target's compiler
 * makes model.so there (the same flags as gnncc's objects, plus -shared),
 * and dlopen loads it.  The runtime's symbols resolve to gnnrun's own
 * copy (gnnrun exports them), so errors set inside the model reach
 * gnn_errmsg() here; gnnrun (and gnncc, for the tuner) exports those and
 * nothing else, so that no other library in the process, the CUDA
 * runtime inside a cuda object among them, binds to a name of the
 * compiler's (runtime/exports.list).  The cuda target on the emulated
 * device is built by the C++ compiler with libgnnemu.a inside the object
 * (runtime/emu).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "../runtime/gnnhalf.h"
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
engineload(Engine *en, Mod *m, Fn *fn, int target, int cpu, int gpumath, int emu, unsigned vendor, const char *source)
{
	CodegenOpts o = {.target = target, .cpu = cpu, .gpumath = gpumath, .vendor = vendor, .source = source, .header = "model.h"};
	char *sym;

	if (enginebuild(en, m, &o, false, emu, "gnnrun") < 0)
		return -1;
	sym = astrfmt(NULL, "%s_desc", fn->name);
	en->desc = (const gnn_model_desc *)dlsym(en->handle, sym);
	if (!en->desc) {
		fprintf(stderr, "gnnrun: error: the compiled model has no %s\n", sym);
		engineclose(en);
	}
	free(sym);
	return en->desc ? 0 : -1;
}

/*
 * $GNNCC_ENGINE_CACHE names a directory where compiled engines are kept,
 * keyed by a hash of the generated source and header, the compiler
 * command and the runtime's files (size and time), so that a test suite
 * running one model on many graphs compiles it once.  Returns the cached
 * object's path for this build (which may not exist yet), or NULL.
 */
static uint64_t
hashfile(uint64_t h, const char *path, bool contents)
{
	struct stat st;
	char buf[4096];
	size_t n, i;
	FILE *f;

	if (!contents)
		h = hashstr(h, path);   /* the runtime's files; sources are temporaries */
	if (stat(path, &st) != 0)
		return h;
	if (!contents) {
		snprintf(buf, sizeof buf, "%lld:%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		         (long)st.st_mtim.tv_nsec);
		return hashstr(h, buf);
	}
	if (!(f = fopen(path, "rb")))
		return h;
	while ((n = fread(buf, 1, sizeof buf - 1, f)) > 0) {
		for (i = 0; i < n; i++)          /* NULs in a source: hash them too */
			if (!buf[i])
				buf[i] = 1;
		buf[n] = 0;
		h = hashstr(h, buf);
	}
	fclose(f);
	return h;
}

static char *
cachedobject(const Cmd *c, const Layout *l, const char *src, const char *hdr, const char *so, const char *emulib)
{
	const char *dir = getenv("GNNCC_ENGINE_CACHE");
	uint64_t h = 0xcbf29ce484222325ull;
	char *p;
	int i;

	if (!dir || !*dir)
		return NULL;
	/* the words, but not the temporary paths, which differ every run */
	for (i = 0; i < c->argc; i++)
		if (strcmp(c->argv[i], src) != 0 && strcmp(c->argv[i], so) != 0) {
			size_t n = strlen(c->argv[i]);
			h = hashstr(h, c->argv[i]);
			/* the libraries linked in (gnnrt_cuda, the emulated vendor libraries) */
			if (n > 2 && strcmp(c->argv[i] + n - 2, ".a") == 0)
				h = hashfile(h, c->argv[i], false);
			/* a precompiled prelude (emucommand): its .gch */
			if (i > 0 && strcmp(c->argv[i - 1], "-include") == 0) {
				char *gch = astrfmt(NULL, "%s.gch", c->argv[i]);
				h = hashfile(h, gch, false);
				free(gch);
			}
		}
	h = hashfile(h, src, true);
	h = hashfile(h, hdr, true);
	p = astrfmt(NULL, "%s/gnnrt.h", l->includedir);
	h = hashfile(h, p, false);
	free(p);
	p = astrfmt(NULL, "%s/philox.h", l->includedir);   /* dropout_train's generator */
	h = hashfile(h, p, false);
	free(p);
	p = astrfmt(NULL, "%s/gnnhalf.h", l->includedir);  /* 16-bit stores' rounding */
	h = hashfile(h, p, false);
	free(p);
	p = astrfmt(NULL, "%s/cuda_runtime.h", l->emuincludedir);
	h = hashfile(h, p, false);
	free(p);
	if (emulib)
		h = hashfile(h, emulib, false);
	return astrfmt(NULL, "%s/%016llx.so", dir, (unsigned long long)h);
}

int
enginebuild(Engine *en, Mod *m, const CodegenOpts *co, bool openmp, int emu, const char *who)
{
	int target = co->target;
	bool cuda = target == TargetCUDA;
	char *src = tempname(cuda ? "model.cu" : "model.c");
	char *hdr = tempname("model.h");
	char *so = tempname("model.so");
	char *why = NULL, *inc;
	const char *cc;
	char *prog, *nvcc = NULL, *emulib = NULL, *cudalib = NULL, *cached = NULL;
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
	if (cuda && emu) {
		/* the emulated device: C++ against gnnemu, libgnnemu.a inside */
		if (!emucommand(&c, emu, &l, &why)) {
			fprintf(stderr, "%s: error: %s\n", who, why);
			goto out;
		}
		emulib = astrfmt(NULL, "%s/libgnnemu.a", l.libdir);
		cmdadd(&c, "-shared");
		cmdadd(&c, src);
		cmdadd(&c, "-x");
		cmdadd(&c, "none");
		vendorlink(&c, co->vendor, emu, l.libdir, NULL);
		cmdadd(&c, emulib);
		cmdadd(&c, "-o");
		cmdadd(&c, so);
		cmdadd(&c, "-lm");
		goto compile;
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
	if (cuda) {
		/* no C++ runtime in the object, as for gnncc's; only this GPU */
		cmdadd(&c, "-O2");
		cmdadd(&c, "-shared");
		cmdadd(&c, "-arch=native");
		cmdadd(&c, "-Xcompiler");
		cmdadd(&c, "-fPIC,-fno-threadsafe-statics,-fno-exceptions");
	} else {
		cpuflags(&c, co->cpu, openmp);
		cmdadd(&c, "-shared");
	}
	cmdadd(&c, inc = astrfmt(NULL, "-I%s", l.includedir));
	free(inc);
	cmdadd(&c, src);
	if (cuda) {
		/* the runtime's CUDA device layer goes inside the object */
		cudalib = emalloc(strlen(l.libdir) + sizeof "/libgnnrt_cuda.a");
		sprintf(cudalib, "%s/libgnnrt_cuda.a", l.libdir);
		cmdadd(&c, cudalib);
		if (co->vendor) {
			char *dir = cudalibdir(c.argv[0]);
			vendorlink(&c, co->vendor, 0, l.libdir, dir);
			free(dir);
		}
	}
	cmdadd(&c, "-o");
	cmdadd(&c, so);
	if (!cuda)
		cmdadd(&c, "-lm");
#ifdef GNNCC_SANITIZE_CFLAGS
	/* a sanitized gnnrun loads a sanitized model */
	if (!cuda)
		cmdwords(&c, GNNCC_SANITIZE_CFLAGS);
#endif
compile:
	if ((cached = cachedobject(&c, &l, src, hdr, so, emulib)) && access(cached, R_OK) == 0) {
		cmdfree(&c);
		free(so);
		so = cached;
		cached = NULL;
		goto load;
	}
	rc = runcmd(&c, &why);
	cmdfree(&c);
	if (rc != 0) {
		fprintf(stderr, "%s: error: compiling the generated %s failed (%s)\n", who, src,
		        rc < 0 ? why : "see above");
		tempforget(src);
		rc = -1;
		goto out;
	}
	if (cached)
		(void)copyfile(so, cached);     /* atomic; a cache that fails is no cache */
load:
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
	free(emulib);
	free(cudalib);
	free(cached);
	free(why);
	return rc;
}

void
engineclose(Engine *en)
{
	if (en->handle)
		dlclose(en->handle);
	memset(en, 0, sizeof *en);
}

/* --- values between the interpreter's form and the compiled models' ---- */

/* a's elements as doubles; false for a dtype that has none */
bool
arraydoubles(const gnn_array *a, double *out)
{
	int64_t i, n = gnn_array_numel(a);

	for (i = 0; i < n; i++)
		switch (a->dtype) {
		case GNN_F32: out[i] = ((const float *)a->data)[i]; break;
		case GNN_F64: out[i] = ((const double *)a->data)[i]; break;
		case GNN_I32: out[i] = ((const int32_t *)a->data)[i]; break;
		case GNN_I64: out[i] = (double)((const int64_t *)a->data)[i]; break;
		case GNN_BOOL: out[i] = ((const uint8_t *)a->data)[i] != 0; break;
		case GNN_U8: out[i] = ((const uint8_t *)a->data)[i]; break;
		case GNN_BF16: out[i] = gnn_ld_bf16(((const uint16_t *)a->data)[i]); break;
		case GNN_F16: out[i] = gnn_ld_f16(((const uint16_t *)a->data)[i]); break;
		default: return false;
		}
	return true;
}

void *
itensorbytes(const ITensor *t, gnn_dtype dt, size_t *nbytes)
{
	int64_t i, n = 1;
	void *p;
	int k;

	for (k = 0; k < t->rank; k++)
		n *= t->shape[k];
	*nbytes = (size_t)n * gnn_dtype_size(dt);
	if (!(p = malloc(*nbytes ? *nbytes : 1)))
		return NULL;
	for (i = 0; i < n; i++)
		switch (dt) {
		case GNN_F32: ((float *)p)[i] = (float)t->data[i]; break;
		case GNN_F64: ((double *)p)[i] = t->data[i]; break;
		case GNN_I32: ((int32_t *)p)[i] = (int32_t)t->data[i]; break;
		case GNN_I64: ((int64_t *)p)[i] = (int64_t)t->data[i]; break;
		/* a 16-bit input's words (totensor rounded its values) */
		case GNN_BF16: ((uint16_t *)p)[i] = gnn_st_bf16((float)t->data[i]); break;
		case GNN_F16: ((uint16_t *)p)[i] = gnn_st_f16((float)t->data[i]); break;
		default: ((uint8_t *)p)[i] = t->data[i] != 0; break;
		}
	return p;
}

gnn_status
igraphruntime(const IGraph *ig, bool rel, gnn_graph **g)
{
	int64_t *ei;
	gnn_status s;

	*g = NULL;
	if (!(ei = malloc((2 * ig->nedge + 1) * sizeof *ei)))
		return gnn_error(GNN_ERR_MEM, "out of memory");
	memcpy(ei, ig->src, ig->nedge * sizeof *ei);
	memcpy(ei + ig->nedge, ig->dst, ig->nedge * sizeof *ei);
	s = rel ? gnn_graph_relation_from_edge_index(g, ei, GNN_I64, ig->nedge, ig->nsrc, ig->nnode)
	        : gnn_graph_from_edge_index(g, ei, GNN_I64, ig->nedge, ig->nnode);
	free(ei);
	if (s == GNN_OK && ig->batch && (s = gnn_graph_set_batch(*g, ig->batch, GNN_I64, ig->ngraph)) != GNN_OK) {
		gnn_graph_destroy(*g);
		*g = NULL;
	}
	return s;
}

gnn_status
forwardoutputs(const gnn_model_desc *d, void *model, const void *const *in, IValue *outs)
{
	void **res = calloc(d->noutputs + 1, sizeof *res);
	int64_t shape[GNN_MAX_RANK], n;
	gnn_status s = GNN_OK;
	int i, k;

	if (!res)
		return gnn_error(GNN_ERR_MEM, "out of memory");
	for (i = 0; i < d->noutputs && s == GNN_OK; i++) {
		if ((s = d->output_shape(model, i, shape)) != GNN_OK)
			break;
		outs[i].kind = TTensor;
		outs[i].t.dtype = d->outputs[i].dtype == GNN_F64 ? DF64 : DF32;
		outs[i].t.rank = d->outputs[i].rank;
		for (n = 1, k = 0; k < d->outputs[i].rank; k++)
			n *= outs[i].t.shape[k] = shape[k];
		if (!(res[i] = malloc(n * gnn_dtype_size(d->outputs[i].dtype) + 1)) ||
		    !(outs[i].t.data = malloc((n + 1) * sizeof(double))))
			s = gnn_error(GNN_ERR_MEM, "out of memory");
	}
	if (s == GNN_OK)
		s = d->forward_host(model, in, res);
	for (i = 0; i < d->noutputs && s == GNN_OK; i++) {
		gnn_array a = {.dtype = d->outputs[i].dtype, .rank = outs[i].t.rank, .data = res[i]};
		memcpy(a.shape, outs[i].t.shape, sizeof outs[i].t.shape[0] * a.rank);
		arraydoubles(&a, outs[i].t.data);
	}
	for (i = 0; i < d->noutputs; i++)
		free(res[i]);
	free(res);
	return s;
}
