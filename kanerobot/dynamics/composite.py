"""Inertia matrix A(q) by composite links (SYMORO+ section 5.3.2, eqs 26-38).

Column j of A is the torque vector of the inverse dynamic model when
``qd = 0``, ``g = 0`` and ``qdd = e_j`` (eq. 26): only the links carried by
joint j move, rigidly together, with the unit acceleration of joint j.  The
algorithm has two steps.

**Composite links** (generalized links, eqs 27-30).  Composite link j is
link j with every link that hangs on it.  Its inertia ``jJ+_j`` about O_j,
first moments ``jMS+_j`` and mass ``M+_j`` are accumulated from the leaves
to the root, for each frame j with antecedent i = a(j) != 0::

    iMS_j  = iA_j jMS+_j                                                      (27)
    iJ+_i  = iJ+_i + iA_j jJ+_j jA_i
                   - [iP^_j iMS^_j + (iP^_j iMS^_j)^T] + iP^_j iP^_j^T M+_j   (28)
    iMS+_i = iMS+_i + iMS_j + iP_j M+_j                                      (29)
    M+_i   = M+_i + M+_j                                                     (30)

(``^`` is the cross-product matrix, ``hat(a) b = a x b``.)

**Columns** (eqs 31-38).  With ``ja_j = [sigma_j e_j; sigmabar_j e_j]`` the
joint's motion subspace (e_j its unit axis in frame j), the wrench of
composite link j at O_j and the diagonal element are::

    jf_j = jF_j = M+_j sigma_j e_j + sigmabar_j e_j x jMS+_j                (31, 33)
    jm_j = jM_j = jJ+_j sigmabar_j e_j + jMS+_j x sigma_j e_j               (32, 34)
    A_jj = ja_j^T [jf_j; jm_j] + IA_j                                       (35)

and the wrench climbs to the base, for k = j, a(j), ... while a(k) != 0::

    a(k)f_a(k) = a(k)A_k kf_k                                               (36)
    a(k)m_a(k) = a(k)A_k km_k + a(k)P_k x a(k)f_a(k)                        (37)
    A_a(k),j   = a(k)a_a(k)^T [a(k)f_a(k); a(k)m_a(k)]                      (38)

``A_ij = 0`` when neither joint carries the other.  For Khalil-Kleinfinger
frames (e_j = z_j) eqs 31-35 are the paper's ``[0 0 M+]``, ``[-MY+ MX+ 0]``,
``[XZ+ YZ+ ZZ+]``, ``A_jj = sigma_j M+_j + sigmabar_j ZZ+_j + IA_j``; here the
axis and sigma come from :class:`~kanerobot.robot.description.Frame` only, so
general frames (Krang's axes along -x, -y) and trees work the same way.

The steps shared with the other algorithms (structure check, program
inputs, frame placements, link inertia, :func:`rotate_inertia`) are in
:mod:`kanerobot.dynamics.common`.
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
from kanerobot.robot.description import BASE, INERTIAL_NAMES
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program

__all__ = ["mass_matrix"]


def mass_matrix(robot, rotor=True, trig=True):
    """Inertia matrix A(q) by composite links (SYMORO+ eqs 27-38).

    Parameters
    ----------
    robot : Robot
        Serial or tree robot with a fixed base (fixed frames anywhere in
        the tree are allowed).
    rotor : bool, optional
        Add the rotor inertia ``IA_j`` to ``A_jj`` (eq. 35); ``False``
        leaves it out.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23 = C2*C3 - S2*S3``).

    Returns
    -------
    kanerobot.symbolic.Program
        Outputs ``A<i><j>`` for i <= j, column by column as SYMORO prints
        them (``A11, A12, A22, A13, ...``); i and j are 1-based positions in
        ``robot.joint_labels``, written ``A1_12`` when the robot has more
        than 9 joints.  Entries of joints on different branches are 0.
        Inputs: the joint variables, the geometric parameters and the
        inertial parameters ``XX .. M`` (and ``IA``).  Pruned.

    Raises
    ------
    KaneRobotError
        For closed loops, a floating base or a wheeled base
        (:func:`~kanerobot.dynamics.common.check_structure`); flexible
        joints do not change A.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = mass_matrix(kr.load(kr.frames_path("planar2")))
    >>> print(program)
    C2 = cos(th2)
    S2 = sin(th2)
    AS12 = C2*MX2 - MY2*S2
    PM12 = L1*M2
    PAS222 = L1*(2*AS12 + PM12)
    JP331 = PAS222 + ZZ1 + ZZ2
    N31_2 = AS12*L1 + ZZ2
    A11 = IA1 + JP331
    A12 = N31_2
    A22 = IA2 + ZZ2
    >>> program.op_count()
    {'add': 7, 'mul': 6, 'fn': 2}

    Names: ``AS`` is eq. 27, ``PM``, ``PAS`` the terms of eq. 28 in P
    (:func:`transport_inertia`), ``JP``, ``MSP``, ``MP`` the composite parameters
    J+, MS+, M+ of a frame, ``AJ``, ``AJA`` the rotated inertia
    (:func:`~kanerobot.dynamics.common.rotate_inertia`), and
    ``E{r}{i}_{j}``, ``N{r}{i}_{j}`` component r of the force and moment of
    column j at frame i (eqs 36-37).
    """
    check_structure(robot, "the inertia matrix")
    parameters = INERTIAL_NAMES if rotor else tuple(n for n in INERTIAL_NAMES if n != "IA")
    program = Program(inputs=program_inputs(robot, [robot.q], parameters), trig=trig)
    placements = frame_placements(robot, program)

    # Initialisation: jJ+_j = jJ_j, jMS+_j = jMS_j, M+_j = M_j
    J_plus, MS_plus, M_plus = {}, {}, {}
    for frame in robot.frames:
        J_plus[frame.label], MS_plus[frame.label], M_plus[frame.label] = link_inertia(robot, frame.label)

    # Composite links, from the leaves to the root (eqs 27-30).  When frame j
    # is reached every successor of j has been added: its J+, MS+, M+ are
    # complete and named JP, MSP, MP.
    for frame in reversed(robot.frames):
        j, i = frame.label, frame.antecedent
        J_plus[j] = assign_symmetric(program, lambda r, c, j=j: f"JP{r}{c}{j}", J_plus[j])
        MS_plus[j] = program.assign_matrix(f"MSP{{i}}{j}", MS_plus[j])
        M_plus[j] = program.assign(f"MP{j}", M_plus[j])
        if i == BASE:
            continue
        iA_j, iP_j = placements[j]
        iMS_j = program.assign_matrix(f"AS{{i}}{j}", iA_j * MS_plus[j])  # (27)
        iP_j_M = program.assign_matrix(f"PM{{i}}{j}", iP_j * M_plus[j])
        J_plus[i] += rotate_inertia(program, j, iA_j, J_plus[j]) + transport_inertia(program, j, iP_j, iMS_j, iP_j_M)  # (28)
        MS_plus[i] += iMS_j + iP_j_M  # (29)
        M_plus[i] += M_plus[j]  # (30)

    # Columns (eqs 31-38).
    A = {}
    for j in robot.joint_labels:
        frame = robot.frame(j)
        sigma_e, sigmabar_e = motion_parts(frame)  # sigma_j e_j, sigmabar_j e_j
        f = M_plus[j] * sigma_e + sigmabar_e.cross(MS_plus[j])  # (31), (33)
        m = J_plus[j] * sigmabar_e + MS_plus[j].cross(sigma_e)  # (32), (34)
        f = program.assign_matrix(f"E{{i}}{j}_{j}", f)
        m = program.assign_matrix(f"N{{i}}{j}_{j}", m)
        IA_j = link_parameter(robot, j, "IA") if rotor else 0
        A[j, j] = sigma_e.dot(f) + sigmabar_e.dot(m) + IA_j  # (35)
        k = j
        while robot.antecedent(k) != BASE:
            i = robot.antecedent(k)
            iA_k, iP_k = placements[k]
            f = program.assign_matrix(f"E{{i}}{i}_{j}", iA_k * f)  # (36)
            iA_k_m = program.assign_matrix(f"NA{{i}}{i}_{j}", iA_k * m)  # named apart: for k = j it is an AJ column
            m = program.assign_matrix(f"N{{i}}{i}_{j}", iA_k_m + iP_k.cross(f))  # (37)
            sigma_e, sigmabar_e = motion_parts(robot.frame(i))
            A[i, j] = sigma_e.dot(f) + sigmabar_e.dot(m)  # (38), 0 for a fixed frame i
            k = i

    labels = robot.joint_labels
    names = matrix_entry_names("A", (len(labels), len(labels)))
    for c, j in enumerate(labels):
        for r, i in enumerate(labels[: c + 1]):
            program.set_output(names[r][c], A.get((i, j), sympy.S.Zero))
    program.prune()
    return program


def transport_inertia(program, label, P, MS, PM, name="PAS{r}{c}{label}"):
    """The last two terms of eq. 28, ``-[P^ MS^ + (P^ MS^)^T] + P^ P^T M``.

    With ``P^ MS^ = MS P^T - (P.MS) I`` and ``P^ P^T = (P.P) I - P P^T``
    they are, entry by entry, with ``W = MS + P M`` (the term eq. 29 adds)
    and ``Z = W + MS``::

        T_rr = P.Z - P_r Z_r                 (the sum of P_k Z_k, k != r)
        T_rc = -(MS_r P_c + P_r W_c)         (r != c)

    which costs a fraction of the products written out.  ``PM`` is ``P M``
    (named by the caller); the entries are named by the format ``name``
    (fields ``r``, ``c``, 1-based, and ``label``).
    """
    W = MS + PM
    Z = W + MS
    T = sympy.zeros(3, 3)
    for r in range(3):
        for c in range(3):
            if r == c:
                T[r, r] = sum((P[k] * Z[k] for k in range(3) if k != r), sympy.S.Zero)
            else:
                T[r, c] = -(MS[r] * P[c] + P[r] * W[c])
    return assign_symmetric(program, lambda r, c: name.format(r=r, c=c, label=label), T)
