"""DistributedDataParallel: synchronous data-parallel training over sparsetorch.distributed.

At wrap time the parameters and buffers of rank 0 are broadcast to every rank. During
``backward()`` each parameter's gradient is averaged across ranks:

- dense gradients are copied into flat *buckets* of about ``bucket_cap_mb`` (parameters in
  reverse registration order, the order backward produces them); a bucket's all-reduce is
  started (non-blocking) as soon as all of its gradients are ready, so the communication of
  late layers overlaps the backward of earlier ones;
- sparse gradients (``Embedding(sparse=True)`` / ``EmbeddingBag(sparse=True)``) are reduced
  with the sparse all-reduce (O(total nnz)); each one is its own bucket.

Buckets are started strictly in order, so every rank issues the same collectives in the same
order. A per-parameter post-accumulate-grad hook reports ready gradients; a callback queued on
the autograd engine waits for the reductions when ``backward()`` ends and writes the averages
into ``.grad``. ``no_sync()`` skips all of this (gradients accumulate locally) for the backward
of every forward run inside it.
"""

import contextlib

from ... import _dispatch
from ..._layout import sparse_coo, strided
from ...autograd import engine as _engine
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_UNUSED_MSG = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This "
    "error indicates that your module has parameters that were not used in producing loss: {}. "
    "You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by making "
    "sure all `forward` function outputs participate in calculating loss."
)


class _Bucket:
    """A group of gradients reduced by one collective: dense (a flat buffer) or one sparse."""

    def __init__(self, params, sparse):
        self.params = params
        self.sparse = sparse
        self.ready = 0
        self.work = None
        self.grad = None  # sparse bucket: the gradient tensor being reduced
        if sparse:
            return
        p0 = params[0]
        xp = _dispatch.get_backend(p0.device).xp
        total = sum(p.numel() for p in params)
        self.buffer = _dispatch.wrap(xp.zeros(total, dtype=p0._data.dtype), p0.dtype,
                                     p0.device, strided)
        self.views = []  # per parameter: a grad-shaped Tensor viewing the buffer
        off = 0
        for p in params:
            n = p.numel()
            v = self.buffer._data[off:off + n].reshape(p._data.shape)
            self.views.append(_dispatch.wrap(v, p.dtype, p.device, strided))
            off += n


class DistributedDataParallel(Module):
    """Implements distributed data parallelism at the module level (torch.nn.parallel.
    DistributedDataParallel): each process runs ``module`` on its share of the batch, and
    ``backward()`` leaves in every ``.grad`` the average of the gradients of all processes.

    Run one process per rank (``mpirun -n 4 python train.py``) after
    ``torch.distributed.init_process_group("mpi")``. The wrapped module is ``.module``; the
    ``state_dict`` keys carry its ``module.`` prefix, as in torch.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        from ... import distributed as dist

        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        for name, val in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                          ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                          ("mixed_precision", mixed_precision), ("device_mesh", device_mesh)):
            if val is not None:
                raise NotImplementedError(f"DistributedDataParallel: {name} is not supported")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter "
                "that requires a gradient."
            )
        self.module = module
        self.process_group = process_group
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.static_graph = bool(static_graph)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._dist = dist
        self._world = dist.get_world_size(process_group)
        self._src = dist.get_process_group_ranks(process_group)[0] if process_group else 0
        self._params = params
        self._verify_shapes()
        if init_sync:
            self._sync_module_states(with_params=True)
        self._buckets, self._slot = self._make_buckets(module, params)
        self._sync_now = False
        self._armed = False
        self._seen = set()
        self._next = 0
        self._handles = [p.register_post_accumulate_grad_hook(self._hook) for p in params]

    # ---- setup ----
    def _verify_shapes(self):
        mine = [(tuple(p.shape), p.dtype.name) for p in self._params]
        every = [None] * self._world
        self._dist.all_gather_object(every, mine, group=self.process_group)
        for r, other in enumerate(every):
            if other != mine:
                raise RuntimeError(
                    f"DistributedDataParallel: rank {r} has different parameters than this "
                    f"rank ({len(other)} vs {len(mine)} parameters, or different shapes/dtypes); "
                    "every rank must build the same model"
                )

    def _sync_module_states(self, with_params):
        tensors = list(self.module.parameters()) if with_params else []
        tensors += [b for b in self.module.buffers() if b is not None]
        with no_grad():
            for t in tensors:
                if t.layout is strided:
                    self._dist.broadcast(t, src=self._src, group=self.process_group)

    def _make_buckets(self, module, params):
        sparse_ids = set()
        for m in module.modules():  # torch's expect_sparse_gradient: Embedding(sparse=True)
            if getattr(m, "sparse", False) is True:
                sparse_ids.update(id(p) for p in m.parameters(recurse=False))
        buckets, slot = [], {}
        cur, size = [], 0
        for p in reversed(params):
            if id(p) in sparse_ids:
                buckets.append(_Bucket([p], True))
                slot[id(p)] = (len(buckets) - 1, 0)
                continue
            nbytes = p.numel() * p.dtype.itemsize
            if cur and (size + nbytes > self.bucket_bytes_cap or cur[0].dtype is not p.dtype
                        or cur[0].device != p.device):
                buckets.append(_Bucket(cur, False))
                cur, size = [], 0
            cur.append(p)
            size += nbytes
            slot[id(p)] = (None, len(cur) - 1)
        if cur:
            buckets.append(_Bucket(cur, False))
        # resolve the bucket index of the dense parameters
        for i, b in enumerate(buckets):
            if not b.sparse:
                for k, p in enumerate(b.params):
                    slot[id(p)] = (i, k)
        return buckets, slot

    # ---- forward ----
    def forward(self, *inputs, **kwargs):
        if self._armed:  # a previous backward failed midway: drop its reductions
            self._finish(raise_unused=False, write=False)
        self._sync_now = self.require_backward_grad_sync and is_grad_enabled()
        if self.broadcast_buffers and self.require_forward_param_sync and self._world > 1:
            self._sync_module_states(with_params=False)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the forward/backward passes run inside are accumulated locally; the
        first backward after leaving the context averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- backward: hooks and bucket launches ----
    def _hook(self, p):
        if not self._sync_now:
            return
        if not self._armed:
            self._armed = True
            self._seen = set()
            self._next = 0
            for b in self._buckets:
                b.ready = 0
                b.work = None
            _engine.queue_callback(self._on_backward_end)
        if id(p) in self._seen:
            return  # accumulated twice in one backward (backward(inputs=...)): already copied
        self._seen.add(id(p))
        i, k = self._slot[id(p)]
        b = self._buckets[i]
        g = p.grad
        if b.sparse:
            b.grad = g
        else:
            if g.layout is not strided:
                raise RuntimeError(
                    f"DistributedDataParallel: a parameter of shape {list(p.shape)} got a "
                    f"{g.layout.name} gradient, but only modules with sparse=True "
                    "(Embedding/EmbeddingBag) may produce sparse gradients"
                )
            view = b.views[k]
            if g is not view:
                view._data[...] = g._data
        b.ready += 1
        self._launch_ready()

    def _launch_ready(self):
        buckets = self._buckets
        while self._next < len(buckets):
            b = buckets[self._next]
            if b.ready < len(b.params):
                break
            self._launch(b)
            self._next += 1
        for b in buckets[: self._next]:  # poll: lets MPI progress the started reductions
            if b.work is not None:
                b.work.is_completed()

    def _launch(self, b):
        avg = self._dist.ReduceOp.AVG
        t = b.grad if b.sparse else b.buffer
        b.work = self._dist.all_reduce(t, op=avg, group=self.process_group, async_op=True)

    def _on_backward_end(self):
        self._finish(raise_unused=True, write=True)

    def _finish(self, raise_unused, write):
        self._armed = False
        missing = [p for p in self._params if id(p) not in self._seen]
        if missing and not self.find_unused_parameters and raise_unused:
            self._wait_started()
            names = {id(p): n for n, p in self.module.named_parameters()}
            raise RuntimeError(_UNUSED_MSG.format([names.get(id(p), "?") for p in missing]))
        for p in missing:  # unused here: contribute zeros (other ranks may have used it)
            i, k = self._slot[id(p)]
            b = self._buckets[i]
            if b.sparse:
                b.grad = _empty_sparse_grad(p)
            else:
                b.views[k]._data[...] = 0
            b.ready += 1
        self._launch_ready()
        # with find_unused_parameters every rank exchanges its used map (torch's
        # local_used_map): which parameters are unused depends on the rank's data
        used = self._globally_used() if self.find_unused_parameters and write else None
        self._wait_started()
        if write:
            for b in self._buckets:
                self._write_back(b, used)

    def _wait_started(self):
        for b in self._buckets:
            if b.work is not None:
                b.work.wait()
                b.work = None

    def _globally_used(self):
        """ids of the parameters some rank used (torch leaves ``.grad`` of globally unused
        parameters untouched)."""
        xp = _dispatch.get_backend(self._params[0].device).xp
        flags = xp.asarray([id(p) in self._seen for p in self._params], dtype=xp.int32)
        t = _dispatch.wrap(flags, _dtype_of(flags), self._params[0].device, strided)
        self._dist.all_reduce(t, group=self.process_group)
        return {id(p) for p, f in zip(self._params, t._data.tolist()) if f}

    def _write_back(self, b, used):
        if b.sparse:
            p = b.params[0]
            if used is None or id(p) in used:
                p.grad = b.grad
            b.grad = None
            return
        for p, view in zip(b.params, b.views):
            if used is not None and id(p) not in used:
                continue
            g = p.grad
            if self.gradient_as_bucket_view:
                p.grad = view
            elif g is None or g is view or g.layout is not strided:
                p.grad = _dispatch.wrap(view._data.copy(), p.dtype, p.device, strided)
            else:
                g._data[...] = view._data
                _dispatch.bump_version(g)


def _empty_sparse_grad(p):
    xp = _dispatch.get_backend(p.device).xp
    from ...sparse._payload import COO

    shape = tuple(p.shape)
    payload = COO(xp.zeros((1, 0), dtype=xp.int64), xp.zeros((0,) + shape[1:], dtype=p._data.dtype),
                  shape, True)
    return _dispatch.wrap(payload, p.dtype, p.device, sparse_coo)


def _dtype_of(arr):
    from ... import _dtype as D

    return D.int32 if arr.dtype.itemsize == 4 else D.int64
