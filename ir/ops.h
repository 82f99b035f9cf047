/*
 * The closed set of IR operations, as an X-macro:
 *   O(name, minargs, maxargs, flags)
 * maxargs -1 means variadic.  Passes test flags, never lists of ops.
 * Semantics of each op are documented in docs/ir.md; typing lives in
 * ir/typecheck.c, execution in ir/interp.c.
 */

/* leaves: the result type is the declared one */
O(const,          0, 0, Fpure|Fleaf)        /* {value=F}: tensor filled with value */
O(param,          0, 0, Fpure|Fleaf)        /* {name="conv1.lin.weight"} */

/* graph -> graph (graph-only: hoistable into bind) */
O(add_self_loops,           1, 1, Fpure|Fgraph)          /* graph[N,E] -> graph[N,E+N] */
O(remove_self_loops,        1, 1, Fpure|Fgraph|Fdyn)     /* graph[N,E] -> graph[N,E1] */
O(add_remaining_self_loops, 1, 1, Fpure|Fgraph|Fdyn)     /* {fill=F} graph[N,E] -> graph[N,E1+N] */

/* graph -> tensor (graph-only) */
O(src,            1, 1, Fpure|Fgraph)       /* i64[E] */
O(dst,            1, 1, Fpure|Fgraph)       /* i64[E] */
O(batch,          1, 1, Fpure|Fgraph)       /* i64[N], graph must be graph[N,E,B] */
O(in_degree,      1, 1, Fpure|Fgraph)       /* f32[N,1]: edges whose dst is i */
O(out_degree,     1, 1, Fpure|Fgraph)       /* f32[N,1]: edges whose src is i */
O(edge_weight,    1, 1, Fpure|Fgraph)       /* f32[E,1]: 1 for an unweighted graph */
O(gcn_norm,       1, 1, Fpure|Fgraph)       /* f32[E,1]: dis[src]*w*dis[dst] */

/* graph x tensor */
O(edge_softmax,   2, 2, Fpure|Fmsg)         /* g, s[E,...] -> softmax of s grouped by dst */

/* index ops */
O(gather,         2, 2, Fpure|Fmsg)         /* x[M,...], idx[K] -> [K,...] */
O(scatter_sum,    2, 2, Fpure|Fmsg|Fscatter) /* m[K,...], idx[K] {n=D} -> [n,...] */
O(scatter_mean,   2, 2, Fpure|Fmsg|Fscatter)
O(scatter_max,    2, 2, Fpure|Fmsg|Fscatter)
O(take,           2, 2, Fpure)              /* x[N,C], idx[N] -> [N]: x[i, idx[i]] */
O(put,            2, 2, Fpure)              /* g[N], idx[N] {n=D} -> [N,n]: take's adjoint */

/* dense */
O(matmul,         2, 2, Fpure)              /* NumPy matmul */
O(transpose,      1, 1, Fpure|Fshape)       /* {perm=[...]} */
O(reshape,        1, 1, Fpure|Fshape|Falias) /* {shape=[...]} */
O(concat,         1, -1, Fpure|Fshape)      /* {dim=I} */
O(slice,          1, 1, Fpure|Fshape)       /* {dim=I, start=D, len=D}: concat's adjoint */
O(cast,           1, 1, Fpure|Felem)        /* result dtype is the declared one */
/* a 16-bit float value read as f32 (cast's exact case, which the front
 * end emits for it): a view of the 16-bit words, no code, no buffer */
O(widen,          1, 1, Fpure|Felem|Falias)

/* elementwise binary, NumPy broadcasting, equal dtypes */
O(add,            2, 2, Fpure|Felem|Fbin)
O(sub,            2, 2, Fpure|Felem|Fbin)
O(mul,            2, 2, Fpure|Felem|Fbin)
O(div,            2, 2, Fpure|Felem|Fbin)
O(pow,            2, 2, Fpure|Felem|Fbin)
O(maximum,        2, 2, Fpure|Felem|Fbin)
O(minimum,        2, 2, Fpure|Felem|Fbin)
O(gt,             2, 2, Fpure|Felem|Fbin)   /* float: 1 where a > b, else 0 */
O(eq,             2, 2, Fpure|Felem|Fbin)   /* float: 1 where a == b, else 0 */

/* elementwise unary */
O(neg,            1, 1, Fpure|Felem)
O(abs,            1, 1, Fpure|Felem)
O(relu,           1, 1, Fpure|Felem)
O(leaky_relu,     1, 1, Fpure|Felem)        /* {slope=F} */
O(elu,            1, 1, Fpure|Felem)        /* {alpha=F} */
O(sigmoid,        1, 1, Fpure|Felem)
O(tanh,           1, 1, Fpure|Felem)
O(exp,            1, 1, Fpure|Felem)
O(log,            1, 1, Fpure|Felem)
O(sqrt,           1, 1, Fpure|Felem)
O(rsqrt,          1, 1, Fpure|Felem)
O(dropout,        1, 1, Fpure|Felem|Falias) /* {p=F}: identity at inference */

/* training: a pure function of its operands (the key is data), but not
 * elementwise for the passes: its mask depends on the flat index */
O(dropout_train,  2, 2, Fpure)              /* x, key i64[2] {p=F, stream=I} */

/* reductions and normalizations over one dim */
O(sum,            1, 1, Fpure|Freduce)      /* {dim=I, keepdim=B} */
O(mean,           1, 1, Fpure|Freduce)
O(max,            1, 1, Fpure|Freduce)
O(softmax,        1, 1, Fpure|Fnorm)        /* {dim=I} */
O(log_softmax,    1, 1, Fpure|Fnorm)
O(l2_normalize,   1, 1, Fpure|Fnorm)        /* {dim=I, eps=F} */
