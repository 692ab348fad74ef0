"""Finite-difference checks of gradients: ``gradcheck`` and ``gradgradcheck`` (torch.autograd).

Complex numbers are handled by viewing each complex entry as two real ones (real, imaginary):
with torch's convention, the gradient of a real loss ``L`` w.r.t. ``z = a + ib`` is
``dL/da + i dL/db``, so a vector-Jacobian product with the unit grad ``1`` (or ``1j``) at one
output entry gives the row of the real Jacobian for that entry's real (or imaginary) part.

The Jacobians are host-side NumPy float64 matrices of shape ``(input entries, output entries)``,
as in torch's error messages; inputs are perturbed in place through their payload with the
device's array module.
"""

import warnings

import numpy as np

from .._tensor import Tensor as _Tensor, wrap as _wrap
from .._layout import strided
from . import engine

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` / ``gradgradcheck`` when a gradient check fails."""


# ---- inputs and outputs ----

def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    return isinstance(x, _Tensor)


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o._rg)


def _is_sparse(t):
    return _is_tensor(t) and t.layout is not strided


def _sparse_as_values(func, inputs, outputs):
    """torch's ``masked=True`` / ``as_sparse_gradcheck`` idea: check w.r.t. the stored values.

    Each sparse input that requires grad is replaced by a dense leaf holding its stored values
    (duplicates of an uncoalesced COO included); the wrapped function rebuilds the sparse input
    from its detached pattern with ``with_values``, so only specified elements are perturbed and
    the Jacobian is over ``values`` (masked semantics: unspecified elements have no gradient).
    Sparse outputs are compared through ``to_dense()`` restricted to the elements the output
    specifies at the unperturbed inputs: by the same masked semantics an unspecified output
    element carries no gradient, even where a perturbation would make it appear (``to_sparse``
    of a dense input that holds zeros).
    """
    from .. import _ops

    patterns = {}
    new_inputs = list(inputs)
    for i, t in enumerate(inputs):
        if _is_sparse(t) and t._rg:
            pattern = t.detach()
            patterns[i] = pattern
            new_inputs[i] = _ops._values(pattern).clone().requires_grad_(True)
    masks = [_output_mask(o) if _is_sparse(o) else None for o in outputs]

    def dense_out(k, o):
        if not _is_sparse(o):
            return o
        m = masks[k] if k < len(masks) else None
        return o.to_dense() if m is None else o.to_dense() * m

    def dense_func(*args):
        rebuilt = list(args)
        for i, pattern in patterns.items():
            rebuilt[i] = _ops.with_values(pattern, args[i])
        out = func(*rebuilt)
        if isinstance(out, (tuple, list)):
            return tuple(dense_out(k, o) for k, o in enumerate(out))
        return dense_out(0, out)

    return dense_func, tuple(new_inputs)


def _output_mask(o):
    """Dense 1/0 indicator of the elements a sparse output specifies (duplicates counted once)."""
    from .. import _ops

    p = o.detach()
    if p.layout.name == "sparse_coo":
        p = p.coalesce()
    v = _ops._values(p)
    return _ops.with_values(p, _ops.ones_like(v)).to_dense()


def _dense_grad(g):
    """A gradient in a layout other than strided is compared through its dense form."""
    return g.to_dense() if g.layout is not strided else g


def _host(a):
    """A device array as a NumPy array (no copy on the CPU)."""
    return a if isinstance(a, np.ndarray) else a.get()


def _realify(a, is_complex):
    """Flatten a host array to float64, complex entries as consecutive (real, imag) pairs."""
    a = np.asarray(a).reshape(-1)
    if is_complex:
        return np.stack([a.real, a.imag], axis=1).reshape(-1).astype(np.float64)
    return a.real.astype(np.float64) if np.iscomplexobj(a) else a.astype(np.float64)


def _real_size(t):
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _parts(t):
    return (1, 1j) if t.dtype.is_complex else (1,)


# ---- numerical Jacobian ----

def _eval_outputs(func, inputs):
    outs = [o for o in _as_tuple(func(*inputs)) if _is_tensor(o)]
    return [(_host(o._data).copy(), o.dtype.is_complex) for o in outs]


def _numerical_jacobian(func, inputs, diff, out_index, out_sizes, eps):
    """J[i][j]: (real entries of diff input i, real entries of output j) by central differences."""
    jac = []
    for t in diff:
        data = t._data
        per_out = [np.zeros((_real_size(t), n)) for n in out_sizes]
        r = 0
        for idx in np.ndindex(*t.shape):
            orig = data[idx].item()
            for part in _parts(t):
                data[idx] = orig - eps * part
                minus = _eval_outputs(func, inputs)
                data[idx] = orig + eps * part
                plus = _eval_outputs(func, inputs)
                data[idx] = orig
                for k, j in enumerate(out_index):
                    per_out[k][r, :] = _realify((plus[j][0] - minus[j][0]) / (2 * eps), plus[j][1])
                r += 1
        jac.append(per_out)
    return jac


# ---- analytical Jacobian ----

def _unit(o, k, part):
    be_xp = _backend_xp(o)
    a = be_xp.zeros(tuple(o.shape), dtype=o.dtype.np)
    a.reshape(-1)[k] = part
    return _wrap(a, o.dtype, o.device, strided)


def _backend_xp(t):
    from .._backend import get_backend

    return get_backend(t.device).xp


def _vjp(o, go, diff, check_grad_dtypes):
    grads = engine.grad([o], diff, [go], retain_graph=True, allow_unused=True)
    rows = []
    for t, g in zip(diff, grads):
        if g is None:
            rows.append(np.zeros(_real_size(t)))
            continue
        g = _dense_grad(g)
        if tuple(g.shape) != tuple(t.shape):
            raise GradcheckError("Analytical gradient has incorrect size")
        if check_grad_dtypes and g.dtype is not t.dtype:
            raise GradcheckError("Gradient has dtype mismatch")
        rows.append(_realify(_host(g._data), t.dtype.is_complex))
    return rows


def _analytical_jacobian(outputs, diff, check_grad_dtypes):
    """J[i][j] like the numerical one; row r of output j is a VJP with a unit grad_output."""
    jac = [[None] * len(outputs) for _ in diff]
    for j, o in enumerate(outputs):
        cols = []
        for k in range(o.numel()):
            for part in _parts(o):
                cols.append(_vjp(o, _unit(o, k, part), diff, check_grad_dtypes))
        for i, t in enumerate(diff):
            m = np.zeros((_real_size(t), len(cols)))
            for r, c in enumerate(cols):
                m[:, r] = c[i]
            jac[i][j] = m
    return jac


# ---- comparison and messages ----

def _show(m):
    from .._ops import tensor

    return repr(tensor(m))


def _allclose(a, n, rtol, atol):
    return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _slow_check(func, inputs, diff, outputs, out_index, eps, atol, rtol, nondet_tol,
                check_grad_dtypes):
    sizes = [_real_size(o) for o in outputs]
    numerical = _numerical_jacobian(func, inputs, diff, out_index, sizes, eps)
    analytical = _analytical_jacobian(outputs, diff, check_grad_dtypes)
    for i in range(len(diff)):
        for j in range(len(outputs)):
            n, a = numerical[i][j], analytical[i][j]
            if a.shape != n.shape or not _allclose(a, n, rtol, atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{_show(n)}\nanalytical:{_show(a)}\n"
                )
    again = _analytical_jacobian(outputs, diff, check_grad_dtypes)
    for i in range(len(diff)):
        for j in range(len(outputs)):
            if np.max(np.abs(again[i][j] - analytical[i][j]), initial=0.0) > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient. The tolerance for nondeterminism was "
                    f"{nondet_tol}."
                )


def _random_like(rng, t):
    """A random unit-norm direction with ``t``'s shape (complex: both parts random)."""
    v = rng.standard_normal(tuple(t.shape))
    if t.dtype.is_complex:
        v = v + 1j * rng.standard_normal(tuple(t.shape))
    norm = np.sqrt(np.sum(np.abs(v) ** 2))
    return v / norm if norm > 0 else v


def _fast_check(func, inputs, diff, outputs, out_index, eps, atol, rtol, check_grad_dtypes):
    """Random projections: compare v^T J u numerically and analytically for each (input, output).

    Returns the first mismatching (i, j, numerical, analytical) or None.
    """
    rng = np.random.default_rng(0)
    us = [_random_like(rng, t) for t in diff]
    vs = [_random_like(rng, o) for o in outputs]
    xp_vs = []
    for o, v in zip(outputs, vs):
        xp = _backend_xp(o)
        xp_vs.append(_wrap(xp.asarray(v.astype(o.dtype.np)), o.dtype, o.device, strided))
    # analytical: u . (v^T J) for each (i, j)
    analytical = [[0.0] * len(outputs) for _ in diff]
    for j, (o, go) in enumerate(zip(outputs, xp_vs)):
        rows = _vjp(o, go, diff, check_grad_dtypes)
        for i, t in enumerate(diff):
            analytical[i][j] = float(rows[i] @ _realify(us[i], t.dtype.is_complex))
    # numerical: v . (J u), J u by a central difference along u
    for i, t in enumerate(diff):
        data = t._data
        orig = data.copy()
        xp = _backend_xp(t)
        step = xp.asarray((eps * us[i]).astype(t.dtype.np))
        data -= step
        minus = _eval_outputs(func, inputs)
        data[...] = orig
        data += step
        plus = _eval_outputs(func, inputs)
        data[...] = orig
        for k, j in enumerate(out_index):
            d = _realify((plus[j][0] - minus[j][0]) / (2 * eps), plus[j][1])
            num = float(d @ _realify(vs[k], outputs[k].dtype.is_complex))
            a = analytical[i][k]
            if not abs(a - num) <= atol + rtol * abs(num):
                return i, k, num, a
    return None


def _check_undefined_grad(outputs, diff):
    """All-zero output grads must give zero (or no) input grads."""
    zeros = [_wrap(_backend_xp(o).zeros(tuple(o.shape), dtype=o.dtype.np), o.dtype,
                            o.device, strided) for o in outputs]
    grads = engine.grad(list(outputs), diff, zeros, retain_graph=True, allow_unused=True)
    for g in grads:
        if g is not None and g.layout is strided and np.any(_host(g._data) != 0):
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are "
                "undefined or zero."
            )


# ---- public entry points ----

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check gradients computed via small finite differences against analytical ones.

    ``func`` maps ``inputs`` (a tensor or a tuple mixing tensors and other values) to a tensor
    or tuple of tensors. Inputs that require grad are perturbed by ``eps`` (central
    differences); each analytical Jacobian must satisfy ``|a - n| <= atol + rtol * |n|``
    elementwise. Use float64 (or complex128) inputs: lower precision warns and will likely fail.

    Returns True if all checks pass; on failure raises :class:`GradcheckError`, or returns False
    when ``raise_exception=False``.

    >>> x = sparsetorch.randn(3, dtype=sparsetorch.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sin(), (x,))
    True

    Sparse inputs (COO/CSR) that require grad are checked w.r.t. their stored values only, as
    torch's ``masked=True``: unspecified elements are never perturbed and have no gradient
    (masked semantics); duplicates of an uncoalesced COO are perturbed one by one. Sparse outputs
    (restricted to the elements they specify) and sparse gradients are compared through
    ``to_dense()``.

    ``check_batched_grad`` is accepted and not performed (no vmap in sparsetorch);
    ``check_forward_ad`` / ``check_batched_forward_grad`` raise NotImplementedError.
    """
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: sparsetorch has no forward-mode AD")
    tupled = _as_tuple(inputs)
    try:
        _gradcheck(func, tupled, eps, atol, rtol, nondet_tol, check_undefined_grad,
                   check_grad_dtypes, check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_backward_ad, fast_mode):
    diff = []
    for i, t in enumerate(inputs):
        if _is_tensor(t) and t._rg:
            if t.dtype.name not in ("float64", "complex128"):
                warnings.warn(
                    f"Input #{i} requires gradient and is not a double precision floating point or "
                    "complex. This check will likely fail if all the inputs are not of double "
                    "precision floating point or complex. ",
                    UserWarning,
                    stacklevel=4,
                )
            diff.append(t)
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )
    out = _as_tuple(func(*inputs))
    if any(_is_sparse(t) for t in diff) or any(_is_sparse(o) for o in out):
        # check the dense function of the stored values instead (see _sparse_as_values)
        func, inputs = _sparse_as_values(func, inputs, out)
        diff = [t for t in inputs if _is_tensor(t) and t._rg]
        out = _as_tuple(func(*inputs))
    tensors = [o for o in out if _is_tensor(o)]
    out_index = [j for j, o in enumerate(tensors) if o._rg]
    outputs = [tensors[j] for j in out_index]
    if not outputs:
        all_index = list(range(len(tensors)))
        sizes = [_real_size(o) for o in tensors]
        numerical = _numerical_jacobian(func, inputs, diff, all_index, sizes, eps)
        for per_out in numerical:
            for n in per_out:
                if not np.allclose(n, 0.0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    if not check_backward_ad:
        return
    if fast_mode:
        bad = _fast_check(func, inputs, diff, outputs, out_index, eps, atol, rtol,
                          check_grad_dtypes)
        if bad is not None:
            i, j, num, a = bad
            try:
                _slow_check(func, inputs, diff, outputs, out_index, eps, atol, rtol, nondet_tol,
                            check_grad_dtypes)
                detail = "The slow-mode check passed; the projection is numerically sensitive."
            except GradcheckError as e:
                detail = f"Recomputed in slow mode:\n{e}"
            raise GradcheckError(
                f"Jacobian mismatch for output {j} with respect to input {i},\n"
                f"numerical:{num}\nanalytical:{a}\n\nThe above quantities relating the numerical "
                "and analytical jacobians are computed in fast mode (random projections).\n"
                f"{detail}"
            )
    else:
        _slow_check(func, inputs, diff, outputs, out_index, eps, atol, rtol, nondet_tol,
                    check_grad_dtypes)
    if check_undefined_grad:
        _check_undefined_grad(outputs, diff)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second-order gradients: gradcheck of the function ``(inputs, grad_outputs) ->
    autograd.grad(func(inputs), inputs, grad_outputs, create_graph=True)``.

    ``grad_outputs`` default to random tensors in [-1, 1) that require grad.

    >>> x = sparsetorch.randn(3, dtype=sparsetorch.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: t ** 3, (x,))
    True
    """
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: sparsetorch has no forward-mode AD")
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        from ..testing import make_tensor

        outs = _differentiable_outputs(func(*tupled))
        grad_outputs = tuple(
            make_tensor(o.shape, dtype=o.dtype, device=o.device, low=-1, high=1,
                        requires_grad=True, noncontiguous=gen_non_contig_grad_outputs)
            for o in outs
        )
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def new_func(*args):
        input_args = args[:-n_out] if n_out else args
        gos = args[-n_out:] if n_out else ()
        outputs = _differentiable_outputs(func(*input_args))
        diff_in = [x for x in input_args if _is_tensor(x) and x._rg]
        grads = engine.grad(outputs, diff_in, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, tupled + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_backward_ad=check_rev_over_rev, fast_mode=fast_mode, masked=masked)


# ``sparsetorch.autograd.gradcheck`` is this module's function (the package re-exports it under
# the module's name, as torch does); these attributes keep ``autograd.gradcheck.gradcheck`` and
# ``autograd.gradcheck.GradcheckError`` working on that function too.
gradcheck.gradcheck = gradcheck
gradcheck.gradgradcheck = gradgradcheck
gradcheck.GradcheckError = GradcheckError
