"""NumPy references for the optimizer tests, written from the published algorithms (float64,
one step each), the hyper-parameter cases and the sparse-gradient generator they share."""

import math

import numpy as np

import sparsetorch as torch

# ---- NumPy references (float64), one step each; ``s`` is the state dict, ``t`` the step ----


def ref_sgd(p, g, s, t, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    if momentum:
        s["b"] = g.copy() if "b" not in s else momentum * s["b"] + (1 - dampening) * g
        g = g + momentum * s["b"] if nesterov else s["b"]
    return p - lr * g


def ref_adam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
             maximize=False, decoupled=False):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    vh = s["v"]
    if amsgrad:
        s["vmax"] = np.maximum(s["vmax"], s["v"])
        vh = s["vmax"]
    return p - lr / (1 - b1 ** t) * s["m"] / (np.sqrt(vh) / math.sqrt(1 - b2 ** t) + eps)


def ref_adamw(p, g, s, t, lr, weight_decay=1e-2, **kw):
    return ref_adam(p, g, s, t, lr, weight_decay=weight_decay, decoupled=True, **kw)


def ref_adagrad(p, g, s, t, lr, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sum"] = s["sum"] + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)


def ref_rmsprop(p, g, s, t, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sq"] = alpha * s["sq"] + (1 - alpha) * g * g
    avg = s["sq"]
    if centered:
        s["ga"] = alpha * s["ga"] + (1 - alpha) * g
        avg = avg - s["ga"] ** 2
    step = g / (np.sqrt(avg) + eps)
    if momentum > 0:
        s["buf"] = momentum * s["buf"] + step
        step = s["buf"]
    return p - lr * step


def ref_adadelta(p, g, s, t, lr, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sq"] = rho * s["sq"] + (1 - rho) * g * g
    delta = np.sqrt(s["acc"] + eps) / np.sqrt(s["sq"] + eps) * g
    s["acc"] = rho * s["acc"] + (1 - rho) * delta * delta
    return p - lr * delta


def ref_rowwise(p, g, s, t, lr, eps=1e-8, weight_decay=0, initial_accumulator_value=0,
                maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sum"] = s["sum"] + (g * g).mean(axis=1)
    return p - (lr / (np.sqrt(s["sum"]) + eps))[:, None] * g


def ref_sparse_adam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, maximize=False):
    b1, b2 = betas
    g = -g if maximize else g
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    return p - lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * s["m"] / (np.sqrt(s["v"]) + eps)


def init_state(name, shape, hp):
    z = np.zeros(shape)
    if name in ("Adam", "AdamW", "SparseAdam"):
        return {"m": z.copy(), "v": z.copy(), "vmax": z.copy()}
    if name == "Adagrad":
        return {"sum": np.full(shape, float(hp.get("initial_accumulator_value", 0)))}
    if name == "RowWiseAdagrad":
        return {"sum": np.full(shape[0], float(hp.get("initial_accumulator_value", 0)))}
    if name == "RMSprop":
        return {"sq": z.copy(), "ga": z.copy(), "buf": z.copy()}
    if name == "Adadelta":
        return {"sq": z.copy(), "acc": z.copy()}
    return {}


REFS = {"SGD": ref_sgd, "Adam": ref_adam, "AdamW": ref_adamw, "Adagrad": ref_adagrad,
        "RMSprop": ref_rmsprop, "Adadelta": ref_adadelta, "RowWiseAdagrad": ref_rowwise,
        "SparseAdam": ref_sparse_adam}

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.1, "momentum": 0.8, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 1.0}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("RowWiseAdagrad", {"lr": 0.1}),
    ("RowWiseAdagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.1}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in hp.items())}" for n, hp in CASES]

N, D, STEPS = 12, 4, 6


def _sparse_grads(rng, steps=STEPS, n=N, d=D):
    """Uncoalesced row-sparse gradients (duplicates, varying rows) and their dense forms."""
    out = []
    for _ in range(steps):
        nnz = int(rng.integers(1, 8))
        rows = rng.integers(0, n, size=nnz)
        vals = rng.standard_normal((nnz, d))
        dense = np.zeros((n, d))
        np.add.at(dense, rows, vals)
        g = torch.sparse_coo_tensor(torch.tensor(rows[None]), torch.tensor(vals), (n, d))
        out.append((g, dense, np.unique(rows)))
    return out
