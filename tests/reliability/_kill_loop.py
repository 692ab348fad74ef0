"""DataLoader kill loop (also runnable alone):

    python tests/reliability/_kill_loop.py --seconds 240 --seed 3

The soak's model and data (``_soak.py``), without checkpoints, at the highest rate of worker
deaths: each cycle starts a loader with two forked workers, trains 1-6 steps, SIGKILLs a worker
at random, trains until the loader reports it ("exited unexpectedly"), and shuts the loader
down. The loader polls its workers every 20 ms instead of every second, so a cycle takes
~50 ms: a race that hangs one cycle in thousands shows up in minutes. Prints one JSON line
(cycles, steps, errors); a hang ends the run through faulthandler (every thread's stack on
stderr, exit 1) after ``--seconds`` + 60 s.

It found the hang of CI's 180 s soak: the main process waiting forever in the workers' shutdown
flag (a ``multiprocessing.Event``), whose lock a worker killed inside ``is_set()`` still held,
once in ~4,000 cycles.
"""

import argparse
import faulthandler
import json
import os
import random
import signal
import sys
import time

import _soak

from sparsetorch.utils.data import _multiprocessing


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    _multiprocessing.STATUS_CHECK_INTERVAL = 0.02  # a dead worker is noticed within 20 ms
    faulthandler.dump_traceback_later(a.seconds + 60, exit=True)
    rnd = random.Random(a.seed)
    step_on = _soak.training(a.seed)[3]
    cycles, steps, errors = 0, 0, []
    t0 = time.monotonic()
    while time.monotonic() - t0 < a.seconds and not errors:
        it = iter(_soak._loader(steps, 2, 64, 30.0))
        kill_in = rnd.randint(1, 6)
        try:
            while True:
                step_on(*next(it))
                steps += 1
                kill_in -= 1
                if kill_in == 0:
                    os.kill(rnd.choice(it._workers).pid, signal.SIGKILL)
                if kill_in < -20:
                    errors.append("a killed worker was not reported within 20 batches")
                    break
        except RuntimeError as e:
            if "exited unexpectedly" not in str(e):
                errors.append(f"unexpected loader error: {e}")
        finally:
            it._shutdown_workers()
        cycles += 1
    out = {"seconds": round(time.monotonic() - t0, 1), "cycles": cycles, "steps": steps,
           "errors": errors}
    print(json.dumps(out), flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
