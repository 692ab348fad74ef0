"""A restricted unpickler for ``weights_only`` loading: a pickle interpreter of our own.

It understands the data opcodes of protocols 2-5 and nothing that imports or calls by itself:
a global resolves only through the allowlist (torch's names implemented in :mod:`._rebuild`,
plus the user's ``add_safe_globals``), ``REDUCE`` calls only functions from that allowlist,
``NEWOBJ``/``BUILD`` act only on allowlisted classes, ``APPEND``/``SETITEM``/``ADDITEMS`` only
on list/dict/set. Lengths are checked against the bytes really present before anything is
allocated. Every refusal is a :class:`WeightsOnlyError` naming what was refused.
"""

import io
import struct
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING
from collections import Counter, OrderedDict

from ..nn.parameter import Parameter
from ._rebuild import CALLABLE, TORCH_NAMES
from ._safe_globals import WeightsOnlyError, user_globals

__all__ = ["RestrictedUnpickler", "refused_global"]

_MAX_LONG = 1 << 16  # bytes of a LONG4 integer
_DRY = object()  # what a call stands for in a dry walk


def refused_global(full):
    return WeightsOnlyError(
        "Weights only load failed. In sparsetorch.load (as in torch.load) the default is "
        "weights_only=True: only tensors, dtypes, devices, sizes and plain containers are rebuilt. "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`sparsetorch.serialization.add_safe_globals([{full}])` or the "
        f"`sparsetorch.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function. Re-running sparsetorch.load with "
        "weights_only=False will likely succeed, but it can result in arbitrary code execution: "
        "do it only if you got the file from a trusted source.")


def _refuse(what):
    raise WeightsOnlyError(f"Weights only load failed: {what}")


class RestrictedUnpickler:
    """``RestrictedUnpickler(data, persistent_load, encoding).load()`` for ``data`` (bytes)."""

    def __init__(self, data, persistent_load, encoding="ASCII", dry=False, any_global=False,
                 unsafe=None):
        self.dry = dry  # only walk the pickle (globals and storage ids checked, nothing called)
        self.any_global = dry and any_global  # a dry walk for weights_only=False: names unchecked
        self.unsafe = unsafe if dry else None  # a dry walk listing the names it would refuse
        self.f = io.BytesIO(data)
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.user = user_globals()
        self.user_ids = {id(v) for v in self.user.values()}

    # ---- reading ----
    def read(self, n):
        if n < 0:
            _refuse(f"a negative length ({n}) in the pickle")
        b = self.f.read(n)
        if len(b) != n:
            _refuse(f"the pickle ends inside an instruction (wanted {n} bytes, got {len(b)}): truncated")
        return b

    def readline(self):
        b = self.f.readline()
        if not b.endswith(b"\n"):
            _refuse("the pickle ends inside a GLOBAL instruction: truncated")
        return b[:-1]

    def pop_mark(self):
        if not self.metastack:
            _refuse("an instruction needs a MARK that is not there")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def pop(self):
        if not self.stack:
            _refuse("the pickle pops an empty stack")
        return self.stack.pop()

    def top(self):
        if not self.stack:
            _refuse("the pickle uses an empty stack")
        return self.stack[-1]

    # ---- globals ----
    def find(self, module, name):
        if (module, name) in NAME_MAPPING:
            module, name = NAME_MAPPING[(module, name)]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        obj = TORCH_NAMES.get(full)
        if obj is None:
            obj = self.user.get(full)
        if obj is None:
            if self.unsafe is not None:
                if full not in self.unsafe:
                    self.unsafe.append(full)
                return _DRY
            if self.any_global:  # this walk only collects storage ids; pickle itself runs next
                return _DRY
            raise refused_global(full)
        return obj

    def load(self):
        self.stack, self.metastack, self.memo = [], [], {}
        ops = _OPS
        read = self.f.read
        while True:
            key = read(1)
            if not key:
                _refuse("the pickle ends without a STOP instruction: truncated")
            fn = ops.get(key[0])
            if fn is None:
                _refuse(f"unsupported pickle instruction {key!r}")
            if fn is _stop:
                return self.pop()
            fn(self)


def _check_text(b):
    try:
        return b.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        _refuse("a string in the pickle is not valid UTF-8")


def _global(u):
    module = _check_text(u.readline())
    name = _check_text(u.readline())
    u.stack.append(u.find(module, name))


def _stack_global(u):
    name, module = u.pop(), u.pop()
    if type(name) is not str or type(module) is not str:
        _refuse("STACK_GLOBAL needs two strings")
    u.stack.append(u.find(module, name))


def _reduce(u):
    args = u.pop()
    func = u.top()
    if type(args) is not tuple:
        _refuse(f"REDUCE arguments must be a tuple, got {type(args).__name__}")
    if u.dry:
        u.stack[-1] = _DRY
        return
    if id(func) in CALLABLE and CALLABLE[id(func)] is func or id(func) in u.user_ids or func is Parameter:
        u.stack[-1] = func(*args)
    else:
        _refuse(f"Trying to call reduce for unrecognized function {func!r}")


def _newobj(u):
    args = u.pop()
    cls = u.pop()
    if type(args) is not tuple:
        _refuse("NEWOBJ arguments must be a tuple")
    if u.dry:
        u.stack.append(_DRY)
        return
    if cls is Parameter:
        u.stack.append(Parameter(*args))
    elif id(cls) in u.user_ids and isinstance(cls, type):
        u.stack.append(cls.__new__(cls, *args))
    else:
        _refuse(f"Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls!r}")


def _build(u):
    state = u.pop()
    inst = u.top()
    if inst is _DRY:
        return
    if type(inst) is OrderedDict or type(inst) is Parameter:
        if type(state) is not dict or not all(type(k) is str and not hasattr(type(inst), k) for k in state):
            _refuse(f"BUILD state for {type(inst).__name__} must be a dict of new attribute names")
        inst.__dict__.update(state)
    elif id(type(inst)) in u.user_ids:
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            inst.__dict__.update(state)
        for k, v in (slots or {}).items():
            setattr(inst, k, v)
    else:
        _refuse(f"Can only build Parameter, OrderedDict or types allowlisted via `add_safe_globals`, "
                f"but got {type(inst)}")


def _append(u):
    item = u.pop()
    if u.top() is _DRY:
        return
    if type(u.top()) is not list:
        _refuse(f"Can only append to lists, but got {type(u.top())}")
    u.stack[-1].append(item)


def _appends(u):
    items = u.pop_mark()
    if u.top() is _DRY:
        return
    if type(u.top()) is not list:
        _refuse(f"Can only extend lists, but got {type(u.top())}")
    u.stack[-1].extend(items)


def _setitem_target(u, op):
    d = u.top()
    if d is _DRY:
        return {}
    if type(d) not in (dict, OrderedDict, Counter):
        _refuse(f"Can only {op} for dict, collections.OrderedDict, collections.Counter, but got {type(d)}")
    return d


def _hashable(k):
    try:
        hash(k)
    except TypeError:
        _refuse(f"a dict key or set item of type {type(k).__name__} is unhashable")
    return k


def _setitem(u):
    v, k = u.pop(), u.pop()
    _setitem_target(u, "SETITEM")[_hashable(k)] = v


def _setitems(u):
    items = u.pop_mark()
    d = _setitem_target(u, "SETITEMS")
    if len(items) % 2:
        _refuse("SETITEMS with an odd number of items")
    for i in range(0, len(items), 2):
        d[_hashable(items[i])] = items[i + 1]


def _additems(u):
    items = u.pop_mark()
    if u.top() is _DRY:
        return
    if type(u.top()) is not set:
        _refuse(f"Can only add items to sets, but got {type(u.top())}")
    for k in items:
        u.stack[-1].add(_hashable(k))


def _frozenset(u):
    items = u.pop_mark()
    u.stack.append(frozenset(_hashable(k) for k in items))


def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


def _tuple(u):
    items = u.pop_mark()
    u.stack.append(tuple(items))


def _tuple_n(n):
    def fn(u):
        if len(u.stack) < n:
            _refuse("TUPLE instruction on a short stack")
        items = tuple(u.stack[-n:])
        del u.stack[-n:]
        u.stack.append(items)
    return fn


def _const(v):
    def fn(u):
        u.stack.append(v() if callable(v) else v)
    return fn


def _unpack(fmt):
    s = struct.Struct(fmt)

    def fn(u):
        u.stack.append(s.unpack(u.read(s.size))[0])
    return fn


def _long(nfmt):
    s = struct.Struct(nfmt)

    def fn(u):
        n = s.unpack(u.read(s.size))[0]
        if n > _MAX_LONG:
            _refuse(f"an integer of {n} bytes")
        u.stack.append(int.from_bytes(u.read(n), "little", signed=True))
    return fn


def _text(nfmt):
    s = struct.Struct(nfmt)

    def fn(u):
        u.stack.append(_check_text(u.read(s.unpack(u.read(s.size))[0])))
    return fn


def _bytes(nfmt):
    s = struct.Struct(nfmt)

    def fn(u):
        u.stack.append(u.read(s.unpack(u.read(s.size))[0]))
    return fn


def _binstring(nfmt):
    s = struct.Struct(nfmt)

    def fn(u):
        data = u.read(s.unpack(u.read(s.size))[0])
        if u.encoding != "bytes":
            try:
                data = data.decode(u.encoding, "strict")
            except (UnicodeDecodeError, LookupError) as e:
                _refuse(f"a Python 2 string cannot be decoded: {e}")
        u.stack.append(data)
    return fn


def _persid(u):
    pid = u.pop()
    if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
        _refuse(f"Only persistent_load of storage is allowed, but got {pid!r:.80}")
    u.stack.append(u.persistent_load(pid))


def _get(nfmt):
    s = struct.Struct(nfmt)

    def fn(u):
        i = s.unpack(u.read(s.size))[0]
        if i not in u.memo:
            _refuse(f"memo entry {i} is read before it is written")
        u.stack.append(u.memo[i])
    return fn


def _put(nfmt):
    s = struct.Struct(nfmt)

    def fn(u):
        u.memo[s.unpack(u.read(s.size))[0]] = u.top()
    return fn


def _memoize(u):
    u.memo[len(u.memo)] = u.top()


def _proto(u):
    p = u.read(1)[0]
    if not 2 <= p <= 5:
        _refuse(f"unsupported pickle protocol {p}")


def _frame(u):
    u.read(8)


def _pop(u):
    if u.stack:
        u.stack.pop()
    else:
        u.pop_mark()


def _dup(u):
    u.stack.append(u.top())


def _stop(u):  # handled in load()
    pass


_OPS = {ord(k): v for k, v in {
    "c": _global, "\x93": _stack_global, "R": _reduce, "\x81": _newobj, "b": _build,
    "a": _append, "e": _appends, "s": _setitem, "u": _setitems, "\x90": _additems,
    "\x91": _frozenset, "(": _mark, "t": _tuple, "\x85": _tuple_n(1), "\x86": _tuple_n(2),
    "\x87": _tuple_n(3), ")": _const(()), "]": _const(list), "}": _const(dict),
    "\x8f": _const(set), "N": _const(None), "\x88": _const(True), "\x89": _const(False),
    "J": _unpack("<i"), "K": _unpack("<B"), "M": _unpack("<H"), "G": _unpack(">d"),
    "\x8a": _long("<B"), "\x8b": _long("<i"), "X": _text("<I"), "\x8c": _text("<B"),
    "\x8d": _text("<Q"), "C": _bytes("<B"), "B": _bytes("<I"), "\x8e": _bytes("<Q"),
    "U": _binstring("<B"), "T": _binstring("<i"), "Q": _persid, "h": _get("<B"),
    "j": _get("<I"), "q": _put("<B"), "r": _put("<I"), "\x94": _memoize, "\x80": _proto,
    "\x95": _frame, "0": _pop, "1": lambda u: u.pop_mark(), "2": _dup, ".": _stop,
}.items()}
