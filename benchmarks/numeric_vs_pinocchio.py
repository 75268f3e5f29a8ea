"""Batched numeric dynamics against pinocchio, per state, in one run.

For RX-90 and Krang, 10,000 random states: kanerobot's generated numpy code
evaluates the inverse dynamic model and the inertia matrix for the whole
batch at once; the baseline is pinocchio (the `pin` package: rnea and crba)
called in a Python loop over the same states.  The script also checks that
both give the same numbers.  Ratios above 1 mean kanerobot is faster.

Run:  pip install -e '.[bench]' && python benchmarks/numeric_vs_pinocchio.py [N]
"""

import sys
import time

import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.interop import to_pinocchio


def best_of(repeats, function):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(N=10_000):
    import pinocchio as pin

    print(f"{'robot':8s} {'model':16s} {'kanerobot us/state':>19s} {'pinocchio us/state':>19s} {'ratio':>7s} {'max rel diff':>13s}")
    for name in ("rx90", "krang"):
        robot = kr.load(kr.frames_path(name))
        rng = np.random.default_rng(0)
        model = kr.derive(robot)
        values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
        fn = model.numeric(values)
        pmodel = to_pinocchio(robot, values)
        data = pmodel.createData()
        n = robot.nj
        q, qd, qdd = rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-3, 3, (N, n))
        fn.inverse_dynamics(q[:2], qd[:2], qdd[:2]), fn.mass_matrix(q[:2])  # compile once, outside the timing
        ours, tau = best_of(3, lambda: fn.inverse_dynamics(q, qd, qdd))
        theirs, tau_pin = best_of(3, lambda: np.array([pin.rnea(pmodel, data, q[k], qd[k], qdd[k]) for k in range(N)]))
        diff = np.abs(tau - tau_pin).max() / np.abs(tau_pin).max()
        print(f"{name:8s} {'inverse dynamics':16s} {ours / N * 1e6:19.2f} {theirs / N * 1e6:19.2f} {theirs / ours:7.2f} {diff:13.1e}")
        ours, A = best_of(3, lambda: fn.mass_matrix(q))
        theirs, A_pin = best_of(3, lambda: np.array([pin.crba(pmodel, data, q[k]) for k in range(N)]))
        A_pin = np.triu(A_pin) + np.transpose(np.triu(A_pin, 1), (0, 2, 1))
        diff = np.abs(A - A_pin).max() / np.abs(A_pin).max()
        print(f"{name:8s} {'mass matrix':16s} {ours / N * 1e6:19.2f} {theirs / N * 1e6:19.2f} {theirs / ours:7.2f} {diff:13.1e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
