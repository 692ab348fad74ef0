"""A small user program, written for torch, that the type checker must accept as it is
(tests/test_typing.py runs mypy on it, and runs it).

Nothing here is sparsetorch-specific except the import line.
"""

from __future__ import annotations

from collections.abc import Iterator

import sparsetorch as torch
from sparsetorch import Tensor, nn
from sparsetorch.nn import functional as F


class TwoLayer(nn.Module):
    def __init__(self, n_in: int, n_hidden: int, n_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def batches(x: Tensor, y: Tensor, size: int) -> Iterator[tuple[Tensor, Tensor]]:
    for i in range(0, x.shape[0], size):
        yield x[i:i + size], y[i:i + size]


def main() -> float:
    torch.manual_seed(0)
    # creation
    x: Tensor = torch.randn(64, 8)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    w = torch.zeros(8, 1, requires_grad=True)
    b = torch.ones(1) * 0.5 + torch.full((1,), 0.25) - torch.tensor([0.75])
    ids = torch.arange(10).reshape(2, 5)
    eye = torch.eye(3, dtype=torch.float64)
    lin = torch.linspace(0.0, 1.0, steps=5)
    r = torch.rand(2, 3) + torch.rand((2, 3)) + torch.randint(0, 10, (2, 3))
    z = torch.zeros_like(x) + torch.ones_like(x) + torch.empty_like(x).zero_() + torch.full_like(x, 2.0)
    e = torch.empty(2, 3).fill_(1.0)
    a = torch.from_numpy(x.numpy())
    s = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))
    csr = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([1, 0]), torch.tensor([1.0, 2.0]),
                                  size=(2, 2))

    # attributes and methods
    shape: tuple[int, ...] = x.shape
    n_rows: int = x.size(0)
    ndim: int = x.dim() + x.ndim
    assert x.dtype == torch.float32 and x.device.type == "cpu" and x.layout == torch.strided
    assert ids.numel() == 10 and not x.requires_grad and x.is_leaf and x.grad is None
    assert eye.to(torch.float32).dtype == torch.float32 and lin.tolist()[-1] == 1.0
    assert s.is_sparse and csr.layout == torch.sparse_csr and s.to_dense().sum().item() == 3.0
    m = (torch.mm(s, x[:2, :2]) + s.coalesce().values().sum()).abs().max()
    t = x.t().matmul(x).mean() + x.view(-1).pow(2).sum() + x.unsqueeze(0).squeeze(0).exp().log().sum()
    total = float(t.detach() + m + r.sum() + z.sum() + e.sum() + a.sum() + b.sum())

    # a model, a loss, an optimizer loop
    model = TwoLayer(8, 16, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    model.train()
    loss = torch.zeros(())
    for epoch in range(3):
        for xb, yb in batches(x, y, 16):
            opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(xb), yb)
            loss.backward()
            opt.step()
        sched.step()
    model.eval()
    with torch.no_grad():
        acc = ((model(x) > 0).float() == y).float().mean().item()
    state = model.state_dict()
    model.load_state_dict(state)
    names = [name for name, _ in model.named_parameters()]
    model.to(torch.float64).to("cpu").float()
    sgd = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    sgd.zero_grad()
    (x @ w).pow(2).mean().backward()
    sgd.step()
    grad = w.grad
    assert grad is not None and grad.shape == (8, 1) and len(names) == 4
    return total + acc + loss.item() + len(shape) + n_rows + ndim + opt.state_dict()["param_groups"][0]["lr"]


if __name__ == "__main__":
    print(main())
