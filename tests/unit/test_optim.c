/*
** test_optim.c: training's optimizers (runtime/optim.c, optim.h, optim.cu)
** against an independent float64 reference written here from torch.optim's
** definitions, on the cpu device and on the emulated CUDA device.
**
** Each case runs 20 steps over five tensors of 0, 1, 7, 33 and 1300
** elements (the empty one has NULL pointers), with gradients that change
** every step and differ in scale from tensor to tensor, and changes its
** hyper-parameters after step 10 with gnn_optim_set (a learning-rate
** drop; in one case SGD's momentum switched on, whose buffers then start
** as torch's do).  Cases: SGD plain, with weight decay, momentum with
** dampening, nesterov; Adam without and with weight decay, with beta1 <
** 0.5 (lerp's other formula); AdamW.  Each parameter must be within
** 2e-6 * (1 + |ref|) of the reference; the emulated device must give the
** cpu device's bits exactly (one header, each operation rounded alone).
** Then: torch's argument checks, a bad gnn_optim_set that changes
** nothing, host pointers refused by the emulated device, and allocation
** failures.
**
** Inputs are small multiples of powers of two, so that the Python test
** (optim_torch.py) rebuilds them exactly: `test_optim --print` prints
** every case's final parameters on the cpu device.
**
** Built with -DGNN_TEST_REAL_CUDA and linked against libgnnrt_cuda.a and
** the CUDA runtime, it runs the same cases on a real GPU.
** Usage: test_optim [--print]
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>

#include "device.h"

#ifdef GNN_TEST_REAL_CUDA
#define TESTDEV gnn_device_cuda
#else
#define TESTDEV gnn_device_cuda_emu
#endif

enum { NT = 5, STEPS = 20, SWITCH = 10 };
static const int64_t sizes[NT] = {0, 1, 7, 33, 1300};

typedef struct Case {
	const char *name;
	gnn_optim_config c, c2;   /* c2 from step SWITCH + 1 on */
} Case;

#define SGD(lr, wd, m, d, nes) {GNN_OPTIM_SGD, lr, wd, m, d, nes, 0, 0, 0}
#define ADAM(k, lr, wd, b1, b2, eps) {k, lr, wd, 0, 0, 0, b1, b2, eps}

static const Case cases[] = {
	{"sgd", SGD(0.1, 0, 0, 0, 0), SGD(0.05, 0, 0, 0, 0)},
	{"sgd_wd", SGD(0.1, 0.01, 0, 0, 0), SGD(0.03, 0.01, 0, 0, 0)},
	{"sgd_momentum", SGD(0.05, 0, 0.9, 0.1, 0), SGD(0.02, 0, 0.9, 0.1, 0)},
	{"sgd_nesterov_wd", SGD(0.05, 0.001, 0.9, 0, 1), SGD(0.01, 0.001, 0.9, 0, 1)},
	{"sgd_momentum_later", SGD(0.1, 0, 0, 0, 0), SGD(0.05, 0.02, 0.8, 0.5, 0)},
	{"adam", ADAM(GNN_OPTIM_ADAM, 0.01, 0, 0.9, 0.999, 1e-8), ADAM(GNN_OPTIM_ADAM, 0.003, 0, 0.9, 0.999, 1e-8)},
	{"adam_wd", ADAM(GNN_OPTIM_ADAM, 0.01, 0.05, 0.9, 0.999, 1e-8), ADAM(GNN_OPTIM_ADAM, 0.005, 0.05, 0.9, 0.999, 1e-8)},
	{"adam_lowbeta", ADAM(GNN_OPTIM_ADAM, 0.02, 0, 0.3, 0.9, 1e-6), ADAM(GNN_OPTIM_ADAM, 0.02, 0, 0.3, 0.9, 1e-6)},
	{"adamw", ADAM(GNN_OPTIM_ADAMW, 0.01, 0.01, 0.9, 0.999, 1e-8), ADAM(GNN_OPTIM_ADAMW, 0.002, 0.1, 0.9, 0.999, 1e-8)},
};
enum { NCASE = sizeof cases / sizeof cases[0] };

/* element i of tensor k: its start, and its gradient at step s (1-based);
 * optim_torch.py has the same formulas */
static double
p0(int k, int64_t i)
{
	return (double)((i * 11 + k * 3) % 23 - 11) / 16;
}

static double
grad(int k, int64_t i, int s)
{
	return (double)((i * 7 + s * 13 + k * 5) % 17 - 8) / 8 * ldexp(1, k - 2);
}

static int64_t
total(void)
{
	int64_t t = 0;

	for (int k = 0; k < NT; k++)
		t += sizes[k];
	return t;
}

/* the float64 reference: torch.optim's definitions, written anew */
static void
reference(const Case *cs, double *p)
{
	int64_t n = total();
	double *m = calloc((size_t)n, sizeof *m), *v = calloc((size_t)n, sizeof *v);
	int started = 0;

	for (int64_t j = 0, k = 0; k < NT; k++)
		for (int64_t i = 0; i < sizes[k]; i++)
			p[j++] = p0((int)k, i);
	for (int s = 1; s <= STEPS; s++) {
		const gnn_optim_config *c = s > SWITCH ? &cs->c2 : &cs->c;
		double bc1 = 1 - pow(c->beta1, s), bc2 = 1 - pow(c->beta2, s);
		for (int64_t j = 0, k = 0; k < NT; k++)
			for (int64_t i = 0; i < sizes[k]; i++, j++) {
				double g = grad((int)k, i, s);
				if (c->kind == GNN_OPTIM_SGD) {
					g += c->weight_decay * p[j];
					if (c->momentum != 0) {
						m[j] = started ? c->momentum * m[j] + (1 - c->dampening) * g : g;
						g = c->nesterov ? g + c->momentum * m[j] : m[j];
					}
					p[j] -= c->lr * g;
					continue;
				}
				if (c->kind == GNN_OPTIM_ADAMW)
					p[j] *= 1 - c->lr * c->weight_decay;
				else
					g += c->weight_decay * p[j];
				m[j] = c->beta1 * m[j] + (1 - c->beta1) * g;
				v[j] = c->beta2 * v[j] + (1 - c->beta2) * g * g;
				p[j] -= c->lr / bc1 * m[j] / (sqrt(v[j]) / sqrt(bc2) + c->eps);
			}
		if (c->kind == GNN_OPTIM_SGD && c->momentum != 0)
			started = 1;
	}
	free(m);
	free(v);
}

/* cs on dev: the final parameters, concatenated, into out */
static int
run(const gnn_device *dev, const Case *cs, float *out)
{
	float *hp[NT] = {0}, *hg[NT] = {0}, *dp[NT] = {0}, *dg[NT] = {0};
	gnn_optim *o = NULL;
	void *s = NULL;
	int ok = 1;

	for (int k = 0; k < NT; k++) {
		size_t nb = (size_t)sizes[k] * sizeof(float);
		if (!sizes[k])
			continue;
		hp[k] = malloc(nb);
		hg[k] = malloc(nb);
		for (int64_t i = 0; i < sizes[k]; i++)
			hp[k][i] = (float)p0(k, i);
		if (dev->separate) {
			ok &= CHECK(dev->alloc((void **)&dp[k], nb) == 0 && dev->alloc((void **)&dg[k], nb) == 0);
			ok &= CHECK(dev->copy(dp[k], hp[k], nb, GNN_H2D, NULL, 0) == 0);
		} else {
			dp[k] = hp[k];
			dg[k] = hg[k];
		}
	}
	ok &= CHECK(dev->stream_create(&s) == 0);
	if (ok)
		ok = CHECK_ST(gnn_optim_create(dev, s, NT, dp, (const float *const *)dg, sizes, &cs->c, &o), GNN_OK);
	for (int st = 1; ok && st <= STEPS; st++) {
		for (int k = 0; k < NT; k++) {
			for (int64_t i = 0; i < sizes[k]; i++)
				hg[k][i] = (float)grad(k, i, st);
			/* the step before may still read the gradients */
			if (dev->separate && sizes[k])
				ok &= CHECK(dev->sync(s) == 0 &&
				            dev->copy(dg[k], hg[k], (size_t)sizes[k] * sizeof(float), GNN_H2D, s, 1) == 0);
		}
		if (st == SWITCH + 1)
			ok &= CHECK_ST(gnn_optim_set(o, &cs->c2), GNN_OK);
		ok &= CHECK_ST(gnn_optim_step(o), GNN_OK);
	}
	CHECK(!ok || gnn_optim_steps(o) == STEPS);
	if (ok)
		ok = CHECK(dev->sync(s) == 0);
	for (int k = 0, j = 0; k < NT; j += (int)sizes[k], k++) {
		if (ok && dev->separate && sizes[k])
			ok &= CHECK(dev->copy(hp[k], dp[k], (size_t)sizes[k] * sizeof(float), GNN_D2H, NULL, 0) == 0);
		if (ok && sizes[k])
			memcpy(out + j, hp[k], (size_t)sizes[k] * sizeof(float));
		if (dev->separate) {
			dev->free(dp[k]);
			dev->free(dg[k]);
		}
		free(hp[k]);
		free(hg[k]);
	}
	gnn_optim_destroy(o);
	dev->stream_destroy(s);
	return ok;
}

static void
test_cases(void)
{
	int64_t n = total();
	double *ref = malloc((size_t)n * sizeof *ref);
	float *cpu = malloc((size_t)n * sizeof *cpu), *dev = malloc((size_t)n * sizeof *dev);

	for (int c = 0; c < NCASE; c++) {
		double worst = 0;
		int64_t bad = -1;
		reference(&cases[c], ref);
		if (!run(&gnn_device_cpu, &cases[c], cpu))
			continue;
		for (int64_t j = 0; j < n; j++) {
			double e = fabs(cpu[j] - ref[j]) / (1 + fabs(ref[j]));
			if (e > worst)
				worst = e, bad = j;
		}
		if (!CHECK(worst <= 2e-6))
			printf("  %s: element %lld is %.9g, the reference %.9g\n", cases[c].name, (long long)bad,
				cpu[bad], ref[bad]);
		printf("%-20s cpu: worst error %.3g (relative to 1 + |ref|)\n", cases[c].name, worst);
		if (run(&TESTDEV, &cases[c], dev) && !CHECK(memcmp(cpu, dev, (size_t)n * sizeof *cpu) == 0)) {
			for (int64_t j = 0; j < n; j++)
				if (memcmp(&cpu[j], &dev[j], sizeof *cpu)) {
					printf("  %s: %s element %lld is %.9g, the cpu's %.9g\n", cases[c].name, TESTDEV.name,
						(long long)j, dev[j], cpu[j]);
					break;
				}
		}
	}
	free(ref);
	free(cpu);
	free(dev);
}

/* --print: every case's final parameters on the cpu device, for optim_torch.py */
static int
print(void)
{
	int64_t n = total();
	float *p = malloc((size_t)n * sizeof *p);

	printf("sizes");
	for (int k = 0; k < NT; k++)
		printf(" %lld", (long long)sizes[k]);
	printf("\nsteps %d %d\n", STEPS, SWITCH);
	for (int c = 0; c < NCASE; c++) {
		if (!run(&gnn_device_cpu, &cases[c], p))
			return 1;
		for (int h = 0; h < 2; h++) {
			const gnn_optim_config *g = h ? &cases[c].c2 : &cases[c].c;
			printf("%s %s %d %.17g %.17g %.17g %.17g %d %.17g %.17g %.17g\n", h ? "cfg2" : "case",
				cases[c].name, (int)g->kind, g->lr, g->weight_decay, g->momentum, g->dampening,
				g->nesterov, g->beta1, g->beta2, g->eps);
		}
		printf("p");
		for (int64_t j = 0; j < n; j++)
			printf(" %.9g", p[j]);
		printf("\n");
	}
	free(p);
	return nfail != 0;
}

/* create with cfg on the cpu device: status and message */
static void
badcfg(gnn_optim_config c, const char *msg)
{
	float x = 1, g = 0, *xp = &x;
	const float *gp = &g;
	int64_t one = 1;
	gnn_optim *o = (gnn_optim *)&x;

	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 1, &xp, &gp, &one, &c, &o), GNN_ERR_ARG);
	CHECK_MSG(msg);
	CHECK(o == NULL);
}

static void
test_errors(void)
{
	gnn_optim_config sgd = SGD(0.1, 0, 0.9, 0, 0), adam = ADAM(GNN_OPTIM_ADAM, 0.01, 0, 0.9, 0.999, 1e-8), c;
	float x[3] = {1, 2, 3}, g[3] = {1, 1, 1}, *xp[2] = {x, NULL};
	const float *gp[2] = {g, NULL};
	int64_t sz[2] = {3, 0};
	gnn_optim *o = NULL;
	void *s = NULL, *dx = NULL;

	c = sgd, c.lr = -1, badcfg(c, "invalid learning rate");
	c = sgd, c.lr = NAN, badcfg(c, "invalid learning rate");
	c = sgd, c.momentum = -0.5, badcfg(c, "invalid momentum");
	c = sgd, c.weight_decay = -1, badcfg(c, "invalid weight_decay");
	c = sgd, c.nesterov = 1, c.dampening = 0.1, badcfg(c, "nesterov momentum requires");
	c = sgd, c.nesterov = 1, c.momentum = 0, badcfg(c, "nesterov momentum requires");
	c = adam, c.beta1 = 1, badcfg(c, "invalid beta1");
	c = adam, c.beta2 = -0.1, badcfg(c, "invalid beta2");
	c = adam, c.eps = -1e-8, badcfg(c, "invalid eps");
	c = adam, c.kind = (gnn_optim_kind)7, badcfg(c, "unknown optimizer kind");
	/* what SGD ignores, and Adam */
	c = sgd, c.beta1 = 5, c.eps = -1;
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 1, xp, gp, sz, &c, &o), GNN_OK);
	gnn_optim_destroy(o);
	o = NULL;

	/* tensor lists */
	sz[1] = -1;
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 2, xp, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_MSG("size[1] is -1");
	sz[1] = 2;
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 2, xp, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_MSG("param[1] is NULL");
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 1, NULL, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_MSG("param NULL");
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, -1, xp, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_ST(gnn_optim_create(NULL, NULL, 1, xp, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 1, xp, gp, sz, NULL, &o), GNN_ERR_ARG);
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 1, xp, gp, sz, &sgd, NULL), GNN_ERR_ARG);
	CHECK(o == NULL);
	sz[1] = 0;

	/* no tensors at all: steps do nothing */
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 0, NULL, NULL, NULL, &adam, &o), GNN_OK);
	CHECK_ST(gnn_optim_step(o), GNN_OK);
	CHECK(gnn_optim_steps(o) == 1);
	gnn_optim_destroy(o);
	o = NULL;

	/* a bad set changes nothing: the steps after it are those of sgd */
	CHECK_ST(gnn_optim_create(&gnn_device_cpu, NULL, 2, xp, gp, sz, &sgd, &o), GNN_OK);
	CHECK_ST(gnn_optim_step(o), GNN_OK);    /* buf = 1, x -= 0.1 */
	c = sgd, c.lr = -2;
	CHECK_ST(gnn_optim_set(o, &c), GNN_ERR_ARG);
	CHECK_MSG("gnn_optim_set: SGD: invalid learning rate");
	CHECK_ST(gnn_optim_set(o, &adam), GNN_ERR_ARG);
	CHECK_MSG("cannot change the optimizer from SGD to Adam");
	CHECK_ST(gnn_optim_set(NULL, &sgd), GNN_ERR_ARG);
	CHECK_ST(gnn_optim_step(NULL), GNN_ERR_ARG);
	CHECK_ST(gnn_optim_step(o), GNN_OK);    /* buf = 0.9 + 1, x -= 0.19 */
	{
		float lr = -0.1f, x1 = 1.0f + lr * 1.0f, b = 0.9f * 1.0f, b2 = b + 1.0f, d = lr * b2;
		CHECK(x[0] == x1 + d);
	}
	CHECK(gnn_optim_steps(o) == 2);
	gnn_optim_destroy(o);
	gnn_optim_destroy(NULL);

	/* the emulated device wants its own memory */
	CHECK(TESTDEV.stream_create(&s) == 0);
	CHECK_ST(gnn_optim_create(&TESTDEV, s, 1, xp, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_MSG("param[0] is not cuda device memory");
	CHECK(TESTDEV.alloc(&dx, sizeof x) == 0);
	xp[0] = dx;
	CHECK_ST(gnn_optim_create(&TESTDEV, s, 1, xp, gp, sz, &sgd, &o), GNN_ERR_ARG);
	CHECK_MSG("grad[0] is not cuda device memory");
	CHECK(o == NULL);
	TESTDEV.free(dx);
	TESTDEV.stream_destroy(s);
}

/* every allocation of create and set failing in turn (cpu device) */
static gnn_status
oomop(void *ctx)
{
	static float x[4], g[4];
	float *xp[2] = {x, x + 1};
	const float *gp[2] = {g, g + 1};
	int64_t sz[2] = {1, 3};
	gnn_optim_config c = SGD(0.1, 0, 0, 0, 0), c2 = SGD(0.1, 0, 0.5, 0, 0);
	gnn_optim *o;
	gnn_status s;

	if ((s = gnn_optim_create(&gnn_device_cpu, NULL, 2, xp, gp, sz, *(int *)ctx ? &c : &c2, &o)) != GNN_OK)
		return s;
	/* momentum switched on: the buffers are allocated now */
	if ((s = gnn_optim_set(o, &c2)) == GNN_OK)
		s = gnn_optim_step(o);
	gnn_optim_destroy(o);
	return s;
}

static void
test_oom(void)
{
	int on = 1, off = 0;

	check_oom("gnn_optim_create + set", oomop, &on);
	check_oom("gnn_optim_create with momentum + set", oomop, &off);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--print") == 0)
		return print();
	test_cases();
	test_errors();
	test_oom();
	return summary();
}
