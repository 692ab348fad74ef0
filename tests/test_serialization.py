"""sparsetorch.save / load: bit-exact round trips of every layout x dtype, containers, module and
optimizer state dicts (training continues identically), storage sharing, atomic writes, map_location.
Malformed files: tests/test_serialization_malformed.py."""

import io
import math
import os
import pathlib
import pickle
import struct
import subprocess
import sys
import zipfile
from collections import OrderedDict

import ml_dtypes
import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _dtype as D
from sparsetorch.serialization import _format, load, save
from sparsetorch.serialization._save import save_manifest


def _from_np(a):
    """A tensor on ``a``'s buffer for every dtype (``from_numpy`` refuses ml_dtypes' bfloat16)."""
    from sparsetorch import _dtype
    from sparsetorch._dispatch import wrap

    return wrap(a, _dtype._FROM_NP[a.dtype], st.device("cpu"), st.strided)


ALL_DTYPES = list(D.ALL)


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **load_kw)


def roundtrip_manifest(obj):
    """Through sparsetorch's own (older, JSON-manifest) format, which load still reads."""
    buf = io.BytesIO()
    save_manifest(obj, buf)
    buf.seek(0)
    return load(buf)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def parts(t):
    """Every array that defines ``t``, as (dtype, shape, bytes): equal parts = bitwise equal."""
    if t.layout is st.strided:
        return [_bits(t._data)]
    p = t._data
    if t.layout is st.sparse_coo:
        return [_bits(p.indices), _bits(p.values), p.coalesced]
    return [_bits(p.crow), _bits(p.col), _bits(p.values)]


def assert_same(a, b):
    assert type(a) is type(b)
    assert (a.layout, a.dtype, tuple(a.shape), a.requires_grad) == (b.layout, b.dtype, tuple(b.shape),
                                                                    b.requires_grad)
    assert a.device == b.device
    assert parts(a) == parts(b)


def special_values(d, n):
    """``n`` values of dtype ``d`` including NaNs with payloads, -0.0, inf and extremes."""
    rng = np.random.default_rng(int(d.itemsize) + n)
    m, n = n, max(n, 8)  # room for the special values; the first ``m`` are returned
    if d is D.bool:
        return (rng.random(n) < 0.5)[:m]
    if d.is_floating_point or d.is_complex:
        real = d.to_real().np
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[real.itemsize]
        nans = {2: [0x7E01, 0xFE33], 4: [0x7FC00001, 0xFFA12345], 8: [0x7FF8000000000ABC,
                                                                     0xFFF0000000000001]}[real.itemsize]
        v = rng.standard_normal(n * (2 if d.is_complex else 1)).astype(real)
        v[:4] = [-0.0, np.inf, -np.inf, (ml_dtypes.finfo if d is D.bfloat16 else np.finfo)(real).tiny]
        v[4:6] = np.array(nans, bits).view(real)
        return (v.view(d.np) if d.is_complex else v)[:m]
    info = np.iinfo(d.np)
    v = rng.integers(info.min, info.max, n, dtype=d.np, endpoint=True)
    v[:2] = [info.min, info.max]
    return v[:m]


def coo(d, hybrid=False, coalesced=False):
    idx = np.array([[0, 3, 1, 3, 0, 2, 1, 3], [2, 1, 0, 1, 4, 4, 3, 0]])
    if coalesced:
        idx = np.array([[0, 0, 1, 1, 2, 3, 3, 3], [2, 4, 0, 3, 4, 0, 1, 2]])
    v = special_values(d, 8 * (3 if hybrid else 1)).reshape((8, 3) if hybrid else (8,))
    t = st.sparse_coo_tensor(_from_np(idx), _from_np(v), (4, 5, 3) if hybrid else (4, 5),
                             is_coalesced=coalesced or None)
    return t


def csr(d, batched=False):
    if batched:
        crow = np.array([[0, 2, 2, 3], [0, 0, 1, 3]])
        col = np.array([[1, 3, 0], [2, 0, 3]])
        shape = (2, 3, 4)
    else:
        crow, col, shape = np.array([0, 2, 2, 3]), np.array([1, 3, 0]), (3, 4)
    v = special_values(d, col.size).reshape(col.shape)
    return st.sparse_csr_tensor(_from_np(crow), _from_np(col), _from_np(v), shape)


def dense(d):
    return _from_np(special_values(d, 24).reshape(2, 3, 4))


MAKERS = {"strided": dense, "strided_0d": lambda d: _from_np(special_values(d, 1).reshape(())),
          "strided_empty": lambda d: _from_np(special_values(d, 0).reshape(0, 3)),
          "coo_empty": lambda d: st.sparse_coo_tensor(st.zeros((2, 0), dtype=st.int64),
                                                      _from_np(special_values(d, 0)), (3, 4)),
          "csr_empty": lambda d: st.sparse_csr_tensor(st.zeros(4, dtype=st.int32), st.zeros(0, dtype=st.int32),
                                                      _from_np(special_values(d, 0)), (3, 5)),
          "coo": coo, "coo_coalesced": lambda d: coo(d, coalesced=True),
          "coo_hybrid": lambda d: coo(d, hybrid=True), "csr": csr, "csr_batched": lambda d: csr(d, True)}


# ---- tensors: every layout x dtype, bit for bit ----

@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_roundtrip_layout_dtype_bitwise(kind, d):
    t = MAKERS[kind](d)
    r = roundtrip(t)
    assert_same(t, r)
    assert r.is_coalesced() == t.is_coalesced() if t.layout is st.sparse_coo else True


def test_nan_payloads_and_negative_zero_survive():
    v = np.array([0x7FC00001, 0xFFA12345, 0x80000000], np.uint32).view(np.float32)
    r = roundtrip(_from_np(v.copy()))
    assert r.numpy().view(np.uint32).tolist() == [0x7FC00001, 0xFFA12345, 0x80000000]


def test_uncoalesced_duplicates_are_kept():
    t = st.sparse_coo_tensor(st.tensor([[1, 0, 1]]), st.tensor([1.0, 2.0, 3.0]), (2,))
    r = roundtrip(t)
    assert not r.is_coalesced() and r._nnz() == 3
    assert r.coalesce().to_dense().tolist() == [2.0, 4.0]


def test_requires_grad_parameter_and_noncontiguous_views():
    p = st.nn.Parameter(st.randn(3, 4))
    q = st.nn.Parameter(st.randn(2), requires_grad=False)
    x = st.randn(4, 6, requires_grad=True)
    view = x.detach()[:, ::2].t()  # non-contiguous: saved as its own elements
    r = roundtrip({"p": p, "q": q, "x": x, "v": view})
    assert type(r["p"]) is st.nn.Parameter and r["p"].requires_grad
    assert type(r["q"]) is st.nn.Parameter and not r["q"].requires_grad
    assert r["x"].requires_grad and r["x"].is_leaf
    assert r["v"].tolist() == view.tolist()
    assert_same(r["p"], p)


def test_views_share_storage_like_torch():
    base = st.arange(12.0).reshape(3, 4)
    row, col = base[1], base[:, 2]
    r = roundtrip([base, row, col, base])
    assert r[0] is r[3]  # the same tensor object saved twice loads as one object
    r[1][2] = -1.0  # writes through the shared buffer, as torch's loaded views do
    assert r[0][1, 2].item() == -1.0 and r[2][1].item() == -1.0
    lone = st.arange(1000.0)[10:13]  # a lone view stores only its own 3 elements
    buf = io.BytesIO()
    save(lone, buf)
    assert len(buf.getvalue()) < 2000  # not the base's 4000 bytes
    buf.seek(0)
    assert load(buf).tolist() == [10.0, 11.0, 12.0]


def test_tensor_attributes_and_buffers_are_kept():
    t = st.ones(2)
    t.tag = "weights"
    assert roundtrip(t).tag == "weights"
    b = roundtrip(st.nn.Buffer(st.zeros(3), persistent=False))  # torch's format: a plain tensor
    assert type(b) is st.Tensor and b.tolist() == [0.0] * 3


# ---- containers and Python values ----

def test_nested_containers_and_scalars():
    nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0]
    obj = {"a": [1, -2, 2 ** 200, -(2 ** 70), 0.1, -0.0, math.inf, -math.inf, nan, 1e-310],
           "b": (None, True, False, "text ✓", b"\x00\xff", bytearray(b"ab"), 3 - 4j, complex(nan, -0.0)),
           7: OrderedDict([("x", {1, 2, 3}), ("y", frozenset({"q"}))]),
           (1, "k"): [[], {}, ()],
           "types": [st.float16, st.bool, st.device("cpu"), st.device("cuda", 1), st.sparse_csr,
                     st.Size([2, 3])],
           "np": [np.arange(5, dtype=np.uint16), np.float64(2.5), np.int32(-3), np.zeros((2, 0))]}
    r = roundtrip_manifest(obj)
    assert r["a"][:8] == obj["a"][:8] and math.copysign(1, r["a"][5]) == -1
    assert struct.pack("<d", r["a"][8]) == struct.pack("<d", nan) and r["a"][9] == 1e-310
    assert r["b"][:7] == obj["b"][:7] and type(r["b"][5]) is bytearray
    assert struct.pack("<dd", r["b"][7].real, r["b"][7].imag) == struct.pack("<dd", nan, -0.0)
    assert r[7] == obj[7] and type(r[7]) is OrderedDict and r[(1, "k")] == [[], {}, ()]
    assert r["types"] == obj["types"] and r["types"][0] is st.float16
    assert type(r["types"][5]) is st.Size
    assert r["np"][0].dtype == np.uint16 and r["np"][0].tolist() == [0, 1, 2, 3, 4]
    assert type(r["np"][1]) is np.float64 and type(r["np"][2]) is np.int32 and r["np"][3].shape == (2, 0)
    assert list(r) == list(obj)  # insertion order kept


def test_state_dict_metadata_attribute_is_kept():
    sd = OrderedDict(w=st.ones(2))
    sd._metadata = OrderedDict([("", {"version": 1})])
    r = roundtrip(sd)
    assert r._metadata == sd._metadata


class Foo:
    pass


@pytest.mark.parametrize("obj,where", [
    ({"fc": {"weight": Foo()}}, r"obj\['fc'\]\['weight'\]: cannot save object of type .*Foo"),
    ([1, len], r"obj\[1\]: cannot save object of type builtins.builtin_function_or_method"),
    ({"cls": Foo}, r"obj\['cls'\]: cannot save object of type builtins.type"),
    ((np.array([1], dtype=object),), r"obj\[0\]: cannot save a NumPy array of dtype object"),
    ({"m": st.nn.Linear(2, 2)}, r"obj\['m'\]: .*Linear.*state_dict"),
])
def test_unsavable_objects_raise_typeerror_naming_the_place(obj, where):
    with pytest.raises(TypeError, match=where):  # the manifest format stores data only
        roundtrip_manifest(obj)


def test_cycles_and_deep_nesting_are_refused():
    a = [1]
    a.append(a)
    with pytest.raises(TypeError, match=r"obj\[1\]: the list contains itself"):
        roundtrip_manifest(a)
    deep = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(TypeError, match="nested more than"):
        roundtrip_manifest(deep)


# ---- modules and optimizers: state dicts, then training continues identically ----

def _model(seed):
    st.manual_seed(seed)
    return st.nn.ModuleDict({"emb": st.nn.Embedding(20, 4, sparse=True), "fc": st.nn.Linear(4, 1)})


def _step(model, opts, batch):
    for o in opts:
        o.zero_grad()
    ids = st.tensor(batch)
    loss = (model["fc"](model["emb"](ids)) ** 2).mean()
    loss.backward()
    for o in opts:
        o.step()
    return loss.item()


OPTIMIZERS = {
    "adam+sparseadam": lambda m: [st.optim.Adam(m["fc"].parameters(), lr=0.01, amsgrad=True),
                                  st.optim.SparseAdam(m["emb"].parameters(), lr=0.05)],
    "rowwise_adagrad": lambda m: [st.optim.RowWiseAdagrad(m["emb"].parameters(), lr=0.1),
                                  st.optim.Adagrad(m["fc"].parameters(), lr=0.1)],
    "sgd_lazy_momentum": lambda m: [st.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, sparse_mode="lazy")],
    "sgd_exact_momentum": lambda m: [st.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)],
}
BATCHES = [[1, 2, 3], [3, 4, 5, 1], [7, 1], [2, 9, 9]]


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_training_resumes_identically_after_checkpoint(name, tmp_path):
    model = _model(1)
    opts = OPTIMIZERS[name](model)
    for b in BATCHES[:2]:
        _step(model, opts, b)
    ckpt = tmp_path / "ckpt.st"
    save({"model": model.state_dict(), "optim": [o.state_dict() for o in opts], "epoch": 2}, ckpt)
    want = [_step(model, opts, b) for b in BATCHES[2:]]

    fresh = _model(2)
    fresh_opts = OPTIMIZERS[name](fresh)
    state = load(ckpt)
    assert state["epoch"] == 2
    fresh.load_state_dict(state["model"])
    for o, sd in zip(fresh_opts, state["optim"]):
        o.load_state_dict(sd)
    got = [_step(fresh, fresh_opts, b) for b in BATCHES[2:]]
    assert got == want  # bitwise-identical losses
    for (n, p), q in zip(model.named_parameters(), fresh.parameters()):
        assert p.tolist() == q.tolist(), n


def test_optimizer_state_dict_roundtrip_keeps_sparse_state_layouts():
    model = _model(3)
    opt = st.optim.SGD(model["emb"].parameters(), lr=0.1, momentum=0.9)
    _step(model, [opt], [1, 2])
    sd = opt.state_dict()
    r = roundtrip(sd)
    assert r["param_groups"] == sd["param_groups"]
    for k, s in sd["state"].items():
        for key, v in s.items():
            assert_same(v, r["state"][k][key]) if isinstance(v, st.Tensor) else v == r["state"][k][key]


# ---- paths, file objects, atomicity ----

def test_path_str_and_file_objects(tmp_path):
    t = st.randn(5)
    p = tmp_path / "a.st"
    save(t, p)
    assert_same(load(str(p)), t)
    save([t], str(tmp_path / "b.st"))
    assert_same(load(tmp_path / "b.st")[0], t)
    with open(p, "wb") as fh:
        save({"t": t}, fh)
    with open(p, "rb") as fh:
        assert_same(load(fh)["t"], t)
    assert zipfile.ZipFile(p).testzip() is None  # a standard ZIP: CRCs valid for other readers
    buf = io.BytesIO(b"prefix")  # saved at the current position, loaded from it
    buf.seek(6)
    save(t, buf)
    buf.seek(6)
    assert_same(load(buf), t)


def test_unseekable_stream_and_mmap(tmp_path):
    t = st.randn(100, 3)
    buf = io.BytesIO()
    save(t, buf)

    class Stream(io.RawIOBase):
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.inner.readinto(b)

    assert_same(load(Stream(buf.getvalue())), t)
    p = tmp_path / "m.st"
    save({"t": t, "s": t.to_sparse()}, p)
    r = load(p, mmap=True)
    assert r["t"].tolist() == t.tolist() and r["s"].to_dense().tolist() == t.tolist()
    r["t"][0, 0] = 123.0  # copy-on-write: the file is unchanged
    assert load(p)["t"][0, 0].item() == t[0, 0].item()
    with pytest.raises(ValueError, match="file path"):
        load(io.BytesIO(buf.getvalue()), mmap=True)


def _listing(folder):
    return sorted(os.listdir(folder))


def test_failed_save_keeps_previous_checkpoint_and_leaves_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.st"
    save({"v": 1}, p)
    before = p.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError)):  # unpicklable: found before writing
        save({"big": st.randn(100), "late": lambda: 0}, p)
    assert p.read_bytes() == before and _listing(tmp_path) == ["ckpt.st"]

    def boom(self, name, buf):  # a crash in the middle of writing the data
        if name.endswith("/1"):
            raise OSError("disk full")
        return orig(self, name, buf)

    orig = _format._ZipWriter.add
    monkeypatch.setattr(_format._ZipWriter, "add", boom)
    with pytest.raises(OSError, match="disk full"):
        save([st.randn(10), st.randn(10)], p)
    assert p.read_bytes() == before and _listing(tmp_path) == ["ckpt.st"]
    assert load(p) == {"v": 1}


def test_save_through_a_symlink_keeps_the_link(tmp_path):
    target = tmp_path / "real.st"
    link = tmp_path / "link.st"
    save(1, target)
    link.symlink_to(target)
    save(2, link)
    assert link.is_symlink() and load(target) == 2


def test_save_keeps_file_mode(tmp_path):
    p = tmp_path / "m.st"
    save(1, p)
    os.chmod(p, 0o640)
    save(2, p)
    assert os.stat(p).st_mode & 0o777 == 0o640 and load(p) == 2


def test_zip64_members_read_back(monkeypatch):
    monkeypatch.setattr(_format, "_ZIP64_AT", 64)  # take the >4 GiB code path with small members
    t = st.randn(50)
    buf = io.BytesIO()
    save([t, st.ones(3)], buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).testzip() is None
    buf.seek(0)
    assert_same(load(buf)[0], t)


# ---- arguments, as torch ----

def test_argument_checks():
    with pytest.raises(ValueError, match="pickle_module"):
        save(1, io.BytesIO(), pickle_module=object())
    save(1, io.BytesIO(), pickle_module=pickle, pickle_protocol=4, _use_new_zipfile_serialization=False)
    with pytest.raises(TypeError, match="binary file object"):
        save(1, 3)
    with pytest.raises(TypeError, match="text-mode"):
        save(1, io.StringIO())
    buf = io.BytesIO()
    save(1, buf)
    buf.seek(0)
    assert load(buf, weights_only=False, encoding="latin1") == 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        load(io.BytesIO(), bogus=1)
    with pytest.raises(FileNotFoundError):
        load("/nonexistent/file.st")
    with pytest.raises(RuntimeError, match="Parent directory /nonexistent does not exist"):
        save(1, "/nonexistent/file.st")  # torch's error


def test_save_to_a_directory_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="is a directory"):
        save(1, tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("ml", [None, "cpu", st.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"},
                                lambda s, loc: s, lambda s, loc: None])
def test_map_location_forms_on_cpu(ml):
    t = st.randn(3, requires_grad=True)
    r = roundtrip({"t": t}, map_location=ml)["t"]
    assert_same(r, t)


def test_map_location_callable_gets_tensor_and_location():
    seen = []
    roundtrip([st.ones(1), st.zeros(2).to_sparse()],
              map_location=lambda s, loc: seen.append((type(s), s.layout, loc)))
    # called per storage, as torch does: a sparse tensor's indices and values come separately
    assert seen == [(st.Tensor, st.strided, "cpu")] * 3


def test_map_location_forms_match_torch():
    torch = pytest.importorskip("torch")
    for ml in (None, "cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s):
        buf = io.BytesIO()
        torch.save({"t": torch.ones(2)}, buf)
        buf.seek(0)
        assert torch.load(buf, map_location=ml)["t"].tolist() == [1.0, 1.0]
        sml = ml if not isinstance(ml, torch.device) else st.device("cpu")
        assert roundtrip({"t": st.ones(2)}, map_location=sml)["t"].tolist() == [1.0, 1.0]


def test_torch_checkpoints_load():  # both torch formats (more in test_serialization_torch.py)
    torch = pytest.importorskip("torch")
    for zipped in (True, False):
        buf = io.BytesIO()
        torch.save({"t": torch.ones(2)}, buf, _use_new_zipfile_serialization=zipped)
        buf.seek(0)
        assert load(buf)["t"].tolist() == [1.0, 1.0]


def test_gpu_tensors_saved_as_host_data_and_mapped(tmp_path):
    """Under the fake CUDA backend: cuda tensors save their host data and location; load puts
    them back on cuda, or where map_location says."""
    p = tmp_path / "gpu.st"
    code = f"""
import sparsetorch as st
from sparsetorch.serialization import save, load
x = st.arange(6.0).reshape(2, 3).to('cuda:1')
save({{'x': x, 's': x.to_sparse(), 'c': x.to_sparse_csr()}}, {str(p)!r})
r = load({str(p)!r})
assert r['x'].device == st.device('cuda:1') and r['s'].device == st.device('cuda:1')
r = load({str(p)!r}, map_location={{'cuda:1': 'cuda:0'}})
assert r['c'].device == st.device('cuda:0'), r['c'].device
r = load({str(p)!r}, map_location='cpu')
assert r['x'].device == st.device('cpu') and r['x'].tolist() == [[0, 1, 2], [3, 4, 5]]
"""
    env = dict(os.environ, SPARSETORCH_FAKE_CUDA="2")
    root = str(pathlib.Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    r = load(p, map_location="cpu")  # here (no CUDA): map to the CPU...
    assert r["c"].to_dense().tolist() == [[0, 1, 2], [3, 4, 5]]
    if not st.cuda.is_available():  # ...or get torch's error that says so
        with pytest.raises(RuntimeError, match="map_location='cpu'"):
            load(p)


def test_large_member_crc_in_threads_and_after_fork(tmp_path, monkeypatch):
    """Members above the threshold are checksummed in threads; a forked child (a DataLoader
    worker) gets its own threads instead of waiting on its parent's."""
    monkeypatch.setattr(_format, "_PARALLEL", 1024)
    monkeypatch.setattr(_format, "_PIECE", 256)  # many pieces, each in a thread
    t = st.randn(1000, 3)
    p = tmp_path / "big.st"
    save(t, p)  # to a path: the CRC is computed while the data is written, then patched in
    assert zipfile.ZipFile(p).testzip() is None
    assert_same(load(p), t)
    buf = io.BytesIO()
    save(t, buf)  # to a file object: CRC first, no seeking back
    assert buf.getvalue() == p.read_bytes()
    if not hasattr(os, "fork"):
        return
    pid = os.fork()
    if pid == 0:  # the child: load, then leave without running pytest's teardown
        ok = False
        try:
            ok = load(p).tolist() == t.tolist()
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
