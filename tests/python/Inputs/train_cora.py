"""
train_step from Python: the training example's model (examples/train:
GCN with a train item) compiled for the cpu target, PyG's init from the
train item's seed, one step an epoch on Cora's train mask for the item's
epochs; the loss falls, the test accuracy passes 80%, the saved weights
load into the forward-only GCN (examples/gcn) and give the trained
model's outputs, and a label array of the wrong dtype raises, naming it.
"""
import os
import sys

import numpy as np

import gnncc

train, gcn, data, out = sys.argv[1:5]
x = np.load(os.path.join(data, "x.npy")).astype(np.float32)
x = (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32)
ei = np.load(os.path.join(data, "edge_index.npy"))
y = np.load(os.path.join(data, "y.npy"))
trm = np.load(os.path.join(data, "train_mask.npy"))
test = np.load(os.path.join(data, "test_mask.npy"))

m = gnncc.compile(train, target="cpu")
m.init_weights()
m.bind(ei, num_nodes=len(y))
for e in range(m.epochs):
    loss = m.train_step(x=x, y=y, mask=trm)
    if e in (0, m.epochs - 1):
        print("epoch %d loss %.4f" % (e + 1, loss))
o = m(x=x)
print("test accuracy %.1f%%" % (100 * (o.argmax(1)[test] == y[test]).mean()))
try:
    m.train_step(x=x, y=y.astype(np.int32), mask=trm)
except gnncc.GnnccError as e:
    print("%s: %s" % (e.status, e))
m.save_weights(out)
f = gnncc.compile(gcn, target="cpu").load_weights(out).bind(ei, num_nodes=len(y))
print("saved weights:", "same outputs" if np.array_equal(f(x=x), o) else "different outputs")
