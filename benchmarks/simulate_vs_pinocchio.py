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

Run:  pip install -e '.[bench]' && python benchmarks/simulate_vs_pinocchio.py [EVALUATIONS]
"""

import sys
import time

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


def main(evaluations=20_000):
    import pinocchio as pin
    from scipy.integrate import solve_ivp

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
    pmodel = to_pinocchio(robot, values)
    data = pmodel.createData()
    zero = np.zeros(n)

    def theirs(t, x):
        return np.concatenate([x[n:], pin.aba(pmodel, data, x[:n], x[n:], zero)])

    states = np.concatenate([rng.uniform(-np.pi, np.pi, (evaluations, n)), rng.uniform(-2, 2, (evaluations, n))], axis=1)
    worst = max(np.abs(ours(0.0, x) - theirs(0.0, x)).max() / (1 + np.abs(theirs(0.0, x)).max()) for x in states[:200])
    print(f"agreement on 200 states: largest relative difference {worst:.1e}")
    assert worst < 1e-9, worst

    t_ours = best_of(3, lambda: [ours(0.0, x) for x in states])
    t_pin = best_of(3, lambda: [theirs(0.0, x) for x in states])
    rate_ours, rate_pin = evaluations / t_ours, evaluations / t_pin
    print(f"\nright-hand side, Krang ({n} DOF), {evaluations} evaluations, best of 3:")
    print(f"  kanerobot  {rate_ours:12,.0f} evaluations/s  ({1e6 / rate_ours:6.2f} us each)")
    print(f"  pinocchio  {rate_pin:12,.0f} evaluations/s  ({1e6 / rate_pin:6.2f} us each, pin.aba from Python)")
    print(f"  ratio kanerobot / pinocchio: {rate_ours / rate_pin:.2f}  (target >= 1)")

    x0 = np.concatenate([np.random.default_rng(3).uniform(-0.5, 0.5, n), np.zeros(n)])
    options = {"method": "DOP853", "rtol": 1e-10, "atol": 1e-12}
    runs = {}
    for name, f in (("kanerobot", ours), ("pinocchio", theirs)):
        seconds = best_of(3, lambda: runs.__setitem__(name, solve_ivp(f, (0.0, 1.0), x0, **options)))
        runs[name] = (seconds, runs[name])
    (s_ours, r_ours), (s_pin, r_pin) = runs["kanerobot"], runs["pinocchio"]
    gap = np.abs(r_ours.y[:, -1] - r_pin.y[:, -1]).max()
    print(f"\nsolve_ivp, 1 s of passive Krang, {options['method']} rtol {options['rtol']:g}:")
    print(f"  kanerobot  {s_ours:.3f} s ({r_ours.nfev} evaluations)")
    print(f"  pinocchio  {s_pin:.3f} s ({r_pin.nfev} evaluations)")
    print(f"  ratio pinocchio time / kanerobot time: {s_pin / s_ours:.2f}; final states differ by {gap:.1e}")

    result = kr.simulate(fn, None, x0, (0.0, 10.0), rtol=1e-10, atol=1e-12)
    print(f"\nkr.simulate, 10 s of passive Krang, {result.method} rtol 1e-10: {result.nfev} evaluations, {result.seconds:.2f} s")
    print(f"  relative energy drift {result.relative_energy_drift:.2e}  (target < 1e-6; max |E - E(0)| = "
          f"{np.abs(result.energy_drift).max():.2e} J, kinetic energy up to {result.kinetic.max():.1f} J)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
