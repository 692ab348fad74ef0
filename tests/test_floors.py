"""The floors of the house (DESIGN.md section 2, docs/design-notes.md "Floors"): imports point down.

Read with the standard library's ``ast`` only (no import of sparsetorch), in well under a second:
1. every module has a floor in ``FLOORS`` and imports only from its own floor or below, imports
   made inside functions included (optional third-party modules are outside the package and free);
2. the import graph inside the package has no cycle at all;
3. no module assigns into another module (``other_module.name = ...``);
4. nothing inside the package imports ``sparsetorch`` itself (the root face).

``KNOWN`` lists the violations that the renovation (issue 13) has not removed yet. A violation not
in it fails the test; an entry that no longer happens fails too, so the list only shrinks.
"""

import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "sparsetorch"

# Floors, bottom (1) to top (9). A module takes the floor of its longest listed prefix.
GROUND, KERNELS, TENSOR, AUTOGRAD, DISPATCH, OPS, LIBRARIES, METHODS, FACE = range(1, 10)
FLOORS = {
    # 1. values and backend
    "_dtype": GROUND, "_layout": GROUND, "_device": GROUND, "_memory": GROUND,
    "_xpcompat": GROUND, "_backend": GROUND, "_jit": GROUND, "_flags": GROUND, "_blas": GROUND,
    "_autocast": GROUND, "torch_version": GROUND, "version": GROUND, "_typing": GROUND,
    "_torch_warnings": GROUND,
    # 2. kernels: payloads and a Backend in, arrays out
    "dense": KERNELS, "sparse._payload": KERNELS, "sparse._convert": KERNELS,
    "sparse._merge": KERNELS, "sparse._spmm": KERNELS, "sparse._spgemm": KERNELS,
    "sparse._rowsort": KERNELS, "sparse._runsum": KERNELS, "sparse._structure": KERNELS, "sparse._cuda": KERNELS,
    "sparse._wgather": KERNELS,
    "sparse._threads": KERNELS, "nn._kernels": KERNELS, "optim._kernels": KERNELS,
    "optim._cuda_kernels": KERNELS, "distributed._merge": KERNELS, "_shm": KERNELS,
    # 3. Tensor as data, the random generator
    "_tensor": TENSOR, "_tensor_docs": TENSOR, "_generator": TENSOR,
    "_tensor_api": TENSOR,  # Tensor's surface for type checkers (read only by them; imports the ground floor)
    # 4. the tape
    "autograd.graph": AUTOGRAD, "autograd.engine": AUTOGRAD, "autograd.grad_mode": AUTOGRAD,
    "autograd.function": AUTOGRAD, "autograd.anomaly_mode": AUTOGRAD, "autograd._": AUTOGRAD,
    "autograd.profiler_util": AUTOGRAD, "autograd.profiler": AUTOGRAD,
    # 5. op declaration, kernel choice, recording
    "_dispatch": DISPATCH, "_variants": DISPATCH,  # _variants: the methods / op_ forms ops declare
    # 6. the ops
    "_ops": OPS, "_numpy_kwargs": OPS,
    # 7. libraries (and their package faces: a library's face is a library module)
    "": LIBRARIES,
    # 8. the one writer of Tensor attributes
    "_tensor_methods": METHODS, "_tensor_datamodel": METHODS,
}
ROOT_FACE = "sparsetorch"

# Violations the renovation has not removed yet: (kind, module, detail); a cycle is
# ("cycle", its first module in sorted order, "").
KNOWN = set()


def _modules(root=ROOT):
    mods = {}
    for p in root.rglob("*.py"):
        rel = p.relative_to(root.parent).with_suffix("").parts
        name = ".".join(rel[:-1] if p.name == "__init__.py" else rel)
        mods[name] = p
    return mods


def floor_of(mod):
    if mod == ROOT_FACE:
        return FACE
    rel = mod[len(ROOT_FACE) + 1:]
    best = max((k for k in FLOORS if k == "" or rel == k or rel.startswith(k + ".")
                or (k.endswith("_") and rel.startswith(k))), key=len)
    return FLOORS[best]


def _scan(mods):
    """Edges (module -> modules it imports) and writes into other modules, in one walk per file.

    A name bound by an import anywhere in a file counts as that module everywhere in the file
    (a write ``mod.x = ...`` is spotted even where the import sits in another function)."""
    edges, writes = {m: set() for m in mods}, []
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rpartition(".")[0]
        module_names, assigned = {}, []
        for n in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[: len(parts) - n.level + 1] + ([base] if base else []))
                for a in n.names:
                    full = f"{base}.{a.name}"
                    t = full if full in mods else base
                    if t in mods and t != m:
                        edges[m].add(t)
                    if full in mods:
                        module_names[a.asname or a.name] = full
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name in mods and a.name != m:
                        edges[m].add(a.name)
                        if a.asname:
                            module_names[a.asname] = a.name
            elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                        assigned.append((t.value.id, t.attr))
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and n.func.id == "setattr" and n.args and isinstance(n.args[0], ast.Name)):
                assigned.append((n.args[0].id, "<setattr>"))
        for name, attr in assigned:
            if module_names.get(name, m) != m:
                writes.append((m, f"{module_names[name]}.{attr}"))
    return edges, writes


def _cycles(edges):
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    return comps


@functools.lru_cache(maxsize=None)
def violations(root=ROOT):
    mods = _modules(root)
    edges, writes = _scan(mods)
    found = set()
    for m, ts in edges.items():
        for t in ts:
            if t == ROOT_FACE:
                found.add(("imports the root face", m, t))
            elif floor_of(t) > floor_of(m):
                found.add(("imports upward", m, t))
    for comp in _cycles(edges):
        found.add(("cycle", comp[0], "a cycle through " + ", ".join(comp[1:])))
    for m, target in writes:
        found.add(("writes into another module", m, target))
    return frozenset(found)


def test_floor_table_names_modules_that_exist():
    mods = _modules()
    for key in FLOORS:
        if key and not key.endswith("_"):
            assert any(m == f"sparsetorch.{key}" or m.startswith(f"sparsetorch.{key}.")
                       for m in mods), f"FLOORS names sparsetorch.{key}, which does not exist"


@pytest.mark.parametrize("kind", ["imports the root face", "imports upward", "cycle",
                                  "writes into another module"])
def test_floors_hold(kind):
    found = {v for v in violations() if v[0] == kind}
    known = {v for v in KNOWN if v[0] == kind}
    if kind == "cycle":  # a known cycle is named by its first module; its members may change
        found = {(k, m, "") for k, m, _ in found}
    new = sorted(found - known)
    gone = sorted(known - found)
    assert not new, f"new {kind} violations (DESIGN.md section 2): " + "; ".join(
        f"{m} -> {d}" for _, m, d in new)
    assert not gone, f"fixed, remove from KNOWN in tests/test_floors.py: {gone}"


def test_the_checks_catch_each_kind(tmp_path):
    """A made-up package with one violation of each kind: the scan reports exactly those."""
    pkg = tmp_path / "sparsetorch"
    files = {
        "__init__.py": "from . import _tensor_methods\n",
        "_dtype.py": "def f():\n    from . import _tensor  # upward, inside a function\n",
        "_tensor.py": "from . import _dtype\n",
        "_ops/__init__.py": "from . import a\n",
        "_ops/a.py": "from . import b\n",
        "_ops/b.py": "from .a import x\n",
        "nn.py": "import sparsetorch as st\nfrom . import _dtype as D\nD.float32 = None\n",
        "_tensor_methods.py": "from ._tensor import Tensor\nTensor.x = 1\n",
    }
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    assert violations(pkg) == {
        ("imports upward", "sparsetorch._dtype", "sparsetorch._tensor"),
        ("cycle", "sparsetorch._dtype", "a cycle through sparsetorch._tensor"),
        ("cycle", "sparsetorch._ops.a", "a cycle through sparsetorch._ops.b"),
        ("imports the root face", "sparsetorch.nn", "sparsetorch"),
        ("writes into another module", "sparsetorch.nn", "sparsetorch._dtype.float32"),
    }
