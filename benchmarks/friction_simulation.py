"""Simulating Coulomb friction: the passive RX-90 with FS = 1 on every joint against the same run without it.

Issue 13 (defect 2): with the model's own ``FS sign(qd)`` the passive RX-90
reached t = 1e-4 s of 1 s after a minute (the step size collapses where a
joint stops).  ``kr.simulate`` now applies Coulomb friction itself: a
regularised law ``FS tanh(qd / v_s)`` by default, or exact stick-slip with
events (``friction="stick-slip"``).  Measured here, in one run: the wall
time of ``kr.simulate`` over 1 s of passive motion from rest at q = 0 (best
of 3, the numeric model built and compiled before the timing) with FS = 1
on every joint, divided by the same run with FS = 0 (the baseline; viscous
friction and every other value the same).  Target: at most 20.

Two sets of values: the README's "all parameters 1.0" RX-90 and
``random_parameters`` (seed 0) with FS set to 1.  The final states of the
two laws are compared too (they differ by the creep of the regularised law,
of the order of ``v_s`` times the run).

Run:  python benchmarks/friction_simulation.py
"""

import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.simulation import DEFAULT_FRICTION_VELOCITY

LAWS = ("regularised", "stick-slip")


def best_of(repeats, function):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def run(model, values, friction, repeats=3):
    # the README's old "all parameters 1.0" are not a physical robot: bound without the physical check
    fn = model.numeric(values, physical=False)
    x0 = np.zeros(12)
    kr.simulate(fn, None, x0, (0.0, 0.01), friction=friction)  # compile (or load) the models outside the timing
    return best_of(repeats, lambda: kr.simulate(fn, None, x0, (0.0, 1.0), friction=friction))


def main():
    robot = kr.load(kr.frames_path("rx90"))
    model = kr.derive(robot)
    ones = {name: 1.0 for name in model.parameters}
    drawn = random_parameters(robot, np.random.default_rng(0))
    drawn.update({name: 1.0 for name in drawn if name.startswith("FS")})
    print(f"passive RX-90, 1 s from rest at q = 0, kr.simulate defaults (DOP853, LSODA under regularised friction, rtol 1e-8), backend "
          f"{model.numeric(ones, physical=False).backend}; regularised v_s = {DEFAULT_FRICTION_VELOCITY:g}")
    worst = 0.0
    for title, values in (("all parameters 1.0 (README)", ones), ("random_parameters(seed 0), FS = 1", drawn)):
        baseline = dict(values, **{name: 0.0 for name in values if name.startswith("FS")})
        seconds0, result0 = run(model, baseline, "regularised")
        print(f"\n{title}:")
        print(f"  baseline FS = 0        {seconds0 * 1e3:8.1f} ms  ({result0.nfev} evaluations)")
        finals = {}
        for law in LAWS:
            seconds, result = run(model, values, law)
            assert result.t[-1] == 1.0 and result.relative_energy_drift < 1e-6, (law, result)
            finals[law] = result.q[-1]
            ratio = seconds / seconds0
            worst = max(worst, ratio)
            switches = f", {len(result.friction_events)} stick-slip switches" if law == "stick-slip" else ""
            print(f"  FS = 1, {law:13s}  {seconds * 1e3:8.1f} ms  ({result.nfev} evaluations{switches}); "
                  f"ratio to the baseline {ratio:5.2f}  (target <= 20); friction work {result.friction_work[-1]:.4g} J, "
                  f"relative energy drift {result.relative_energy_drift:.1e}")
        gap = np.abs(finals["regularised"] - finals["stick-slip"]).max()
        print(f"  final q, regularised vs stick-slip: largest difference {gap:.1e} rad")
    print(f"\nlargest ratio: {worst:.2f} (target <= 20)")


if __name__ == "__main__":
    main()
