/*
** program.c: the host half of every compiled model, as the runtime's
** code rather than per-model generated code.  A generated file describes
** its model with tables (see gnn_program in gnnrt.h) and keeps only its
** kernels and forward's launch sequence; create, load_weights, bind,
** unbind, forward's prologue and epilogue, forward_host, output shapes
** and the tuning hooks are the walks below.
**
** Memory: parameters and load- and bind-time values live in host memory
** (gnn_malloc); forward's values share one arena on the device (host
** memory for the cpu device), laid out at bind from the buffer table's
** size polynomials: a value whose memory slot it reuses points into the
** other's space.  On a device with memory of its own, the parameters and
** what forward reads of the bind- and load-time values get device copies.
** Every failure leaves the model as it was (create: nothing; bind: no
** graph bound; load: the previous weights) with the message naming the
** model and the step.  Device memory running out is GNN_ERR_MEM naming
** what was asked for and what is free (gnn_devfail_); bind first checks
** that what it will hold fits in what the device has free (roomcheck),
** so that a graph too large fails before anything is allocated.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "internal.h"

/* polynomial k of the size table under the bound sizes */
static int64_t
poly(const gnn_instance *m, int k)
{
	const int64_t *p = m->prog->poly + k;
	int64_t n = p[0], v = 0, t;
	int i, j, deg;

	p++;
	for (i = 0; i < n; i++) {
		t = *p++;
		deg = (int)*p++;
		for (j = 0; j < deg; j++)
			t *= m->sym[*p++];
		v += t;
	}
	return v;
}

/* a GNN_STEP_SCRATCH's bytes under the bound sizes (at least a float) */
static size_t
scratchbytes(const gnn_instance *m, const gnn_step *st)
{
	int64_t floats = st->arg, rows;

	if (st->in > 0 && (rows = poly(m, st->size)) >= 0 && rows <= floats / st->in)   /* no overflow */
		floats = rows * st->in;
	return (size_t)(floats > 0 ? floats : 1) * sizeof(float);
}

static size_t
bufbytes(const gnn_instance *m, int b)
{
	const gnn_buffer *d = &m->prog->buf[b];

	return (size_t)poly(m, d->size) * gnn_dtype_size((gnn_dtype)d->dtype);
}

/* does forward read buffer b from a device copy? */
static int
devcopy(const gnn_instance *m, int b)
{
	const gnn_buffer *d = &m->prog->buf[b];

	return m->prog->dev->separate && (d->flags & GNN_BUF_DEVICE) &&
	       (d->kind == GNN_BUF_PARAM || d->kind == GNN_BUF_LOAD || d->kind == GNN_BUF_BIND);
}

/* n bytes for people: "200 bytes", "1.5 MiB" */
static const char *
bytesword(char *buf, size_t len, size_t n)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, len, "%zu bytes", n);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

gnn_status
gnn_devfail_(const gnn_device *dev, int err, size_t need, const char *who, const char *what)
{
	size_t nfree, total;
	char a[32], b[32], c[32];

	if (err != dev->nomem)
		return gnn_error(GNN_ERR_CUDA, "%s: %s: %s", who, what, dev->errstr(err));
	dev->last_error();   /* CUDA keeps it as the last error: the next launch's check must not see it */
	if (!dev->meminfo || dev->meminfo(&nfree, &total))
		return need ? gnn_error(GNN_ERR_MEM, "%s: %s: out of device memory: needs %s", who, what,
		                        bytesword(a, sizeof a, need))
		            : gnn_error(GNN_ERR_MEM, "%s: %s: out of device memory", who, what);
	if (!need)
		return gnn_error(GNN_ERR_MEM, "%s: %s: out of device memory (%s free of %s)", who, what,
		                 bytesword(b, sizeof b, nfree), bytesword(c, sizeof c, total));
	return gnn_error(GNN_ERR_MEM, "%s: %s: out of device memory: needs %s, %s free (of %s)", who, what,
	                 bytesword(a, sizeof a, need), bytesword(b, sizeof b, nfree), bytesword(c, sizeof c, total));
}

static gnn_status
deverr(const gnn_instance *m, const char *what, int err)
{
	return gnn_devfail_(m->prog->dev, err, 0, m->prog->name, what);
}

/* n bytes of the device's memory at *p, for what */
static gnn_status
devmem(const gnn_instance *m, const char *what, void **p, size_t n)
{
	int err = m->prog->dev->alloc(p, n);

	return err ? gnn_devfail_(m->prog->dev, err, n, m->prog->name, what) : GNN_OK;
}

/* the device memory an allocation of n bytes takes: 256-byte units, as
 * cudaMalloc aligns (and the arena places) */
static size_t
units(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

/* zeroed memory through the runtime's allocator (gnn_malloc); n > 0 */
static void *
zalloc(size_t n)
{
	void *p = gnn_malloc(n);

	if (p)
		memset(p, 0, n);
	return p;
}

/* the bytes of an instance's arrays, one block (8-byte slots, then sel) */
static size_t
arraybytes(const gnn_program *p)
{
	size_t slots = (size_t)p->nsym + 3 * (size_t)p->nbuf + (size_t)p->ngraph + 3 * (size_t)p->nseg +
	               (size_t)(p->ninput + p->noutput);

	return slots * 8 + ((size_t)p->ntune + 1) * sizeof(int);
}

/* ---- create, load, destroy ------------------------------------------- */

/* the load-time values, from the parameters; uploaded where forward reads them */
gnn_status
gnn_prog_loadtime_(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	const char *ph = gnn_prof_phase_("load", p->name);
	int i, b, err = 0;

	for (i = 0; i < p->nload && !err; i++) {
		b = p->load[i].out;
		p->kernel(m, p->load[i].arg);
		if (devcopy(m, b))
			err = p->dev->copy(m->b[b], m->h[b], m->nb[b], GNN_H2D, m->stream, 0);
	}
	gnn_prof_phase_(ph, NULL);
	return err ? deverr(m, "uploading a value computed from the parameters", err) : GNN_OK;
}

/* forward's state (the forward section): fwdreset drops the graph and
 * the staging (unbind), fwdfree the rest (destroy); graphdrop the graph */
static void fwdreset(gnn_instance *m);
static void fwdfree(gnn_instance *m);
static void graphdrop(gnn_instance *m);

/* forward's arena (destroy, and a bind that needs a larger one) */
static void
arenafree(gnn_instance *m)
{
	if (m->prog->dev->separate)
		m->prog->dev->free(m->arena);
	else
		gnn_free(m->arena, m->arenasize);
	m->arena = NULL;
	m->arenasize = 0;
}

void
gnn_prog_destroy(void *mv)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p;
	int i;

	if (!m)
		return;
	p = m->prog;
	gnn_trainer_free_(m);
	gnn_prog_unbind_(m);
	fwdfree(m);
	for (i = 0; m->h && i < p->nbuf; i++) {
		if (m->b && m->b[i] && p->dev->separate && (p->buf[i].kind == GNN_BUF_PARAM || p->buf[i].kind == GNN_BUF_LOAD) &&
		    devcopy(m, i))
			p->dev->free(m->b[i]);
		gnn_free(m->h[i], m->nb[i]);
	}
	arenafree(m);
	if (p->vendor)
		p->vendor(m, 0);
	p->dev->stream_destroy(m->stream);
	gnn_free(m->sym, arraybytes(p));
	gnn_free(m, m->size_);
}

gnn_status
gnn_prog_create(const gnn_program *p, size_t size, gnn_instance **out)
{
	gnn_instance *m;
	unsigned char *arr;
	int i, err;
	size_t k, n;
	const gnn_buffer *d;
	gnn_status s;

	if (!out)
		return gnn_error(GNN_ERR_ARG, "%s_create: out is NULL", p->name);
	*out = NULL;
	if ((err = gnn_prof_env_()) != GNN_OK)
		return (gnn_status)err;
	if (size < sizeof *m || !(m = (gnn_instance *)zalloc(size)))
		return gnn_error(GNN_ERR_MEM, "%s_create: out of memory", p->name);
	m->prog = p;
	m->size_ = size;
	if (!(arr = (unsigned char *)zalloc(arraybytes(p)))) {
		gnn_free(m, size);
		return gnn_error(GNN_ERR_MEM, "%s_create: out of memory", p->name);
	}
	m->sym = (int64_t *)arr;
	m->b = (void **)(m->sym + p->nsym);
	m->h = m->b + p->nbuf;
	m->nb = (size_t *)(m->h + p->nbuf);
	m->g = (gnn_graph **)(m->nb + p->nbuf);
	m->seg = (void **)(m->g + p->ngraph);
	m->hseg = m->seg + p->nseg;
	m->segnb = (size_t *)(m->hseg + p->nseg);
	m->stage = (void **)(m->segnb + p->nseg);
	m->sel = (int *)(m->stage + p->ninput + p->noutput);
	if ((err = p->dev->stream_create(&m->stream))) {
		gnn_prog_destroy(m);
		return gnn_error(GNN_ERR_CUDA, "%s_create: no %s device or stream: %s", p->name, p->dev->name,
		                 p->dev->errstr(err));
	}
	/* the vendor libraries' handles, bound to that stream */
	if (p->vendor && (s = p->vendor(m, 1)) != GNN_OK) {
		gnn_prog_destroy(m);
		return s;
	}
	/* parameters (their sizes are constant) and load-time values */
	for (i = 0; i < p->nbuf; i++) {
		d = &p->buf[i];
		if (d->kind != GNN_BUF_PARAM && d->kind != GNN_BUF_LOAD)
			continue;
		n = m->nb[i] = bufbytes(m, i);
		if (n && !(m->h[i] = zalloc(n))) {
			gnn_prog_destroy(m);
			return gnn_error(GNN_ERR_MEM, "%s_create: out of memory", p->name);
		}
		if (d->flags & GNN_BUF_FILL)
			for (k = 0; k < n / sizeof(float); k++)
				((float *)m->h[i])[k] = (float)d->init;
		m->b[i] = m->h[i];
		if (devcopy(m, i) && n) {
			m->b[i] = NULL;
			if ((s = devmem(m, "create: the parameters", &m->b[i], n)) != GNN_OK ||
			    ((err = p->dev->copy(m->b[i], m->h[i], n, GNN_H2D, m->stream, 0)) &&
			     (s = deverr(m, "create: uploading the parameters", err)) != GNN_OK)) {
				gnn_prog_destroy(m);
				return s;
			}
		}
	}
	if ((s = gnn_prog_loadtime_(m)) != GNN_OK) {
		gnn_prog_destroy(m);
		return s;
	}
	*out = m;
	return GNN_OK;
}

gnn_status
gnn_prog_load(void *mv, const char *path)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p;
	void **dst;
	gnn_status s;
	int i, b, err;

	if (!m || !path)
		return gnn_error(GNN_ERR_ARG, "%s_load_weights: NULL argument", m ? m->prog->name : "model");
	p = m->prog;
	if (!(dst = (void **)zalloc(((size_t)p->nparam + 1) * sizeof *dst)))
		return gnn_error(GNN_ERR_MEM, "%s_load_weights: out of memory", p->name);
	for (i = 0; i < p->nparam; i++)
		dst[i] = m->h[p->param[i]];
	s = gnn_load_params(path, p->params, p->nparam, dst);
	gnn_free(dst, ((size_t)p->nparam + 1) * sizeof *dst);
	if (s != GNN_OK)
		return s;
	/* queued forwards read the parameters being replaced */
	if ((err = p->dev->sync(m->stream)))
		return deverr(m, "load_weights: an earlier forward failed", err);
	graphdrop(m);   /* new weights: forward's graph is captured again */
	m->stale = 0;
	m->weightgen++;   /* a training step's once-time values may read them */
	for (i = 0; i < p->nparam; i++) {
		b = p->param[i];
		/* a device copy: forward's, or one that training made */
		if (m->b[b] != m->h[b] && m->nb[b] && (err = p->dev->copy(m->b[b], m->h[b], m->nb[b], GNN_H2D, m->stream, 0)))
			return deverr(m, "load_weights: upload failed", err);
	}
	return gnn_prog_loadtime_(m);
}

/* ---- bind ------------------------------------------------------------ */

static void devunbind(gnn_instance *m);

void
gnn_prog_unbind_(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	int i;

	fwdreset(m);   /* first: the graph holds pointers to what goes */
	devunbind(m);
	for (i = 0; i < p->nbuf; i++)
		if (p->buf[i].kind == GNN_BUF_BIND) {
			gnn_free(m->h[i], m->nb[i]);
			m->h[i] = m->b[i] = NULL;
			m->nb[i] = 0;
		}
	for (i = 0; i < p->ngraph; i++) {   /* g[0..nbound) are the caller's */
		if (i >= p->nbound)
			gnn_graph_destroy(m->g[i]);
		m->g[i] = NULL;
	}
	for (i = 0; i < p->nseg; i++) {
		gnn_free(m->hseg[i], m->segnb[i]);
		m->hseg[i] = m->seg[i] = NULL;
		m->segnb[i] = 0;
	}
	m->bound = 0;
	m->keep = 0;   /* the once-time values went with the bind */
}

/* the bytes of the segment plan a SEGPLAN, EDGEPLAN or COUNTS step makes,
 * whose graph value has n nodes and e edges */
static size_t
segbytes(const gnn_instance *m, const gnn_step *st, int64_t n, int64_t e)
{
	switch (st->op) {
	case GNN_STEP_SEGPLAN: return (size_t)(poly(m, st->size) + 1) * sizeof(int64_t) + bufbytes(m, st->in);
	case GNN_STEP_EDGEPLAN: return (size_t)(n + 1 + e) * sizeof(int64_t);
	default: n = poly(m, st->size); return (size_t)(n > 0 ? n : 1) * sizeof(int64_t);
	}
}

/* a PERMUTE step's rows: of its array, and of its copy (an index's
 * int32 where ix32) */
static size_t
permrow(const gnn_instance *m, const gnn_step *st)
{
	return (size_t)st->fill * gnn_dtype_size(m->prog->buf[st->arg].dtype);
}

static size_t
permoutrow(const gnn_instance *m, const gnn_step *st)
{
	return st->op == GNN_STEP_PERMUTE_INDEX && m->ix32 ? sizeof(int32_t) * (size_t)st->fill : permrow(m, st);
}

static gnn_status
segalloc(gnn_instance *m, int i, size_t n)
{
	m->segnb[i] = n;
	if (!(m->hseg[i] = zalloc(n)))
		return gnn_error(GNN_ERR_MEM, "%s_bind: out of memory", m->prog->name);
	return GNN_OK;
}

/*
** Bind steps.  Each kind has two implementations side by side, one case
** in each switch: hoststep() works on host memory (the cpu target, and a
** separate device without a gnn_devbind, whose results layout() uploads);
** devstep() runs on the device through dev->bind, into device memory of
** its own, reading back only O(1) sizes, so that bind's host work does
** not grow with the graph.  A new kind gets a case in both.
*/
static gnn_status
hoststep(gnn_instance *m, const gnn_step *st)
{
	const gnn_program *p = m->prog;
	gnn_graph *g = st->in >= 0 && st->in < p->ngraph ? m->g[st->in] : NULL;
	int64_t n, k;
	gnn_status s = GNN_OK;

	/* the host graph's CSR, built on first use (graph.c) */
	if ((st->op == GNN_STEP_EDGEPLAN || st->op == GNN_STEP_IN_DEGREE || st->op == GNN_STEP_OUT_DEGREE ||
	     st->op == GNN_STEP_GCN_NORM) && (s = gnn_graph_csr_(g)) != GNN_OK)
		return s;
	switch (st->op) {
	case GNN_STEP_ADD_SELF_LOOPS: return gnn_graph_add_self_loops(g, &m->g[st->out]);
	case GNN_STEP_REMOVE_SELF_LOOPS: return gnn_graph_remove_self_loops(g, &m->g[st->out]);
	case GNN_STEP_ADD_REMAINING_SELF_LOOPS:
		return gnn_graph_add_remaining_self_loops(g, (float)st->fill, &m->g[st->out]);
	case GNN_STEP_DERIVE:
		m->sym[st->arg] = gnn_graph_num_edges(g) - poly(m, st->size);
		return GNN_OK;
	case GNN_STEP_SEGPLAN:
		n = poly(m, st->size);
		k = (int64_t)(m->nb[st->in] / sizeof(int64_t));
		if ((s = segalloc(m, st->out, segbytes(m, st, 0, 0))) != GNN_OK)
			return s;
		return gnn_segment_plan((const int64_t *)m->h[st->in], k, n, (int64_t *)m->hseg[st->out],
		                        (int64_t *)m->hseg[st->out] + n + 1);
	case GNN_STEP_EDGEPLAN:
		n = gnn_graph_num_nodes(g);
		k = gnn_graph_num_edges(g);
		if ((s = segalloc(m, st->out, segbytes(m, st, n, k))) != GNN_OK)
			return s;
		memcpy(m->hseg[st->out], gnn_graph_rowptr(g), (size_t)(n + 1) * sizeof(int64_t));
		if (k)
			memcpy((int64_t *)m->hseg[st->out] + n + 1, gnn_graph_perm(g), (size_t)k * sizeof(int64_t));
		return GNN_OK;
	case GNN_STEP_COUNTS:
		return segalloc(m, st->out, segbytes(m, st, 0, 0));
	case GNN_STEP_SPLITPLAN: {
		const int64_t *seg = (const int64_t *)m->hseg[st->in];
		int64_t *plan;
		size_t nb;
		n = poly(m, st->size);   /* the segment plan's rows */
		if ((s = gnn_split_plan(seg, n, st->arg, &plan, &nb)) != GNN_OK)
			return s;
		m->hseg[st->out] = plan;
		m->segnb[st->out] = nb;
		return GNN_OK;
	}
	case GNN_STEP_SPLITBUF: {
		/* device-only scratch (segdev 2): no host copy */
		const int64_t *plan = (const int64_t *)m->hseg[st->in];
		m->segnb[st->out] = (size_t)(plan[GNN_SPLIT_NITEMS] + plan[GNN_SPLIT_NLONG]) * (size_t)st->arg * sizeof(float);
		if (!m->segnb[st->out])
			m->segnb[st->out] = sizeof(float);
		return GNN_OK;
	}
	case GNN_STEP_SCRATCH:
		/* device-only scratch (segdev 2) */
		m->segnb[st->out] = scratchbytes(m, st);
		return GNN_OK;
	case GNN_STEP_PERMUTE:
	case GNN_STEP_PERMUTE_INDEX: {
		/* row j of the copy is the plan's j-th edge's row of the array */
		const int64_t *seg = (const int64_t *)m->hseg[st->in];
		size_t row = permrow(m, st), orow = permoutrow(m, st);
		const char *x = (const char *)m->h[st->arg];
		char *o;
		n = poly(m, st->size);
		k = seg[n];
		if ((s = segalloc(m, st->out, k * orow > 0 ? (size_t)k * orow : 1)) != GNN_OK)
			return s;
		o = (char *)m->hseg[st->out];
		for (int64_t j = 0; j < k; j++) {
			int64_t e = seg[n + 1 + j];
			if (e < 0 || (size_t)(e + 1) * row > m->nb[st->arg]) {
				/* the plan and the array come from one graph: a bug */
				fprintf(stderr, "gnnrt: %s: bind: edge %lld of a plan outside its array\n", p->name, (long long)e);
				abort();
			}
			if (orow < row)   /* an index whose ids fit int32 (ix32) */
				((int32_t *)o)[j] = (int32_t)((const int64_t *)x)[e];
			else
				memcpy(o + (size_t)j * row, x + (size_t)e * row, row);
		}
		return GNN_OK;
	}
	default:
		break;
	}
	/* the rest make buffer out */
	m->nb[st->out] = bufbytes(m, st->out);
	if (m->nb[st->out] && !(m->h[st->out] = zalloc(m->nb[st->out])))
		return gnn_error(GNN_ERR_MEM, "%s_bind: out of memory", p->name);
	m->b[st->out] = m->h[st->out];
	if (!m->nb[st->out])
		return GNN_OK;
	switch (st->op) {
	case GNN_STEP_SRC: memcpy(m->h[st->out], gnn_graph_src(g), m->nb[st->out]); break;
	case GNN_STEP_DST: memcpy(m->h[st->out], gnn_graph_dst(g), m->nb[st->out]); break;
	case GNN_STEP_BATCH:
		if (gnn_graph_batch(g))
			memcpy(m->h[st->out], gnn_graph_batch(g), m->nb[st->out]);
		break;
	case GNN_STEP_IN_DEGREE: gnn_graph_in_degree(g, (float *)m->h[st->out]); break;
	case GNN_STEP_OUT_DEGREE: gnn_graph_out_degree(g, (float *)m->h[st->out]); break;
	case GNN_STEP_EDGE_WEIGHT: gnn_graph_edge_weight(g, (float *)m->h[st->out]); break;
	case GNN_STEP_GCN_NORM: gnn_graph_gcn_norm(g, (float *)m->h[st->out]); break;
	case GNN_STEP_KERNEL: p->kernel(m, st->arg); break;
	case GNN_STEP_ALLOC: break;   /* forward fills it */
	default:
		/* a table no gnncc writes: a bug, loudly */
		fprintf(stderr, "gnnrt: %s: bind step %d is unknown\n", p->name, st->op);
		abort();
	}
	return GNN_OK;
}

/* the device-bind state: graph values, then per segment whether bind
 * owns it (SegDev), and a host copy of its header too (SegHead: split
 * plans) */
enum { SegDev = 1, SegHead };

static size_t
dgbytes(const gnn_program *p)
{
	return (size_t)p->ngraph * sizeof(gnn_dgraph) + (size_t)p->nseg * sizeof(int64_t) + (size_t)p->nseg + 1;
}

/* per segment plan bind made on the device: its rows (n of rowptr[n+1]) */
static int64_t *
segrows(gnn_instance *m)
{
	return (int64_t *)(m->dg + m->prog->ngraph);
}

static unsigned char *
segown(gnn_instance *m)
{
	return (unsigned char *)(segrows(m) + m->prog->nseg);
}

/* free what devstep() made (unbind) */
static void
devunbind(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	int i;

	if (!m->dg)
		return;
	for (i = 0; i < p->nbuf; i++)
		if (p->buf[i].kind == GNN_BUF_BIND && !m->h[i]) {
			p->dev->free(m->b[i]);
			m->b[i] = NULL;
			m->nb[i] = 0;
		}
	for (i = 0; i < p->nseg; i++)
		if (segown(m)[i]) {
			if (segown(m)[i] == SegHead) {
				gnn_free(m->hseg[i], GNN_SPLIT_HEADER * sizeof(int64_t));
				m->hseg[i] = NULL;
			}
			p->dev->free(m->seg[i]);
			m->seg[i] = NULL;
			m->segnb[i] = 0;
		}
	for (i = 0; i < p->ngraph; i++)
		p->dev->bind->release(&m->dg[i]);
	gnn_free(m->dg, dgbytes(p));
	m->dg = NULL;
}

/* graph value i on the device; a bound graph (each relation of a
 * heterogeneous one) is uploaded on its first use */
static gnn_status
dgraph(gnn_instance *m, int i, gnn_dgraph **out)
{
	const gnn_program *p = m->prog;
	int err;

	*out = &m->dg[i];
	if (i < p->nbound && !m->dg[i].ready && (err = p->dev->bind->upload(&m->dg[i], m->g[i], m->stream)))
		return deverr(m, "bind: uploading the graph failed", err);
	return GNN_OK;
}

/* n bytes of device memory for buffer b (bind owns it: h[b] stays NULL) */
static gnn_status
devbuf(gnn_instance *m, int b)
{
	gnn_status s;

	m->nb[b] = bufbytes(m, b);
	if (m->nb[b] && (s = devmem(m, "bind: a graph tensor", &m->b[b], m->nb[b])) != GNN_OK) {
		m->nb[b] = 0;
		return s;
	}
	return GNN_OK;
}

static gnn_status
devseg(gnn_instance *m, int i, size_t n)
{
	gnn_status s;

	if ((s = devmem(m, "bind: a segment plan", &m->seg[i], n)) != GNN_OK)
		return s;
	m->segnb[i] = n;
	segown(m)[i] = SegDev;
	return GNN_OK;
}

/* does a step of kind op read graph value in? */
static int
graphin(int op)
{
	switch (op) {
	case GNN_STEP_ADD_SELF_LOOPS: case GNN_STEP_REMOVE_SELF_LOOPS: case GNN_STEP_ADD_REMAINING_SELF_LOOPS:
	case GNN_STEP_DERIVE: case GNN_STEP_SRC: case GNN_STEP_DST: case GNN_STEP_IN_DEGREE: case GNN_STEP_OUT_DEGREE:
	case GNN_STEP_EDGE_WEIGHT: case GNN_STEP_GCN_NORM: case GNN_STEP_EDGEPLAN:
		return 1;
	default:
		return 0;
	}
}

/* the last step that reads graph value g, or -1 */
static int
lastread(const gnn_program *p, int g)
{
	int i, last = -1;

	for (i = 0; i < p->nstep; i++)
		if (graphin(p->step[i].op) && p->step[i].in == g)
			last = i;
	return last;
}

/* does forward (or a later bind step) need bind buffer b on the device?
 * One that only a bind step reads (a scatter's index, whose segment
 * plan forward walks) goes once the steps are done. */
static int
bindkept(const gnn_program *p, int b)
{
	return p->buf[b].kind != GNN_BUF_BIND || (p->buf[b].flags & GNN_BUF_DEVICE);
}

/* after bind step i on the device: the graph values no later step reads
 * go (their edge indexes, weights and CSRs: forward reads the tensors
 * and plans made from them); after the last step, the bind buffers
 * forward does not read */
static gnn_status
devdrop(gnn_instance *m, int i)
{
	const gnn_program *p = m->prog;
	int g, b, err;

	for (g = 0; g < p->ngraph; g++)
		if (m->dg[g].ready && lastread(p, g) <= i)
			p->dev->bind->release(&m->dg[g]);
	if (i < p->nstep - 1)
		return GNN_OK;
	for (b = 0; b < p->nbuf; b++)
		if (!bindkept(p, b) && !m->h[b] && m->b[b]) {
			p->dev->free(m->b[b]);
			m->b[b] = NULL;
			m->nb[b] = 0;
		}
	/* plans forward reads only the row starts of (segdev 3: its walks
	 * read plan-order copies): the order goes, rowptr moves to memory
	 * of its own */
	for (b = 0; b < p->nseg; b++)
		if (p->segdev[b] == 3 && segown(m)[b] == SegDev) {
			size_t nb = (size_t)(segrows(m)[b] + 1) * sizeof(int64_t);
			void *rows = NULL;
			gnn_status s;
			if (nb >= m->segnb[b])
				continue;
			if ((s = devmem(m, "bind: a segment plan's row starts", &rows, nb)) != GNN_OK)
				return s;
			if ((err = p->dev->copy(rows, m->seg[b], nb, GNN_ANY, m->stream, 1))) {
				p->dev->free(rows);
				return deverr(m, "bind: a segment plan's row starts", err);
			}
			p->dev->free(m->seg[b]);
			m->seg[b] = rows;
			m->segnb[b] = nb;
		}
	return GNN_OK;
}

static gnn_status
devstep(gnn_instance *m, const gnn_step *st)
{
	const gnn_program *p = m->prog;
	const gnn_devbind *db = p->dev->bind;
	gnn_dgraph *g = NULL;
	int64_t n, k, bad = -1, badval = 0;
	gnn_status s = GNN_OK;
	int err = 0, what;

	if (graphin(st->op) && (s = dgraph(m, st->in, &g)) != GNN_OK)
		return s;
	switch (st->op) {
	case GNN_STEP_ADD_SELF_LOOPS:
	case GNN_STEP_REMOVE_SELF_LOOPS:
	case GNN_STEP_ADD_REMAINING_SELF_LOOPS:
		what = st->op == GNN_STEP_ADD_SELF_LOOPS ? GNN_DB_ADD_LOOPS :
		       st->op == GNN_STEP_REMOVE_SELF_LOOPS ? GNN_DB_REMOVE_LOOPS : GNN_DB_REMAINING_LOOPS;
		if ((err = db->selfloops(&m->dg[st->out], g, what, (float)st->fill, m->stream)))
			return deverr(m, "bind: self loops", err);
		return GNN_OK;
	case GNN_STEP_DERIVE:
		m->sym[st->arg] = g->e - poly(m, st->size);
		return GNN_OK;
	case GNN_STEP_SEGPLAN:
		n = poly(m, st->size);
		k = (int64_t)(m->nb[st->in] / sizeof(int64_t));
		if ((s = devseg(m, st->out, segbytes(m, st, 0, 0))) != GNN_OK)
			return s;
		segrows(m)[st->out] = n;
		if ((err = db->segplan((int64_t *)m->seg[st->out], (const int64_t *)m->b[st->in], k, n, &bad, &badval, m->stream)))
			return deverr(m, "bind: segment plan", err);
		if (bad >= 0)   /* gnn_segment_plan's message */
			return gnn_error(GNN_ERR_RANGE, "segment index: entry %lld is %lld, outside [0, %lld)", (long long)bad,
			                 (long long)badval, (long long)n);
		return GNN_OK;
	case GNN_STEP_EDGEPLAN:
		if ((s = devseg(m, st->out, segbytes(m, st, g->n, g->e))) != GNN_OK)
			return s;
		segrows(m)[st->out] = g->n;
		if ((err = db->csr(g, m->stream)) ||
		    (err = p->dev->copy(m->seg[st->out], g->csr, m->segnb[st->out], GNN_ANY, m->stream, 1)))
			return deverr(m, "bind: the graph's CSR", err);
		return GNN_OK;
	case GNN_STEP_COUNTS:
		return devseg(m, st->out, segbytes(m, st, 0, 0));
	case GNN_STEP_SPLITPLAN: {
		/* built on the device from the segment plan's rowptr; the host
		 * keeps the header, which the launches' sizes come from */
		int64_t *plan = NULL;
		n = poly(m, st->size);
		if (!(m->hseg[st->out] = gnn_malloc(GNN_SPLIT_HEADER * sizeof(int64_t))))
			return gnn_error(GNN_ERR_MEM, "%s_bind: out of memory", p->name);
		segown(m)[st->out] = SegHead;
		err = db->splitplan(&plan, &m->segnb[st->out], (int64_t *)m->hseg[st->out], (const int64_t *)m->seg[st->in], n,
		                    st->arg, m->stream);
		m->seg[st->out] = plan;
		return err ? deverr(m, "bind: split plan", err) : GNN_OK;
	}
	case GNN_STEP_PERMUTE:
	case GNN_STEP_PERMUTE_INDEX: {
		/* the array's rows are its edges (k of them); the plan's order
		 * follows its n + 1 row starts */
		size_t row = permrow(m, st), orow = permoutrow(m, st);
		k = row ? (int64_t)(m->nb[st->arg] / row) : 0;
		n = poly(m, st->size);
		if ((s = devseg(m, st->out, k > 0 ? (size_t)k * orow : 1)) != GNN_OK)
			return s;
		if ((err = k > 0 ? db->permute(m->seg[st->out], (const int64_t *)m->seg[st->in] + n + 1, k, m->b[st->arg], row,
		                               orow < row, m->stream)
		                 : db->zero(m->seg[st->out], 1, m->stream)))   /* no edges: a byte, as the host's */
			return deverr(m, "bind: an edge array in a plan's order", err);
		return GNN_OK;
	}
	case GNN_STEP_SPLITBUF:
	case GNN_STEP_SCRATCH:
		return hoststep(m, st);   /* sizes from the plan's header, or constant */
	default:
		break;
	}
	/* the rest make buffer out */
	if ((s = devbuf(m, st->out)) != GNN_OK || !m->nb[st->out])
		return s;
	switch (st->op) {
	case GNN_STEP_SRC: err = db->tensor(m->b[st->out], GNN_DB_SRC, g, m->stream); break;
	case GNN_STEP_DST: err = db->tensor(m->b[st->out], GNN_DB_DST, g, m->stream); break;
	case GNN_STEP_BATCH:
		/* the bound graph's (derived graphs keep its nodes), one copy;
		 * zeros without one, as on the host */
		if (gnn_graph_batch(m->g[0]))
			err = p->dev->copy(m->b[st->out], gnn_graph_batch(m->g[0]), m->nb[st->out], GNN_H2D, m->stream, 0);
		else
			err = db->zero(m->b[st->out], m->nb[st->out], m->stream);
		break;
	case GNN_STEP_IN_DEGREE: err = db->tensor(m->b[st->out], GNN_DB_IN_DEGREE, g, m->stream); break;
	case GNN_STEP_OUT_DEGREE: err = db->tensor(m->b[st->out], GNN_DB_OUT_DEGREE, g, m->stream); break;
	case GNN_STEP_EDGE_WEIGHT: err = db->tensor(m->b[st->out], GNN_DB_EDGE_WEIGHT, g, m->stream); break;
	case GNN_STEP_GCN_NORM: err = db->tensor(m->b[st->out], GNN_DB_GCN_NORM, g, m->stream); break;
	case GNN_STEP_KERNEL:
		/* the generated device kernel, on the model's stream */
		p->kernel(m, st->arg);
		err = p->dev->last_error();
		break;
	case GNN_STEP_ALLOC:   /* forward fills it */
		break;
	default:
		fprintf(stderr, "gnnrt: %s: bind step %d is unknown\n", p->name, st->op);
		abort();
	}
	return err ? deverr(m, "bind", err) : GNN_OK;
}

/* one bind step, where bind runs */
static gnn_status
step(gnn_instance *m, const gnn_step *st)
{
	return m->dg ? devstep(m, st) : hoststep(m, st);
}

/* room for n bytes at the arena offset *off (256-byte aligned), and rz
 * more after them: a device with redzones (the emulator's memcheck) keeps
 * the buffers of one arena apart, so that an access past one of them is
 * not an access into the next; *len is n */
static size_t
place(size_t *off, size_t n, size_t rz, size_t *len)
{
	size_t at = *off;

	*off += units(n) + rz;
	*len = n;
	return at;
}

/* the places of an arena: buffers, segment plans (forward_host's staging
 * is not the arena's: only forward_host makes it, stagealloc) */
static size_t
nplaces(const gnn_program *p)
{
	return (size_t)(p->nbuf + p->nseg) + 1;
}

/* the bytes of arenaplan's at[]: offsets, then lengths */
static size_t
atbytes(const gnn_program *p)
{
	return 2 * nplaces(p) * sizeof(size_t);
}

/* is segment i a kernel's scratch whose memory others may share? */
static int
sharedscratch(const gnn_program *p, int i)
{
	return p->segkern && p->segdev[i] == 2 && p->segkern[i] >= 0;
}

/* is buffer i a forward slot (it owns memory in the arena)? */
static int
fwdslot(const gnn_program *p, int i)
{
	return p->buf[i].kind == GNN_BUF_FWD && p->buf[i].share < 0;
}

/* is buffer i an output that takes no arena memory (GNN_BUF_LAZY, where
 * memory is separate)?  A tuning build launches kernels alone, with no
 * caller's buffer to write into: there it keeps its slot. */
static int
lazyout(const gnn_program *p, int i)
{
	return fwdslot(p, i) && (p->buf[i].flags & GNN_BUF_LAZY) && p->dev->separate && !p->launch;
}

/* where scratch segment i (need bytes with its kernel's others) may
 * start: in the first gap between the forward slots live while its
 * kernel runs (gnn_program.seglive) where it fits, from the slots' start
 * (base), else past the last of them (segfloor; slots is the end of
 * them all) */
static size_t
scratchat(const gnn_program *p, int i, const size_t *at, size_t base, size_t slots, size_t rz, size_t need)
{
	const size_t *len = at + nplaces(p);
	int f = p->segfloor ? p->segfloor[i] : -1, b, n = 0;
	unsigned long long live = p->seglive ? p->seglive[i] : ~0ull;
	size_t o = base;

	/* (a tuning build places the returned values' slots, which the
	 * floors leave out: its scratch goes past them all) */
	if (f < 0 || p->launch)
		return slots;
	for (b = 0; b < p->nbuf && n < f; b++)
		if (fwdslot(p, b)) {
			if (!lazyout(p, b) && (n >= 64 || (live >> n & 1))) {
				if (o + need <= at[b])
					return o;
				o = at[b] + units(len[b]) + rz;   /* its end, as place() left it */
			}
			n++;
		}
	return o;
}

/* the arena's size, and in at[] the offsets in it of the buffers and the
 * segment plans, then (from at[nplaces]) their lengths in bytes (0: not
 * placed).  The regions held all through forward come first (the device
 * copies of bind-time values, the segment plans), then the forward slots
 * (memplan's), then the schedules' scratch: each kernel's from one
 * offset, the kernels' over one another (they run one after another),
 * and over the slots that hold nothing live while that kernel runs. */
static size_t
arenaplan(gnn_instance *m, size_t *at)
{
	const gnn_program *p = m->prog;
	const gnn_device *dev = p->dev;
	size_t off = 0, base, end, *len = at + nplaces(p), rz = dev->redzone && dev->redzones && dev->redzones() ? 256 : 0;
	int i;

	for (i = 0; i < p->nbuf; i++)
		if (dev->separate && !m->dg && p->buf[i].kind == GNN_BUF_BIND && devcopy(m, i))
			at[i] = place(&off, bufbytes(m, i), rz, &len[i]);
	for (i = 0; i < p->nseg; i++)
		if (dev->separate && p->segdev[i] && !(m->dg && segown(m)[i]) && !sharedscratch(p, i))
			at[p->nbuf + i] = place(&off, m->segnb[i], rz, &len[p->nbuf + i]);
	base = off;
	for (i = 0; i < p->nbuf; i++)
		if (fwdslot(p, i) && !lazyout(p, i))
			at[i] = place(&off, bufbytes(m, i), rz, &len[i]);
	end = off;
	for (i = 0; i < p->nseg; i++)
		if (dev->separate && sharedscratch(p, i) && !(m->dg && segown(m)[i])) {
			int j, first = 1;
			size_t o;
			for (j = 0; j < i && first; j++)
				first = !(sharedscratch(p, j) && p->segkern[j] == p->segkern[i]);
			if (!first)
				continue;   /* placed with its kernel's first */
			for (j = i, o = 0; j < p->nseg; j++)
				if (sharedscratch(p, j) && p->segkern[j] == p->segkern[i])
					o += units(m->segnb[j]) + rz;
			o = scratchat(p, i, at, base, off, rz, o);
			for (j = i; j < p->nseg; j++)
				if (sharedscratch(p, j) && p->segkern[j] == p->segkern[i])
					at[p->nbuf + j] = place(&o, m->segnb[j], rz, &len[p->nbuf + j]);
			if (o > end)
				end = o;
		}
	return end ? end : 256;   /* never an empty arena: offsets become pointers into it */
}

static gnn_status
layout(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	const gnn_device *dev = p->dev;
	size_t off, *at, nat = atbytes(p), nplace = nplaces(p), *len;
	gnn_status s;
	int i, err = 0;

	if (!(at = (size_t *)zalloc(nat)))
		return gnn_error(GNN_ERR_MEM, "%s_bind: out of memory", p->name);
	off = arenaplan(m, at);
	len = at + nplace;
	if (off > m->arenasize) {
		arenafree(m);
		if (dev->separate && (s = devmem(m, "bind: forward's arena", (void **)&m->arena, off)) != GNN_OK) {
			gnn_free(at, nat);
			return s;
		}
		if (!dev->separate && !(m->arena = (unsigned char *)gnn_malloc(off))) {
			gnn_free(at, nat);
			return gnn_error(GNN_ERR_MEM, "%s_bind: cannot allocate %zu bytes", p->name, off);
		}
		if (!dev->separate)
			gnn_hugepages_(m->arena, off);
		m->arenasize = off;
		m->narenas++;
	}
	if (dev->redzone && dev->redzones && dev->redzones()) {
		/* all of it a redzone but the buffers of this layout */
		dev->redzone(m->arena, m->arenasize, 1);
		for (i = 0; (size_t)i < nplace; i++)
			if (len[i])
				dev->redzone(m->arena + at[i], len[i], 0);
	}
	for (i = 0; i < p->nbuf; i++) {
		if (p->buf[i].kind == GNN_BUF_FWD && p->buf[i].share < 0)
			m->b[i] = lazyout(p, i) ? NULL : m->arena + at[i];   /* forward gives a lazy one its memory */
		else if (dev->separate && !m->dg && p->buf[i].kind == GNN_BUF_BIND && devcopy(m, i)) {
			m->b[i] = m->arena + at[i];
			if ((err = dev->copy(m->b[i], m->h[i], m->nb[i], GNN_H2D, m->stream, 0))) {
				gnn_free(at, nat);
				return deverr(m, "bind: upload failed", err);
			}
		}
	}
	for (i = 0; i < p->nbuf; i++)
		if (p->buf[i].kind == GNN_BUF_FWD && p->buf[i].share >= 0)
			m->b[i] = m->b[p->buf[i].share];
	for (i = 0; i < p->nseg; i++) {
		if (m->dg && segown(m)[i])
			continue;   /* made on the device by bind */
		m->seg[i] = m->hseg[i];
		if (dev->separate && p->segdev[i]) {
			m->seg[i] = m->arena + at[p->nbuf + i];
			if (p->segdev[i] != 2 && (err = dev->copy(m->seg[i], m->hseg[i], m->segnb[i], GNN_H2D, m->stream, 0))) {
				gnn_free(at, nat);
				return deverr(m, "bind: upload failed", err);
			}
		}
	}
	gnn_free(at, nat);
	return GNN_OK;
}

/*
** The device memory bind will hold, from the step table under the bound
** graph's sizes (a derived graph's edges follow from the self loops of
** the one it comes from): where bind works on the device (dg), the graph
** values' edge indexes and weights and the CSRs that edge plans copy,
** each until the last step that reads its graph (devdrop), the graph
** tensors (those forward does not read until the steps end) and the
** segment plans; the segment plans forward reads where bind works on the
** host.  Returns the most held at once over the steps, and in *end what
** is held after them, beside which layout places the arena; a scratch
** of known size (GNN_STEP_SCRATCH) is sized here for the arena's plan,
** which may lay it over dead forward slots.  Not counted: split plans
** and their scratch, whose sizes come out of the work, and the device's
** scratch while a step runs; their failures are caught where they
** happen.  ge: 5 * ngraph scratch slots.
*/
/* a graph value of e edges bind makes on the device: its edge index and
 * weights (w) */
static size_t
graphbytes(const gnn_instance *m, int64_t e, int w)
{
	return m->dg ? units((size_t)e * 2 * sizeof(int64_t)) + (w ? units((size_t)e * sizeof(float)) : 0) : 0;
}

static size_t
bindneed(gnn_instance *m, int64_t *ge, size_t *end)
{
	const gnn_program *p = m->prog;
	const gnn_step *st;
	int64_t *loops = ge + p->ngraph, *csr = loops + p->ngraph, *nodes = csr + p->ngraph, *w = nodes + p->ngraph;
	int i, g;
	size_t held = 0, peak, dropped = 0, shrink = 0, moved = 0, sb;

	/* the bound graphs (a heterogeneous graph's relations): each its own
	 * sizes; a derived graph keeps the nodes and weights of its input */
	for (g = 0; g < p->nbound; g++) {
		ge[g] = gnn_graph_num_edges(m->g[g]);
		loops[g] = gnn_graph_loops_(m->g[g]);
		nodes[g] = gnn_graph_num_nodes(m->g[g]);
		w[g] = gnn_graph_weight(m->g[g]) != NULL;
		held += graphbytes(m, ge[g], (int)w[g]);
	}
	peak = held;
	for (i = 0; i < p->nstep; i++) {
		int64_t n;
		st = &p->step[i];
		n = graphin(st->op) ? nodes[st->in] : 0;
		if (st->op == GNN_STEP_ADD_SELF_LOOPS || st->op == GNN_STEP_REMOVE_SELF_LOOPS ||
		    st->op == GNN_STEP_ADD_REMAINING_SELF_LOOPS) {
			nodes[st->out] = n;
			w[st->out] = w[st->in];
		}
		switch (st->op) {
		case GNN_STEP_ADD_SELF_LOOPS:
			ge[st->out] = ge[st->in] + n;
			loops[st->out] = loops[st->in] + n;
			held += graphbytes(m, ge[st->out], (int)w[st->out]);
			break;
		case GNN_STEP_REMOVE_SELF_LOOPS:
			ge[st->out] = ge[st->in] - loops[st->in];
			loops[st->out] = 0;
			held += graphbytes(m, ge[st->out], (int)w[st->out]);
			break;
		case GNN_STEP_ADD_REMAINING_SELF_LOOPS:
			ge[st->out] = ge[st->in] - loops[st->in] + n;
			loops[st->out] = n;
			held += graphbytes(m, ge[st->out], (int)w[st->out]);
			break;
		case GNN_STEP_DERIVE:
			m->sym[st->arg] = ge[st->in] - poly(m, st->size);
			break;
		case GNN_STEP_EDGEPLAN:
			if (m->dg && !csr[st->in]) {
				csr[st->in] = (int64_t)units(segbytes(m, st, n, ge[st->in]));
				held += (size_t)csr[st->in];
			}
			/* fall through */
		case GNN_STEP_SEGPLAN:
		case GNN_STEP_COUNTS:
			sb = units(segbytes(m, st, n, st->op == GNN_STEP_EDGEPLAN ? ge[st->in] : 0));
			if (m->dg || p->segdev[st->out])
				held += sb;
			if (m->dg && p->segdev[st->out] == 3) {
				/* devdrop keeps only its row starts */
				size_t rows = units((size_t)((st->op == GNN_STEP_EDGEPLAN ? n : poly(m, st->size)) + 1) * sizeof(int64_t));
				shrink += sb - rows;
				if (rows > moved)
					moved = rows;
			}
			break;
		case GNN_STEP_PERMUTE:
		case GNN_STEP_PERMUTE_INDEX:
			/* an edge array's rows, in a device segment or the arena */
			if (m->dg || p->segdev[st->out])
				held += units(permrow(m, st) ? bufbytes(m, st->arg) / permrow(m, st) * permoutrow(m, st) : 1);
			break;
		case GNN_STEP_SPLITPLAN:
		case GNN_STEP_SPLITBUF:
			break;
		case GNN_STEP_SCRATCH:
			/* its size is known: sized now, roomcheck's arenaplan
			 * places it in the arena, over the slots it may share */
			m->segnb[st->out] = scratchbytes(m, st);
			break;
		default:   /* a graph tensor */
			if (m->dg) {
				held += units(bufbytes(m, st->out));
				if (!bindkept(p, st->out))
					dropped += units(bufbytes(m, st->out));
			}
			break;
		}
		if (held > peak)
			peak = held;
		/* devdrop's releases: the graphs read no more (one not made
		 * yet holds nothing; when it is made, it counts again) */
		for (g = 0; m->dg && g < p->ngraph; g++)
			if (loops[g] >= 0 && lastread(p, g) <= i) {
				held -= graphbytes(m, ge[g], (int)w[g]) + (size_t)csr[g];
				ge[g] = csr[g] = 0;
				loops[g] = -1;   /* gone */
			}
	}
	/* the last step's drops: the tensors forward does not read, then
	 * each plan's order (its row starts copied first) */
	if (held - dropped + moved > peak)
		peak = held - dropped + moved;
	*end = held - dropped - shrink;
	return peak;
}

/* the edges of the bound graphs together */
static int64_t
alledges(const gnn_instance *m)
{
	int64_t e = 0;

	for (int g = 0; g < m->prog->nbound; g++)
		e += gnn_graph_num_edges(m->g[g]);
	return e;
}

/* Before bind allocates: is there room for what it will hold?  A graph
 * that does not fit fails here, with what it needs and what is free. */
static gnn_status
roomcheck(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	const gnn_device *dev = p->dev;
	size_t need, end, nfree, total, nge = 5 * (size_t)p->ngraph * sizeof(int64_t), nat = atbytes(p), *at, arena;
	int64_t *ge;
	char what[96];

	if (!dev->separate || !dev->meminfo)
		return GNN_OK;
	ge = (int64_t *)zalloc(nge);
	at = (size_t *)zalloc(nat);
	if (!ge || !at) {
		gnn_free(ge, nge);
		gnn_free(at, nat);
		return gnn_error(GNN_ERR_MEM, "%s_bind: out of memory", p->name);
	}
	need = bindneed(m, ge, &end);
	arena = arenaplan(m, at);
	gnn_free(ge, nge);
	gnn_free(at, nat);
	if (arena > m->arenasize) {   /* layout would free the old one first */
		arenafree(m);
		if (end + units(arena) > need)
			need = end + units(arena);
	}
	if (dev->meminfo(&nfree, &total) || need <= nfree)
		return GNN_OK;
	if (p->nbound == 1)
		snprintf(what, sizeof what, "bind (a graph of %lld nodes and %lld edges)",
		         (long long)gnn_graph_num_nodes(m->g[0]), (long long)gnn_graph_num_edges(m->g[0]));
	else
		snprintf(what, sizeof what, "bind (%d graphs, %lld edges in all)", p->nbound, (long long)alledges(m));
	return gnn_devfail_(dev, dev->nomem, need, p->name, what);
}

/* binds made in this process: each bind's number (gnn_instance.bindgen) */
static uint64_t bindcount;

/* The graphs' sizes into the symbols they set, each checked against
** the size its input was compiled for (a constant: --specialize; a
** symbol an earlier graph set: N_paper of two relations) */
static gnn_status
bindsizes(gnn_instance *m, gnn_graph *const *graphs)
{
	const gnn_program *p = m->prog;
	static const char *const what[4] = {"nodes", "edges", "graphs", "source nodes"};
	int64_t have, want;
	int i, k, n = p->nbound, sym, size;

	for (k = 0; k < n; k++) {
		const int *b = p->bound + 8 * k;
		gnn_graph *g = graphs[k];
		for (i = 0; i < 4; i++) {
			have = i == 0 ? gnn_graph_num_nodes(g) : i == 1 ? gnn_graph_num_edges(g) :
			       i == 2 ? gnn_graph_num_graphs(g) : gnn_graph_num_src_nodes(g);
			sym = b[i], size = b[4 + i];
			if (i == 3 && sym < 0 && size < 0) {
				/* an input of one node type */
				if (have != gnn_graph_num_nodes(g))
					return gnn_error(GNN_ERR_SHAPE, "%s_bind: graph %d is a relation (%lld source nodes, %lld "
					                 "target nodes); the model takes a graph of one node type there", p->name, k,
					                 (long long)have, (long long)gnn_graph_num_nodes(g));
				continue;
			}
			if (sym >= 0 && m->sym[sym] < 0) {
				m->sym[sym] = have;
				continue;
			}
			want = sym >= 0 ? m->sym[sym] : size >= 0 ? poly(m, size) : have;
			if (have != want && n > 1)
				return gnn_error(GNN_ERR_SHAPE, "%s_bind: graph %d has %lld %s, where the model has %lld",
				                 p->name, k, (long long)have, what[i], (long long)want);
			if (have != want)
				return gnn_error(GNN_ERR_SHAPE, "%s_bind: the model was compiled for %lld %s, the graph has %lld",
				                 p->name, (long long)want, what[i], (long long)have);
		}
	}
	return GNN_OK;
}

/* Do the node ids of the bound graphs fit int32 (every gather's index
 * is one of them)?  GNNRT_WIDE_INDEX=1 says no, so that the int64 form
 * of the plan-order index copies runs on small graphs too (tests). */
static int
ix32(gnn_graph *const *graphs, int n)
{
	const char *env = getenv("GNNRT_WIDE_INDEX");

	if (env && *env == '1')
		return 0;
	for (int i = 0; i < n; i++)
		if (gnn_graph_num_nodes(graphs[i]) > INT32_MAX || gnn_graph_num_src_nodes(graphs[i]) > INT32_MAX)
			return 0;
	return 1;
}

static gnn_status
bind(void *mv, gnn_graph *const *graphs, int n)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p;
	gnn_status s;
	int i, err;

	if (!m || !graphs)
		return gnn_error(GNN_ERR_ARG, "%s_bind: NULL argument", m ? m->prog->name : "model");
	p = m->prog;
	if (n != p->nbound)
		return gnn_error(GNN_ERR_ARG, "%s_bind: the model takes %d graph%s, got %d", p->name, p->nbound,
		                 p->nbound == 1 ? "" : "s", n);
	for (i = 0; i < n; i++)
		if (!graphs[i])
			return gnn_error(GNN_ERR_ARG, "%s_bind: NULL argument", p->name);
	/* forwards still queued read what bind replaces */
	if ((err = p->dev->sync(m->stream)))
		return deverr(m, "bind: an earlier forward failed", err);
	gnn_prog_unbind_(m);
	for (i = 0; i < p->nsym; i++)
		m->sym[i] = -1;
	if ((s = bindsizes(m, graphs)) != GNN_OK)
		return s;
	for (i = 0; i < n; i++)
		m->g[i] = graphs[i];
	m->ix32 = ix32(graphs, n);
	if (p->dev->separate && p->dev->bind && !(m->dg = (gnn_dgraph *)zalloc(dgbytes(p)))) {
		gnn_prog_unbind_(m);
		return gnn_error(GNN_ERR_MEM, "%s_bind: out of memory", p->name);
	}
	for (i = 0; i < p->nstep; i++)
		if (p->step[i].op == GNN_STEP_KERNEL && p->dev->separate && !m->dg) {
			/* generated bind kernels of the cuda target are device code */
			gnn_prog_unbind_(m);
			return gnn_error(GNN_ERR_CUDA, "%s_bind: this runtime's %s device cannot bind on the device", p->name,
			                 p->dev->name);
		}
	if ((s = roomcheck(m)) != GNN_OK) {
		gnn_prog_unbind_(m);
		return s;
	}
	for (i = 0; i < p->nstep; i++) {
		if ((s = step(m, &p->step[i])) != GNN_OK) {
			gnn_prog_unbind_(m);
			return s;
		}
		if (m->dg && (s = devdrop(m, i)) != GNN_OK) {
			gnn_prog_unbind_(m);
			return s;
		}
	}
	if ((s = layout(m)) != GNN_OK) {
		gnn_prog_unbind_(m);
		return s;
	}
	m->bound = 1;
	m->nbinds++;
	m->bindgen = __atomic_add_fetch(&bindcount, 1, __ATOMIC_RELAXED);
	return GNN_OK;
}

gnn_status
gnn_prog_bind_graphs(void *mv, gnn_graph *const *graphs, int n)
{
	/* for the profile's records, bind's own kernels' too (devbind.cu) */
	const char *ph = gnn_prof_phase_("bind", mv ? ((gnn_instance *)mv)->prog->name : NULL);
	gnn_status s = bind(mv, graphs, n);

	gnn_prof_phase_(ph, NULL);
	return s;
}

gnn_status
gnn_prog_bind(void *mv, gnn_graph *graph)
{
	return gnn_prog_bind_graphs(mv, &graph, 1);
}

/* ---- forward ----------------------------------------------------------- */

/*
** Forward's state across calls (m->fwd, made at the first forward).
**
** Graphs.  On a device that can capture them (dev->fwd), forward's
** launches are captured into a graph the first time and the graph is
** replayed after, for as long as the pointers its kernels take stay what
** they were: the inputs, and the outputs written in place.  When they
** change, forward launches directly and remembers them; when the same
** pointers come twice in a row, the graph is captured again (the
** executable updated in place), so a caller that alternates buffers pays
** plain launches, never a capture per call.  Everything else a kernel
** reads stays put from bind to unbind (the arena, the bind-time values,
** the parameters' device copies, which load_weights overwrites in place,
** the sizes); the graph is dropped all the same at unbind (rebind,
** destroy), load_weights and a tuning selection, whose launch sequence
** differs.  Nothing in forward's launch sequence depends on other host
** values.  A capture that fails -- a device that cannot capture, a call
** inside it that capture forbids -- turns graphs off for the model, and
** the forward launches directly; GNN_CUDA_GRAPHS=0 in the environment
** (read at the first forward) turns them off from the start.
**
** Outputs in place.  An output that is a forward value of its own (not an
** input, parameter or bind-time value, not returned twice) is written by
** its kernel straight into the caller's buffer when that is device
** memory, aligned as the arena's buffers are (256 bytes) and overlapping
** no input or other output; otherwise into the arena, copied out after.
**
** Staging.  forward_host copies through page-locked host buffers (made at
** its first call after a bind, freed at unbind; none where the device
** gives none), in pieces, so that the host's copies overlap the
** transfers; a caller's buffer that is page-locked itself goes directly.
*/
enum { FWD_IDLE, FWD_FRESH, FWD_CAPTURING, FWD_DIRECT, FWD_DONE };

struct gnn_fwd {
	size_t bytes;            /* of this block */
	int state;               /* this forward's, as gnn_prog_issue walks it */
	int off;                 /* no graphs for this model */
	int err;                 /* a graph call of this forward failed: its error */
	int saved;               /* arena[] holds bind's pointers */
	int pinned;              /* pin[] was made since bind */
	void *exec;              /* the executable graph, or NULL */
	const void **key;        /* inputs, then outputs: what the graph's kernels take */
	const void **last;       /* ... and what the last direct forward's took */
	void **pin;              /* forward_host's page-locked staging, or NULL each */
	void *stagemem;          /* forward_host's device staging (m->stage[] point into it), or NULL */
	size_t stagebytes;
	void **arena;            /* per output: its memory in the arena */
	void **spare;            /* per lazy output (GNN_BUF_LAZY): its memory for a forward that
	                          * cannot write into the caller's buffer, made by the first, or NULL */
	const void **seen;       /* per output: the caller's last pointer ... */
	int *type;               /* ... and its memory (GNN_MEM_*) */
};

static gnn_status
fwdget(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	size_t nio = (size_t)(p->ninput + p->noutput), n;
	struct gnn_fwd *f;
	const char *env;

	if (m->fwd)
		return GNN_OK;
	n = sizeof *f + (3 * nio + 3 * (size_t)p->noutput) * sizeof(void *) + ((size_t)p->noutput + 1) * sizeof(int);
	if (!(f = (struct gnn_fwd *)zalloc(n)))
		return gnn_error(GNN_ERR_MEM, "%s_forward: out of memory", p->name);
	f->bytes = n;
	f->key = (const void **)(f + 1);
	f->last = f->key + nio;
	f->pin = (void **)(f->last + nio);
	f->arena = f->pin + nio;
	f->spare = f->arena + p->noutput;
	f->seen = (const void **)(f->spare + p->noutput);
	f->type = (int *)(f->seen + p->noutput);
	env = getenv("GNN_CUDA_GRAPHS");
	f->off = !p->dev->fwd || (env && strcmp(env, "0") == 0);
	m->fwd = f;
	return GNN_OK;
}

static void
graphdrop(gnn_instance *m)
{
	struct gnn_fwd *f = m->fwd;

	if (f && f->exec) {
		m->prog->dev->fwd->graph_destroy(f->exec);
		f->exec = NULL;
	}
}

void
gnn_prog_graph_drop(gnn_instance *m)
{
	graphdrop(m);
}

/* a capture failed: no graphs from now on, and its error is not forward's */
static void
graphsoff(gnn_instance *m)
{
	graphdrop(m);
	m->fwd->off = 1;
	m->prog->dev->last_error();
}

static void
fwdreset(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	struct gnn_fwd *f = m->fwd;
	int i;

	if (!f)
		return;
	graphdrop(m);
	for (i = 0; i < p->ninput + p->noutput; i++) {
		if (f->pin[i])
			p->dev->fwd->host_free(f->pin[i]);
		f->pin[i] = NULL;
		m->stage[i] = NULL;
	}
	if (f->stagemem)
		p->dev->free(f->stagemem);
	f->stagemem = NULL;
	f->stagebytes = 0;
	for (i = 0; i < p->noutput; i++) {   /* sized for the graph that goes */
		if (f->spare[i])
			p->dev->free(f->spare[i]);
		f->spare[i] = NULL;
	}
	f->pinned = f->saved = 0;
}

static void
fwdfree(gnn_instance *m)
{
	if (m->fwd) {
		fwdreset(m);
		gnn_free(m->fwd, m->fwd->bytes);
		m->fwd = NULL;
	}
}

/* do [a, a+n) and [b, b+k) share a byte? */
static int
overlap(const void *a, size_t n, const void *b, size_t k)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return a && b && n && k && x < y + k && y < x + n;
}

/* may forward write output i straight into the caller's out[i]? */
static int
inplace(gnn_instance *m, const void *const *in, void *const *out, int i)
{
	const gnn_program *p = m->prog;
	struct gnn_fwd *f = m->fwd;
	int b = p->output[i], j;
	size_t n = bufbytes(m, b);

	if (!p->dev->fwd || p->buf[b].kind != GNN_BUF_FWD || !n || ((uintptr_t)out[i] & 255))
		return 0;
	for (j = 0; j < p->ninput; j++)
		if (overlap(out[i], n, in[j], bufbytes(m, p->input[j])))
			return 0;
	for (j = 0; j < p->noutput; j++)
		if (j != i && (p->output[j] == b || overlap(out[i], n, out[j], bufbytes(m, p->output[j]))))
			return 0;
	if (out[i] != f->seen[i]) {
		f->seen[i] = out[i];
		f->type[i] = p->dev->fwd->memtype(out[i]);
	}
	return f->type[i] == GNN_MEM_DEVICE;
}

gnn_status
gnn_prog_begin(gnn_instance *m, const void *const *in, void *const *out)
{
	const gnn_program *p = m ? m->prog : NULL;
	struct gnn_fwd *f;
	gnn_status s;
	int i, b, k;

	if (!m || !in || !out)
		return gnn_error(GNN_ERR_ARG, "%s_forward: NULL argument", p ? p->name : "model");
	if (!m->bound)
		return gnn_error(GNN_ERR_STATE, "%s_forward: no graph is bound (call %s_bind first)", p->name, p->name);
	if (m->stale && (s = gnn_prog_refresh_(m)) != GNN_OK)
		return s;
	for (i = 0; i < p->ninput; i++) {
		if (!in[i] && bufbytes(m, p->input[i]) != 0)
			return gnn_error(GNN_ERR_ARG, "%s_forward: input '%s' is NULL", p->name, p->buf[p->input[i]].name);
		m->b[p->input[i]] = (void *)in[i];
	}
	for (i = 0; i < p->noutput; i++)
		if (!out[i] && bufbytes(m, p->output[i]) != 0)
			return gnn_error(GNN_ERR_ARG, "%s_forward: output %d is NULL", p->name, i);
	if ((s = fwdget(m)) != GNN_OK)
		return s;
	f = m->fwd;
	for (i = 0; i < p->noutput; i++) {
		b = p->output[i];
		if (p->buf[b].kind != GNN_BUF_FWD)
			continue;
		if (lazyout(p, b)) {
			/* no arena memory: its own, made by the first forward that
			 * cannot write into the caller's buffer, kept until unbind
			 * (returned twice, never in place: the first's) */
			for (k = 0; k < i && p->output[k] != b; k++)
				;
			if (k == i && !f->spare[i] && !inplace(m, in, out, i) &&
			    (s = devmem(m, "forward: an output's own memory", &f->spare[i], bufbytes(m, b))) != GNN_OK)
				return s;
			f->arena[i] = k < i ? f->arena[k] : f->spare[i];
		} else if (!f->saved)
			f->arena[i] = m->b[b];
		m->b[b] = inplace(m, in, out, i) ? out[i] : f->arena[i];
	}
	f->saved = 1;
	f->state = FWD_FRESH;
	f->err = 0;
	return GNN_OK;
}

/* the same pointers as in k? */
static int
samekey(const gnn_instance *m, const void **k)
{
	const gnn_program *p = m->prog;
	int i;

	for (i = 0; i < p->ninput; i++)
		if (k[i] != m->b[p->input[i]])
			return 0;
	for (i = 0; i < p->noutput; i++)
		if (k[p->ninput + i] != m->b[p->output[i]])
			return 0;
	return 1;
}

static void
setkey(const gnn_instance *m, const void **k)
{
	const gnn_program *p = m->prog;
	int i;

	for (i = 0; i < p->ninput; i++)
		k[i] = m->b[p->input[i]];
	for (i = 0; i < p->noutput; i++)
		k[p->ninput + i] = m->b[p->output[i]];
}

int
gnn_prog_issue(gnn_instance *m)
{
	const gnn_devfwd *df = m->prog->dev->fwd;
	struct gnn_fwd *f = m->fwd;
	int err;

	switch (f->state) {
	case FWD_FRESH:
		f->state = FWD_DIRECT;
		if (f->off || gnn_prof_on_)   /* a replay would hide the launches from the profile */
			return 1;
		if (f->exec && samekey(m, f->key)) {
			if ((err = df->graph_launch(f->exec, m->stream)))
				f->err = err;
			f->state = FWD_DONE;
			return 0;
		}
		if (f->exec && !samekey(m, f->last)) {   /* new pointers: launch, and see */
			setkey(m, f->last);
			return 1;
		}
		if ((err = df->capture_begin(m->stream))) {
			graphsoff(m);
			return 1;
		}
		setkey(m, f->key);
		setkey(m, f->last);
		f->state = FWD_CAPTURING;
		return 1;
	case FWD_CAPTURING:
		if ((err = df->capture_end(m->stream, &f->exec))) {
			graphsoff(m);   /* nothing ran: launch again, directly */
			f->state = FWD_DIRECT;
			return 1;
		}
		if ((err = df->graph_launch(f->exec, m->stream)))
			f->err = err;
		f->state = FWD_DONE;
		return 0;
	default:
		f->state = FWD_DONE;
		return 0;
	}
}

gnn_status
gnn_prog_end(gnn_instance *m, void *const *out)
{
	const gnn_program *p = m->prog;
	struct gnn_fwd *f = m->fwd;
	gnn_status s = GNN_OK;
	int i, b, err;

	if (f->state == FWD_CAPTURING) {
		/* a generated forward loops on gnn_prog_issue: a bug, loudly */
		fprintf(stderr, "gnnrt: %s: forward ended inside its graph capture\n", p->name);
		abort();
	}
	f->state = FWD_IDLE;
	for (i = 0; i < p->noutput; i++) {
		b = p->output[i];
		if (p->buf[b].kind == GNN_BUF_FWD && m->b[b] != f->arena[i]) {
			m->b[b] = f->arena[i];   /* written in place; the arena's again */
			continue;
		}
		if (s == GNN_OK && (err = p->dev->copy(out[i], m->b[b], bufbytes(m, b), GNN_ANY, m->stream, 1)))
			s = gnn_error(GNN_ERR_CUDA, "%s_forward: copying output %d failed: %s", p->name, i, p->dev->errstr(err));
	}
	if (s == GNN_OK && f->err)
		s = deverr(m, "forward: launching its graph", f->err);
	if (s == GNN_OK && (err = p->dev->last_error()))
		s = deverr(m, "forward", err);
	return s;
}

/* forward_host's page-locked staging: one buffer per input and output */
static void
pinalloc(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	struct gnn_fwd *f = m->fwd;
	size_t n;
	int i;

	f->pinned = 1;
	for (i = 0; p->dev->fwd && i < p->ninput + p->noutput; i++) {
		n = bufbytes(m, i < p->ninput ? p->input[i] : p->output[i - p->ninput]);
		if (n && p->dev->fwd->host_alloc(&f->pin[i], n)) {
			f->pin[i] = NULL;   /* none to be had: pageable copies */
			p->dev->last_error();
		}
	}
}

/* forward_host's device staging, one allocation for every input and
 * output: made at its first call after a bind, freed at unbind, so that
 * a caller who hands forward device memory never holds it */
static gnn_status
stagealloc(gnn_instance *m)
{
	const gnn_program *p = m->prog;
	struct gnn_fwd *f = m->fwd;
	size_t off = 0, at[64], *pos = at, n = (size_t)(p->ninput + p->noutput);
	gnn_status s = GNN_OK;
	int i;

	if (f->stagemem)
		return GNN_OK;
	if (n > sizeof at / sizeof at[0] && !(pos = (size_t *)zalloc(n * sizeof *pos)))
		return gnn_error(GNN_ERR_MEM, "%s_forward_host: out of memory", p->name);
	for (i = 0; (size_t)i < n; i++) {
		pos[i] = off;
		off += units(bufbytes(m, i < p->ninput ? p->input[i] : p->output[i - p->ninput]));
	}
	if ((s = devmem(m, "forward_host: staging", &f->stagemem, off ? off : 256)) == GNN_OK) {
		f->stagebytes = off ? off : 256;
		for (i = 0; (size_t)i < n; i++)
			m->stage[i] = (unsigned char *)f->stagemem + pos[i];
	}
	if (pos != at)
		gnn_free(pos, n * sizeof *pos);
	return s;
}

/* stage slot i (inputs, then outputs) from or to the host's h */
static int
stagecopy(gnn_instance *m, int i, void *h, size_t n, int dir)
{
	const gnn_device *dev = m->prog->dev;
	void *pin = m->fwd->pin[i];

	if (pin && dev->fwd->memtype(h) == GNN_MEM_PAGEABLE)
		return dir == GNN_H2D ? dev->fwd->stage_in(m->stage[i], h, pin, n, m->stream)
		                      : dev->fwd->stage_out(h, m->stage[i], pin, n, m->stream);
	return dir == GNN_H2D ? dev->copy(m->stage[i], h, n, dir, m->stream, 1) : dev->copy(h, m->stage[i], n, dir, m->stream, 1);
}

gnn_status
gnn_prog_run_host(void *mv, const void *const *in, void *const *out)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p = m ? m->prog : NULL;
	const void **din;
	void **dout;
	gnn_status s;
	int i, err;
	size_t n, nio;

	if (!m || !in || !out)
		return gnn_error(GNN_ERR_ARG, "%s_forward_host: NULL argument", p ? p->name : "model");
	if (!p->dev->separate)
		return p->run(m, in, out);
	if (!m->bound)
		return gnn_error(GNN_ERR_STATE, "%s_forward_host: no graph is bound (call %s_bind first)", p->name, p->name);
	if ((s = fwdget(m)) != GNN_OK)
		return s;
	if ((s = stagealloc(m)) != GNN_OK)
		return s;
	if (!m->fwd->pinned)
		pinalloc(m);
	nio = ((size_t)(p->ninput + p->noutput) + 1) * sizeof(void *);
	if (!(din = (const void **)zalloc(nio)))
		return gnn_error(GNN_ERR_MEM, "%s_forward_host: out of memory", p->name);
	dout = (void **)(din + p->ninput);
	for (i = 0; s == GNN_OK && i < p->ninput; i++) {
		n = bufbytes(m, p->input[i]);
		din[i] = m->stage[i];
		if (!in[i] && n)
			s = gnn_error(GNN_ERR_ARG, "%s_forward_host: input '%s' is NULL", p->name, p->buf[p->input[i]].name);
		else if (n && (err = stagecopy(m, i, (void *)in[i], n, GNN_H2D)))
			s = deverr(m, "forward_host: upload failed", err);
	}
	for (i = 0; i < p->noutput; i++)
		dout[i] = m->stage[p->ninput + i];
	if (s == GNN_OK)
		s = p->run(m, din, dout);
	for (i = 0; s == GNN_OK && i < p->noutput; i++)
		if ((n = bufbytes(m, p->output[i])) && (err = stagecopy(m, p->ninput + i, out[i], n, GNN_D2H)))
			s = deverr(m, "forward_host: download failed", err);
	if (s == GNN_OK && (err = p->dev->sync(m->stream)))
		s = deverr(m, "forward_host", err);
	gnn_free((void *)din, nio);
	return s;
}

gnn_status
gnn_prog_sync(void *mv)
{
	gnn_instance *m = (gnn_instance *)mv;
	int err;

	if (!m)
		return gnn_error(GNN_ERR_ARG, "model_synchronize: NULL model");
	if ((err = m->prog->dev->sync(m->stream)))
		return deverr(m, "synchronize", err);
	return GNN_OK;
}

gnn_status
gnn_prog_output_shape(void *mv, int i, int64_t *shape)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p = m ? m->prog : NULL;
	int j, k, off;

	if (!m || !shape)
		return gnn_error(GNN_ERR_ARG, "%s: output_shape: NULL argument", p ? p->name : "model");
	if (i < 0 || i >= p->noutput)
		return gnn_error(GNN_ERR_ARG, "%s: no output %d", p->name, i);
	if (!m->bound)
		return gnn_error(GNN_ERR_STATE, "%s: no graph is bound", p->name);
	for (j = 0, off = 0; j < i; j++)
		off += p->outputs[j].rank;
	for (k = 0; k < p->outputs[i].rank; k++)
		shape[k] = poly(m, p->outshape[off + k]);
	return GNN_OK;
}

/*
** Input i's array against its declaration, for callers that hand forward
** arrays they did not make (the Python package): the dtype exactly (forward
** reads raw memory), the rank, every constant dim, and the symbolic dims
** under the bound graph's sizes -- one symbolic dim is the buffer's size
** over the constant dims; with several, their product is checked.
*/
gnn_status
gnn_prog_check_input(void *mv, int i, const gnn_array *a)
{
	gnn_instance *m = (gnn_instance *)mv;
	const gnn_program *p = m ? m->prog : NULL;
	const gnn_tensor_info *t;
	int64_t want[GNN_MAX_RANK], fixed = 1, numel, got;
	char ws[256], gs[256];
	size_t wl = 0, gl = 0;
	int k, nsym = 0, bad;

	if (!m || !a)
		return gnn_error(GNN_ERR_ARG, "%s: check_input: NULL argument", p ? p->name : "model");
	if (i < 0 || i >= p->ninput)
		return gnn_error(GNN_ERR_ARG, "%s: no input %d", p->name, i);
	if (!m->bound)
		return gnn_error(GNN_ERR_STATE, "%s: no graph is bound", p->name);
	t = &p->inputs[i];
	numel = poly(m, p->buf[p->input[i]].size);
	for (k = 0; k < t->rank; k++)
		if (t->shape[k] >= 0)
			fixed *= t->shape[k];
		else
			nsym++;
	for (k = 0; k < t->rank; k++)
		want[k] = t->shape[k] >= 0 ? t->shape[k] : nsym == 1 && fixed > 0 ? numel / fixed : -1;
	bad = a->dtype != t->dtype || a->rank != t->rank || a->rank < 0 || a->rank > GNN_MAX_RANK;
	for (k = 0, got = 1; !bad && k < t->rank; k++) {
		bad = want[k] >= 0 && a->shape[k] != want[k];
		got *= a->shape[k];
	}
	bad = bad || got != numel;
	if (!bad)
		return GNN_OK;
	for (k = 0; k < t->rank && wl < sizeof ws; k++)
		wl += (size_t)snprintf(ws + wl, sizeof ws - wl, "%s%lld", k ? ", " : "", (long long)want[k]);
	if (wl == 0)
		ws[0] = '\0';
	if (a->rank < 0 || a->rank > GNN_MAX_RANK)   /* its dims cannot be read */
		snprintf(gs, sizeof gs, "of rank %d", a->rank);
	else {
		/* eight dims of at most 20 digits fit */
		gs[gl++] = '[';
		for (k = 0; k < a->rank; k++)
			gl += (size_t)snprintf(gs + gl, sizeof gs - gl, "%s%lld", k ? ", " : "", (long long)a->shape[k]);
		snprintf(gs + gl, sizeof gs - gl, "]");
	}
	return gnn_error(a->dtype != t->dtype ? GNN_ERR_DTYPE : GNN_ERR_SHAPE,
		"%s: input '%s': expected %s %s%s%s%s, got %s %s", p->name, t->name, gnn_dtype_name(t->dtype),
		t->dims ? t->dims : "", nsym ? " = [" : "", nsym ? ws : "", nsym ? "]" : "",
		gnn_dtype_name(a->dtype), gs);
}

/* ---- tuning ------------------------------------------------------------ */

void
gnn_prog_tune_select(void *mv, int k, int c)
{
	gnn_instance *m = (gnn_instance *)mv;

	if (m && k >= 0 && k < m->prog->ntune && m->sel[k] != c) {
		m->sel[k] = c;
		graphdrop(m);   /* another launch sequence */
	}
}

static void
launchone(void *mv, int k)
{
	gnn_instance *m = (gnn_instance *)mv;

	m->prog->launch(m, k);
}

gnn_status
gnn_prog_tune_time(void *mv, int k, int reps, double *us)
{
	gnn_instance *m = (gnn_instance *)mv;
	double t[64], x;
	int i, j, err;

	if (!m || !us || !m->bound || k < 0 || k >= m->prog->ntune)
		return gnn_error(GNN_ERR_ARG, "%s_tune_time: bad arguments", m ? m->prog->name : "model");
	reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
	m->prog->launch(m, k);   /* warm */
	for (i = 0; i < reps; i++)
		if ((err = m->prog->dev->elapsed(m->stream, launchone, m, k, &t[i])) || (err = m->prog->dev->last_error()))
			return deverr(m, "tune_time", err);
	for (i = 1; i < reps; i++)
		for (j = i, x = t[i]; j > 0 && t[j - 1] > x; j--)
			t[j] = t[j - 1], t[j - 1] = x;
	*us = t[reps / 2];
	return GNN_OK;
}

const char *
gnn_prog_arch(const gnn_program *p)
{
	return p->dev->arch();
}
