"""Run the fuzz targets for a bounded time each and report executions and findings.

    python tests/fuzz/run.py --seconds 600                      # every target, one after another
    python tests/fuzz/run.py --seconds 600 sparse_coo_tensor load
    python tests/fuzz/run.py --seconds 5 --json out.json        # CI smoke run

Each target (``tests/fuzz/fuzz_<name>.py``) runs in its own process under atheris with
``-max_total_time``. A finding (an undocumented exception or a wrong result, see ``_common.py``)
stops that target; its input is saved under ``--artifacts`` (reproduce with
``python tests/fuzz/fuzz_<name>.py <file>``). Exit status 1 when any target had a finding.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = ["sparse_coo_tensor", "sparse_csr_tensor", "load", "default_collate"]


def available():
    return [t for t in TARGETS if os.path.exists(os.path.join(HERE, f"fuzz_{t}.py"))]


def run_target(name, seconds, artifacts, corpus=None, extra=()):
    """Fuzz one target for ``seconds``; returns a dict of figures (executions, findings, ...)."""
    os.makedirs(artifacts, exist_ok=True)
    cmd = [sys.executable, os.path.join(HERE, f"fuzz_{name}.py"), f"-max_total_time={seconds}",
           f"-artifact_prefix={os.path.join(artifacts, name)}-", "-print_final_stats=1", *extra]
    if corpus:
        os.makedirs(os.path.join(corpus, name), exist_ok=True)
        cmd.append(os.path.join(corpus, name))
    t0 = time.time()
    # the first inputs compile numba kernels: allow a grace period beyond -max_total_time
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 300, check=False)
    out = proc.stdout + proc.stderr
    execs = [int(m) for m in re.findall(r"^#(\d+)\s", out, re.MULTILINE)]
    done = re.search(r"Done (\d+) runs", out)
    stat = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    n = int(done.group(1)) if done else int(stat.group(1)) if stat else (max(execs) if execs else 0)
    findings = []
    if proc.returncode != 0:
        exc = re.search(r"=== Uncaught Python exception: ===\n(.*)", out)
        unit = re.search(r"Test unit written to (\S*crash-\S+)", out) or re.search(r"Test unit written to (\S+)", out)
        findings.append({
            "exception": exc.group(1) if exc else out.strip().splitlines()[-1:],
            "input": unit.group(1) if unit else None,
        })
    return {"target": name, "seconds": round(time.time() - t0, 1), "executions": n,
            "findings": findings, "returncode": proc.returncode,
            "log_tail": out[-3000:] if findings else ""}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", help=f"targets to run (default: all of {available()})")
    ap.add_argument("--seconds", type=int, default=10, help="fuzzing time per target")
    ap.add_argument("--artifacts", default=None, help="where finding inputs go (default: a temp dir)")
    ap.add_argument("--corpus", default=None, help="keep each target's corpus under this dir")
    ap.add_argument("--json", default=None, help="write the figures as JSON here")
    a = ap.parse_args(argv)
    targets = a.targets or available()
    unknown = [t for t in targets if t not in available()]
    if unknown:
        ap.error(f"unknown target(s) {unknown}; available: {available()}")
    artifacts = a.artifacts or tempfile.mkdtemp(prefix="sparsetorch-fuzz-")
    results = []
    for t in targets:
        r = run_target(t, a.seconds, artifacts, a.corpus)
        results.append(r)
        status = "no findings" if not r["findings"] else f"FINDING: {r['findings'][0]['exception']} " \
            f"(input {r['findings'][0]['input']})"
        print(f"{t:20s} {r['seconds']:8.1f} s {r['executions']:10d} executions  {status}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any(r["findings"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
