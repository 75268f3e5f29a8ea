"""Simulating Krang (17 DOF): kanerobot's right-hand side against pinocchio's ABA, in one run.

Two numbers of issue 6, measured here:

1. Right-hand-side evaluations per second.  kanerobot's is the function
   ``kr.simulate`` integrates (``kanerobot.simulation.right_hand_side``: the
   recursive direct dynamic model generated as C and called on bound
   buffers); the baseline is a right-hand side built on pinocchio's
   articulated-body algorithm (``pin.aba``, the ``pin`` package) called from
   Python, ``xdot = (v, aba(q, v, 0))``.  Both are checked to agree, then
   timed on the same random states; the ratio is kanerobot's rate over
   pinocchio's (above 1: kanerobot faster; the target is at least 1).  The
   same comparison is made inside ``solve_ivp`` (1 s of passive motion, the
   same method and tolerances): integration time and the ratio.
2. Energy drift over 10 s of passive Krang motion at rtol 1e-10
   (``kr.simulate``; target below 1e-6 relative).

Rotor inertias, friction and external wrenches are zero (pinocchio's model
from ``kanerobot.interop.to_pinocchio`` has none).  Without a C compiler the
numpy backend runs (and the script says so).

Without pinocchio the script says so in one line, measures kanerobot's side
alone (evaluations per second, the solve_ivp run and the energy drift), and
exits with status 2 (``needs``).

Run:  pip install -e '.[bench]' && python benchmarks/simulate_vs_pinocchio.py [EVALUATIONS]
"""

import importlib
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.interop import to_pinocchio
from kanerobot.simulation import right_hand_side


def best_of(repeats, function):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("every comparison with pinocchio's ABA"))


def main(evaluations=20_000):
    from scipy.integrate import solve_ivp

    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")

    robot = kr.load(kr.frames_path("krang"))
    n = robot.nj
    rng = np.random.default_rng(17)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    values["G3"] = -9.81
    model = kr.derive(robot)
    start = time.perf_counter()
    fn = model.numeric(values)
    ours = right_hand_side(fn)
    ours(0.0, np.zeros(2 * n))  # compile (or load from the cache) outside the timing
    print(f"kanerobot: backend {fn.backend}{'' if fn.backend == 'c' else f' ({fn.fallback_reason})'}, "
          f"ready in {time.perf_counter() - start:.1f} s")
    right_hand_sides = {"kanerobot": ours}
    if pin is not None:
        pmodel = to_pinocchio(robot, values)
        data = pmodel.createData()
        zero = np.zeros(n)

        def theirs(t, x):
            return np.concatenate([x[n:], pin.aba(pmodel, data, x[:n], x[n:], zero)])

        right_hand_sides["pinocchio"] = theirs

    states = np.concatenate([rng.uniform(-np.pi, np.pi, (evaluations, n)), rng.uniform(-2, 2, (evaluations, n))], axis=1)
    if pin is not None:
        worst = max(np.abs(ours(0.0, x) - theirs(0.0, x)).max() / (1 + np.abs(theirs(0.0, x)).max()) for x in states[:200])
        print(f"agreement on 200 states: largest relative difference {worst:.1e}")
        assert worst < 1e-9, worst

    rates = {name: evaluations / best_of(3, lambda f=f: [f(0.0, x) for x in states]) for name, f in right_hand_sides.items()}
    print(f"\nright-hand side, Krang ({n} DOF), {evaluations} evaluations, best of 3:")
    print(f"  kanerobot  {rates['kanerobot']:12,.0f} evaluations/s  ({1e6 / rates['kanerobot']:6.2f} us each)")
    if pin is not None:
        print(f"  pinocchio  {rates['pinocchio']:12,.0f} evaluations/s  ({1e6 / rates['pinocchio']:6.2f} us each, pin.aba from Python)")
        print(f"  ratio kanerobot / pinocchio: {rates['kanerobot'] / rates['pinocchio']:.2f}  (target >= 1)")

    x0 = np.concatenate([np.random.default_rng(3).uniform(-0.5, 0.5, n), np.zeros(n)])
    options = {"method": "DOP853", "rtol": 1e-10, "atol": 1e-12}
    runs = {}
    for name, f in right_hand_sides.items():
        seconds = best_of(3, lambda name=name, f=f: runs.__setitem__(name, solve_ivp(f, (0.0, 1.0), x0, **options)))
        runs[name] = (seconds, runs[name])
    print(f"\nsolve_ivp, 1 s of passive Krang, {options['method']} rtol {options['rtol']:g}:")
    for name, (seconds, run) in runs.items():
        print(f"  {name:10s} {seconds:.3f} s ({run.nfev} evaluations)")
    if pin is not None:
        (s_ours, r_ours), (s_pin, r_pin) = runs["kanerobot"], runs["pinocchio"]
        gap = np.abs(r_ours.y[:, -1] - r_pin.y[:, -1]).max()
        print(f"  ratio pinocchio time / kanerobot time: {s_pin / s_ours:.2f}; final states differ by {gap:.1e}")

    result = kr.simulate(fn, None, x0, (0.0, 10.0), rtol=1e-10, atol=1e-12)
    print(f"\nkr.simulate, 10 s of passive Krang, {result.method} rtol 1e-10: {result.nfev} evaluations, {result.seconds:.2f} s")
    print(f"  relative energy drift {result.relative_energy_drift:.2e}  (target < 1e-6; max |E - E(0)| = "
          f"{np.abs(result.energy_drift).max():.2e} J, kinetic energy up to {result.kinetic.max():.1f} J)")
    return status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000))
