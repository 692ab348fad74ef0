"""Quick start: the PyTorch tutorial path (tensors, autograd, a LeNet, MSELoss, SGD) on sparsetorch.

Everything below is torch code; only the import differs (``SPARSETORCH_EXAMPLES_BACKEND=torch``
runs it on PyTorch). It ends by fitting the LeNet to a fixed random target with ``optim.SGD`` and
printing how far the loss fell.

    python examples/quickstart.py            # or --quick / SPARSETORCH_EXAMPLES_QUICK=1 for CI

The loss curve goes to ``--out`` (default ``./runs/quickstart/``) as quickstart.png.
"""

import _common as common


def build_parser():
    p = common.parser("quickstart", __doc__)
    p.add_argument("--steps", type=common.positive_int, default=200, help="SGD steps")
    p.add_argument("--lr", type=common.positive_float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    return p


def parse_args(argv=None):
    p = build_parser()
    args = common.parse(p, argv, quick={"steps": 30})
    args.plot = common.output_file(p, "--out", None, args.out / "quickstart.png")
    return args


if __name__ == "__main__":
    ARGS = parse_args()  # --help and bad arguments end here, before the heavy imports below

from tqdm import tqdm

if common.backend() == "torch":  # the same script on PyTorch
    import torch
    import torch.nn.functional as F
    from torch import nn, optim
else:
    import sparsetorch as torch
    import sparsetorch.nn.functional as F
    from sparsetorch import nn, optim


# ---- tensors ---------------------------------------------------------------------------------

def tensors():
    x = torch.ones(5, 3, dtype=torch.float)
    y = torch.rand(5, 3)
    print("x + y =\n", x + y)
    print("x[:, 1] =", x[:, 1])
    print("y.view(15).shape =", y.view(15).shape, " y.view(-1, 5).shape =", y.view(-1, 5).shape)
    a = torch.ones(5)
    b = a.numpy()  # shares memory with a
    a.add_(1)
    print("a.numpy() after a.add_(1):", b)
    return float((x + y).sum())


# ---- autograd --------------------------------------------------------------------------------

def autograd():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    print("y.grad_fn:", type(y.grad_fn).__name__, " out:", out.item())
    out.backward()
    print("d(out)/dx =\n", x.grad)  # 4.5 everywhere: d/dx mean(3 (x+2)^2) = 6 (x+2) / 4
    return x.grad


# ---- a neural network ------------------------------------------------------------------------

class Net(nn.Module):
    """The tutorial's LeNet: two convolutions with max pooling, then three linear layers."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)  # 1 input channel, 6 output channels, 5x5 kernel
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 spatial size after the second pooling
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)  # all dimensions except the batch dimension
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def train(steps, lr=0.01, progress=True):
    net = Net()
    print(net)
    params = list(net.parameters())
    print(f"{len(params)} parameter tensors; conv1's weight: {tuple(params[0].size())}")

    input = torch.randn(1, 1, 32, 32)
    target = torch.randn(10).view(1, -1)  # a dummy target, the same shape as the output
    criterion = nn.MSELoss()
    optimizer = optim.SGD(net.parameters(), lr=lr)

    # One step by hand, as the tutorial does it: conv1's bias gradient before and after backward.
    net.zero_grad()
    loss = criterion(net(input), target)
    print("MSELoss:", loss.item())
    print("conv1.bias.grad before backward:", net.conv1.bias.grad)
    loss.backward()
    print("conv1.bias.grad after backward: ", net.conv1.bias.grad)

    losses = []
    for _ in tqdm(range(steps), desc="SGD", disable=not progress):
        optimizer.zero_grad()  # gradients accumulate: clear them every step
        loss = criterion(net(input), target)
        loss.backward()
        optimizer.step()  # does the update
        losses.append(loss.item())
    return losses


def main(argv=None):
    return run(parse_args(argv))


def run(args):
    torch.manual_seed(args.seed)

    tensors()
    grad = autograd()
    losses = train(args.steps, args.lr, progress=not args.no_progress)
    print("\nsummary")
    print(f"  autograd d(out)/dx  {grad[0, 0].item():.4f} (expected 4.5)")
    print(f"  SGD steps           {len(losses)}")
    print(f"  first loss          {losses[0]:.6g}")
    print(f"  final loss          {losses[-1]:.6g}")
    if args.plot:
        common.save_curves(
            args.plot, "quickstart.py: LeNet fitted to a fixed target\n"
            + common.settings(args, "steps", "lr", "seed"),
            [(range(1, len(losses) + 1), losses, "SGD step", "MSE loss")])
    return {"grad": grad, "losses": losses, "plot": args.plot}


if __name__ == "__main__":
    run(ARGS)
