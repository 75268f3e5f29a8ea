"""One state from Python against pinocchio's Python binding, in one run.

For the RX-90 and Krang, with random physical parameters (no friction, no
rotor inertia, as pinocchio models them): kanerobot's numeric functions with
the C backend called on one state (``fn.inverse_dynamics(q, qd, qdd)``,
``fn.mass_matrix(q)``, ``fn.direct_dynamics(q, qd, tau)``, 1-D numpy
arrays), against ``pin.rnea``, ``pin.crba`` and ``pin.aba`` on the same
robot and parameters.  Times are the best of several rounds of a few
thousand calls, ours and pinocchio's taken in turn so that both see the
same load.  The ratio is ours over pinocchio's: the target (issue 16) is at
most 1.5.  The script checks that both give the same numbers.

For reference it also times the same state through the batch path (a
``(1, n)`` batch: what a one-state call cost before the extension of
:mod:`kanerobot.codegen.extension`) and a batch of N states (us per state;
``benchmarks/numeric_vs_pinocchio.py`` compares batches with pinocchio).
Without a C compiler the numpy backend is timed and said so; without
pinocchio, our side alone, then exit status 2 (``needs``).

Run:  pip install -e '.[bench]' && python benchmarks/one_state_vs_pinocchio.py [N]
"""

import importlib
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np
from numeric_vs_pinocchio import pinocchio_comparable  # beside this script, as needs

from kanerobot.interop import to_pinocchio

#: Target of issue 16: one state at most this many times pinocchio's binding.
TARGET = 1.5
ROUNDS = 7
CALLS = 2_000


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio's rnea, crba and aba"))


def per_call(function, calls=CALLS):
    """Seconds of one call of ``function``, from one round of ``calls``."""
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def best_in_turn(functions, rounds=ROUNDS):
    """Best per-call time of each function, the functions timed in turn in every round."""
    best = [float("inf")] * len(functions)
    for _ in range(rounds):
        for k, function in enumerate(functions):
            if function is not None:
                best[k] = min(best[k], per_call(function))
    return [t if t < float("inf") else float("nan") for t in best]


def cases(fn, pin, pmodel, data, q, qd, qdd, tau):
    """(label, ours, pinocchio's, how pinocchio's result compares with ours)."""
    if pin is None:
        rnea = crba = aba = None
    else:

        def rnea():
            return pin.rnea(pmodel, data, q, qd, qdd)

        def crba():
            return pin.crba(pmodel, data, q)

        def aba():
            return pin.aba(pmodel, data, q, qd, tau)

    def symmetric(A):  # crba fills the upper triangle
        return np.triu(A) + np.triu(A, 1).T

    return [
        ("idm", lambda: fn.inverse_dynamics(q, qd, qdd), rnea, lambda: fn.inverse_dynamics(q[None], qd[None], qdd[None]), None),
        ("A", lambda: fn.mass_matrix(q), crba, lambda: fn.mass_matrix(q[None]), symmetric),
        ("ddm", lambda: fn.direct_dynamics(q, qd, tau), aba, lambda: fn.direct_dynamics(q[None], qd[None], tau[None]), None),
    ]


def batched(fn, label, N, n, rng):
    """Microseconds per state of a batch of ``N`` states."""
    q, qd, x = rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-3, 3, (N, n))
    call = {
        "idm": lambda: fn.inverse_dynamics(q, qd, x),
        "A": lambda: fn.mass_matrix(q),
        "ddm": lambda: fn.direct_dynamics(q, qd, x),
    }[label]
    return min(per_call(call, 1) for _ in range(5)) / N * 1e6


def main(N=10_000):
    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")
    print(
        f"{'robot':6s} {'model':5s} {'ours us/call':>12s} {'pin us/call':>11s} {'ours/pin':>9s} {'target':>7s}"
        f" {'batch path 1 state us':>22s} {f'batch of {N} us/state':>22s} {'max rel diff':>13s}"
    )
    met = []
    for name in ("rx90", "krang"):
        robot, model, values, rng = pinocchio_comparable(name)
        fn = model.numeric(values, backend="auto")
        if fn.backend != "c":
            print(f"{name}: no C backend ({fn.fallback_reason}): numpy timed instead", file=sys.stderr)
        pmodel = data = None
        if pin is not None:
            pmodel = to_pinocchio(robot, values)
            data = pmodel.createData()
        n = robot.nj
        q, qd, qdd, tau = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n), rng.uniform(-20, 20, n)
        for label, ours, theirs, batch_path, adjust in cases(fn, pin, pmodel, data, q, qd, qdd, tau):
            result = ours()  # compiles the model, outside the timing
            diff = float("nan")
            if theirs is not None:
                reference = theirs()
                reference = adjust(reference) if adjust else reference
                diff = np.abs(result - reference).max() / np.abs(reference).max()
            mine, pins, old = best_in_turn([ours, theirs, batch_path])
            ratio = mine / pins
            verdict = "met" if ratio <= TARGET else ("not met" if ratio == ratio else "-")
            met.append(verdict)
            print(
                f"{name:6s} {label:5s} {mine * 1e6:12.2f} {pins * 1e6:11.2f} {ratio:9.2f} {verdict:>7s}"
                f" {old * 1e6:22.2f} {batched(fn, label, N, n, rng):22.3f} {diff:13.1e}"
            )
        if fn.fast_call_fallback:
            print(f"{name}: one-state calls through ctypes: {fn.fast_call_fallback}", file=sys.stderr)
    print(f"target ours/pin <= {TARGET}: {met.count('met')} of {len(met)} met")
    return status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
