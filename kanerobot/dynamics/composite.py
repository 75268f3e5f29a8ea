"""Inertia matrix A(q) by composite links (SYMORO+ section 5.3.2, eqs 26-38).

Column j of A is the vector of generalized forces of the inverse dynamic
model when ``qd = 0``, ``g = 0`` and ``qdd = e_j`` (eq. 26): only the links
carried by joint j move, rigidly together, with the unit acceleration of
joint j.  The algorithm has two steps.

**Composite links** (generalized links, eqs 27-30, :func:`composite_links`).
Composite link j is link j with every link that hangs on it.  Its inertia
``jJ+_j`` about O_j, first moments ``jMS+_j`` and mass ``M+_j`` are
accumulated from the leaves to the root, for each frame j whose antecedent
i = a(j) moves::

    iMS_j  = iA_j jMS+_j                                                      (27)
    iJ+_i  = iJ+_i + iA_j jJ+_j jA_i
                   - [iP^_j iMS^_j + (iP^_j iMS^_j)^T] + iP^_j iP^_j^T M+_j   (28)
    iMS+_i = iMS+_i + iMS_j + iP_j M+_j                                      (29)
    M+_i   = M+_i + M+_j                                                     (30)

(``^`` is the cross-product matrix, ``hat(a) b = a x b``.)

**Columns** (eqs 31-38, :func:`column_wrenches`).  With ``ja_j = [sigma_j
e_j; sigmabar_j e_j]`` the joint's motion subspace (e_j its unit axis in
frame j), the wrench of composite link j at O_j and the diagonal element
are::

    jf_j = jF_j = M+_j sigma_j e_j + sigmabar_j e_j x jMS+_j                (31, 33)
    jm_j = jM_j = jJ+_j sigmabar_j e_j + jMS+_j x sigma_j e_j               (32, 34)
    A_jj = ja_j^T [jf_j; jm_j] + IA_j                                       (35)

and the wrench climbs to the root, for k = j, a(j), ... while a(k) moves::

    a(k)f_a(k) = a(k)A_k kf_k                                               (36)
    a(k)m_a(k) = a(k)A_k km_k + a(k)P_k x a(k)f_a(k)                        (37)
    A_a(k),j   = a(k)a_a(k)^T [a(k)f_a(k); a(k)m_a(k)]                      (38)

``A_ij = 0`` when neither joint carries the other.  For Khalil-Kleinfinger
frames (e_j = z_j) eqs 31-35 are the paper's ``[0 0 M+]``, ``[-MY+ MX+ 0]``,
``[XZ+ YZ+ ZZ+]``, ``A_jj = sigma_j M+_j + sigmabar_j ZZ+_j + IA_j``; here the
axis and sigma come from :class:`~kanerobot.robot.description.Frame` only, so
general frames (Krang's axes along -x, -y) and trees work the same way.

**The root joint** (:mod:`~kanerobot.dynamics.root`).  On a fixed root link 0
does not move: the recursions stop at the frames on link 0.  On a free
flyer link 0 is one more body, hung from the world by a joint whose motion
subspace is the 6x6 identity: the composite links go on down to link 0, so
that eq. 35 gives the base block, the spatial inertia of the whole robot
about O_0 in frame 0, ``[M+_0 1, 0MS^+_0^T; 0MS^+_0, 0J+_0]``, and eq. 38 at
link 0 is the whole wrench ``[0f_0; 0m_0]``, the base rows of column j (the
generalized speeds are then the base's six, ``v, w`` in frame 0, first;
OpenSYMORO eq. 30).  Nothing else changes: the satellite's inertia matrix
comes from the same lines as the RX-90's.

The steps shared with the other algorithms (structure check, program
inputs, frame placements, link inertia, :func:`rotate_inertia`) are in
:mod:`kanerobot.dynamics.common`; Kane's nested program
(:class:`~kanerobot.dynamics.kane.NestedKane`) sums its A with
:func:`composite_links` and :func:`column_wrenches` under its own names.
"""

import itertools
from typing import Any

import sympy

from kanerobot.dynamics.common import (
    assign_symmetric,
    check_structure,
    frame_placements,
    link_inertia,
    link_parameter,
    program_inputs,
    rotate_inertia,
)
from kanerobot.dynamics.free_flyer import RIGID_INERTIAL_NAMES, check_floating
from kanerobot.dynamics.root import root_joint_model
from kanerobot.robot.description import BASE, INERTIAL_NAMES
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program
from kanerobot.symbolic.vectors import cross, matmul, plus, product, summed, times

__all__ = ["NAMES", "column_wrenches", "composite_links", "composite_wrench", "mass_matrix", "transport_inertia"]

#: Names of the variables of the two steps, as format strings (fields: ``r``,
#: ``c`` the 1-based row and column, ``j`` the frame, ``i`` the frame a
#: column's wrench is at): J+, MS+, M+ of a composite link (``J``, ``MS``,
#: ``M``), eq. 27's ``iMS_j`` (``AS``) and ``iP_j M+_j`` (``PM``), the
#: prefix of the rotated inertia (``rotation``, see
#: :func:`~kanerobot.dynamics.common.rotate_inertia`), the terms of eq. 28 in
#: P (``transport``, :func:`transport_inertia`), and the force, moment and
#: rotated moment of a column (``E``, ``N``, ``NA``, eqs 36-37).
NAMES = {
    "J": "JP{r}{c}{j}",
    "MS": "MSP{r}{j}",
    "M": "MP{j}",
    "AS": "AS{r}{j}",
    "PM": "PM{r}{j}",
    "rotation": "A",
    "transport": "PAS{r}{c}{j}",
    "E": "E{r}{i}_{j}",
    "N": "N{r}{i}_{j}",
    "NA": "NA{r}{i}_{j}",
}


def mass_matrix(robot, rotor=True, trig=True):
    """Inertia matrix A(q) by composite links (SYMORO+ eqs 27-38), fixed root or free flyer.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot (fixed frames anywhere in the tree are
        allowed) whose base is fixed, or floating (``robot.floating``: a
        free flyer carrying link 0, OpenSYMORO eq. 30).
    rotor : bool, optional
        Add the rotor inertia ``IA_j`` to ``A_jj`` (eq. 35); ``False``
        leaves it out.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23 = C2*C3 - S2*S3``).

    Returns
    -------
    kanerobot.symbolic.Program
        Outputs ``A<r><c>`` for r <= c, column by column as SYMORO prints
        them (``A11, A12, A22, A13, ...``), written ``A1_12`` when A has more
        than 9 rows; r and c are 1-based positions in the generalized
        speeds: ``robot.joint_labels`` for a fixed root (entries of joints on
        different branches are 0), the six base speeds ``v, w`` (in frame 0)
        then the joints for a free flyer, whose zero entries are left out.
        Inputs: the joint variables, then the geometric parameters and the
        inertial parameters ``XX .. M`` (and ``IA``) sorted by name.  Pruned.

    Raises
    ------
    KaneRobotError
        For closed loops and a wheeled base
        (:func:`~kanerobot.dynamics.common.check_structure`), and for a
        floating robot the free-flyer recursions do not handle
        (:func:`~kanerobot.dynamics.free_flyer.check_floating`: no link 0,
        no mass, flexible joints); flexible joints on a fixed base do not
        change A.

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

    Names (:data:`NAMES`): ``AS`` is eq. 27, ``PM``, ``PAS`` the terms of
    eq. 28 in P (:func:`transport_inertia`), ``JP``, ``MSP``, ``MP`` the
    composite parameters J+, MS+, M+ of a frame, ``AJ``, ``AJA`` the rotated
    inertia (:func:`~kanerobot.dynamics.common.rotate_inertia`), and
    ``E{r}{i}_{j}``, ``N{r}{i}_{j}`` component r of the force and moment of
    column j at frame i (eqs 36-37).

    The satellite of ``frames/satellite.par`` floats: its 9 x 9 A starts with
    the spatial inertia of the whole robot about O_0 (composite link 0), and
    its zero entries (seven: six in that block, and A37, since joint 1 turns
    about z_0) are left out:

    >>> program = mass_matrix(kr.load(kr.frames_path("satellite")))
    >>> [program.outputs[name] for name in ("A11", "A15", "A16")]
    [MP0, MSP30, -MSP20]
    >>> len(program.outputs)  # the upper triangle of a 9 x 9 matrix, less its 7 zeros
    38
    >>> program.op_count()
    {'add': 104, 'mul': 99, 'fn': 6}
    """
    what = "the inertia matrix"
    root = root_joint_model(robot)
    moves = root.nv > 0  # link 0 is a body of the recursions: its joint has speeds (a free flyer)
    (check_floating if moves else check_structure)(robot, what)
    parameters = INERTIAL_NAMES if rotor else RIGID_INERTIAL_NAMES
    program = Program(inputs=program_inputs(robot, [robot.q], parameters), trig=trig)
    placements = frame_placements(robot, program)

    # Composite links, from the leaves to the root (eqs 27-30).
    plus = {j: (J, MS, M) for j, J, MS, M in composite_links(program, robot, placements, root=moves)}

    # The motion subspace of each joint (6 x nv), the root joint's first (6 x 0 for a fixed root).
    subspace = {BASE: sympy.Matrix.vstack(*root.subspace(None))}
    subspace.update((frame.label, frame.motion_subspace()) for frame in robot.frames if frame.is_joint)
    speeds = [BASE] + list(robot.joint_labels)
    start = dict(zip(speeds, itertools.accumulate((subspace[j].cols for j in speeds), initial=0)))
    size = sum(subspace[j].cols for j in speeds)
    A = sympy.zeros(size, size)

    def place(i, j, block, column=0):
        """A_ij (from its column ``column`` on) and, by symmetry, A_ji."""
        r, c = start[i], start[j] + column
        A[r : r + block.rows, c : c + block.cols] = block
        A[c : c + block.cols, r : r + block.rows] = block.T

    # Columns (eqs 31-38).  (35) for the root joint: S_0^T I+_0 S_0, with S_0 = 1 the composite
    # spatial inertia of link 0 (no column for a fixed root).
    S = subspace[BASE]
    for k in range(S.cols):
        place(BASE, BASE, _projected(S, *composite_wrench(*plus[BASE], S[:, k])), k)
    for j in robot.joint_labels:
        for k in range(subspace[j].cols):  # one column per speed of joint j
            for i, f, m in column_wrenches(program, robot, placements, j, plus[j], root=moves, column=k):
                if i in subspace:  # a fixed frame i has no entry
                    place(i, j, _projected(subspace[i], f, m), k)  # (35), (38)
            if rotor:
                A[start[j] + k, start[j] + k] += link_parameter(robot, j, "IA")  # (35)

    names = matrix_entry_names("A", (size, size))
    for c in range(size):
        for r in range(c + 1):
            # A root with speeds leaves its zeros (most of its base block) out of the outputs.
            if not moves or A[r, c] != 0:
                program.set_output(names[r][c], A[r, c])
    program.prune()
    return program


def composite_links(program, robot, placements, *, root=False, names=NAMES, inertia=True):
    """The composite links from the leaves to the root (eqs 27-30), each named when complete.

    Parameters
    ----------
    program : Program
    robot : Robot
    placements : dict
        ``label -> (iA_j, iP_j)``, from
        :func:`~kanerobot.dynamics.common.frame_placements`.
    root : bool, optional
        Whether link 0 moves (a free flyer): then the links on it are added
        to link 0 too, which comes last, the whole robot about O_0.  On a
        fixed root they are not (link 0 is not a body of the recursion).
    names : dict, optional
        Format strings of the variables (:data:`NAMES`: keys ``J``, ``MS``,
        ``M``, ``AS``, ``PM``, ``rotation``, ``transport``).
    inertia : bool, optional
        Accumulate the inertias J+ too (eq. 28); False yields None for
        them (the centre of mass needs the masses and first moments only).

    Yields
    ------
    tuple
        ``(j, jJ+_j, jMS+_j, M+_j)`` for every frame j (and link 0 when
        ``root``), successors before their antecedent: when j is yielded
        every link that hangs on it has been added and its parameters are
        named (``JP``, ``MSP``, ``MP``); so are eq. 27's ``iMS_j`` and
        ``iP_j M+_j``, and j is added to its antecedent when the caller
        asks for the next one.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.common import frame_placements
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = Program(inputs=arm.q)
    >>> [(j, J[2, 2], MS.T, M) for j, J, MS, M in composite_links(program, arm, frame_placements(arm, program))]
    [('2', ZZ2, Matrix([[MX2, MY2, MZ2]]), M2), ('1', JP331, Matrix([[MSP11, MSP21, MSP31]]), MP1)]
    """
    links = ([BASE] if root else []) + [frame.label for frame in robot.frames]
    J, MS, M = {}, {}, {}
    for j in links:  # initialisation: jJ+_j = jJ_j, jMS+_j = jMS_j, M+_j = M_j
        J[j], MS[j], M[j] = link_inertia(robot, j)
    for j in reversed(links):  # the frames are in order, antecedents first
        if inertia:
            J[j] = assign_symmetric(program, lambda r, c, j=j: names["J"].format(r=r, c=c, j=robot.stems[j]), J[j])
        else:
            J[j] = None
        MS[j] = program.assign_matrix(lambda r, c, j=j: names["MS"].format(r=r, j=robot.stems[j]), MS[j])
        M[j] = program.assign(names["M"].format(j=robot.stems[j]), M[j])
        i = robot.antecedent(j) if j != BASE else None
        if i not in J:  # link 0 (or what a fixed link 0 carries): nothing to add to
            yield j, J[j], MS[j], M[j]
            continue
        iA_j, iP_j = placements[j]
        iMS_j = program.assign_matrix(lambda r, c, j=j: names["AS"].format(r=r, j=robot.stems[j]), matmul(iA_j, MS[j]))  # (27)
        iP_j_M = program.assign_matrix(lambda r, c, j=j: names["PM"].format(r=r, j=robot.stems[j]), iP_j * M[j])
        yield j, J[j], MS[j], M[j]
        if inertia:
            J[i] += rotate_inertia(program, robot.stems[j], iA_j, J[j], prefix=names["rotation"]) + transport_inertia(
                program, robot.stems[j], iP_j, iMS_j, iP_j_M, name=names["transport"]
            )  # (28)
        MS[i] += iMS_j + iP_j_M  # (29)
        M[i] += M[j]  # (30)


def composite_wrench(J, MS, M, a):
    """``(f, m)``: the wrench at O_j of a composite link moving with the unit twist ``a`` (eqs 31-34).

    ``a = [sigma e; sigmabar e]`` (6x1, linear part first; a column of a
    joint's motion subspace); ``J, MS, M`` the link's J+, MS+, M+::

        f = M sigma e + sigmabar e x MS,   m = J sigmabar e + MS x sigma e

    (``[f; m] = I a``, I the spatial inertia about O_j).  Unnamed 3x1
    vectors; ``m`` is None when ``J`` is (the force needs no inertia).
    """
    linear, angular = a[:3, 0], a[3:, 0]
    return M * linear + angular.cross(MS), None if J is None else J * angular + MS.cross(linear)


def column_wrenches(program, robot, placements, j, inertia: tuple[Any, Any, Any], *, root=False, names=NAMES, column=0):
    """Column j's wrench at O_j and carried to each antecedent (eqs 31-34, 36-37).

    Parameters
    ----------
    program, robot, placements
        As in :func:`composite_links`.
    j : str
        A joint's label.
    inertia : tuple
        ``(jJ+_j, jMS+_j, M+_j)`` of composite link j.
    root : bool, optional
        Whether link 0 moves (a free flyer): the wrench is then carried down
        to link 0 too.
    names : dict, optional
        Keys ``E``, ``N``, ``NA`` of :data:`NAMES`.
    column : int, optional
        Which speed of joint j (a column of its motion subspace); the
        variables of column k > 0 of a joint with several speeds are named
        ``..._<j>c<k>``.

    Yields
    ------
    tuple
        ``(i, if, im)`` for i = j, a(j), ... while i moves: the force and
        moment (3x1, named) that composite link i transmits when joint j
        alone accelerates with ``qdd_j = 1``; entry A_ij is its projection
        on the motion subspace of joint i (eqs 35, 38).
    """

    tag = robot.stems[j] if column == 0 else f"{robot.stems[j]}c{column}"

    def vector(key, i, v):
        return program.assign_matrix(lambda r, c: names[key].format(r=r, i=robot.stems[i], j=tag), v)

    f, m = composite_wrench(*inertia, robot.frame(j).motion_subspace()[:, column])  # (31)-(34)
    f, m = vector("E", j, f), vector("N", j, m)
    yield j, f, m
    k = j
    while k != BASE and (root or robot.antecedent(k) != BASE):
        i = robot.antecedent(k)
        iA_k, iP_k = placements[k]
        # 3-vectors as lists (kanerobot.symbolic.vectors): the same sums as Matrix products, without a
        # matrix object per step of the climb, which made the n^2 steps of a long chain cost most of A.
        f = vector("E", i, times(iA_k, f))  # (36)
        iA_k_m = vector("NA", i, times(iA_k, m))  # named apart: for k = j it is an AJ column
        m = vector("N", i, plus(iA_k_m, cross(iP_k, f)))  # (37)
        yield i, f, m
        k = i


def _projected(S, f, m):
    """``S^T [f; m]``, the wrench on the motion subspace ``S`` (6 x k), products by its zeros not formed."""
    w = list(f) + list(m)
    return sympy.Matrix([summed([product(S[r, c], w[r]) for r in range(6) if S[r, c] != 0 and w[r] != 0]) for c in range(S.cols)])


def transport_inertia(program, label, P, MS, PM, name="PAS{r}{c}{label}"):
    """The last two terms of eq. 28, ``-[P^ MS^ + (P^ MS^)^T] + P^ P^T M``.

    With ``P^ MS^ = MS P^T - (P.MS) I`` and ``P^ P^T = (P.P) I - P P^T``
    they are, entry by entry, with ``W = MS + P M`` (the term eq. 29 adds)
    and ``Z = W + MS``::

        T_rr = P.Z - P_r Z_r                 (the sum of P_k Z_k, k != r)
        T_rc = -(MS_r P_c + P_r W_c)         (r != c)

    which costs a fraction of the products written out.  ``PM`` is ``P M``
    (named by the caller); the entries are named by the format ``name``
    (fields ``r``, ``c``, 1-based, and ``label``, also spelt ``j``).
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
    return assign_symmetric(program, lambda r, c: name.format(r=r, c=c, label=label, j=label), T)
