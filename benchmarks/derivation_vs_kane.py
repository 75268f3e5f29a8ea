"""Derivation time of the RX-90 dynamic models against naive KanesMethod.

Baseline: sympy.physics.mechanics used the textbook way on the same robot
(frames oriented link by link with dynamicsymbols, rigid bodies with the
general inertia XX..ZZ about each frame origin, gravity G3 and the joint
torques as loads, then KanesMethod.kanes_equations, mass_matrix and forcing),
as a user of sympy would write it.  Ours: a fresh kanerobot.derive(robot) and
its inverse dynamic model, inertia matrix and ccg programs.  The target is a
ratio (ours / naive) of at most 0.2.  Both run in this process, one after the
other.

Run:  python benchmarks/derivation_vs_kane.py
"""

import sys
import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import sympy
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

import kanerobot as kr

TARGET = 0.2


def naive_kane(robot):
    """Mass matrix and forcing of a serial KK robot by plain KanesMethod."""
    n = robot.nj
    q = dynamicsymbols(f"q1:{n + 1}")
    u = dynamicsymbols(f"u1:{n + 1}")
    world = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(world, 0)
    parent_frame, parent_point = world, origin
    bodies, loads = [], []
    G3 = sympy.Symbol("G3")
    for k, frame in enumerate(robot.frames):
        p = frame.placement
        twisted = parent_frame.orientnew(f"A{k + 1}", "Axis", (p.alpha, parent_frame.x))
        body_frame = twisted.orientnew(f"F{k + 1}", "Axis", (q[k], twisted.z))
        point = parent_point.locatenew(f"P{k + 1}", p.d * parent_frame.x + p.r * body_frame.z)
        point.v2pt_theory(parent_point, world, body_frame)
        d = robot.dynamics[frame.label]
        centre = point.locatenew(f"G{k + 1}", (d["MX"] * body_frame.x + d["MY"] * body_frame.y + d["MZ"] * body_frame.z) / d["M"])
        centre.v2pt_theory(point, world, body_frame)
        I_O = inertia(body_frame, d["XX"], d["YY"], d["ZZ"], d["XY"], d["YZ"], d["XZ"])
        bodies.append(RigidBody(f"B{k + 1}", centre, body_frame, d["M"], (I_O, point)))
        torque = robot.joint_parameters[frame.label]["GAM"]
        loads += [(centre, d["M"] * G3 * world.z), (body_frame, torque * body_frame.z), (parent_frame, -torque * body_frame.z)]
        parent_frame, parent_point = body_frame, point
    kane = KanesMethod(world, q, u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
    kane.kanes_equations(bodies, loads)
    return kane.mass_matrix, kane.forcing


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def main():
    robot = kr.load(kr.frames_path("rx90"))

    def ours():
        model = kr.derive(robot)
        return [model.program(name) for name in ("inverse_dynamics", "mass_matrix", "h")]

    t_ours, _ = timed(ours)
    print(f"kanerobot idm + inm + ccg: {t_ours:8.2f} s", flush=True)
    t_naive, (M, F) = timed(lambda: naive_kane(robot))
    ops = sum(sympy.count_ops(e) for e in M) + sum(sympy.count_ops(e) for e in F)
    print(f"naive KanesMethod (mass matrix and forcing): {t_naive:8.2f} s, {ops} operations in its expressions")
    ratio = t_ours / t_naive
    print(f"ratio ours / naive = {ratio:.3f} (target <= {TARGET}): {'met' if ratio <= TARGET else 'NOT met'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
