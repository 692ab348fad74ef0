"""``torch.__version__``: a str that also compares as a version (torch's ``TorchVersion``).

``sparsetorch.__version__ >= "2.0"``, ``>= (2, 0)``, ``== "2.13.0"`` compare by PEP 440 rules
(release numbers, pre/post/dev releases, local labels); when the other side is not a version
(an int, a malformed string), the comparison is the plain str one, as in torch.
"""

import re

from . import version as _version

__all__ = ["TorchVersion"]

_PATTERN = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")


def _key(text):
    """PEP 440's sort key of a version string; None when it is not one."""
    m = _PATTERN.match(text)
    if m is None:
        return None
    release = [int(x) for x in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    has_post = m["post_n1"] is not None or m["post_l"] is not None
    if m["pre_l"]:
        pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0))
    elif m["dev_l"] and not has_post:
        pre = (-_INF,)
    else:
        pre = (_INF,)
    post = (int(m["post_n1"] or m["post_n2"] or 0),) if has_post else (-_INF,)
    dev = (int(m["dev_n"] or 0),) if m["dev_l"] else (_INF,)
    local = () if m["local"] is None else tuple(
        (1, int(p), "") if p.isdigit() else (0, 0, p.lower())
        for p in re.split(r"[-_.]", m["local"]))
    return (int(m["epoch"] or 0), tuple(release), pre, post, dev, local)


def _other_key(other):
    if isinstance(other, str):
        return _key(other)
    if isinstance(other, (tuple, list)):
        return _key(".".join(str(x) for x in other))
    if hasattr(other, "release") and hasattr(other, "public"):  # packaging.version.Version
        return _key(str(other))
    return None


class TorchVersion(str):
    """A version string that compares with strings, tuples (``(2, 0)``) and
    ``packaging.version.Version`` objects as versions."""

    __slots__ = ()

    def _cmp(self, other, method):
        mine, theirs = _key(self), _other_key(other)
        if mine is None or theirs is None:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __lt__(self, other):
        return self._cmp(other, "__lt__")

    def __le__(self, other):
        return self._cmp(other, "__le__")

    def __gt__(self, other):
        return self._cmp(other, "__gt__")

    def __ge__(self, other):
        return self._cmp(other, "__ge__")

    def __eq__(self, other):
        return self._cmp(other, "__eq__")

    def __ne__(self, other):
        r = self._cmp(other, "__eq__")
        return r if r is NotImplemented else not r

    __hash__ = str.__hash__


__version__ = TorchVersion(_version.__version__)
