"""The DataLoader kill loop (``_kill_loop.py``) for 20 s: workers SIGKILLed at random every few
steps, each death reported, every loader shut down, no hang (opt-in: ``-m slow``; CI runs it).
A hang that needs thousands of kills is the script's to find when run for minutes; the
deterministic case of the one it found is ``tests/data/test_worker_hangs.py``'s lock test."""

import json
import os
import subprocess
import sys

import pytest

import sparsetorch as st

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kill_loop.py")


@pytest.mark.slow
def test_kill_loop():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, SCRIPT, "--seconds", "20", "--seed", "3"],
                       capture_output=True, text=True, env=env, timeout=150, check=False)
    assert p.stdout.strip(), p.stderr[-6000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    print("kill loop:", json.dumps(out))
    assert out["errors"] == [] and p.returncode == 0, (out, p.stderr[-3000:])
    assert out["cycles"] >= 20 and out["steps"] >= out["cycles"]
