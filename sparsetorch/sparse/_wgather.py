"""``wsum_row(x, col, vals, lo, hi, out, i)``: ``out[i] = sum over q in [lo, hi) of vals[q] *
x[col[q]]``, and ``wsum_row_p(x, col, perm, vals, lo, hi, out, i)`` with ``vals[perm[q]]``; numba
intrinsics for the CSR row kernels of ``_spmm.py`` (imported only by their builder, so numba
stays a lazy import).

Written as LLVM IR for the reason ``nn/_kernels/_gather.py`` gives: numba's loop ``o[d] += ...``
keeps the row's sums in memory (LLVM cannot prove that ``o`` and ``x`` do not overlap), so each
group of products waits on a store and a load of the output row. Here they stay in vector
registers: the columns go in groups of four 64-byte vectors, then single vectors, then one
narrower vector each (half, quarter, ... of 64 bytes) for the rest.
The sums are associated exactly as the kernels' loops were (``o[d]`` from zero, then per four
entries ``o[d] += (va * xa[d] + vb * xb[d]) + (vc * xc[d] + vd * xd[d])``, then one at a time;
separate multiplies and adds, no contraction), so every kernel gives the same bits as before
and as each other. Arrays must be C-contiguous (``x`` and ``out`` 2-D of one float dtype, the
pattern int64), the pattern valid (the caller's CSR form).

numba's cache keys a kernel on its own source file: after editing this one, clear the cached
kernels of ``_spmm.py`` (``__pycache__/_spmm*.nb*``), or they keep the old code.
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

__all__ = ["wsum_row", "wsum_row_p"]

GROUP = 4  # vectors summed together: 4 x 16 float32 columns in one pass over the row's entries

_I64 = ir.IntType(64)


def _c(v):
    return ir.Constant(_I64, v)


def _columns(builder, a, col0, count, nvec, vty):
    """The row's sums over ``count`` groups of ``nvec`` values of type ``vty`` (a vector or the
    scalar) from column ``col0`` on; ``a``: the shared values (see the codegen)."""
    width = vty.count if isinstance(vty, ir.VectorType) else 1
    step = nvec * width
    K = a["K"]

    def weight(q):
        idx = q if a["perm"] is None else builder.load(builder.gep(a["perm"], [q]))
        w = builder.load(builder.gep(a["vals"], [idx]))
        if isinstance(vty, ir.VectorType):
            w = builder.insert_element(ir.Constant(vty, ir.Undefined), w, ir.Constant(ir.IntType(32), 0))
            w = builder.shuffle_vector(w, ir.Constant(vty, ir.Undefined),
                                       ir.Constant(ir.VectorType(ir.IntType(32), width), None))
        return w

    def row(q, col, k):
        r = builder.load(builder.gep(a["col"], [q]))
        p = builder.gep(a["x"], [builder.add(builder.add(builder.mul(r, K), col), _c(k * width))])
        return builder.load(builder.bitcast(p, vty.as_pointer()), align=a["align"])

    accs = [cgutils.alloca_once(builder, vty) for _ in range(nvec)]  # promoted to registers
    zero = ir.Constant(vty, None)
    n = builder.sub(a["hi"], a["lo"])
    n4 = builder.udiv(n, _c(4))
    with cgutils.for_range(builder, count) as g:
        col = builder.add(col0, builder.mul(g.index, _c(step)))
        for acc in accs:
            builder.store(zero, acc)
        with cgutils.for_range(builder, n4) as blk:
            q = builder.add(a["lo"], builder.mul(blk.index, _c(4)))
            qs = [builder.add(q, _c(t)) for t in range(4)]
            ws = [weight(qt) for qt in qs]
            for k, acc in enumerate(accs):
                pr = [builder.fmul(ws[t], row(qs[t], col, k)) for t in range(4)]
                s = builder.fadd(builder.fadd(pr[0], pr[1]), builder.fadd(pr[2], pr[3]))
                builder.store(builder.fadd(builder.load(acc), s), acc)
        rest0 = builder.add(a["lo"], builder.mul(n4, _c(4)))
        with cgutils.for_range_slice(builder, rest0, a["hi"], _c(1), inc=True) as (q, _):
            w = weight(q)
            for k, acc in enumerate(accs):
                builder.store(builder.fadd(builder.load(acc), builder.fmul(w, row(q, col, k))),
                              acc)
        dst = builder.gep(a["out"], [col])
        for k, acc in enumerate(accs):
            p = builder.bitcast(builder.gep(dst, [_c(k * width)]), vty.as_pointer())
            builder.store(builder.load(acc), p, align=a["align"])


def _check(name, x, col, perm, vals, out):
    arrays = (x, col, vals, out) + ((perm,) if perm is not None else ())
    if not all(isinstance(t, types.Array) and t.layout == "C" for t in arrays):
        raise TypingError(f"{name}: C-contiguous arrays expected")
    if x.ndim != 2 or out.ndim != 2 or col.ndim != 1 or vals.ndim != 1:
        raise TypingError(f"{name}: 2-D x and out, 1-D col and vals expected")
    if col.dtype != types.int64 or perm is not None and (perm.ndim != 1 or perm.dtype != types.int64):
        raise TypingError(f"{name}: 1-D int64 col and perm expected")
    if x.dtype not in (types.float32, types.float64) or out.dtype != x.dtype \
            or vals.dtype != x.dtype:
        raise TypingError(f"{name}: float32 / float64 x, with vals and out of its dtype")


@intrinsic
def wsum_row(typingctx, x, col, vals, lo, hi, out, i):
    _check("wsum_row", x, col, None, vals, out)
    sig = types.void(x, col, vals, types.int64, types.int64, out, types.int64)
    return sig, _codegen(False)


@intrinsic
def wsum_row_p(typingctx, x, col, perm, vals, lo, hi, out, i):
    _check("wsum_row_p", x, col, perm, vals, out)
    sig = types.void(x, col, perm, vals, types.int64, types.int64, out, types.int64)
    return sig, _codegen(True)


def _codegen(permuted):
    def codegen(context, builder, signature, args):
        if permuted:
            xv, cv, pv, vv, lo, hi, ov, i = args
            xt, ct, pt, vt, _, _, ot, _ = signature.args
        else:
            xv, cv, vv, lo, hi, ov, i = args
            xt, ct, vt, _, _, ot, _ = signature.args
        xa = context.make_array(xt)(context, builder, xv)
        ca = context.make_array(ct)(context, builder, cv)
        va = context.make_array(vt)(context, builder, vv)
        oa = context.make_array(ot)(context, builder, ov)
        perm = context.make_array(pt)(context, builder, pv).data if permuted else None
        K = cgutils.unpack_tuple(builder, xa.shape, 2)[1]
        ety = context.get_data_type(xt.dtype)
        itemsize = context.get_abi_sizeof(ety)
        V = 64 // itemsize
        vty = ir.VectorType(ety, V)
        a = {"x": xa.data, "col": ca.data, "perm": perm, "vals": va.data, "lo": lo, "hi": hi,
             "K": K, "align": itemsize, "out": builder.gep(oa.data, [builder.mul(i, K)])}
        gw = GROUP * V
        n4 = builder.udiv(K, _c(gw))
        c1 = builder.mul(n4, _c(gw))
        n1 = builder.udiv(builder.sub(K, c1), _c(V))
        c2 = builder.add(c1, builder.mul(n1, _c(V)))
        _columns(builder, a, _c(0), n4, GROUP, vty)
        _columns(builder, a, c1, n1, 1, vty)
        c = c2  # the last K % V columns: one narrower vector each of V/2, V/4, ..., 1 wide
        w = V // 2  # that fits (7 float32 columns: 4 + 2 + 1, three passes, not seven)
        while w >= 1:
            cnt = builder.zext(builder.icmp_signed(">=", builder.sub(K, c), _c(w)), _I64)
            _columns(builder, a, c, cnt, 1, ir.VectorType(ety, w) if w > 1 else ety)
            c = builder.add(c, builder.mul(cnt, _c(w)))
            w //= 2
        return context.get_dummy_value()

    return codegen
