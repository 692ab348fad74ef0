"""Deliberately wrong user code: the type checker must flag every line that ends in an E-comment
naming its error code, and nothing else (tests/test_typing.py compares line by line). Never run."""

from __future__ import annotations

import sparsetorch as torch
from sparsetorch import Tensor, nn

x = torch.zeros(2, 3)
x.grad = 3  # E: assignment
label: str = x.item()  # E: assignment
count: int = torch.ones(2)  # E: assignment
torch.zeros(2, dtype="float32")  # E: arg-type
torch.tensor([1.0], requires_grad="yes")  # E: arg-type
torch.full(3, 1.0)  # E: arg-type
x.transpose(0)  # E: call-arg
x.no_such_method()  # E: attr-defined
x.unsqueeze("rows")  # E: arg-type
model = nn.Linear(3, 2)
model.parameters() + 1  # E: operator
model.train("yes")  # E: arg-type
model.load_state_dict([1, 2])  # E: arg-type
opt = torch.optim.Adam(model.parameters(), lr="fast")  # E: arg-type
opt.zero_grad(set_to_none="no")  # E: arg-type
opt.step(closure=3)  # E: arg-type
sched = torch.optim.lr_scheduler.StepLR(opt, step_size="two")  # E: arg-type
lr: str = sched.get_last_lr()  # E: assignment


class Net(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


out: str = Net().forward(x)  # E: assignment
Net().forward(x, 2)  # E: call-arg
