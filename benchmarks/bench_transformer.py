"""MultiheadAttention and TransformerEncoderLayer forward+backward: sparsetorch beside torch, one
process, at 1 and 2 threads (torch.set_num_threads, sparsetorch.set_num_threads for numba's
kernels and threadpoolctl's BLAS limit alike).

    python benchmarks/bench_transformer.py            # 9 samples after 2 warm-ups
    python benchmarks/bench_transformer.py --quick    # 3 samples: a smoke test
    python benchmarks/bench_transformer.py --threads 1
    python benchmarks/bench_transformer.py --threads 1 --cpu-time   # process CPU time (busy machine)

Sizes (issue 15): d_model 256, 8 heads, batch 32, sequence 64, float32, batch_first. ``mha`` is
self-attention with need_weights=False (what the encoder layer calls), ``mha_need_weights`` the
default call that also returns the head-averaged weights; the encoder layer has dim_feedforward
1024 and runs in training mode with dropout 0.1 (``--dropout 0`` for the deterministic layer).
Goal: at most 1.0x torch. The layer norms and dropouts run numba kernels (one pass per row / per
element); starting numba's OpenMP pool can change torch's thread count in this process (one
libgomp), so it is set again after the first sparsetorch call.
"""

from __future__ import annotations

import time
import warnings

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np
from threadpoolctl import threadpool_limits

import sparsetorch as st

try:
    import torch
except ImportError:  # the torch columns are skipped
    torch = None

warnings.filterwarnings("ignore", message=".*enable_nested_tensor.*")

D, H, N, L, FF = 256, 8, 32, 64, 1024


def _copy(sm, tm):
    sm.load_state_dict({k: st.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})


def _step(lib, module, x, g):
    def run():
        module.zero_grad(set_to_none=True)
        x.grad = None
        out = module(x)
        out = out[0] if isinstance(out, tuple) else out
        out.backward(g)
    return run


class _SelfAttn:
    """``mha(x, x, x, need_weights=False)`` as a one-argument module (what an encoder does)."""

    def __init__(self, mha, need_weights=False):
        self.mha = mha
        self.need_weights = need_weights

    def __call__(self, x):
        out, w = self.mha(x, x, x, need_weights=self.need_weights)
        return out if w is None else out + w.sum() * 0

    def zero_grad(self, set_to_none=True):
        self.mha.zero_grad(set_to_none=set_to_none)


def variants(dropout):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, L, D), dtype=np.float32)
    g = rng.standard_normal((N, L, D), dtype=np.float32)
    out = {}
    s_mha = st.nn.MultiheadAttention(D, H, batch_first=True)
    s_enc = st.nn.TransformerEncoderLayer(D, H, FF, dropout=dropout, batch_first=True)
    sx, sg = st.tensor(x, requires_grad=True), st.tensor(g)
    if torch is not None:
        t_mha = torch.nn.MultiheadAttention(D, H, batch_first=True)
        t_enc = torch.nn.TransformerEncoderLayer(D, H, FF, dropout=dropout, batch_first=True)
        _copy(s_mha, t_mha)
        _copy(s_enc, t_enc)
        tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g)
    out["mha"] = {"sparsetorch": _step(st, _SelfAttn(s_mha), sx, sg)}
    out["mha_need_weights"] = {"sparsetorch": _step(st, _SelfAttn(s_mha, True), sx, sg)}
    out["encoder_layer"] = {"sparsetorch": _step(st, s_enc, sx, sg)}
    if torch is not None:
        out["mha"]["torch"] = _step(torch, _SelfAttn(t_mha), tx, tg)
        out["mha_need_weights"]["torch"] = _step(torch, _SelfAttn(t_mha, True), tx, tg)
        out["encoder_layer"]["torch"] = _step(torch, t_enc, tx, tg)
    return out


def main():
    p = _harness.parser(__doc__)
    p.add_argument("--threads", type=int, default=0, help="one thread count (default: 1 and 2)")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--cpu-time", action="store_true",
                   help="time with the process's CPU clock (meaningful with --threads 1)")
    p.add_argument("--only", default="", help="comma-separated sections (mha, mha_need_weights, "
                   "encoder_layer)")
    args = p.parse_args()
    samples = 3 if args.quick else args.samples
    if not args.no_wait:
        _harness.wait_for_quiet()
    _harness.print_environment()
    print(f"d_model {D}, {H} heads, batch {N}, seq {L}, ff {FF}, float32, dropout {args.dropout}; "
          "forward + backward")
    for threads in ([args.threads] if args.threads else [1, 2]):
        st.set_num_threads(threads)  # numba's kernels (and the BLAS)
        if torch is not None:
            torch.set_num_threads(threads)
        with threadpool_limits(limits=threads):
            for name, vs in variants(args.dropout).items():
                if args.only and name not in args.only.split(","):
                    continue
                vs["sparsetorch"]()  # builds numba's kernels and starts its OpenMP pool, which
                if torch is not None:  # shares torch's libgomp and can raise torch's thread
                    torch.set_num_threads(threads)  # count (1 -> 2): set it again after
                rows = _harness.compare({k: _harness.loop(f) for k, f in vs.items()},
                                        inner_iters=1, samples=samples, warmup=args.warmup,
                                        clock=time.process_time_ns if args.cpu_time else None)
                _harness.print_table(rows, baseline="torch",
                                     title=f"{name}, {threads} thread(s)", unit="us/step")


if __name__ == "__main__":
    main()
