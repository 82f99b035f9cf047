"""Checks a gnngen relational preset's directory with NumPy, independently
of gnngen.

    relcheck.py DIR SCALE STATS

rel-shop's tables at SCALE (rows rounded, at least 1): x_TYPE float32
[rows, F] in [-1, 1); each relation int64 [2, E] with E the transactions,
row r of a foreign-key relation transaction r -> its key (in range of the
keyed table), the reverse relation its transpose edge for edge; time_REL
int64 [E], the same for the four relations, nondecreasing (transaction
ids in time order) within the year; time_customer in the year's second
half; y_customer recomputed from the edges and times (the class of the
count of a customer's transactions at or before its time); the key
counts heavy-tailed; the statistics lines that gnngen printed (STATS)
recomputed.  Prints "ok" and the row counts.
"""
import os
import sys

import numpy as np

d, scale, stats = sys.argv[1], float(sys.argv[2]), sys.argv[3]
TABLES = {"customer": (60000, 16), "product": (15000, 32), "transaction": (300000, 8)}
RELS = [("transaction", "by", "customer"), ("customer", "rev_by", "transaction"),
        ("transaction", "of", "product"), ("product", "rev_of", "transaction")]
T0, SPAN = 1700000000, 31536000


def load(name):
    return np.load(os.path.join(d, name))


rows = {t: max(1, int(r * scale + 0.5)) for t, (r, f) in TABLES.items()}
for t, (r, f) in TABLES.items():
    x = load("x_%s.npy" % t)
    assert x.dtype == np.float32 and x.shape == (rows[t], f), (t, x.dtype, x.shape)
    assert x.min() >= -1 and x.max() < 1, (t, x.min(), x.max())
nt = rows["transaction"]
ei, tm = {}, {}
for s, r, t in RELS:
    name = "%s__%s__%s" % (s, r, t)
    e = ei[name] = load(name + ".npy")
    assert e.dtype == np.int64 and e.shape == (2, nt), (name, e.dtype, e.shape)
    assert e[0].min() >= 0 and e[0].max() < rows[s], (name, "source out of range")
    assert e[1].min() >= 0 and e[1].max() < rows[t], (name, "target out of range")
    tm[name] = load("time_%s.npy" % name)
    assert tm[name].dtype == np.int64 and tm[name].shape == (nt,), (name, tm[name].shape)
ids = np.arange(nt)
for fwd, rev in [("transaction__by__customer", "customer__rev_by__transaction"),
                 ("transaction__of__product", "product__rev_of__transaction")]:
    assert np.array_equal(ei[fwd][0], ids), (fwd, "edge i is not transaction i's")
    assert np.array_equal(ei[rev], ei[fwd][::-1]), (rev, "is not the transpose of", fwd)
    assert np.array_equal(tm[fwd], tm[rev]), (rev, "times differ from", fwd)
t = tm["transaction__by__customer"]
assert np.array_equal(tm["transaction__of__product"], t)
assert np.all(np.diff(t) >= 0), "transaction times out of order"
assert t.min() >= T0 and t.max() < T0 + SPAN, (t.min(), t.max())
ct = load("time_customer.npy")
assert ct.dtype == np.int64 and ct.shape == (rows["customer"],)
assert ct.min() >= T0 + SPAN // 2 and ct.max() < T0 + SPAN, (ct.min(), ct.max())
cust = ei["transaction__by__customer"][1]
past = np.bincount(cust[t <= ct[cust]], minlength=rows["customer"])
want = np.select([past == 0, past <= 2, past <= 7], [0, 1, 2], 3)
y = load("y_customer.npy")
assert y.dtype == np.int64 and np.array_equal(y, want), "labels are not the classes of past counts"
# power law: the busiest key holds far more than the mean (at scale)
for name in ["transaction__by__customer", "transaction__of__product"]:
    deg = np.bincount(ei[name][1])
    if nt >= 1000:
        assert deg.max() > 10 * nt / len(deg), (name, deg.max(), nt / len(deg))
lines = open(stats).read().splitlines()
for s, r, tt in RELS:
    name = "%s__%s__%s" % (s, r, tt)
    e = ei[name]
    ind, outd = np.bincount(e[1], minlength=rows[tt]), np.bincount(e[0], minlength=rows[s])
    line = "%s: src_nodes=%d dst_nodes=%d edges=%d in_degree_mean=%.2f in_degree_max=%d out_degree_max=%d" % (
        name, rows[s], rows[tt], nt, nt / rows[tt], ind.max(), outd.max())
    assert line in lines, ("no line", line, lines)
counts = np.bincount(y, minlength=4)
assert "y_customer: classes=4 %s" % " ".join(map(str, counts)) in lines, lines
print("ok customer=%d product=%d transaction=%d" % (rows["customer"], rows["product"], nt))
