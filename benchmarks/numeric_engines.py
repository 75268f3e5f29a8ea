"""Numeric Kane functions against Newton-Euler ones, over 10,000 Krang states.

Both engines' models are evaluated by generated code (numpy and compiled C
backends) on the same batch; the baseline is the Newton-Euler engine.  A
ratio (Kane time / Newton-Euler time) of at most 1 meets the issue's target
"no slower than the Newton-Euler ones".  Lagrange is shown for reference.

Run:  python benchmarks/numeric_engines.py [N]
"""

import sys
import time

import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

MODELS = ("inverse_dynamics", "mass_matrix", "coriolis_matrix", "gravity")


def best_of(repeats, function):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(N=10_000):
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
    print(f"{'backend':8s} {'model':17s} {'newton-euler us':>16s} {'kane us':>9s} {'lagrange us':>12s} {'kane/NE':>8s}")
    worst = 0.0
    for backend in ("c", "numpy"):
        functions = {m: kr.derive(robot, method=m).numeric(values, backend=backend) for m in ("newton-euler", "kane", "lagrange")}
        if any(fn.backend != backend for fn in functions.values()):
            print(f"{backend:8s} (not available: {functions['kane'].fallback_reason})")
            continue
        for name in MODELS:
            for fn in functions.values():
                calls[name](fn)  # compile outside the timing
            t = {m: best_of(3, lambda fn=fn: calls[name](fn)) / N * 1e6 for m, fn in functions.items()}
            ratio = t["kane"] / t["newton-euler"]
            worst = max(worst, ratio)
            print(f"{backend:8s} {name:17s} {t['newton-euler']:16.2f} {t['kane']:9.2f} {t['lagrange']:12.2f} {ratio:8.2f}")
    print(f"\nTarget: Kane no slower than Newton-Euler (ratio <= 1): worst ratio {worst:.2f} -> {'met' if worst <= 1 else 'NOT met'}")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
