"""Batched numeric dynamics against pinocchio, per state, in one run.

For RX-90 and Krang, 10,000 random states: kanerobot's generated code
evaluates the inverse dynamic model and the inertia matrix for the whole
batch at once, with both backends of `model.numeric`: numpy (vectorized
numpy source) and c (C compiled with the system compiler, one call looping
over the batch); the baseline is pinocchio (the `pin` package: rnea and
crba) called in a Python loop over the same states.  The script also checks
that all give the same numbers.  Ratios are pinocchio's time over
kanerobot's: above 1 means kanerobot is faster.  The C backend is skipped
(and said so) when there is no C compiler.  Without pinocchio the script says
so in one line, times kanerobot's backends alone, and exits with status 2
(``needs``).

Run:  pip install -e '.[bench]' && python benchmarks/numeric_vs_pinocchio.py [N]
"""

import importlib
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
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


def pinocchio_comparable(name):
    """``(robot, model, values, rng)`` of library robot ``name``: its Newton-Euler model and
    random parameters without friction, rotor inertia or wrench (what pinocchio models),
    drawn from ``rng`` (seed 0), which goes on to draw the states."""
    robot = kr.load(kr.frames_path(name))
    rng = np.random.default_rng(0)
    model = kr.derive(robot)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    return robot, model, values, rng


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio's rnea and crba"))


def main(N=10_000):
    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")
    header = (
        f"{'robot':8s} {'model':16s} {'numpy us/state':>15s} {'c us/state':>11s} {'pinocchio us/state':>19s}"
        f" {'pin/numpy':>10s} {'pin/c':>7s} {'max rel diff':>13s}"
    )
    print(header)
    for name in ("rx90", "krang"):
        robot, model, values, rng = pinocchio_comparable(name)
        backends = {"numpy": model.numeric(values, backend="numpy"), "c": model.numeric(values, backend="auto")}
        if backends["c"].backend != "c":
            print(f"{name}: no C backend ({backends['c'].fallback_reason})", file=sys.stderr)
            del backends["c"]
        pmodel = data = None  # without pinocchio: kanerobot's side only
        if pin is not None:
            pmodel = to_pinocchio(robot, values)
            data = pmodel.createData()
        n = robot.nj
        q, qd, qdd = rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-3, 3, (N, n))
        for fn in backends.values():
            fn.inverse_dynamics(q[:2], qd[:2], qdd[:2]), fn.mass_matrix(q[:2])  # compile once, outside the timing

        # this round's arrays bound as defaults: the closures run within the round
        def rnea(pmodel=pmodel, data=data, q=q, qd=qd, qdd=qdd):
            return np.array([pin.rnea(pmodel, data, q[k], qd[k], qdd[k]) for k in range(N)])

        def crba(pmodel=pmodel, data=data, q=q):
            A = np.array([pin.crba(pmodel, data, q[k]) for k in range(N)])
            return np.triu(A) + np.transpose(np.triu(A, 1), (0, 2, 1))  # crba fills the upper triangle

        cases = [
            ("inverse dynamics", lambda fn, q=q, qd=qd, qdd=qdd: fn.inverse_dynamics(q, qd, qdd), rnea),
            ("mass matrix", lambda fn, q=q: fn.mass_matrix(q), crba),
        ]
        for label, ours, theirs in cases:
            # without pinocchio: kanerobot's times, the pinocchio columns nan
            reference_time, reference = best_of(3, theirs) if pin is not None else (float("nan"), None)
            times, diff = {}, 0.0 if pin is not None else float("nan")
            for key, fn in backends.items():
                times[key], result = best_of(3, lambda ours=ours, fn=fn: ours(fn))
                if reference is not None:
                    diff = max(diff, np.abs(result - reference).max() / np.abs(reference).max())
            per_state = {key: times[key] / N * 1e6 if key in times else float("nan") for key in ("numpy", "c")}
            ratio = {key: reference_time / times[key] if key in times else float("nan") for key in ("numpy", "c")}
            print(
                f"{name:8s} {label:16s} {per_state['numpy']:15.2f} {per_state['c']:11.2f} {reference_time / N * 1e6:19.2f}"
                f" {ratio['numpy']:10.2f} {ratio['c']:7.2f} {diff:13.1e}"
            )
    return status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
