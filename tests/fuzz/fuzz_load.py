"""Fuzz ``sparsetorch.load``: raw bytes, byte-patched checkpoints (PyTorch's format and the older
manifest one), and well-formed ZIPs whose pickle, manifest and arrays are mutated (CRCs
recomputed, so the decoders themselves are reached).

``load`` must either return objects that are sound (sparse tensors pass their invariants and
densify to what their indices say) or raise a documented error -- never execute anything, hang,
or fail with another exception. Run: ``python tests/fuzz/fuzz_load.py -max_total_time=10``.
"""

import io
import json
import math
import os
import sys
import zipfile

import atheris

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(os.path.dirname(_HERE))]  # _common; the repo's sparsetorch
from _common import Finding, check_exception, classified, instrumented, main

with instrumented():
    import sparsetorch as st
    from sparsetorch.serialization import load, save
    from sparsetorch.serialization._save import save_manifest

_LIMIT = 1 << 20


def _seed_checkpoints():
    out = []
    objs = [
        {"w": st.arange(6.0).reshape(2, 3), "s": st.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(),
         "c": st.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr(), "meta": [1, 2.5, "x", None, (3,)]},
        st.nn.Linear(3, 2).state_dict(),
        [st.ones(2, dtype=st.int64), st.zeros(0), st.tensor(True)],
    ]
    for o in objs:
        for write in (save, save_manifest):  # PyTorch's format and sparsetorch's older one
            b = io.BytesIO()
            write(o, b)
            out.append(b.getvalue())
    return out


_SEEDS = _seed_checkpoints()
_MEMBERS = []
for _raw in _SEEDS:
    _z = zipfile.ZipFile(io.BytesIO(_raw))
    _MEMBERS.append([(n, _z.read(n)) for n in _z.namelist()])


def _mutate_text(fdp, text):
    """A few edits of a JSON manifest: replace a span with fuzzer bytes, or swap a number."""
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        if not text:
            break
        i = fdp.ConsumeIntInRange(0, len(text) - 1)
        j = min(len(text), i + fdp.ConsumeIntInRange(0, 12))
        choice = fdp.ConsumeIntInRange(0, 3)
        if choice == 0:
            rep = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 12))
        elif choice == 1:
            rep = str(fdp.ConsumeIntInRange(-(2**64), 2**64)).encode()
        elif choice == 2:
            rep = json.dumps(fdp.ConsumeUnicodeNoSurrogates(8)).encode()
        else:
            rep = [b"[", b"]", b"{", b"}", b'"T":"tensor"', b"null", b"-1", b"1e308", b"NaN",
                   b'"sparse_coo"', b'"sparse_csr"', b'"float16"', b'"bool"', b'"ref"'][fdp.ConsumeIntInRange(0, 13)]
        text = text[:i] + rep + text[j:]
    return text


def _rezip(fdp, members):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            if fdp.ConsumeIntInRange(0, 9) == 0:
                continue  # drop a member
            if name.endswith("manifest.json"):
                data = _mutate_text(fdp, data) if fdp.ConsumeIntInRange(0, 3) else data
            elif fdp.ConsumeIntInRange(0, 3) == 0:
                data = _mutate_text(fdp, data)
            z.writestr(name, data)
        if fdp.ConsumeIntInRange(0, 15) == 0:
            z.writestr(["data.pkl", "sparsetorch/evil.py", "sparsetorch/data/99"][fdp.ConsumeIntInRange(0, 2)], b"x")
    return b.getvalue()


def _make(fdp):
    mode = fdp.ConsumeIntInRange(0, 3)
    k = fdp.ConsumeIntInRange(0, len(_SEEDS) - 1)
    if mode == 0:
        return fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
    raw = _SEEDS[k]
    if mode == 1:  # patch bytes of a real checkpoint / truncate it
        raw = bytearray(raw)
        for _ in range(fdp.ConsumeIntInRange(0, 4)):
            i = fdp.ConsumeIntInRange(0, len(raw) - 1)
            patch = fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 8))
            raw[i:i + len(patch)] = patch
        return bytes(raw[: fdp.ConsumeIntInRange(0, len(raw))]) if fdp.ConsumeBool() else bytes(raw)
    return _rezip(fdp, _MEMBERS[k])


def _check_loaded(obj, depth=0):
    if depth > 50:
        return
    if isinstance(obj, st.Tensor):
        repr(obj)
        if obj.layout is not st.strided and math.prod(obj.shape) * obj.dtype.itemsize <= _LIMIT:
            d = obj.to_dense()
            c = obj.to_sparse_coo().coalesce()
            if c._nnz() and not bool((d == c.to_dense()).all() | d.isnan().any()):
                raise Finding("loaded sparse tensor: to_dense differs from coalesce().to_dense()")
    elif isinstance(obj, dict):
        for v in obj.values():
            _check_loaded(v, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            _check_loaded(v, depth + 1)


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    raw = _make(fdp)
    with st.sparse.densify_limit(_LIMIT):
        try:
            obj = load(io.BytesIO(raw))  # weights_only=True: False would run what the bytes name
        except Exception as e:  # noqa: BLE001 - the point: classify every error
            check_exception(e)
            return
        with classified():
            _check_loaded(obj)


if __name__ == "__main__":
    main(TestOneInput)
