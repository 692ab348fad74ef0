"""Malformed input across the public API: every case raises a documented exception type with a
message that names what was wrong -- never NumPy's error from deep inside, never a result, never
a hang. The cases are a table (``_catalogue.CASES`` plus the checkpoint and DataLoader cases
here); ``test_catalogue_size`` reports how many there are."""

import io
import json
import os
import pickle
import re
import signal
import zipfile

import numpy as np
import pytest

import sparsetorch as st

from ._catalogue import CASES, R, T, V

DOCUMENTED = (ValueError, TypeError, IndexError, RuntimeError, NotImplementedError, MemoryError)
# NumPy/SciPy's own wording: a message like this means a kernel's error leaked to the user
RAW = re.compile(
    r"out of bounds for axis|could not broadcast|operands could not be broadcast|Unable to allocate"
    r"|cannot reshape array|setting an array element with a sequence|negative dimensions are not"
    r"|arrays used as indices must be|only integers, slices|zero-size array to reduction"
    r"|array is too big|ufunc '|Python int too large"
)
_MARKER = "/tmp/sparsetorch-reliability-pwned"


# ---- checkpoints (sparsetorch.load) ----

def _checkpoint():  # sparsetorch's own manifest format (still loaded): the JSON cases edit it
    from sparsetorch.serialization._save import save_manifest

    b = io.BytesIO()
    save_manifest({"w": st.ones(3), "s": st.eye(3).to_sparse()}, b)
    return b.getvalue()


def _members(raw):
    z = zipfile.ZipFile(io.BytesIO(raw))
    return {n: z.read(n) for n in z.namelist()}


def _rezip(members):
    """A well-formed ZIP (fresh CRCs) of ``members``: reaches the decoder's own checks."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        for n, d in members.items():
            z.writestr(n, d)
    return b.getvalue()


def _edit_manifest(fn):
    m = _members(_checkpoint())
    doc = json.loads(m["sparsetorch/manifest.json"])
    fn(doc)
    m["sparsetorch/manifest.json"] = json.dumps(doc).encode()
    return _rezip(m)


def _tensor_node(doc, key):
    return dict(doc["root"]["items"])[key]


def _huge_array(doc):  # a "bomb": claims 10^15 floats in a member of 12 bytes
    node = _tensor_node(doc, "w")
    node["shape"] = node["data"]["shape"] = [10**15]


def _index_past_size(doc):
    _tensor_node(doc, "s")["shape"] = [2, 2]  # indices go up to 2: out of range for size 2


def _evil_pickle():
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {_MARKER}",))

    return pickle.dumps(Evil())


def _torch_style_zip():
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("archive/data.pkl", _evil_pickle())
    return b.getvalue()


def _load_bytes(raw):
    return lambda t: t.load(io.BytesIO(raw))


def _load_cases():
    if not hasattr(st, "load"):
        return []
    raw = _checkpoint()
    ser = r"(?i)checkpoint|corrupt|truncat|CRC|ZIP"
    return [
        ("load-empty-file", _load_bytes(b""), R, r"empty \(0 bytes\)"),
        ("load-truncated-tail", _load_bytes(raw[:-40]), R, r"truncated|corrupted"),
        ("load-truncated-head", _load_bytes(raw[:30]), R, r"truncated|corrupted"),
        ("load-random-bytes", _load_bytes(bytes(range(256)) * 2), R, r"not a sparsetorch checkpoint|ZIP magic"),
        ("load-garbled-manifest", _load_bytes(raw.replace(b'"version":1', b'"version":9', 1)), R, r"CRC-32|corrupt"),
        ("load-pickle-payload", _load_bytes(_evil_pickle()), R, r"Unsupported global: GLOBAL (posix|nt)\.system"),
        ("load-torch-zip-with-pickle", _load_bytes(_torch_style_zip()), R, r"Unsupported global: GLOBAL (posix|nt)\.system"),
        ("load-manifest-bomb", _load_bytes(_edit_manifest(_huge_array)), R, ser + r"|size|bytes|shape"),
        ("load-sparse-index-past-size", _load_bytes(_edit_manifest(_index_past_size)), R, r"invalid sparse tensor|size is inconsistent"),
        ("load-unknown-member", _load_bytes(_rezip({**_members(raw), "sparsetorch/evil.py": b"x"})), R, r"unexpected member"),
        ("load-not-a-file", lambda t: t.load(123), T, r"f must be a path"),
    ]


# ---- batching (sparsetorch.utils.data) ----

def _collate_cases():
    try:
        from sparsetorch.utils.data import DataLoader, default_collate
        from sparsetorch.utils.data.collate import collate_id_lists
    except ImportError:
        return []
    data = list(range(4))
    return [
        ("collate-shapes-differ", lambda t: default_collate([t.ones(2), t.ones(3)]), R, r"stack expects each tensor to be equal size"),
        ("collate-layouts-differ", lambda t: default_collate([t.ones(2), t.ones(2).to_sparse()]), T, r"different layouts"),
        ("collate-object", lambda t: default_collate([object(), object()]), T, r"batch must contain tensors"),
        ("collate-unequal-lists", lambda t: default_collate([[1, 2], [1]]), R, r"equal size"),
        ("collate-csr-nnz-differ", lambda t: default_collate([t.eye(2).to_sparse_csr(), t.ones(2, 2).to_sparse_csr()]), R, r"CSR samples with different numbers"),
        ("collate-numpy-scalar-mixed", lambda t: default_collate([np.float64(1.0), t.ones(2)]), R, r"NumPy scalar"),
        ("collate-id-lists-float", lambda t: collate_id_lists([[1.5], [2]]), T, r"ids must be integers"),
        ("collate-id-lists-empty", lambda t: collate_id_lists([]), V, r"batch is empty"),
        ("loader-batch-size-0", lambda t: DataLoader(data, batch_size=0), V, r"batch_size should be a positive integer"),
        ("loader-negative-workers", lambda t: DataLoader(data, num_workers=-1), V, r"num_workers option should be non-negative"),
        ("loader-sampler-and-shuffle", lambda t: DataLoader(data, sampler=[0, 1], shuffle=True), V, r"mutually exclusive with shuffle"),
        ("loader-negative-timeout", lambda t: DataLoader(data, timeout=-1), V, r"timeout option should be non-negative"),
    ]


# ---- devices: 'cuda' where there is none (torch's CPU build raises an AssertionError) ----

def _device_cases():
    cuda = getattr(st, "cuda", None)
    if cuda is None or cuda.is_available():
        return []
    no_cuda = r"(?i)CUDA is not available.*device='cpu'"
    return [
        ("cuda-zeros", lambda t: t.zeros(2, device="cuda"), R, no_cuda),
        ("cuda-to", lambda t: t.ones(2).to("cuda"), R, no_cuda),
        ("cuda-method", lambda t: t.ones(2).cuda(), R, no_cuda),
        ("cuda-sparse-ctor", lambda t: t.sparse_coo_tensor([[0]], [1.0], (2,), device="cuda"), R, no_cuda),
        ("cuda-index", lambda t: t.tensor([1.0], device="cuda:3"), R, no_cuda),
    ]


ALL_CASES = CASES + _load_cases() + _collate_cases() + _device_cases()


def test_catalogue_size(capsys):
    ids = [c[0] for c in ALL_CASES]
    assert len(set(ids)) == len(ids), "duplicate case ids"
    with capsys.disabled():
        print(f"\n[reliability] malformed-input catalogue: {len(ALL_CASES)} cases")
    assert len(ALL_CASES) >= 60


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("cid,fn,etype,match", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_malformed(cid, fn, etype, match):
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if old is not None:
        signal.alarm(20)  # a hang is a failure, not a stuck CI job
    try:
        with pytest.raises(DOCUMENTED) as info:
            fn(st)
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    e = info.value
    assert isinstance(e, etype), f"{cid}: expected {etype}, got {type(e).__name__}: {e}"
    msg = str(e)
    assert re.search(match, msg), f"{cid}: message {msg!r} does not match {match!r}"
    assert not RAW.search(msg), f"{cid}: a raw NumPy/SciPy message leaked: {msg!r}"
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename
    assert "/numpy/" not in where and "/scipy/" not in where, f"{cid}: raised inside {where}"
    assert not os.path.exists(_MARKER), "a checkpoint executed code"


def test_guard_error_is_memory_and_runtime_error():
    with pytest.raises(MemoryError):
        st.sparse_coo_tensor([[0], [0]], [1.0], (10**7, 10**7)).to_dense()
    with pytest.raises(RuntimeError):  # what `except torch.OutOfMemoryError`-style code catches
        st.sparse_coo_tensor([[0], [0]], [1.0], (10**7, 10**7)).to_dense()
    assert issubclass(st.DenseAllocationError, (MemoryError, RuntimeError))


# Where torch raises too but with another type; each difference is deliberate.
TORCH_TYPE_DIFFERS = {
    # sparse invariant violations raise SparseInvariantError (a ValueError and a RuntimeError);
    # a 3-D indices tensor is caught earlier, as a plain ValueError naming the argument
    "coo-indices-3d",
    "coo-values-sparse",  # TypeError naming values; torch fails later on a size check
    "tensor-strings",  # torch: ValueError for ['a'] but TypeError for 'a' and [1, 'a']
    "to-sparse-csr-1d",  # torch's IndexError comes from an internal select()
    "bag-id-out-of-range",  # torch: IndexError from Embedding, RuntimeError from EmbeddingBag
}


@pytest.mark.filterwarnings("ignore")
def test_error_types_match_torch():
    torch = pytest.importorskip("torch")
    import warnings

    differ, compared = set(), 0
    for cid, fn, _etype, _match in CASES:
        if "terabytes" in cid:  # torch would try to allocate them
            continue
        try:
            fn(st)
        except Exception as e:  # noqa: BLE001
            ours = e
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(torch)
        except Exception as e:  # noqa: BLE001
            compared += 1
            if not isinstance(ours, type(e)):
                differ.add(cid)
    assert compared >= 100
    assert differ == TORCH_TYPE_DIFFERS, f"new differences: {differ - TORCH_TYPE_DIFFERS}, " \
        f"gone: {TORCH_TYPE_DIFFERS - differ}"
