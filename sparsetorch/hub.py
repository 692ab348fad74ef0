"""torch.hub: the cache directory, downloads, and checkpoints loaded from URLs.

``load_state_dict_from_url`` downloads once into ``<hub_dir>/checkpoints`` (any URL that
``urllib`` opens: ``https://``, ``file://``, ...), optionally checks the SHA-256 prefix in the file
name (``name-<sha256 prefix>.ext``), and loads with :func:`sparsetorch.load`. The hub directory is
``$TORCH_HOME/hub``, ``$TORCH_HOME`` defaulting to ``$XDG_CACHE_HOME/torch`` and that to
``~/.cache/torch``, as in torch; :func:`set_dir` overrides it.

``load`` / ``list`` / ``help`` run a ``hubconf.py`` from a local directory (``source="local"``).
Decision: for ``source="github"`` sparsetorch does not download and run code from GitHub. A
repository already in the hub cache (``<hub_dir>/<owner>_<repo>_<ref>``, e.g. fetched earlier
by torch) is used; otherwise a ``RuntimeError`` says to clone it and load it with
``source="local"``.
"""

import contextlib
import os
import re
import sys
import warnings

__all__ = [
    "download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
    "set_dir",
]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # resnet18-bfd8deac.pth -> bfd8deac
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


class _Faketqdm:
    """A minimal progress bar on stderr, used when tqdm is not installed."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = _Faketqdm
    return tqdm


def __getattr__(name):  # ``from torch.hub import tqdm`` (torchvision does), imported on first use
    if name == "tqdm":
        return _tqdm()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- the cache directory ----

def _get_torch_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir():
    r"""Get the Torch Hub cache directory used for storing downloaded models & weights.

    If :func:`set_dir` is not called, default path is ``$TORCH_HOME/hub`` where environment
    variable ``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``, and ``$XDG_CACHE_HOME``
    to ``~/.cache``.
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    r"""Optionally set the Torch Hub directory used to save downloaded models & weights.

    Args:
        d (str): path to a local folder to save downloaded models & weights.
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- downloads ----

def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    r"""Download object at the given URL to a local path.

    The bytes go to a temporary ``<dst>.<uuid>.partial`` file, moved to ``dst`` only when the
    download (and the hash check) succeeded, so a broken download never replaces a good file.

    Args:
        url (str): URL of the object to download
        dst (str): Full path where object will be saved, e.g. ``/tmp/temporary_file``
        hash_prefix (str, optional): If not None, the SHA256 downloaded file should start with
            ``hash_prefix``. Default: None
        progress (bool, optional): whether or not to display a progress bar to stderr.
            Default: True
    """
    import hashlib
    import shutil
    import uuid
    from urllib.request import Request, urlopen

    dst = os.path.expanduser(dst)
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with open(tmp, "xb") as f, urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            length = u.info().get_all("Content-Length")
            total = int(length[0]) if length else None
            with _tqdm()(total=total, disable=not progress, unit="B", unit_scale=True,
                      unit_divisor=1024) as bar:
                while True:
                    chunk = u.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    if sha256 is not None:
                        sha256.update(chunk)
                    bar.update(len(chunk))
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _is_legacy_zip_format(filename):
    """A zip holding one file that is not a checkpoint itself (torch < 1.6 users zipped theirs)."""
    import zipfile

    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        infos = zf.infolist()
    return len(infos) == 1 and not infos[0].is_dir() and "/" not in infos[0].filename.rstrip("/")


def _safe_extract_zip(zf, extract_to):
    from pathlib import Path

    root = Path(extract_to).resolve()
    for member in zf.infolist():
        name = os.path.normpath(member.filename)
        if os.path.isabs(name) or ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        if not (root / name).resolve().is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zf.extract(member, root)


def _load(path, map_location, weights_only):
    from .serialization import load as _load_file

    return _load_file(path, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    r"""Loads the serialized object at the given URL (with :func:`sparsetorch.load`).

    If downloaded file is a zip file holding a single file, that file is extracted and loaded
    (torch's legacy format, with its ``FutureWarning``). If the object is already present in
    ``model_dir``, it's deserialized and returned. The default value of ``model_dir`` is
    ``<hub_dir>/checkpoints`` where ``hub_dir`` is the directory returned by :func:`get_dir`.

    Args:
        url (str): URL of the object to download
        model_dir (str, optional): directory in which to save the object
        map_location (optional): a function or a dict specifying how to remap storage locations
            (see :func:`sparsetorch.load`)
        progress (bool, optional): whether or not to display a progress bar to stderr.
            Default: True
        check_hash(bool, optional): If True, the filename part of the URL should follow the naming
            convention ``filename-<sha256>.ext`` where ``<sha256>`` is the first eight or more
            digits of the SHA256 hash of the contents of the file. Default: False
        file_name (str, optional): name for the downloaded file. Filename from ``url`` will be
            used if not set.
        weights_only(bool, optional): passed to :func:`sparsetorch.load` (which never unpickles).
    """
    from urllib.parse import urlparse

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            m = HASH_REGEX.search(filename)
            hash_prefix = m.group(1) if m else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        import zipfile

        warnings.warn(
            "Falling back to the old format < 1.6. This support will be deprecated in favor of "
            "default zipfile format introduced in 1.6. Please redo torch.save() to save it in the "
            "new zipfile format.", FutureWarning, stacklevel=2)
        with zipfile.ZipFile(cached_file) as zf:
            _safe_extract_zip(zf, model_dir)
            cached_file = os.path.join(model_dir, zf.infolist()[0].filename)
    return _load(cached_file, map_location, weights_only)


# ---- hubconf.py entry points ----

@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    import importlib.util

    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No {MODULE_HUBCONF} in {repo_dir!r}")
    with _add_to_sys_path(repo_dir):
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _repo_dir(github, force_reload):
    """The cached checkout of ``owner/repo[:ref]``; sparsetorch never downloads one."""
    info, _, ref = github.partition(":")
    owner, _, name = info.partition("/")
    if not owner or not name or "/" in name:
        raise ValueError(f'Invalid github repo "{github}": expected "repo_owner/repo_name[:ref]"')
    refs = [ref] if ref else ["main", "master"]
    for r in refs:
        d = os.path.join(get_dir(), "_".join([owner, name, r.replace("/", "_")]))
        if os.path.isdir(d) and not force_reload:
            return d
    raise RuntimeError(
        f"sparsetorch.hub does not download repositories from GitHub (it never fetches and runs "
        f"remote code): clone https://github.com/{owner}/{name} and call "
        f"hub.load('<path of the clone>', model, source='local'). A repository already in the hub "
        f"cache ({get_dir()}/{owner}_{name}_<ref>) is used when force_reload is False.")


def _entry(module, model):
    import importlib.util

    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(module, VAR_DEPENDENCY, None)
    if deps is not None:
        missing = [d for d in deps if importlib.util.find_spec(d) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    r"""List all callable entrypoints of the ``hubconf.py`` of a cached ``owner/repo[:ref]``."""
    module = _import_hubconf(_repo_dir(github, force_reload))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    r"""Show the docstring of entrypoint ``model`` of a cached ``owner/repo[:ref]``."""
    return _entry(_import_hubconf(_repo_dir(github, force_reload)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    r"""Load a model from a local directory (``source="local"``) or a cached GitHub repository.

    Calls the entrypoint ``model`` of the directory's ``hubconf.py`` with ``*args, **kwargs``.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _repo_dir(repo_or_dir, force_reload)
    with _add_to_sys_path(repo_or_dir):
        return _entry(_import_hubconf(repo_or_dir), model)(*args, **kwargs)
