"""The numba floor: one on/off switch, one build-once cache of compiled kernels, one thread policy.

Ground floor: imports only the standard library; numba is imported lazily, the first time a kernel
group is built. Every numba user (``sparse/_spmm``, ``_spgemm``, ``_rowsort``, ``_merge``,
``nn/_kernels/embedding``, ``optim/_kernels``) goes through here.

- **Switch.** ``use_numba(flag)`` (also ``sparse._spmm.use_numba``) and the environment variable
  ``SPARSETORCH_NO_NUMBA=1``; ``ENABLED[0]`` is the current setting.
- **Build cache.** ``kernels(name, build)`` runs a group's builder once per process (its
  ``@njit(cache=True)`` functions) and returns what it built, or None when numba is off or missing.
  numba loads a cached kernel at its first call (10-25 ms each); ``warm(k, dtype)`` loads a
  group's cached overloads for a dtype in one go, ahead: the layers and optimizers that will call
  them do it when they are constructed, so a training loop's first iteration runs at its steady
  speed. The first real compile of a sparsetorch kernel in a process prints one line to stderr
  (``python -m sparsetorch.warmup`` compiles everything ahead).
- **Threads.** ``limit(work)`` is the context manager around a parallel kernel: one thread below
  ``PAR_MIN_WORK`` element-operations (waking the pool costs more than the work), otherwise
  numba's setting capped by the work size and by the cores that are free right now (affinity
  minus the other runnable threads of the machine, sampled at most every ``LOAD_TTL`` seconds,
  ``BUSY_TTL`` after a reading that found a core busy).
  A parallel region whose worker is descheduled waits for a whole time slice: on a busy machine
  an EmbeddingBag step took 81 ms instead of 1.5 ms and a GCN's spmm 9.4 ms instead of 0.4 ms.
"""

import contextlib
import os
import sys
import threading
import time

__all__ = [
    "ENABLED", "LOAD_TTL", "PAR_MIN_WORK", "free_cores", "kernels", "limit", "preload",
    "thread_count", "use_numba", "warm",
]

ENABLED = [not os.environ.get("SPARSETORCH_NO_NUMBA")]
# element-operations below which a parallel kernel runs on one thread: the pool's workers sleep
# between regions (start_pool), and waking one costs ~70 us, what a CSR spmm of ~200k
# element-operations takes on one thread (2708^2, 13k nnz x 16: 68 us on 1 thread, 111 us on 2
# woken threads; 846k: 197 / 181 us; 3.3M: 710 / 464 us)
PAR_MIN_WORK = 1 << 19
# element-operations from which a kernel takes numba's whole thread setting however busy the
# machine: the load-aware cap guards short kernels, whose parallel region stalls a whole time
# slice when a worker is descheduled; a kernel this long runs for many slices, so the stall is
# noise next to it, and with one thread per core it gets its share of every core (CSR spmm 3.2M
# nnz x 64 beside ~8 busy processes on 2 cores: 1.24x torch on the one thread the cap picked,
# 0.54x on two; bench_sparse.py --only spmm-fwd --threads 2)
WHOLE_POOL_WORK = 1 << 24
LOAD_TTL = 0.5  # seconds a sample of the free cores is reused
BUSY_TTL = 0.05  # ... when it found another process running (a passing one, often)

_BUILT = {}  # group name -> its kernels, or False (numba does not import / the builder failed)
_LOCK = threading.RLock()
_ESTIMATE = {}  # module of a builder -> seconds its group takes to compile from a cold cache
NOTICE = [True]  # print the one-line compile notice (the warmup turns it off: it reports itself)
_NOTICED = [False]
_LISTENING = [False]
_WARMED = set()  # (id of a built group, dtype name) already warmed


def use_numba(flag):
    """Use the numba kernels when numba imports (True, the default) or the NumPy/SciPy ones
    (False; also set by the environment variable ``SPARSETORCH_NO_NUMBA=1``). Returns the
    previous setting."""
    old = ENABLED[0]
    ENABLED[0] = bool(flag)
    return old


# ---- the build-once cache ----

def kernels(name, build, estimate=5.0):
    """The kernels of group ``name``: ``build()``'s result, built once per process, or None when
    numba is switched off, does not import, or ``build()`` returned False. ``estimate``: seconds
    to compile the group cold (for the compile notice)."""
    if not ENABLED[0]:
        return None
    k = _BUILT.get(name)
    if k is None:
        k = _build(name, build, estimate)
    return k or None


def built():
    """Names of the groups built in this process (False-valued ones: numba missing)."""
    return dict(_BUILT)


def _build(name, build, estimate):
    with _LOCK:
        k = _BUILT.get(name)
        if k is not None:
            return k
        _ESTIMATE[build.__module__] = _ESTIMATE.get(build.__module__, 0.0) + estimate
        try:
            import numba  # noqa: F401
        except ImportError:
            k = False
        else:
            _listen()
            start_pool()
            k = build() or False
            if k and _FROZEN:  # built inside no_compile(): its kernels are guarded too
                _guard(dispatchers(k), *_FROZEN[-1])
        _BUILT[name] = k
        return k


_FROZEN = []  # the open no_compile() sections: (thread id, dispatchers guarded)


def _guard(ds, me, guarded):
    for d in ds:
        if "compile" in vars(d):  # (guarded by an enclosing section)
            continue

        def guarded_compile(sig, _d=d, _orig=d.compile):
            if threading.get_ident() == me:
                raise TypeError(f"{_d.py_func.__name__}: no loaded overload for {sig} "
                                "(inside sparsetorch._jit.no_compile())")
            return _orig(sig)

        d.compile = guarded_compile  # an instance attribute over the method: numba's call path
        guarded.append(d)  # (_compile_for_args) looks it up on the dispatcher


@contextlib.contextmanager
def no_compile():
    """Within it, the calling thread's calls of sparsetorch's kernels run only the overloads
    loaded in this process: a call that would load one from numba's cache or compile one (a cold
    cache: seconds) raises TypeError instead. Other threads load and compile as usual. For work
    worth doing only while it is cheap: the optimizers' warm-up step (``optim/_warm_paths.py``)."""
    section = (threading.get_ident(), [])
    _FROZEN.append(section)
    try:
        with _LOCK:
            _guard([d for k in _BUILT.values() if k for d in dispatchers(k)], *section)
        yield
    finally:
        _FROZEN.remove(section)
        for d in section[1]:
            vars(d).pop("compile", None)


def dispatchers(k):
    """The numba dispatchers held by a kernel group (a tuple, dict or namespace object)."""
    if isinstance(k, dict):
        vals = k.values()
    elif isinstance(k, (tuple, list)):
        vals = k
    else:
        vals = vars(k).values()
    out = []
    for v in vals:
        if hasattr(v, "py_func") and hasattr(v, "_cache"):
            out.append(v)
        elif getattr(v, "__closure__", None):  # a Python wrapper calling kernels of the group
            out.extend(c.cell_contents for c in v.__closure__
                       if hasattr(c.cell_contents, "py_func") and hasattr(c.cell_contents, "_cache"))
    return out


def _wanted(sig, dtype):
    """Whether an overload is for ``dtype``: every floating-point array argument has it."""
    for a in sig:
        t = getattr(a, "dtype", None)
        if (t is not None and hasattr(a, "ndim") and str(t).startswith(("float", "complex"))
                and str(t) != dtype):
            return False
    return True


def preload(k, dtype=None, names=None):
    """Load the overloads of ``k``'s kernels that numba's on-disk cache holds for this machine and
    this source (all of them, or those whose floating-point arrays are of ``dtype``), without
    compiling anything; ``names``: only the kernels of these (Python) names. Returns how many
    were loaded. Best effort: numba's cache layout is not a public API, so anything unexpected
    loads nothing."""
    n = 0
    want = None if dtype is None else str(getattr(dtype, "np", dtype))  # 'float32', ...
    for d in dispatchers(k):
        if names is not None and d.py_func.__name__ not in names:
            continue
        try:
            cache = d._cache
            codegen = d.targetctx.codegen()
            for key in cache._cache_file._load_index():
                sig = key[0]
                if (tuple(sig) not in d.overloads and (want is None or _wanted(sig, want))
                        and key == cache._index_key(sig, codegen)):
                    d.compile(sig)
                    n += 1
        except Exception:  # noqa: BLE001, S112 - an internals change must not break a kernel call
            continue
    return n


def warm(k, dtype=None, names=None):
    """Load a built kernel group's cached overloads (for ``dtype``'s values; of the kernels
    ``names``, or all) now, so that their first calls do not pay for it; ``k`` None (numba off or
    missing) does nothing. Returns how many were loaded."""
    if not k:
        return 0
    key = (id(k), str(getattr(dtype, "np", dtype)), names)
    if key in _WARMED:  # once per group and dtype (reading the cache index costs ~0.2 ms)
        return 0
    _WARMED.add(key)
    return preload(k, dtype, names)


# ---- the compile notice ----

def _listen():
    if _LISTENING[0]:
        return
    _LISTENING[0] = True
    try:
        from numba.core import event
    except ImportError:
        return

    class _Notice(event.Listener):
        def on_start(self, ev):
            d = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
            mod = getattr(getattr(d, "py_func", None), "__module__", None) or ""
            if mod.startswith("sparsetorch."):
                notice(_ESTIMATE.get(mod))

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Notice())


def notice(seconds=None, file=None):
    """Print, once per process, that sparse kernels are being compiled (a cold numba cache)."""
    if _NOTICED[0] or not NOTICE[0]:
        return False
    _NOTICED[0] = True
    s = max(1, round(seconds)) if seconds else 10
    f = file if file is not None else sys.stderr
    try:
        f.write(f"sparsetorch: compiling sparse kernels once (~{s} s); "
                "`python -m sparsetorch.warmup` does it ahead\n")
        f.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return True


# ---- the thread policy ----

_FREE = [-1.0, 1]  # [monotonic time the sample expires, free cores]


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _own_running():
    """Threads of this process that are runnable now (the caller included)."""
    n = 0
    base = "/proc/self/task"
    for t in os.listdir(base):
        try:
            with open(f"{base}/{t}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        if s[s.rfind(b")") + 2:][:1] == b"R":
            n += 1
    return max(n, 1)


def _others():
    """Runnable threads of other processes now. Our own are counted before and after the
    machine's total and the larger count taken: a worker of ours that goes to sleep between the
    two reads is not another process (reading ours once after the total took 1-3% of the
    samples on an idle 2-core machine for a busy core)."""
    own = _own_running()
    with open("/proc/loadavg", "rb") as f:
        running = int(f.read().split()[3].split(b"/")[0])
    return running - max(own, _own_running())


def _sample_free():
    cores = _cores()
    try:
        others = _others()
        if others > 0:  # a busy reading: confirmed by a second one (a passing process
            others = min(others, _others())  # is gone by then; a busy one is still running)
    except (OSError, ValueError, IndexError):
        try:
            others = int(os.getloadavg()[0] + 0.5) - 1
        except (AttributeError, OSError):
            return cores
    return max(1, cores - max(others, 0))


def free_cores():
    """Cores of this process's affinity not busy with other work (at least 1), sampled at most
    every ``LOAD_TTL`` seconds (``BUSY_TTL`` after a sample that found cores busy: a false
    reading would otherwise keep every parallel kernel on fewer threads for half a second).

    The samples are taken by a daemon thread (``_sampler``) while parallel kernels keep asking:
    one costs 25-70 us of /proc reads, and 170-300 us when the caches are cold, as after a pause
    of the program (a benchmark's ``gc.collect()``, a server's idle time), which is when a
    sample in the call's path was due (EmbeddingBag sum forward at 2 threads paid ~280 us of its
    ~1.1 ms so). The calling thread samples itself only when no sampler runs: the first call, or
    the first after ``SAMPLER_IDLE`` seconds without one (the sampler then stops), or with
    ``SAMPLER[0]`` off. A value whose expiry is infinite (a test's or ``warmup``'s) stays."""
    f = _FREE
    now = time.monotonic()
    _ASKED[0] = now
    if now >= f[0]:
        t = _SAMPLER_THREAD[0]
        if t is None or not t.is_alive():
            _store(f, _sample_free())
            if SAMPLER[0]:
                _start_sampler()
    return f[1]


SAMPLER = [True]  # free_cores' samples taken by a daemon thread (False: by the caller)
SAMPLER_IDLE = 5.0  # seconds without a free_cores() call after which the sampler thread stops
_SAMPLER_THREAD = [None]
_ASKED = [0.0]  # monotonic time of the last free_cores() call


def _start_sampler():
    t = threading.Thread(target=_sampler, name="sparsetorch-load-sampler", daemon=True)
    _SAMPLER_THREAD[0] = t
    try:
        t.start()
    except RuntimeError:  # (interpreter shutting down): the caller samples
        _SAMPLER_THREAD[0] = None


def _sampler():
    f = _FREE
    while SAMPLER[0]:
        now = time.monotonic()
        if now - _ASKED[0] > SAMPLER_IDLE:
            break
        wait = f[0] - now
        if wait > 0:
            time.sleep(min(wait, LOAD_TTL))
            continue
        n = _sample_free()
        if f[0] != float("inf"):  # (a pinned value stays)
            _store(f, n)
    _SAMPLER_THREAD[0] = None


def _store(f, n):
    """Keep a sample of ``n`` free cores: ``LOAD_TTL`` seconds, ``BUSY_TTL`` when one is busy."""
    f[1] = n
    f[0] = time.monotonic() + (LOAD_TTL if n >= _cores() else BUSY_TTL)


def thread_count(work, most):
    """Threads for a parallel kernel of ``work`` element-operations when numba's setting is
    ``most``: 1 below ``PAR_MIN_WORK``, otherwise at most one per ``PAR_MIN_WORK`` of work and
    at most the free cores; ``most`` from ``WHOLE_POOL_WORK`` on."""
    if work < PAR_MIN_WORK or most <= 1:
        return 1
    if work >= WHOLE_POOL_WORK:
        return most
    return max(1, min(most, free_cores(), 1 + work // PAR_MIN_WORK))


_POOL = [False]  # numba's thread pool started (by start_pool)
# Environment of the OpenMP runtime numba's pool loads (libgomp, or the LLVM/Intel one): a worker
# that finishes a parallel region sleeps at once instead of spinning (GNU's default spins ~300k
# times, Intel's 200 ms). Spinning workers took the cores from the BLAS threads of the matmuls
# between our kernels: a DLRM-style step at batch 2048 took 7.4-16 ms at 2 threads (6.8 ms at 1),
# and 7.9-8.2 ms with the workers asleep (benchmarks/bench_steps.py).
_NO_SPIN = {"GOMP_SPINCOUNT": "0", "KMP_BLOCKTIME": "0"}


def start_pool():
    """Start numba's thread pool once, its OpenMP runtime told not to spin. The variables are set
    only while the pool's runtime loads (it reads them then) and only where the user has not set
    them; another OpenMP runtime in the process (torch's) keeps its own behaviour."""
    if _POOL[0]:
        return
    _POOL[0] = True
    import numba

    mine = [k for k in _NO_SPIN if k not in os.environ]
    for k in mine:
        os.environ[k] = _NO_SPIN[k]
    try:
        numba.get_num_threads()  # launches the pool: its runtime reads the environment now
    finally:
        for k in mine:
            os.environ.pop(k, None)


_NBT = []  # numba's (get, set) of the calling thread's thread count, found at first use


def _numba_threads():
    f = _NBT
    if not f:
        import numba

        start_pool()

        numba.get_num_threads()  # starts the pool, as any parallel kernel would
        try:  # the unchecked pair (0.3 and 1 us instead of 2 and 3): n never exceeds the pool
            from numba.np.ufunc import parallel as par

            f[:] = [par._get_num_threads, par._set_num_threads]
        except (ImportError, AttributeError):
            f[:] = [numba.get_num_threads, numba.set_num_threads]
    return f


class _Threads:
    __slots__ = ("old", "set", "work")

    def __init__(self, work):
        self.work = work

    def __enter__(self):
        get, put = _NBT or _numba_threads()
        old = get()
        n = thread_count(self.work, old)
        if n != old:
            put(n)
            self.set, self.old = put, old
        else:
            self.set = None
        return n

    def __exit__(self, *exc):
        if self.set is not None:
            self.set(self.old)


def limit(work):
    """A context manager around a numba parallel kernel of ``work`` element-operations: runs it
    on ``thread_count(work, numba's setting)`` threads (set for the calling thread, restored
    afterwards; ``numba.get_num_threads()`` inside gives the count)."""
    return _Threads(work)
