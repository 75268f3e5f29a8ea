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
model is also built with the program's trigonometric rules (``C2*C3 - S2*S3``
becomes ``C23``) and the cheaper of the two forms is returned.
"""

import re

import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import PRISMATIC, REVOLUTE, hat
from kanerobot.symbolic.program import Program

__all__ = ["inverse_dynamics", "coriolis_gravity", "gravity_torques"]

_INERTIA = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
_WRENCH = ("FX", "FY", "FZ", "CX", "CY", "CZ")


def inverse_dynamics(robot, *, qd=True, qdd=True, gravity=True, friction=True, rotor=True, wrench=True, trig=True):
    """Inverse dynamic model ``GAM(q, qd, qdd)`` by the customized Newton-Euler algorithm.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot, base fixed or moving with the known motion
        ``W0, WP0, VP0`` of ``robot.base``.
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
        Apply the compound-angle rules (``C23``) of the program, keeping the
        result only when it costs fewer operations than the model without
        them.

    Returns
    -------
    Program
        Pruned; outputs ``GAM<label>`` for each joint in
        ``robot.joint_labels`` order.  Inputs: the joint variables, ``QP``
        (if ``qd``), ``QDP`` (if ``qdd``), the geometric parameters, the
        parameters of each link (``XX .. M``, then ``IA`` if ``rotor``, ``FV
        FS`` if ``friction``, ``FX .. CZ`` if ``wrench``) and of the base
        (``W0, WP0, VP0``, then ``G`` if ``gravity``), symbols only.

    Raises
    ------
    KaneRobotError
        For closed loops, floating or wheeled bases and flexible joints,
        which need other algorithms.

    Notes
    -----
    Joints are told apart only by ``Frame.sigma``, ``Frame.axis`` and
    ``Frame.transform()``, so general frames whose axis is not z (Krang)
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
    return _newton_euler(robot, "GAM", qd, qdd, gravity, friction, rotor, wrench, trig)


def coriolis_gravity(robot, *, qd=True, gravity=True, friction=True, wrench=True, trig=True):
    """Centrifugal, Coriolis, gravity and friction torques H (SYMORO's ``ccg``).

    The inverse dynamic model with ``qdd = 0`` and no rotor inertia term:
    ``GAM = A(q) qdd + H(q, qd)`` (SYMORO+ eq. 23-25).  Keywords as in
    :func:`inverse_dynamics`.

    Returns
    -------
    Program
        Outputs ``GAM<label>``.

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
    return _newton_euler(robot, "GAM", qd, False, gravity, friction, False, wrench, trig)


def gravity_torques(robot, *, trig=True):
    """Gravity torques Q(q) (SYMORO+ eq. 23): Newton-Euler with the robot at rest.

    ``qd = qdd = 0``, no friction, no external wrench; the base motion
    ``W0, WP0, VP0`` of ``robot.base`` is kept (zero for a fixed base).

    Returns
    -------
    Program
        Outputs ``Q<label>`` for each joint in ``robot.joint_labels`` order.

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
    return _newton_euler(robot, "Q", False, False, True, False, False, False, trig)


# ---------------------------------------------------------------- checks
def _check_supported(robot):
    if robot.loops:
        cuts = ", ".join(robot.cut_joints)
        raise KaneRobotError(
            f"robot {robot.name} has closed loops (cut at joint {cuts}): the Newton-Euler model here is for "
            f"serial and tree robots; closed-loop dynamics (GAM = G^T GAM_tr) is not implemented yet"
        )
    if robot.floating:
        raise KaneRobotError(
            f"robot {robot.name} has a floating base: its base acceleration is unknown and needs the "
            f"floating-base algorithm, not implemented yet"
        )
    if robot.wheeled:
        raise KaneRobotError(
            f"robot {robot.name} has a wheeled mobile base: its dynamics needs the wheel constraints, "
            f"not implemented yet"
        )
    flexible = [label for label in robot.joint_labels if robot.joint_parameters[label]["eta"] == 1]
    if flexible:
        raise KaneRobotError(
            f"robot {robot.name} has flexible joints ({', '.join(flexible)}): they need the three-step "
            f"flexible-joint algorithm, not implemented yet"
        )


# ------------------------------------------------------------ the program
def _symbols(exprs):
    found = set()
    for expr in exprs:
        found |= sympy.sympify(expr).free_symbols
    return sorted(found, key=str)


def _inputs(robot, qd, qdd, gravity, friction, rotor, wrench):
    """Input symbols in the documented order (see :func:`inverse_dynamics`)."""
    groups = [list(robot.q)]
    if qd:
        groups.append(list(robot.qd))
    if qdd:
        groups.append(list(robot.qdd))
    groups.append(sympy.Symbol(name) for name in robot.geometric_parameters)
    names = list(_INERTIA) + (["IA"] if rotor else []) + (["FV", "FS"] if friction else [])
    names += list(_WRENCH) if wrench else []
    for label in robot.links:
        groups.extend(_symbols([robot.dynamics[label][name]]) for name in names)
    base = robot.base
    groups.append(_symbols(list(base.W0) + list(base.WP0) + list(base.VP0) + (list(base.G) if gravity else [])))
    out = []
    for group in groups:
        for value in group:
            value = sympy.sympify(value)
            if isinstance(value, sympy.Symbol) and value not in out:
                out.append(value)
    return out


def _angle_labels(robot):
    """Label of each angle for the C/S names: a joint's own label for its
    variable (``C4l = cos(q_1l)``), else the angle's name (``Calpha2``)."""
    owner = {}
    for frame in robot.frames:
        if frame.is_joint:
            owner[frame.q] = frame.label

    def label(angle):
        for q, frame_label in owner.items():
            if angle.has(q):
                return frame_label
        return re.sub(r"[^A-Za-z0-9]", "", str(angle)) or "a"

    return label


def _vector(program, name, j, v):
    """Assign the components of a 3x1 vector as ``name<row><j>``."""
    return program.assign_matrix(lambda r, c: f"{name}{r}{j}", v)


def _U(program, j, w, wdot):
    """jU_j = hat(wdot) + hat(w) hat(w) (eq. 9), from the six products DV of w's components."""
    products = [w[0] * w[0], w[0] * w[1], w[0] * w[2], w[1] * w[1], w[1] * w[2], w[2] * w[2]]
    DV = _vector(program, "DV", j, sympy.Matrix(products))
    square = sympy.Matrix(
        [
            [-DV[3] - DV[5], DV[1], DV[2]],
            [DV[1], -DV[0] - DV[5], DV[4]],
            [DV[2], DV[4], -DV[0] - DV[3]],
        ]
    )
    return program.assign_matrix(lambda r, c: f"U{r}{c}{j}", hat(wdot) + square)


def _placement(program, frame, labels):
    """(iA_j, iP_j) of ``frame`` with its sines and cosines named; the entries
    that are not trivial are assigned (``A<r><c><j>``, ``P<r><j>``)."""
    T = program.replace_sin_cos(sympy.Matrix(frame.transform()), labels)
    iA_j = program.assign_matrix(lambda r, c: f"A{r}{c}{frame.label}", T[:3, :3])
    iP_j = _vector(program, "P", frame.label, T[:3, 3])
    return iA_j, iP_j


def _link_parameters(robot, j, rotor, friction, wrench):
    zero3 = sympy.zeros(3, 1)
    if j not in robot.links:  # a frame without a link: massless
        return sympy.S.Zero, zero3, sympy.zeros(3, 3), zero3, zero3, sympy.S.Zero, sympy.S.Zero, sympy.S.Zero
    d = robot.dynamics[j]
    J = sympy.Matrix([[d["XX"], d["XY"], d["XZ"]], [d["XY"], d["YY"], d["YZ"]], [d["XZ"], d["YZ"], d["ZZ"]]])
    MS = sympy.Matrix([d["MX"], d["MY"], d["MZ"]])
    fe = sympy.Matrix([d["FX"], d["FY"], d["FZ"]]) if wrench else zero3
    me = sympy.Matrix([d["CX"], d["CY"], d["CZ"]]) if wrench else zero3
    IA = d["IA"] if rotor else sympy.S.Zero
    FV, FS = (d["FV"], d["FS"]) if friction else (sympy.S.Zero, sympy.S.Zero)
    return d["M"], MS, J, fe, me, IA, FV, FS


def _cost(program):
    """Operations of a program, for choosing between two forms of one model:
    fewest operations, then fewest multiplications."""
    counts = program.op_count()
    return counts["add"] + counts["mul"] + counts["fn"], counts["mul"]


def _newton_euler(robot, output, qd, qdd, gravity, friction, rotor, wrench, trig):
    _check_supported(robot)
    flags = (qd, qdd, gravity, friction, rotor, wrench)
    inputs = _inputs(robot, *flags)
    plain = _recursion(robot, Program(inputs=inputs), output, *flags)
    if not trig:
        return plain
    # The compound-angle rules merge terms one assignment at a time; the C23
    # and S23 they introduce cost 4 multiplications and 2 additions, which
    # the merges do not always pay back (on the RX-90 they replace
    # C3*WI12 + S3*WI22 by QP1*S23 and lose 2 multiplications).  Build both
    # forms and keep the cheaper one.
    with_rules = _recursion(robot, Program(inputs=inputs, trig=True), output, *flags)
    return min((with_rules, plain), key=_cost)


def _recursion(robot, program, output, qd, qdd, gravity, friction, rotor, wrench):
    """Record the two recursions of the module docstring into ``program``."""
    def vec(name, j, v):
        return _vector(program, name, j, v)

    labels = _angle_labels(robot)
    QP = dict(zip(robot.joint_labels, robot.qd if qd else [0] * robot.nj))
    QDP = dict(zip(robot.joint_labels, robot.qdd if qdd else [0] * robot.nj))
    b = robot.base
    w, wdot = {BASE: vec("W", BASE, b.W0)}, {BASE: vec("WP", BASE, b.WP0)}
    Vdot = {BASE: vec("VP", BASE, b.VP0 - b.G if gravity else b.VP0)}
    U = {BASE: _U(program, BASE, w[BASE], wdot[BASE])}
    A, P, link, F, No = {}, {}, {}, {}, {}  # A[j] = iA_j, P[j] = iP_j

    # Forward recursion, j = 1 ... n: link motion and total wrench on each link.
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        a, sigma, sigmabar = sympy.Matrix(frame.axis), _sigma(frame), _sigmabar(frame)
        qd_j, qdd_j = sympy.sympify(QP.get(j, 0)), sympy.sympify(QDP.get(j, 0))
        link[j] = _link_parameters(robot, j, rotor, friction, wrench)
        M, MS, J = link[j][:3]
        A[j], P[j] = _placement(program, frame, labels)
        jA_i, iP_j = A[j].T, P[j]
        WI = vec("WI" if sigmabar else "W", j, jA_i * w[i])                                        # (6a) jw_i
        w[j] = vec("W", j, WI + sigmabar * qd_j * a)                                               # (6b)
        wdot[j] = vec("WP", j, jA_i * wdot[i] + sigmabar * (qdd_j * a + WI.cross(qd_j * a)))       # (8)
        U[j] = _U(program, j, w[j], wdot[j])                                                       # (9)
        VSP = vec("VSP", j, Vdot[i] + U[i] * iP_j)
        Vdot[j] = vec("VP", j, jA_i * VSP + sigma * (qdd_j * a + 2 * WI.cross(qd_j * a)))          # (10)
        F[j] = vec("F", j, M * Vdot[j] + U[j] * MS)                                                # (15)
        PSI = vec("PSI", j, J * w[j])
        No[j] = vec("No", j, J * wdot[j] + w[j].cross(PSI))                                        # (16)

    # Backward recursion, j = n ... 1: reaction wrenches, projected on the joint axes.
    f, m, FDI, GAM = {}, {}, {}, {}
    for frame in reversed(robot.frames):
        j, k = frame.label, robot.children(frame.label)
        a, sigma, sigmabar = sympy.Matrix(frame.axis), _sigma(frame), _sigmabar(frame)
        _, MS, _, fe, me, IA, FV, FS = link[j]
        f[j] = vec("E", j, F[j] + _sum(FDI[c] for c in k) + fe)                                    # (17)
        m[j] = vec("N", j, No[j] + MS.cross(Vdot[j]) + _sum(A[c] * m[c] + P[c].cross(FDI[c]) for c in k) + me)  # (19)
        FDI[j] = vec("FDI", j, A[j] * f[j])                                                        # (18) if_j
        if frame.is_joint:
            qd_j, qdd_j = sympy.sympify(QP[j]), sympy.sympify(QDP[j])
            GAM[j] = (sigma * f[j] + sigmabar * m[j]).dot(a) + IA * qdd_j + FV * qd_j + FS * sympy.sign(qd_j)  # (20)

    for j in robot.joint_labels:
        program.set_output(f"{output}{j}", GAM[j])
    program.prune()
    return program


def _sigma(frame):
    """sigma_j: 1 for a prismatic joint, else 0."""
    return int(frame.sigma == PRISMATIC)


def _sigmabar(frame):
    """sigmabar_j: 1 for a revolute joint, else 0 (a fixed frame has neither)."""
    return int(frame.sigma == REVOLUTE)


def _sum(vectors):
    return sum(vectors, sympy.zeros(3, 1))
