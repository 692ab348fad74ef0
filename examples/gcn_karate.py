"""A two-layer graph convolutional network (Kipf & Welling) on Zachary's karate club.

The club split into two factions (node attribute ``club``: "Mr. Hi" and "Officer"). The network
sees the graph and the label of ONE member per faction (node 0, the instructor, and node 33, the
administrator) and predicts the faction of the other 32 members. Each layer is
``A_hat @ (H @ W)`` with the normalised adjacency ``A_hat = D^-1/2 (A + I) D^-1/2`` stored as a
sparse CSR matrix; the gradient flows through ``torch.sparse.mm`` to the dense weights.

It is plain PyTorch code: ``SPARSETORCH_EXAMPLES_BACKEND=torch`` runs the same script on PyTorch.

    python examples/gcn_karate.py            # or --quick / SPARSETORCH_EXAMPLES_QUICK=1 for CI
"""

import argparse
import os

import networkx as nx
from tqdm import tqdm

if os.environ.get("SPARSETORCH_EXAMPLES_BACKEND") == "torch":  # the same script on PyTorch
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
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="a short run for CI")
    args = p.parse_args(argv)
    if args.quick or os.environ.get("SPARSETORCH_EXAMPLES_QUICK", "") not in ("", "0"):
        args.epochs = min(args.epochs, 100)

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
    model = GCN(n, args.hidden, len(clubs))
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    losses = []
    for epoch in tqdm(range(args.epochs), desc="training"):
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features, adj)[train_mask], labels[train_mask])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        pred = model(features, adj).argmax(1)
    test = ~train_mask
    correct = int((pred[test] == labels[test]).sum())
    accuracy = correct / int(test.sum())
    wrong = [v for v in range(n) if test[v] and pred[v] != labels[v]]
    print("\nsummary")
    print(f"  epochs              {args.epochs}")
    print(f"  first train loss    {losses[0]:.4f}")
    print(f"  final train loss    {losses[-1]:.4f}")
    print(f"  test accuracy       {accuracy:.4f} ({correct}/{int(test.sum())} unlabelled members)")
    print(f"  misclassified       {wrong}")
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
