"""NumPy keyword spellings of dimension arguments: ``axis=`` for ``dim=``, ``keepdims=`` for
``keepdim=``.

torch's argument parser accepts them for every *native* function and Tensor method with a ``dim``
/ ``keepdim`` parameter (``torch.sum(x, axis=1)``, ``x.mean(axis=0, keepdims=True)``), and not for
the ones written in Python (``norm``, ``split``, ``unique``, ``unflatten`` as a method,
``nn.functional.softmax``). Passing both spellings is a TypeError ("got an unexpected keyword
argument 'axis'"). The name lists below were taken from torch 2.13 (native callables whose
sparsetorch signature has ``dim`` or ``keepdim``).

The wrappers are generated once, at import, with the wrapped function's own signature plus the
two keyword-only aliases, and forward positionally: one extra Python call on the dim-taking ops
only (``a + b`` and the other operator fast paths never pass through here). The op functions
inside the package stay unwrapped, so internal calls (derivative formulas, kernels) pay nothing.
Ground floor: this module imports only the standard library.
"""

import ast
import inspect
import textwrap
import types

__all__ = ["FUNCTIONS", "METHODS", "return_statements", "with_numpy_kwargs"]

FUNCTIONS = frozenset((
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "cat", "chunk",
    "concat", "cosine_similarity", "count_nonzero", "cross", "cummax", "cummin",
    "cumprod", "cumsum", "diff", "gather", "index_add", "index_copy", "index_fill",
    "index_select", "kthvalue", "log_softmax", "logcumsumexp", "logsumexp", "max", "mean",
    "median", "min", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "narrow",
    "narrow_copy", "pairwise_distance", "prod", "quantile", "repeat_interleave", "scatter",
    "scatter_add", "scatter_reduce", "select", "softmax", "sort", "squeeze", "stack", "std",
    "std_mean", "sum", "take_along_dim", "tensor_split", "topk", "trapezoid", "trapz", "unbind",
    "unflatten", "unsqueeze", "var", "var_mean",
))

METHODS = frozenset((
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "chunk",
    "count_nonzero", "cross", "cummax", "cummin", "cumprod", "cumsum", "diff", "gather",
    "index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_",
    "index_select", "kthvalue", "log_softmax", "logcumsumexp", "logsumexp", "max", "mean",
    "median", "min", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "narrow",
    "narrow_copy", "prod", "quantile", "repeat_interleave", "scatter", "scatter_", "scatter_add",
    "scatter_add_", "scatter_reduce", "scatter_reduce_", "select", "softmax", "sort", "squeeze",
    "squeeze_", "std", "sum", "take_along_dim", "tensor_split", "topk", "unbind", "unsqueeze",
    "unsqueeze_", "var",
))

_NO = object()  # "not passed"
_ALIASES = (("dim", "axis"), ("keepdim", "keepdims"))


def with_numpy_kwargs(fn, name=None, inline=False, body=None):
    """``fn`` accepting ``axis=`` / ``keepdims=`` for its ``dim`` / ``keepdim`` parameters (``fn``
    itself when it has neither, or a signature this generator does not handle).

    ``inline=True`` (for one-line forwards such as the Tensor methods): the new function is
    ``fn``'s own body under the extended signature, compiled against ``fn``'s globals, so no call
    layer is added; otherwise (or when ``fn`` is not a plain one-statement function) a wrapper
    calls ``fn``. ``body``: that one statement's source when the caller already has it (see
    ``return_statements``), which saves reading ``fn``'s source."""
    name = name or fn.__name__
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    names = {p.name for p in params}
    aliases = [(d, a) for d, a in _ALIASES if d in names and a not in names]
    if not aliases:
        return fn
    sig, call, head, defaults = _signature(params, name, aliases)
    if body is None and inline:
        body = _one_statement_body(fn)
    if body is None:
        lines = head + [f"    return _f({', '.join(call)})"]
        src = f"def {name}({', '.join(sig)}):\n" + "\n".join(lines) + "\n"
        env = {"_f": fn, "_NO": _NO, **defaults}
        exec(compile(src, f"<numpy_kwargs {name}>", "exec"), env)  # noqa: S102 - our own text
        w = env[name]
    else:
        # def _make(_NO, _d0, ...): def name(...): <alias lines>; <fn's body>; return name
        args = ["_NO", *defaults]
        inner = "\n".join("    " + ln for ln in head + ["    " + body])
        src = (f"def _make({', '.join(args)}):\n    def {name}({', '.join(sig)}):\n{inner}\n"
               f"    return {name}\n")
        code = compile(src, f"<numpy_kwargs {name}>", "exec")
        make_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        w = types.FunctionType(make_code, fn.__globals__)(_NO, *defaults.values())
    w.__doc__ = fn.__doc__
    w.__module__ = getattr(fn, "__module__", None)
    w.__qualname__ = getattr(fn, "__qualname__", name)
    w.__wrapped__ = fn
    return w


def return_statements(source, functions):
    """``{name: source of its single return statement}`` for those of ``functions`` (defined in
    the module whose text is ``source``) whose body is one ``return``. Only each function's own
    lines are parsed (found from ``co_firstlineno``), not the whole module."""
    lines = source.splitlines()
    out = {}
    for fn in functions:
        code = getattr(fn, "__code__", None)
        if code is None or code.co_firstlineno > len(lines):
            continue
        i = code.co_firstlineno - 1
        first = lines[i]
        indent = len(first) - len(first.lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip()
                                  or len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        try:
            tree = ast.parse(textwrap.dedent("\n".join(lines[i:j])))
        except SyntaxError:
            continue
        fdef = tree.body[0] if tree.body else None
        if isinstance(fdef, ast.FunctionDef) and fdef.name == fn.__name__:
            stmt = _single_return(fdef)
            if stmt is not None:
                out[fn.__name__] = stmt
    return out


def _single_return(fdef):
    if fdef.decorator_list:
        return None
    stmts = fdef.body
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(getattr(stmts[0], "value", None),
                                                              ast.Constant):
        stmts = stmts[1:]
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Return):
        return None
    return ast.unparse(stmts[0])


def _one_statement_body(fn):
    """The source of ``fn``'s single ``return`` statement (after an optional docstring), or None."""
    if (not isinstance(fn, types.FunctionType) or fn.__closure__
            or hasattr(fn, "__wrapped__")):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0] if tree.body else None
    return _single_return(fdef) if isinstance(fdef, ast.FunctionDef) else None


def _signature(params, name, aliases):
    """The extended signature's parts: ``(sig, call, head lines, {default name: value})``."""
    P = inspect.Parameter
    defaults = {}
    sig, call, checks, after_default = [], [], [], False
    kw_started = False
    for i, p in enumerate(params):
        pname = p.name
        if p.kind is P.VAR_POSITIONAL:
            sig.append("*" + pname)
            call.append("*" + pname)
            kw_started = True
            continue
        if p.kind is P.VAR_KEYWORD:
            continue  # added after the aliases
        if p.kind is P.KEYWORD_ONLY and not kw_started:
            sig.append("*")
            kw_started = True
        aliased = any(pname == d for d, _ in aliases)
        required = p.default is P.empty
        if aliased or (required and after_default and p.kind is not P.KEYWORD_ONLY):
            sig.append(f"{pname}=_NO")
            if required:
                checks.append(f"    if {pname} is _NO:\n        raise TypeError(\"{name}() missing "
                              f"1 required positional argument: '{pname}'\")")
            else:
                defaults[f"_d{i}"] = p.default
                checks.append(f"    if {pname} is _NO:\n        {pname} = _d{i}")
        elif required:
            sig.append(pname)
        else:
            defaults[f"_d{i}"] = p.default
            sig.append(f"{pname}=_d{i}")
        if not required or aliased:
            after_default = True
        if p.kind is P.POSITIONAL_ONLY and not any(q.kind is P.POSITIONAL_ONLY
                                                   for q in params[i + 1:]):
            sig.append("/")
        call.append(pname if p.kind is not P.KEYWORD_ONLY else f"{pname}={pname}")
    if not kw_started:
        sig.append("*")
    head = []
    for dim, alias in aliases:
        sig.append(f"{alias}=_NO")
        head.append(f"    if {alias} is not _NO:\n        if {dim} is not _NO:\n"
                    f"            raise TypeError(\"{name}() got an unexpected keyword argument "
                    f"'{alias}'\")\n        {dim} = {alias}")
    var_kw = next((p.name for p in params if p.kind is P.VAR_KEYWORD), None)
    if var_kw:
        sig.append("**" + var_kw)
        call.append("**" + var_kw)
    return sig, call, [ln for block in head + checks for ln in block.split("\n")], defaults
