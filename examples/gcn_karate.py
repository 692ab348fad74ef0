"""A two-layer graph convolutional network (Kipf & Welling) on Zachary's karate club.

The club split into two factions (node attribute ``club``: "Mr. Hi" and "Officer"). The network
sees the graph and the label of ONE member per faction (node 0, the instructor, and node 33, the
administrator) and predicts the faction of the other 32 members. Each layer is
``A_hat @ (H @ W)`` with the normalised adjacency ``A_hat = D^-1/2 (A + I) D^-1/2`` stored as a
sparse CSR matrix; the gradient flows through ``torch.sparse.mm`` to the dense weights.

It is plain PyTorch code: ``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs the same script on PyTorch.

    python examples/gcn_karate.py            # or --quick / SPARSETORCH_EXAMPLES_QUICK=1 for CI

The curves (train loss, test accuracy per epoch) go to ``--out`` (default ``./runs/gcn_karate/``)
as gcn_karate.png.
"""

import _common as common


def build_parser():
    p = common.parser("gcn_karate", __doc__)
    p.add_argument("--epochs", type=common.positive_int, default=200)
    p.add_argument("--hidden", type=common.positive_int, default=16)
    p.add_argument("--lr", type=common.positive_float, default=0.01)
    p.add_argument("--dropout", type=common.fraction, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    return p


def parse_args(argv=None):
    p = build_parser()
    args = common.parse(p, argv, quick={"epochs": 100}, needs=("tqdm", "networkx"))
    args.plot = common.output_file(p, "--out", None, args.out / "gcn_karate.png")
    return args


if __name__ == "__main__":
    ARGS = parse_args()  # --help and bad arguments end here, before the heavy imports below

import networkx as nx
from tqdm import tqdm

if common.backend() == "torch":  # the same script on PyTorch
    import torch
    import torch.nn.functional as F
    from torch import nn, optim
else:
    import sparsetorch as torch
    import sparsetorch.nn.functional as F
    from sparsetorch import nn, optim


def normalized_adjacency(graph):
    """``D^-1/2 (A + I) D^-1/2`` of an undirected graph, as a sparse CSR tensor."""
    n = graph.number_of_nodes()
    edges = torch.tensor(list(graph.edges), dtype=torch.long).t()
    loops = torch.arange(n).repeat(2, 1)
    index = torch.cat([edges, edges.flip(0), loops], dim=1)  # both directions + self-loops
    adj = torch.sparse_coo_tensor(index, torch.ones(index.shape[1]), (n, n)).coalesce()
    deg_inv_sqrt = torch.sparse.sum(adj, dim=1).to_dense().pow(-0.5)
    row, col = adj.indices()
    values = deg_inv_sqrt[row] * adj.values() * deg_inv_sqrt[col]
    return torch.sparse_coo_tensor(adj.indices(), values, (n, n)).to_sparse_csr()


class GCN(nn.Module):
    def __init__(self, in_features, hidden, classes, dropout=0.5):
        super().__init__()
        self.lin1 = nn.Linear(in_features, hidden)
        self.lin2 = nn.Linear(hidden, classes)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, adj):
        h = F.relu(torch.sparse.mm(adj, self.lin1(x)))
        return torch.sparse.mm(adj, self.lin2(self.dropout(h)))


def main(argv=None):
    return run(parse_args(argv))


def run(args):
    graph = nx.karate_club_graph()
    n = graph.number_of_nodes()
    clubs = sorted({graph.nodes[v]["club"] for v in graph})  # ['Mr. Hi', 'Officer']
    labels = torch.tensor([clubs.index(graph.nodes[v]["club"]) for v in range(n)])
    adj = normalized_adjacency(graph)
    features = torch.eye(n)  # no node features: each node is its own one-hot
    train_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[[0, 33]] = True  # one labelled member per faction
    print(f"karate club: {n} members, {graph.number_of_edges()} friendships, factions {clubs}; "
          f"A_hat: {adj.layout}, {adj._nnz()} stored entries")

    torch.manual_seed(args.seed)
    model = GCN(n, args.hidden, len(clubs), args.dropout)
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    test = ~train_mask
    losses, accuracies = [], []
    for _ in tqdm(range(args.epochs), desc="training", disable=args.no_progress):
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features, adj)[train_mask], labels[train_mask])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        model.eval()  # no dropout: the curve's accuracy draws no random numbers
        with torch.no_grad():
            pred = model(features, adj).argmax(1)
        accuracies.append(int((pred[test] == labels[test]).sum()) / int(test.sum()))

    correct = int((pred[test] == labels[test]).sum())
    accuracy = correct / int(test.sum())
    wrong = [v for v in range(n) if test[v] and pred[v] != labels[v]]
    print("\nsummary")
    print(f"  epochs              {args.epochs}")
    print(f"  first train loss    {losses[0]:.4f}")
    print(f"  final train loss    {losses[-1]:.4f}")
    print(f"  test accuracy       {accuracy:.4f} ({correct}/{int(test.sum())} unlabelled members)")
    print(f"  misclassified       {wrong}")
    if args.plot:
        epochs = range(1, args.epochs + 1)
        common.save_curves(
            args.plot, "gcn_karate.py: GCN on the karate club\n" + common.settings(
                args, "epochs", "hidden", "lr", "dropout", "seed"),
            [(epochs, losses, "epoch", "train loss (2 labelled members)"),
             (epochs, accuracies, "epoch", "test accuracy (32 unlabelled)")])
    return {"losses": losses, "accuracy": accuracy, "accuracies": accuracies, "plot": args.plot}


if __name__ == "__main__":
    run(ARGS)
