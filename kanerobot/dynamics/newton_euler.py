"""Inverse dynamic model by Khalil's customized recursive Newton-Euler algorithm.

The model ``GAM = NE(q, qd, qdd, fe, me)`` of SYMORO+ section 5.1
(OpenSYMORO eq. 4-11) for serial and tree robots whose base is fixed or
moves with a known motion.  It is generated as a
:class:`~kanerobot.symbolic.Program` of intermediate variables, named as in
SYMORO's output (``RX90_idm.txt``).  Vectors of link j are in frame j; i is
the antecedent a(j) and k runs over the successors of j (a(k) = j).

Forward recursion, j from the base to the leaves::

    WI   = jA_i iw_i                                   jw_i              (6a)
    W    = WI + sigmabar_j QP_j ja_j                   jw_j              (6b)
    WP   = jA_i iwdot_i + sigmabar_j (QDP_j ja_j + WI x QP_j ja_j)       (8)
    DV   = the six products w1*w1, w1*w2, w1*w3, w2*w2, w2*w3, w3*w3 of W
    U    = hat(WP) + hat(W) hat(W), built from DV and WP                  (9)
    VSP  = iVdot_i + iU_i iP_j
    VP   = jA_i VSP + sigma_j (QDP_j ja_j + 2 WI x QP_j ja_j)  jVdot_j    (10)
    F    = M_j VP + U jMS_j                           jF_j               (15)
    PSI  = jJ_j W
    No   = jJ_j WP + W x PSI                          jM_j - MS_j x VP   (16)

with ``0w_0 = W0``, ``0wdot_0 = WP0``, ``0Vdot_0 = VP0 - G`` (gravity is a
base acceleration; ``V0`` is not needed).  Backward recursion, j from the
leaves to the base::

    E    = F + sum_k FDI_k + jfe_j                     jf_j              (17)
    N    = No + MS_j x VP + sum_k (jA_k km_k + jP_k x FDI_k) + jme_j
                                                       jm_j              (19)
    FDI  = iA_j E                                      if_j              (18)
    GAM  = (sigma_j E + sigmabar_j N) . ja_j + IA_j QDP_j + FV_j QP_j
           + FS_j sign(QP_j)                                              (20)

OpenSYMORO (eq. 5-11 of its paper) writes the same recursion with 6x6 screw
matrices ``jS_i``; split into 3-vectors, as here, zeros are easier to keep.

``fe_j, me_j`` (``FX .. CZ``) is the wrench exerted BY link j ON the
environment, in frame j, about O_j.  ``ja_j`` is the unit joint axis in frame
j (``z_j`` for Khalil-Kleinfinger frames, any unit vector for general
frames); sigma_j = 1 for a prismatic joint, sigmabar_j = 1 for a revolute
one, both 0 for a fixed frame.  Inertial parameters are SYMORO's: ``jJ_j`` the
inertia about O_j (``XX XY XZ; XY YY YZ; XZ YZ ZZ``), ``jMS_j = [MX MY MZ]``
and ``M``.

Customization (SYMORO+ section 7): every vector component is assigned to the
program, which keeps zeros, ones and plain symbols in place, so the terms they
cancel are never generated; unused intermediate variables are pruned.  Entries
of iA_j and iP_j that are not trivial (symbolic gamma or alpha, general
frames) are named ``A<r><c><j>`` and ``P<r><j>``.  With ``trig=True`` the
program's trigonometric rules apply (``C2*C3 - S2*S3`` becomes ``C23``); a
compound angle that costs more than it saves is undone when the program is
pruned (:meth:`~kanerobot.symbolic.Program.prune`).
"""

import sympy

from kanerobot.dynamics.common import (
    ModelOptions,
    angle_labels,
    frame_placement,
    link_inertia,
    link_parameter,
    motion_parts,
    subtree_wrench,
)
from kanerobot.dynamics.free_flyer import parameter_names
from kanerobot.dynamics.root import check_root, root_joint_model, root_motion, state_inputs
from kanerobot.kinematics import forward_step, root_link_motion
from kanerobot.robot.description import BASE
from kanerobot.symbolic.program import Program
from kanerobot.symbolic.vectors import cross, matmul, plus, scaled, times

__all__ = ["inverse_dynamics", "coriolis_gravity", "gravity_torques", "h", "gravity"]



def inverse_dynamics(robot, *, qd=True, qdd=True, gravity=True, friction=True, rotor=True, wrench=True, trig=True):
    """Inverse dynamic model ``GAM(q, qd, qdd)`` by the customized Newton-Euler algorithm.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot whose joints are any joint model (revolute,
        prismatic, spherical, planar: one output per speed), its base fixed,
        moving with the known motion ``W0, WP0, VP0`` of ``robot.base``, or
        free-flying (``robot.floating``: the six base forces come first).
    qd, qdd : bool, optional
        Use the joint velocities ``robot.qd`` (``QP``) and accelerations
        ``robot.qdd`` (``QDP``); False sets them to zero (a customized model:
        ``qdd=False`` gives the vector H of SYMORO+ eq. 23).
    gravity : bool, optional
        Subtract the gravity ``G`` from the base acceleration.
    friction : bool, optional
        Add ``FV_j QP_j + FS_j sign(QP_j)``.
    rotor : bool, optional
        Add the rotor inertia term ``IA_j QDP_j``.
    wrench : bool, optional
        Add the wrench ``FX .. CZ`` that each link exerts on the environment.
    trig : bool, optional
        Apply the program's trigonometric rules (compound angles ``C23``,
        ``C**2 + S**2 = 1``); a compound angle is kept only where it saves
        more operations than its definition costs.

    Returns
    -------
    Program
        Pruned; outputs ``GAM<label>`` in ``robot.joint_labels`` order, one
        per speed (a spherical joint's ``GAMCX<label> .. GAMCZ<label>``),
        after a free flyer's ``GAMFX0 .. GAMCZ0``.  Inputs: the joint variables, ``QP``
        (if ``qd``), ``QDP`` (if ``qdd``), the geometric parameters, the
        parameters of each link (``XX .. M``, then ``IA`` if ``rotor``, ``FV
        FS`` if ``friction``, ``FX .. CZ`` if ``wrench``) and of the base
        (``W0, WP0, VP0``, then ``G`` if ``gravity``), symbols only.

    Raises
    ------
    KaneRobotError
        For closed loops, wheeled bases and flexible joints, which need
        other algorithms
        (:func:`~kanerobot.dynamics.common.check_structure`).

    Notes
    -----
    Joints are told apart only by their joint model (``Frame.joint``: its
    placement and motion subspace), so general frames whose axis is not z (Krang)
    and frames without a joint (sigma = 2, with or without a link) are
    handled like Khalil-Kleinfinger ones; a frame that is not in
    ``robot.links`` is massless.  The RX-90 of ``frames/rx90.par`` (full
    inertia, friction, IA, a wrench on link 6, gravity G3) costs 349
    multiplications and 306 additions; without gravity, 343 and 300, and
    the program is then line for line OpenSYMORO's ``RX90_idm.txt``.

    Examples
    --------
    The planar arm of ``frames/planar2.par`` (link length L1; gravity along
    the joint axes, so it does not act on the joints):

    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = inverse_dynamics(arm)
    >>> print(program)
    DV61 = QP1**2
    No31 = QDP1*ZZ1
    C2 = cos(th2)
    S2 = sin(th2)
    W32 = QP1 + QP2
    WP32 = QDP1 + QDP2
    DV62 = W32**2
    VSP12 = -DV61*L1
    VSP22 = L1*QDP1
    VP12 = C2*VSP12 + S2*VSP22
    VP22 = C2*VSP22 - S2*VSP12
    F12 = -DV62*MX2 + M2*VP12 - MY2*WP32
    F22 = -DV62*MY2 + M2*VP22 + MX2*WP32
    No32 = WP32*ZZ2
    N32 = MX2*VP22 - MY2*VP12 + No32
    FDI22 = C2*F22 + F12*S2
    N31 = FDI22*L1 + N32 + No31
    GAM1 = FS1*sign(QP1) + FV1*QP1 + IA1*QDP1 + N31
    GAM2 = FS2*sign(QP2) + FV2*QP2 + IA2*QDP2 + N32
    >>> program.op_count()
    {'add': 19, 'mul': 27, 'fn': 4}
    >>> [s.name for s in program.inputs[:8]]
    ['th1', 'th2', 'QP1', 'QP2', 'QDP1', 'QDP2', 'L1', 'XX1']

    Numerically: every parameter 1 but the first moments (0), the arm at
    rest with th2 = pi/2 and QDP1 = 1; joint 1 sees IA1 + ZZ1 + ZZ2 + M2*L1**2:

    >>> import math
    >>> f = program.to_function()
    >>> point = {"th1": 0, "th2": math.pi / 2, "QP1": 0, "QP2": 0, "QDP2": 0}
    >>> point.update(dict.fromkeys(["MX1", "MY1", "MZ1", "MX2", "MY2", "MZ2"], 0))
    >>> f(*[point.get(s.name, 1.0) for s in f.args]).round(12)
    array([4., 1.])
    """
    options = ModelOptions(qd=qd, qdd=qdd, gravity=gravity, friction=friction, rotor=rotor, wrench=wrench, trig=trig)
    return _newton_euler(robot, "the inverse dynamic model", "GAM", options)


def coriolis_gravity(robot, *, qd=True, gravity=True, friction=True, wrench=True, trig=True):
    """Centrifugal, Coriolis, gravity and friction torques H (SYMORO's ``ccg``).

    The inverse dynamic model with ``qdd = 0`` and no rotor inertia term:
    ``GAM = A(q) qdd + H(q, qd)`` (SYMORO+ eq. 23-25).

    Parameters
    ----------
    robot : Robot
    qd, gravity, friction, wrench, trig : bool, optional
        As in :func:`inverse_dynamics`.

    Returns
    -------
    Program
        Outputs ``GAM<label>``, the nj entries of H in ``robot.joint_labels``
        order; inputs as in :func:`inverse_dynamics` without ``QDP`` and ``IA``.

    Raises
    ------
    KaneRobotError
        For the robots :func:`inverse_dynamics` rejects.

    Examples
    --------
    >>> import kanerobot as kr
    >>> print(coriolis_gravity(kr.load(kr.frames_path("planar2")), friction=False))
    DV61 = QP1**2
    C2 = cos(th2)
    S2 = sin(th2)
    W32 = QP1 + QP2
    DV62 = W32**2
    VSP12 = -DV61*L1
    VP12 = C2*VSP12
    VP22 = -S2*VSP12
    F12 = -DV62*MX2 + M2*VP12
    F22 = -DV62*MY2 + M2*VP22
    N32 = MX2*VP22 - MY2*VP12
    FDI22 = C2*F22 + F12*S2
    N31 = FDI22*L1 + N32
    GAM1 = N31
    GAM2 = N32
    """
    what = "the centrifugal, Coriolis, gravity and friction torques"
    return _newton_euler(robot, what, "GAM", ModelOptions(qd=qd, qdd=False, gravity=gravity, friction=friction, rotor=False, wrench=wrench, trig=trig))


def gravity_torques(robot, *, trig=True):
    """Gravity torques Q(q) (SYMORO+ eq. 23): Newton-Euler with the robot at rest.

    ``qd = qdd = 0``, no friction, no external wrench; the base motion
    ``W0, WP0, VP0`` of ``robot.base`` is kept (zero for a fixed base).

    Parameters
    ----------
    robot : Robot
    trig : bool, optional
        As in :func:`inverse_dynamics`.

    Returns
    -------
    Program
        Outputs ``Q<label>``, the nj entries of Q in ``robot.joint_labels``
        order.  Inputs: the joint variables, the geometric parameters, the
        links' ``XX .. M`` and the base's ``W0, WP0, VP0, G`` (symbols only).

    Raises
    ------
    KaneRobotError
        For closed loops, wheeled bases and flexible joints.

    Examples
    --------
    The planar arm of ``frames/planar2.par`` in a vertical plane, gravity
    along -y of frame 0:

    >>> import dataclasses
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> arm = dataclasses.replace(arm, base=kr.Base.from_values(G=[0, "-g", 0]))
    >>> program = gravity_torques(arm)
    >>> print(program)
    C1 = cos(th1)
    S1 = sin(th1)
    VP11 = S1*g
    VP21 = C1*g
    C2 = cos(th2)
    S2 = sin(th2)
    VP12 = C2*VP11 + S2*VP21
    VP22 = C2*VP21 - S2*VP11
    F12 = M2*VP12
    F22 = M2*VP22
    N32 = MX2*VP22 - MY2*VP12
    FDI22 = C2*F22 + F12*S2
    N31 = FDI22*L1 + MX1*VP21 - MY1*VP11 + N32
    Q1 = N31
    Q2 = N32
    """
    return _newton_euler(robot, "the gravity torques", "Q", ModelOptions.at_rest(trig=trig))


#: The names of :data:`kanerobot.dynamics.model.MODELS`, which every engine module
#: uses; the historical names above stay for existing code.
h = coriolis_gravity
gravity = gravity_torques


# ------------------------------------------------------------ the program
def _vector(program, name, j, v):
    """Assign the components of a 3x1 vector as ``name<row><j>``."""
    return program.assign_matrix(lambda r, c: f"{name}{r}{j}", v)


def recorder(program, j):
    """``record(name, value)`` for :func:`~kanerobot.kinematics.forward_step`: link j's
    vectors as ``<name><row><j>``, its matrices as ``<name><row><col><j>``."""

    def record(name, value):
        if value.cols == 1:
            return program.assign_matrix(lambda r, c: f"{name}{r}{j}", value)
        return program.assign_matrix(lambda r, c: f"{name}{r}{c}{j}", value)

    return record


def _newton_euler(robot, what, output, options):
    """Record the two recursions of the module docstring into a new program.

    Link 0 hangs from the world by the root joint (:mod:`~kanerobot.dynamics.root`),
    which gives its motion; it is a body of both recursions, and the root
    joint's generalized forces ``S_0^T [0f_0; 0m_0]`` come first in the
    outputs: the six of a free flyer (``GAMFX0 .. GAMCZ0``), none for a
    fixed root (whose link 0 has no mass here: its lines are pruned).
    """
    stem = robot.stems
    root = root_joint_model(robot)
    check_root(robot, what)
    qd, qdd, gravity, friction, rotor, wrench = (getattr(options, key) for key in ("qd", "qdd", "gravity", "friction", "rotor", "wrench"))
    names = parameter_names(rotor, friction, wrench)
    inputs = state_inputs(robot, what, qd=qd, qdd=qdd, names=names, gravity=gravity)
    program = Program(inputs=inputs, trig=options.trig)

    def vec(name, j, v):
        return _vector(program, name, stem[j], v)

    def optional(flag, label, name):
        return link_parameter(robot, label, name) if flag else sympy.S.Zero

    labels = angle_labels(robot)
    QP = {j: rates if qd else (sympy.S.Zero,) * len(rates) for j, rates in robot.joint_speeds.items()}
    QDP = {j: rates if qdd else (sympy.S.Zero,) * len(rates) for j, rates in robot.joint_accelerations.items()}
    w0, wdot0, Vdot0 = root_motion(program, robot, qd=qd, qdd=qdd, gravity=gravity)
    motion = {BASE: root_link_motion(w0, wdot0, Vdot0, recorder(program, BASE))}
    A, P, MS, F, No = {}, {}, {}, {}, {}  # A[j] = iA_j, P[j] = iP_j

    def body_wrench(j):
        """Total wrench on link j, F_j and No_j (eqs 15-16)."""
        J, MS[j], M = link_inertia(robot, j)
        w, wdot, Vdot, U = motion[j].w, motion[j].wdot, motion[j].Vdot, motion[j].U
        F[j] = vec("F", j, plus(scaled(M, Vdot), times(U, MS[j])))                                        # (15)
        PSI = vec("PSI", j, matmul(J, w))
        No[j] = vec("No", j, plus(times(J, wdot), cross(w, PSI)))                                              # (16)

    # Forward recursion, link 0 then j = 1 ... n: link motion (eqs 6-10) and total wrench.
    body_wrench(BASE)
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        A[j], P[j] = frame_placement(program, frame, labels, rotation="A", translation="P")
        motion[j] = forward_step(motion[i], A[j].T, P[j], motion_parts(frame), QP.get(j, ()), QDP.get(j, ()), recorder(program, stem[j]))
        body_wrench(j)

    # Backward recursion, j = n ... 1 then link 0: reaction wrenches on the joint axes.
    f, GAM = {}, {}
    m: dict[str, sympy.Matrix] = {}
    FDI: dict[str, sympy.Matrix] = {}

    def reaction_wrench(j):
        """Wrench jf_j, jm_j that link j receives from its antecedent (eqs 17, 19)."""
        k = robot.children(j)
        fe = sympy.Matrix([optional(wrench, j, name) for name in ("FX", "FY", "FZ")])
        me = sympy.Matrix([optional(wrench, j, name) for name in ("CX", "CY", "CZ")])
        own_f, own_m = plus(F[j], fe), plus(No[j], cross(MS[j], motion[j].Vdot), me)
        sums = subtree_wrench(own_f, own_m, [(A[c], P[c], FDI[c], m[c]) for c in k])               # (17, 19)
        f[j], m[j] = vec("E", j, sympy.Matrix(sums[0])), vec("N", j, sympy.Matrix(sums[1]))

    for frame in reversed(robot.frames):
        j = frame.label
        reaction_wrench(j)
        FDI[j] = vec("FDI", j, matmul(A[j], f[j]))                                                        # (18) if_j
        if frame.is_joint:
            S_lin, S_ang = motion_parts(frame)
            IA, FV, FS = optional(rotor, j, "IA"), optional(friction, j, "FV"), optional(friction, j, "FS")
            GAM[j] = [
                S_lin[:, k].dot(f[j]) + S_ang[:, k].dot(m[j]) + IA * qdd_k + FV * qd_k + FS * sympy.sign(qd_k)  # (20)
                for k, (qd_k, qdd_k) in enumerate(zip(QP[j], QDP[j]))
            ]
    reaction_wrench(BASE)
    S_lin, S_ang = root.subspace(None)  # the free flyer's: the identity, (20) is the whole wrench
    for k, name in enumerate(root.force_names(stem[BASE])):
        program.set_output(output + name, S_lin[:, k].dot(f[BASE]) + S_ang[:, k].dot(m[BASE]))

    for j in robot.joint_labels:
        for name, value in zip(robot.frame(j).joint.force_names(stem[j]), GAM[j]):
            program.set_output(f"{output}{name}", value)
    program.prune()
    return program

