"""The soak run behind ``test_soak.py`` (also runnable alone):

    python tests/reliability/_soak.py --seconds 600 --dir /tmp/soak

Mixed training for ``--seconds``: a sparse ``Embedding`` and an ``EmbeddingBag`` (sparse
gradients, SparseAdam) with a dense head (Adam), batches from a DataLoader with worker processes,
a checkpoint every ``--every`` steps (``torch.save`` to a new file, then verified by loading the
newest one), and a worker SIGKILLed at random about every ``--kill-every`` steps. A kill surfaces
as the DataLoader's "exited unexpectedly" error; the loop then resumes from the newest checkpoint
with a fresh loader. Prints one JSON line of figures; exits 1 if a check failed:

- no hang: every batch arrives within the loader's ``timeout``;
- no lost checkpoint: every checkpoint written is on disk and loads back with its step, weights
  and optimizer state; every resume starts from the step last saved;
- bounded memory: the RSS after warm-up grows by less than ``--rss-slack-mb``.
"""

import argparse
import faulthandler
import json
import os
import random
import signal
import sys
import threading
import time

import numpy as np

import sparsetorch as torch
from sparsetorch.utils.data import DataLoader, Dataset

ROWS, DIM, BAG = 5000, 16, 4


class Clicks(Dataset):
    """Deterministic synthetic samples: ids, a bag of ids and a target from the index."""

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        r = np.random.default_rng(i)
        ids = r.integers(0, ROWS, size=2)
        bag = r.integers(0, ROWS, size=BAG)
        y = float((ids[0] % 7) - 3) / 3.0
        return torch.from_numpy(ids), torch.from_numpy(bag), torch.tensor([y])


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(ROWS, DIM, sparse=True)
        self.bag = torch.nn.EmbeddingBag(ROWS, DIM, mode="mean", sparse=True)
        self.head = torch.nn.Linear(3 * DIM, 1)

    def forward(self, ids, bag):
        e = self.emb(ids).reshape(ids.shape[0], -1)
        return self.head(torch.cat([e, self.bag(bag)], dim=1))


def training(seed):
    """The model (seeded), its optimizers (SparseAdam for the embeddings, Adam for the head) and
    ``step(ids, bag, y)``: one MSE training step, returning the loss."""
    torch.manual_seed(seed)
    model = Model()
    sparse_opt = torch.optim.SparseAdam(list(model.emb.parameters()) + list(model.bag.parameters()),
                                        lr=0.01)
    dense_opt = torch.optim.Adam(model.head.parameters(), lr=0.01)
    loss_fn = torch.nn.MSELoss()

    def step(ids, bag, y):
        loss = loss_fn(model(ids, bag), y)
        sparse_opt.zero_grad()
        dense_opt.zero_grad()
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
        return loss

    return model, sparse_opt, dense_opt, step


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _children_rss_mb(pids):
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
        except OSError:
            pass
    return total


def _proc_report(pid):
    """One line per thread of process ``pid``: its state and the kernel function it waits in."""
    lines = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:
        return [f"pid {pid}: gone"]
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                st = f.read()
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                wchan = f.read().strip() or "-"
        except OSError:
            continue
        name = st[st.find(b"(") + 1:st.rfind(b")")].decode(errors="replace")
        state = st[st.rfind(b")") + 2:][:1].decode()
        lines.append(f"pid {pid} tid {tid} {name!r} state {state} wchan {wchan}")
    return lines


def _watchdog(deadline, children):
    """A hang reports itself instead of running into the caller's timeout silently: after
    ``deadline`` seconds, every thread of this process and of the live workers (state, kernel
    wait) and every Python stack of this process go to stderr, then the process exits with 3.
    A hang that holds the GIL is caught by faulthandler's own timer 20 s later."""
    faulthandler.dump_traceback_later(deadline + 20, exit=True)

    def watch():
        time.sleep(deadline)
        out = sys.stderr
        out.write(f"soak: still running after {deadline:.0f} s; threads:\n")
        for pid in [os.getpid()] + children():
            out.write("\n".join(_proc_report(pid)) + "\n")
        out.flush()
        faulthandler.dump_traceback(all_threads=True)
        os._exit(3)

    threading.Thread(target=watch, name="soak-watchdog", daemon=True).start()


def _loader(start, workers, batch, timeout):
    sampler = range(start * batch, 1 << 30)
    return DataLoader(Clicks(), batch_size=batch, sampler=sampler, num_workers=workers,
                      timeout=timeout)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--dir", required=True)
    p.add_argument("--every", type=int, default=50, help="steps between checkpoints")
    p.add_argument("--kill-every", type=int, default=120, help="mean steps between kills")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--rss-slack-mb", type=float, default=200.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    os.makedirs(a.dir, exist_ok=True)
    live = []  # the current loader iterator's workers, for the watchdog's report
    _watchdog(a.seconds + a.timeout + 60, lambda: [w.pid for it in live[-1:] for w in it._workers])
    rnd = random.Random(a.seed)
    model, sparse_opt, dense_opt, step_on = training(a.seed)

    step, saved, kills, resumes, errors = 0, [], 0, 0, []
    rss, child_rss, losses = [], [], []
    t0 = time.monotonic()
    warm_rss = None
    max_batch_wait = 0.0

    def checkpoint():
        path = os.path.join(a.dir, f"ckpt_{step:08d}.pt")
        torch.save({"step": step, "model": model.state_dict(), "sparse": sparse_opt.state_dict(),
                    "dense": dense_opt.state_dict()}, path)
        saved.append((step, path, model.head.weight.detach().clone()))
        # the newest checkpoint loads back exactly
        ck = torch.load(path)
        if ck["step"] != step or not torch.equal(ck["model"]["head.weight"], model.head.weight):
            errors.append(f"checkpoint {path} does not load back")
        for old in saved[:-3]:  # keep the three newest on disk
            if os.path.exists(old[1]):
                os.remove(old[1])

    def resume():
        last_step, path, weight = saved[-1]
        ck = torch.load(path)
        if ck["step"] != last_step or not torch.equal(ck["model"]["head.weight"], weight):
            errors.append(f"resume from {path}: wrong contents")
        model.load_state_dict(ck["model"])
        sparse_opt.load_state_dict(ck["sparse"])
        dense_opt.load_state_dict(ck["dense"])
        return ck["step"]

    checkpoint()
    next_kill = rnd.randint(a.kill_every // 2, a.kill_every * 3 // 2)
    while time.monotonic() - t0 < a.seconds:
        it = iter(_loader(step, a.workers, a.batch, a.timeout))
        live[:] = [it]
        try:
            while time.monotonic() - t0 < a.seconds:
                w0 = time.monotonic()
                ids, bag, y = next(it)
                max_batch_wait = max(max_batch_wait, time.monotonic() - w0)
                loss = step_on(ids, bag, y)
                step += 1
                losses.append(float(loss))
                if step % a.every == 0:
                    checkpoint()
                    rss.append(_rss_mb())
                    child_rss.append(_children_rss_mb([w.pid for w in it._workers]))
                    if warm_rss is None and time.monotonic() - t0 > min(0.2 * a.seconds, 60):
                        warm_rss = rss[-1]
                if step >= next_kill:
                    victim = rnd.choice(it._workers)
                    os.kill(victim.pid, signal.SIGKILL)
                    kills += 1
                    next_kill = step + rnd.randint(a.kill_every // 2, a.kill_every * 3 // 2)
        except RuntimeError as e:
            if "exited unexpectedly" not in str(e):
                errors.append(f"unexpected loader error: {e}")
                break
            resumes += 1
            back = resume()
            if back != saved[-1][0]:
                errors.append(f"resumed at {back}, last saved {saved[-1][0]}")
            step = back
        finally:
            it._shutdown_workers() if hasattr(it, "_shutdown_workers") else None
    elapsed = time.monotonic() - t0
    on_disk = sorted(f for f in os.listdir(a.dir) if f.startswith("ckpt_"))
    want = [os.path.basename(s[1]) for s in saved[-3:]]
    if on_disk != want:
        errors.append(f"checkpoints on disk {on_disk[-3:]}, expected {want}")
    growth = (max(rss) - warm_rss) if (rss and warm_rss is not None) else 0.0
    if growth > a.rss_slack_mb:
        errors.append(f"RSS grew by {growth:.0f} MB after warm-up")
    if kills and resumes != kills:
        errors.append(f"{kills} kills but {resumes} resumes")
    first = float(np.mean(losses[:50])) if losses else float("nan")
    last = float(np.mean(losses[-50:])) if losses else float("nan")
    out = {"seconds": round(elapsed, 1), "steps_run": len(losses), "final_step": step,
           "checkpoints": len(saved), "kills": kills, "resumes": resumes,
           "rss_mb_start": round(rss[0], 1) if rss else None,
           "rss_mb_after_warmup": round(warm_rss, 1) if warm_rss else None,
           "rss_mb_max": round(max(rss), 1) if rss else None,
           "rss_mb_end": round(rss[-1], 1) if rss else None,
           "worker_rss_mb_max": round(max(child_rss), 1) if child_rss else None,
           "max_batch_wait_s": round(max_batch_wait, 2),
           "loss_first50": round(first, 4), "loss_last50": round(last, 4), "errors": errors}
    print(json.dumps(out), flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
