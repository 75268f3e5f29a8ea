"""The Whipple bicycle benchmark: kanerobot's derivation and linearisation against sympy's own.

Ours: ``examples/bicycle/whipple.py`` -- the bicycle as a kanerobot robot
from the 27 parameters of Meijaard et al. (2007), both wheels rolling discs,
the tree's models by Kane's method projected on the independent speeds
(roll, rear wheel, steer), numeric, then ``state_matrix(v)``
(:func:`kanerobot.control.linearize` about the steady upright run, pitch
solved from the front contact).

Baseline: sympy.physics.mechanics as its own test of the benchmark builds it
(``sympy/physics/mechanics/tests/test_kane3.py``): frames yaw, roll, pitch,
steer, the wheels' spins as angular velocities only, the rear contact at
rest, the front contact's velocity (three rows) and height as the
constraints, ``KanesMethod(q_dependent=[pitch], u_dependent=[yaw rate,
pitch rate, front wheel rate], ...)``, ``kanes_equations``, then
``KanesMethod.linearize`` (Peterson, Gede and Hubbard's Linearizer) about
the upright run and the parameters substituted.  Written here in the
paper's axes (x forward, y right, z down), so that no parameter is converted.

Both times are CPU times of this process (``time.process_time``) from a
cleared sympy cache, in one process; the ratio and both sets of eigenvalues
at the speeds asked for are printed, with the table-2 values.

Run:  python benchmarks/whipple_vs_sympy.py [--speeds 0 5 10] [--skip-sympy] [--numbers-first]
"""

import argparse
import gc
import importlib.util
import time
from pathlib import Path

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import numpy as np
import sympy
from sympy.core.cache import clear_cache

ROOT = Path(__file__).resolve().parents[1]

#: Meijaard et al. 2007, table 2 (the speeds printed by default).
TABLE_2 = {
    0: [-5.53094371765393, -3.13164324790656, 3.13164324790656, 5.53094371765393],
    5: [-14.07838969279820, -0.77534188219585 - 4.46486771378823j, -0.77534188219585 + 4.46486771378823j, -0.32286642900409],
    10: [-24.62459635017404, -3.72016840437287 - 10.90681139476287j, -3.72016840437287 + 10.90681139476287j, 0.16105338653172],
}


def example():
    spec = importlib.util.spec_from_file_location("whipple_example", ROOT / "examples" / "bicycle" / "whipple.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(function):
    """(CPU time, result) from a cleared sympy cache and a collected heap."""
    clear_cache()
    gc.collect()
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


# ------------------------------------------------------------------ kanerobot
def kanerobot_bicycle(whipple, speeds):
    """Derive the bicycle, bind the benchmark's values, linearise at every speed: the state matrices."""
    robot = whipple.bicycle()
    from kanerobot.dynamics.constrained import ConstrainedModel

    model = ConstrainedModel(robot, "kane", whipple.constraint(robot))
    fn = model.numeric(whipple.BENCHMARK, backend="numpy", physical=False)
    return {v: whipple.state_matrix(v, fn) for v in speeds}


# ---------------------------------------------------------------------- sympy
def sympy_bicycle(p, speeds, numbers_first=False):
    """sympy.physics.mechanics' bicycle (test_kane3's construction, the paper's axes): linearised, then evaluated
    (``numbers_first``: the parameters' values in the equations from the start)."""
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

    s = {name: sympy.Float(value) if numbers_first else sympy.Symbol(name) for name, value in p.items()}
    q1, q2, q4, q5 = dynamicsymbols("q1 q2 q4 q5")  # yaw, roll, pitch, steer
    u1, u2, u3, u4, u5, u6 = dynamicsymbols("u1:7")  # yaw, roll, rear wheel, pitch, steer, front wheel rates
    lam = s["lam"]
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    R = Y.orientnew("R", "Axis", [q2, Y.x])
    B = R.orientnew("B", "Axis", [q4, R.y])
    H = B.orientnew("H", "Axis", [q5, sympy.sin(lam) * B.x + sympy.cos(lam) * B.z])
    WR, WF = ReferenceFrame("WR"), ReferenceFrame("WF")  # the wheels: angular velocities only (their angles are ignorable)
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    B.set_ang_vel(R, u4 * B.y)
    H.set_ang_vel(B, u5 * (sympy.sin(lam) * B.x + sympy.cos(lam) * B.z))
    WR.set_ang_vel(B, u3 * B.y)
    WF.set_ang_vel(H, u6 * H.y)

    rear_contact = Point("P")
    rear_centre = rear_contact.locatenew("Co", -s["rR"] * R.z)
    rear_mass = rear_centre.locatenew("Bo", s["xB"] * B.x + (s["zB"] + s["rR"]) * B.z)
    steer_point = rear_centre.locatenew("S", (s["w"] + s["c"]) * B.x + s["rR"] * B.z)  # the steer axis at the ground
    front_mass = steer_point.locatenew("Ho", (s["xH"] - s["w"] - s["c"]) * H.x + s["zH"] * H.z)
    front_centre = steer_point.locatenew("Fo", -s["c"] * H.x - s["rF"] * H.z)
    down = Y.z - (Y.z & H.y) * H.y
    front_contact = front_centre.locatenew("Fc", s["rF"] * down.normalize())

    rear_contact.set_vel(N, 0)
    rear_centre.v2pt_theory(rear_contact, N, WR)
    rear_mass.v2pt_theory(rear_centre, N, B)
    steer_point.v2pt_theory(rear_centre, N, B)
    front_mass.v2pt_theory(steer_point, N, H)
    front_centre.v2pt_theory(steer_point, N, H)
    front_contact.v2pt_theory(front_centre, N, WF)

    bodies = [
        RigidBody("B", rear_mass, B, s["mB"], (inertia(B, s["IBxx"], s["IByy"], s["IBzz"], 0, 0, s["IBxz"]), rear_mass)),
        RigidBody("H", front_mass, H, s["mH"], (inertia(H, s["IHxx"], s["IHyy"], s["IHzz"], 0, 0, s["IHxz"]), front_mass)),
        RigidBody("R", rear_centre, WR, s["mR"], (inertia(B, s["IRxx"], s["IRyy"], s["IRxx"]), rear_centre)),
        RigidBody("F", front_centre, WF, s["mF"], (inertia(H, s["IFxx"], s["IFyy"], s["IFxx"]), front_centre)),
    ]
    loads = [(point, m * s["g"] * Y.z) for point, m in
             ((rear_mass, s["mB"]), (front_mass, s["mH"]), (rear_centre, s["mR"]), (front_centre, s["mF"]))]  # fmt: skip
    t = dynamicsymbols._t
    kd = [q1.diff(t) - u1, q2.diff(t) - u2, q4.diff(t) - u4, q5.diff(t) - u5]
    velocity = [front_contact.vel(N) & Y.x, front_contact.vel(N) & Y.y, front_contact.vel(N) & Y.z]
    configuration = [front_contact.pos_from(rear_contact) & Y.z]
    km = KanesMethod(N, q_ind=[q1, q2, q5], u_ind=[u2, u3, u5], kd_eqs=kd, q_dependent=[q4],
                     configuration_constraints=configuration, u_dependent=[u1, u4, u6], velocity_constraints=velocity,
                     constraint_solver="CRAMER")  # fmt: skip
    km.kanes_equations(bodies, loads)
    v = sympy.Symbol("v")
    op = {q1: 0, q2: 0, q4: 0, q5: 0, u1: 0, u2: 0, u3: -v / s["rR"], u4: 0, u5: 0, u6: -v / s["rF"]}
    op.update({u.diff(t): 0 for u in (u1, u2, u3, u4, u5, u6)})
    # Cramer's rule, as test_kane3: LU divides by pivots that vanish at the upright run (nan)
    M, A, _, _ = km.linearize(op_point=op, A_and_B=False, linear_solver="CRAMER")
    values = {} if numbers_first else {s[name]: value for name, value in p.items()}
    # states [q1, q2, q5, q4, u2, u3, u5, u1, u4, u6]; A's columns [q1, q2, q5, u2, u3, u5]: roll, steer, their rates
    rows, cols = [1, 2, 4, 6], [1, 2, 3, 5]
    out = {}
    for speed in speeds:
        number = {**values, v: speed}
        Mn = np.array(M.xreplace(number).evalf(), dtype=float)
        An = np.array(A.xreplace(number).evalf(), dtype=float)
        out[speed] = np.linalg.solve(Mn, An)[np.ix_(rows, cols)]
    return out


def show(name, matrices):
    for v, A in matrices.items():
        z = np.sort_complex(np.linalg.eigvals(A))
        print(f"  {name:9s} v = {v:4.1f}: " + "  ".join(f"{x.real:+.14f}{x.imag:+.14f}j" for x in z))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeds", type=float, nargs="+", default=[0.0, 5.0, 10.0])
    parser.add_argument("--skip-sympy", action="store_true", help="time kanerobot alone (sympy's linearisation takes minutes)")
    parser.add_argument("--numbers-first", action="store_true",
                        help="sympy with the parameters' values in its equations from the start (test_kane3 keeps them symbolic)")
    args = parser.parse_args(argv)
    whipple = example()
    ours_time, ours = timed(lambda: kanerobot_bicycle(whipple, args.speeds))
    print(f"kanerobot: derivation + linearisation {ours_time:.2f} s CPU")
    show("kanerobot", ours)
    for v in args.speeds:
        if v in TABLE_2:
            print(f"  table 2   v = {v:4.1f}: " + "  ".join(f"{x.real:+.14f}{x.imag:+.14f}j" for x in np.sort_complex(TABLE_2[int(v)])))
    if args.skip_sympy:
        return 0
    theirs_time, theirs = timed(lambda: sympy_bicycle(whipple.BENCHMARK, args.speeds, args.numbers_first))
    how = "numbers first" if args.numbers_first else "symbolic parameters, as test_kane3"
    print(f"sympy KanesMethod + linearize ({how}): {theirs_time:.2f} s CPU")
    show("sympy", theirs)
    worst = max(np.abs(np.sort_complex(np.linalg.eigvals(ours[v])) - np.sort_complex(np.linalg.eigvals(theirs[v]))).max() for v in args.speeds)
    print(f"largest eigenvalue difference kanerobot - sympy: {worst:.2e}")
    print(f"ratio kanerobot / sympy: {ours_time / theirs_time:.4f} ({theirs_time / ours_time:.0f} times faster)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
