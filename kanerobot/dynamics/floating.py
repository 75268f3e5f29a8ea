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
Boltzmann-Hamel equations of :mod:`~kanerobot.dynamics.floating_lagrange`,
and both solve the base acceleration and the direct dynamics numerically
from ``A`` and ``H``; the three engines agree to rounding
(``tests/test_floating.py``).  The Coriolis matrix, ``C qd`` the velocity
terms of ``H`` and ``A' - 2C`` skew, is pinocchio's
``computeCoriolisMatrix`` (:mod:`~kanerobot.dynamics.floating_coriolis`).
"""

import numpy as np
import sympy

from kanerobot.dynamics import composite, floating_coriolis, floating_lagrange, newton_euler
from kanerobot.dynamics.common import (
    assign_symmetric,
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
    base_program_inputs,
    check_floating,
    check_masses,
    gravity_in_base,
    parameter_names,
)
from kanerobot.errors import KaneRobotError, SingularityError
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import (
    FREE_FLYER,
    JOINT_SIZES,
    base_pose,
    configuration_derivative,
    integrate,
    normalised_quaternion,
    quaternion_to_rotation,
    rotation_to_quaternion,
)
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
    "gravity",
    "gravity_forces",
    "h",
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
#: ``[F_0; GAM] = A qdd + H`` (pinocchio's ``rnea``): Khalil's Newton-Euler,
#: whose root joint is the free flyer (outputs ``GAMFX0 .. GAMCZ0`` first).
inverse_dynamics = newton_euler.inverse_dynamics
#: ``H(q, qd)`` (pinocchio's ``nle``): Newton-Euler at zero acceleration.
nonlinear_effects = newton_euler.coriolis_gravity
#: ``Q(q)``: Newton-Euler at rest, the base wrench that holds the robot first (``QFX0 .. QCZ0``).
gravity_forces = newton_euler.gravity_torques
#: The same, by the names every engine module uses (:data:`kanerobot.dynamics.model.MODELS`).
h, gravity = nonlinear_effects, gravity_forces


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
#: The (6+n)x(6+n) inertia matrix ``A(q)`` of eq. 30, in the speeds of the
#: state: composite links, whose root joint is the free flyer (the base block
#: is composite link 0's spatial inertia, ``A11 .. A66``; zeros left out).
mass_matrix = composite.mass_matrix


# ------------------------------------------------------------------ models
#: Models a :class:`FloatingBaseModel` offers, with what they compute.
MODELS = {
    "inverse_dynamics": "generalized forces [F_0; GAM](q, qd, qdd), base wrench then joint torques, by Newton-Euler",
    "base_acceleration": "free-floating base acceleration and joint torques (q, qd, qdd joints) by composite links",
    "mass_matrix": "inertia matrix A(q), (6+n)x(6+n), by composite links",
    "h": "nonlinear effects H(q, qd): Coriolis, centrifugal, gravity, friction, external wrenches",
    "gravity": "generalized gravity forces Q(q)",
    "direct_dynamics": "base and joint accelerations qdd(q, qd, GAM), recursive, no inertia matrix",
    "coriolis_matrix": "Coriolis matrix C(q, qd), (6+n)x(6+n): C qd the velocity terms of H, A' - 2C skew (floating_coriolis)",
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
        The engine.  ``"kane"``: the inverse dynamics, ``A``, ``H``, ``Q`` and
        ``C`` by Kane's equations summed over the tree
        (:class:`~kanerobot.dynamics.kane.KaneSystem`, the base's six speeds
        first; KanesMethod gives them too, ``source="kanes_method"``), and the base acceleration and
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
        """Length of a configuration: 7 + n (the free flyer's seven, then the joints)."""
        return JOINT_SIZES[FREE_FLYER][0] + self.n

    @property
    def nv(self):
        """Length of a velocity or acceleration: 6 + n (the free flyer's six, then the joints)."""
        return JOINT_SIZES[FREE_FLYER][1] + self.n

    def _derive(self, name):
        if not self.has_program(name):
            raise KaneRobotError(
                f"the {self.method} engine has no program for {name}: it is solved numerically from A and H; "
                f"use method='newton-euler' for the recursive program"
            )
        if self.method == "kane":
            return self.kane_system.program(name)
        if name == "coriolis_matrix":  # from this engine's A (Christoffel and Hamel terms)
            return floating_coriolis.coriolis_matrix(self.robot, self.program("mass_matrix"))
        if self.method == "lagrange":
            builders = {"inverse_dynamics": floating_lagrange.inverse_dynamics, "mass_matrix": floating_lagrange.mass_matrix,
                        "h": floating_lagrange.nonlinear_effects, "gravity": floating_lagrange.gravity_forces}
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
        states = {"q": q[:, 7:], "quaternion": normalised_quaternion(q[:, 3:7])}
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
        :mod:`~kanerobot.dynamics.floating_coriolis`.
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
