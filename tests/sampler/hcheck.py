"""Checks hsampledump's batches (the heterogeneous neighbour sampler's)
against PyG's heterogeneous NeighborLoader semantics with NumPy alone,
independently of the sampler's code.

    hcheck.py batches DIR OUT TYPES RELS SEEDTYPE NBATCHES BATCH FANOUTS SHUFFLE TEMPORAL
    hcheck.py same OUT1 OUT2 NBATCHES
    hsampledump ... - ... | hcheck.py uniform ELIGIBLE K

batches: the seeds (each epoch's a permutation of the seed set, in order
unshuffled; their times), the mask; every sampled edge is the relation's
edge it names, no edge twice (within a seed's subgraph when temporal);
nodes distinct (per seed's subgraph when temporal; an edge's ends in one
subgraph); replaying hop by hop, relation by relation, frontier node by
node gives each node its local id (first appearance); each frontier node
has min(k, eligible in-degree) in-edges of each relation whose target
type it is, eligible meaning, temporal, an edge time at most its seed's;
no edge after its seed's time; the last hop's nodes expand nothing; the
gathered rows, where the batches have them (hsampledump's: gnnrun
--dump-batches writes the batches' structure alone).  same: two runs' batches are equal, file by file.
uniform: batches of one seed whose relation 0 has ELIGIBLE edges at or
before its time (edge ids 0..ELIGIBLE-1) among later ones, K drawn a
batch: only eligible edges, K distinct a batch, each edge's and each
pair's count within 5 standard deviations of uniform.
"""
import os
import sys

import numpy as np


def load(d, name):
    return np.load(os.path.join(d, name))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def same(out1, out2, nb):
    names = sorted(f for f in os.listdir(out1) if int(f[1:].split("_")[0]) < nb)
    if sorted(f for f in os.listdir(out2) if int(f[1:].split("_")[0]) < nb) != names:
        fail("other files")
    for f in names:
        if not np.array_equal(load(out1, f), load(out2, f)):
            fail("%s differs" % f)
    print("ok: %d batches equal" % nb)


def batches(d, out, types, rels, seedtype, nb, bsize, fanouts, shuffle, temporal):
    types, rels = types.split(","), rels.split(",")
    st = types.index(seedtype)
    x = [load(d, "x_%s.npy" % t) for t in types]
    ends = [(types.index(r.split("__")[0]), types.index(r.split("__")[2])) for r in rels]
    ei = [load(d, r + ".npy") for r in rels]
    etime = [None] * len(rels)
    if temporal:
        for i, r in enumerate(rels):
            if os.path.exists(os.path.join(d, "time_%s.npy" % r)):
                etime[i] = load(d, "time_%s.npy" % r)
    seedfile = os.path.join(d, "seeds_%s.npy" % seedtype)
    seeds = np.load(seedfile) if os.path.exists(seedfile) else np.arange(x[st].shape[0])
    seedtime = load(d, "time_%s.npy" % seedtype) if temporal else None
    fl = [[int(v) for v in f.split(",")] for f in fanouts.split("/")]
    fan = [fl[0] if len(fl) == 1 else fl[min(i, len(fl) - 1)] for i in range(len(rels))]
    hops = len(fan[0])
    # in-edges of each relation by target, as lists of edge ids
    inedges = []
    for r, (s, t) in enumerate(ends):
        order = np.argsort(ei[r][1], kind="stable")
        starts = np.searchsorted(ei[r][1][order], np.arange(x[t].shape[0] + 1))
        inedges.append((order, starts))
    nbatch = (len(seeds) + bsize - 1) // bsize
    epochs, nedges = {}, 0
    for k in range(nb):
        meta = load(out, "b%d_meta.npy" % k)
        epoch, index, ns = (int(v) for v in meta)
        if (epoch, index) != divmod(k, nbatch):
            fail("batch %d: epoch %d index %d" % (k, epoch, index))
        if ns != min(bsize, len(seeds) - index * bsize):
            fail("batch %d: %d seeds" % (k, ns))
        node = [load(out, "b%d_node_%d.npy" % (k, t)) for t in range(len(types))]
        root = [load(out, "b%d_root_%d.npy" % (k, t)) if temporal else np.zeros(len(node[t]), np.int64)
                for t in range(len(types))]
        sidx = load(out, "b%d_seed_index.npy" % k)
        epochs.setdefault(epoch, []).extend(sidx.tolist())
        if not shuffle and not np.array_equal(sidx, np.arange(index * bsize, index * bsize + ns)):
            fail("batch %d: seeds out of order" % k)
        if not np.array_equal(node[st][:ns], seeds[sidx]):
            fail("batch %d: the seed nodes are not seeds[seed_index]" % k)
        stime = load(out, "b%d_seed_time.npy" % k) if temporal else None
        if temporal and not np.array_equal(stime, seedtime[sidx]):
            fail("batch %d: seed times" % k)
        if temporal and not np.array_equal(root[st][:ns], np.arange(ns)):
            fail("batch %d: a seed outside its own subgraph" % k)
        mask = load(out, "b%d_mask.npy" % k)
        if len(mask) != len(node[st]) or mask[:ns].sum() != ns or mask[ns:].any():
            fail("batch %d: mask" % k)
        for t in range(len(types)):
            keys = set(zip(root[t].tolist(), node[t].tolist()))
            if len(keys) != len(node[t]):
                fail("batch %d: a node of %s twice" % (k, types[t]))
            xk = "b%d_x_%d.npy" % (k, t)
            if os.path.exists(os.path.join(out, xk)) and not np.array_equal(load(out, xk), x[t][node[t]]):
                fail("batch %d: rows of %s" % (k, types[t]))
        bei = [load(out, "b%d_ei_%d.npy" % (k, r)) for r in range(len(rels))]
        beid = [load(out, "b%d_eid_%d.npy" % (k, r)) for r in range(len(rels))]
        for r, (s, t) in enumerate(ends):
            e, eid = bei[r], beid[r]
            if e.shape != (2, len(eid)):
                fail("batch %d: %s's shape" % (k, rels[r]))
            if len(eid) and (e.min() < 0 or e[0].max() >= len(node[s]) or e[1].max() >= len(node[t])):
                fail("batch %d: %s's local ids" % (k, rels[r]))
            if not (np.array_equal(node[s][e[0]], ei[r][0][eid]) and np.array_equal(node[t][e[1]], ei[r][1][eid])):
                fail("batch %d: an edge of %s that the relation lacks" % (k, rels[r]))
            if not np.array_equal(root[s][e[0]], root[t][e[1]]):
                fail("batch %d: an edge of %s across subgraphs" % (k, rels[r]))
            if len(set(zip(root[t][e[1]].tolist(), eid.tolist()))) != len(eid):
                fail("batch %d: an edge of %s twice" % (k, rels[r]))
            if temporal and etime[r] is not None and np.any(etime[r][eid] > stime[root[t][e[1]]]):
                fail("batch %d: an edge of %s after its seed's time" % (k, rels[r]))
            nedges += len(eid)
        # replay: hop by hop, relation by relation, frontier node by node,
        # draw by draw: local ids in order of first appearance
        hop = [np.full(len(node[t]), -1) for t in range(len(types))]
        hop[st][:ns] = 0
        seen = [ns if t == st else 0 for t in range(len(types))]
        for h in range(hops + 1):
            for r, (s, t) in enumerate(ends):
                e = bei[r]
                at = hop[t][e[1]] == h
                if h == hops:
                    if at.any():
                        fail("batch %d: a last-hop node of %s expands %s" % (k, types[t], rels[r]))
                    continue
                # edges of this hop's targets come in target order
                if np.any(np.diff(e[1][at]) < 0):
                    fail("batch %d: %s's hop-%d edges out of target order" % (k, rels[r], h))
                for j in e[0][at]:
                    if hop[s][j] < 0:
                        if j != seen[s]:
                            fail("batch %d: node %d of %s is not in order of first appearance" % (k, j, types[s]))
                        hop[s][j] = h + 1
                        seen[s] += 1
                # each frontier node: min(k, eligible in-degree) in-edges
                cnt = np.bincount(e[1][at], minlength=len(node[t]))
                order, starts = inedges[r]
                for i in np.nonzero(hop[t] == h)[0]:
                    v = node[t][i]
                    ids = order[starts[v]:starts[v + 1]]
                    if temporal and etime[r] is not None:
                        ids = ids[etime[r][ids] <= stime[root[t][i]]]
                    want = min(fan[r][h], len(ids))
                    if cnt[i] != want:
                        fail("batch %d: node %d of %s at hop %d has %d in-edges of %s, not %d" % (
                            k, v, types[t], h, cnt[i], rels[r], want))
        for t in range(len(types)):
            if seen[t] != len(node[t]):
                fail("batch %d: %d nodes of %s, %d reached" % (k, len(node[t]), types[t], seen[t]))
    for epoch, idx in epochs.items():
        full = (epoch + 1) * nbatch <= nb
        if full and sorted(idx) != list(range(len(seeds))):
            fail("epoch %d: the seeds are not each taken once" % epoch)
    print("ok: %d batches, %d edges checked" % (nb, nedges))


def uniform(n, k):
    lines = [ln for ln in sys.stdin if ln.startswith("batch ")]
    draws = [[int(v) for v in ln.split("|")[1].split()] for ln in lines]
    one, two = np.zeros(n), np.zeros((n, n))
    for dr in draws:
        if len(dr) != k or len(set(dr)) != k:
            fail("a batch of %s, not %d distinct" % (dr, k))
        if max(dr) >= n:
            fail("edge %d is after the seed's time" % max(dr))
        for a in dr:
            one[a] += 1
            for b in dr:
                if a < b:
                    two[a, b] += 1
    m = len(draws)
    p1 = k / n
    p2 = k * (k - 1) / (n * (n - 1))
    if np.any(np.abs(one - m * p1) > 5 * np.sqrt(m * p1 * (1 - p1))):
        fail("edge counts %s" % one)
    iu = np.triu_indices(n, 1)
    if np.any(np.abs(two[iu] - m * p2) > 5 * np.sqrt(m * p2 * (1 - p2))):
        fail("pair counts %s" % two[iu])
    print("ok: uniform over %d eligible edges (%d draws of %d)" % (n, m, k))


if sys.argv[1] == "same":
    same(sys.argv[2], sys.argv[3], int(sys.argv[4]))
elif sys.argv[1] == "uniform":
    uniform(int(sys.argv[2]), int(sys.argv[3]))
else:
    a = sys.argv[2:]
    batches(a[0], a[1], a[2], a[3], a[4], int(a[5]), int(a[6]), a[7], int(a[8]), int(a[9]))
