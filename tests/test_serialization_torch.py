"""Checkpoints interchangeable with PyTorch, both directions, and still safe.

torch writes -> sparsetorch reads, sparsetorch writes -> ``torch.load(weights_only=True)`` reads,
bit for bit, for every dtype x layout both libraries have and for the containers checkpoints use;
hostile files are refused without running code or allocating what they declare.
"""

import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import ml_dtypes
import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import serialization as ser
from sparsetorch.serialization import SerializationError, load, save
from tests.test_serialization import ALL_DTYPES, MAKERS, _bits, parts

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:.*[Ss]parse")


def torch_parts(t):
    def b(x):
        x = x.contiguous()
        a = x.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if x.dtype == torch.bfloat16 else x.numpy()
        return _bits(a)
    if t.layout == torch.strided:
        return [b(t)]
    if t.layout == torch.sparse_coo:
        return [b(t._indices()), b(t._values()), t.is_coalesced()]
    return [b(t.crow_indices()), b(t.col_indices()), b(t.values())]


def ours_to_torch(obj, **kw):
    buf = io.BytesIO()
    save(obj, buf, **kw)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def torch_to_ours(obj, zipped=True, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=zipped)
    buf.seek(0)
    return load(buf, **kw)


def same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.layout.name == str(theirs.layout).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.requires_grad == theirs.requires_grad
    assert parts(ours) == torch_parts(theirs)


# ---- tensors: every dtype x layout, both directions, bit for bit ----

@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_we_write_torch_reads_then_torch_writes_we_read(kind, d):
    t = MAKERS[kind](d)
    theirs = ours_to_torch(t)
    same(t, theirs)
    for zipped in (True, False):
        back = torch_to_ours(theirs, zipped)
        assert type(back) is st.Tensor
        assert parts(back) == parts(t) and back.dtype is t.dtype and back.layout is t.layout


def test_parameters_requires_grad_and_legacy_writer():
    p = st.nn.Parameter(st.arange(4.0))
    frozen = st.nn.Parameter(st.ones(2), requires_grad=False)
    g = st.ones(3).requires_grad_()
    r = ours_to_torch([p, frozen, g])
    assert type(r[0]) is torch.nn.Parameter and r[0].requires_grad and not r[1].requires_grad
    assert r[2].requires_grad and r[0].tolist() == [0, 1, 2, 3]
    back = torch_to_ours(r)
    assert type(back[0]) is st.nn.Parameter and back[0].requires_grad and not back[1].requires_grad
    assert back[2].requires_grad and back[2].is_leaf
    buf = io.BytesIO()
    save([p, {"x": st.eye(2).to_sparse()}], buf, _use_new_zipfile_serialization=False)
    old = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    assert old[0].tolist() == [0, 1, 2, 3] and old[1]["x"].to_dense().tolist() == [[1, 0], [0, 1]]
    assert load(io.BytesIO(buf.getvalue()))[1]["x"].to_dense().tolist() == [[1, 0], [0, 1]]


def test_views_share_storage_both_ways():
    base = st.arange(12.0).reshape(3, 4)
    r = ours_to_torch([base, base[1], base[:, 2]])
    assert r[0].untyped_storage().data_ptr() == r[1].untyped_storage().data_ptr()
    assert r[2].stride() == (4,) and r[2].storage_offset() == 2
    r[1][2] = -1.0
    assert r[0][1, 2].item() == -1.0 and r[2][1].item() == -1.0
    tb = torch.arange(12.0).reshape(3, 4)
    for zipped in (True, False):
        back = torch_to_ours([tb, tb[1], tb[:, 2], tb.t()], zipped)
        back[1][2] = -5.0
        assert back[0][1, 2].item() == -5.0 and back[2][1].item() == -5.0 and back[3][2, 1].item() == -5.0


def test_containers_state_dicts_and_scalars():
    assert ours_to_torch(b"") == b""  # (torch itself writes b"" so that its weights_only refuses it)
    obj = {"a": [1, -2, 2 ** 100, 0.5, -0.0, float("inf")], "b": (None, True, "s✓", b"\x00\xff",
           bytearray(b"ab"), 3 - 4j), 7: OrderedDict(x={1, 2}), "dt": [st.float16, st.bfloat16, st.bool],
           "dev": [st.device("cpu"), st.device("cuda", 1)], "lay": [st.sparse_coo, st.sparse_csr, st.strided],
           "size": st.Size([2, 3])}
    theirs = ours_to_torch(obj)
    assert theirs["a"] == obj["a"] and theirs["b"] == obj["b"] and theirs[7] == obj[7]
    assert theirs["dt"] == [torch.float16, torch.bfloat16, torch.bool]
    assert theirs["dev"] == [torch.device("cpu"), torch.device("cuda", 1)]
    assert theirs["lay"] == [torch.sparse_coo, torch.sparse_csr, torch.strided]
    assert type(theirs["size"]) is torch.Size and theirs["size"] == (2, 3)
    back = torch_to_ours(theirs)
    assert back["a"] == obj["a"] and back["b"] == obj["b"] and back[7] == obj[7] and type(back[7]) is OrderedDict
    assert back["dt"][1] is st.bfloat16 and back["dev"] == obj["dev"] and back["lay"] == obj["lay"]
    assert type(back["size"]) is st.Size


def test_module_and_optimizer_state_dicts_with_sparse_state():
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.ReLU(), st.nn.Linear(4, 2))
    emb = st.nn.Embedding(10, 3, sparse=True)
    opt = st.optim.Adam(model.parameters(), lr=0.01)
    sopt = st.optim.Adagrad(emb.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        sopt.zero_grad()
        (model(emb(st.tensor([1, 3, 3]))).sum()).backward()
        opt.step()
        sopt.step()
    ckpt = {"model": model.state_dict(), "emb": emb.state_dict(), "opt": opt.state_dict(),
            "sopt": sopt.state_dict(), "epoch": 3}
    theirs = ours_to_torch(ckpt)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    tm.load_state_dict(theirs["model"])  # torch's own module accepts our state dict
    topt_state = theirs["opt"]  # (torch.optim would take it; building one costs seconds of imports)
    assert topt_state["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert topt_state["state"][0]["exp_avg"].shape == (4, 3)
    assert theirs["model"]._metadata == ckpt["model"]._metadata
    x = st.randn(5, 3)
    assert np.allclose(tm(torch.from_numpy(x.numpy())).detach().numpy(), model(x).detach().numpy(), atol=1e-6)
    back = torch_to_ours({"model": tm.state_dict(), "opt": topt_state, "sopt": theirs["sopt"]})
    m2 = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.ReLU(), st.nn.Linear(4, 2))
    m2.load_state_dict(back["model"])
    o2 = st.optim.Adam(m2.parameters(), lr=0.01)
    o2.load_state_dict(back["opt"])
    assert np.array_equal(m2(x).detach().numpy(), model(x).detach().numpy())
    for k, v in sopt.state_dict()["state"][0].items():
        w = back["sopt"]["state"][0][k]
        if isinstance(v, st.Tensor):
            assert v.layout is w.layout and parts(v) == parts(w)


def test_whole_module_needs_weights_only_false():
    m = st.nn.Linear(3, 2)
    buf = io.BytesIO()
    save(m, buf)
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL sparsetorch\.nn\..*Linear"):
        load(io.BytesIO(buf.getvalue()))
    with pytest.raises(SerializationError, match="weights_only=False"):
        load(io.BytesIO(buf.getvalue()))
    m2 = load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(m2) is st.nn.Linear and np.array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    tm = torch.nn.Linear(3, 2)  # a torch module file: refused by default, torch's globals named
    b2 = io.BytesIO()
    torch.save(tm, b2)
    with pytest.raises(SerializationError, match=r"torch\.nn\.modules\.linear\.Linear"):
        load(io.BytesIO(b2.getvalue()))


class Point:  # a user class for the allowlist
    def __init__(self, x):
        self.x = x


def test_safe_globals_api():
    buf = io.BytesIO()
    save({"p": Point(3)}, buf)
    data = buf.getvalue()
    with pytest.raises(SerializationError, match="test_serialization_torch.Point"):
        load(io.BytesIO(data))
    assert ser.get_safe_globals() == []
    with ser.safe_globals([Point]):
        assert ser.get_safe_globals() == [Point]
        assert load(io.BytesIO(data))["p"].x == 3
        assert torch.load(io.BytesIO(data), weights_only=False)["p"].x == 3
    assert ser.get_safe_globals() == []
    ser.add_safe_globals([(Point, "tests.test_serialization_torch.Point")])
    try:
        assert load(io.BytesIO(data))["p"].x == 3
    finally:
        ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    with pytest.raises(ValueError, match="tuple of length 2"):
        ser.add_safe_globals([(Point,)])


def test_mmap_and_map_location_on_torch_files(tmp_path):
    p = tmp_path / "t.pt"
    torch.save({"w": torch.arange(100.0), "s": torch.eye(3).to_sparse()}, p)
    r = load(p, mmap=True)
    assert r["w"].tolist() == list(range(100)) and r["s"].to_dense().tolist() == np.eye(3).tolist()
    a = r["w"]._data
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    assert not a.flags.owndata  # a view of the mapped file
    seen = []
    load(p, map_location=lambda t, loc: seen.append(loc))
    assert seen == ["cpu"] * 3
    assert load(p, map_location={"cuda:0": "cpu"})["w"].device == st.device("cpu")
    assert load(p, map_location=st.device("cpu"))["w"].device == st.device("cpu")


def test_our_old_format_still_loads(tmp_path):
    from sparsetorch.serialization._save import save_manifest

    save_manifest({"w": st.ones(2), "s": st.eye(2).to_sparse()}, tmp_path / "old.st")
    r = load(tmp_path / "old.st")
    assert r["w"].tolist() == [1, 1] and r["s"].to_dense().tolist() == [[1, 0], [0, 1]]


def test_saved_file_is_a_torch_file_at_a_path(tmp_path):
    save({"w": st.ones(3)}, tmp_path / "model.pt")
    assert torch.load(tmp_path / "model.pt")["w"].tolist() == [1, 1, 1]
    assert torch.load(tmp_path / "model.pt", mmap=True)["w"].tolist() == [1, 1, 1]  # aligned, stored
    with zipfile.ZipFile(tmp_path / "model.pt") as z:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())


# ---- hostile files ----

def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _evil_pickle(path):
    return (b"\x80\x02cos\nsystem\nq\x00X" + struct.pack("<I", len(f"touch {path}"))
            + f"touch {path}".encode() + b"\x85R.")


def test_pickle_naming_os_system_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    data = _zip({"archive/data.pkl": _evil_pickle(marker), "archive/version": "3\n"})
    with pytest.raises(SerializationError, match=r"GLOBAL os\.system.*add_safe_globals"):
        load(io.BytesIO(data))
    legacy = b"".join(pickle.dumps(x, 2) for x in (0x1950A86A20F9469CFC6C, 1001, {})) + _evil_pickle(marker)
    with pytest.raises(SerializationError, match=r"os\.system"):
        load(io.BytesIO(legacy))
    for payload in (b"\x80\x04\x8c\x02os\x8c\x06system\x93.", b"\x80\x02cbuiltins\neval\n.",
                    b"\x80\x02(cos\nsystem\nX\x01\x00\x00\x00xo."):  # STACK_GLOBAL, eval, INST-like
        with pytest.raises(SerializationError):
            load(io.BytesIO(_zip({"archive/data.pkl": payload})))
    assert not marker.exists()


def _torch_file(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _patch_numel(data, old, new):
    """Rewrite the storage size in the pickle (BININT1 old -> BININT new) and repack the zip."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    pkl = members["archive/data.pkl"]
    at = pkl.index(b"X\x03\x00\x00\x00cpuq") + 10  # after the location and its BINPUT
    assert pkl[at:at + 3] == b"K" + bytes([old]) + b"t"
    members["archive/data.pkl"] = pkl[:at] + b"\x8a\x08" + struct.pack("<q", new) + pkl[at + 2:]
    return _zip(members)


def test_short_storage_and_huge_declared_size_are_refused():
    data = _torch_file({"w": torch.arange(6.0)})
    with pytest.raises(SerializationError, match="declares 28 bytes but its member holds only 24"):
        load(io.BytesIO(_patch_numel(data, 6, 7)))
    with pytest.raises(SerializationError, match="declares"):  # 2**60 elements: no allocation tried
        load(io.BytesIO(_patch_numel(data, 6, 1 << 60)))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["archive/data/0"] = members["archive/data/0"][:10]
    with pytest.raises(SerializationError, match="holds only 10"):
        load(io.BytesIO(_zip(members)))
    trunc = data[:len(data) // 2]
    with pytest.raises(SerializationError):
        load(io.BytesIO(trunc))


def test_out_of_bounds_view_and_bad_sparse_are_refused():
    data = _torch_file({"w": torch.arange(6.0)})
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    pkl = members["archive/data.pkl"]
    members["archive/data.pkl"] = pkl.replace(b"K\x00K\x06\x85", b"K\x05K\x06\x85")  # offset 5, size 6
    with pytest.raises(SerializationError, match="reaches element"):
        load(io.BytesIO(_zip(members)))
    bad = torch.sparse_coo_tensor(torch.tensor([[0, 9]]), torch.ones(2), (10,))
    data = _torch_file(bad)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    idx = next(n for n, v in members.items() if v == np.array([0, 9], np.int64).tobytes())
    members[idx] = np.array([0, 99], np.int64).tobytes()  # an index out of range
    with pytest.raises(SerializationError, match="invalid sparse tensor"):
        load(io.BytesIO(_zip(members)))


@pytest.mark.parametrize("name", ["../evil/data.pkl", "/abs/data.pkl", "archive/../../data.pkl",
                                  "archive\\data.pkl", "C:/x/data.pkl"])
def test_path_traversal_member_names_are_refused(name):
    data = _zip({name: b"\x80\x02K\x01.", "archive/data.pkl": b"\x80\x02K\x01."})
    with pytest.raises(SerializationError, match="escape|outside|one"):
        load(io.BytesIO(data))


def test_weights_only_is_a_keyword_bool_and_none_means_true():
    data = _torch_file({"w": torch.ones(1)})
    assert load(io.BytesIO(data), weights_only=None)["w"].tolist() == [1.0]
    with pytest.raises(TypeError):
        load(io.BytesIO(data), weights_only="yes")
    assert os.path.basename(ser.__file__) == "__init__.py"


def test_force_weights_only_environment_variables_as_torch(monkeypatch):
    # dlrm_s_pytorch.py saves numpy scalars in its checkpoint and loads it with a plain
    # torch.load(path, map_location=...): with torch 2.6+ that needs TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
    data = {"acc": np.float64(0.5), "w": None}
    tb, sb = io.BytesIO(), io.BytesIO()
    torch.save(dict(data, w=torch.ones(2)), tb)
    save(dict(data, w=st.ones(2)), sb)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    for buf in (tb, sb):
        with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected") as rec:
            out = load(io.BytesIO(buf.getvalue()), map_location=st.device("cpu"))
        assert rec[0].filename == __file__
        assert out["acc"] == 0.5 and out["w"].tolist() == [1.0, 1.0]
        with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected"):
            torch.load(io.BytesIO(buf.getvalue()))
        for lib_load, err in ((load, SerializationError), (torch.load, pickle.UnpicklingError)):
            with pytest.raises(err):  # an explicit weights_only=True is kept
                lib_load(io.BytesIO(buf.getvalue()), weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "yes")
    msg = "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`"
    for lib_load in (load, torch.load):
        with pytest.raises(RuntimeError, match=msg):
            lib_load(io.BytesIO(sb.getvalue()))
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    for lib_load, err in ((load, SerializationError), (torch.load, pickle.UnpicklingError)):
        with pytest.raises(err):  # forced even where the call asks weights_only=False
            lib_load(io.BytesIO(sb.getvalue()), weights_only=False)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    assert load(io.BytesIO(sb.getvalue()), pickle_module=pickle)["acc"] == 0.5  # unset + pickle: False
    assert torch.load(io.BytesIO(sb.getvalue()), pickle_module=pickle)["acc"] == 0.5


def test_tensor_attributes_pickle_protocols_and_unsafe_legacy():
    t = st.ones(2)
    t.tag = "w"
    r = ours_to_torch(t)
    assert r.tag == "w" and r.tolist() == [1.0, 1.0]
    assert torch_to_ours(r).tag == "w"
    p = st.nn.Parameter(st.zeros(1))
    p.note = 3
    assert torch_to_ours(ours_to_torch(p)).note == 3
    for proto in (2, 3, 4, 5):
        buf = io.BytesIO()
        save({"w": st.arange(3), "b": b"x", "f": {1.5}}, buf, pickle_protocol=proto)
        buf.seek(0)
        r = load(buf)
        assert r["w"].tolist() == [0, 1, 2] and r["b"] == b"x" and r["f"] == {1.5}
    buf = io.BytesIO()
    save(st.nn.Linear(2, 1), buf, _use_new_zipfile_serialization=False)
    with pytest.raises(SerializationError, match="Linear"):
        load(io.BytesIO(buf.getvalue()))
    assert type(load(io.BytesIO(buf.getvalue()), weights_only=False)) is st.nn.Linear
    with pytest.raises(ValueError, match="pickle_protocol"):
        save(1, io.BytesIO(), pickle_protocol=1)


def test_big_endian_files_are_swapped_and_legacy_map_location(tmp_path):
    data = _torch_file({"w": torch.arange(4, dtype=torch.int32), "f": torch.tensor([1.5, -2.0])})
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["archive/byteorder"] = b"big"
    for n in ("archive/data/0", "archive/data/1"):
        members[n] = np.frombuffer(members[n], np.uint32).byteswap().tobytes()  # both 4-byte types
    r = load(io.BytesIO(_zip(members)))
    assert r["w"].tolist() == [0, 1, 2, 3] and r["f"].tolist() == [1.5, -2.0]
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf, _use_new_zipfile_serialization=False)
    seen = []
    r = load(io.BytesIO(buf.getvalue()), map_location=lambda t, loc: seen.append(loc))
    assert seen == ["cpu"] and r["w"].tolist() == [1.0, 1.0]
    (tmp_path / "legacy.pt").write_bytes(buf.getvalue())
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        load(tmp_path / "legacy.pt", mmap=True)


def test_get_unsafe_globals_in_checkpoint_matches_torch(tmp_path):
    import collections

    obj = {"c": collections.defaultdict(int), "p": Point(1), "w": torch.ones(1)}
    for zipped in (True, False):
        buf = io.BytesIO()
        torch.save(obj, buf, _use_new_zipfile_serialization=zipped)
        ours = ser.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue()))
        if zipped:
            theirs = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue()))
            assert sorted(ours) == sorted(theirs)  # (torch's comes from a set)
        assert ours == ["collections.defaultdict", "builtins.int", "tests.test_serialization_torch.Point"]
    with ser.safe_globals([Point]):
        assert "tests.test_serialization_torch.Point" not in ser.get_unsafe_globals_in_checkpoint(
            io.BytesIO(buf.getvalue()))
    save({"w": st.ones(1)}, tmp_path / "ok.pt")
    assert ser.get_unsafe_globals_in_checkpoint(tmp_path / "ok.pt") == []


def test_a_whole_torch_module_loads_as_ours_with_weights_only_false():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    buf = io.BytesIO()
    torch.save(tm, buf)
    m = load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(m) is st.nn.Sequential and type(m[0]) is st.nn.Linear and type(m[1]) is st.nn.Tanh
    x = np.ones((1, 3), np.float32)
    assert np.allclose(m(st.from_numpy(x)).detach().numpy(), tm(torch.from_numpy(x)).detach().numpy())


@pytest.mark.parametrize("wrap", [list, tuple, dict, OrderedDict], ids=lambda w: w.__name__)
def test_each_container_with_each_layout_both_ways(wrap):
    ts = [MAKERS["strided"](st.float32), MAKERS["coo_hybrid"](st.float64), MAKERS["csr"](st.int32)]
    obj = wrap((str(i), t) for i, t in enumerate(ts)) if wrap in (dict, OrderedDict) else wrap(ts)
    theirs = ours_to_torch(obj)
    assert type(theirs) is wrap
    vals = list(theirs.values()) if isinstance(theirs, dict) else list(theirs)
    for t, r in zip(ts, vals):
        same(t, r)
    back = torch_to_ours(theirs)
    assert type(back) is wrap
    for t, r in zip(ts, list(back.values()) if isinstance(back, dict) else list(back)):
        assert parts(r) == parts(t) and r.layout is t.layout
