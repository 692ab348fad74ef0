"""Model-parallel embedding tables: ``ShardedEmbeddingBag`` and ``shard_embedding_bag``.

A table of ``num_embeddings`` rows is split across the ranks of a group: ``"row_wise"`` gives
rank ``r`` the contiguous block ``[r * ceil(N / p), (r + 1) * ceil(N / p))`` (TorchRec's row-wise
blocks), ``"table_wise"`` gives the whole table to one rank (``owner``). Each rank holds only its
rows, as the parameter ``weight`` (absent on a rank that owns none).

Forward, for each rank's own (local) batch of bags:

1. the requester drops ``padding_idx`` ids, groups its ids by owner and sends each owner the
   ids (as local row numbers), their bag numbers and per-sample weights (all-to-all);
2. each owner pools what it got per (requester, bag) with ``embedding_bag`` on its rows: a
   *partial* pooled row (``sum`` for sum/mean/sqrtn, ``max`` for max), with autograd;
3. the partial rows go back to their requesters (all-to-all, differentiable), which combine a
   bag's partials from several owners (sum, or column-wise max) and divide by the bag's size
   for ``mean`` (``sqrt`` of it for ``sqrtn``).

Backward is the reverse exchange: the gradient of each partial row returns to its owner only,
and the owner's ``embedding_bag`` backward gives ``weight`` a row-sparse gradient of its own rows
(``sparse=True``), so each rank's optimizer updates only its rows.
"""

import json
import os

from .. import _dispatch
from .. import _dtype as D
from .._ops.creation import zeros
from ..autograd.grad_mode import no_grad
from ..nn._functional.embedding import _bounds, embedding_bag
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ._alltoall import all_to_all_single
from ._collectives import barrier
from ._exchange import ExchangeRows, int64, new_tensor, scatter_ufunc
from ._group import _state, default_group, new_group, resolve
from ._maxpool import Links, MaxCombine, OwnerMaxBag

__all__ = ["ShardedEmbeddingBag", "row_bounds", "shard_embedding_bag"]

_MODES = ("sum", "mean", "max", "sqrtn")
_SHARDINGS = ("row_wise", "table_wise")
MANIFEST = "manifest.json"


def row_bounds(num_embeddings, world_size, sharding_type="row_wise", owner=0):
    """The first row of each rank's block, plus ``num_embeddings`` (``world_size + 1`` ints)."""
    n, p = int(num_embeddings), int(world_size)
    if sharding_type == "table_wise":
        return [0] * (owner + 1) + [n] * (p - owner)
    block = -(-n // p) if p else 0
    return [min(r * block, n) for r in range(p)] + [n]


def _segments(xp, counts):
    """``[0] * counts[0] + [1] * counts[1] + ...`` (``repeat`` with array counts, which CuPy
    lacks)."""
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    return xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right").astype(xp.int64)


def _embedding_group():
    """One communicator shared by the sharded tables, apart from the default group's, so that
    their exchanges never interleave with DDP's reductions started during backward."""
    world = default_group()
    g = _state.get("embedding")
    if g is None or g[0] is not world or g[1] not in _state["groups"]:
        g = (world, new_group(list(range(world.size()))))
        _state["embedding"] = g
    return g[1]


class ShardedEmbeddingBag(Module):
    """An ``nn.EmbeddingBag`` whose rows are split across the ranks of ``group``.

    Every rank calls it with its own batch (``input``, ``offsets``, ``per_sample_weights`` as
    ``EmbeddingBag``) and gets its own pooled rows; all ranks must call it together (it runs
    collectives), and all ranks must run its backward together. ``sharding_type`` is
    ``"row_wise"`` (contiguous row blocks) or ``"table_wise"`` (the whole table on ``owner``).
    ``_weight``: the full table (the same on every rank; each keeps its rows), else the local
    rows are drawn from N(0, 1) with this rank's generator. ``gradient_division=True`` scales
    the table's gradient by ``1 / world_size`` (the average over ranks DDP applies to replicated
    parameters); by default it is the gradient of the *sum* of the ranks' losses.
    ``max_norm`` and ``scale_grad_by_freq`` are not supported (NotImplementedError);
    ``per_sample_weights`` are not differentiated.
    """

    def __init__(self, num_embeddings, embedding_dim, mode="mean", padding_idx=None,
                 include_last_offset=False, sparse=True, sharding_type="row_wise", owner=0,
                 group=None, _weight=None, gradient_division=False, max_norm=None,
                 scale_grad_by_freq=False, device=None, dtype=None):
        super().__init__()
        if max_norm is not None or scale_grad_by_freq:
            raise NotImplementedError(
                "ShardedEmbeddingBag: max_norm and scale_grad_by_freq need the whole bag's "
                "rows on one rank; renormalise or scale before sharding")
        if mode not in _MODES:
            raise ValueError("mode has to be one of sum, mean, max or sqrtn")
        if sharding_type not in _SHARDINGS:
            raise ValueError(f"ShardedEmbeddingBag: sharding_type must be one of {_SHARDINGS}, "
                             f"got {sharding_type!r}")
        self.group = resolve(group) if group is not None else _embedding_group()
        p = self.group.size()
        if sharding_type == "table_wise" and not 0 <= int(owner) < p:
            raise ValueError(f"ShardedEmbeddingBag: owner={owner} is not a rank in [0, {p})")
        n = int(num_embeddings)
        if padding_idx is not None:
            if not -n <= padding_idx < n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = padding_idx % n
        self.num_embeddings = n
        self.embedding_dim = int(embedding_dim)
        self.mode = mode
        self.padding_idx = padding_idx
        self.include_last_offset = include_last_offset
        self.sparse = sparse
        self.sharding_type = sharding_type
        self.owner = int(owner)
        self.gradient_division = gradient_division
        self.bounds = row_bounds(n, p, sharding_type, int(owner))
        me = self.group.rank()
        self.row_start, self.row_stop = self.bounds[me], self.bounds[me + 1]
        rows = self.row_stop - self.row_start
        dtype = dtype or D.get_default_dtype()
        # the table's dtype and device on every rank (a rank may hold no rows); follows
        # module.to() / .double() as a buffer, and anchors the exchange in autograd (forward)
        self.register_buffer("_anchor", zeros(0, dtype=dtype, device=device), persistent=False)
        if _weight is not None:
            if tuple(_weight.shape) != (n, self.embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            local = _weight.detach()[self.row_start:self.row_stop].clone()
        else:
            local = zeros(rows, self.embedding_dim, dtype=dtype, device=device)
            with no_grad():
                local.normal_()
        if _weight is None and padding_idx is not None and \
                self.row_start <= padding_idx < self.row_stop:
            with no_grad():
                local[padding_idx - self.row_start].fill_(0)
        if rows:
            self.weight = Parameter(local)
        else:
            self.weight = None

    def extra_repr(self):
        return (f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}, "
                f"sharding_type={self.sharding_type!r}, rows=[{self.row_start}, "
                f"{self.row_stop}) of {self.group.size()} ranks")

    # ---- forward ----
    def _flat(self, input, offsets, per_sample_weights):
        """(ids, bag of each id, per-sample weights or None, number of bags), as arrays."""
        xp = _dispatch.get_backend(input.device).xp
        if input.dtype is not D.int64 and input.dtype is not D.int32:
            raise RuntimeError(
                f"ShardedEmbeddingBag: input must be an integer tensor (int64 or int32), got "
                f"{input.dtype.name}")
        ids = input._data
        if input.ndim == 2:
            if offsets is not None:
                raise ValueError(
                    "if input is 2D, then offsets has to be None, as input is treated is a "
                    "mini-batch of fixed length sequences. However, found offsets of type "
                    f"{type(offsets).__name__}")
            nb, length = input.shape
            bag = xp.repeat(xp.arange(nb, dtype=xp.int64), length)
            ids = ids.reshape(-1)
        elif input.ndim == 1:
            if offsets is None:
                raise ValueError("offsets has to be a 1D Tensor but got None")
            b = _bounds(xp, offsets, ids.size, self.include_last_offset, "ShardedEmbeddingBag")
            nb = b.size - 1
            bag = _segments(xp, xp.diff(b))
            ids = ids[:int(b[-1])] if b.size else ids[:0]
        else:
            raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension "
                             f"{input.ndim}")
        ids = ids.astype(xp.int64, copy=False)
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= self.num_embeddings):
            raise IndexError("index out of range in self")
        w = None
        if per_sample_weights is not None:
            if self.mode == "max":
                raise NotImplementedError(
                    "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                    "supported for mode='sum', 'mean' and 'sqrtn' (got mode='max').")
            if tuple(per_sample_weights.shape) != tuple(input.shape):
                raise ValueError(
                    f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) "
                    f"is not None, then it must have the same shape as the input "
                    f"({list(input.shape)})")
            w = per_sample_weights.detach()._data.reshape(-1)[:ids.size]
        return xp, ids, bag, w, nb

    def forward(self, input, offsets=None, per_sample_weights=None):
        xp, ids, bag, w, nb = self._flat(input, offsets, per_sample_weights)
        be = self.group
        p = be.size()
        dev = input.device
        dt = self._anchor.dtype
        if self.padding_idx is not None:
            keep = ids != self.padding_idx
            ids, bag = ids[keep], bag[keep]
            w = None if w is None else w[keep]
        bounds = xp.asarray(self.bounds, dtype=xp.int64)
        own = xp.searchsorted(bounds, ids, side="right") - 1
        order = xp.argsort(own, kind="stable")  # bags stay in order within each owner's part
        ids, bag, own = ids[order], bag[order], own[order]
        w = None if w is None else w[order]
        send = xp.bincount(own, minlength=p).astype(xp.int64)
        # per-owner count of distinct bags: the partial rows that owner sends back to us
        new = xp.ones(ids.size, dtype=bool)
        if ids.size:
            new[1:] = (own[1:] != own[:-1]) | (bag[1:] != bag[:-1])
        ubag = bag[new]
        want = xp.bincount(own[new], minlength=p).astype(xp.int64)
        # 1. counts (ids per owner, has weights), then ids + bags, then weights
        head = xp.stack([send, xp.full(p, int(w is not None), xp.int64)], 1)
        got = xp.empty_like(head)
        all_to_all_single(int64(got, dev), int64(head, dev), group=be)
        recv = got[:, 0]
        weighted = bool(got[:, 1].any()) or w is not None
        pair = xp.stack([ids - bounds[own], bag], 1)
        rpair = xp.empty((int(recv.sum()), 2), dtype=xp.int64)
        all_to_all_single(int64(rpair, dev), int64(pair, dev), recv.tolist(), send.tolist(),
                          group=be)
        rw = None
        if weighted:
            wt = xp.ones(ids.size, dtype=dt.np) if w is None else xp.asarray(w, dtype=dt.np)
            rw = xp.empty(int(recv.sum()), dtype=dt.np)
            all_to_all_single(new_tensor(rw, dt, dev), new_tensor(wt, dt, dev), recv.tolist(),
                              send.tolist(), group=be)
        # 2. partial rows at the owner, one per (requester, bag)
        src = _segments(xp, recv)
        rb = rpair[:, 1]
        first = xp.ones(rb.size, dtype=bool)
        if rb.size:
            first[1:] = (src[1:] != src[:-1]) | (rb[1:] != rb[:-1])
        starts = xp.flatnonzero(first).astype(xp.int64)
        back = xp.bincount(src[first], minlength=p).astype(xp.int64)
        links = Links() if self.mode == "max" else None
        if self.weight is not None and links is not None:
            group = xp.cumsum(first) - 1
            partial = OwnerMaxBag.apply(self.weight, xp.ascontiguousarray(rpair[:, 0]), group,
                                        int(starts.size), links, self.sparse)
        elif self.weight is not None:
            partial = embedding_bag(
                int64(xp.ascontiguousarray(rpair[:, 0]), dev), self.weight,
                int64(starts, dev), mode="sum", sparse=self.sparse,
                per_sample_weights=None if rw is None else new_tensor(rw, dt, dev))
        else:
            partial = new_tensor(xp.zeros((0, self.embedding_dim), dt.np), dt, dev)
        # 3. partial rows back to the requesters, combined per bag
        scale = 1.0 / p if self.gradient_division else 1.0
        anchor = self._anchor.detach().requires_grad_(True)
        rows = ExchangeRows.apply(partial, anchor, back.tolist(), want.tolist(), be, scale,
                                  links)
        bag_t = int64(xp.ascontiguousarray(ubag), dev)
        if links is not None:
            return MaxCombine.apply(rows, bag_t, nb, links)
        out = new_tensor(xp.zeros((nb, self.embedding_dim), dt.np), dt, dev)
        out = out.index_add(0, bag_t, rows)
        if self.mode in ("mean", "sqrtn"):
            cnt = xp.zeros(nb, dtype=xp.float64)
            scatter_ufunc(xp, "add", cnt, bag, 1.0)
            cnt = xp.maximum(cnt, 1.0)
            if self.mode == "sqrtn":
                cnt = xp.sqrt(cnt)
            out = out / new_tensor(cnt.astype(dt.np)[:, None], dt, dev)
        return out

    # ---- checkpoints ----
    def save_sharded(self, path, optimizer=None):
        """Write this rank's rows to ``path/shard-<rank>-of-<world>.pt`` and (rank 0) the
        manifest ``path/manifest.json``; collective (every rank calls it). With ``optimizer``
        (one that holds ``weight``), its state for ``weight`` is saved with the rows."""
        from ..serialization import save

        p, me = self.group.size(), self.group.rank()
        if me == 0:
            os.makedirs(path, exist_ok=True)
        barrier(group=self.group)
        name = f"shard-{me:05d}-of-{p:05d}.pt"
        w = self.weight.detach() if self.weight is not None else None
        state = None
        if optimizer is not None and w is not None:
            state = {k: (v.detach() if isinstance(v, _dispatch.Tensor) else v)
                     for k, v in optimizer.state.get(self.weight, {}).items()}
        save({"rows": [self.row_start, self.row_stop], "weight": w, "optimizer": state},
             os.path.join(path, name))
        if me == 0:
            manifest = {
                "format": "sparsetorch.ShardedEmbeddingBag/1",
                "num_embeddings": self.num_embeddings, "embedding_dim": self.embedding_dim,
                "dtype": self._anchor.dtype.name, "world_size": p,
                "shards": [{"rank": r, "rows": [self.bounds[r], self.bounds[r + 1]],
                            "file": f"shard-{r:05d}-of-{p:05d}.pt"} for r in range(p)],
            }
            with open(os.path.join(path, MANIFEST), "w") as f:
                json.dump(manifest, f, indent=1)
        barrier(group=self.group)

    def load_sharded(self, path, optimizer=None):
        """Load rows saved by :meth:`save_sharded`, at any world size and sharding: each rank
        reads the manifest and only the shard files that overlap its rows. With ``optimizer``,
        its state for ``weight`` is re-sharded the same way: state tensors with one entry per
        row (moments, accumulators, momentum) are cut and joined by rows, other entries (the
        step count) are taken from the first overlapping shard."""
        from ..serialization import load

        with open(os.path.join(path, MANIFEST)) as f:
            manifest = json.load(f)
        if (manifest["num_embeddings"], manifest["embedding_dim"]) != \
                (self.num_embeddings, self.embedding_dim):
            raise RuntimeError(
                f"load_sharded(): the checkpoint holds a {manifest['num_embeddings']} x "
                f"{manifest['embedding_dim']} table, this module is {self.num_embeddings} x "
                f"{self.embedding_dim}")
        if self.weight is None:
            return
        a, b = self.row_start, self.row_stop
        state = {}
        with no_grad():
            for sh in manifest["shards"]:
                lo, hi = sh["rows"]
                if hi <= a or lo >= b or hi <= lo:
                    continue
                saved = load(os.path.join(path, sh["file"]))
                s, e = max(lo, a), min(hi, b)
                self.weight[s - a:e - a].copy_(saved["weight"][s - lo:e - lo])
                if optimizer is None:
                    continue
                if saved.get("optimizer") is None:
                    raise RuntimeError(f"load_sharded(): {sh['file']} holds no optimizer state; "
                                       "save with save_sharded(path, optimizer)")
                for k, v in saved["optimizer"].items():
                    per_row = isinstance(v, _dispatch.Tensor) and v.ndim >= 1 and \
                        v.shape[0] == hi - lo
                    if not per_row:
                        state.setdefault(k, v)
                        continue
                    if k not in state:
                        state[k] = zeros((b - a,) + tuple(v.shape[1:]), dtype=v.dtype)
                    state[k][s - a:e - a].copy_(v[s - lo:e - lo])
        if optimizer is not None:
            optimizer.state[self.weight] = state


def shard_embedding_bag(module, sharding_type="row_wise", owner=0, group=None,
                        gradient_division=False):
    """A :class:`ShardedEmbeddingBag` with the options and rows of ``module`` (an
    ``nn.EmbeddingBag`` holding the whole table, the same on every rank); each rank keeps only
    its rows, so ``module`` can be dropped afterwards."""
    if module.max_norm is not None or module.scale_grad_by_freq:
        raise NotImplementedError(
            "shard_embedding_bag(): max_norm and scale_grad_by_freq are not supported")
    return ShardedEmbeddingBag(
        module.num_embeddings, module.embedding_dim, mode=module.mode,
        padding_idx=module.padding_idx, include_last_offset=module.include_last_offset,
        sparse=module.sparse, sharding_type=sharding_type, owner=owner, group=group,
        _weight=module.weight, gradient_division=gradient_division,
        dtype=module.weight.dtype, device=module.weight.device)
