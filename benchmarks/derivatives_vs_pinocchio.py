"""Analytic derivatives of the dynamics against pinocchio's, per call, in one run.

For the RX-90 (6 joints), Krang (17 joints, a tree) and the satellite (a
free flyer and 3 joints, frames/satellite.par): kanerobot's generated
programs ``inverse_dynamics_derivatives`` ([dtau/dq, dtau/dqd]) and
``direct_dynamics_derivatives`` ([dqdd/dq, dqdd/dqd, dqdd/dtau]), compiled
to C, on one state (``fn.<model>(q, qd, x)``, the Python call included)
and on a batch of N states (time per state), against pinocchio's
``computeRNEADerivatives`` and ``computeABADerivatives`` called in a Python
loop over the same states (the baseline).  Ratios are pinocchio's time over
kanerobot's: above 1 means kanerobot is faster.  Each time is the best of
5 repeats in this run.  The script prints each program's operation
counts (multiplications/additions; the derivation time too) and the
largest absolute difference from pinocchio's results.  Without pinocchio
it says so in one line, prints the op counts and kanerobot's times alone,
and exits with status 2 (``needs``).  Without a C compiler the numpy
backend is timed (and said so).

pinocchio's models come from ``kanerobot.interop.to_pinocchio`` (for the
satellite, a free flyer carrying link 0, then the joints).

Run:  pip install -e '.[test,bench]' && python benchmarks/derivatives_vs_pinocchio.py [N]
"""

import importlib
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np
from numeric_vs_pinocchio import best_of, pinocchio_comparable  # beside this script, as needs

from kanerobot.interop import to_pinocchio

ROBOTS = ("rx90", "krang", "satellite")
MODELS = ("inverse_dynamics_derivatives", "direct_dynamics_derivatives")


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio's computeRNEADerivatives and computeABADerivatives"))


def states(model, rng, N):
    q = rng.uniform(-np.pi, np.pi, (N, model.nq))
    if model.nq != model.nv:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return q, rng.uniform(-2, 2, (N, model.nv)), rng.uniform(-3, 3, (N, model.nv)), rng.uniform(-5, 5, (N, model.n))


def pinocchio_calls(pin, pmodel, data, model, q, qd, qdd, tau):
    """The two derivative functions of pinocchio on every state, in kanerobot's blocks."""
    full = np.concatenate([np.zeros((len(tau), model.nv - model.n)), tau], axis=1)
    base = model.nv - model.n

    def rnea(q=q, qd=qd, qdd=qdd):
        return [tuple(np.array(x) for x in pin.computeRNEADerivatives(pmodel, data, q[k], qd[k], qdd[k])[:2]) for k in range(len(q))]

    def aba(q=q, qd=qd, full=full):
        out = []
        for k in range(len(q)):
            pin.computeABADerivatives(pmodel, data, q[k], qd[k], full[k])
            Minv = np.triu(data.Minv) + np.triu(data.Minv, 1).T
            out.append((data.ddq_dq.copy(), data.ddq_dv.copy(), Minv[:, base:]))
        return out

    return {"inverse_dynamics_derivatives": rnea, "direct_dynamics_derivatives": aba}


def main(N=1000):
    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")
    print(f"{'robot':10s} {'model':29s} {'mul/add':>12s} {'derive s':>8s} {'one us':>8s} {'batch us':>9s} "
          f"{'pin us':>8s} {'pin/one':>8s} {'pin/batch':>9s} {'max abs diff':>13s}")
    for name in ROBOTS:
        robot, model, values, rng = pinocchio_comparable(name)
        fn = model.numeric(values, backend="auto")
        if fn.backend != "c":
            print(f"{name}: no C backend, numpy timed ({fn.fallback_reason})", file=sys.stderr)
        q, qd, qdd, tau = states(model, rng, N)
        third = {"inverse_dynamics_derivatives": qdd, "direct_dynamics_derivatives": tau}
        theirs = {}
        if pin is not None:
            pmodel = to_pinocchio(robot, values)
            theirs = pinocchio_calls(pin, pmodel, pmodel.createData(), model, q, qd, qdd, tau)
        for label in MODELS:
            start = time.perf_counter()
            counts = model.op_count(label)
            derivation = time.perf_counter() - start
            function = getattr(fn, label)
            x = third[label]
            function(q[:2], qd[:2], x[:2])  # compile once, outside the timing
            one, _ = best_of(5, lambda function=function, q=q, qd=qd, x=x: [function(q[k], qd[k], x[k]) for k in range(min(100, N))])
            one /= min(100, N)
            batch, ours = best_of(5, lambda function=function, q=q, qd=qd, x=x: function(q, qd, x))
            batch /= N
            reference_time, diff = float("nan"), float("nan")
            if label in theirs:
                reference_time, reference = best_of(5, theirs[label])
                reference_time /= N
                diff = max(float(np.abs(block[k] - expected).max()) for k, row in enumerate(reference) for block, expected in zip(ours, row))
            print(f"{name:10s} {label:29s} {counts['mul']:>6d}/{counts['add']:<5d} {derivation:8.2f} {one * 1e6:8.2f} "
                  f"{batch * 1e6:9.3f} {reference_time * 1e6:8.2f} {reference_time / one:8.2f} {reference_time / batch:9.2f} {diff:13.1e}",
                  flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
