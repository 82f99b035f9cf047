/*
 * breaks: graph-break and sync analysis.
 *
 * A compiled forward is one stream of kernels with no host round trip:
 * everything the host must know (sizes, segment plans for the scatters,
 * the CSR that edge_softmax walks) is settled when a graph is bound.
 * The exception is a scatter (or edge_softmax) whose index (or graph) is
 * computed in forward: its segment plan -- the order of the messages per
 * output row, built by a counting sort on the host -- cannot exist
 * before forward runs.  On the cuda target that is a graph break: the
 * index goes device to host, the host sorts it and uploads the plan,
 * and the stream waits for it (a host sync).  On the cpu target forward
 * runs on the host anyway and such a scatter runs sequentially, in
 * message order: no break.
 *
 * Other synchronizations are not forward's: forward_host waits for its
 * results (the API's, after forward is queued), and bind and
 * load_weights wait for queued forwards before replacing memory they
 * read.  So the host syncs inside forward are exactly the breaks.
 *
 * This is an analysis; it changes nothing.  --report=breaks,syncs lists
 * the points, and --no-graph-breaks makes each remaining break an error
 * at its source location (checkbreaks, run by the pass manager after
 * the pipeline).  The cuda code generator still rejects these scatters
 * outright; the break path (copy, sort, upload) is future work.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* Does v depend on a tensor input of fn (transitively)?  memo: 0 not
 * known, 1 yes, 2 no. */
static bool
oninputs(const Fn *fn, const unsigned char *phase, Ref v, unsigned char *memo)
{
	const Ins *in;
	bool r = false;
	int k;

	if (phase[v] == PhaseInput)
		return true;
	if (memo[v])
		return memo[v] == 1;
	if (fn->val[v].def >= 0) {
		in = &fn->ins[fn->val[v].def];
		for (k = 0; k < in->narg && !r; k++)
			r = oninputs(fn, phase, in->arg[k], memo);
	}
	memo[v] = r ? 1 : 2;
	return r;
}

/* The operand whose segment plan instruction in needs, or RNone. */
static Ref
groupingof(const Ins *in)
{
	if (opinfo[in->op].flags & Fscatter)
		return in->arg[1];
	if (in->op == Oedge_softmax)
		return in->arg[0];
	return RNone;
}

int
hostpoints(const Fn *fn, const unsigned char *phase, int *at)
{
	Ref x;
	int i, n = 0;

	for (i = 0; i < fn->nins; i++)
		if ((x = groupingof(&fn->ins[i])) != RNone && phase[x] != PhaseBind)
			at[n++] = i;
	return n;
}

void
breakreason(const Fn *fn, const unsigned char *phase, int i, char *buf, size_t n)
{
	const Ins *in = &fn->ins[i];
	Ref x = groupingof(in);
	unsigned char *memo;
	const char *on;

	memo = emalloc(fn->nval + 1);
	memset(memo, 0, fn->nval + 1);
	on = oninputs(fn, phase, x, memo) ? "the model's inputs" : "the model's parameters";
	free(memo);
	snprintf(buf, n, "%s's %s depends on %s, so its segment plan must be built on the host (a device-to-host sync)",
	         opinfo[in->op].name, in->op == Oedge_softmax ? "graph" : "index", on);
}

int
checkbreaks(Mod *m, bool hostforward)
{
	unsigned char *phase;
	int *at, i, n, nerr = 0;
	char why[256];
	Fn *fn;

	if (hostforward)
		return 0;   /* the cpu target: sequential scatters, no break */
	for (fn = m->fn; fn; fn = fn->link) {
		filluse(fn);
		phase = emalloc(fn->nval + 1);
		at = emalloc((fn->nins + 1) * sizeof *at);
		phases(fn, phase);
		n = hostpoints(fn, phase, at);
		for (i = 0; i < n; i++) {
			breakreason(fn, phase, at[i], why, sizeof why);
			errorat(fn->ins[at[i]].loc, "graph break: %s", why);
			nerr++;
		}
		free(at);
		free(phase);
	}
	return nerr;
}
