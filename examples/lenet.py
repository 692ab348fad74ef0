"""The LeNet of the PyTorch "Neural Networks" tutorial, trained on a small synthetic task.

Written against torch's API only: replace the four sparsetorch imports by torch and it runs
unchanged under PyTorch. The task: 32x32 single-channel images of ten patterns (a horizontal
bar in one of five rows, or a vertical bar in one of five columns) with Gaussian noise.

Run: python examples/lenet.py
"""

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


def make_data(n, noise=0.5):
    """``n`` noisy 32x32 images of ten bar patterns and their labels (0-9)."""
    templates = torch.zeros(10, 32, 32)
    for c in range(5):
        templates[c, 3 + 5 * c:6 + 5 * c, 2:30] = 1.0  # horizontal bars
        templates[5 + c, 2:30, 3 + 5 * c:6 + 5 * c] = 1.0  # vertical bars
    labels = torch.randint(0, 10, (n,))
    images = templates[labels] + noise * torch.randn(n, 32, 32)
    return images.unsqueeze(1), labels


def train(steps=100, batch_size=32, lr=0.01, seed=0, log_every=0):
    """Train a fresh Net with plain SGD and cross-entropy; returns the per-step losses."""
    torch.manual_seed(seed)
    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    losses = []
    for step in range(steps):
        inputs, targets = make_data(batch_size)
        optimizer.zero_grad()  # zero the gradient buffers
        output = net(inputs)
        loss = criterion(output, targets)
        loss.backward()
        optimizer.step()  # does the update
        losses.append(loss.item())
        if log_every and step % log_every == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    return net, losses


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


if __name__ == "__main__":
    net, losses = train(steps=100, log_every=10)
    images, labels = make_data(512)
    with torch.no_grad():
        accuracy = (net(images).argmax(1) == labels).float().mean().item()
    print(f"first loss {losses[0]:.4f}, last loss {losses[-1]:.4f}, accuracy {accuracy:.3f}")
