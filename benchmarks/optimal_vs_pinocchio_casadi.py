"""The RX-90 minimum-torque point-to-point problem on kanerobot's CasADi functions and on pinocchio.casadi's.

One nonlinear programme, two sources of dynamics: ``kanerobot.optimal.collocate``
transcribes the RX-90's rest-to-rest motion (Hermite-Simpson, the
velocity and torque limits of ``examples/optimal/rx90_min_torque.py``, the
least integral of ``tau^T tau``) once on kanerobot's graphs
(``fn.casadi("inverse_dynamics")``, ``fn.casadi("direct_dynamics")``) and
once on pinocchio's (``pinocchio.casadi``'s ``rnea`` and ``aba`` of
``kanerobot.interop.to_pinocchio(robot, values)``, passed as ``functions=``):
the same variables, constraints, bounds, initial guess and IPOPT options.
Both ways of imposing the dynamics are timed: ``implicit`` (the inverse
dynamics as a constraint, the accelerations as variables) and ``explicit``
(the direct dynamics in the defects).  Printed: IPOPT's wall time and
iterations, the objective, and the largest difference between the two
solutions' torques.

Pinocchio has no rotor inertia or viscous friction in ``rnea``: the values
have ``IA = FV = FS = 0``.  The pinocchio model is first checked against
kanerobot's numeric inverse dynamics (plain pinocchio, no CasADi needed).

``pinocchio.casadi`` exists only in pinocchio builds with CasADi support
(conda-forge's, or one built from source with ``BUILD_WITH_CASADI_SUPPORT``);
the ``pin`` wheel of PyPI has none: the baseline is then reported as
unavailable and kanerobot's timings alone are printed.

Run:  python benchmarks/optimal_vs_pinocchio_casadi.py [--intervals N] [--repeats R]
"""

import argparse
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

Q0 = [0.0, -0.5, 1.2, 0.0, 0.5, 0.0]
Q1 = [1.2, 0.3, 0.4, 0.8, -0.6, 1.0]
EFFORT = [40.0, 60.0, 40.0, 15.0, 15.0, 10.0]
VELOCITY = 2.5
UNMATCHED = ("IA", "FV", "FS", "FX", "FY", "FZ", "CX", "CY", "CZ")  # what pinocchio's rnea does not model


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio.casadi's rnea and aba"))


def rx90(seed=29):
    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(seed))
    values.update({name: 0.0 for name in values if name.startswith(UNMATCHED)})
    return robot, values, kr.derive(robot).numeric(values, backend="numpy")


def pinocchio_functions(robot, values, fn):
    """``(rnea, aba)`` of pinocchio.casadi as casadi.Functions, or a line saying why there are none."""
    try:
        import pinocchio as pin
    except ImportError:
        return None, "pinocchio is not installed"
    from kanerobot.interop import to_pinocchio

    model = to_pinocchio(robot, values)
    data = model.createData()
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    error = np.abs(pin.rnea(model, data, q, qd, qdd) - fn.inverse_dynamics(q, qd, qdd)).max()
    print(f"pinocchio's model of the RX-90: rnea - kanerobot's inverse dynamics {error:.1e} N m at a random state")
    try:
        import casadi
        import pinocchio.casadi as cpin
    except ImportError:
        return None, ("pinocchio.casadi is not available in this pinocchio build (the PyPI wheel `pin` has no CasADi support; "
                      "conda-forge's pinocchio has it): the baseline is unavailable")  # fmt: skip
    cmodel = cpin.Model(model)
    cdata = cmodel.createData()
    cq, cv, ca = (casadi.SX.sym(name, model.nq) for name in ("q", "v", "a"))
    rnea = casadi.Function("rnea", [cq, cv, ca], [cpin.rnea(cmodel, cdata, cq, cv, ca)])
    aba = casadi.Function("aba", [cq, cv, ca], [cpin.aba(cmodel, cdata, cq, cv, ca)])
    return (rnea, aba), None


def solve(fn, intervals, dynamics, functions, repeats):
    """The best of ``repeats`` solves: (result, seconds of IPOPT)."""
    from kanerobot.optimal import collocate

    limits = {label: {"velocity": VELOCITY, "effort": effort} for label, effort in zip(fn.model.robot.joint_labels, EFFORT)}
    best, result = np.inf, None
    for _ in range(repeats):
        result = collocate(fn, Q0, Q1, duration=1.5, intervals=intervals, limits=limits, dynamics=dynamics, functions=functions)
        best = min(best, result.solve_time)
    return result, best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=20, help="Hermite-Simpson intervals (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="solves of which the fastest is kept (default 3)")
    args = parser.parse_args(argv)
    if not needs.installed("casadi"):
        print("optimal_vs_pinocchio_casadi.py: missing requirement: casadi is not installed: pip install -e '.[casadi]'", file=sys.stderr)
        return needs.MISSING
    missing = check()
    for line in missing:
        print(f"optimal_vs_pinocchio_casadi.py: missing requirement: {line}", file=sys.stderr)
    robot, values, fn = rx90()
    functions, why = pinocchio_functions(robot, values, fn)
    print(f"RX-90, minimum torque from {Q0} to {Q1} in 1.5 s, {args.intervals} Hermite-Simpson intervals (best of {args.repeats})")
    print(f"  {'dynamics':10s} {'source':20s} {'IPOPT [s]':>10s} {'iterations':>10s} {'objective':>12s}  status")
    start = time.perf_counter()
    for dynamics in ("implicit", "explicit"):
        ours, seconds = solve(fn, args.intervals, dynamics, None, args.repeats)
        print(f"  {dynamics:10s} {'kanerobot':20s} {seconds:10.3f} {ours.iterations:10d} {ours.objective:12.6f}  {ours.status}")
        if functions is None:
            print(f"  {dynamics:10s} {'pinocchio.casadi':20s} {'unavailable':>10s}")
            continue
        theirs, seconds = solve(fn, args.intervals, dynamics, functions, args.repeats)
        print(f"  {dynamics:10s} {'pinocchio.casadi':20s} {seconds:10.3f} {theirs.iterations:10d} {theirs.objective:12.6f}  {theirs.status}"
              f"  (torques differ by {np.abs(theirs.u - ours.u).max():.1e} N m)")  # fmt: skip
    if why:
        print(f"  pinocchio.casadi: {why}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return needs.MISSING if missing else 0


if __name__ == "__main__":
    sys.exit(main())
