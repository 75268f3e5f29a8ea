"""Articulated bodies: the direct dynamic model and the free-floating inverse model.

SYMORO+ section 5.4 (after Featherstone's articulated bodies), in the form of
OpenSYMORO eqs 16-29 (fixed root, flexible joints) and 31-39 (free flyer),
written once here.  Each joint is *torque known* (``tau_j`` given,
``qdd_j`` unknown: every joint of the direct model, the link side of a
flexible joint) or *acceleration known* (``qdd_j`` given, the torque
unknown: the free-floating inverse model, the rigid joints and motors of the
flexible inverse model, fixed frames); the root is fixed (its motion known)
or a free flyer (:mod:`~kanerobot.dynamics.root`).  The derivation (the
four passes, eqs 16-39, rigid composite links, the free flyer's 6x6
system) is in ``docs/theory/direct.md``.

A joint has nv speeds and a 6 x nv motion subspace ``S_j`` (its joint
model's): for one speed ``H_j = S_j^T I*_j S_j + IA_j`` is a scalar and the
programs are SYMORO's (``JD = 1/H``); for several (spherical, planar) it is
nv x nv, factorised as ``L D L^T`` in the program, and ``JU = I*_j S_j
H_j^-1`` and ``H_j^-1 GW_j`` are solved through it (spatial_v2's ``ABA``,
pinocchio's ``aba``).  The root joint is one more joint whose parent is the
world: none of a fixed root's speeds, the six of a free flyer (``S_0 = 1``:
the 6x6 system of link 0, ``JU_0 = 1``), torque zero.

:func:`articulated_bodies` records the four steps into a program for any
mix of joints and either root; :func:`direct_dynamics` (every torque known,
either root), :func:`base_acceleration` (free flyer, every acceleration
known) and :mod:`~kanerobot.dynamics.flexible`'s three-step model compose it.
"""

import collections
import functools

import sympy

from kanerobot.dynamics.common import (
    assign_symmetric,
    check_structure,
    frame_placements,
    joint_torques,
    link_inertia,
    link_parameter,
    motion_parts,
    program_inputs,
    rotate_inertia,
)
from kanerobot.dynamics.composite import transport_inertia
from kanerobot.dynamics.free_flyer import check_floating, parameter_names
from kanerobot.dynamics.root import root_joint_model, root_motion, state_inputs
from kanerobot.errors import KaneRobotError, SingularityError
from kanerobot.kinematics import forward_step, root_link_motion
from kanerobot.robot.description import BASE, DYNAMIC_NAMES, WRENCH_NAMES
from kanerobot.robot.joints import hat
from kanerobot.symbolic.program import Program
from kanerobot.symbolic.vectors import cross, matmul, minus, product, summed

__all__ = [
    "ArticulatedBodies",
    "RigidInertia",
    "articulated_bodies",
    "backward_recursion",
    "base_acceleration",
    "direct_dynamics",
    "first_forward_recursion",
    "inertia_times",
    "joint_torques",
    "ldl_solve",
    "root_acceleration",
    "second_forward_recursion",
    "velocity_bias",
]


# ------------------------------------------------------------ the models
def direct_dynamics(robot, trig=True):
    """Accelerations ``qdd(q, qd, GAM)`` by articulated bodies (no inertia
    matrix is formed or inverted), for a fixed root or a free flyer.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot, fixed frames allowed anywhere, joints of one
        speed or several (spherical, planar).  A fixed root may move with a
        given motion (``W0``, ``WP0``, ``VP0``); a free flyer
        (``robot.floating``) carries link 0 and is not actuated.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23 = C2*C3 - S2*S3``).

    Returns
    -------
    kanerobot.symbolic.Program
        Pruned.  Outputs: the root joint's accelerations (``DVX0 .. DWZ0``,
        the derivative of a free flyer's speeds; none for a fixed root),
        then each joint's (``QDP<label>`` for one speed, its
        :meth:`~kanerobot.robot.joints.JointModel.acceleration_names` for
        several), in the order of ``qd``.  Inputs, fixed root: the joint
        variables, the velocities ``QP``, the torques (``GAM<label>``, or
        ``GAM`` and the joint's force names, ``GAMCX2``, for several
        speeds), then the parameters sorted by name: geometric, every link's
        dynamic parameters (inertia, ``IA``, friction ``FV`` and ``FS``,
        external wrench ``FX .. CZ``), the base motion and gravity ``G``.
        Free flyer: the joint variables, the quaternion, ``QP``, the base
        speeds, the torques, then the parameters (the base motion is state;
        ``G`` is in the world frame).  Every joint's acceleration is
        unknown: a flexible joint (eta = 1) on a fixed root is one whose
        ``GAM`` the caller sets to its elastic torque ``-k (q - q_r)``.

    Raises
    ------
    KaneRobotError
        When the robot has closed loops or a wheeled base, or a free flyer
        the recursions do not handle
        (:func:`~kanerobot.dynamics.free_flyer.check_floating`).
    SingularityError
        When a pivot of the free flyer's 6x6 system, or of a joint's
        nv x nv ``H``, is 0 in the description.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = direct_dynamics(kr.load(kr.frames_path("planar2")))
    >>> list(program.outputs)
    ['QDP1', 'QDP2']
    >>> print("\\n".join(str(program).splitlines()[-2:]))
    GU2 = JU12*VR12 + JU22*VR22 + JU62*QDP1
    QDP2 = -GU2 + GW2*JD2
    >>> program.op_count()
    {'add': 33, 'mul': 53, 'fn': 4}

    Names follow SYMORO's listing: ``WI``, ``W`` (eq. 16), ``LW``, ``WQ``
    (the linear and angular parts of gamma, eq. 17), ``JW``, ``KW``, ``SW``
    (eq. 18), ``MJE`` (I*), ``VBE`` (beta*), ``H``, ``JD = 1/H``, ``JU``,
    ``GW``, ``GK`` (K), ``AP`` (alpha), ``VR``, ``GU``, ``WP``, ``VP``.

    On the satellite (a free flyer), the articulated inertia at the base is
    a full 6x6, solved in the program with six pivots (reciprocals ``BID``):

    >>> program = direct_dynamics(kr.load(kr.frames_path("satellite")))
    >>> list(program.outputs)
    ['DVX0', 'DVY0', 'DVZ0', 'DWX0', 'DWY0', 'DWZ0', 'QDP1', 'QDP2', 'QDP3']
    >>> [str(s) for s, _ in program.assignments() if str(s).startswith("BID")]
    ['BID1', 'BID2', 'BID3', 'BID4', 'BID5', 'BID6']

    A joint of several speeds has an nv x nv ``H``, factorised as
    ``L D L^T`` in the program (``H2_ID1 .. H2_ID3``, the reciprocal
    pivots of the spherical joint 2 of ``tests/ball_robots.py``); its
    accelerations are outputs under the joint model's names:

    >>> from kanerobot.robot import joints
    >>> I3, z = [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 1]
    >>> ball = kr.Robot.create("ball", [kr.Frame("1", "0", 0, 1, kr.GeneralPlacement(R0=I3, P=[0, 0, 0], axis=z, q="th1")),
    ...                                 kr.Frame("2", "1", joints.Spherical(), 1, kr.GeneralPlacement(R0=I3, P=["L1", 0, 0], axis=z))])
    >>> program = direct_dynamics(ball)
    >>> list(program.outputs)
    ['QDP1', 'DWX2', 'DWY2', 'DWZ2']
    >>> [s.name for s in program.inputs if s.name.startswith("GAM")]
    ['GAM1', 'GAMCX2', 'GAMCY2', 'GAMCZ2']
    >>> [str(s) for s, _ in program.assignments() if str(s).startswith("H2_ID")]
    ['H2_ID1', 'H2_ID2', 'H2_ID3']
    """
    stem = robot.stems
    root = root_joint_model(robot)
    what = "the floating-base direct dynamic model" if root.nv else "the direct dynamic model"
    GAM = {label: joint_torques(robot, label) for label in robot.joint_labels}
    program = Program(inputs=_inputs(robot, root, what, [t for label in robot.joint_labels for t in GAM[label]]), trig=trig)
    bodies = articulated_bodies(program, robot, known_tau=GAM, what=what)
    for name, value in zip(root.acceleration_names(stem[BASE]), bodies.root or ()):
        program.set_output(name, value)
    for j in robot.joint_labels:
        for name, value in zip(robot.frame(j).joint.acceleration_names(stem[j]), _per_speed(bodies.qdd[j])):
            program.set_output(name, value)
    program.prune()
    return program


def _inputs(robot, root, what, torques):
    """The direct model's inputs, in the order each root's models have always taken them: a root
    with speeds has its motion in the state (:func:`~kanerobot.dynamics.root.state_inputs`), a
    fixed root's given motion is a parameter, sorted with the others."""
    if root.nv:
        return state_inputs(robot, what, qd=True, qdd=False, names=DYNAMIC_NAMES, gravity=True, other=torques)
    check_structure(robot, what)
    return program_inputs(robot, [robot.q, robot.qd, torques], DYNAMIC_NAMES, base=True)


def base_acceleration(robot, *, gravity=True, friction=True, rotor=True, wrench=True, trig=True):
    """Free-floating inverse dynamic model: the base acceleration and the
    joint torques for given joint accelerations (OpenSYMORO eqs 31-39, ``0F_0 = 0``).

    :func:`articulated_bodies` with every joint's acceleration known: the
    articulated inertias are those of the composite links (eq. 33), kept
    as ten parameters each, and the base's 6x6 system is solved through
    the Schur complement of ``M+_0`` (step (iii) in docs/theory/direct.md).

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot carrying link 0.
    gravity : bool, optional
        Gravity ``G`` (world frame).
    friction : bool, optional
        Add ``FV_j QP_j + FS_j sign(QP_j)`` to the torques.
    rotor : bool, optional
        Add the rotor inertia term ``IA_j QDP_j``.
    wrench : bool, optional
        Add the wrench ``FX .. CZ`` that each link exerts on the environment.
    trig : bool, optional
        Apply the program's trigonometric rules.

    Returns
    -------
    Program
        Outputs ``DVX0 DVY0 DVZ0 DWX0 DWY0 DWZ0``, the derivative of the
        base speeds (``qdd[:6]`` of the state), then ``GAM<label>`` (``GAM``
        and the force names for a joint of several speeds).
        Inputs: the joint variables, the quaternion ``QX0 .. QW0``, ``QP``,
        the base speeds ``VX0 .. WZ0``, ``QDP``, then the parameters sorted
        by name.  Pruned.

    Raises
    ------
    KaneRobotError
        For a robot without a free flyer, or one the recursions do not
        handle (:func:`~kanerobot.dynamics.free_flyer.check_floating`);
        when the whole robot has no mass.
    SingularityError
        When a pivot of ``J_G`` is 0 in the description.

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
    stem = robot.stems
    root = root_joint_model(robot)
    what = "the floating-base acceleration"
    check_floating(robot, what)
    names = parameter_names(rotor, friction, wrench)
    inputs = state_inputs(robot, what, qd=True, qdd=False, names=names, gravity=gravity, other=robot.qdd)
    program = Program(inputs=inputs, trig=trig)
    QDP = robot.joint_accelerations
    bodies = articulated_bodies(program, robot, known_qdd=QDP, gravity=gravity, friction=friction, rotor=rotor, wrench=wrench, what=what)
    for name, value in zip(root.acceleration_names(stem[BASE]), bodies.root):
        program.set_output(name, value)
    for j in robot.joint_labels:
        for name, value in zip(robot.frame(j).joint.force_names(stem[j]), _per_speed(bodies.torque[j])):
            program.set_output(f"GAM{name}", value)
    program.prune()
    return program


# ---------------------------------------------------- the articulated bodies
#: What :func:`articulated_bodies` gives: ``qdd`` of the torque-known joints,
#: ``torque`` of the acceleration-known ones (an expression for a joint of
#: one speed, a tuple of nv for several), and ``root``, the accelerations of
#: the root joint (the six of a free flyer; ``None`` for a fixed root).
ArticulatedBodies = collections.namedtuple("ArticulatedBodies", ["qdd", "torque", "root"])


def articulated_bodies(program, robot, known_tau=None, known_qdd=None, *, gravity=True, friction=True, rotor=True, wrench=True, what="the articulated-body model"):
    """Record the articulated-body passes of the module docstring into ``program``.

    Link 0 hangs from the world by the root joint
    (:func:`~kanerobot.dynamics.root.root_joint_model`), one joint more: a
    fixed root has no speed (link 0 moves as it is told,
    :func:`~kanerobot.dynamics.root.root_motion`), a free flyer six, whose
    torques are zero (it is not actuated) and whose accelerations are
    unknown, like those of a torque-known joint.

    Parameters
    ----------
    program : Program
        Its inputs hold the state and parameters the passes read.
    robot : Robot
        Serial or tree robot on a fixed root or a free flyer; its joints'
        speeds (``robot.joint_speeds``) are the velocities.
    known_tau : dict, optional
        ``label -> Gamma_j``, the generalized force applied at each joint
        whose acceleration is unknown (friction is subtracted here): an
        expression for a joint of one speed, a sequence of nv for several.
    known_qdd : dict, optional
        ``label -> qdd_j`` of the joints whose acceleration is known (idem).
        Every joint is in exactly one of the two; fixed frames in neither.
    gravity, friction, rotor, wrench : bool, optional
        Gravity ``G``; friction ``FV, FS``; rotor inertia ``IA``; the links'
        external wrenches ``FX .. CZ``.
    what : str, optional
        The model, for error messages.

    Returns
    -------
    ArticulatedBodies
        ``qdd`` (eq. 27) and ``torque`` (eq. 29) by joint label, and
        ``root`` (eq. 39, 6 entries) for a free flyer.

    Raises
    ------
    KaneRobotError
        When a joint's torque and acceleration are both known, or neither.

    Examples
    --------
    The planar arm with joint 1 driven at a known acceleration and joint 2
    free (no torque): joint 2 is then a pendulum on a moving support.

    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = Program(inputs=list(arm.q) + list(arm.qd) + [arm.qdd[0]])
    >>> bodies = articulated_bodies(program, arm, known_tau={"2": 0}, known_qdd={"1": arm.qdd[0]}, friction=False, gravity=False)
    >>> sorted(bodies.qdd), sorted(bodies.torque), bodies.root
    (['2'], ['1'], None)
    """
    stem = robot.stems
    root = root_joint_model(robot)
    known_tau, known_qdd = _speeds_of(known_tau), _speeds_of(known_qdd)
    for label in robot.joint_labels:
        if (label in known_tau) == (label in known_qdd):
            raise KaneRobotError(
                f"{what} of {robot.name}: joint {label} needs either its torque or its acceleration known, "
                f"not {'both' if label in known_tau else 'neither'}"
            )
    placements = frame_placements(robot, program)
    QP = robot.joint_speeds

    def parameter(flag, j, name):
        return link_parameter(robot, j, name) if flag else sympy.S.Zero

    def friction_torque(j, k):
        return parameter(friction, j, "FV") * QP[j][k] + parameter(friction, j, "FS") * sympy.sign(QP[j][k])

    # (i) Link 0 from the world by the root joint; the first forward recursion (16)-(18), and (31)
    # where qdd_j is known.  The world's motion in frame 0 (root_motion with the root's speeds at
    # rest): a fixed root's given motion is named where the program starts, as it always was; a
    # free flyer's gravity, turned into frame 0, only after the solve at the root, where it is used.
    world = functools.partial(root_motion, program, robot, qd=False, qdd=False)
    link0 = _root_link(robot, root, world(gravity=gravity and not root.nv))
    _, gamma, beta, inertia = first_forward_recursion(robot, program, placements, sympy.Matrix(link0.w), wrench=wrench)
    zeta = dict(gamma)  # zeta_j = gamma_j where qdd_j is unknown
    for frame in robot.frames:
        j = frame.label
        if j in known_qdd:
            S_lin, S_ang = motion_parts(frame)
            zeta[j] = sympy.Matrix.vstack(
                program.assign_matrix(f"ZV{{i}}{stem[j]}", gamma[j][:3, 0] + _along(S_lin, known_qdd[j])),
                program.assign_matrix(f"ZW{{i}}{stem[j]}", gamma[j][3:, 0] + _along(S_ang, known_qdd[j])),
            )  # (31)

    # (ii) Backward recursion (19)-(25), down to the root joint: its torque is zero.
    tau = {j: [t - friction_torque(j, k) for k, t in enumerate(known_tau[j])] for j in known_tau}
    tau[BASE] = [sympy.S.Zero] * root.nv
    IA = {j: parameter(rotor, j, "IA") for j in robot.joint_labels}
    IA[BASE] = sympy.S.Zero
    I_star, beta_star, JU, JD, GW = backward_recursion(robot, program, placements, inertia, beta, zeta, tau, IA, what=what)

    # (iii) Link 0: the root joint's accelerations (35), (39), the free flyer's 6x6 system solved at
    # the end of (ii); (iv) the second forward recursion (27)-(28), then (26), (29) where qdd_j is known.
    link0 = _root_link(robot, root, world(gravity=gravity))
    VR0 = sympy.Matrix(list(link0.Vdot) + list(link0.wdot))
    unknown = (JU[BASE], JD[BASE], GW[BASE]) if BASE in JU else ()
    root_qdd, Vdot0 = _link_acceleration(program, stem[BASE], _subspace(root), VR0, root.acceleration_names(stem[BASE]), *unknown)
    qdd, Vdot = second_forward_recursion(robot, program, placements, _named_acceleration(program, stem[BASE], Vdot0), zeta, JU, JD, GW)
    torque = {}
    for frame in robot.frames:
        j = frame.label
        if j in known_qdd:
            F_j = inertia_times(I_star[j], Vdot[j]) - beta_star[j]  # (26)
            F_j = sympy.Matrix.vstack(program.assign_matrix(f"E{{i}}{stem[j]}", F_j[:3, 0]), program.assign_matrix(f"N{{i}}{stem[j]}", F_j[3:, 0]))
            S = frame.motion_subspace()
            torque[j] = [S[:, k].dot(F_j) + friction_torque(j, k) + IA[j] * known_qdd[j][k] for k in range(S.cols)]  # (29)
    return ArticulatedBodies(
        {j: _one_or_all(v) for j, v in qdd.items()}, {j: _one_or_all(v) for j, v in torque.items()}, root_qdd or None
    )


def _speeds_of(values):
    """``label -> tuple`` of the values given per joint: one expression, or a sequence of nv."""
    return {label: tuple(value) if isinstance(value, (list, tuple, sympy.MatrixBase)) else (value,) for label, value in (values or {}).items()}


def _one_or_all(values):
    """A joint's values as :class:`ArticulatedBodies` gives them: the expression of one speed, a tuple of several."""
    return values[0] if len(values) == 1 else tuple(values)


def _per_speed(value):
    """The inverse of :func:`_one_or_all`."""
    return value if isinstance(value, tuple) else (value,)


def _subspace(model, axis=None):
    """The 6 x nv motion subspace of a joint model, linear rows first."""
    return sympy.Matrix.vstack(*model.subspace(axis))


def _along(S, rates):
    """``S qdd``, a column: for one speed the product by the scalar (the expressions the programs
    have always had), else :func:`~kanerobot.symbolic.vectors.matmul` of the nv rates."""
    if S.cols == 1:
        return S * rates[0]
    if S.cols == 0:
        return sympy.zeros(S.rows, 1)
    return matmul(S, sympy.Matrix(S.cols, 1, list(rates)))


def _root_link(robot, root, world):
    """Link 0's motion with the root joint's accelerations zero: the root's step
    (:func:`~kanerobot.kinematics.forward_step`) from the world's motion ``world``
    (:func:`~kanerobot.dynamics.root.root_motion` with the root's speeds at rest, in frame 0).

    A :class:`~kanerobot.kinematics.LinkMotion` of expressions: ``w`` is link 0's angular
    velocity, ``(Vdot, wdot)`` its acceleration ``VR_0`` but for the root's own
    (``w x v`` and gravity for a free flyer, the given motion for a fixed root).
    """
    speeds = [sympy.Symbol(name) for name in root.speed_names(robot.stems[BASE])]
    zero = [sympy.S.Zero] * root.nv
    return forward_step(root_link_motion(*world), sympy.eye(3), sympy.zeros(3, 1), root.subspace(None), speeds, zero)


def _named_acceleration(program, tag, Vdot):
    """``jVdot_j`` with its entries named ``VP``, ``WP``."""
    return sympy.Matrix.vstack(program.assign_matrix(f"VP{{i}}{tag}", Vdot[:3, 0]), program.assign_matrix(f"WP{{i}}{tag}", Vdot[3:, 0]))


def _link_acceleration(program, tag, S, VR, names, JU=None, JD=None, GW=None, known=None):
    """``(qdd_j, jVdot_j = VR_j + S_j qdd_j)`` (eqs 27-28) for a joint of motion subspace ``S`` (6 x nv).

    With ``JU`` (its acceleration unknown) ``qdd_j = H_j^-1 GW_j - JU_j^T VR_j``, named ``names``:
    ``GW*JD - GU`` for one speed; for several ``JD`` is ``H_j^-1 GW_j`` already; for six
    (``S = 1``, a free flyer) ``JU = 1`` and ``qdd_j`` is left as expressions (``jVdot_j`` is then
    the solution itself, ``VR_j`` cancels).  Without, ``known`` (zero by default) is ``qdd_j``.
    """
    nv = S.cols
    if JU is None:
        return None, VR + _along(S, known if known is not None else [sympy.S.Zero] * nv)
    if nv == 1:
        GU = program.assign(f"GU{tag}", JU.dot(VR))  # ja_j^T jI*_j VR_j H_j^-1
        qdd = [program.assign(names[0], GW * JD - GU)]  # (27)
    elif S == sympy.eye(6):
        qdd = [JD[k] - VR[k] for k in range(6)]
    else:
        GU = program.assign_matrix(lambda r, c: f"GU{r}_{tag}", matmul(JU.T, VR))
        qdd = [program.assign(name, x - u) for name, x, u in zip(names, JD, GU)]  # (27)
    return qdd, VR + _along(S, qdd)  # (28)


def velocity_bias(robot, program, label, w_j, J, MS, wrench=True):
    """``jbeta_j = -jF_ej - [jw_j x (jw_j x jMS_j); jw_j x (jJ_j jw_j)]`` (eq. 18).

    Names ``WM``, ``JW``, ``SW``, ``KW`` (SYMORO's); ``wrench=False`` leaves
    out the external wrench ``F_e`` (``FX .. CZ``).
    """
    stem = robot.stems
    F_e = sympy.Matrix([link_parameter(robot, label, name) for name in WRENCH_NAMES]) if wrench else sympy.zeros(6, 1)
    w_x_MS = program.assign_matrix(f"WM{{i}}{stem[label]}", cross(w_j, MS))
    Jw = program.assign_matrix(f"JW{{i}}{stem[label]}", matmul(J, w_j))
    return -F_e - sympy.Matrix.vstack(
        program.assign_matrix(f"SW{{i}}{stem[label]}", cross(w_j, w_x_MS)),
        program.assign_matrix(f"KW{{i}}{stem[label]}", cross(w_j, Jw)),
    )


def first_forward_recursion(robot, program, placements, w0, wrench=True):
    """The first forward recursion, j = 1 .. n (eqs 16-18).

    Parameters
    ----------
    robot : Robot
    program : Program
    placements : dict
        ``label -> (iA_j, iP_j)`` (:func:`~kanerobot.dynamics.common.frame_placements`).
    w0 : sympy.Matrix, shape (3, 1)
        Angular velocity of link 0.
    wrench : bool, optional
        Include the links' external wrenches in beta.

    Returns
    -------
    w, gamma, beta, inertia : dict
        By frame label: the angular velocity ``jw_j`` (16, ``WI``, ``W``),
        the relative acceleration ``jgamma_j`` (17, ``LW``, ``WQ``), the
        bias wrench ``jbeta_j`` (18, :func:`velocity_bias`) and
        ``(J, MS, M)`` of the link; ``w`` also has link 0, and so do
        ``beta`` and ``inertia`` on a free flyer (link 0 is then a body of
        the recursions).
    """
    stem = robot.stems
    QP = robot.joint_speeds
    w = {BASE: w0}
    gamma, beta, inertia = {}, {}, {}
    if root_joint_model(robot).nv:  # link 0 is a body of the recursions when its joint has speeds
        J, MS, _M = inertia[BASE] = link_inertia(robot, BASE)
        beta[BASE] = velocity_bias(robot, program, BASE, w0, J, MS, wrench)  # (18)
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = placements[j]
        jA_i = iA_j.T
        S_lin, S_ang = motion_parts(frame)  # sigma_j e_j, sigmabar_j e_j for one speed
        rates = QP.get(j, ())
        qd = sympy.Matrix(len(rates), 1, list(rates))
        sigma_e_qd, sigmabar_e_qd = S_lin * qd, S_ang * qd
        jw_i = program.assign_matrix(f"WI{{i}}{stem[j]}", matmul(jA_i, w[i]))  # (16)
        w[j] = program.assign_matrix(f"W{{i}}{stem[j]}", jw_i + sigmabar_e_qd)  # (16)
        iw_i_x_P = program.assign_matrix(f"PW{{i}}{stem[j]}", cross(w[i], iP_j))
        iU_i_P = program.assign_matrix(f"LWI{{i}}{stem[j]}", cross(w[i], iw_i_x_P))  # iw_i x (iw_i x iP_j)
        gamma[j] = sympy.Matrix.vstack(
            # + (S_ang qd) x (S_lin qd) for a joint that turns and slides (planar, kinematics.forward_step's Coriolis term)
            program.assign_matrix(f"LW{{i}}{stem[j]}", matmul(jA_i, iU_i_P) + 2 * jw_i.cross(sigma_e_qd) + sigmabar_e_qd.cross(sigma_e_qd)),
            program.assign_matrix(f"WQ{{i}}{stem[j]}", cross(jw_i, sigmabar_e_qd)),
        )  # (17)
        J, MS, _M = inertia[j] = link_inertia(robot, j)
        beta[j] = velocity_bias(robot, program, j, w[j], J, MS, wrench)  # (18)
    return w, gamma, beta, inertia


def backward_recursion(robot, program, placements, inertia, beta, zeta, tau, IA, what="the articulated-body model"):
    """The backward recursion, j = n .. 1 (eqs 19-25), then the root joint when link 0 is a body.

    Parameters
    ----------
    robot, program, placements
        As in :func:`first_forward_recursion`.
    inertia, beta : dict
        ``(J, MS, M)`` and ``jbeta_j`` by label (:func:`first_forward_recursion`);
        link 0 is there when its joint has speeds (a free flyer).
    zeta : dict
        ``jzeta_j`` (31) of the acceleration-known joints, ``jgamma_j`` of
        the others.
    tau : dict
        ``tau_j``, the torques less friction (one a speed), of the
        torque-known joints (and of the root joint, ``BASE``); the other
        frames have their acceleration known.
    IA : dict
        The rotor inertia of each joint (0 to leave it out).
    what : str, optional
        The model, for the messages.

    Returns
    -------
    I_star, beta_star : dict
        ``jI*_j`` (a :class:`RigidInertia` or a 6x6 matrix) and
        ``jbeta*_j`` of every link (link 0 on a free flyer).
    JU, JD, GW : dict
        Of the torque-known joints: ``jI*_j S_j H_j^-1`` (6 x nv),
        ``tau_j + S_j^T jbeta*_j`` and, for one speed, ``JD = 1/H_j``; for
        several, ``JD = H_j^-1 GW_j`` (nv), solved through ``H_j = L D L^T``
        (:func:`ldl_solve`'s steps, prefix ``H<j>_``); for a joint moving
        its link freely (``S_j = 1``, the free flyer) ``JU = 1`` and ``JD``
        solves ``I*_j`` by :func:`root_acceleration`.
    """
    stem = robot.stems
    I_star = {j: RigidInertia(*inertia[j]) for j in inertia}  # I*_j = I_Oj
    beta_star = dict(beta)
    JU, JD, GW = {}, {}, {}

    def close(j, i, S):
        """Joint j once every successor of link j is added: its H, and what link j carries to link i (if a body)."""
        torque_known = j in tau
        full = S == sympy.eye(6)  # the joint moves link j freely: I*_j is solved as it is, rigid or not
        I_star[j] = _named_inertia(program, stem[j], I_star[j], matrix=torque_known and not full)
        beta_star[j] = program.assign_matrix(f"VBE{{i}}{stem[j]}", beta_star[j])
        carried = i in I_star  # a fixed root's motion is known: nothing is carried to it
        if torque_known:
            I_a, JU[j], JD[j], GW[j] = _joint_inertia(program, robot, j, I_star[j], S, beta_star[j], tau[j], IA[j], what, full)
            if not carried:
                return  # K_j and alpha_j only feed the antecedent
            K_j = sympy.zeros(6, 6) if full else articulated_inertia(I_star[j], JU[j], I_a, S, IA[j])
            K_j = assign_symmetric(program, lambda r, c: f"GK{r}{c}{stem[j]}", K_j)  # (20)
            alpha_j = matmul(K_j, zeta[j]) + JU[j] * GW[j] - beta_star[j]  # (21)
        else:
            if not carried:
                return
            K_j = I_star[j]  # (22)
            alpha_j = inertia_times(K_j, zeta[j]) - beta_star[j]  # (23)
        alpha_j = program.assign_matrix(f"AP{{i}}{stem[j]}", alpha_j)
        iA_j, iP_j = placements[j]
        I_star[i] = _add_inertias(I_star[i], _screw_transform(program, stem[j], iA_j, iP_j, K_j))  # (24)
        beta_star[i] = beta_star[i] - screw_transform_wrench(program, stem[j], iA_j, iP_j, alpha_j)  # (25)

    for frame in reversed(robot.frames):
        close(frame.label, frame.antecedent, frame.motion_subspace())
    if BASE in I_star:  # link 0 is a body: its joint has speeds
        close(BASE, None, _subspace(root_joint_model(robot)))
    return I_star, beta_star, JU, JD, GW


def _joint_inertia(program, robot, label, I_star, S, beta_star, tau, IA, what, full):
    """``(I* S, JU, JD, GW)`` of the torque-known joint ``label`` (eq. 19): see :func:`backward_recursion`."""
    tag, nv = robot.stems[label], S.cols
    if full:
        GW = program.assign_matrix(lambda r, c: f"GW{r}_{tag}", sympy.Matrix(tau) + matmul(S.T, beta_star))
        return None, sympy.eye(6), root_acceleration(program, robot, I_star, GW, what), GW
    if nv == 1:
        I_a = program.assign_matrix(f"KA{{i}}{tag}", matmul(I_star, S))  # jI*_j ja_j
        H = program.assign(f"H{tag}", S.dot(I_a) + IA)  # (19)
        if H == 0:  # structurally: nothing with mass (nor a rotor) moves with joint j
            raise SingularityError(
                f"robot {robot.name}: joint {label} moves only massless links and has no rotor inertia (IA), so the "
                f"direct dynamic model would divide by zero; give a link it carries a mass or IA{tag} a value"
            )
        JD = program.assign(f"JD{tag}", 1 / H)
        JU = program.assign_matrix(f"JU{{i}}{tag}", I_a * JD)  # jI*_j ja_j H_j^-1
        GW = program.assign(f"GW{tag}", tau[0] + S.dot(beta_star))  # tau_j + ja_j^T jbeta*_j
        return I_a, JU, JD, GW
    I_a = program.assign_matrix(lambda r, c: f"KA{r}{c}_{tag}", matmul(I_star, S))
    H = assign_symmetric(program, lambda r, c: f"H{r}{c}_{tag}", matmul(S.T, I_a) + IA * sympy.eye(nv))  # (19)
    GW = program.assign_matrix(lambda r, c: f"GW{r}_{tag}", sympy.Matrix(tau) + matmul(S.T, beta_star))
    L, ID = _ldl_factor(program, H, f"H{tag}_", f"{what} of {robot.name}: joint {label}, whose {nv}x{nv} inertia H")
    # JU = I* S H^-1, row by row: H JU_r^T = (I* S)_r^T
    JU = sympy.Matrix(
        [_ldl_substitute(program, L, ID, I_a[r, :].T, lambda k, r=r: f"JZ{r + 1}{k}_{tag}", lambda k, r=r: f"JU{r + 1}{k}_{tag}") for r in range(6)]
    )
    JD = _ldl_substitute(program, L, ID, GW, lambda k: f"GZ{k}_{tag}", lambda k: f"GD{k}_{tag}")
    return I_a, JU, JD, GW


def root_acceleration(program, robot, I_star, beta_star, what="the floating-base model"):
    """``0Vdot_0`` of a free flyer: ``0I*_0 0Vdot_0 = 0beta*_0`` (eq. 35), solved in the program.

    Parameters
    ----------
    program : Program
    robot : Robot
        For the messages.
    I_star : RigidInertia or sympy.Matrix
        The articulated inertia of the whole robot at link 0.  A rigid
        one (every joint's acceleration known) is solved through the Schur
        complement of its mass (names ``IM0``, ``CG``, ``KG``, ``BY``, then
        :func:`ldl_solve` with prefix ``KG``); a 6x6 by :func:`ldl_solve`
        (prefix ``B``).
    beta_star : sympy.Matrix, shape (6, 1)
    what : str, optional
        The model, for the messages.

    Returns
    -------
    sympy.Matrix, shape (6, 1)
        ``[0vdot_0; 0wdot_0]`` (gravity included), named ``VP{r}0``, ``WP{r}0``.

    Raises
    ------
    KaneRobotError
        When a rigid ``I*`` has no mass (``M+_0 = 0``).
    SingularityError
        When a pivot is 0 in the expressions themselves.
    """
    if isinstance(I_star, RigidInertia):
        J, MS, M = I_star
        if M == 0:
            raise KaneRobotError(f"{what} of {robot.name}: the robot has no mass (M+_0 = 0)")
        beta_f, beta_m = beta_star[:3, 0], beta_star[3:, 0]
        IM = program.assign("IM0", 1 / M)
        c = program.assign_matrix("CG{i}", MS * IM)  # centre of mass of the robot in frame 0
        J_G = sympy.Matrix(J)  # J+_0 - (MS.MS 1 - MS MS^T) / M+_0, the Schur complement of M+_0 1
        for r in range(3):
            for col in range(3):
                J_G[r, col] += MS[r] * c[col] if r != col else -sum(MS[k] * c[k] for k in range(3) if k != r)
        J_G = assign_symmetric(program, lambda r, col: f"KG{r}{col}", J_G)
        y = program.assign_matrix("BY{i}", beta_m - c.cross(beta_f))
        wdot0 = program.assign_matrix("WP{i}0", ldl_solve(program, J_G, y, "KG", f"{what} of {robot.name}"))
        vdot0 = program.assign_matrix("VP{i}0", beta_f * IM - wdot0.cross(c))
        return sympy.Matrix.vstack(vdot0, wdot0)
    Vdot0 = ldl_solve(program, I_star, beta_star, "B", f"{what} of {robot.name}")
    return sympy.Matrix.vstack(program.assign_matrix("VP{i}0", Vdot0[:3, 0]), program.assign_matrix("WP{i}0", Vdot0[3:, 0]))


def second_forward_recursion(robot, program, placements, Vdot0, gamma, JU, JD, GW, known_qdd=None):
    """The second forward recursion (eqs 27-28).

    Joint j with ``JU[j]`` (its torque known) gets ``qdd_j = H_j^-1 GW_j -
    JU_j^T VR_j`` (27), named as its accelerations (``QDP_j = GW_j JD_j -
    JU_j . VR_j`` for one speed); the others move with ``known_qdd`` (0 by
    default: fixed frames, or joints whose ``gamma`` is already zeta, eq.
    31).  ``jVdot_j = VR_j + S_j qdd_j`` (28) with ``VR_j = jS_i iVdot_i +
    jgamma_j``.

    Parameters
    ----------
    robot, program, placements
        As in :func:`first_forward_recursion`.
    Vdot0 : sympy.Matrix, shape (6, 1)
        The spatial acceleration of link 0 (gravity included).
    gamma, JU, JD, GW : dict
        From the first forward and the backward recursions.
    known_qdd : dict, optional
        ``label -> accelerations`` (one expression, or a sequence of nv) of joints without ``JU``.

    Returns
    -------
    qdd : dict
        ``label -> [qdd_j]`` (nv each) of the joints with ``JU``.
    Vdot : dict
        ``jVdot_j`` of every link (``VP``, ``WP``).
    """
    stem = robot.stems
    known_qdd = _speeds_of(known_qdd)
    Vdot = {BASE: Vdot0}
    qdd = {}
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = placements[j]
        jA_i = iA_j.T
        vdot_i, wdot_i = Vdot[i][:3, 0], Vdot[i][3:, 0]
        u = program.assign_matrix(f"VU{{i}}{stem[j]}", vdot_i + wdot_i.cross(iP_j))
        VR = sympy.Matrix.vstack(matmul(jA_i, u), matmul(jA_i, wdot_i)) + gamma[j]  # jS_i iVdot_i + jgamma_j
        VR = program.assign_matrix(f"VR{{i}}{stem[j]}", VR)
        JU_j, JD_j, GW_j = (JU[j], JD[j], GW[j]) if j in JU else (None, None, None)  # None: the acceleration is known
        names = frame.joint.acceleration_names(stem[j])
        qdd_j, Vdot_j = _link_acceleration(
            program, stem[j], frame.motion_subspace(), VR, names, JU_j, JD_j, GW_j, known=known_qdd.get(j)
        )
        if qdd_j is not None:
            qdd[j] = qdd_j
        Vdot[j] = _named_acceleration(program, stem[j], Vdot_j)
    return qdd, Vdot


# ------------------------------------------------------------ inertias
class RigidInertia(collections.namedtuple("RigidInertia", ["J", "MS", "M"])):
    """The spatial inertia of a rigid body about O_j by its ten parameters.

    ``J`` (3x3, about O_j), ``MS`` (3x1) and ``M``: the 6x6 is
    :func:`spatial_inertia`; products with it and its move to another frame
    (SYMORO+ eqs 27-30) cost less written this way.
    """

    def matrix(self):
        """The 6x6 ``[M I3, MS^T; MS^, J]``."""
        return spatial_inertia(self.J, self.MS, self.M)

    def times(self, V):
        """``I V = [M v + w x MS; MS x v + J w]`` for ``V = [v; w]``.

        Examples
        --------
        >>> M, MX, ZZ, v, w = sympy.symbols("M MX ZZ v w")
        >>> body = RigidInertia(sympy.diag(0, 0, ZZ), sympy.Matrix([MX, 0, 0]), M)
        >>> (body.times(sympy.Matrix([v, 0, 0, 0, 0, w])) - body.matrix() * sympy.Matrix([v, 0, 0, 0, 0, w])).T
        Matrix([[0, 0, 0, 0, 0, 0]])
        """
        v, w = V[:3, 0], V[3:, 0]
        return sympy.Matrix.vstack(self.M * v + w.cross(self.MS), self.MS.cross(v) + matmul(self.J, w))


def inertia_times(I, V):
    """``I V`` for a :class:`RigidInertia` or a 6x6 matrix ``I``."""
    return I.times(V) if isinstance(I, RigidInertia) else matmul(I, V)


def _named_inertia(program, j, I, matrix=False):
    """``I`` with its entries named: ``JP``, ``MSP``, ``MP`` for a rigid one
    (unless ``matrix``: a torque-known joint projects it), else ``MJE``."""
    if isinstance(I, RigidInertia) and not matrix:
        return RigidInertia(
            assign_symmetric(program, lambda r, c: f"JP{r}{c}{j}", I.J),
            program.assign_matrix(f"MSP{{i}}{j}", I.MS),
            program.assign(f"MP{j}", I.M),
        )
    I = I.matrix() if isinstance(I, RigidInertia) else I
    return assign_symmetric(program, lambda r, c: f"MJE{r}{c}{j}", I)


def _add_inertias(I, K):
    """``I + K``, rigid while both are."""
    if isinstance(I, RigidInertia) and isinstance(K, RigidInertia):
        return RigidInertia(I.J + K.J, I.MS + K.MS, I.M + K.M)
    return (I.matrix() if isinstance(I, RigidInertia) else I) + (K.matrix() if isinstance(K, RigidInertia) else K)


def _screw_transform(program, j, iA_j, iP_j, K):
    """``jS_i^T jK_j jS_i`` (eq. 24): SYMORO+ eqs 27-30 for a rigid ``K``,
    else :func:`screw_transform_inertia`."""
    if not isinstance(K, RigidInertia):
        return screw_transform_inertia(program, j, iA_j, iP_j, K)
    iMS_j = program.assign_matrix(f"AS{{i}}{j}", matmul(iA_j, K.MS))  # (27)
    iP_j_M = program.assign_matrix(f"PM{{i}}{j}", iP_j * K.M)
    J = rotate_inertia(program, j, iA_j, K.J) + transport_inertia(program, j, iP_j, iMS_j, iP_j_M)  # (28)
    return RigidInertia(J, iMS_j + iP_j_M, K.M)  # (29), (30)


def articulated_inertia(I_star, JU, I_a, a, IA):
    """``K = I* - I* a H^-1 a^T I* = I* - JU (I* a)^T`` (eq. 20), ``a`` the 6 x nv motion subspace.

    Since ``H = a^T I* a + IA 1``, ``K a = I* a H^-1 IA = JU IA``: when
    column c of ``a`` is a coordinate direction (``s e_k``, every
    Khalil-Kleinfinger frame, Krang's axes, the spherical and planar
    joints), row and column k of K are ``s JU_c IA``, one product each,
    and zero without rotor inertia.

    K is symmetric: its upper triangle is formed (``K_rc = I*_rc - sum_c
    JU_rc I_a_cc``, r <= c) and mirrored, which is all the caller names.
    """
    axes = {}  # k -> (c, s): column c of a is s e_k
    for c in range(a.cols):
        along = [k for k in range(6) if a[k, c] != 0]
        if len(along) == 1 and abs(a[along[0], c]) == 1:
            axes[along[0]] = (c, a[along[0], c])
    K = sympy.zeros(6, 6)
    for r in range(6):
        for c in range(r, 6):
            if r in axes or c in axes:
                k, other = (r, c) if r in axes else (c, r)
                column, s = axes[k]
                value = product(product(s, JU[other, column]), IA)
            else:
                value = minus(I_star[r, c], _sum_of_products((JU[r, k], I_a[c, k]) for k in range(a.cols)))
            K[r, c] = K[c, r] = value
    return K


def spatial_inertia(J, MS, M):
    """Spatial inertia of a link about its frame origin, linear rows first.

    Parameters
    ----------
    J : sympy.Matrix, shape (3, 3)
        Inertia about the origin (``XX .. ZZ``).
    MS : sympy.Matrix, shape (3, 1)
        First moments ``[MX MY MZ]``.
    M : sympy.Expr
        Mass.

    Returns
    -------
    sympy.Matrix, shape (6, 6)
        ``I_O = [M I3, MS^T; MS^, J]`` (``MS^`` the cross-product matrix).

    Examples
    --------
    >>> MX, MY, M, ZZ = sympy.symbols("MX MY M ZZ")
    >>> I = spatial_inertia(sympy.diag(0, 0, ZZ), sympy.Matrix([MX, MY, 0]), M)
    >>> I[:3, 3:], I[5, 5]
    (Matrix([
    [ 0,   0, -MY],
    [ 0,   0,  MX],
    [MY, -MX,   0]]), ZZ)
    """
    MS_hat = hat(MS)
    # Written out rather than through a BlockMatrix, whose conversion costs more than the rest of a step.
    upper = [[M if r == c else sympy.S.Zero for c in range(3)] + [MS_hat[c, r] for c in range(3)] for r in range(3)]
    lower = [[MS_hat[r, c] for c in range(3)] + [J[r, c] for c in range(3)] for r in range(3)]
    return sympy.Matrix(upper + lower)


def screw_transform_inertia(program, label, iA_j, iP_j, K):
    """``jS_i^T jK_j jS_i``: a 6x6 inertia of frame j expressed in frame i = a(j), about O_i.

    With the blocks of K rotated to frame i, ``A = iA_j K_vv jA_i``, ``B =
    iA_j K_vw jA_i``, ``C = iA_j K_ww jA_i``, and ``P = iP_j``::

        jS_i^T K jS_i = [A,        D                  ]    D = B - A P^
                        [D^T,      C + P^ D - B^T P^  ]

    Names: ``KV``/``KW`` for the rotated symmetric blocks
    (:func:`~kanerobot.dynamics.common.rotate_inertia`), ``GX``/``TKT`` for
    the two steps of the full block, ``TD`` for D.

    Parameters
    ----------
    program : Program
        Receives the named blocks; ``label`` (frame j) ends their names.
    label : str
    iA_j, iP_j : sympy.Matrix, shapes (3, 3) and (3, 1)
        Placement of frame j in frame i (:func:`~kanerobot.dynamics.common.frame_placement`).
    K : sympy.Matrix, shape (6, 6)
        Symmetric, in frame j about O_j, linear rows first.

    Returns
    -------
    sympy.Matrix, shape (6, 6)
        Symmetric; its blocks are program symbols, the lower right one
        left as expressions (the caller adds it to I*_i and names the sum).

    Examples
    --------
    A point mass M at the origin of frame j, frame j at L on the x axis of
    frame i: about O_i it gains the moments of inertia ``M L**2`` about y
    and z.

    >>> from kanerobot.symbolic import Program
    >>> M, L = sympy.symbols("M L")
    >>> program = Program(inputs=[M, L])
    >>> K = sympy.diag(M, M, M, 0, 0, 0)
    >>> out = screw_transform_inertia(program, "2", sympy.eye(3), sympy.Matrix([L, 0, 0]), K)
    >>> print(program)
    TD232 = L*M
    >>> out[3:, 3:]
    Matrix([
    [0,       0,       0],
    [0, L*TD232,       0],
    [0,       0, L*TD232]])
    """
    A = rotate_inertia(program, label, iA_j, K[:3, :3], prefix="KV")
    GX = program.assign_matrix(lambda r, c: f"GX{r}{c}{label}", matmul(iA_j, K[:3, 3:]))
    B = program.assign_matrix(lambda r, c: f"TKT{r}{c}{label}", matmul(GX, iA_j.T))
    C = rotate_inertia(program, label, iA_j, K[3:, 3:], prefix="KW")
    D = program.assign_matrix(lambda r, c: f"TD{r}{c}{label}", B - matmul(A, hat(iP_j)))
    out = sympy.zeros(6, 6)
    out[:3, :3] = A
    out[:3, 3:] = D
    out[3:, :3] = D.T
    # C + P^ D - B^T P^ with P^ = sum_k P_k e_k^: one product per component of P; the upper triangle only
    # (the block is symmetric), entry by entry as the matrix expressions would give it
    units = [(k, hat(sympy.eye(3)[:, k]).tolist()) for k in range(3) if iP_j[k] != 0]
    for r in range(3):
        for c in range(r, 3):
            entry = C[r, c]
            for k, e in units:
                change = minus(_sum_of_products((e[r][m], D[m, c]) for m in range(3)), _sum_of_products((B[m, r], e[m][c]) for m in range(3)))
                if change != 0:
                    entry = entry + iP_j[k] * change
            out[3 + r, 3 + c] = out[3 + c, 3 + r] = entry
    return out


def _sum_of_products(pairs):
    """The sum of the products of the pairs without a zero, as an entry of a sympy matrix product."""
    return summed([product(a, b) for a, b in pairs if a != 0 and b != 0])


def screw_transform_wrench(program, label, iA_j, iP_j, alpha):
    """``jS_i^T jalpha_j``: a wrench at O_j in frame j moved to O_i in frame i = a(j).

    Parameters
    ----------
    program : Program
        Receives the rotated force and moment, ``AF{r}{label}`` and ``AM{r}{label}``.
    label : str
    iA_j, iP_j : sympy.Matrix, shapes (3, 3) and (3, 1)
        Placement of frame j in frame i.
    alpha : sympy.Matrix, shape (6, 1)
        Force then moment, in frame j about O_j.

    Returns
    -------
    sympy.Matrix, shape (6, 1)
        ``[iA_j alpha_f; iP_j x (iA_j alpha_f) + iA_j alpha_m]``.

    Examples
    --------
    >>> from kanerobot.symbolic import Program
    >>> F, L = sympy.symbols("F L")
    >>> wrench = sympy.Matrix([0, F, 0, 0, 0, 0])
    >>> screw_transform_wrench(Program(inputs=[F, L]), "2", sympy.eye(3), sympy.Matrix([L, 0, 0]), wrench).T
    Matrix([[0, F, 0, 0, 0, F*L]])
    """
    f = program.assign_matrix(f"AF{{i}}{label}", matmul(iA_j, alpha[:3, 0]))
    m = program.assign_matrix(f"AM{{i}}{label}", matmul(iA_j, alpha[3:, 0]))
    return sympy.Matrix.vstack(f, iP_j.cross(f) + m)


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
    >>> import numpy as np
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
    L, ID = _ldl_factor(program, K, name, what)
    return sympy.Matrix(_ldl_substitute(program, L, ID, y, lambda i: f"{name}Z{i}", lambda i: f"{name}X{i}"))


def _ldl_factor(program, K, name, what):
    """``K = L D L^T`` in ``program`` (:func:`ldl_solve`'s first steps): ``(L, ID)``, ``L`` by
    ``(i, j)``, ``ID`` the reciprocal pivots; raises SingularityError for a pivot 0."""
    n = K.rows
    L: dict[tuple[int, int], sympy.Expr] = {}
    W: dict[tuple[int, int], sympy.Expr] = {}
    ID = []
    for j in range(n):
        D_j = program.assign(f"{name}D{j + 1}", K[j, j] - sum((L[j, k] * W[j, k] for k in range(j)), sympy.S.Zero))
        if D_j == 0:
            raise SingularityError(f"{what}: pivot {j + 1} of the LDL^T factorisation is 0: the matrix is singular")
        ID.append(program.assign(f"{name}ID{j + 1}", 1 / D_j))
        for i in range(j + 1, n):
            W[i, j] = program.assign(f"{name}W{i + 1}{j + 1}", K[i, j] - sum((L[i, k] * W[j, k] for k in range(j)), sympy.S.Zero))
            L[i, j] = program.assign(f"{name}L{i + 1}{j + 1}", W[i, j] * ID[j])
    return L, ID


def _ldl_substitute(program, L, ID, y, z_name, x_name):
    """``x`` (a list) with ``L D L^T x = y``, the steps named ``z_name(i)``, ``x_name(i)`` (1-based)."""
    n = len(ID)
    z: list[sympy.Expr] = []
    for i in range(n):
        z.append(program.assign(z_name(i + 1), y[i] - sum((L[i, k] * z[k] for k in range(i)), sympy.S.Zero)))
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = program.assign(x_name(i + 1), z[i] * ID[i] - sum((L[k, i] * x[k] for k in range(i + 1, n)), sympy.S.Zero))
    return x
