"""Click-through-rate prediction from multi-hot categorical features with ``nn.EmbeddingBag``.

Each impression has four categorical fields (think: ad categories, user interests, page topics,
device tags), each a variable-length bag of ids drawn from a Zipf law over a large vocabulary, as
real click logs are. Clicks are generated from a planted model: popular ids carry hidden weights,
and the first two fields interact through hidden factors. The model embeds each field with an
``EmbeddingBag(sparse=True)`` (one row-sparse gradient per batch: only the looked-up rows), runs the
concatenation through a small MLP, and is trained with ``BCEWithLogitsLoss``: ``SparseAdam`` for
the tables, ``Adam`` for the MLP. It reports the test AUC next to the AUC of the planted model
(the best any model can do on this data).

It is plain PyTorch code (plus ``collate_id_lists`` from ``sparsetorch.utils.data``, which batches
id lists into EmbeddingBag's ``(ids, offsets)``); ``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs it on
PyTorch with a local stand-in for that collate.

    python examples/ctr_embeddingbag.py          # or --quick / SPARSETORCH_EXAMPLES_QUICK=1 for CI

The curves (per-batch train BCE, per-epoch test AUC) go to ``--out`` (default
``./runs/ctr_embeddingbag/``) as ctr_embeddingbag.png.
"""

import time

import _common as common


def build_parser():
    p = common.parser("ctr_embeddingbag", __doc__)
    p.add_argument("--train-size", type=common.positive_int, default=200_000)
    p.add_argument("--test-size", type=common.positive_int, default=20_000)
    p.add_argument("--epochs", type=common.positive_int, default=2)
    p.add_argument("--batch-size", type=common.positive_int, default=512)
    p.add_argument("--dim", type=common.positive_int, default=16)
    p.add_argument("--hidden", type=common.positive_int, default=64)
    p.add_argument("--lr", type=common.positive_float, default=1e-2)
    p.add_argument("--num-workers", type=common.nonnegative_int, default=0)
    p.add_argument("--seed", type=int, default=0)
    return p


def parse_args(argv=None):
    p = build_parser()
    args = common.parse(p, argv, quick={"train_size": 20_000, "test_size": 5_000, "epochs": 2})
    args.plot = common.output_file(p, "--out", None, args.out / "ctr_embeddingbag.png")
    return args


if __name__ == "__main__":
    ARGS = parse_args()  # --help and bad arguments end here, before the heavy imports below

import numpy as np
from tqdm import tqdm

if common.backend() == "torch":  # the same script on PyTorch
    import torch
    from torch import nn, optim
    from torch.utils.data import DataLoader, Dataset

    def collate_id_lists(batch):
        ids = torch.cat([torch.as_tensor(s, dtype=torch.long) for s in batch])
        offsets = torch.tensor([0] + [len(s) for s in batch[:-1]]).cumsum(0)
        return ids, offsets
else:
    import sparsetorch as torch
    from sparsetorch import nn, optim
    from sparsetorch.utils.data import DataLoader, Dataset, collate_id_lists

VOCABS = (100_000, 50_000, 20_000, 10_000)  # ids per field
MEAN_BAG = (1.0, 3.0, 5.0, 2.0)  # mean bag length - 1 per field (lengths are 1 + Poisson)
MODES = ("sum", "mean", "mean", "sum")  # how each field's bag is pooled


# ---- generated click log ---------------------------------------------------------------------

class ClickLog(Dataset):
    """Impressions: per field a variable-length id bag, plus a click label (0.0 or 1.0).

    The bags are stored CSR-style (flat ids + offsets per field) and ``__getitem__`` returns
    NumPy views, so indexing a sample copies nothing.
    """

    def __init__(self, n, rng, truth, zipf=1.1):
        self.ids, self.offsets = [], []
        for f, vocab in enumerate(VOCABS):
            lengths = 1 + rng.poisson(MEAN_BAG[f], n)
            ranks = _zipf(rng, vocab, int(lengths.sum()), zipf)
            self.ids.append(truth["perm"][f][ranks])  # popular ids are scattered in the table
            self.offsets.append(np.concatenate([[0], np.cumsum(lengths)]))
        self.logits = self._planted_logits(truth)
        self.labels = (rng.random(n) < 1 / (1 + np.exp(-self.logits))).astype(np.float32)

    def _planted_logits(self, truth):
        pooled = []
        for f in range(len(VOCABS)):
            counts = np.diff(self.offsets[f])
            rows = np.repeat(np.arange(len(counts)), counts)
            w = np.bincount(rows, truth["weight"][f][self.ids[f]], len(counts)) / counts
            u = np.zeros((len(counts), truth["factor"][f].shape[1]))
            np.add.at(u, rows, truth["factor"][f][self.ids[f]])
            pooled.append((w, u / counts[:, None]))
        interaction = (pooled[0][1] * pooled[1][1]).sum(1)
        return sum(w for w, _ in pooled) + 3.0 * interaction - 1.0

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        bags = tuple(ids[off[i]:off[i + 1]] for ids, off in zip(self.ids, self.offsets))
        return bags, self.labels[i]


def _zipf(rng, vocab, size, s):
    """``size`` ranks in ``[0, vocab)`` with P(k) proportional to 1 / (k + 1)^s."""
    p = 1.0 / np.arange(1, vocab + 1) ** s
    return rng.choice(vocab, size=size, p=p / p.sum())


def planted_truth(rng, drivers=300, factors=4):
    """The hidden click model: the ``drivers`` most popular ids of each field carry a weight, and
    those of the first two fields interact through ``factors``-dimensional vectors; the long
    tail of rare ids is noise."""
    truth = {"perm": [rng.permutation(v) for v in VOCABS], "weight": [], "factor": []}
    for perm, vocab in zip(truth["perm"], VOCABS):
        weight, factor = np.zeros(vocab), np.zeros((vocab, factors))
        weight[perm[:drivers]] = rng.normal(0.0, 1.5, drivers)
        factor[perm[:drivers]] = rng.normal(0.0, 1.0, (drivers, factors))
        truth["weight"].append(weight)
        truth["factor"].append(factor)
    return truth


def collate(batch):
    """Per field ``(ids, offsets)`` for its EmbeddingBag, and the labels as a float tensor."""
    fields = [collate_id_lists([bags[f] for bags, _ in batch]) for f in range(len(VOCABS))]
    return fields, torch.tensor([label for _, label in batch])


# ---- model -----------------------------------------------------------------------------------

class CTRModel(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(v, dim, mode=m, sparse=True)
                                  for v, m in zip(VOCABS, MODES))
        for bag in self.bags:
            nn.init.normal_(bag.weight, std=0.05)
        self.mlp = nn.Sequential(nn.Linear(dim * len(VOCABS), hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, fields):
        x = torch.cat([bag(ids, offsets) for bag, (ids, offsets) in zip(self.bags, fields)], 1)
        return self.mlp(x).squeeze(1)


def auc(scores, labels):
    """Area under the ROC curve by ranks (Mann-Whitney U); ties get their average rank."""
    scores, labels = torch.as_tensor(scores, dtype=torch.float64), torch.as_tensor(labels)
    order = scores.argsort()
    sorted_scores = scores[order]
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    # tied scores share the mean of their ranks: number the runs of equal sorted scores
    starts = torch.ones(len(scores), dtype=torch.long)
    starts[1:] = (sorted_scores[1:] != sorted_scores[:-1]).long()
    run = starts.cumsum(0) - 1
    runs = int(run[-1]) + 1
    total = torch.zeros(runs, dtype=torch.float64).index_add_(0, run, ranks[order])
    count = torch.zeros(runs, dtype=torch.float64).index_add_(
        0, run, torch.ones(len(scores), dtype=torch.float64))
    ranks[order] = (total / count)[run]
    pos = labels > 0.5
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def evaluate(model, loader):
    model.eval()
    scores, labels = [], []
    with torch.no_grad():
        for fields, y in loader:
            scores.append(model(fields))
            labels.append(y)
    model.train()
    return auc(torch.cat(scores), torch.cat(labels))


def main(argv=None):
    return run(parse_args(argv))


def run(args):
    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    truth = planted_truth(rng)
    train_set, test_set = ClickLog(args.train_size, rng, truth), ClickLog(args.test_size, rng, truth)
    best = auc(torch.from_numpy(test_set.logits), torch.from_numpy(test_set.labels))
    print(f"{len(train_set)} train / {len(test_set)} test impressions, fields {VOCABS}, "
          f"click rate {train_set.labels.mean():.3f}; AUC of the planted model {best:.4f}")

    torch.manual_seed(args.seed)
    model = CTRModel(args.dim, args.hidden)
    sparse_opt = optim.SparseAdam(list(model.bags.parameters()), lr=args.lr)
    dense_opt = optim.Adam(model.mlp.parameters(), lr=args.lr)
    criterion = nn.BCEWithLogitsLoss()
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, collate_fn=collate,
                        num_workers=args.num_workers,
                        generator=torch.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=4096, collate_fn=collate)

    losses, aucs, step_losses = [], [], []
    for epoch in range(args.epochs):
        total, start = 0.0, time.perf_counter()
        bar = tqdm(loader, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False,
                   disable=args.no_progress)
        for step, (fields, y) in enumerate(bar):
            loss = criterion(model(fields), y)
            sparse_opt.zero_grad()
            dense_opt.zero_grad()
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
            total += loss.item() * len(y)
            step_losses.append(loss.item())
            if step % 20 == 0:
                bar.set_postfix(loss=f"{loss.item():.3f}")
        losses.append(total / len(train_set))
        aucs.append(evaluate(model, test_loader))
        print(f"epoch {epoch + 1}  train BCE {losses[-1]:.4f}  test AUC {aucs[-1]:.4f}  "
              f"({time.perf_counter() - start:.1f} s)")

    print("\nsummary")
    print(f"  epochs              {args.epochs}")
    print(f"  first train BCE     {losses[0]:.4f}")
    print(f"  final train BCE     {losses[-1]:.4f}")
    print(f"  final test AUC      {aucs[-1]:.4f}")
    print(f"  planted-model AUC   {best:.4f}")
    print(f"  time                {time.perf_counter() - t0:.1f} s")
    if args.plot:
        common.save_curves(
            args.plot, "ctr_embeddingbag.py: CTR with EmbeddingBag\n" + common.settings(
                args, "train_size", "epochs", "batch_size", "dim", "hidden", "lr", "seed"),
            [(range(1, len(step_losses) + 1), step_losses, "step", "train BCE (per batch)"),
             (range(1, len(aucs) + 1), aucs, "epoch", "test AUC")])
    return {"losses": losses, "aucs": aucs, "best_auc": best, "plot": args.plot}


if __name__ == "__main__":
    run(ARGS)
