"""``ShardedEmbeddingBagCollection``: several tables, sharded row-wise or placed whole on ranks.

Named after TorchRec's collection; features are passed as a dict (TorchRec's
``KeyedJaggedTensor`` is not reproduced): ``{name: ids}`` for 2-D ids, ``{name: (ids,
offsets)}`` or ``{name: (ids, offsets, per_sample_weights)}``; the result is ``{name: pooled}``.
Table-wise placement puts the largest tables first, each on the least loaded rank (in
``rows x dim``). Each table exchanges its own ids and rows (one all-to-all round per table).
"""

from ..nn.modules.container import ModuleDict
from ..nn.modules.module import Module
from ._sharded_embedding import shard_embedding_bag

__all__ = ["ShardedEmbeddingBagCollection", "table_wise_plan"]


def table_wise_plan(sizes, world_size):
    """``{name: rank}`` for ``sizes`` (``{name: elements}``): largest first, least loaded rank
    (lowest rank on ties)."""
    load = [0] * int(world_size)
    plan = {}
    for name in sorted(sizes, key=lambda k: (-sizes[k], k)):
        r = min(range(len(load)), key=lambda i: (load[i], i))
        plan[name] = r
        load[r] += sizes[name]
    return plan


class ShardedEmbeddingBagCollection(Module):
    """Shard every ``nn.EmbeddingBag`` of ``tables`` (``{name: module}``, the same full tables on
    every rank): ``sharding_type="table_wise"`` (default: each table whole on one rank, see
    :func:`table_wise_plan`), or ``"row_wise"`` (every table split across all ranks), or a dict
    ``{name: "row_wise" | "table_wise"}``. ``plan`` (``{name: rank}``) overrides placement.
    ``embedding_bags`` holds the :class:`ShardedEmbeddingBag` modules by name."""

    def __init__(self, tables, sharding_type="table_wise", plan=None, group=None,
                 gradient_division=False):
        super().__init__()
        from ._group import resolve
        from ._sharded_embedding import _embedding_group

        g = resolve(group) if group is not None else _embedding_group()
        kinds = (dict(sharding_type) if isinstance(sharding_type, dict)
                 else dict.fromkeys(tables, sharding_type))
        whole = {k: tables[k].num_embeddings * tables[k].embedding_dim
                 for k in tables if kinds.get(k, "table_wise") == "table_wise"}
        owners = table_wise_plan(whole, g.size())
        owners.update(plan or {})
        self.plan = owners
        self.embedding_bags = ModuleDict({
            k: shard_embedding_bag(m, sharding_type=kinds.get(k, "table_wise"),
                                   owner=owners.get(k, 0), group=g,
                                   gradient_division=gradient_division)
            for k, m in tables.items()})

    def forward(self, features):
        out = {}
        for k, m in self.embedding_bags.items():  # the same order on every rank
            if k not in features:
                raise KeyError(f"ShardedEmbeddingBagCollection: no feature for table {k!r} "
                               "(every rank must pass every table's ids, empty if none)")
            f = features[k]
            out[k] = m(*f) if isinstance(f, (tuple, list)) else m(f)
        return out
