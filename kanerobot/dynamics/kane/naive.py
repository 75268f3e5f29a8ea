"""The textbook KanesMethod build of a robot (:func:`naive_kanes_method`).

Kept in the package, not among the tests' oracles: it is the ``"naive"``
build (the default) of the public
:func:`kanerobot.dynamics.wheeled.nonholonomic_kanes_method`.  The tests and
``benchmarks/kane_vs_naive.py`` check the Kane engine against it.
"""

import dataclasses

import sympy
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

from kanerobot.dynamics.kane.support import check_supported, is_zero, kd_equations, moving_base, vector
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import Prismatic, Revolute


@dataclasses.dataclass
class NaiveKane:
    """What :func:`naive_kanes_method` builds.

    Attributes
    ----------
    kanes_method : KanesMethod
        After ``kanes_equations(bodies, loads)``.
    N : ReferenceFrame
        The base frame 0 (inertial).
    frames : dict str -> ReferenceFrame
    bodies, loads : list
    q, u : list of sympy Function
        ``dynamicsymbols`` in ``robot.joint_labels`` order.
    """

    kanes_method: KanesMethod
    N: ReferenceFrame
    frames: dict
    bodies: list
    loads: list
    q: list
    u: list

    def substitutions(self, robot):
        """``{q(t): q, u(t): QP, u'(t): QDP}``: the robot's symbols for the dynamicsymbols."""
        t = dynamicsymbols._t
        out = {}
        for qt, ut, q, qd, qdd in zip(self.q, self.u, robot.q, robot.qd, robot.qdd):
            out[ut.diff(t)] = qdd
            out[qt.diff(t)] = qd
            out[qt] = q
            out[ut] = qd
        return out


def naive_kanes_method(robot):
    """Kane's equations the textbook way, on the same bodies and loads as :class:`KaneSystem`.

    Frames are oriented link by link (``orient_explicit`` with the robot's
    ``iA_j(q(t))``), origins located with ``locatenew`` and given their
    velocities by ``v2pt_theory`` (``v1pt_theory`` after a prismatic joint),
    centres of mass at ``MS / M``, rigid bodies with the inertia ``XX .. ZZ``
    about the frame origins, and the loads (gravity in frame 0, joint torques
    ``GAM`` and their reactions, friction, external wrenches); sympy derives
    every velocity and acceleration and ``KanesMethod.kanes_equations`` does
    the rest, with no intermediate variables.  This is the baseline of
    ``benchmarks/kane_vs_naive.py`` and a cross-check for small robots: its
    expressions grow about threefold per link (an RX-90 takes seconds, Krang
    does not finish in useful time).

    Rotor inertias ``IA`` are not part of it (``mass_matrix`` has no
    ``diag(IA)``).  Fixed base only.

    Returns
    -------
    NaiveKane
    """
    check_supported(robot)
    if moving_base(robot):
        raise KaneRobotError(f"naive_kanes_method: robot {robot.name} has a moving base; only a fixed base is handled")
    for frame in robot.frames:
        if frame.joint.nv > 1:  # its sigma-based frames and loads hold one speed per joint
            raise KaneRobotError(
                f"naive_kanes_method: joint {frame.label} of {robot.name} is {frame.joint.name} ({frame.joint.nv} speeds); "
                f"this build takes joints of one speed: use KaneSystem (kr.derive(robot, method='kane'))"
            )
    labels = robot.joint_labels
    symbols = list(robot.q)
    q = [dynamicsymbols(str(x)) for x in symbols]
    u = [dynamicsymbols(f"u{robot.stems[label]}") for label in labels]
    index = {label: k for k, label in enumerate(labels)}
    to_time = dict(zip(symbols, q))
    N = ReferenceFrame("N")
    O = Point("O0")
    O.set_vel(N, 0)
    frames, points = {BASE: N}, {BASE: O}
    bodies = []
    loads = []
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        T = sympy.Matrix(frame.transform()).xreplace(to_time)
        parent = frames[i]
        B = ReferenceFrame(f"F{robot.stems[j]}")
        B.orient_explicit(parent, T[:3, :3])
        P = points[i].locatenew(f"O{robot.stems[j]}", vector(parent, T[:3, 3]))
        if isinstance(frame.joint, Prismatic):
            P.set_vel(parent, P.pos_from(points[i]).dt(parent))
            P.v1pt_theory(points[i], N, parent)
        else:
            P.v2pt_theory(points[i], N, parent)
        frames[j], points[j] = B, P
        if j in robot.links:
            body, link_loads = _link(robot, j, N, B, P)
            bodies.append(body)
            loads += link_loads
        if frame.is_joint:
            k = index[j]
            link = robot.dynamics.get(j, {})
            FV, FS = sympy.sympify(link.get("FV", 0)), sympy.sympify(link.get("FS", 0))
            magnitude = robot.joint_parameters[j]["GAM"] - FV * u[k] - FS * sympy.sign(u[k])
            loads += _joint_loads(robot, frame, magnitude, N, frames, points)
    km = KanesMethod(N, q, u, kd_eqs=kd_equations(q, u))
    km.kanes_equations(bodies, loads)
    return NaiveKane(km, N, frames, bodies, loads, q, u)


def _link(robot, j, N, B, P):
    """The RigidBody of link j (frame ``B``, origin ``P``) and its loads: its weight, the environment's wrench."""
    d = robot.dynamics[j]
    M = sympy.sympify(d["M"])
    MS = sympy.Matrix([d["MX"], d["MY"], d["MZ"]])
    c = MS / M if M != 0 else sympy.zeros(3, 1)
    C = P.locatenew(f"G{robot.stems[j]}", vector(B, c))
    C.v2pt_theory(P, N, B)
    I_O = inertia(B, d["XX"], d["YY"], d["ZZ"], d["XY"], d["YZ"], d["XZ"])
    body = RigidBody(f"B{robot.stems[j]}", C, B, M, (I_O, P))
    loads = []
    G = sympy.Matrix(robot.base.G)
    if M != 0 and not is_zero(G):
        loads.append((C, M * vector(N, G)))
    f = sympy.Matrix([d["FX"], d["FY"], d["FZ"]])
    m = sympy.Matrix([d["CX"], d["CY"], d["CZ"]])
    if not is_zero(f):
        loads.append((P, -vector(B, f)))
    if not is_zero(m):
        loads.append((B, -vector(B, m)))
    return body, loads


def _joint_loads(robot, frame, magnitude, N, frames, points):
    """The joint's torque (revolute) or force (prismatic) ``magnitude`` on frame j and its reaction on the antecedent."""
    j, i = frame.label, frame.antecedent
    B, P, parent = frames[j], points[j], frames[i]
    axis = vector(B, sympy.Matrix(frame.axis))
    if isinstance(frame.joint, Revolute):
        loads = [(B, magnitude * axis)]
        if i != BASE:
            loads.append((parent, -magnitude * axis))
    else:
        loads = [(P, magnitude * axis)]
        if i != BASE:
            # The point of the antecedent that coincides with O_j.
            Pi = points[i].locatenew(f"O{robot.stems[j]}_{robot.stems[i]}", P.pos_from(points[i]))
            Pi.v2pt_theory(points[i], N, parent)
            loads.append((Pi, -magnitude * axis))
    return loads
