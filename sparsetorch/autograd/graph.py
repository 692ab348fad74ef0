"""Graph nodes: ``grad_fn`` objects, ``AccumulateGrad`` for leaves, saved-tensor version checks.

A node's ``next_functions`` is a tuple of ``(node, input_nr)`` edges, one per forward input, as in
PyTorch; ``(None, 0)`` marks an input that needs no gradient.
"""

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]


class RemovableHandle:
    """Returned by ``register_hook``-style calls; ``remove()`` unregisters the hook."""

    __slots__ = ("_container", "_key")
    _next_id = [0]

    def __init__(self, container):
        self._container = container
        RemovableHandle._next_id[0] += 1
        self._key = RemovableHandle._next_id[0]

    def remove(self):
        self._container.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Node:
    """Base of every backward node. Subclasses implement ``apply(grad_outputs) -> grads``."""

    __slots__ = ("next_functions", "_pre_hooks", "_hooks", "_released", "metadata", "__weakref__")
    num_outputs = 1
    release = None  # nodes that hold saved tensors define release() to free them after backward
    _custom = False  # True for autograd.Function nodes (they check their own gradients)

    def name(self):
        return type(self).__name__

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        h = RemovableHandle(self._hooks)
        self._hooks[h._key] = fn
        return h

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h._key] = fn
        return h

    def __call__(self, *grads):
        return self.apply(grads)

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"


def _init_node(node, next_functions):
    node.next_functions = next_functions
    node._pre_hooks = None
    node._hooks = None
    node._released = False
    node.metadata = None


class AccumulateGrad(Node):
    """The node that adds an incoming gradient into a leaf's ``.grad``; ``.variable`` is the leaf."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        _init_node(self, ())
        self.variable = variable

    def apply(self, grads):  # accumulation itself is done by the engine
        return ()
