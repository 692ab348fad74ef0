"""Whole training steps, sparsetorch beside torch in one process (issue 14, item 6).

    python benchmarks/bench_steps.py                # 9 samples, 1 and 2 threads
    python benchmarks/bench_steps.py --threads 1    # one thread count only
    python benchmarks/bench_steps.py --quick        # 3 samples, smaller inner loops: a smoke test
    python benchmarks/bench_steps.py --threads 1 --cpu-clock   # the calling thread's CPU time

``--cpu-clock`` times steps and phases with ``time.thread_time`` instead of the wall clock: on a
machine busy with other work, a 1-thread run then counts only the time the step ran (waiting for
a core is left out). It undercounts work done by other threads, so it is for ``--threads 1``.

The same model code runs with ``lib = torch`` and ``lib = sparsetorch`` (initial weights copied
from the torch model, the same batches), interleaved as ``_harness.compare`` does. Thread counts
are set for torch (``set_num_threads``), numba and NumPy's BLAS (threadpoolctl) alike. Workloads:

- **DLRM-style step** (batch 128 and 2048): 4 ``EmbeddingBag(100_000, 16, mode="sum",
  sparse=True)`` tables, 8 uniform ids per bag; bottom MLP 13-64-16; pairwise dot interaction of
  the 5 vectors by ``bmm`` (the 10 pairs below the diagonal, gathered with ``index_select``); top
  MLP (16+10)-64-16-1; ``binary_cross_entropy_with_logits``; one ``SGD(lr=0.01)`` over every
  parameter (sparse gradients for the tables); ``zero_grad``. At batch 128 the step is also
  split in phases (embedding forward, MLP + interaction forward and loss, backward, optimizer
  step + zero_grad), each the median over the samples of its mean per step (batch 2048 too
  with ``--phases``).
- **GCN epoch**: a seeded random graph of 2708 nodes and ~13k stored entries (5278 undirected
  edges, both directions, self-loops; symmetric normalisation), 1433 binary bag-of-words
  features (18 per node, row-normalised) as CSR; 2 layers ``A (X W1)`` -> ReLU -> ``A (H W2)``
  (hidden 16, 7 classes, no dropout, so both libraries compute the same loss); log_softmax +
  nll_loss on 140 training nodes; ``Adam(lr=0.01, weight_decay=5e-4)``.
- **GAE step**: the same graph and features; encoder ``A relu(A X W1) W2`` (32, 16); logits
  ``Z Z^T`` (2708 x 2708); ``norm * binary_cross_entropy_with_logits(logits, A + I,
  pos_weight=...)``; ``Adam(lr=0.01)``.

Goal (issue 14): every row at most 1.0x torch.
"""

from __future__ import annotations

import time
import warnings

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st

try:
    import torch
except ImportError:  # only the sparsetorch rows
    torch = None

ROWS, DIM, PER_BAG, TABLES = 100_000, 16, 8, 4
_CLOCK = [time.perf_counter]  # the phases' clock (--cpu-clock: time.thread_time)
_NS_CLOCK = [None]  # the steps' clock for _harness.compare (None: its wall clock)
NODES, FEATS, CLASSES, EDGES, WORDS = 2708, 1433, 7, 5278, 18


def _libs():
    return ([("torch", torch)] if torch is not None else []) + [("sparsetorch", st)]


def _copy_params(dst, src):
    """Copy the torch model's parameter values into the other library's model."""
    with dst.no_grad_ctx():
        for p, q in zip(dst.params, src.params):
            p.copy_(dst.lib.from_numpy(q.detach().numpy().copy()))


class _Model:
    """A training step written once against ``lib``'s torch API."""

    def __init__(self, lib):
        self.lib = lib
        self.params = []

    def no_grad_ctx(self):
        return self.lib.no_grad()


# ---- DLRM-style step --------------------------------------------------------------------------

def dlrm_batches(batch, count, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        dense = rng.standard_normal((batch, 13)).astype(np.float32)
        ids = [rng.integers(0, ROWS, batch * PER_BAG) for _ in range(TABLES)]
        off = np.arange(0, batch * PER_BAG, PER_BAG, dtype=np.int64)
        label = (rng.random(batch) < 0.25).astype(np.float32)
        out.append((dense, ids, off, label))
    return out


class DLRM(_Model):
    def __init__(self, lib, batches):
        super().__init__(lib)
        nn = lib.nn
        lib.manual_seed(0)
        self.bags = nn.ModuleList([nn.EmbeddingBag(ROWS, DIM, mode="sum", sparse=True)
                                   for _ in range(TABLES)])
        self.bottom = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, DIM), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(DIM + 10, 64), nn.ReLU(), nn.Linear(64, 16), nn.ReLU(),
                                 nn.Linear(16, 1))
        self.params = (list(self.bags.parameters()) + list(self.bottom.parameters())
                       + list(self.top.parameters()))
        self.opt = lib.optim.SGD(self.params, lr=0.01)
        n = TABLES + 1
        li = [i * n + j for i in range(n) for j in range(i)]  # pairs below the diagonal
        self.li = lib.tensor(li, dtype=lib.int64)
        self.batches = [(lib.from_numpy(d), [lib.from_numpy(i) for i in ids], lib.from_numpy(o),
                         lib.from_numpy(y)) for d, ids, o, y in batches]
        self.k = 0
        self.F = lib.nn.functional

    def step(self, stamps=None):
        lib = self.lib
        dense, ids, off, label = self.batches[self.k % len(self.batches)]
        self.k += 1
        clock = _CLOCK[0]
        t0 = clock()
        emb = [bag(i, off) for bag, i in zip(self.bags, ids)]
        t1 = clock()
        x = self.bottom(dense)
        T = lib.stack([x] + emb, dim=1)
        Z = lib.bmm(T, T.transpose(1, 2))
        pairs = Z.reshape(Z.shape[0], -1).index_select(1, self.li)
        logit = self.top(lib.cat([x, pairs], dim=1)).squeeze(1)
        loss = self.F.binary_cross_entropy_with_logits(logit, label)
        t2 = clock()
        loss.backward()
        t3 = clock()
        self.opt.step()
        self.opt.zero_grad()
        t4 = clock()
        if stamps is not None:
            for name, a, b in (("embedding fwd", t0, t1), ("MLP + interaction fwd", t1, t2),
                               ("backward", t2, t3), ("SGD step + zero_grad", t3, t4)):
                stamps[name] = stamps.get(name, 0.0) + (b - a)
        return loss


# ---- GCN / GAE ----------------------------------------------------------------------------------

def graph(seed=0):
    """Normalised adjacency (CSR parts), label adjacency A + I (dense), features (CSR parts),
    labels and the training nodes: a Cora-sized seeded random graph."""
    rng = np.random.default_rng(seed)
    e = rng.integers(0, NODES, (3 * EDGES, 2))
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(np.sort(e, axis=1), axis=0)
    e = e[rng.permutation(len(e))[:EDGES]]
    r = np.concatenate([e[:, 0], e[:, 1], np.arange(NODES)])
    c = np.concatenate([e[:, 1], e[:, 0], np.arange(NODES)])
    order = np.lexsort((c, r))
    r, c = r[order], c[order]
    deg = np.bincount(r, minlength=NODES).astype(np.float64)
    vals = (1 / np.sqrt(deg[r] * deg[c])).astype(np.float32)
    crow = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=NODES))]).astype(np.int64)
    label = np.zeros((NODES, NODES), np.float32)
    label[r, c] = 1
    fc = np.sort(np.stack([rng.choice(FEATS, WORDS, replace=False) for _ in range(NODES)]), axis=1)
    fcrow = np.arange(0, NODES * WORDS + 1, WORDS, dtype=np.int64)
    fvals = np.full(NODES * WORDS, 1 / WORDS, np.float32)
    y = rng.integers(0, CLASSES, NODES)
    train = np.sort(rng.choice(NODES, 140, replace=False))
    feat = (fcrow, fc.reshape(-1).astype(np.int64), fvals)
    return (crow, c.astype(np.int64), vals), label, feat, y, train


def _csr(lib, parts, shape):
    crow, col, vals = parts
    return lib.sparse_csr_tensor(lib.from_numpy(crow), lib.from_numpy(col), lib.from_numpy(vals),
                                 size=shape)


class GCN(_Model):
    def __init__(self, lib, g):
        super().__init__(lib)
        adj, _, feat, y, train = g
        self.A = _csr(lib, adj, (NODES, NODES))
        self.X = _csr(lib, feat, (NODES, FEATS))
        self.y = lib.from_numpy(y[train])
        self.train = lib.from_numpy(train)
        lib.manual_seed(0)
        nn = lib.nn
        self.W1 = nn.Parameter(lib.empty(FEATS, 16))
        self.W2 = nn.Parameter(lib.empty(16, CLASSES))
        nn.init.xavier_uniform_(self.W1)
        nn.init.xavier_uniform_(self.W2)
        self.params = [self.W1, self.W2]
        self.opt = lib.optim.Adam(self.params, lr=0.01, weight_decay=5e-4)
        self.F = lib.nn.functional

    def step(self, stamps=None):
        sp, F = self.lib.sparse, self.F
        self.opt.zero_grad()
        h = F.relu(sp.mm(self.A, sp.mm(self.X, self.W1)))
        out = sp.mm(self.A, h @ self.W2)
        loss = F.nll_loss(F.log_softmax(out, dim=1).index_select(0, self.train), self.y)
        loss.backward()
        self.opt.step()
        return loss


class GAE(_Model):
    def __init__(self, lib, g):
        super().__init__(lib)
        adj, label, feat, _, _ = g
        self.A = _csr(lib, adj, (NODES, NODES))
        self.X = _csr(lib, feat, (NODES, FEATS))
        self.label = lib.from_numpy(label)
        pos = float(label.sum())
        self.pos_weight = lib.tensor([(NODES * NODES - pos) / pos])
        self.norm = NODES * NODES / (2 * (NODES * NODES - pos))
        lib.manual_seed(0)
        nn = lib.nn
        self.W1 = nn.Parameter(lib.empty(FEATS, 32))
        self.W2 = nn.Parameter(lib.empty(32, 16))
        nn.init.xavier_uniform_(self.W1)
        nn.init.xavier_uniform_(self.W2)
        self.params = [self.W1, self.W2]
        self.opt = lib.optim.Adam(self.params, lr=0.01)
        self.F = lib.nn.functional

    def step(self, stamps=None):
        sp, F = self.lib.sparse, self.F
        self.opt.zero_grad()
        h = F.relu(sp.mm(self.A, sp.mm(self.X, self.W1)))
        z = sp.mm(self.A, h @ self.W2)
        logits = z @ z.t()
        loss = self.norm * F.binary_cross_entropy_with_logits(logits, self.label,
                                                              pos_weight=self.pos_weight)
        loss.backward()
        self.opt.step()
        return loss


# ---- running ------------------------------------------------------------------------------------

def _models(make):
    ms = {name: make(lib) for name, lib in _libs()}
    if "torch" in ms:
        _copy_params(ms["sparsetorch"], ms["torch"])
    return ms


def _loss_check(ms, steps=3):
    """Both libraries take the same first steps: print the losses (a sanity check, not timed)."""
    if len(ms) < 2:
        return
    losses = {n: [float(m.step().detach()) for _ in range(steps)] for n, m in ms.items()}
    ok = np.allclose(losses["torch"], losses["sparsetorch"], rtol=1e-3, atol=1e-5)
    print(f"(losses of the first {steps} steps agree: {ok}; torch {losses['torch'][-1]:.5f}, "
          f"sparsetorch {losses['sparsetorch'][-1]:.5f})")


def run_section(args, title, make, inner):
    ms = _models(make)
    _loss_check(ms)
    variants = {n: _harness.loop(m.step) for n, m in ms.items()}
    rows = _harness.compare(variants, inner, args.samples, args.warmup, clock=_NS_CLOCK[0])
    _harness.print_table(rows, "torch", title, "us/step")
    return ms


def phase_table(args, ms, inner, batch=128):
    """Median over samples of each phase's mean time per step, both libraries interleaved."""
    import gc

    per = {n: {} for n in ms}
    for rnd in range(args.warmup + args.samples):
        for n, m in ms.items():
            stamps = {}
            gc.collect()
            gc.disable()
            for _ in range(inner):
                m.step(stamps)
            gc.enable()
            if rnd >= args.warmup:
                for k, v in stamps.items():
                    per[n].setdefault(k, []).append(v / inner * 1e6)
    names = list(next(iter(per.values())))
    print(f"\nDLRM-style step, batch {batch}: phases (median us per step)\n")
    libs = list(ms)
    head = ["phase"] + libs + (["ratio"] if len(libs) == 2 else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    tot = {n: 0.0 for n in libs}
    for k in names:
        med = {n: float(np.median(per[n][k])) for n in libs}
        for n in libs:
            tot[n] += med[n]
        cells = [k] + [f"{med[n]:.0f}" for n in libs]
        if len(libs) == 2:
            cells.append(f"{med['sparsetorch'] / med['torch']:.2f}x")
        print("| " + " | ".join(cells) + " |")
    cells = ["sum of phases"] + [f"{tot[n]:.0f}" for n in libs]
    if len(libs) == 2:
        cells.append(f"{tot['sparsetorch'] / tot['torch']:.2f}x")
    print("| " + " | ".join(cells) + " |")


_BLAS = []


def set_threads(n):
    """``n`` threads for torch, numba and NumPy's BLAS alike (torch's count covers its BLAS; an
    unlimited OpenBLAS pool beside a 1-thread run stalls under load: 20x on a busy machine)."""
    st.set_num_threads(n)  # numba's pool (started as sparsetorch starts it) and the BLAS
    if torch is not None:
        torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("(threadpoolctl not installed: NumPy's BLAS keeps its own thread count)")
        return
    if _BLAS:
        _BLAS.pop().restore_original_limits()
    _BLAS.append(threadpool_limits(n, user_api="blas"))


def main(argv=None) -> int:
    p = _harness.parser(__doc__.splitlines()[0])
    p.add_argument("--threads", default="1,2",
                   help="comma-separated thread counts for torch and numba (default: 1,2)")
    p.add_argument("--only", default="dlrm128,dlrm2048,gcn,gae",
                   help="comma-separated sections: dlrm128, dlrm2048, gcn, gae")
    p.add_argument("--phases", action="store_true",
                   help="the phase table for batch 2048 too (batch 128 always has one)")
    p.add_argument("--cpu-clock", action="store_true",
                   help="time with the calling thread's CPU time (for --threads 1 on a busy machine)")
    args = p.parse_args(argv)
    if args.cpu_clock:
        _CLOCK[0] = time.thread_time
        _NS_CLOCK[0] = time.thread_time_ns
        print("(clock: the calling thread's CPU time)")
    if args.quick:
        args.samples = 3
        args.warmup = 1
    q = 0.25 if args.quick else 1.0
    warnings.filterwarnings("ignore", message=".*(Sparse CSR tensor support|invariant checks)")
    import numba  # noqa: F401 - imported for the environment line
    only = set(args.only.split(","))
    _harness.print_environment(("numpy", "scipy", "sparsetorch", "torch", "numba"))
    if not args.no_wait:
        _harness.wait_for_quiet()
    g = graph() if only & {"gcn", "gae"} else None
    for nt in (int(t) for t in args.threads.split(",")):
        set_threads(nt)
        print(f"\n## {nt} thread{'s' if nt > 1 else ''}")
        if "dlrm128" in only:
            ms = run_section(args, f"DLRM-style step, batch 128 ({nt} thr)",
                             lambda lib: DLRM(lib, dlrm_batches(128, 8)), max(1, int(20 * q)))
            phase_table(args, ms, max(1, int(20 * q)))
        if "dlrm2048" in only:
            ms = run_section(args, f"DLRM-style step, batch 2048 ({nt} thr)",
                             lambda lib: DLRM(lib, dlrm_batches(2048, 4)), max(1, int(4 * q)))
            if args.phases:
                phase_table(args, ms, max(1, int(4 * q)), 2048)
        if "gcn" in only:
            run_section(args, f"GCN epoch, {NODES} nodes, 1433 sparse features ({nt} thr)",
                        lambda lib: GCN(lib, g), max(1, int(20 * q)))
        if "gae" in only:
            run_section(args, f"GAE step, {NODES} x {NODES} logits ({nt} thr)",
                        lambda lib: GAE(lib, g), 1)
    return 0


if __name__ == "__main__":
    sys_exit = main()
    raise SystemExit(sys_exit)
