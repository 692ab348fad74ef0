"""sparsetorch.load on truncated, garbled, foreign and hostile files: every one raises
SerializationError (a RuntimeError) saying what is wrong; nothing allocates more than the file
holds, nothing hangs, nothing from the file runs."""

import io
import json
import pickle
import random
import struct
import zipfile

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.serialization import SerializationError, load
from sparsetorch.serialization._save import save_manifest as save  # these tests corrupt the manifest format

M, D = "sparsetorch/manifest.json", "sparsetorch/data/"


def good_bytes():
    buf = io.BytesIO()
    save({"t": st.arange(6.0).reshape(2, 3), "s": st.eye(3).to_sparse(), "c": st.eye(3).to_sparse_csr(),
          "n": [1, 2.5, "x", None]}, buf)
    return buf.getvalue()


def craft(root, arrays=(), n_arrays=None, manifest=None, members=None, compress=zipfile.ZIP_STORED):
    """A hand-built archive: the manifest for ``root`` and data members from ``arrays``."""
    if manifest is None:
        manifest = json.dumps({"format": "sparsetorch-checkpoint", "version": 1, "root": root,
                               "arrays": len(arrays) if n_arrays is None else n_arrays})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as zf:
        zf.writestr(M, manifest)
        for k, a in enumerate(arrays):
            zf.writestr(D + str(k), a if isinstance(a, bytes) else np.ascontiguousarray(a).tobytes())
        for name, data in (members or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def aref(k, dtype="float32", shape=(3,)):
    return {"array": k, "dtype": dtype, "shape": list(shape)}


def tnode(ref=0, dtype="float32", shape=(3,), layout="strided", **kw):
    node = {"T": "tensor", "ref": ref, "layout": layout, "dtype": dtype, "shape": list(shape),
            "device": "cpu", "requires_grad": False}
    node.update(kw)
    return node


F3 = np.arange(3, dtype=np.float32)


def coo_node(indices, coalesced=False, shape=(3, 3)):
    idx = np.asarray(indices, np.int64)
    return craft(tnode(shape=shape, layout="sparse_coo", coalesced=coalesced,
                       indices=aref(0, "int64", idx.shape), values=aref(1, "float32", (idx.shape[1],))),
                 [idx, np.ones(idx.shape[1], np.float32)])


def csr_node(crow, col, shape=(2, 3)):
    crow, col = np.asarray(crow, np.int64), np.asarray(col, np.int64)
    return craft(tnode(shape=shape, layout="sparse_csr", crow=aref(0, "int64", crow.shape),
                       col=aref(1, "int64", col.shape), values=aref(2, "float32", col.shape)),
                 [crow, col, np.ones(col.shape, np.float32)])


def _flip(data, pos):
    b = bytearray(data)
    b[pos] ^= 0xFF
    return bytes(b)


def _data_offset(data, k):
    zf = zipfile.ZipFile(io.BytesIO(data))
    info = zf.getinfo(D + str(k))
    n, e = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + n + e


def _inflate_sizes(data, name, new_size):
    """Rewrite ``name``'s sizes in the local and central headers (a 'zip bomb' declaration)."""
    b = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    struct.pack_into("<LL", b, info.header_offset + 18, new_size, new_size)
    cd = struct.unpack_from("<L", b, len(b) - 22 + 16)[0]  # EOCD (no comment): central dir offset
    while True:
        nlen, elen, clen = struct.unpack_from("<3H", b, cd + 28)
        if bytes(b[cd + 46:cd + 46 + nlen]) == name.encode():
            struct.pack_into("<LL", b, cd + 20, new_size, new_size)
            return bytes(b)
        cd += 46 + nlen + elen + clen


def _no_manifest():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(D + "0", b"1234")
    return buf.getvalue()


def _garbled_manifest():
    data = good_bytes()
    return _flip(data, data.index(b'"format"') + 2)


def _garbled_tensor_data():
    data = good_bytes()
    return _flip(data, _data_offset(data, 0) + 3)


def _duplicate_member():
    buf = io.BytesIO(craft(tnode(data=aref(0)), [F3]))
    with pytest.warns(UserWarning), zipfile.ZipFile(buf, "a") as zf:
        zf.writestr(D + "0", F3.tobytes())
    return buf.getvalue()


def _encrypted():
    b = bytearray(craft(tnode(data=aref(0)), [F3]))
    cd = bytes(b).index(b"PK\x01\x02")
    b[cd + 8] |= 1  # general-purpose flag bit 0: encrypted
    return bytes(b)


def _deep_json(n):
    return "[" * n + "]" * n


CASES = {
    "empty": (b"", "empty"),
    "wrong_magic": (b"GIF89a not a checkpoint", "starts with b'GIF8'"),
    "pickle_file": (pickle.dumps({"a": 1}), "pickle"),
    "truncated_half": (good_bytes()[: len(good_bytes()) // 2], "ZIP structure is broken"),
    "truncated_to_header": (good_bytes()[:30], "ZIP structure is broken"),
    "garbled_manifest": (_garbled_manifest(), "CRC-32"),
    "garbled_tensor_data": (_garbled_tensor_data(), "CRC-32"),
    "manifest_not_json": (craft(None, manifest="{not json"), "not valid JSON"),
    "manifest_nan_constant": (craft(None, manifest='{"format": NaN}'), "not valid JSON"),
    "manifest_wrong_format": (craft(None, manifest='{"format": "other", "version": 1}'), "does not describe"),
    "newer_version": (craft(None, manifest=json.dumps({"format": "sparsetorch-checkpoint", "version": 99,
                                                       "root": None, "arrays": 0})), "upgrade"),
    "no_manifest": (_no_manifest(), "has no"),
    "unknown_node_type": (craft({"T": "__reduce__", "args": []}), "unknown node type '__reduce__'"),
    "unknown_tensor_dtype": (craft(tnode(dtype="float128", data=aref(0))), "unknown tensor dtype 'float128'"),
    "object_array_dtype": (craft(tnode(data=aref(0, dtype="O")), [F3]), "unknown array dtype 'O'"),
    "unknown_layout": (craft(tnode(layout="sparse_bsr", data=aref(0)), [F3]), "unknown layout"),
    "absurd_shape": (craft(tnode(shape=(2 ** 40, 2 ** 40), data=aref(0, shape=(2 ** 40, 2 ** 40))), [F3]),
                     r"holds 12 bytes but the manifest describes it as float32\[1099511627776"),
    "empty_but_absurd_shape": (craft(tnode(shape=(0, 2 ** 62, 2 ** 62), data=aref(0, shape=(0, 2 ** 62, 2 ** 62))),
                                      [b""]), "cannot be created"),
    "dim_beyond_int64": (craft(tnode(shape=(2 ** 70,), data=aref(0, shape=(2 ** 70,))), [F3]), "int64"),
    "negative_size": (craft(tnode(shape=(-3,), data=aref(0, shape=(-3,))), [F3]), "non-negative"),
    "size_mismatch": (craft(tnode(shape=(4,), data=aref(0, shape=(4,))), [F3]), "holds 12 bytes"),
    "shape_vs_data": (craft(tnode(shape=(1, 3), data=aref(0)), [F3]), r"not float32\[1, 3\]"),
    "missing_member": (craft(tnode(data=aref(0)), [], n_arrays=0), "out of range"),
    "array_count_lie": (craft(None, [], n_arrays=5), "declares 5 arrays"),
    "path_traversal": (craft(None, members={"../../etc/passwd": b"x"}), "unexpected member '../../etc/passwd'"),
    "absolute_path": (craft(None, members={"/tmp/evil": b"x"}), "unexpected member '/tmp/evil'"),
    "compressed_member": (craft(tnode(data=aref(0)), [F3], compress=zipfile.ZIP_DEFLATED), "compressed"),
    "zip_bomb_sizes": (_inflate_sizes(craft(tnode(data=aref(0, shape=(2 ** 28,)), shape=(2 ** 28,)), [F3]),
                                      D + "0", 2 ** 30), "beyond the end of the file"),
    "duplicate_member": (None, "appears twice"),
    "encrypted_member": (_encrypted(), "encrypted"),
    "csr_col_out_of_range": (csr_node([0, 1, 2], [0, 99]), "invalid sparse tensor.*column index 99"),
    "csr_crow_decreasing": (csr_node([0, 2, 1], [0]), "invalid sparse tensor"),
    "coo_negative_index": (coo_node([[0, -1], [1, 1]]), "invalid sparse tensor.*negative"),
    "coo_index_out_of_range": (coo_node([[0, 7], [1, 1]]), "invalid sparse tensor.*index 7"),
    "coo_false_coalesced_flag": (coo_node([[1, 0], [1, 1]], coalesced=True), "marked coalesced"),
    "coo_int32_indices": (craft(tnode(shape=(3,), layout="sparse_coo", coalesced=False,
                                      indices=aref(0, "int32", (1, 1)), values=aref(1, "float32", (1,))),
                                [np.zeros((1, 1), np.int32), np.ones(1, np.float32)]), "must be int64"),
    "bool_bytes_not_0_1": (craft(tnode(dtype="bool", data=aref(0, "bool")), [b"\x00\x02\x01"]), "bool"),
    "requires_grad_on_int": (craft(tnode(dtype="int32", requires_grad=True, data=aref(0, "int32")), [F3]),
                             "requires_grad=True on a int32"),
    "bad_device": (craft(tnode(device="tpu:0", data=aref(0)), [F3]), "bad tensor device 'tpu:0'"),
    "dangling_ref": (craft([{"T": "ref", "ref": 3}]), "ref 3 points to no tensor"),
    "ref_out_of_order": (craft(tnode(ref=5, data=aref(0)), [F3]), "out of order"),
    "array_used_twice": (craft([tnode(data=aref(0)), tnode(ref=1, data=aref(0))], [F3]), "used twice"),
    "view_out_of_bounds": (craft([tnode(data=aref(0), view={"offset": 2, "strides": [1]})], [F3]),
                           "reaches outside"),
    "view_negative_stride": (craft([tnode(data=aref(0), view={"offset": 0, "strides": [-1]})], [F3]),
                             "reaches outside"),
    "deep_nesting": (craft(None, manifest='{"format":"sparsetorch-checkpoint","version":1,"arrays":0,'
                                        '"root":' + _deep_json(100000) + "}"), "nested"),
    "moderately_deep": (craft(json.loads(_deep_json(300))), "nested more than 200"),
    "unhashable_key": (craft({"T": "dict", "items": [[[1], 2]]}), "unhashable"),
    "bad_big_int": (craft({"T": "int", "hex": "0xZZ"}), "bad big int"),
    "bad_float_bits": (craft({"T": "float", "bits": "12"}), "16 hex digits"),
    "dunder_attrs": (craft(tnode(data=aref(0), attrs={"T": "dict", "items": [["__class__", 1]]}), [F3]),
                     "shadows a Tensor attribute"),
    "attrs_shadow_method": (craft(tnode(data=aref(0), attrs={"T": "dict", "items": [["numpy", 1]]}), [F3]),
                            "'numpy' is not a str or shadows"),
    "coo_no_sparse_dims_coalesced": (craft(tnode(shape=(2,), layout="sparse_coo", coalesced=True,
                                                 indices=aref(0, "int64", (0, 2)),
                                                 values=aref(1, "float32", (2, 2))),
                                           [b"", np.ones((2, 2), np.float32)]), "marked coalesced"),
    "bad_size": (craft({"T": "Size", "items": [2, -1]}), "non-negative"),
    "bad_items": (craft({"T": "tuple", "items": 5}), "items must be a list"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_file_raises_serialization_error(case):
    data, match = CASES[case]
    if data is None:
        data = _duplicate_member()
    with pytest.raises(SerializationError, match=match):
        load(io.BytesIO(data))


def test_error_is_a_runtime_error_and_names_the_place():
    assert issubclass(SerializationError, RuntimeError)
    data = craft({"T": "dict", "items": [["model", {"T": "dict", "items": [["w", tnode(dtype="f128")]]}]]})
    with pytest.raises(RuntimeError, match=r"at obj\['model'\]\['w'\]: unknown tensor dtype 'f128'"):
        load(io.BytesIO(data))


@pytest.mark.parametrize("cut", [1, 4, 29, 31, 100, -200, -60, -22, -1])
def test_every_truncation_is_detected(cut):
    data = good_bytes()
    with pytest.raises(SerializationError):
        load(io.BytesIO(data[:cut]))


def test_random_corruption_never_escapes_the_documented_error():
    """Flip random bytes of a valid checkpoint: load either succeeds (a flip in padding) or
    raises SerializationError; never another exception type."""
    data = good_bytes()
    rng = random.Random(0)
    failures = 0
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            load(io.BytesIO(bytes(b)))
        except SerializationError:
            failures += 1
    assert failures > 150  # most corruptions are detected (CRCs cover every member)


def test_file_from_disk_and_mmap_checks_too(tmp_path):
    p = tmp_path / "bad.st"
    p.write_bytes(CASES["zip_bomb_sizes"][0])
    with pytest.raises(SerializationError, match="beyond the end"):
        load(p)
    with pytest.raises(SerializationError, match="beyond the end"):
        load(p, mmap=True)
    p.write_bytes(CASES["csr_col_out_of_range"][0])
    with pytest.raises(SerializationError, match="column index 99"):
        load(p, mmap=True)
