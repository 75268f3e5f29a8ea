"""Numeric Kane functions against Newton-Euler ones, over 10,000 Krang states.

Both engines' models are evaluated by generated code (numpy and compiled C
backends) on the same batch; the baseline is the Newton-Euler engine.  A
ratio (Kane time / Newton-Euler time) of at most 1 meets the issue's target
"no slower than the Newton-Euler ones".  Lagrange is shown for reference.

The machine may be shared: times are CPU times of this process
(``time.process_time``; every backend runs in this one thread), each the
best of 3 calls in a row repeated over ``--rounds`` rounds, the engines in
turn in each round, so that a slow spell weighs on all the engines alike
rather than on whichever ran during it (see :func:`interleaved_best`); with
glibc the allocator keeps freed memory (:func:`keep_heap`), so that numpy
times do not depend on what ran before.  The operation counts of the programs
(``DynamicModel.op_count``) follow.

Run:  python benchmarks/numeric_engines.py [N] [--rounds R]
"""

import argparse
import ctypes
import sys
import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

MODELS = ("inverse_dynamics", "mass_matrix", "coriolis_matrix", "gravity")
METHODS = ("newton-euler", "kane", "lagrange")


def keep_heap():
    """Ask glibc's allocator to keep freed memory (no trimming, no mmap under
    32 MB); False elsewhere.

    A numpy model allocates one array per line of its program (80 kB each for
    10,000 states, tens of MB in all) and frees them on return.  By default
    glibc hands that memory back to the system or not depending on what ran
    before (its thresholds move with the largest block freed so far), and the
    next call's page faults can double its time: the same function then
    measures 2 or 4 us per state from one run to the next.  Kept memory gives
    every engine the same, steady conditions.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        return bool(libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) and libc.mallopt(M_MMAP_THRESHOLD, 1 << 25))
    except (OSError, AttributeError):
        return False


def interleaved_best(rounds, functions, repeats=3):
    """Best time of each of ``functions`` ({key: callable}) over ``rounds``
    rounds; in each round every function is called ``repeats`` times in a
    row, the functions in turn, the order turning by one each round.  Calls
    in a row find the memory as the function itself left it (a numpy call
    runs slower right after a call that used a different amount: the
    allocator hands memory back and takes it again), and rounds spread each
    function's calls over the whole run."""
    best = dict.fromkeys(functions, float("inf"))
    keys = list(functions)
    for round_ in range(rounds):
        shift = round_ % len(keys)
        for key in keys[shift:] + keys[:shift]:
            for _ in range(repeats):
                start = time.process_time()
                functions[key]()
                best[key] = min(best[key], time.process_time() - start)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("N", nargs="?", type=int, default=10_000, help="states in the batch (default 10,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of 3 calls per engine, best kept (default 3)")
    args = parser.parse_args(argv)
    kept = keep_heap()
    N = args.N
    robot = kr.load(kr.frames_path("krang"))
    rng = np.random.default_rng(0)
    values = random_parameters(robot, rng)
    n = robot.nj
    q, qd, qdd = rng.uniform(-1, 1, (3, N, n))
    calls = {
        "inverse_dynamics": lambda fn: fn.inverse_dynamics(q, qd, qdd),
        "mass_matrix": lambda fn: fn.mass_matrix(q),
        "coriolis_matrix": lambda fn: fn.coriolis_matrix(q, qd),
        "gravity": lambda fn: fn.gravity(q),
    }
    models = {m: kr.derive(robot, method=m) for m in METHODS}
    print(f"{'backend':8s} {'model':17s} {'newton-euler us':>16s} {'kane us':>9s} {'lagrange us':>12s} {'kane/NE':>8s}")
    worst = 0.0
    for backend in ("c", "numpy"):
        functions = {m: model.numeric(values, backend=backend) for m, model in models.items()}
        if any(fn.backend != backend for fn in functions.values()):
            print(f"{backend:8s} (not available: {functions['kane'].fallback_reason})")
            continue
        for name in MODELS:
            for fn in functions.values():
                calls[name](fn)  # compile outside the timing
            best = interleaved_best(args.rounds, {m: (lambda fn=fn, name=name: calls[name](fn)) for m, fn in functions.items()})
            t = {m: seconds / N * 1e6 for m, seconds in best.items()}
            ratio = t["kane"] / t["newton-euler"]
            worst = max(worst, ratio)
            print(f"{backend:8s} {name:17s} {t['newton-euler']:16.2f} {t['kane']:9.2f} {t['lagrange']:12.2f} {ratio:8.2f}")
    print()
    print("Operations (mul / add / functions):")
    for name in MODELS:
        line = f"  {name:17s}"
        for m in ("newton-euler", "kane"):
            c = models[m].op_count(name)
            line += f"  {m} {c['mul']:5d} / {c['add']:5d} / {c['fn']:3d}"
        print(line)
    print(f"\nnumpy temporaries: {'freed memory kept by the allocator' if kept else 'default allocator settings'}")
    print(f"\nTarget: Kane no slower than Newton-Euler (ratio <= 1): worst ratio {worst:.2f} -> {'met' if worst <= 1 else 'NOT met'}")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
