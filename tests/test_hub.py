"""torch.hub / torch.utils.model_zoo: cache directory, file:// downloads, hashes, hubconf.py."""

import hashlib
import inspect
import os
import zipfile

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import hub
from sparsetorch.utils import model_zoo


@pytest.fixture(autouse=True)
def _fresh_hub_dir(monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    for var in ("TORCH_HOME", "XDG_CACHE_HOME", "TORCH_HUB", "TORCH_MODEL_ZOO"):
        monkeypatch.delenv(var, raising=False)


def _checkpoint(tmp_path):
    """A saved state dict named ``weights-<sha256 prefix>.pt``; returns (path, state)."""
    state = {"w": st.arange(6.0).reshape(2, 3), "b": st.tensor([1, 2])}
    raw = tmp_path / "raw.pt"
    st.save(state, raw)
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    path = tmp_path / f"weights-{digest[:10]}.pt"
    raw.rename(path)
    return path, state


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype is b[k].dtype
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_get_dir_follows_torch_env_vars(monkeypatch, tmp_path):
    assert hub.get_dir() == os.path.expanduser("~/.cache/torch/hub")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub")
    hub.set_dir("~/elsewhere")
    assert hub.get_dir() == os.path.expanduser("~/elsewhere")
    monkeypatch.setenv("TORCH_HUB", "x")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        hub.get_dir()


def test_signatures_match_torch():
    torch = pytest.importorskip("torch")
    for name in hub.__all__:
        ours = inspect.signature(getattr(hub, name))
        theirs = inspect.signature(getattr(torch.hub, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
               [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
    assert set(hub.__all__) == set(torch.hub.__all__)


def test_download_url_to_file_and_hash_prefix(tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(b"sparse" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = tmp_path / "out.bin"
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8], progress=False)
    assert dst.read_bytes() == src.read_bytes()
    bad = tmp_path / "bad.bin"
    msg = f'invalid hash value \\(expected "0000", got "{digest}"\\)'
    with pytest.raises(RuntimeError, match=msg):
        hub.download_url_to_file(src.as_uri(), str(bad), hash_prefix="0000", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blob.bin", "out.bin"]  # no .partial


def test_load_state_dict_from_url_downloads_once_and_checks_hash(tmp_path, capsys):
    path, state = _checkpoint(tmp_path)
    cache = tmp_path / "cache"
    got = hub.load_state_dict_from_url(path.as_uri(), model_dir=str(cache), progress=False,
                                       check_hash=True)
    _same(got, state)
    assert "Downloading:" in capsys.readouterr().out
    path.unlink()  # the second call reads the cached copy
    again = hub.load_state_dict_from_url(path.as_uri(), model_dir=str(cache), map_location="cpu")
    _same(again, state)
    assert model_zoo.load_url is hub.load_state_dict_from_url


def test_hash_mismatch_leaves_no_cached_file(tmp_path):
    path, _ = _checkpoint(tmp_path)
    wrong = path.with_name("weights-deadbeef.pt")
    path.rename(wrong)
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef"'):
        hub.load_state_dict_from_url(wrong.as_uri(), model_dir=str(cache), check_hash=True,
                                     progress=False)
    assert list(cache.iterdir()) == []
    # without check_hash the name is not checked
    assert "w" in hub.load_state_dict_from_url(wrong.as_uri(), model_dir=str(cache), progress=False)


def test_default_model_dir_and_file_name(tmp_path):
    path, state = _checkpoint(tmp_path)
    hub.set_dir(str(tmp_path / "hubdir"))
    got = hub.load_state_dict_from_url(path.as_uri(), file_name="mine.pt", progress=False)
    _same(got, state)
    assert (tmp_path / "hubdir" / "checkpoints" / "mine.pt").is_file()


def test_legacy_single_file_zip(tmp_path):
    path, state = _checkpoint(tmp_path)
    archive = tmp_path / "legacy.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(path, "model.pt")
    with pytest.warns(FutureWarning, match="Falling back to the old format"):
        got = hub.load_state_dict_from_url(archive.as_uri(), model_dir=str(tmp_path / "c"),
                                           progress=False)
    _same(got, state)


HUBCONF = '''
"""A tiny hub repository."""
import sparsetorch as torch

dependencies = {deps}


def tiny(n=2):
    """A linear layer with n inputs."""
    return torch.nn.Linear(n, 1)


def _helper():
    return None
'''


def _repo(d, deps=("numpy",)):
    d.mkdir(parents=True)
    (d / "hubconf.py").write_text(HUBCONF.format(deps=list(deps)))
    return d


def test_load_local_hubconf(tmp_path):
    d = _repo(tmp_path / "repo")
    m = hub.load(str(d), "tiny", 3, source="local")
    assert isinstance(m, st.nn.Linear) and m.in_features == 3
    with pytest.raises(RuntimeError, match="Cannot find callable nothing in hubconf"):
        hub.load(str(d), "nothing", source="local")
    with pytest.raises(ValueError, match="model should be a string of function name"):
        hub.load(str(d), 3, source="local")
    with pytest.raises(ValueError, match='Unknown source: "web"'):
        hub.load(str(d), "tiny", source="web")
    dm = _repo(tmp_path / "needs", deps=("numpy", "no_such_pkg_xyz"))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_xyz"):
        hub.load(str(dm), "tiny", source="local")


def test_github_uses_the_cache_or_refuses(tmp_path):
    hub.set_dir(str(tmp_path))
    with pytest.raises(RuntimeError, match="does not download repositories from GitHub"):
        hub.load("someone/models", "tiny")
    _repo(tmp_path / "someone_models_main")
    assert hub.list("someone/models") == ["tiny"]
    assert hub.help("someone/models", "tiny") == "A linear layer with n inputs."
    assert isinstance(hub.load("someone/models:main", "tiny"), st.nn.Linear)
    with pytest.raises(RuntimeError, match="does not download"):
        hub.load("someone/models", "tiny", force_reload=True)
