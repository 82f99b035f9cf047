/*
 * Dead code elimination.
 *
 * The function is one straight-line block in SSA form, so every use
 * follows its definition: one backward walk, marking the operands of
 * each live instruction, finds everything live.  A value is live if it
 * is returned or used by a live instruction.  Besides those, dce keeps
 *   - param instructions, used or not: the params are the model's
 *     interface, and the weight file must match the model's declared
 *     parameters even when an optimization makes one unused;
 *   - instructions whose op is not pure (none today; the flag is the
 *     contract a future side-effecting op will rely on).
 * Survivors are written into place (QBE-style compaction), keeping
 * their order; the values of dropped instructions stay in fn->val,
 * unreferenced, which costs nothing and keeps every Ref stable.
 */
#include <stdlib.h>

#include "passes.h"

static bool
keep(const Ins *in)
{
	return in->op == Oparam || !(opinfo[in->op].flags & Fpure);
}

void
dce(Fn *fn)
{
	bool *live;
	Ins *in;
	int i, k, n;

	live = emalloc((fn->nval + 1) * sizeof *live);
	for (i = 0; i < fn->nret; i++)
		live[fn->ret[i]] = true;
	for (i = fn->nins - 1; i >= 0; i--) {
		in = &fn->ins[i];
		if (keep(in) || (in->to != RNone && live[in->to])) {
			if (in->to != RNone)
				live[in->to] = true;
			for (k = 0; k < in->narg; k++)
				live[in->arg[k]] = true;
		}
	}
	for (i = n = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (keep(in) || (in->to != RNone && live[in->to]))
			fn->ins[n++] = *in;
	}
	fn->nins = n;
	free(live);
	filluse(fn);
}
