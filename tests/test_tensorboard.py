"""torch.utils.tensorboard.SummaryWriter: events written, then read back with tensorboard's own
EventAccumulator (tags, steps, values); histograms compared with torch's writer."""

import importlib
import os
import socket
import sys

import numpy as np
import pytest

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

import sparsetorch as st  # noqa: E402
from sparsetorch.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(logdir):
    ea = EventAccumulator(str(logdir))
    ea.Reload()
    return ea


def test_scalars_from_tensors_arrays_and_numbers(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", st.tensor(0.5), 0)
        w.add_scalar("loss", st.tensor([0.25]), 1)
        w.add_scalar("loss", np.float32(0.125), 2)
        w.add_scalar("loss", 1, 3)
        w.add_scalar("lr", 0.1, 0, new_style=True)
        with pytest.raises(AssertionError, match="Tensor should contain one element"):
            w.add_scalar("bad", st.ones(2), 0)
    ea = _read(tmp_path)
    got = [(e.step, e.value) for e in ea.Scalars("loss")]
    assert got == [(0, 0.5), (1, 0.25), (2, 0.125), (3, 1.0)]
    assert "lr" in ea.Tags()["tensors"]  # new_style writes a tensor with the scalars plugin
    assert ea.Tensors("lr")[0].tensor_proto.float_val[0] == pytest.approx(0.1)


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    w = SummaryWriter(tmp_path)
    for step in range(3):
        w.add_scalars("loss", {"train": 1.0 / (step + 1), "val": 2.0}, step)
    w.close()
    assert {"loss_train", "loss_val"} <= set(os.listdir(tmp_path))
    train = _read(tmp_path / "loss_train").Scalars("loss")
    val = _read(tmp_path / "loss_val").Scalars("loss")
    assert [e.value for e in train] == pytest.approx([1.0, 0.5, 1 / 3])
    assert [e.step for e in val] == [0, 1, 2] and {e.value for e in val} == {2.0}


def test_histogram_matches_torch(tmp_path):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(500).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", st.from_numpy(data), 5)
        w.add_histogram("np", data, 6, bins="auto", max_bins=7)
        w.add_histogram("sparse", st.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse(), 7)
    ea = _read(tmp_path)
    h = ea.Histograms("w")[0]
    assert h.step == 5 and h.histogram_value.num == 500
    assert h.histogram_value.min == pytest.approx(float(data.min()))
    s = ea.Histograms("sparse")[0].histogram_value
    assert (s.num, s.sum, s.sum_squares) == (4, 5.0, 13.0)  # implicit zeros counted
    pytest.importorskip("torch")
    from torch.utils.tensorboard import summary as ts

    default_bins = SummaryWriter(tmp_path / "bins").default_bins
    for tag, bins, max_bins in (("w", default_bins, None), ("np", "auto", 7)):
        ours = ea.Histograms(tag)[0].histogram_value
        theirs = ts.make_histogram(data.astype(float), bins, max_bins)
        assert list(ours.bucket_limit) == pytest.approx(list(theirs.bucket_limit))
        assert list(ours.bucket) == list(theirs.bucket)
        assert (ours.num, ours.max) == (theirs.num, pytest.approx(theirs.max))


def test_text_and_raw_histogram(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "**hello** sparse", 3)
        w.add_histogram_raw("raw", 0, 2, 3, 3, 5, [1.0, 2.0], [1, 2], global_step=1)
        with pytest.raises(ValueError, match="len\\(bucket_limits\\) != len\\(bucket_counts\\)"):
            w.add_histogram_raw("raw", 0, 2, 3, 3, 5, [1.0], [1, 2])
    ea = _read(tmp_path)
    t = ea.Tensors("notes/text_summary")[0]
    assert t.step == 3 and t.tensor_proto.string_val == [b"**hello** sparse"]
    assert list(ea.Histograms("raw")[0].histogram_value.bucket) == [1, 2]


def test_hparams_written_to_a_run_directory(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "opt": "sgd", "layers": 2, "skip": None},
                      {"hparam/acc": 0.75}, hparam_domain_discrete={"opt": ["sgd", "adam"]},
                      run_name="run0")
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 1)], {})
        with pytest.raises(ValueError, match="value should be one of int, float, str, bool"):
            w.add_hparams({"x": [1]}, {})
    ea = _read(tmp_path / "run0")
    assert set(ea.PluginTagToContent("hparams")) == {
        "_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"}
    from tensorboard.plugins.hparams import plugin_data_pb2

    start = plugin_data_pb2.HParamsPluginData.FromString(
        ea.PluginTagToContent("hparams")["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["opt"].string_value == "sgd" and start.hparams["lr"].number_value == 0.1
    assert "skip" not in start.hparams
    assert ea.Scalars("hparam/acc")[0].value == 0.75


def test_default_log_dir_flush_close_and_reopen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs" + os.sep)
    assert w.get_logdir().endswith("_" + socket.gethostname() + "_lr0.1")
    w.add_scalar("a", 1.0, 0)
    w.flush()
    assert _read(w.get_logdir()).Scalars("a")[0].value == 1.0
    w.close()
    w.close()  # a second close is ignored
    w.add_scalar("a", 2.0, 1)  # a new event file after close
    w.close()
    got = sorted((e.step, e.value) for e in _read(w.get_logdir()).Scalars("a"))
    assert got == [(0, 1.0), (1, 2.0)]
    with pytest.raises(NotImplementedError, match="add_video is not implemented"):
        w.add_video("vid", st.zeros(1, 2, 3, 4, 4))


def test_missing_tensorboard_names_pip_install(monkeypatch):
    for name in [m for m in sys.modules if m.startswith("sparsetorch.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        importlib.import_module("sparsetorch.utils.tensorboard")


def test_signatures_match_torch():
    pytest.importorskip("torch")
    import inspect

    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    for name in ("__init__", "add_tensor", "add_image", "add_images", "add_figure", "add_scalar",
                 "add_scalars", "add_histogram", "add_histogram_raw", "add_text", "add_hparams",
                 "flush", "close", "get_logdir", "__exit__"):
        ours = inspect.signature(getattr(SummaryWriter, name)).parameters.values()
        theirs = inspect.signature(getattr(TorchWriter, name)).parameters.values()
        assert [(p.name, p.default) for p in ours] == [(p.name, p.default) for p in theirs], name
    public = {n for n in dir(TorchWriter) if not n.startswith("_")}
    assert not public - set(dir(SummaryWriter))  # the rest raise NotImplementedError


def test_images_and_figures_match_torch(tmp_path):
    pytest.importorskip("PIL")
    import io

    from PIL import Image

    rng = np.random.default_rng(1)
    chw = rng.random((3, 5, 7)).astype(np.float32)
    batch = rng.integers(0, 256, (10, 1, 4, 6)).astype(np.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", st.from_numpy(chw), 1)
        w.add_image("hw", chw[0], 2, dataformats="HW")
        w.add_images("batch", batch, 3)
    ea = _read(tmp_path)

    def pixels(tag):
        img = ea.Images(tag)[0]
        return np.asarray(Image.open(io.BytesIO(img.encoded_image_string))), img

    px, img = pixels("chw")
    assert (img.step, img.width, img.height) == (1, 7, 5)
    np.testing.assert_array_equal(px, (chw.transpose(1, 2, 0) * 255).astype(np.uint8))
    assert pixels("hw")[0].shape == (5, 7, 3)
    grid, img = pixels("batch")
    assert grid.shape == (8, 48, 3)  # 10 images in 8 columns: 2 rows
    np.testing.assert_array_equal(grid[4:, 6:12, 0], batch[9, 0])
    assert not grid[4:, 12:].any()  # the empty cells of the last row
    pytest.importorskip("torch")
    from torch.utils.tensorboard import summary as ts

    for tag, data, fmt in (("chw", chw, "CHW"), ("batch", batch, "NCHW")):
        theirs = ts.image(tag, data, dataformats=fmt).value[0].image
        ref = np.asarray(Image.open(io.BytesIO(theirs.encoded_image_string)))
        np.testing.assert_array_equal(pixels(tag)[0], ref)


def test_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", fig, 0)
    img = _read(tmp_path).Images("fig")[0]
    assert (img.width, img.height) == (100, 50)
    assert not plt.fignum_exists(fig.number)  # closed by default


def test_add_tensor_protos_equal_torch(tmp_path):
    values = [[1.5, -2.0, 0.25], [3.0, 0.0, -1.0]]
    dtypes = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool",
              "complex64"]
    with SummaryWriter(tmp_path) as w:
        for name in dtypes:
            w.add_tensor(name, st.tensor(values).to(getattr(st, name)), 4)
    ea = _read(tmp_path)
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import summary as ts

    from tensorboard.util import tensor_util

    half = ea.Tensors("float16")[0].tensor_proto  # 16-bit patterns, decoded by TensorBoard
    np.testing.assert_array_equal(tensor_util.make_ndarray(half), np.array(values, np.float16))
    bf16 = ea.Tensors("bfloat16")[0].tensor_proto.half_val
    assert list(bf16) == [0x3FC0, 0xC000, 0x3E80, 0x4040, 0, 0xBF80]
    for name in dtypes[:2] + dtypes[4:]:  # torch writes float32 bits into half_val: not compared
        ours = ea.Tensors(name)[0]
        theirs = ts.tensor_proto(name, torch.tensor(values).to(getattr(torch, name)))
        assert ours.step == 4
        assert ours.tensor_proto == theirs.value[0].tensor, name
