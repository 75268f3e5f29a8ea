"""Recursive direct dynamic model: joint accelerations without the inertia matrix.

SYMORO+ section 5.4 (after Featherstone's articulated bodies), in the form of
OpenSYMORO eqs 16-28 with every joint's acceleration unknown.  Twists,
accelerations and wrenches of link j are 6-vectors in frame j, linear part
first, taken at the origin O_j::

    jV_j = [jv_j; jw_j]     jVdot_j = [jvdot_j; jwdot_j]     jF_j = [jf_j; jm_j]

``ja_j = [sigma_j e_j; sigmabar_j e_j]`` is joint j's motion subspace (e_j
its unit axis in frame j), ``jS_i = [jA_i, -jA_i iP^_j; 0, jA_i]`` the screw
transform from frame i = a(j) to frame j, and ``jI_Oj = [M_j I3, jMS^_j^T;
jMS^_j, jJ_j]`` the spatial inertia of link j about O_j.

(i) First forward recursion, j = 1..n: angular velocities, gyroscopic
accelerations gamma and bias wrenches beta::

    jw_i     = jA_i iw_i                                                          (16)
    jw_j     = jw_i + sigmabar_j qd_j e_j                                         (16)
    jgamma_j = [jA_i (iw_i x (iw_i x iP_j)) + 2 sigma_j jw_i x qd_j e_j;
                sigmabar_j jw_i x qd_j e_j]                                       (17)
    jbeta_j  = -jF_ej - [jw_j x (jw_j x jMS_j); jw_j x (jJ_j jw_j)]              (18)

The linear velocities are not needed: at the link origins the bias terms
depend on the angular velocities only.

(ii) Backward recursion, j = n..1, from ``I*_j = I_Oj`` and ``beta*_j =
beta_j``; ``tau_j = GAM_j - FV_j qd_j - FS_j sign(qd_j)`` is the torque the
joint's motor gives the link, and the rotor inertia ``IA_j`` adds to H_j::

    H_j       = ja_j^T jI*_j ja_j + IA_j                                          (19)
    jK_j      = jI*_j - jI*_j ja_j H_j^-1 ja_j^T jI*_j                            (20)
    jalpha_j  = jK_j jgamma_j + jI*_j ja_j H_j^-1 (tau_j + ja_j^T jbeta*_j) - jbeta*_j   (21)
    iI*_i     = iI*_i + jS_i^T jK_j jS_i            if a(j) != 0                   (24)
    ibeta*_i  = ibeta*_i - jS_i^T jalpha_j          if a(j) != 0                   (25)

A fixed frame has no H: ``K_j = I*_j`` and ``alpha_j = K_j gamma_j -
beta*_j`` (eqs 22-23 with a zero acceleration).

(iii) Second forward recursion, j = 1..n, from the base acceleration with
gravity ``0Vdot_0 = [VP0 - G; WP0]``::

    qdd_j     = H_j^-1 [tau_j - ja_j^T jI*_j (jS_i iVdot_i + jgamma_j) + ja_j^T jbeta*_j]   (27)
    jVdot_j   = jS_i iVdot_i + ja_j qdd_j + jgamma_j                             (28)

With ``JU_j = jI*_j ja_j H_j^-1`` (SYMORO's name) eq. 27 reads ``qdd_j =
GW_j / H_j - JU_j^T VR_j`` where ``GW_j = tau_j + ja_j^T jbeta*_j`` and
``VR_j = jS_i iVdot_i + jgamma_j``.
"""

import sympy

from kanerobot.dynamics.common import (
    assign_symmetric,
    check_structure,
    frame_placements,
    link_inertia,
    link_parameter,
    motion_parts,
    program_inputs,
    rotate_inertia,
)
from kanerobot.robot.description import BASE, DYNAMIC_NAMES, WRENCH_NAMES
from kanerobot.robot.joints import hat
from kanerobot.symbolic.program import Program

__all__ = ["direct_dynamics", "first_forward_recursion", "second_forward_recursion", "velocity_bias"]


def direct_dynamics(robot, trig=True):
    """Joint accelerations ``qdd(q, qd, GAM)`` by the three recursions of
    OpenSYMORO eqs 16-28 (no inertia matrix is formed or inverted).

    Parameters
    ----------
    robot : Robot
        Serial or tree robot with a fixed base, whose motion (``W0``,
        ``WP0``, ``VP0``) may be given; fixed frames are allowed anywhere.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23 = C2*C3 - S2*S3``).

    Returns
    -------
    kanerobot.symbolic.Program
        Outputs ``QDP<label>`` in ``robot.joint_labels`` order.  Inputs: the
        joint variables, the velocities ``QP``, the torques ``GAM``, the
        geometric parameters, every link's dynamic parameters (inertia,
        ``IA``, friction ``FV`` and ``FS``, external wrench ``FX .. CZ``) and
        the base motion and gravity ``G``.  Pruned.  Every joint's
        acceleration is unknown: a flexible joint (eta = 1) is one whose
        ``GAM`` the caller sets to its elastic torque ``-k (q - q_r)``.

    Raises
    ------
    KaneRobotError
        When the robot has closed loops, a floating base or a wheeled base.

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
    """
    check_structure(robot, "the direct dynamic model")
    tau_symbols = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels]
    inputs = program_inputs(robot, [robot.q, robot.qd, tau_symbols], DYNAMIC_NAMES, base=True)
    program = Program(inputs=inputs, trig=trig)
    placements = frame_placements(robot, program)
    base = robot.base

    # (i) First forward recursion (16)-(18).
    w, gamma, beta, inertia = first_forward_recursion(robot, program, placements, sympy.Matrix(base.W0))

    # (ii) Backward recursion (19)-(25), from I*_j = I_Oj and beta*_j = beta_j.
    I_star = {j: spatial_inertia(*inertia[j]) for j in inertia}
    beta_star = dict(beta)
    JD, JU, GW = {}, {}, {}  # of each joint: 1/H_j, JU_j, GW_j
    for frame in reversed(robot.frames):
        j, i = frame.label, frame.antecedent
        # Every successor of j has been added: I*_j and beta*_j are complete.
        I_star[j] = assign_symmetric(program, lambda r, c, j=j: f"MJE{r}{c}{j}", I_star[j])
        beta_star[j] = program.assign_matrix(f"VBE{{i}}{j}", beta_star[j])
        a_j = frame.motion_subspace()
        if frame.is_joint:
            I_a = program.assign_matrix(f"KA{{i}}{j}", I_star[j] * a_j)  # jI*_j ja_j
            IA_j = link_parameter(robot, j, "IA")
            H_j = program.assign(f"H{j}", a_j.dot(I_a) + IA_j)  # (19)
            JD[j] = program.assign(f"JD{j}", 1 / H_j)
            JU[j] = program.assign_matrix(f"JU{{i}}{j}", I_a * JD[j])  # jI*_j ja_j H_j^-1
            tau_j = motor_torque(robot, j)
            GW[j] = program.assign(f"GW{j}", tau_j + a_j.dot(beta_star[j]))  # tau_j + ja_j^T jbeta*_j
            if i == BASE:
                continue  # K_j and alpha_j only feed the antecedent
            K_j = assign_symmetric(program, lambda r, c, j=j: f"GK{r}{c}{j}", articulated_inertia(I_star[j], JU[j], I_a, a_j, IA_j))  # (20)
            alpha_j = K_j * gamma[j] + JU[j] * GW[j] - beta_star[j]  # (21)
        else:
            if i == BASE:
                continue
            K_j = I_star[j]  # (22)
            alpha_j = K_j * gamma[j] - beta_star[j]  # (23), no joint acceleration
        alpha_j = program.assign_matrix(f"AP{{i}}{j}", alpha_j)
        iA_j, iP_j = placements[j]
        I_star[i] += screw_transform_inertia(program, j, iA_j, iP_j, K_j)  # (24)
        beta_star[i] -= screw_transform_wrench(program, j, iA_j, iP_j, alpha_j)  # (25)

    # (iii) Second forward recursion (27)-(28), from 0Vdot_0 = [VP0 - G; WP0].
    Vdot0 = sympy.Matrix.vstack(sympy.Matrix(base.VP0) - sympy.Matrix(base.G), sympy.Matrix(base.WP0))
    qdd, _ = second_forward_recursion(robot, program, placements, Vdot0, gamma, JU, JD, GW)

    for j in robot.joint_labels:
        program.set_output(f"QDP{j}", qdd[j])
    program.prune()
    return program


def velocity_bias(robot, program, label, w_j, J, MS, wrench=True):
    """``jbeta_j = -jF_ej - [jw_j x (jw_j x jMS_j); jw_j x (jJ_j jw_j)]`` (eq. 18).

    Names ``WM``, ``JW``, ``SW``, ``KW`` (SYMORO's); ``wrench=False`` leaves
    out the external wrench ``F_e`` (``FX .. CZ``).
    """
    F_e = sympy.Matrix([link_parameter(robot, label, name) for name in WRENCH_NAMES]) if wrench else sympy.zeros(6, 1)
    w_x_MS = program.assign_matrix(f"WM{{i}}{label}", w_j.cross(MS))
    Jw = program.assign_matrix(f"JW{{i}}{label}", J * w_j)
    return -F_e - sympy.Matrix.vstack(
        program.assign_matrix(f"SW{{i}}{label}", w_j.cross(w_x_MS)),
        program.assign_matrix(f"KW{{i}}{label}", w_j.cross(Jw)),
    )


def first_forward_recursion(robot, program, placements, w0):
    """The first forward recursion of the direct model, j = 1 .. n (eqs 16-18).

    Parameters
    ----------
    robot : Robot
    program : Program
    placements : dict
        ``label -> (iA_j, iP_j)`` (:func:`~kanerobot.dynamics.common.frame_placements`).
    w0 : sympy.Matrix, shape (3, 1)
        Angular velocity of link 0.

    Returns
    -------
    w, gamma, beta, inertia : dict
        By frame label: the angular velocity ``jw_j`` (16, ``WI``, ``W``),
        the relative acceleration ``jgamma_j`` (17, ``LW``, ``WQ``), the
        bias wrench ``jbeta_j`` (18, :func:`velocity_bias`) and
        ``(J, MS, M)`` of the link; ``w`` also has link 0.
    """
    QP = dict(zip(robot.joint_labels, robot.qd))
    w = {BASE: w0}
    gamma, beta, inertia = {}, {}, {}
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = placements[j]
        jA_i = iA_j.T
        sigma_e, sigmabar_e = motion_parts(frame)  # sigma_j e_j, sigmabar_j e_j
        qd_j = QP.get(j, sympy.S.Zero)
        jw_i = program.assign_matrix(f"WI{{i}}{j}", jA_i * w[i])  # (16)
        w[j] = program.assign_matrix(f"W{{i}}{j}", jw_i + sigmabar_e * qd_j)  # (16)
        iw_i_x_P = program.assign_matrix(f"PW{{i}}{j}", w[i].cross(iP_j))
        iU_i_P = program.assign_matrix(f"LWI{{i}}{j}", w[i].cross(iw_i_x_P))  # iw_i x (iw_i x iP_j)
        gamma[j] = sympy.Matrix.vstack(
            program.assign_matrix(f"LW{{i}}{j}", jA_i * iU_i_P + 2 * jw_i.cross(sigma_e * qd_j)),
            program.assign_matrix(f"WQ{{i}}{j}", jw_i.cross(sigmabar_e * qd_j)),
        )  # (17)
        J, MS, M = inertia[j] = link_inertia(robot, j)
        beta[j] = velocity_bias(robot, program, j, w[j], J, MS)  # (18)
    return w, gamma, beta, inertia


def second_forward_recursion(robot, program, placements, Vdot0, gamma, JU, JD, GW, known_qdd=None):
    """The second forward recursion of the direct model (eqs 27-28).

    Joint j with ``JU[j]`` (its torque known) gets ``QDP_j = GW_j JD_j -
    JU_j . VR_j`` (27); the others move with ``known_qdd`` (0 by default:
    fixed frames).  ``jVdot_j = VR_j + ja_j qdd_j`` (28) with ``VR_j = jS_i
    iVdot_i + jgamma_j``.

    Parameters
    ----------
    robot, program, placements
        As in :func:`first_forward_recursion`.
    Vdot0 : sympy.Matrix, shape (6, 1)
        The spatial acceleration of link 0 (gravity included).
    gamma, JU, JD, GW : dict
        From the first forward and the backward recursions.
    known_qdd : dict, optional
        ``label -> acceleration`` of joints without ``JU``.

    Returns
    -------
    qdd : dict
        ``QDP_j`` of the joints with ``JU``.
    Vdot : dict
        ``jVdot_j`` of every link (``VP``, ``WP``).
    """
    known_qdd = known_qdd or {}
    Vdot = {BASE: Vdot0}
    qdd = {}
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = placements[j]
        jA_i = iA_j.T
        vdot_i, wdot_i = Vdot[i][:3, 0], Vdot[i][3:, 0]
        u = program.assign_matrix(f"VU{{i}}{j}", vdot_i + wdot_i.cross(iP_j))
        VR = sympy.Matrix.vstack(jA_i * u, jA_i * wdot_i) + gamma[j]  # jS_i iVdot_i + jgamma_j
        VR = program.assign_matrix(f"VR{{i}}{j}", VR)
        if j in JU:
            GU = program.assign(f"GU{j}", JU[j].dot(VR))  # ja_j^T jI*_j VR_j H_j^-1
            qdd[j] = program.assign(f"QDP{j}", GW[j] * JD[j] - GU)  # (27)
            Vdot[j] = VR + frame.motion_subspace() * qdd[j]  # (28)
        elif j in known_qdd:
            Vdot[j] = VR + frame.motion_subspace() * known_qdd[j]  # (28), acceleration given
        else:
            Vdot[j] = VR  # (28), no joint acceleration
        Vdot[j] = sympy.Matrix.vstack(
            program.assign_matrix(f"VP{{i}}{j}", Vdot[j][:3, 0]),
            program.assign_matrix(f"WP{{i}}{j}", Vdot[j][3:, 0]),
        )
    return qdd, Vdot


def articulated_inertia(I_star, JU, I_a, a, IA):
    """``K = I* - I* a H^-1 a^T I* = I* - JU (I* a)^T`` (eq. 20).

    Since ``H = a^T I* a + IA``, ``K a = I* a IA / H = JU IA``: when the
    joint's motion subspace is a coordinate direction (``a = s e_k``, every
    Khalil-Kleinfinger frame and Krang's axes), row and column k of K are
    ``s JU IA``, one product each, and zero without rotor inertia.
    """
    K = I_star - JU * I_a.T
    along = [k for k in range(6) if a[k] != 0]
    if len(along) == 1 and abs(a[along[0]]) == 1:
        k, s = along[0], a[along[0]]
        for r in range(6):
            K[r, k] = K[k, r] = s * JU[r] * IA
    return K


def motor_torque(robot, j):
    """tau_j = GAM_j - FV_j qd_j - FS_j sign(qd_j): the joint torque less friction."""
    QP = robot.joint_parameters[j]["QP"]
    FV, FS = link_parameter(robot, j, "FV"), link_parameter(robot, j, "FS")
    return robot.joint_parameters[j]["GAM"] - FV * QP - FS * sympy.sign(QP)


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
    return sympy.Matrix(sympy.BlockMatrix([[M * sympy.eye(3), MS_hat.T], [MS_hat, J]]))


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
    GX = program.assign_matrix(lambda r, c: f"GX{r}{c}{label}", iA_j * K[:3, 3:])
    B = program.assign_matrix(lambda r, c: f"TKT{r}{c}{label}", GX * iA_j.T)
    C = rotate_inertia(program, label, iA_j, K[3:, 3:], prefix="KW")
    D = program.assign_matrix(lambda r, c: f"TD{r}{c}{label}", B - A * hat(iP_j))
    out = sympy.zeros(6, 6)
    out[:3, :3] = A
    out[:3, 3:] = D
    out[3:, :3] = D.T
    # C + P^ D - B^T P^ with P^ = sum_k P_k e_k^: one product per component of P
    lower_right = C
    for k in range(3):
        if iP_j[k] != 0:
            e_k_hat = hat(sympy.eye(3)[:, k])
            lower_right = lower_right + iP_j[k] * (e_k_hat * D - B.T * e_k_hat)
    for r in range(3):
        for c in range(r, 3):
            out[3 + r, 3 + c] = out[3 + c, 3 + r] = lower_right[r, c]
    return out


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
    f = program.assign_matrix(f"AF{{i}}{label}", iA_j * alpha[:3, 0])
    m = program.assign_matrix(f"AM{{i}}{label}", iA_j * alpha[3:, 0])
    return sympy.Matrix.vstack(f, iP_j.cross(f) + m)
