"""Top-level functions run in child processes by tests/test_multiprocessing.py (spawn pickles
them by reference, so they live in an importable module)."""

import sys

import sparsetorch as torch


def fill(t, value):
    t.fill_(value)


def fill_from_queue(q, done):
    t = q.get(timeout=30)
    t.fill_(7.0)
    done.put(bool(t.is_shared()))


def scale_sparse_values(q, done):
    s = q.get(timeout=30)
    s._values().mul_(10)
    done.put(s.layout == torch.sparse_coo)


def send_new_tensor(q, ack=None):
    t = torch.arange(4, dtype=torch.float32)
    q.put(t)
    if ack is not None:
        ack.get(timeout=30)  # keep the producer alive until the parent has the tensor


def double(t):
    return t * 2


def raise_value_error(i):
    raise ValueError(f"bad thing in process {i}")


def exit_with(i, code):
    sys.exit(code)


def write_index(i, t):
    t[i] = float(i + 1)


def hogwild(rank, model, steps):
    """Process ``rank`` only ever sees input unit vector ``e_rank``: its SGD steps move only
    ``weight[0, rank]`` towards ``rank + 1``; the parent checks that both moved."""
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    x = torch.zeros(1, 2)
    x[0, rank] = 1.0
    y = torch.full((1, 1), float(rank + 1))
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()


KEEP = []


def keep_from_queue(q, done):
    """Hold a received tensor in a module global until the process ends (os._exit in a forked
    child: only multiprocessing's finalizers run)."""
    KEEP.append(q.get(timeout=30))
    done.put(True)
