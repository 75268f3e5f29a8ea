"""Floating-base dynamics by Newton-Euler (OpenSYMORO section IV-D, eqs 30-41).

A floating robot (humanoid, satellite, eel) is a tree on a base link 0 that
no joint holds: its six speeds join the n joint rates.  The dynamic model
(OpenSYMORO eq. 30) is::

    [ F_0 ]   [ A11    A12 ] [ 0Vdot_0 ]   [ H1 ]
    [     ] = [            ] [         ] + [    ]                           (30)
    [ GAM ]   [ A12^T  A22 ] [ qdd     ]   [ H2 ]

with ``F_0`` the wrench applied to the base (zero for a free-floating
robot), ``A11`` the 6x6 spatial inertia of composite link 0 (the whole
robot, about O_0, in frame 0), ``A22`` the n x n inertia matrix of the arm
with the base held, ``A12`` their coupling.  Here the base acceleration is
the derivative of the base speeds of the state below (it differs from the
paper's classical ``0Vdot_0`` by ``[0w_0 x 0v_0; 0]``, a velocity term that
goes to H), so that ``A`` and ``H`` are pinocchio's.

**State** (pinocchio's free flyer).  ``q = (x, y, z, qx, qy, qz, qw,
q_1 .. q_n)``: the position of O_0 in the world frame, the unit quaternion
of 0's orientation ``wR_0`` (x y z w, scalar last), then the joints;
``qd = (v, w, qd_1 .. qd_n)``: the velocity of O_0 and the angular
velocity of link 0, both in frame 0, then the joint rates; ``qdd`` is the
time derivative of ``qd`` (so ``dv/dt = 0R_w d2x/dt2 - w x v``, not the
classical acceleration ``VP`` of SYMORO).  Gravity ``G`` (``robot.base.G``)
is given in the world frame and rotated into frame 0 through the quaternion.

**Program inputs.**  The programs read the base state through symbols of
fixed names: the quaternion :data:`QUATERNION` ``QX0 QY0 QZ0 QW0`` (unit),
the base speeds :data:`BASE_VELOCITY` ``VX0 VY0 VZ0 WX0 WY0 WZ0`` and their
derivatives :data:`BASE_ACCELERATION` ``DVX0 .. DWZ0``, besides the joint
variables, ``QP``, ``QDP``, ``GAM`` and the parameters; ``W0, WP0, V0,
VP0`` of ``robot.base`` are not used (the base motion is the state).

Algorithms, each a :class:`~kanerobot.symbolic.Program`:

- :func:`inverse_dynamics`: the generalized forces ``[F_0; GAM]`` for given
  ``qdd`` (pinocchio's ``rnea``), by Khalil's recursive Newton-Euler with
  the base motion known and the backward recursion carried down to link 0;
  with ``qdd=False`` it gives ``H`` (:func:`nonlinear_effects`), and at rest
  the gravity terms (:func:`gravity_forces`);
- :func:`base_acceleration`: the free-floating inverse dynamic model of
  OpenSYMORO eqs 31-39: given the joint accelerations, the base acceleration
  (``F_0 = 0``) and the joint torques, by three recursions through the
  composite links, the 6x6 base system solved in the program by an LDL^T
  factorisation (:func:`ldl_solve`);
- :func:`mass_matrix`: the (6+n)x(6+n) matrix ``A`` by composite links
  carried down to the base;
- :func:`direct_dynamics`: the accelerations of the base and the joints for
  given joint torques, by articulated bodies carried down to the base (no
  inertia matrix), the 6x6 base system again solved by LDL^T.

:func:`integrate` and :func:`configuration_derivative` update the base pose
``wT_0`` (the ``Z`` of OpenSYMORO eqs 40-41) with the quaternion, free of
the singularities of Euler angles; :func:`base_pose` gives ``wT_0`` back.
Errors: :func:`check_masses` (a base or robot without mass).

:class:`FloatingBaseModel` gathers them like
:class:`~kanerobot.dynamics.model.DynamicModel`.  With ``method="kane"`` it
takes the inverse dynamics, ``A``, ``H`` and ``Q`` from sympy's KanesMethod
instead (:class:`~kanerobot.dynamics.kane.KaneSystem`, the base's six speeds
first, same inputs and output names), with ``method="lagrange"`` from the
Boltzmann-Hamel equations of :mod:`~kanerobot.dynamics.lagrange` (the free-flyer root),
and both solve the base acceleration and the direct dynamics numerically
from ``A`` and ``H``; the three engines agree to rounding
(``tests/test_floating.py``).  The Coriolis matrix, ``C qd`` the velocity
terms of ``H`` and ``A' - 2C`` skew, is pinocchio's
``computeCoriolisMatrix`` (:mod:`~kanerobot.dynamics.coriolis`, the free-flyer root's Hamel terms).
"""

import numpy as np
import sympy

from kanerobot.dynamics import coriolis, lagrange
from kanerobot.dynamics.common import (
    angle_labels,
    assign_symmetric,
    frame_placement,
    frame_placements,
    link_inertia,
    link_parameter,
    motion_parts,
    rotate_inertia,
)
from kanerobot.dynamics.composite import transport_inertia
from kanerobot.dynamics.direct import (
    articulated_inertia,
    first_forward_recursion,
    motor_torque,
    screw_transform_inertia,
    screw_transform_wrench,
    second_forward_recursion,
    spatial_inertia,
    velocity_bias,
)
from kanerobot.dynamics.dynamic_model import (
    MATRIX_MODELS,
    DynamicModel,
    NumericDynamics,
    as_states,
    finite_values,
    matrix_grid,
    name_prefix,
)
from kanerobot.dynamics.free_flyer import (
    BASE_ACCELERATION,
    BASE_FORCE_NAMES,
    BASE_VELOCITY,
    QUATERNION,
    RIGID_INERTIAL_NAMES,
    base_program_inputs,
    check_floating,
    check_masses,
    gravity_in_base,
    parameter_names,
)
from kanerobot.dynamics.newton_euler import u_matrix
from kanerobot.errors import KaneRobotError, SingularityError
from kanerobot.robot.description import BASE, INERTIAL_NAMES
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program

__all__ = [
    "BASE_ACCELERATION",
    "BASE_FORCE_NAMES",
    "BASE_VELOCITY",
    "QUATERNION",
    "FloatingBaseDynamics",
    "FloatingBaseModel",
    "base_acceleration",
    "base_pose",
    "check_masses",
    "configuration_derivative",
    "direct_dynamics",
    "gravity_forces",
    "integrate",
    "inverse_dynamics",
    "ldl_solve",
    "mass_matrix",
    "nonlinear_effects",
    "quaternion_to_rotation",
    "rotation_to_quaternion",
]

def _vec(program, name, j, v):
    """Assign the components of a 3x1 vector as ``name<row><j>``."""
    return program.assign_matrix(lambda r, c: f"{name}{r}{j}", v)


def _sum(vectors):
    return sum(vectors, sympy.zeros(3, 1))


# ---------------------------------------------------- generalized forces
def inverse_dynamics(robot, *, qd=True, qdd=True, gravity=True, friction=True, rotor=True, wrench=True, trig=True):
    """Generalized forces ``[F_0; GAM] = A qdd + H`` (pinocchio's ``rnea`` for a free flyer).

    Khalil's recursive Newton-Euler algorithm (SYMORO+ eqs 6-20, as
    :func:`kanerobot.dynamics.newton_euler.inverse_dynamics`) with the base
    motion given by the state and the backward recursion carried down to
    link 0.  The base starts from::

        0w_0 = [WX0 WY0 WZ0],   0wdot_0 = [DWX0 DWY0 DWZ0]
        0Vdot_0 = [DVX0 DVY0 DVZ0] + 0w_0 x 0v_0 - 0g        (classical acceleration of O_0, less gravity)
        0g = 0R_w G                                          (gravity in frame 0, from the quaternion)

    and, after the forward recursion over links 0..n and the backward one
    over n..1 (reaction wrenches ``jf_j, jm_j``), link 0 gives::

        0f_0 = 0F_0 + sum_k 0f_k + 0fe_0
        0m_0 = 0No_0 + 0MS_0 x 0Vdot_0 + sum_k (0A_k km_k + 0P_k x 0f_k) + 0me_0

    the wrench the base needs, in frame 0 about O_0.

    Parameters
    ----------
    robot : Robot
        Floating (``robot.floating``) serial or tree robot carrying link 0.
    qd, qdd : bool, optional
        Use the velocities (base speeds and ``QP``) and the accelerations
        (``DVX0 .. DWZ0`` and ``QDP``); False sets them to zero.
    gravity, friction, rotor, wrench : bool, optional
        Gravity ``G`` (world frame), ``FV QP + FS sign(QP)``, ``IA QDP``,
        the wrenches ``FX .. CZ`` links exert on the environment.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23``).

    Returns
    -------
    Program
        Outputs ``GAMFX0 GAMFY0 GAMFZ0 GAMCX0 GAMCY0 GAMCZ0`` (the base
        wrench ``F_0``: force then moment) and ``GAM<label>`` for the joints,
        6 + n in the order of ``qd``.  Inputs: the joint variables, the
        quaternion ``QX0 .. QW0``, ``QP`` and ``VX0 .. WZ0`` (if ``qd``),
        ``QDP`` and ``DVX0 .. DWZ0`` (if ``qdd``), then the parameters
        sorted by name.  Pruned.

    Raises
    ------
    KaneRobotError
        When the robot is not floating, has loops, flexible joints, or a
        base or total mass that is not positive.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = inverse_dynamics(kr.load(kr.frames_path("satellite")))
    >>> list(program.outputs)
    ['GAMFX0', 'GAMFY0', 'GAMFZ0', 'GAMCX0', 'GAMCY0', 'GAMCZ0', 'GAM1', 'GAM2', 'GAM3']
    >>> [s.name for s in program.inputs[:10]]
    ['th1', 'th2', 'th3', 'QX0', 'QY0', 'QZ0', 'QW0', 'QP1', 'QP2', 'QP3']
    """
    return _generalized_forces(robot, "the floating-base inverse dynamic model", "GAM", qd, qdd, gravity, friction, rotor, wrench, trig)


def nonlinear_effects(robot, *, gravity=True, friction=True, wrench=True, trig=True):
    """``H(q, qd)``: the generalized forces at zero acceleration (pinocchio's ``nle``).

    :func:`inverse_dynamics` with ``qdd=False``: Coriolis, centrifugal,
    gravity, friction and external-wrench terms, 6 + n outputs named
    ``GAMFX0 .. GAMCZ0, GAM<label>``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> h = nonlinear_effects(kr.load(kr.frames_path("satellite")))
    >>> any(s.name.startswith("DV") or s.name.startswith("QDP") for s in h.inputs)
    False
    """
    what = "the floating-base nonlinear effects"
    return _generalized_forces(robot, what, "GAM", True, False, gravity, friction, False, wrench, trig)


def gravity_forces(robot, *, trig=True):
    """Generalized gravity forces ``Q(q)``: :func:`inverse_dynamics` at rest.

    Outputs ``QFX0 .. QCZ0`` (the base wrench that holds the robot against
    gravity) and ``Q<label>``; inputs the joint variables, the quaternion,
    the inertial parameters and ``G``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> Q = gravity_forces(kr.load(kr.frames_path("satellite")))
    >>> list(Q.outputs)
    ['QFX0', 'QFY0', 'QFZ0', 'QCX0', 'QCY0', 'QCZ0', 'Q1', 'Q2', 'Q3']

    At rest the base must carry the weight of the whole robot:
    ``QFX0 .. QFZ0 = -(M0 + M1 + M2 + M3) 0g``.

    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> values = random_parameters(kr.load(kr.frames_path("satellite")), np.random.default_rng(0))
    >>> f = Q.to_function()
    >>> force = f(*[0.0 if s.name in ("QX0", "QY0", "QZ0") else values.get(s.name, 1.0) for s in f.args])[:3]
    >>> weight = -sum(values[f"M{j}"] for j in range(4)) * np.array([values["G1"], values["G2"], values["G3"]])
    >>> np.allclose(force, weight)
    True
    """
    return _generalized_forces(robot, "the floating-base gravity forces", "Q", False, False, True, False, False, False, trig)


def _generalized_forces(robot, what, output, qd, qdd, gravity, friction, rotor, wrench, trig):
    check_floating(robot, what)
    state = [robot.q, QUATERNION]
    if qd:
        state += [robot.qd, BASE_VELOCITY]
    if qdd:
        state += [robot.qdd, BASE_ACCELERATION]
    program = Program(inputs=base_program_inputs(robot, state, parameter_names(rotor, friction, wrench), gravity), trig=trig)

    def vec(name, j, v):
        return _vec(program, name, j, v)

    def optional(flag, label, name):
        return link_parameter(robot, label, name) if flag else sympy.S.Zero

    zero = sympy.zeros(3, 1)
    v0, w0 = (sympy.Matrix(BASE_VELOCITY[:3]), sympy.Matrix(BASE_VELOCITY[3:])) if qd else (zero, zero)
    dv0, dw0 = (sympy.Matrix(BASE_ACCELERATION[:3]), sympy.Matrix(BASE_ACCELERATION[3:])) if qdd else (zero, zero)
    g0 = gravity_in_base(program, robot) if gravity else zero
    QP = dict(zip(robot.joint_labels, robot.qd if qd else [0] * robot.nj))
    QDP = dict(zip(robot.joint_labels, robot.qdd if qdd else [0] * robot.nj))
    labels = angle_labels(robot)

    # Link 0: its motion is the state.
    w, wdot = {BASE: w0}, {BASE: dw0}
    Vdot = {BASE: vec("VP", BASE, dv0 + w0.cross(v0) - g0)}
    U = {BASE: u_matrix(program, BASE, w0, dw0)}
    A, P, MS, F, No = {}, {}, {}, {}, {}
    J, MS[BASE], M = link_inertia(robot, BASE)
    F[BASE] = vec("F", BASE, M * Vdot[BASE] + U[BASE] * MS[BASE])
    No[BASE] = vec("No", BASE, J * wdot[BASE] + w[BASE].cross(vec("PSI", BASE, J * w[BASE])))

    # Forward recursion, j = 1 ... n (SYMORO+ eqs 6-16).
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        sigma_e, sigmabar_e = motion_parts(frame)
        qd_j, qdd_j = sympy.sympify(QP.get(j, 0)), sympy.sympify(QDP.get(j, 0))
        J, MS[j], M = link_inertia(robot, j)
        A[j], P[j] = frame_placement(program, frame, labels, rotation="A", translation="P")
        jA_i = A[j].T
        WI = vec("WI" if any(sigmabar_e) else "W", j, jA_i * w[i])                                     # (6a)
        w[j] = vec("W", j, WI + sigmabar_e * qd_j)                                                   # (6b)
        wdot[j] = vec("WP", j, jA_i * wdot[i] + sigmabar_e * qdd_j + WI.cross(sigmabar_e * qd_j))    # (8)
        U[j] = u_matrix(program, j, w[j], wdot[j])                                                         # (9)
        VSP = vec("VSP", j, Vdot[i] + U[i] * P[j])
        Vdot[j] = vec("VP", j, jA_i * VSP + sigma_e * qdd_j + 2 * WI.cross(sigma_e * qd_j))          # (10)
        F[j] = vec("F", j, M * Vdot[j] + U[j] * MS[j])                                               # (15)
        No[j] = vec("No", j, J * wdot[j] + w[j].cross(vec("PSI", j, J * w[j])))                      # (16)

    # Backward recursion, j = n ... 1, then link 0 (eqs 17-20).
    f, m, FDI, GAM = {}, {}, {}, {}
    for frame in list(reversed(robot.frames)) + [None]:
        j = frame.label if frame is not None else BASE
        k = robot.children(j)
        fe = sympy.Matrix([optional(wrench, j, name) for name in ("FX", "FY", "FZ")])
        me = sympy.Matrix([optional(wrench, j, name) for name in ("CX", "CY", "CZ")])
        f[j] = vec("E", j, F[j] + _sum(FDI[c] for c in k) + fe)                                                  # (17)
        m[j] = vec("N", j, No[j] + MS[j].cross(Vdot[j]) + _sum(A[c] * m[c] + P[c].cross(FDI[c]) for c in k) + me)  # (19)
        if frame is None:
            break
        FDI[j] = vec("FDI", j, A[j] * f[j])                                                                      # (18)
        if frame.is_joint:
            sigma_e, sigmabar_e = motion_parts(frame)
            qd_j, qdd_j = sympy.sympify(QP[j]), sympy.sympify(QDP[j])
            IA, FV, FS = optional(rotor, j, "IA"), optional(friction, j, "FV"), optional(friction, j, "FS")
            GAM[j] = sigma_e.dot(f[j]) + sigmabar_e.dot(m[j]) + IA * qdd_j + FV * qd_j + FS * sympy.sign(qd_j)  # (20)

    for name, value in zip(BASE_FORCE_NAMES, list(f[BASE]) + list(m[BASE])):
        program.set_output(output + name, value)
    for j in robot.joint_labels:
        program.set_output(f"{output}{j}", GAM[j])
    program.prune()
    return program


# ------------------------------------------------------ base acceleration
def base_acceleration(robot, *, gravity=True, friction=True, rotor=True, wrench=True, trig=True):
    """Free-floating inverse dynamic model: base acceleration and joint torques
    for given joint accelerations (OpenSYMORO eqs 31-39, ``F_0 = 0``).

    Twists, accelerations and wrenches are 6-vectors in frame j at O_j,
    linear part first; ``ja_j = [sigma_j e_j; sigmabar_j e_j]``, ``jS_i`` the
    screw transform from frame i = a(j), ``jI_Oj`` the spatial inertia.
    Gravity is folded into the base acceleration, ``0Vdot_0 = 0Vdot_b - [0g; 0]``.

    (i) First forward recursion, j = 1 .. n, as for the direct model
    (OpenSYMORO eqs 16-18), and the relative accelerations::

        jgamma_j = [jA_i (iw_i x (iw_i x iP_j)) + 2 sigma_j jw_i x qd_j e_j; sigmabar_j jw_i x qd_j e_j]   (17)
        jbeta_j  = -jF_ej - [jw_j x (jw_j x jMS_j); jw_j x (jJ_j jw_j)]                                   (18)
        jzeta_j  = jgamma_j + qdd_j ja_j                                                                  (31)

    and ``0beta_0`` of link 0 from ``0w_0`` by eq. 18.

    (ii) Backward recursion, j = n .. 1, composite links from ``jI^c_j =
    jI_Oj``, ``jbeta^c_j = jbeta_j``::

        iI^c_i    = iI^c_i + jS_i^T jI^c_j jS_i                                   (33)
        ibeta^c_i = ibeta^c_i + jS_i^T (jbeta^c_j - jI^c_j jzeta_j)              (34)

    ``jI^c_j`` stays the inertia of a rigid body, so it is kept as its ten
    parameters ``J+, MS+, M+`` (SYMORO+ eqs 27-30, as in
    :mod:`~kanerobot.dynamics.composite`).

    (iii) Base, ``0F_0 = 0``::

        0Vdot_0 = (0I^c_0)^-1 0beta^c_0                                           (35)

    solved in the program by :func:`ldl_solve` (LDL^T with the linear
    pivots first: the first three are ``M+_0``, the Schur complement is the
    inertia ``J_G`` of the whole robot about its centre of mass ``c``)::

        0wdot_0 = J_G^-1 (beta_m - c x beta_f),   0vdot_0 = beta_f / M+_0 - 0wdot_0 x c
        0Vdot_b = 0Vdot_0 + [0g; 0]                                               (39)

    (iv) Second forward recursion, j = 1 .. n::

        jVdot_j = jS_i iVdot_i + jzeta_j                                          (36)
        jF_j    = jI^c_j jVdot_j - jbeta^c_j                                      (37)
        GAM_j   = jF_j^T ja_j + FS_j sign(qd_j) + FV_j qd_j + IA_j qdd_j          (38)

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot carrying link 0.
    gravity, friction, rotor, wrench, trig : bool, optional
        As in :func:`inverse_dynamics`.

    Returns
    -------
    Program
        Outputs ``DVX0 DVY0 DVZ0 DWX0 DWY0 DWZ0``, the derivative of the
        base speeds (``qdd[:6]`` of the state, ``0Vdot_b`` less ``0w_0 x
        0v_0``), then ``GAM<label>``.  Inputs: the joint variables, the
        quaternion ``QX0 .. QW0``, ``QP``, the base speeds ``VX0 .. WZ0``,
        ``QDP``, then the parameters sorted by name.  Pruned.

    Raises
    ------
    KaneRobotError
        As :func:`inverse_dynamics`; also when the composite inertia of the
        base is singular in the description itself (a zero pivot).

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = base_acceleration(kr.load(kr.frames_path("satellite")))
    >>> list(program.outputs)
    ['DVX0', 'DVY0', 'DVZ0', 'DWX0', 'DWY0', 'DWZ0', 'GAM1', 'GAM2', 'GAM3']
    >>> [str(s) for s, _ in program.assignments() if str(s).startswith("KGID")]  # the three pivots of J_G
    ['KGID1', 'KGID2', 'KGID3']
    >>> program.definition(sympy.Symbol("KGID1")), program.definition(sympy.Symbol("IM0"))
    (1/KG11, 1/MP0)
    """
    check_floating(robot, "the floating-base acceleration")
    state = [robot.q, QUATERNION, robot.qd, BASE_VELOCITY, robot.qdd]
    program = Program(inputs=base_program_inputs(robot, state, parameter_names(rotor, friction, wrench), gravity), trig=trig)
    placements = frame_placements(robot, program)
    QP = dict(zip(robot.joint_labels, robot.qd))
    QDP = dict(zip(robot.joint_labels, robot.qdd))
    v0, w0 = sympy.Matrix(BASE_VELOCITY[:3]), sympy.Matrix(BASE_VELOCITY[3:])
    g0 = gravity_in_base(program, robot) if gravity else sympy.zeros(3, 1)

    def bias(label, w_j, J, MS):
        return velocity_bias(robot, program, label, w_j, J, MS, wrench=wrench)  # (18)

    # (i) First forward recursion (16)-(18), (31).
    J_c, MS_c, M_c = {}, {}, {}  # composite link j: jJ+_j, jMS+_j, M+_j
    J_c[BASE], MS_c[BASE], M_c[BASE] = link_inertia(robot, BASE)
    w = {BASE: w0}
    beta = {BASE: bias(BASE, w0, J_c[BASE], MS_c[BASE])}
    zeta = {}
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = placements[j]
        jA_i = iA_j.T
        sigma_e, sigmabar_e = motion_parts(frame)
        qd_j, qdd_j = sympy.sympify(QP.get(j, 0)), sympy.sympify(QDP.get(j, 0))
        jw_i = program.assign_matrix(f"WI{{i}}{j}", jA_i * w[i])  # (16)
        w[j] = program.assign_matrix(f"W{{i}}{j}", jw_i + sigmabar_e * qd_j)  # (16)
        iw_i_x_P = program.assign_matrix(f"PW{{i}}{j}", w[i].cross(iP_j))
        iU_i_P = program.assign_matrix(f"LWI{{i}}{j}", w[i].cross(iw_i_x_P))
        gamma_v = jA_i * iU_i_P + 2 * jw_i.cross(sigma_e * qd_j)  # (17)
        gamma_w = jw_i.cross(sigmabar_e * qd_j)
        zeta[j] = sympy.Matrix.vstack(
            program.assign_matrix(f"ZV{{i}}{j}", gamma_v + sigma_e * qdd_j),
            program.assign_matrix(f"ZW{{i}}{j}", gamma_w + sigmabar_e * qdd_j),
        )  # (31)
        J_c[j], MS_c[j], M_c[j] = link_inertia(robot, j)
        beta[j] = bias(j, w[j], J_c[j], MS_c[j])  # (18)

    # (ii) Backward recursion (33)-(34): composite links down to link 0.
    beta_c = dict(beta)
    for frame in list(reversed(robot.frames)) + [None]:
        j = frame.label if frame is not None else BASE
        # Every successor of j has been added: I^c_j and beta^c_j are complete.
        J_c[j] = assign_symmetric(program, lambda r, c, j=j: f"JP{r}{c}{j}", J_c[j])
        MS_c[j] = program.assign_matrix(f"MSP{{i}}{j}", MS_c[j])
        M_c[j] = program.assign(f"MP{j}", M_c[j])
        beta_c[j] = sympy.Matrix.vstack(
            program.assign_matrix(f"BF{{i}}{j}", beta_c[j][:3, 0]),
            program.assign_matrix(f"BM{{i}}{j}", beta_c[j][3:, 0]),
        )
        if frame is None:
            break
        i = frame.antecedent
        iA_j, iP_j = placements[j]
        alpha = program.assign_matrix(f"AP{{i}}{j}", beta_c[j] - _inertia_times(J_c[j], MS_c[j], M_c[j], zeta[j]))
        iMS_j = program.assign_matrix(f"AS{{i}}{j}", iA_j * MS_c[j])  # SYMORO+ (27)
        iP_j_M = program.assign_matrix(f"PM{{i}}{j}", iP_j * M_c[j])
        J_c[i] += rotate_inertia(program, j, iA_j, J_c[j]) + transport_inertia(program, j, iP_j, iMS_j, iP_j_M)  # (33): (28)
        MS_c[i] += iMS_j + iP_j_M  # (29)
        M_c[i] += M_c[j]  # (30)
        beta_c[i] += screw_transform_wrench(program, j, iA_j, iP_j, alpha)  # (34)

    # (iii) The base: 0I^c_0 0Vdot_0 = 0beta^c_0 (35), then (39).
    if M_c[BASE] == 0:
        raise KaneRobotError(f"the floating-base acceleration of {robot.name}: the robot has no mass (M+_0 = 0)")
    beta_f, beta_m = beta_c[BASE][:3, 0], beta_c[BASE][3:, 0]
    IM = program.assign("IM0", 1 / M_c[BASE])
    c = program.assign_matrix("CG{i}", MS_c[BASE] * IM)  # centre of mass of the robot in frame 0
    MS = MS_c[BASE]
    K = sympy.zeros(3, 3)  # J_G = J+_0 - (MS.MS 1 - MS MS^T) / M+_0, the Schur complement of M+_0 1
    for r in range(3):
        for col in range(3):
            if r == col:
                K[r, r] = J_c[BASE][r, r] - sum((MS[k] * c[k] for k in range(3) if k != r), sympy.S.Zero)
            else:
                K[r, col] = J_c[BASE][r, col] + MS[r] * c[col]
    K = assign_symmetric(program, lambda r, col: f"KG{r}{col}", K)
    y = program.assign_matrix("BY{i}", beta_m - c.cross(beta_f))
    wdot0 = ldl_solve(program, K, y, "KG", f"the floating-base acceleration of {robot.name}")
    wdot0 = program.assign_matrix("WP{i}0", wdot0)
    vdot0 = program.assign_matrix("VP{i}0", beta_f * IM - wdot0.cross(c))
    Vdot = {BASE: sympy.Matrix.vstack(vdot0, wdot0)}
    DV = vdot0 + g0 - w0.cross(v0)  # (39), less w0 x v0: the derivative of the base speed

    # (iv) Second forward recursion (36)-(38).
    GAM = {}
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = placements[j]
        jA_i = iA_j.T
        vdot_i, wdot_i = Vdot[i][:3, 0], Vdot[i][3:, 0]
        u = program.assign_matrix(f"VU{{i}}{j}", vdot_i + wdot_i.cross(iP_j))
        Vdot[j] = sympy.Matrix.vstack(
            program.assign_matrix(f"VP{{i}}{j}", jA_i * u + zeta[j][:3, 0]),
            program.assign_matrix(f"WP{{i}}{j}", jA_i * wdot_i + zeta[j][3:, 0]),
        )  # (36)
        if not frame.is_joint:
            continue
        F_j = _inertia_times(J_c[j], MS_c[j], M_c[j], Vdot[j]) - beta_c[j]  # (37)
        f_j = program.assign_matrix(f"E{{i}}{j}", F_j[:3, 0])
        m_j = program.assign_matrix(f"N{{i}}{j}", F_j[3:, 0])
        sigma_e, sigmabar_e = motion_parts(frame)
        qd_j, qdd_j = QP[j], QDP[j]
        IA = link_parameter(robot, j, "IA") if rotor else 0
        FV, FS = (link_parameter(robot, j, "FV"), link_parameter(robot, j, "FS")) if friction else (0, 0)
        GAM[j] = sigma_e.dot(f_j) + sigmabar_e.dot(m_j) + FS * sympy.sign(qd_j) + FV * qd_j + IA * qdd_j  # (38)

    for symbol, value in zip(BASE_ACCELERATION, list(DV) + list(wdot0)):
        program.set_output(symbol.name, value)
    for j in robot.joint_labels:
        program.set_output(f"GAM{j}", GAM[j])
    program.prune()
    return program


def _inertia_times(J, MS, M, V):
    """``jI_Oj V = [M v + w x MS; MS x v + J w]`` for ``V = [v; w]``."""
    v, w = V[:3, 0], V[3:, 0]
    return sympy.Matrix.vstack(M * v + w.cross(MS), MS.cross(v) + J * w)


def ldl_solve(program, K, y, name, what="a linear system"):
    """Solve ``K x = y`` for a symmetric positive definite ``K`` by ``K = L D L^T``,
    every step an intermediate variable of ``program``.

    With ``W_ij = L_ij D_j``::

        D_j  = K_jj - sum_{k<j} L_jk W_jk,     ID_j = 1 / D_j
        W_ij = K_ij - sum_{k<j} L_ik W_jk,     L_ij = W_ij ID_j       (i > j)
        Z_i  = y_i - sum_{k<i} L_ik Z_k                               (L z = y)
        X_i  = Z_i ID_i - sum_{k>i} L_ki X_k                          (D L^T x = z)

    Zeros of ``K`` (a customized model) stay zeros: the terms they cancel
    are never written.  No pivoting: the order of ``K``'s rows is the
    order of the pivots.

    Parameters
    ----------
    program : Program
    K : sympy.Matrix, shape (n, n)
        Symmetric, of program symbols and trivial values.
    y : sympy.Matrix, shape (n, 1)
    name : str
        Prefix of the names: ``{name}D{j}``, ``{name}ID{j}``,
        ``{name}W{i}{j}``, ``{name}L{i}{j}``, ``{name}Z{i}``, ``{name}X{i}``.
    what : str, optional
        The model, for the error message.

    Returns
    -------
    sympy.Matrix, shape (n, 1)
        ``x``, of program symbols.

    Raises
    ------
    SingularityError
        When a pivot ``D_j`` is 0 in the expressions themselves.

    Examples
    --------
    >>> a, b, c, p, q = sympy.symbols("a b c p q")
    >>> program = Program(inputs=[a, b, c, p, q])
    >>> x = ldl_solve(program, sympy.Matrix([[a, b], [b, c]]), sympy.Matrix([p, q]), "K")
    >>> print(program)
    KID1 = 1/a
    KL21 = KID1*b
    KD2 = -KL21*b + c
    KID2 = 1/KD2
    KZ2 = -KL21*p + q
    KX2 = KID2*KZ2
    KX1 = KID1*p - KL21*KX2
    >>> x.T
    Matrix([[KX1, KX2]])
    >>> program.set_output_matrix("X{i}", x)
    Matrix([
    [X1],
    [X2]])
    >>> program.to_function()(4.0, 1.0, 3.0, 1.0, 2.0), np.linalg.solve([[4.0, 1.0], [1.0, 3.0]], [1.0, 2.0])
    (array([0.09090909, 0.63636364]), array([0.09090909, 0.63636364]))
    """
    n = K.rows
    L, W, ID = {}, {}, []
    for j in range(n):
        D_j = program.assign(f"{name}D{j + 1}", K[j, j] - sum((L[j, k] * W[j, k] for k in range(j)), sympy.S.Zero))
        if D_j == 0:
            raise SingularityError(f"{what}: pivot {j + 1} of the LDL^T factorisation is 0: the matrix is singular")
        ID.append(program.assign(f"{name}ID{j + 1}", 1 / D_j))
        for i in range(j + 1, n):
            W[i, j] = program.assign(f"{name}W{i + 1}{j + 1}", K[i, j] - sum((L[i, k] * W[j, k] for k in range(j)), sympy.S.Zero))
            L[i, j] = program.assign(f"{name}L{i + 1}{j + 1}", W[i, j] * ID[j])
    z = []
    for i in range(n):
        z.append(program.assign(f"{name}Z{i + 1}", y[i] - sum((L[i, k] * z[k] for k in range(i)), sympy.S.Zero)))
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = program.assign(f"{name}X{i + 1}", z[i] * ID[i] - sum((L[k, i] * x[k] for k in range(i + 1, n)), sympy.S.Zero))
    return sympy.Matrix(x)


# ------------------------------------------------------ direct dynamics
def direct_dynamics(robot, trig=True):
    """Direct dynamic model of a free-floating robot: base and joint
    accelerations for given joint torques, without the inertia matrix.

    The three recursions of :func:`kanerobot.dynamics.direct.direct_dynamics`
    (OpenSYMORO eqs 16-28, every joint acceleration unknown), with the
    backward recursion carried down to link 0 and the base's acceleration
    unknown too (``0F_0 = 0``)::

        iI*_i    = iI*_i + jS_i^T jK_j jS_i,   ibeta*_i = ibeta*_i - jS_i^T jalpha_j    (24, 25), also for i = 0
        0Vdot_0  = (0I*_0)^-1 0beta*_0                                               (35 with I*)
        0Vdot_b  = 0Vdot_0 + [0g; 0]                                                 (39)

    ``0I*_0`` (the articulated inertia of the whole robot at the base, a
    full symmetric 6x6) is factorised in the program by :func:`ldl_solve`;
    the second forward recursion (27)-(28) then starts from ``0Vdot_0``.

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot carrying link 0.
    trig : bool, optional

    Returns
    -------
    Program
        Outputs ``DVX0 .. DWZ0`` (the derivative of the base speeds) and
        ``QDP<label>``, 6 + n in the order of ``qd``.  Inputs: the joint
        variables, the quaternion, ``QP``, the base speeds, ``GAM``, then the
        parameters (inertia, ``IA``, friction, wrench, ``G``) sorted by name.
        Pruned.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = direct_dynamics(kr.load(kr.frames_path("satellite")))
    >>> list(program.outputs)
    ['DVX0', 'DVY0', 'DVZ0', 'DWX0', 'DWY0', 'DWZ0', 'QDP1', 'QDP2', 'QDP3']
    >>> [str(s) for s, _ in program.assignments() if str(s).startswith("BID")]  # the six pivots of 0I*_0
    ['BID1', 'BID2', 'BID3', 'BID4', 'BID5', 'BID6']
    """
    check_floating(robot, "the floating-base direct dynamic model")
    tau_symbols = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels]
    state = [robot.q, QUATERNION, robot.qd, BASE_VELOCITY, tau_symbols]
    program = Program(inputs=base_program_inputs(robot, state, parameter_names(True, True, True), True), trig=trig)
    placements = frame_placements(robot, program)
    v0, w0 = sympy.Matrix(BASE_VELOCITY[:3]), sympy.Matrix(BASE_VELOCITY[3:])
    g0 = gravity_in_base(program, robot)

    # (i) First forward recursion (16)-(18), link 0 included.
    inertia = {BASE: link_inertia(robot, BASE)}
    beta = {BASE: velocity_bias(robot, program, BASE, w0, *inertia[BASE][:2])}
    w, gamma, beta_links, links = first_forward_recursion(robot, program, placements, w0)
    beta.update(beta_links)
    inertia.update(links)

    # (ii) Backward recursion (19)-(25), down to link 0.
    I_star = {j: spatial_inertia(*inertia[j]) for j in inertia}
    beta_star = dict(beta)
    JD, JU, GW = {}, {}, {}
    for frame in reversed(robot.frames):
        j, i = frame.label, frame.antecedent
        I_star[j] = assign_symmetric(program, lambda r, c, j=j: f"MJE{r}{c}{j}", I_star[j])
        beta_star[j] = program.assign_matrix(f"VBE{{i}}{j}", beta_star[j])
        a_j = frame.motion_subspace()
        if frame.is_joint:
            I_a = program.assign_matrix(f"KA{{i}}{j}", I_star[j] * a_j)
            IA_j = link_parameter(robot, j, "IA")
            H_j = program.assign(f"H{j}", a_j.dot(I_a) + IA_j)  # (19)
            JD[j] = program.assign(f"JD{j}", 1 / H_j)
            JU[j] = program.assign_matrix(f"JU{{i}}{j}", I_a * JD[j])
            GW[j] = program.assign(f"GW{j}", motor_torque(robot, j) + a_j.dot(beta_star[j]))
            K_j = assign_symmetric(program, lambda r, c, j=j: f"GK{r}{c}{j}", articulated_inertia(I_star[j], JU[j], I_a, a_j, IA_j))  # (20)
            alpha_j = K_j * gamma[j] + JU[j] * GW[j] - beta_star[j]  # (21)
        else:
            K_j = I_star[j]  # (22)
            alpha_j = K_j * gamma[j] - beta_star[j]  # (23)
        alpha_j = program.assign_matrix(f"AP{{i}}{j}", alpha_j)
        iA_j, iP_j = placements[j]
        I_star[i] += screw_transform_inertia(program, j, iA_j, iP_j, K_j)  # (24)
        beta_star[i] -= screw_transform_wrench(program, j, iA_j, iP_j, alpha_j)  # (25)

    # (iii) The base: 0I*_0 0Vdot_0 = 0beta*_0, then (39).
    I_star[BASE] = assign_symmetric(program, lambda r, c: f"MJE{r}{c}{BASE}", I_star[BASE])
    beta_star[BASE] = program.assign_matrix(f"VBE{{i}}{BASE}", beta_star[BASE])
    Vdot0 = ldl_solve(program, I_star[BASE], beta_star[BASE], "B", f"the floating-base direct dynamic model of {robot.name}")
    Vdot = {BASE: sympy.Matrix.vstack(
        program.assign_matrix("VP{i}0", Vdot0[:3, 0]), program.assign_matrix("WP{i}0", Vdot0[3:, 0]),
    )}
    DV = Vdot[BASE][:3, 0] + g0 - w0.cross(v0)

    # (iv) Second forward recursion (27)-(28).
    qdd, _ = second_forward_recursion(robot, program, placements, Vdot[BASE], gamma, JU, JD, GW)

    for symbol, value in zip(BASE_ACCELERATION, list(DV) + list(Vdot[BASE][3:, 0])):
        program.set_output(symbol.name, value)
    for j in robot.joint_labels:
        program.set_output(f"QDP{j}", qdd[j])
    program.prune()
    return program


# ------------------------------------------------------------ mass matrix
def mass_matrix(robot, rotor=True, trig=True):
    """The (6+n)x(6+n) inertia matrix ``A(q)`` of eq. 30, in the speeds of the state.

    Composite links (SYMORO+ eqs 27-30) are accumulated down to link 0,
    which gives the base block, the spatial inertia of the whole robot about
    O_0 in frame 0::

        A11 = 0I^c_0 = [M+_0 1,  0MS+_0^T ;  0MS+_0^,  0J+_0]

    Column j of ``A22`` is SYMORO+ eqs 31-38 (the wrench of composite link j
    under a unit ``qdd_j`` climbs from frame to frame); carried one step
    further, to frame 0, that wrench is column j of ``A12``::

        0f = 0A_k kf_k,   0m = 0A_k km_k + 0P_k x 0f,   A12[:, j] = [0f; 0m]   (k: a(k) = 0)

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot carrying link 0.
    rotor : bool, optional
        Add ``IA_j`` to the joints' diagonal entries.
    trig : bool, optional

    Returns
    -------
    Program
        Outputs ``A<r><c>`` for r <= c (``A1_12`` past 9 rows), column by
        column, r and c 1-based positions in ``qd`` (1..6 the base speeds,
        then the joints).  Inputs: the joint variables, then the geometric
        and inertial parameters sorted by name.  Pruned.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = mass_matrix(kr.load(kr.frames_path("satellite")))
    >>> [program.outputs[name] for name in ("A11", "A15", "A16")]
    [MP0, MSP30, -MSP20]
    >>> len(program.outputs)  # the upper triangle of a 9 x 9 matrix, less its 7 zeros
    38
    """
    check_floating(robot, "the floating-base inertia matrix")
    parameters = INERTIAL_NAMES if rotor else RIGID_INERTIAL_NAMES
    program = Program(inputs=base_program_inputs(robot, [robot.q], parameters, False), trig=trig)
    placements = frame_placements(robot, program)

    J_plus, MS_plus, M_plus = {}, {}, {}
    for label in [BASE] + list(robot.labels):
        J_plus[label], MS_plus[label], M_plus[label] = link_inertia(robot, label)
    # Composite links from the leaves down to link 0 (SYMORO+ eqs 27-30).
    for frame in list(reversed(robot.frames)) + [None]:
        j = frame.label if frame is not None else BASE
        J_plus[j] = assign_symmetric(program, lambda r, c, j=j: f"JP{r}{c}{j}", J_plus[j])
        MS_plus[j] = program.assign_matrix(f"MSP{{i}}{j}", MS_plus[j])
        M_plus[j] = program.assign(f"MP{j}", M_plus[j])
        if frame is None:
            break
        i = frame.antecedent
        iA_j, iP_j = placements[j]
        iMS_j = program.assign_matrix(f"AS{{i}}{j}", iA_j * MS_plus[j])  # (27)
        iP_j_M = program.assign_matrix(f"PM{{i}}{j}", iP_j * M_plus[j])
        J_plus[i] += rotate_inertia(program, j, iA_j, J_plus[j]) + transport_inertia(program, j, iP_j, iMS_j, iP_j_M)  # (28)
        MS_plus[i] += iMS_j + iP_j_M  # (29)
        M_plus[i] += M_plus[j]  # (30)

    n = robot.nj
    size = 6 + n
    position = {label: 6 + k for k, label in enumerate(robot.joint_labels)}
    A = sympy.zeros(size, size)
    A[:6, :6] = spatial_inertia(J_plus[BASE], MS_plus[BASE], M_plus[BASE])  # A11
    for j in robot.joint_labels:
        frame = robot.frame(j)
        sigma_e, sigmabar_e = motion_parts(frame)
        f = program.assign_matrix(f"E{{i}}{j}_{j}", M_plus[j] * sigma_e + sigmabar_e.cross(MS_plus[j]))  # (31), (33)
        m = program.assign_matrix(f"N{{i}}{j}_{j}", J_plus[j] * sigmabar_e + MS_plus[j].cross(sigma_e))  # (32), (34)
        IA_j = link_parameter(robot, j, "IA") if rotor else 0
        A[position[j], position[j]] = sigma_e.dot(f) + sigmabar_e.dot(m) + IA_j  # (35)
        k = j
        while k != BASE:
            i = robot.antecedent(k)
            iA_k, iP_k = placements[k]
            f = program.assign_matrix(f"E{{i}}{i}_{j}", iA_k * f)  # (36)
            iA_k_m = program.assign_matrix(f"NA{{i}}{i}_{j}", iA_k * m)
            m = program.assign_matrix(f"N{{i}}{i}_{j}", iA_k_m + iP_k.cross(f))  # (37)
            if i == BASE:
                A[:6, position[j]] = sympy.Matrix.vstack(f, m)  # A12
            elif i in position:
                sigma_e, sigmabar_e = motion_parts(robot.frame(i))
                A[position[i], position[j]] = sigma_e.dot(f) + sigmabar_e.dot(m)  # (38)
            k = i

    names = matrix_entry_names("A", (size, size))
    for c in range(size):
        for r in range(c + 1):
            if A[r, c] != 0:
                program.set_output(names[r][c], A[r, c])
    program.prune()
    return program


# ------------------------------------------------------- pose and quaternion
def quaternion_to_rotation(quaternion):
    """Rotation matrix of a quaternion ``(x, y, z, w)`` (scalar last), normalised first.

    Parameters
    ----------
    quaternion : array_like, shape (..., 4)

    Returns
    -------
    numpy.ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> quaternion_to_rotation([0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]).round(12)  # 90 deg about z
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    q = _normalised(np.asarray(quaternion, dtype=float))
    x, y, z, w = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - z * w)
    R[..., 0, 2] = 2 * (x * z + y * w)
    R[..., 1, 0] = 2 * (x * y + z * w)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - x * w)
    R[..., 2, 0] = 2 * (x * z - y * w)
    R[..., 2, 1] = 2 * (y * z + x * w)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def rotation_to_quaternion(R):
    """Unit quaternion ``(x, y, z, w)`` with ``w >= 0`` of a rotation matrix (Shepperd's method).

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    numpy.ndarray, shape (..., 4)

    Examples
    --------
    >>> R = quaternion_to_rotation([0.1, -0.2, 0.3, 0.9])
    >>> q = rotation_to_quaternion(R)
    >>> np.allclose(q, np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9]))
    True
    """
    R = np.asarray(R, dtype=float)
    trace = np.trace(R, axis1=-2, axis2=-1)
    # The largest of 4w^2, 4x^2, 4y^2, 4z^2 gives the best-conditioned formula.
    candidates = np.stack([trace, R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]], axis=-1)
    best = np.argmax(candidates, axis=-1)
    q = np.empty(R.shape[:-2] + (4,))
    diag = (R[..., 0, 0], R[..., 1, 1], R[..., 2, 2])
    for case in range(4):
        mask = best == case
        if not np.any(mask):
            continue
        r = R[mask]
        if case == 0:
            s = 2 * np.sqrt(1 + trace[mask])
            out = [(r[:, 2, 1] - r[:, 1, 2]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s, (r[:, 1, 0] - r[:, 0, 1]) / s, s / 4]
        else:
            a = case - 1
            b, c = (a + 1) % 3, (a + 2) % 3
            s = 2 * np.sqrt(1 + 2 * diag[a][mask] - trace[mask])
            out = [None] * 4
            out[a] = s / 4
            out[b] = (r[:, b, a] + r[:, a, b]) / s
            out[c] = (r[:, c, a] + r[:, a, c]) / s
            out[3] = (r[:, c, b] - r[:, b, c]) / s
        q[mask] = np.stack(out, axis=-1)
    q *= np.where(q[..., 3:] < 0, -1.0, 1.0)
    return q


def _normalised(quaternion):
    norm = np.linalg.norm(quaternion, axis=-1, keepdims=True)
    if np.any(norm == 0) or not np.all(np.isfinite(norm)):
        raise KaneRobotError("the base quaternion (q[3:7], x y z w) is zero or not finite: give a unit quaternion")
    return quaternion / norm


def base_pose(q):
    """The base pose ``wT_0`` (OpenSYMORO's ``Z``) of configurations ``q``.

    Parameters
    ----------
    q : array_like, shape (..., 7 + n)
        Position of O_0 in the world frame, quaternion (x y z w), joints.

    Returns
    -------
    numpy.ndarray, shape (..., 4, 4)

    Examples
    --------
    >>> base_pose([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.5])[:3, 3]
    array([1., 2., 3.])
    """
    q = np.asarray(q, dtype=float)
    T = np.zeros(q.shape[:-1] + (4, 4))
    T[..., :3, :3] = quaternion_to_rotation(q[..., 3:7])
    T[..., :3, 3] = q[..., :3]
    T[..., 3, 3] = 1.0
    return T


def configuration_derivative(q, qd):
    """``dq/dt`` of the state: ``(wR_0 v, 1/2 Q (w, 0), qd_joints)``.

    The position moves with the base velocity in the world frame; the
    quaternion with ``dQ/dt = 1/2 Q * (w, 0)`` (quaternion product, ``w`` in
    frame 0), whose value is orthogonal to ``Q``, so its norm is kept to the
    accuracy of the integrator; the joints with their rates.

    Parameters
    ----------
    q : array_like, shape (7 + n,) or (N, 7 + n)
    qd : array_like, shape (6 + n,) or (N, 6 + n)

    Returns
    -------
    numpy.ndarray, shape of ``q``

    Examples
    --------
    A base turning about its z axis at 2 rad/s and moving along its x axis at 1 m/s, turned 90 deg about z:

    >>> s = np.sqrt(0.5)
    >>> configuration_derivative([0, 0, 0, 0, 0, s, s], [1, 0, 0, 0, 0, 2]).round(12) + 0.0
    array([ 0.        ,  1.        ,  0.        ,  0.        ,  0.        ,
            0.70710678, -0.70710678])
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    _check_lengths(q, qd)
    u, w = q[..., 3:6], q[..., 6:7]
    omega = qd[..., 3:6]
    out = np.empty(np.broadcast_shapes(q.shape, qd.shape[:-1] + (q.shape[-1],)))
    out[..., :3] = np.einsum("...ij,...j->...i", quaternion_to_rotation(q[..., 3:7]), qd[..., :3])
    out[..., 3:6] = 0.5 * (w * omega + np.cross(u, omega))
    out[..., 6] = -0.5 * np.sum(u * omega, axis=-1)
    out[..., 7:] = qd[..., 6:]
    return out


def integrate(q, qd, dt):
    """The configuration reached from ``q`` moving at constant ``qd`` for ``dt``.

    The base follows the exponential of its twist (pinocchio's
    ``integrate`` for a free flyer, ``wT_0 exp(dt [v; w])``)::

        wR_0' = wR_0 exp(dt w^),     Q' = Q * (sin(t/2) w/|w|, cos(t/2)),  t = dt |w|
        wx_0' = wx_0 + wR_0 V(dt w) dt v,
        V(p) = 1 + (1 - cos|p|)/|p|^2 p^ + (|p| - sin|p|)/|p|^3 p^ p^

    then the quaternion is normalised (its norm stays 1 to rounding); the
    joints move by ``dt qd``.  No Euler angles, so no singularity.

    Parameters
    ----------
    q : array_like, shape (7 + n,) or (N, 7 + n)
    qd : array_like, shape (6 + n,) or (N, 6 + n)
    dt : float or array_like broadcasting to (N,)

    Returns
    -------
    numpy.ndarray, shape of ``q``

    Examples
    --------
    A quarter turn about z while moving along x: the base ends on an arc of radius 2/pi.

    >>> integrate([0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, np.pi / 2], 1.0).round(12)
    array([0.63661977, 0.63661977, 0.        , 0.        , 0.        ,
           0.70710678, 0.70710678])
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    _check_lengths(q, qd)
    dt = np.asarray(dt, dtype=float)[..., None]
    v, omega = qd[..., :3] * dt, qd[..., 3:6] * dt
    theta = np.linalg.norm(omega, axis=-1, keepdims=True)
    small = theta < 1e-4
    t2 = theta * theta
    safe = np.where(small, 1.0, theta)
    half_sinc = np.where(small, 0.5 - t2 / 48, np.sin(safe / 2) / safe)  # sin(t/2)/t
    a = np.where(small, 0.5 - t2 / 24, (1 - np.cos(safe)) / safe**2)
    b = np.where(small, 1 / 6 - t2 / 120, (safe - np.sin(safe)) / safe**3)
    step = np.concatenate([half_sinc * omega, np.cos(theta / 2)], axis=-1)  # exp of the rotation
    Qn = _quaternion_product(_normalised(q[..., 3:7]), step)
    w_x_v = np.cross(omega, v)
    translation = v + a * w_x_v + b * np.cross(omega, w_x_v)
    out = np.array(np.broadcast_to(q, np.broadcast_shapes(q.shape, qd.shape[:-1] + (q.shape[-1],))))
    out[..., :3] = q[..., :3] + np.einsum("...ij,...j->...i", quaternion_to_rotation(q[..., 3:7]), translation)
    out[..., 3:7] = _normalised(Qn)
    out[..., 7:] = q[..., 7:] + qd[..., 6:] * dt
    return out


def _quaternion_product(p, q):
    """``p * q`` for quaternions ``(x, y, z, w)``."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    return np.concatenate([pw * qv + qw * pv + np.cross(pv, qv), pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)], axis=-1)


def _check_lengths(q, qd):
    if q.shape[-1] < 7 or qd.shape[-1] != q.shape[-1] - 1:
        raise KaneRobotError(
            f"q needs 7 + n values (base position, quaternion x y z w, joints) and qd 6 + n (base v, w, joint rates); "
            f"got {q.shape[-1]} and {qd.shape[-1]}"
        )


# ------------------------------------------------------------------ models
#: Models a :class:`FloatingBaseModel` offers, with what they compute.
MODELS = {
    "inverse_dynamics": "generalized forces [F_0; GAM](q, qd, qdd), base wrench then joint torques, by Newton-Euler",
    "base_acceleration": "free-floating base acceleration and joint torques (q, qd, qdd joints) by composite links",
    "mass_matrix": "inertia matrix A(q), (6+n)x(6+n), by composite links",
    "h": "nonlinear effects H(q, qd): Coriolis, centrifugal, gravity, friction, external wrenches",
    "gravity": "generalized gravity forces Q(q)",
    "direct_dynamics": "base and joint accelerations qdd(q, qd, GAM), recursive, no inertia matrix",
    "coriolis_matrix": "Coriolis matrix C(q, qd), (6+n)x(6+n): C qd the velocity terms of H, A' - 2C skew (coriolis)",
}


#: Engines of a :class:`FloatingBaseModel`.
FLOATING_METHODS = ("newton-euler", "kane", "lagrange")
#: Models the Kane and Lagrange engines solve numerically from A and H.
SOLVED_FROM_A_H = ("base_acceleration", "direct_dynamics")


class FloatingBaseModel(DynamicModel):
    """The dynamic models of a floating robot, derived on first use.

    The floating-base counterpart of
    :class:`~kanerobot.dynamics.model.DynamicModel` (Newton-Euler engine):
    :meth:`program` gives each model as a program (see :data:`MODELS`),
    :meth:`numeric` binds the parameters to numbers.

    Parameters
    ----------
    robot : Robot
        Floating (``is_floating = 1``) serial or tree robot; link 0 is the base.
    method : {"newton-euler", "kane"}, optional
        The engine.  ``"kane"``: the inverse dynamics, ``A``, ``H`` and ``Q``
        read off sympy's KanesMethod
        (:class:`~kanerobot.dynamics.kane.KaneSystem`, the base's six speeds
        first; ``source="kanes_method"``), and the base acceleration and
        direct dynamics solved numerically from ``A`` and ``H`` (see
        :meth:`has_program`); :attr:`kanes_method`, :attr:`bodies`,
        :attr:`loads`, :attr:`frames` give the mechanics objects.

    Raises
    ------
    KaneRobotError
        When the robot is not floating, has loops, flexible joints, or a
        base (link 0) or total mass that is a number <= 0; for an unknown
        ``method``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = FloatingBaseModel(kr.load(kr.frames_path("satellite")))
    >>> model.nq, model.nv
    (10, 9)
    >>> model.parameters[:6]  # the wrench FX3 .. CZ3 on link 3 is a state, given as wrench=
    ['D1', 'D3', 'FS1', 'FS2', 'FS3', 'FV1']
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> fn = model.numeric(random_parameters(model.robot, np.random.default_rng(0)), backend="numpy")
    >>> q = [0, 0, 0, 0, 0, 0, 1, 0.1, 0.2, 0.3]
    >>> fn.mass_matrix(q).shape, fn.direct_dynamics(q, np.zeros(9), np.zeros(3)).shape
    ((9, 9), (9,))

    By Kane's method, the direct dynamics solved from A and H:

    >>> kane = FloatingBaseModel(model.robot, method="kane")
    >>> kane.has_program("direct_dynamics"), kane.kanes_method.mass_matrix.shape
    (False, (9, 9))
    """

    models = MODELS
    parameter_programs = ("inverse_dynamics", "base_acceleration")
    c_prefix = "kr_floating_"

    def __init__(self, robot, method="newton-euler"):
        check_floating(robot, "the floating-base dynamic model")
        if method not in FLOATING_METHODS:
            raise KaneRobotError(
                f"{robot.name} has a floating base: method={method!r} does not model it; available are "
                f"{', '.join(FLOATING_METHODS)}"
            )
        super().__init__(robot, method)
        if method != "newton-euler":
            # Kane and Lagrange have no base_acceleration program to take parameters from.
            self.parameter_programs = ("inverse_dynamics",)

    def has_program(self, name):
        """False for the models the Kane and Lagrange engines solve numerically
        from ``A`` and ``H``: ``base_acceleration`` (the first six rows of ``A
        qdd + H = [0; GAM]`` solved for the base) and ``direct_dynamics``."""
        return self.method == "newton-euler" or name not in SOLVED_FROM_A_H

    def op_count(self, name):
        """Operations of model ``name`` (``{"mul", "add", "fn"}``); for a model
        solved from ``A`` and ``H``, theirs plus a Cholesky factorisation and
        two triangular solves of size 6 + n (as
        :meth:`~kanerobot.dynamics.model.DynamicModel.op_count`)."""
        if self.has_program(name):
            return dict(self.program(name).op_count())
        n = self.nv
        A, H = self.op_count("mass_matrix"), self.op_count("h")
        solve = n * (n + 1) * (n + 2) // 6 + n * n
        return {"add": A["add"] + H["add"] + n + solve, "mul": A["mul"] + H["mul"] + solve, "fn": A["fn"] + H["fn"] + n}

    @property
    def n(self):
        """Number of joints."""
        return len(self.q)

    @property
    def nq(self):
        """Length of a configuration: 7 + n."""
        return 7 + self.n

    @property
    def nv(self):
        """Length of a velocity or acceleration: 6 + n."""
        return 6 + self.n

    def _derive(self, name):
        if not self.has_program(name):
            raise KaneRobotError(
                f"the {self.method} engine has no program for {name}: it is solved numerically from A and H; "
                f"use method='newton-euler' for the recursive program"
            )
        if self.method == "kane":
            return self.kane_system.program(name, source="kanes_method")
        if name == "coriolis_matrix":  # from this engine's A (Christoffel and Hamel terms)
            return coriolis.coriolis_matrix(self.robot, self.program("mass_matrix"))
        if self.method == "lagrange":
            builders = {"inverse_dynamics": lagrange.inverse_dynamics, "mass_matrix": lagrange.mass_matrix,
                        "h": lagrange.h, "gravity": lagrange.gravity}
        else:
            builders = {"inverse_dynamics": inverse_dynamics, "base_acceleration": base_acceleration,
                        "mass_matrix": mass_matrix, "h": nonlinear_effects, "gravity": gravity_forces,
                        "direct_dynamics": direct_dynamics}
        return builders[name](self.robot)

    def _state_groups(self):
        """[(key, symbols)] in argument order: joints, quaternion, rates, base
        speeds, accelerations, base accelerations, torques, then wrenches."""
        return [
            ("q", self.q),
            ("quaternion", list(QUATERNION)),
            ("qd", self.qd),
            ("base_velocity", list(BASE_VELOCITY)),
            ("qdd", self.qdd),
            ("base_acceleration", list(BASE_ACCELERATION)),
            ("tau", self.tau),
        ] + [(("wrench", label), symbols) for label, symbols in self.wrench.items()]

    def _output_grid(self, name):
        """The (nv, nv) layout of a matrix's outputs for the C backend (see
        :func:`~kanerobot.dynamics.model.matrix_grid`)."""
        if name not in MATRIX_MODELS:
            return None
        return matrix_grid(self.program(name), self.nv, name, MATRIX_MODELS[name])

    def numeric(self, values, backend="auto", physical=True, check=True):
        """Numeric functions with the parameters bound to ``values`` ({name: float}).

        As :meth:`kanerobot.dynamics.model.DynamicModel.numeric`: ``values``
        must give every name of :attr:`parameters` (other symbols of the
        robot are accepted and ignored); ``backend`` is ``"numpy"``, ``"c"``
        or ``"auto"`` (C when a compiler is found); ``physical`` checks that
        the values are those of real bodies, ``check`` that states are finite.

        Raises
        ------
        ParameterError
            Missing values, or names that are not symbols of the robot.
        KaneRobotError
            When the values give the base (link 0) or the whole robot a mass <= 0.
        """
        return FloatingBaseDynamics(self, values, backend=backend, physical=physical, check=check)


class FloatingBaseDynamics(NumericDynamics):
    """Numeric floating-base dynamics of one robot with bound parameters.

    State convention (pinocchio's free flyer): ``q`` has 7 + n values (base
    position in the world frame, base quaternion x y z w, joints), ``qd``
    and ``qdd`` 6 + n (base linear and angular velocity in frame 0, joint
    rates; ``qdd`` their time derivatives).  Every function takes one state
    (1-D arrays) or a batch (2-D, ``(N, size)``) and answers in kind.  The
    quaternion is normalised before use.

    Attributes
    ----------
    backend : {"c", "numpy"}
    requested_backend : {"auto", "c", "numpy"}
    fallback_reason : str or None
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        # The base's mass first: its message says what a floating base needs.
        check_masses(model.robot, finite_values(model.robot, values))
        super().__init__(model, values, backend=backend, physical=physical, check=check)

    @property
    def n(self):
        return self.model.n

    @property
    def nq(self):
        return self.model.nq

    @property
    def nv(self):
        return self.model.nv

    # ------------------------------------------------------------ states
    def _configuration(self, q):
        joints = " ".join(s.name if isinstance(s, sympy.Symbol) else str(s) for s in self.model.q)
        q, single = as_states(q, self.nq, "q", f"base position x y z, quaternion x y z w, joints {joints}", self.check)
        return q, single

    def _velocity(self, qd, what="qd"):
        joints = " ".join(str(s) for s in self.model.qd)
        return as_states(qd, self.nv, what, f"base v x y z and w x y z in frame 0, joints {joints}", self.check)

    def _joints(self, x, what):
        return as_states(x, self.n, what, f"one per joint {', '.join(self.model.robot.joint_labels)}", self.check)

    def _base_states(self, q, qd=None, qdd=None):
        states = {"q": q[:, 7:], "quaternion": _normalised(q[:, 3:7])}
        if qd is not None:
            states["qd"], states["base_velocity"] = qd[:, 6:], qd[:, :6]
        if qdd is not None:
            states["qdd"], states["base_acceleration"] = qdd[:, 6:], qdd[:, :6]
        return states

    # -------------------------------------------------------- evaluation
    def _matrix(self, name, flat, symmetric=True):
        """The (nv, nv) matrix from its outputs (the upper triangle of ``A``, all of ``C``)."""
        N = self.nv
        names = matrix_entry_names(name_prefix(name), (N, N))
        position = {names[i][j]: (i, j) for i in range(N) for j in range(N)}
        M = np.zeros((flat.shape[0], N, N))
        for k, output in enumerate(self.model.program(name).outputs):
            i, j = position[output]
            M[:, i, j] = flat[:, k]
            if symmetric:
                M[:, j, i] = flat[:, k]
        return M

    def _mass_and_bias(self, states):
        """``A`` (N, nv, nv) and ``H`` (N, nv) at the states (q, qd, wrenches),
        broadcast to one batch."""
        A = self._evaluate("mass_matrix", {key: states[key] for key in ("q", "quaternion")})
        H = self._evaluate("h", {key: value for key, value in states.items() if key not in ("qdd", "base_acceleration", "tau")})
        batch = max(len(A), len(H))
        return np.broadcast_to(A, (batch,) + A.shape[1:]), np.broadcast_to(H, (batch, H.shape[1]))

    def _solve(self, A, b, what):
        try:
            return np.linalg.solve(A, b[..., None])[..., 0]
        except np.linalg.LinAlgError:
            raise SingularityError(
                f"robot {self.model.robot.name}: the {what} of the robot is singular (check the masses and inertias)"
            ) from None

    def _solved_direct_dynamics(self, states, tau):
        """``A^-1 ([0; tau] - H)``: the direct dynamics of an engine without a
        recursive program (Kane)."""
        A, H = self._mass_and_bias(states)
        rhs = np.concatenate([np.zeros((len(H), 6)), np.broadcast_to(tau, (len(H), self.n))], axis=1) - H
        return self._solve(A, rhs, "inertia matrix")

    def _solved_base_acceleration(self, states, qdd):
        """``[vdot_b; GAM]`` with the base free (``F_0 = 0``), from ``A`` and ``H``
        (Kane): ``A11 vdot_b = -(A12 qdd + H1)``, ``GAM = A21 vdot_b + A22 qdd + H2``."""
        A, H = self._mass_and_bias(states)
        qdd = np.broadcast_to(qdd, (len(H), self.n))
        base = self._solve(A[:, :6, :6], -(np.einsum("nij,nj->ni", A[:, :6, 6:], qdd) + H[:, :6]), "composite inertia")
        torques = np.einsum("nij,nj->ni", A[:, 6:, :6], base) + np.einsum("nij,nj->ni", A[:, 6:, 6:], qdd) + H[:, 6:]
        return np.concatenate([base, torques], axis=1)

    @staticmethod
    def _result(x, single):
        return x[0] if single else x

    # --------------------------------------------------------- the models
    def inverse_dynamics(self, q, qd, qdd, wrench=None):
        """Generalized forces ``[F_0; GAM] = A qdd + H``, shape (6+n,) or (N, 6+n).

        ``F_0`` is the wrench the base needs (force then moment, frame 0,
        about O_0): pinocchio's ``rnea`` for a free flyer.  ``wrench`` maps
        a link label to the 6-vector (FX FY FZ CX CY CZ) the link exerts on
        the environment, in its frame; links described with a wrench and
        left out get zero.
        """
        (q, single), (qd, _), (qdd, _) = self._configuration(q), self._velocity(qd), self._velocity(qdd, "qdd")
        states = self._base_states(q, qd, qdd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(qdd))))
        return self._result(self._evaluate("inverse_dynamics", states), single)

    def base_acceleration(self, q, qd, qdd, wrench=None):
        """Free-floating inverse dynamics: the base moves freely (``F_0 = 0``).

        Parameters
        ----------
        q : array_like, shape (7+n,) or (N, 7+n)
        qd : array_like, shape (6+n,) or (N, 6+n)
        qdd : array_like, shape (n,) or (N, n)
            The joint accelerations only.
        wrench : dict, optional
            As in :meth:`inverse_dynamics`.

        Returns
        -------
        acceleration : numpy.ndarray, shape (6,) or (N, 6)
            The derivative of the base speeds (``qdd[:6]`` of the state).
        torques : numpy.ndarray, shape (n,) or (N, n)
            The joint torques that give ``qdd``.

        Raises
        ------
        SingularityError
            When the composite inertia of the robot is singular at ``q``.
        """
        (q, single), (qd, _), (qdd, _) = self._configuration(q), self._velocity(qd), self._joints(qdd, "qdd (joints)")
        states = self._base_states(q, qd)
        states["qdd"] = qdd
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(qdd))))
        if self.model.has_program("base_acceleration"):
            out = self._evaluate("base_acceleration", states)
        else:
            out = self._solved_base_acceleration(states, qdd)
        if not np.all(np.isfinite(out)):
            raise SingularityError(
                f"robot {self.model.robot.name}: the composite inertia of the whole robot is singular (check the masses and inertias)"
            )
        return self._result(out[:, :6], single), self._result(out[:, 6:], single)

    def mass_matrix(self, q):
        """Inertia matrix ``A(q)``, shape (6+n, 6+n) or (N, 6+n, 6+n)."""
        q, single = self._configuration(q)
        return self._result(self._evaluate("mass_matrix", self._base_states(q)), single)

    def h(self, q, qd, wrench=None):
        """Nonlinear effects ``H(q, qd)`` (Coriolis, centrifugal, gravity, friction, wrenches), shape (6+n,) or (N, 6+n)."""
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        states = self._base_states(q, qd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd))))
        return self._result(self._evaluate("h", states), single)

    def coriolis_matrix(self, q, qd):
        """Coriolis matrix ``C(q, qd)``, shape (6+n, 6+n) or (N, 6+n, 6+n).

        ``C qd`` is the velocity part of ``H`` (no gravity, friction or
        wrench) and ``A' - 2C`` is skew-symmetric; see
        :mod:`~kanerobot.dynamics.coriolis`.
        """
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        return self._result(self._evaluate("coriolis_matrix", self._base_states(q, qd)), single)

    def gravity(self, q):
        """Generalized gravity forces ``Q(q)``, shape (6+n,) or (N, 6+n)."""
        q, single = self._configuration(q)
        return self._result(self._evaluate("gravity", self._base_states(q)), single)

    def direct_dynamics(self, q, qd, tau, wrench=None):
        """Accelerations for joint torques ``tau``, the base free (``[0; tau] = A qdd + H``).

        By the recursive program :func:`direct_dynamics` (no inertia matrix).

        Parameters
        ----------
        q : array_like, shape (7+n,) or (N, 7+n)
        qd : array_like, shape (6+n,) or (N, 6+n)
        tau : array_like, shape (n,) or (N, n)
            Joint torques (the base is not actuated).
        wrench : dict, optional
            As in :meth:`inverse_dynamics`.

        Returns
        -------
        numpy.ndarray, shape (6+n,) or (N, 6+n)
            Base acceleration (derivative of the base speeds), then joint accelerations.

        Raises
        ------
        SingularityError
            When the articulated inertia at the base is singular.
        """
        (q, single), (qd, _), (tau, _) = self._configuration(q), self._velocity(qd), self._joints(tau, "tau")
        states = self._base_states(q, qd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(tau))))
        if not self.model.has_program("direct_dynamics"):
            return self._result(self._solved_direct_dynamics(states, tau), single)
        states["tau"] = tau
        out = self._evaluate("direct_dynamics", states)
        if not np.all(np.isfinite(out)):
            raise SingularityError(
                f"robot {self.model.robot.name}: the articulated inertia of the robot is singular (check the masses and inertias)"
            )
        return self._result(out, single)

    def momentum(self, q, qd):
        """Linear and angular momentum of the whole robot in the world frame.

        ``A(q)[:6] qd`` is the momentum in frame 0 about O_0 ``[L; K]``;
        in the world frame, ``[wR_0 L; wR_0 K + wx_0 x wR_0 L]`` (angular
        momentum about the world origin).  Without gravity, external wrenches
        and joint friction, both are constant along a motion.

        Returns
        -------
        numpy.ndarray, shape (6,) or (N, 6)
        """
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        A = self._evaluate("mass_matrix", self._base_states(q))
        local = np.einsum("nij,nj->ni", A[:, :6, :], qd)
        R = quaternion_to_rotation(q[:, 3:7])
        L = np.einsum("nij,nj->ni", R, local[:, :3])
        K = np.einsum("nij,nj->ni", R, local[:, 3:]) + np.cross(q[:, :3], L)
        return self._result(np.concatenate([L, K], axis=1), single)

    def configuration_derivative(self, q, qd):
        """``dq/dt`` (see :func:`configuration_derivative`), with the state lengths checked."""
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        return self._result(configuration_derivative(q, qd), single)

    def integrate(self, q, qd, dt):
        """The configuration after ``dt`` at constant ``qd`` (see :func:`integrate`)."""
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        return self._result(integrate(q, qd, dt), single)
