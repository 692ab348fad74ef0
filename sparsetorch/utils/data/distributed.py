"""DistributedSampler: each process of a data-parallel job reads its own share of a dataset."""

import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Sampler that restricts data loading to a subset of the dataset, one subset per rank
    (torch.utils.data.DistributedSampler).

    Every rank draws the same permutation (seeded by ``seed + epoch``) and takes every
    ``num_replicas``-th index starting at ``rank``, so the shares are disjoint and together
    cover the dataset. When the length is not divisible by ``num_replicas``, ``drop_last=False``
    repeats indices from the start to give every rank the same count, and ``drop_last=True``
    drops the tail instead. Call ``set_epoch(epoch)`` before each epoch to reshuffle.

    Args:
        dataset: dataset used for sampling (its ``len`` is used).
        num_replicas (int, optional): number of processes; default: the world size of the
            default process group.
        rank (int, optional): rank of this process; default: its rank in the default group.
        shuffle (bool): shuffle the indices (default True).
        seed (int): random seed, the same on every rank (default 0).
        drop_last (bool): drop the tail instead of padding (default False).

    >>> sampler = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)
    >>> list(sampler)
    [1, 4, 7, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)  # largest even share
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ... import _generator
            from ..._ops import random as _random

            g = _generator.Generator()
            g.manual_seed(self.seed + self.epoch)
            order = _random.randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[: self.total_size]
        elif self.total_size > n:  # pad by repeating from the start (as often as needed)
            extra = self.total_size - n
            order += (order * math.ceil(extra / max(n, 1)))[:extra]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch: with ``shuffle=True`` each epoch gets its own order (the same on
        every rank)."""
        self.epoch = epoch
