"""The LeNet of the PyTorch "Neural Networks" tutorial, trained on a small synthetic task.

Written against torch's API only: ``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs the same script on
PyTorch. The task: 32x32 single-channel images of ten patterns (a horizontal bar in one of five
rows, or a vertical bar in one of five columns) with Gaussian noise.

    python examples/lenet.py                 # or --quick / SPARSETORCH_EXAMPLES_QUICK=1 for CI

The curves (train loss per step, accuracy on held-out images) go to ``--out`` (default
``./runs/lenet/``) as lenet.png.
"""

import os


def parse_args(argv=None):
    import _common as common  # here, not above: the tests import this file from anywhere

    p = common.parser("lenet", __doc__)
    p.add_argument("--steps", type=common.positive_int, default=100, help="SGD steps")
    p.add_argument("--batch-size", type=common.positive_int, default=32)
    p.add_argument("--lr", type=common.positive_float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    args = common.parse(p, argv, quick={"steps": 20})
    args.plot = common.output_file(p, "--out", None, args.out / "lenet.png")
    return args


if __name__ == "__main__":
    ARGS = parse_args()  # --help and bad arguments end here, before the heavy imports below

if os.environ.get("SPARSETORCH_EXAMPLES_BACKEND") == "torch":  # the same script on PyTorch
    import torch
    import torch.nn.functional as F
    from torch import nn, optim
else:
    import sparsetorch as torch
    import sparsetorch.nn as nn  # noqa: PLR0402 - the tutorial's spelling
    import sparsetorch.nn.functional as F
    import sparsetorch.optim as optim  # noqa: PLR0402


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()  # noqa: UP008 - as in the tutorial
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square, you can specify with a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # all dimensions except the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


def make_data(n, noise=0.5, generator=None):
    """``n`` noisy 32x32 images of ten bar patterns and their labels (0-9)."""
    templates = torch.zeros(10, 32, 32)
    for c in range(5):
        templates[c, 3 + 5 * c:6 + 5 * c, 2:30] = 1.0  # horizontal bars
        templates[5 + c, 2:30, 3 + 5 * c:6 + 5 * c] = 1.0  # vertical bars
    labels = torch.randint(0, 10, (n,), generator=generator)
    images = templates[labels] + noise * torch.randn(n, 32, 32, generator=generator)
    return images.unsqueeze(1), labels


def train(steps=100, batch_size=32, lr=0.01, seed=0, log_every=0, progress=False, callback=None):
    """Train a fresh Net with plain SGD and cross-entropy; returns the net and the per-step
    losses. ``progress``: a tqdm bar; ``callback(step, net, loss)`` runs after every step."""
    torch.manual_seed(seed)
    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    losses = []
    bar = range(steps)
    if progress:
        from tqdm import tqdm

        bar = tqdm(bar, desc="SGD")
    for step in bar:
        inputs, targets = make_data(batch_size)
        optimizer.zero_grad()  # zero the gradient buffers
        output = net(inputs)
        loss = criterion(output, targets)
        loss.backward()
        optimizer.step()  # does the update
        losses.append(loss.item())
        if log_every and step % log_every == 0:
            (bar.write if progress else print)(f"step {step:4d}  loss {loss.item():.4f}")
        if callback is not None:
            callback(step, net, loss.item())
    return net, losses


def accuracy(net, images, labels):
    with torch.no_grad():
        return (net(images).argmax(1) == labels).float().mean().item()


def tutorial_step():
    """The tutorial's single MSELoss step on a random input and a dummy target."""
    net = Net()
    input = torch.randn(1, 1, 32, 32)
    output = net(input)
    target = torch.randn(10)  # a dummy target, for example
    target = target.view(1, -1)  # make it the same shape as output
    criterion = nn.MSELoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01)
    optimizer.zero_grad()
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    return net, loss.item(), criterion(net(input), target).item()


def run(args):
    """The script: train with a held-out accuracy curve, then report and plot."""
    import _common as common

    held_out = make_data(256, generator=torch.Generator().manual_seed(12345))  # no global draws
    curve = []

    def record(step, net, loss):
        if step % 5 == 4 or step == args.steps - 1:
            curve.append((step + 1, accuracy(net, *held_out)))

    net, losses = train(steps=args.steps, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                        log_every=10, progress=not args.no_progress, callback=record)
    images, labels = make_data(512)
    acc = accuracy(net, images, labels)
    print(f"first loss {losses[0]:.4f}, last loss {losses[-1]:.4f}, accuracy {acc:.3f}")
    print("\nsummary")
    print(f"  SGD steps           {len(losses)}")
    print(f"  first loss          {losses[0]:.4f}")
    print(f"  final loss          {losses[-1]:.4f}")
    print(f"  accuracy            {acc:.4f} (512 fresh images)")
    if args.plot:
        common.save_curves(
            args.plot, "lenet.py: LeNet on noisy bar images\n"
            + common.settings(args, "steps", "batch_size", "lr", "seed"),
            [(range(1, len(losses) + 1), losses, "SGD step", "train loss (cross-entropy)"),
             ([s for s, _ in curve], [a for _, a in curve], "SGD step",
              "held-out accuracy (256 images)")])
    return {"losses": losses, "accuracy": acc, "curve": curve, "plot": args.plot}


def main(argv=None):
    return run(parse_args(argv))


if __name__ == "__main__":
    run(ARGS)
