# ruff: noqa: F821 - reveal_type is known to the type checker, and this file is never run
"""What the type checker infers for common expressions: each ``reveal_type`` line names the type mypy
must report (tests/test_typing.py). Never run."""

from __future__ import annotations

import sparsetorch as torch
from sparsetorch import nn

x = torch.zeros(2, 3)
reveal_type(x)  # R: sparsetorch._tensor.Tensor
reveal_type(torch.randn(2, 3))  # R: sparsetorch._tensor.Tensor
reveal_type(torch.arange(5))  # R: sparsetorch._tensor.Tensor
reveal_type(torch.tensor([1, 2]))  # R: sparsetorch._tensor.Tensor
reveal_type(x.shape)  # R: sparsetorch._tensor.Size
reveal_type(x.size(0))  # R: builtins.int
reveal_type(x.dtype)  # R: sparsetorch._dtype.dtype
reveal_type(x.device)  # R: sparsetorch._device.device
reveal_type(x.grad)  # R: sparsetorch._tensor.Tensor | None
reveal_type(x.requires_grad)  # R: builtins.bool
reveal_type(x.is_leaf)  # R: builtins.bool
reveal_type(x.sum(dim=1, keepdim=True))  # R: sparsetorch._tensor.Tensor
reveal_type(x @ x.t() + 1)  # R: sparsetorch._tensor.Tensor
reveal_type(x[0])  # R: sparsetorch._tensor.Tensor
reveal_type(x.item())  # R: builtins.int | builtins.float | builtins.complex
reveal_type(x.tolist())  # R: Any
reveal_type(x.split(1))  # R: builtins.tuple[sparsetorch._tensor.Tensor, ...]
p = nn.Parameter(x)
reveal_type(p * 2)  # R: sparsetorch._tensor.Tensor
m = nn.Linear(3, 2)
reveal_type(m.parameters())  # R: typing.Iterator[sparsetorch.nn.parameter.Parameter]
reveal_type(m.train())  # R: sparsetorch.nn.modules.linear.Linear
reveal_type(m.to("cpu"))  # R: sparsetorch.nn.modules.linear.Linear
reveal_type(m.state_dict())  # R: builtins.dict[builtins.str, Any]
opt = torch.optim.Adam(m.parameters())
reveal_type(opt.param_groups)  # R: builtins.list[builtins.dict[builtins.str, Any]]
