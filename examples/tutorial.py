"""PyTorch's "60 minute blitz" (tensors and autograd), run on sparsetorch.

This is plain torch code: only the import differs (``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs it
on PyTorch). The ``assert`` lines check the facts the tutorial states, so the script doubles as a
smoke test. It trains nothing and writes no files (``--quick`` is accepted and changes nothing).

    python examples/tutorial.py
"""

import os

if __name__ == "__main__":  # --help and bad arguments end here, before the imports below
    import _common

    _common.parse(_common.parser("tutorial", __doc__, out=False), needs=())

import numpy as np

if os.environ.get("SPARSETORCH_EXAMPLES_BACKEND") == "torch":  # the same script on PyTorch
    import torch
else:
    import sparsetorch as torch

torch.manual_seed(0)

# ---- Tensors ---------------------------------------------------------------------------------

# An uninitialized 5x3 matrix: whatever values were in the allocated memory.
x = torch.empty(5, 3)
print(x)

# A randomly initialized matrix (uniform on [0, 1)).
x = torch.rand(5, 3)
print(x)

# A matrix filled with zeros, of dtype long.
x = torch.zeros(5, 3, dtype=torch.long)
print(x)

# A tensor built directly from data.
x = torch.tensor([5.5, 3])
print(x)

# A tensor based on an existing one: new_* methods take sizes, *_like functions keep them.
x = x.new_ones(5, 3, dtype=torch.double)
print(x)
x = torch.randn_like(x, dtype=torch.float)  # override dtype; the result has the same size
print(x)

# Its size; torch.Size is a tuple, so it supports all tuple operations.
print(x.size())
rows, cols = x.size()
assert (rows, cols) == (5, 3)

# ---- Operations ------------------------------------------------------------------------------

y = torch.rand(5, 3)

# Addition: syntax 1.
print(x + y)

# Addition: syntax 2.
print(torch.add(x, y))

# Addition: providing an output tensor as argument.
result = torch.empty(5, 3)
torch.add(x, y, out=result)
print(result)

# Addition: in-place. Any operation that mutates a tensor in place is post-fixed with an _.
y.add_(x)
print(y)
assert np.allclose(y.numpy(), result.numpy())

# Standard NumPy-like indexing.
print(x[:, 1])

# Resizing: view reshapes a tensor; -1 is inferred from the other dimensions.
x = torch.rand(4, 4)
y = x.view(16)
z = x.view(-1, 8)
print(x.size(), y.size(), z.size())
assert tuple(z.size()) == (2, 8)

# A one-element tensor gives its value as a Python number with .item().
x = torch.rand(1)
print(x)
print(x.item())
assert isinstance(x.item(), float)

# ---- NumPy bridge ----------------------------------------------------------------------------

# A tensor and the NumPy array from .numpy() share their memory: changing one changes the other.
a = torch.ones(5)
print(a)
b = a.numpy()
print(b)
a.add_(1)
print(a)
print(b)
assert (b == 2).all()

# The same holds the other way round, with torch.from_numpy.
a = np.ones(5)
b = torch.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)
assert (b.numpy() == 2).all()

# ---- Autograd: automatic differentiation -----------------------------------------------------

# requires_grad=True records every operation on the tensor.
x = torch.ones(2, 2, requires_grad=True)
print(x)

# y was created as the result of an operation, so it has a grad_fn.
y = x + 2
print(y)
print(y.grad_fn)

# More operations on y.
z = y * y * 3
out = z.mean()
print(z, out)

# .requires_grad_( ... ) changes an existing tensor's requires_grad flag in place.
a = torch.rand(2, 2)
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

# Gradients: out contains a single scalar, so out.backward() needs no argument.
# out = 1/4 * sum(3 * (x + 2)^2), so d(out)/dx = 3/2 * (x + 2) = 4.5 at x = 1.
out.backward()
print(x.grad)
assert np.allclose(x.grad.numpy(), 4.5)

# A vector-Jacobian product: y is not a scalar, so backward takes the vector v.
x = torch.rand(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)

v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad)

# Stop autograd from tracking history: wrap the code in torch.no_grad() ...
print(x.requires_grad)
print((x * x).requires_grad)
with torch.no_grad():
    print((x * x).requires_grad)
    assert not (x * x).requires_grad

# ... or use .detach() to get a new tensor with the same content that does not require grad.
print(x.requires_grad)
y = x.detach()
print(y.requires_grad)
assert np.array_equal(x.detach().numpy(), y.numpy())

print("Tutorial done: tensors, operations, the NumPy bridge and autograd all ran.")
