"""What every example shares: its command line, the backend switch, progress bars and the PNG
of its curves.

The command line: ``--help``; ``--quick`` (or ``SPARSETORCH_EXAMPLES_QUICK=1``) for a short run;
``--out DIR`` for everything the run writes (default ``./runs/<example>/``); ``--no-progress``;
numbers and paths checked by their argparse types, so a bad value ends the run with one
``error:`` line and exit status 2 before any data is loaded or any training starts. The output
directory (and any output file named on the command line) is checked for writability up front,
so no result is lost to a bad path at the end of a run.

``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs an example on PyTorch instead of sparsetorch.

Only the standard library is imported here: an example parses its arguments before it imports
sparsetorch (or torch), pandas or matplotlib, so ``--help`` and argument errors answer at once.
"""

import argparse
import importlib.util
import math
import os
import pathlib
import tempfile
import textwrap

QUICK_ENV = "SPARSETORCH_EXAMPLES_QUICK"
BACKEND_ENV = "SPARSETORCH_EXAMPLES_BACKEND"
BACKENDS = ("sparsetorch", "torch")
INSTALL_HINT = 'python -m pip install -e ".[examples]"'


def backend():
    """The library the examples run on: ``"torch"`` or ``"sparsetorch"`` (the default)."""
    return os.environ.get(BACKEND_ENV, "") or "sparsetorch"


# ---- argument types: each rejects a bad value with a one-line reason ----------------------------

def _number(kind, text, ok, what):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not (math.isfinite(value) and ok(value)):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text):
    return _number(int, text, lambda v: v > 0, "a positive integer")


def nonnegative_int(text):
    return _number(int, text, lambda v: v >= 0, "an integer >= 0")


def positive_float(text):
    return _number(float, text, lambda v: v > 0, "a positive number")


def nonnegative_float(text):
    return _number(float, text, lambda v: v >= 0, "a number >= 0")


def fraction(text):
    return _number(float, text, lambda v: 0 <= v < 1, "a number in [0, 1)")


def existing_file(text):
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    if not os.access(text, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot read {text!r}")
    return text


# ---- the parser ---------------------------------------------------------------------------------

class _Formatter(argparse.RawDescriptionHelpFormatter):
    """The docstring as written; each option's default after its help."""

    @staticmethod
    def quiet(action):
        """No default worth showing (none, or an off switch)."""
        return action.default in (None, argparse.SUPPRESS) or action.default is False

    def _get_help_string(self, action):
        text = action.help
        if not self.quiet(action) and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (argparse prints the usage block too)."""

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        if action.help is None and not _Formatter.quiet(action):
            action.help = "(default: %(default)s)"  # argparse shows no help line otherwise
        return action

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (--help for usage)\n")


def parser(name, doc, *, out=True):
    """A parser for ``examples/<name>.py`` with the shared options; ``doc`` (the example's
    docstring) is the help text. ``out=False``: the example writes no files."""
    p = Parser(prog=f"{name}.py", description=doc, formatter_class=_Formatter)
    p.add_argument("--quick", action="store_true",
                   help=f"a short run, for CI (also {QUICK_ENV}=1)")
    if out:
        p.add_argument("--out", metavar="DIR", default=os.path.join("runs", name),
                       help="directory for the plot and other outputs (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.epilog = (f"environment:\n  {BACKEND_ENV}=torch  runs the script on PyTorch\n"
                f"  {QUICK_ENV}=1         is --quick")
    return p


def parse(p, argv=None, *, quick=None, needs=("tqdm",)):
    """Parses and checks ``argv``; exits with status 2 and one ``error:`` line on a bad argument,
    a bad environment or a missing module of ``needs``. ``quick`` caps options in quick mode
    (``{"epochs": 2}``); ``needs`` is a list of module names, or a function of the parsed
    arguments giving one. Adds ``args.backend``; ``args.out`` becomes a ``pathlib.Path``
    checked writable (created when ``output_file`` puts a file there)."""
    args = p.parse_args(argv)
    name = os.environ.get(BACKEND_ENV, "")
    if name not in ("", *BACKENDS):
        p.error(f"{BACKEND_ENV}={name!r}: expected 'torch' or 'sparsetorch'")
    args.backend = backend()
    if callable(needs):
        needs = needs(args)
    missing = [m for m in (args.backend, *needs) if importlib.util.find_spec(m) is None]
    if missing:
        p.error(f"not installed: {', '.join(missing)} (the examples' extras: {INSTALL_HINT})")
    args.quick = args.quick or os.environ.get(QUICK_ENV, "") not in ("", "0")
    if args.quick:
        for key, cap in (quick or {}).items():
            setattr(args, key, min(getattr(args, key), cap))
    if getattr(args, "out", None) is not None:
        args.out = writable_dir(p, "--out", args.out, create=False)  # made by output_file
    return args


def writable_dir(p, flag, path, create=True):
    """``path`` as a ``Path``, checked writable (and created, with ``create``); else ``p.error``.
    Without ``create``, a directory that does not exist yet is checked through the nearest
    existing one above it, and nothing is created."""
    path = pathlib.Path(path)
    try:
        if path.exists() and not path.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        if create:
            path.mkdir(parents=True, exist_ok=True)
        probe = path.resolve()
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        with tempfile.TemporaryFile(dir=probe):  # os.access is not the truth (root, ACLs)
            pass
    except OSError as e:
        p.error(f"argument {flag}: cannot write to {str(path)!r}: {e.strerror or e}")
    return path


def output_file(p, flag, path, default):
    """The output file ``path`` (a relative path is taken from the current directory, as
    given), ``default`` when ``path`` is None, and None when it is ``''`` (no such output).
    Its directory is created and checked writable up front."""
    if path is None:
        path = default
    if path == "":
        return None
    path = pathlib.Path(path)
    if path.is_dir():
        p.error(f"argument {flag}: {str(path)!r} is a directory")
    writable_dir(p, flag, path.parent)
    return path


# ---- while running ------------------------------------------------------------------------------

def progress(iterable, args, **kwargs):
    """A tqdm bar over ``iterable`` (none with ``--no-progress``)."""
    from tqdm import tqdm

    return tqdm(iterable, disable=args.no_progress, **kwargs)


def settings(args, *keys):
    """``"key=value ..."`` for the title of a plot: the run's settings and its backend."""
    parts = [f"{k.replace('_', '-')}={getattr(args, k)}" for k in keys]
    return " ".join(parts + [f"backend={args.backend}"] + (["quick"] if args.quick else []))


def save_curves(path, title, panels):
    """Writes ``panels`` side by side into the PNG ``path``: each ``(x, y, xlabel, ylabel)``,
    titled by its ylabel, under the figure title ``title`` (lines wrapped to fit). Returns
    ``path``, or None (with a message) when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib is not installed: no plot ({INSTALL_HINT})")
        return None
    matplotlib.use("Agg")  # headless: write the file, open no window
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, (x, y, xlabel, ylabel) in zip(axes[0], panels):
        ax.plot(list(x), list(y), marker="o" if len(y) <= 30 else None)
        ax.set(xlabel=xlabel, ylabel=ylabel, title=ylabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    width = 60 * len(panels)  # characters that fit across the figure at this font size
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in title.split("\n")), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"curves written to {path}")
    return path
