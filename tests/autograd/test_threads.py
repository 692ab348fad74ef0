"""Backward from several Python threads: accumulation into a shared leaf is serialised per leaf
(torch's AccumulateGrad lock), so no update is lost; sums are exact (integer-valued floats)."""

import threading

import sparsetorch as torch

THREADS = 8
ITERS = 150


def _run_threads(fn):
    errors = []

    def wrap(k):
        try:
            fn(k)
        except BaseException as e:  # surfaced below, with the thread's error
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(k,)) for k in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_dense_leaf_shared_by_threads():
    w = torch.zeros(16, 8, requires_grad=True)
    x = torch.arange(128, dtype=torch.float32).reshape(16, 8)

    def work(k):
        for _ in range(ITERS):
            (w * x).sum().backward()

    _run_threads(work)
    assert torch.equal(w.grad, x * (THREADS * ITERS))


def test_sparse_embedding_grad_shared_by_threads():
    emb = torch.nn.Embedding(40, 3, sparse=True)
    ids = torch.tensor([1, 2, 3, 2, 39])

    def work(k):
        for _ in range(ITERS):
            emb(ids).sum().backward()

    _run_threads(work)
    g = emb.weight.grad
    assert g.is_sparse
    want = torch.zeros(40, 3)
    want[1] = want[3] = want[39] = THREADS * ITERS
    want[2] = 2 * THREADS * ITERS
    assert torch.equal(g.to_dense(), want)


def test_retain_graph_one_graph_many_threads():
    a = torch.ones(6, requires_grad=True)
    b = torch.nn.Embedding(10, 2, sparse=True)
    y = (a * 3.0).sum() + b(torch.tensor([4, 4, 7])).sum() * 0 + b(torch.tensor([5])).sum()

    def work(k):
        for _ in range(ITERS):
            y.backward(retain_graph=True)

    _run_threads(work)
    assert torch.equal(a.grad, torch.full((6,), 3.0 * THREADS * ITERS))
    g = b.weight.grad.to_dense()
    assert g[5].tolist() == [float(THREADS * ITERS)] * 2
    assert g[4].tolist() == [0.0, 0.0] and g[0].tolist() == [0.0, 0.0]


def test_independent_graphs_in_parallel_are_exact():
    leaves = [torch.zeros(50, requires_grad=True) for _ in range(THREADS)]

    def work(k):
        x = torch.full((50,), float(k + 1))
        for _ in range(ITERS):
            (leaves[k] * x).sum().backward()

    _run_threads(work)
    for k, leaf in enumerate(leaves):
        assert torch.equal(leaf.grad, torch.full((50,), float((k + 1) * ITERS)))


def test_queue_callback_stays_with_its_thread():
    from sparsetorch.autograd import engine

    counts = [0] * THREADS
    w = torch.ones(3, requires_grad=True)

    class Tap(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            k = ctx.k

            def done():
                counts[k] += 1

            engine.queue_callback(done)
            return g, None

    def work(k):
        for _ in range(ITERS // 3):
            Tap.apply(w, k).sum().backward()

    _run_threads(work)
    assert counts == [ITERS // 3] * THREADS
    assert torch.equal(w.grad, torch.full((3,), float(THREADS * (ITERS // 3))))
