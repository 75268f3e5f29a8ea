"""Floating-base dynamics by Lagrange's equations in quasi-velocities.

The third engine of a floating robot (``kr.derive(robot, "lagrange")`` on a
robot with ``is_floating = 1``), for cross-validation of the Newton-Euler
programs of :mod:`~kanerobot.dynamics.floating` and of sympy's KanesMethod.
It propagates no force: everything comes from the kinetic and potential
energies of the links, as in :mod:`~kanerobot.dynamics.lagrange`, and from
derivatives of programs.

**Speeds.**  The state is pinocchio's free flyer (see
:mod:`~kanerobot.dynamics.floating`): the base speeds ``V = (v, w)`` are the
velocity of O_0 and the angular velocity of link 0 *in frame 0*.  They are
not the derivatives of any coordinates (quasi-velocities), so Lagrange's
equations take the Boltzmann-Hamel (Euler-Poincare) form on the base rows.
The kinetic energy ``T = 1/2 nu^T A(q) nu``, ``nu = (v, w, qd)``, depends on
the joints only; the base's six speeds are six extra Jacobian columns at O_0
(unit vectors of frame 0, linear then angular), carried to every link by
the recursion of :mod:`~kanerobot.dynamics.lagrange`.

**Equations.**  With ``p = dT/dnu`` (``p_v``, ``p_w`` the base rows, the
momentum of the whole robot in frame 0 about O_0) and ``U`` the potential
energy::

    F_v = d/dt p_v + w x p_v + dU/dp_0                                  (Hamel, translation)
    F_w = d/dt p_w + w x p_w + v x p_v + dU/dtheta_0                    (Hamel, rotation)
    GAM_a = d/dt p_a - dT/dq_a + dU/dq_a + IA_a qdd_a + FV_a qd_a + FS_a sign(qd_a)

plus ``J^T [f; m]`` of the links' wrenches on every row (SYMORO's
convention: ``FX .. CZ`` is the wrench the link exerts on the environment).
``dU/dp_0`` and ``dU/dtheta_0`` are the derivatives along a translation and
a rotation of the base expressed in frame 0.  With gravity ``G`` in the
world frame, ``U = -M G . x_0 - 0g . c`` (``M`` the total mass, ``x_0`` the
position of O_0, ``0g = 0R_w G``, ``c`` the first moment of the robot in
frame 0), so ``dU/dp_0 = -M 0g`` (the weight); ``dU/dtheta_0`` is the
derivative of ``U`` along the quaternion rate of a unit body rotation about
axis k, ``dquat = 1/2 quat (x) (e_k, 0)``: ``du = 1/2 (qw e_k + u x e_k)``,
``dqw = -1/2 u_k`` (``u = (QX0, QY0, QZ0)``), one forward-mode pass each.

The Coriolis matrix of every floating engine is in
:mod:`~kanerobot.dynamics.floating_coriolis`.

Scope: floating serial and tree robots with rigid joints.
"""

import sympy

from kanerobot.dynamics import lagrange
from kanerobot.dynamics.free_flyer import (
    BASE_ACCELERATION,
    BASE_FORCE_NAMES,
    BASE_VELOCITY,
    QUATERNION,
    base_program_inputs,
    check_floating,
    gravity_in_base,
    parameter_names,
)
from kanerobot.dynamics.lagrange import BaseMotion
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names

__all__ = ["gravity_forces", "inverse_dynamics", "mass_matrix", "nonlinear_effects"]

#: Labels of the base speeds in the names of the Jacobian columns (``JV12_VX0``).
BASE_SPEED_LABELS = tuple(s.name for s in BASE_VELOCITY)


def mass_matrix(robot, trig=True):
    """Inertia matrix ``A(q)``, (6+n) x (6+n), from the link kinetic energies.

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot carrying link 0.
    trig : bool, optional
        Apply the program's trigonometric rules.

    Returns
    -------
    Program
        Outputs ``A<i><j>`` for i <= j, column by column (``A<i>_<j>``
        beyond 9 speeds), base speeds first, as
        :func:`kanerobot.dynamics.floating.mass_matrix`.

    Examples
    --------
    The base block of ``A`` is the spatial inertia of the whole robot: its
    top-left entry is the total mass.

    >>> import kanerobot as kr
    >>> A = mass_matrix(kr.load(kr.frames_path("satellite")))
    >>> A.substitute_back()["A11"]
    M0 + M1 + M2 + M3
    """
    check_floating(robot, "the floating-base inertia matrix by Lagrange")
    model = _model(robot, [robot.q], parameter_names(True, False, False), gravity=False, qd=False, trig=trig)
    A = model.inertia_matrix(rotor=True)
    names = matrix_entry_names("A", A.shape)
    for c in range(A.shape[0]):
        for r in range(c + 1):
            model.program.set_output(names[r][c], model.program.assign(names[r][c], A[r, c]))
    model.program.prune()
    return model.program


def gravity_forces(robot, trig=True):
    """Generalized gravity forces ``Q(q) = dU/d(base, q)`` (outputs ``QFX0 .. QCZ0, Q<label>``).

    Examples
    --------
    >>> import kanerobot as kr
    >>> Q = gravity_forces(kr.load(kr.frames_path("satellite")))
    >>> list(Q.outputs)[:3], Q.output_lines()[0]
    (['QFX0', 'QFY0', 'QFZ0'], ('QFX0', G01*(-M0 - M1 - M2 - M3)))
    """
    check_floating(robot, "the floating-base gravity forces by Lagrange")
    model = _model(robot, [robot.q, QUATERNION], ("M", "MX", "MY", "MZ"), gravity=True, qd=False, trig=trig)
    U = model.potential_energy()
    fm = _directions(model, robot, time=None)
    rows = _potential_rows(model, fm, robot, U)
    for name, value in zip(_output_names(robot, "Q"), rows):
        fm.target.set_output(name, value)
    fm.target.prune()
    return fm.target


def nonlinear_effects(robot, trig=True):
    """``H(q, qd)``: the generalized forces at zero acceleration (outputs ``GAMFX0 .. GAMCZ0, GAM<label>``)."""
    return _equations(robot, accelerations=False, trig=trig)


def inverse_dynamics(robot, trig=True):
    """Generalized forces ``[F_0; GAM] = A qdd + H`` by Lagrange's equations in quasi-velocities.

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot carrying link 0.
    trig : bool, optional

    Returns
    -------
    Program
        Outputs ``GAMFX0 .. GAMCZ0`` (the base wrench, frame 0, about O_0)
        and ``GAM<label>``; the inputs of
        :func:`kanerobot.dynamics.floating.inverse_dynamics`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = inverse_dynamics(kr.load(kr.frames_path("satellite")))
    >>> list(program.outputs)[5:]
    ['GAMCZ0', 'GAM1', 'GAM2', 'GAM3']
    """
    return _equations(robot, accelerations=True, trig=trig)


# ------------------------------------------------------------ internals
def _model(robot, state, names, gravity, qd, trig):
    """A Lagrange :class:`~kanerobot.dynamics.lagrange.EnergyModel` whose link 0 moves
    with the base speeds: six extra Jacobian columns, unit vectors of frame 0."""
    program = lagrange.energy_program(robot, base_program_inputs(robot, state, names, gravity), trig)
    zero, unit = sympy.zeros(3, 1), sympy.eye(3)
    columns = tuple((label, (unit[:, k], zero)) for k, label in enumerate(BASE_SPEED_LABELS[:3]))
    columns += tuple((label, (zero, unit[:, k])) for k, label in enumerate(BASE_SPEED_LABELS[3:]))
    velocity = (sympy.Matrix(BASE_VELOCITY[:3]), sympy.Matrix(BASE_VELOCITY[3:])) if qd else (zero, zero)
    g0 = gravity_in_base(program, robot) if gravity else None
    base = BaseMotion(labels=BASE_SPEED_LABELS, columns=columns, velocity=velocity, gravity=g0)
    return lagrange.EnergyModel(robot, program, base)


def _directions(model, robot, time):
    """Forward-mode passes: time (seeds ``time``), each joint, each unit body rotation."""
    fm = ForwardMode(model.program)
    if time is not None:
        fm.add_direction("t", time, label="t")
    for x in robot.q:
        fm.add_direction(("q", x), {x: 1}, label=str(x))
    u, w = sympy.Matrix(QUATERNION[:3]), QUATERNION[3]
    half = sympy.Rational(1, 2)
    for k, axis in enumerate("XYZ"):
        e = sympy.eye(3)[:, k]
        du = half * (w * e + u.cross(e))
        seeds = {QUATERNION[r]: du[r] for r in range(3)} | {w: -half * u[k]}
        fm.add_direction(("rotation", k), seeds, label=f"R{axis}0")
    return fm


def _potential_rows(model, fm, robot, U):
    """``dU/d(p_0, theta_0, q)``: the weight, the rotation passes, the joint passes."""
    mass = sympy.Add(*(sympy.sympify(robot.dynamics[j]["M"]) for j in robot.links))
    rows = [-mass * fm.value(g) for g in model.base.gravity]
    rows += [fm.derivative(U, ("rotation", k)) for k in range(3)]
    rows += [fm.derivative(U, ("q", x)) for x in robot.q]
    return rows


def _output_names(robot, prefix):
    return [f"{prefix}{name}" for name in BASE_FORCE_NAMES] + [f"{prefix}{label}" for label in robot.joint_labels]


def _equations(robot, accelerations, trig):
    what = "the floating-base inverse dynamic model" if accelerations else "the floating-base nonlinear effects"
    check_floating(robot, f"{what} by Lagrange")
    state = [robot.q, QUATERNION, robot.qd, BASE_VELOCITY]
    if accelerations:
        state += [robot.qdd, BASE_ACCELERATION]
    model = _model(robot, state, parameter_names(accelerations, True, True), gravity=True, qd=True, trig=trig)
    PQ = model.generalized_momenta()
    momenta = model.link_momenta()
    U = model.potential_energy()
    wrench = model.wrench_torques()

    # d/dt: joints move at QP; with accelerations, QP and the base speeds change
    # at QDP and DVX0 .. DWZ0 (T does not depend on the base pose).
    time = dict(zip(robot.q, robot.qd))
    if accelerations:
        time |= {v: a for v, a in zip(robot.qd, robot.qdd) if isinstance(v, sympy.Symbol)}
        time |= dict(zip(BASE_VELOCITY, BASE_ACCELERATION))
    fm = _directions(model, robot, time)
    potential = _potential_rows(model, fm, robot, U)

    v, w = sympy.Matrix(BASE_VELOCITY[:3]), sympy.Matrix(BASE_VELOCITY[3:])
    p_v = sympy.Matrix([fm.value(PQ[label]) for label in BASE_SPEED_LABELS[:3]])
    p_w = sympy.Matrix([fm.value(PQ[label]) for label in BASE_SPEED_LABELS[3:]])
    hamel = list(w.cross(p_v)) + list(w.cross(p_w) + v.cross(p_v))
    rows = [fm.derivative(PQ[label], "t") + hamel[k] for k, label in enumerate(BASE_SPEED_LABELS)]
    rows += lagrange.joint_rows(fm, robot, PQ, momenta, accelerations)
    labels = BASE_SPEED_LABELS + tuple(robot.joint_labels)
    for name, row, dU, label in zip(_output_names(robot, "GAM"), rows, potential, labels):
        fm.target.set_output(name, row + dU + fm.value(wrench[label]))
    fm.target.prune()
    return fm.target
