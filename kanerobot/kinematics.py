"""Kinematic models (SYMORO+ section 4): Jacobian in Renaud's form, its
determinant and inverse, recursive link velocities and accelerations,
J-dot q-dot and the kinematic constraint equations of closed loops.

Conventions
-----------
* A twist or a Jacobian row block is ``[V; w]``: the 3 linear rows first
  (velocity of the frame's origin), then the 3 angular rows, as in SYMORO+
  eq. 3.
* ``jV_j``, ``jw_j`` ... are vectors of link j expressed in frame j; a
  Jacobian ``rJ_n`` is projected into frame r.
* Joint velocities are ``robot.qd`` (the QP symbols) and accelerations
  ``robot.qdd`` (QDP), in ``robot.joint_labels`` order.  Every 6 x nj
  Jacobian has one column per joint of ``robot.joint_labels``; joints that
  do not move the frame have a zero column.
* Joint types enter only through :meth:`Frame.motion_subspace`,
  ``[sigma_j ja_j; sigmabar_j ja_j]`` (zero for a fixed frame).
"""

from dataclasses import dataclass, field

import numpy
import sympy

from kanerobot.errors import KaneRobotError, SingularityError
from kanerobot.geometry import numeric_function, position, rotation
from kanerobot.robot.description import BASE, Robot
from kanerobot.robot.joints import hat
from kanerobot.symbolic.vectors import cross, plus, scaled, summed, times

__all__ = [
    "path_joints",
    "renaud_factors",
    "jacobian",
    "jacobian_determinant",
    "inverse_kinematic_model",
    "link_kinematics",
    "link_velocities",
    "link_accelerations",
    "jdot_qdot",
    "LinkKinematics",
    "LinkMotion",
    "angular_products",
    "forward_step",
    "root_link_motion",
    "u_matrix",
    "LoopVelocityConstraints",
    "loop_velocity_constraints",
    "loop_jacobian",
    "loop_rows",
    "speed_columns",
]

#: Default symbols of the twist given to :func:`inverse_kinematic_model`.
TWIST_SYMBOLS = sympy.symbols("VX VY VZ WX WY WZ")


# ------------------------------------------------------------------ helpers
def _split(xi):
    """``(sigma_j ja_j, sigmabar_j ja_j)`` from a 6x1 motion subspace."""
    return sympy.Matrix(xi[:3, 0]), sympy.Matrix(xi[3:, 0])


def _joint_values(robot, given, default, what):
    """label -> the joint's rates (a tuple of nv), from ``given`` (a flat sequence of every joint's) or ``default``."""
    return dict(default) if given is None else robot.split_rates(given, what)


def path_joints(robot, frame):
    """Labels of the joints that move ``frame``: the joints on its path from the base.

    Returns
    -------
    tuple of str
        From the base down to ``frame``; fixed frames left out.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> t1, t2, t3 = sympy.symbols("t1 t2 t3")
    >>> tree = Robot.create("y", [
    ...     Frame("1", "0", 0, 1, KKPlacement(theta=t1)),
    ...     Frame("2", "1", 0, 1, KKPlacement(d=1, theta=t2)),
    ...     Frame("3", "1", 0, 1, KKPlacement(d=1, theta=t3))])
    >>> path_joints(tree, "3")
    ('1', '3')
    """
    return tuple(label for label in robot.root_path(str(frame)) if robot.frame(label).is_joint)


def _column(robot, f, point, i, cache):
    """Renaud's column of joint f for the point O_point, projected in frame i
    (SYMORO+ eq. 5): ``[iA_f (sigma_f a_f + sigmabar_f a_f x fP_point); iA_f sigmabar_f a_f]``;
    ``cache`` as in :func:`kanerobot.geometry.transform`."""
    sigma_a, sigmabar_a = _split(robot.frame(f).motion_subspace())
    fP_point = position(robot, f, point, cache)
    iA_f = rotation(robot, i, f, cache)
    return sympy.Matrix.vstack(iA_f * (sigma_a + sigmabar_a.cross(fP_point)), iA_f * sigmabar_a)


def _renaud_frames(robot, frame, projection, intermediate, computation):
    """n, r, j, i of Renaud's form (see :func:`renaud_factors`), defaults
    applied, each checked to be a frame of ``robot``."""
    n = str(frame)
    r = str(projection)
    j = n if intermediate is None else str(intermediate)
    i = r if computation is None else str(computation)
    for label in {n, j, i, r} - {BASE}:
        robot.frame(label)  # a clear DescriptionError for an unknown frame
    return n, r, j, i


def _rotate(robot, r, i, cache):
    """``[rA_i 0; 0 rA_i]``, 6x6."""
    rA_i = rotation(robot, r, i, cache) if i != r else sympy.eye(3)
    return sympy.diag(rA_i, rA_i)


def _shift(robot, n, j, i, cache):
    """``[I3 -hat(iL_jn); 0 I3]``, 6x6, with iL_jn = iA_j jP_n the vector from O_j to O_n."""
    iL_jn = rotation(robot, i, j, cache) * position(robot, j, n, cache) if j != n else sympy.zeros(3, 1)
    shift = sympy.eye(6)
    shift[:3, 3:] = -hat(iL_jn)
    return shift


def _iJ_nj(robot, n, j, i, cache):
    """``iJ_nj``, 6 x nj: the column of each joint moving n (:func:`_column`), zero for the others."""
    moving = set(path_joints(robot, n))
    columns = [_column(robot, f, j, i, cache) if f in moving else sympy.zeros(6, 1) for f in robot.joint_labels]
    return sympy.Matrix.hstack(*columns) if columns else sympy.zeros(6, 0)


# ---------------------------------------------------------------- Jacobian
def renaud_factors(robot, frame, projection=BASE, intermediate=None, computation=None):
    """The three factors of Renaud's Jacobian (SYMORO+ eq. 4-5)::

        rJ_n = [rA_i 0; 0 rA_i] * [I3 -hat(iL_jn); 0 I3] * iJ_nj

    with n = ``frame``, r = ``projection``, j = ``intermediate`` (the point
    O_j at which the columns are written) and i = ``computation`` (the frame
    the columns are projected in).  Column f of ``iJ_nj`` is, for a joint f
    on the path from the base to n::

        [ sigma_f ia_f + sigmabar_f (ia_f x iL_fj) ;  sigmabar_f ia_f ]

    where ``iL_fj`` is the vector from O_f to O_j; it is zero for the other
    joints.

    Parameters
    ----------
    robot : Robot
    frame : str
        n, the frame whose origin's velocity is wanted.
    projection : str, optional
        r, default the base ``'0'``.
    intermediate : str, optional
        j, default n (then the middle factor is the identity).
    computation : str, optional
        i, default r (then the first factor is the identity).

    Returns
    -------
    (sympy.Matrix, sympy.Matrix, sympy.Matrix)
        Shapes (6, 6), (6, 6) and (6, nj).

    Examples
    --------
    The RX-90 factor for n = 6, r = i = j = 0 is the one printed by
    OpenSYMORO in ``RX90_jac.txt`` (column 3: ``J13 = D3*sin(th2)*cos(th1)``):

    >>> import sympy
    >>> import kanerobot as kr
    >>> rx90 = kr.load(kr.frames_path("rx90"))
    >>> _, _, J = renaud_factors(rx90, "6", "0", "0")
    >>> sympy.simplify(J[:, 2].T)
    Matrix([[D3*sin(th2)*cos(th1), D3*sin(th1)*sin(th2), -D3*cos(th2), sin(th1), -cos(th1), 0]])
    """
    n, r, j, i = _renaud_frames(robot, frame, projection, intermediate, computation)
    cache: dict[str | tuple[str, str], sympy.Matrix] = {}  # geometry's transforms, by frame or pair
    return _rotate(robot, r, i, cache), _shift(robot, n, j, i, cache), _iJ_nj(robot, n, j, i, cache)


def jacobian(robot, frame, projection=BASE, intermediate=None, computation=None, simplify=False):
    """Jacobian rJ_n of the origin of ``frame`` (SYMORO+ eq. 3-5).

    ``[rV_n; rw_n] = rJ_n qd``: 6 x nj, linear rows first, one column per
    joint of ``robot.joint_labels`` (zero for the joints not between the
    base and ``frame``), projected into frame ``projection``.  The result
    is the product of :func:`renaud_factors`; ``intermediate`` and
    ``computation`` change only the form of the expressions.

    Parameters
    ----------
    robot : Robot
    frame : str
        n.
    projection : str, optional
        r, default ``'0'``.
    intermediate, computation : str, optional
        j and i of Renaud's form, see :func:`renaud_factors`.
    simplify : bool, optional
        trigsimp each entry.

    Returns
    -------
    sympy.Matrix, shape (6, nj)

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> jacobian(arm, "2", simplify=True)
    Matrix([
    [-L1*sin(th1), 0],
    [ L1*cos(th1), 0],
    [           0, 0],
    [           0, 0],
    [           0, 0],
    [           1, 1]])
    """
    rotate, shift, iJ_nj = renaud_factors(robot, frame, projection, intermediate, computation)
    J = iJ_nj
    if shift != sympy.eye(6):
        J = shift * J
    if rotate != sympy.eye(6):
        J = rotate * J
    return J.applyfunc(sympy.trigsimp) if simplify else J


def _shortest_factors(robot, frame, projection, intermediate, computation):
    """:func:`renaud_factors`; when neither j nor i is given, with i = j = the
    frame k of the path (or the base) whose kJ_nk has the fewest operations."""
    if intermediate is not None or computation is not None:
        return renaud_factors(robot, frame, projection, intermediate, computation)
    n, r, _, _ = _renaud_frames(robot, frame, projection, None, None)
    cache: dict[str | tuple[str, str], sympy.Matrix] = {}  # shared by the candidates: kT_f and fT_k grow along the path
    best = None
    for k in (BASE,) + robot.root_path(n):
        kJ_nk = _iJ_nj(robot, n, k, k, cache)
        cost = sympy.count_ops(kJ_nk, visual=False)
        if best is None or cost < best[0]:
            best = (cost, k, kJ_nk)
    assert best is not None  # the base is a candidate
    _, k, kJ_nk = best
    return _rotate(robot, r, k, cache), _shift(robot, n, k, k, cache), kJ_nk


def _square(robot, frame, rows):
    cols = [robot.joint_labels.index(label) for label in path_joints(robot, frame)]
    nrows = 6 if rows is None else len(rows)
    if nrows == len(cols):
        return cols
    size = f"the Jacobian of frame {frame} is {nrows} x {len(cols)} ({len(cols)} joints {', '.join(path_joints(robot, frame))} move it)"
    if len(cols) > 6:
        raise KaneRobotError(
            f"{size}: the frame is redundantly actuated, a twist has only 6 components, so there is no square "
            f"Jacobian and no determinant"
        )
    raise KaneRobotError(f"{size}: it is not square; choose {len(cols)} task rows with rows=[...] (0-2 linear, 3-5 angular)")


def jacobian_determinant(robot, frame, projection=BASE, intermediate=None, computation=None, rows=None, simplify=True):
    """Determinant of the Jacobian of ``frame`` restricted to its joints.

    With all 6 rows, ``det(rJ_n) = det(iJ_nj)`` (the two other factors of
    Renaud's form have determinant 1), so it is computed on the simplest
    factor: by default i = j = the frame of the path that makes iJ_nj
    shortest.  With ``rows`` (e.g. ``[0, 1, 5]`` for a planar robot), the
    determinant of those rows of rJ_n projected in ``projection``.

    Parameters
    ----------
    robot : Robot
    frame : str
    projection, intermediate, computation : str, optional
        See :func:`renaud_factors`.
    rows : sequence of int, optional
        Task rows to keep (0-2: V, 3-5: w); their number must equal the number
        of joints moving ``frame``.
    simplify : bool, optional
        Apply :func:`sympy.simplify` (default) to the result.

    Returns
    -------
    sympy.Expr
        Zero exactly at the singular configurations.

    Raises
    ------
    KaneRobotError
        When the (selected) Jacobian is not square.

    Examples
    --------
    The planar arm of ``frames/planar2.par`` with a tool frame 3 fixed on
    link 2 at distance L2:

    >>> import sympy
    >>> import kanerobot as kr
    >>> planar2 = kr.load(kr.frames_path("planar2"))
    >>> tool = kr.Frame("3", "2", 2, 0, kr.KKPlacement(d=sympy.Symbol("L2")))
    >>> arm = kr.Robot.create("planar2", [*planar2.frames, tool])
    >>> jacobian_determinant(arm, "3", rows=[0, 1])
    L1*L2*sin(th2)
    >>> jacobian_determinant(arm, "3")
    Traceback (most recent call last):
    ...
    kanerobot.errors.KaneRobotError: the Jacobian of frame 3 is 6 x 2 (2 joints 1, 2 move it): it is not square; choose 2 task rows with rows=[...] (0-2 linear, 3-5 angular)
    """
    frame = str(frame)
    cols = _square(robot, frame, rows)
    if rows is None:
        _, _, J = _shortest_factors(robot, frame, projection, intermediate, computation)
    else:
        J = jacobian(robot, frame, projection, intermediate, computation)
        J = J.extract(list(rows), list(range(J.cols)))
    det = J.extract(list(range(J.rows)), cols).det(method="berkowitz")
    return sympy.simplify(det) if simplify else det


def inverse_kinematic_model(
    robot, frame, twist=None, projection=BASE, intermediate=None, computation=None, rows=None, simplify=False
):
    """Inverse kinematic model: joint velocities from the twist of ``frame``.

    Solves ``rJ_n qd = [rV_n; rw_n]`` through Renaud's factors (SYMORO+
    section 4.6)::

        qd = iJ_nj^-1 [I3 hat(iL_jn); 0 I3] [iA_r 0; 0 iA_r] [rV_n; rw_n]

    so that only iJ_nj, the simplest factor, is inverted (as its adjugate
    divided by its determinant).

    Parameters
    ----------
    robot : Robot
    frame : str
    twist : sequence of 6 (or len(rows)) expressions, optional
        ``[V; w]`` in frame ``projection``; default the symbols
        ``VX VY VZ WX WY WZ``.
    projection, intermediate, computation : str, optional
        See :func:`renaud_factors`; with ``intermediate=None`` the frame of
        the path giving the shortest iJ_nj is used.
    rows : sequence of int, optional
        Task rows for a robot with fewer than 6 joints; the Jacobian rows
        are then taken from rJ_n directly.
    simplify : bool, optional

    Returns
    -------
    sympy.Matrix, shape (nj, 1)
        qd in ``robot.joint_labels`` order; joints that do not move
        ``frame`` get 0.

    Notes
    -----
    The expressions are divided by :func:`jacobian_determinant`: they are
    not defined at the singular configurations, where the determinant
    vanishes.  For the RX-90 (frame 6) the determinant is
    ``D3*RL4*(D3*cos(th2) - RL4*sin(th2 + th3))*sin(th5)*cos(th3)``:
    ``sin(th5) = 0``, wrist axes 4 and 6 aligned; ``cos(th3) = 0``, arm
    stretched or folded; ``D3*cos(th2) - RL4*sin(th2 + th3) = 0``, wrist
    centre on axis 1.

    Examples
    --------
    Joint rates that move the tool frame 3 of the planar arm of
    ``frames/planar2.par`` (fixed on link 2 at distance L2) at (vx, vy):

    >>> import sympy
    >>> import kanerobot as kr
    >>> L2, vx, vy = sympy.symbols("L2 vx vy")
    >>> planar2 = kr.load(kr.frames_path("planar2"))
    >>> arm = kr.Robot.create("planar2", [*planar2.frames, kr.Frame("3", "2", 2, 0, kr.KKPlacement(d=L2))])
    >>> qd = inverse_kinematic_model(arm, "3", [vx, vy], rows=[0, 1], simplify=True)
    >>> J = jacobian(arm, "3").extract([0, 1], [0, 1])
    >>> sympy.simplify(J * qd - sympy.Matrix([vx, vy]))
    Matrix([
    [0],
    [0]])
    """
    frame = str(frame)
    cols = _square(robot, frame, rows)
    n_task = 6 if rows is None else len(rows)
    if twist is None:
        twist = TWIST_SYMBOLS if rows is None else [TWIST_SYMBOLS[k] for k in rows]
    twist = sympy.Matrix(list(twist))
    if twist.rows != n_task:
        raise KaneRobotError(f"twist needs {n_task} values, got {twist.rows}")
    if rows is None:
        rotate, shift, iJ_nj = _shortest_factors(robot, frame, projection, intermediate, computation)
        rhs = rotate.T * twist
        unshift = sympy.eye(6)
        unshift[:3, 3:] = -shift[:3, 3:]
        rhs = unshift * rhs
        A = iJ_nj.extract(list(range(6)), cols)
    else:
        J = jacobian(robot, frame, projection, intermediate, computation)
        A = J.extract(list(rows), cols)
        rhs = twist
    # adjugate over the (factored) determinant: valid wherever det != 0,
    # unlike an LU solution whose pivots may vanish at regular points
    det = sympy.factor(A.det(method="berkowitz"))
    if det == 0:
        raise SingularityError(f"the Jacobian of frame {frame} is singular at every configuration")
    solution = A.adjugate(method="berkowitz") * rhs / det
    qd = sympy.zeros(robot.nj, 1)
    for k, c in enumerate(cols):
        qd[c, 0] = solution[k, 0]
    return qd.applyfunc(sympy.simplify) if simplify else qd


# ------------------------------------------------------------- recursions
@dataclass(frozen=True)
class LinkKinematics:
    """Velocities and accelerations of link j, all 3x1 in frame j.

    ``U`` is SYMORO's ``jU_j = hat(jwdot_j) + hat(jw_j) hat(jw_j)`` (eq. 9),
    3x3; the accelerations are None when only velocities were asked.
    """

    w: sympy.Matrix
    V: sympy.Matrix
    wdot: sympy.Matrix | None = None
    Vdot: sympy.Matrix | None = None
    U: sympy.Matrix | None = None


@dataclass(frozen=True)
class LinkMotion:
    """What the forward recursion carries from a link to its successors, 3x1 and 3x3 in its frame.

    ``w``, ``wdot``: angular velocity and acceleration; ``Vdot``:
    acceleration of the origin (gravity included when the root's is);
    ``U = hat(wdot) + hat(w) hat(w)`` (eq. 9); ``DV``: the six products
    of ``w``'s components U is made of (``w1 w1, w1 w2, w1 w3, w2 w2, w2 w3,
    w3 w3``, 6x1).
    """

    w: sympy.Matrix
    wdot: sympy.Matrix
    Vdot: sympy.Matrix
    U: sympy.Matrix
    DV: sympy.Matrix | None = None


def _unnamed(name, value):
    return value


def angular_products(w, record=_unnamed):
    """``DV``: the six products ``w1 w1, w1 w2, w1 w3, w2 w2, w2 w3, w3 w3`` of ``w``'s components, 6x1."""
    return record("DV", sympy.Matrix([w[0] * w[0], w[0] * w[1], w[0] * w[2], w[1] * w[1], w[1] * w[2], w[2] * w[2]]))


def u_matrix(wdot, DV, record=_unnamed):
    """``U = hat(wdot) + hat(w) hat(w)`` (SYMORO+ eq. 9), ``hat(w) hat(w)`` read from the products ``DV``."""
    square = [
        [-DV[3] - DV[5], DV[1], DV[2]],
        [DV[1], -DV[0] - DV[5], DV[4]],
        [DV[2], DV[4], -DV[0] - DV[3]],
    ]
    skew = hat(wdot).tolist()
    # entry by entry, as the sum of the two matrices would be, without the Matrix arithmetic
    return record("U", sympy.Matrix(3, 3, [summed([skew[r][c], square[r][c]]) for r in range(3) for c in range(3)]))


def root_link_motion(w, wdot, Vdot, record=_unnamed):
    """The :class:`LinkMotion` the forward recursion starts from: link 0's ``w``, ``wdot``, ``Vdot`` (3x1)."""
    DV = angular_products(w, record)
    return LinkMotion(w, wdot, Vdot, u_matrix(wdot, DV, record), DV)


def along(S, rates):
    """``S rates`` as a 3-vector (plain list): the columns of a 3 x nv block of a motion subspace weighted by nv rates.

    With one column this is :func:`~kanerobot.symbolic.vectors.scaled`, so a
    revolute or prismatic joint's expressions are Khalil's ``qd_j ja_j``.
    """
    terms = [scaled(rate, [S[r, k] for r in range(3)]) for k, rate in enumerate(rates)]
    if len(terms) == 1:
        return terms[0]
    return plus(*terms) if terms else [sympy.S.Zero] * 3


def forward_step(parent, jA_i, iP_j, S, qd_j, qdd_j, record=_unnamed):
    """Motion of link j from its antecedent's: one step of SYMORO+ eqs 6-10, for any joint model.

    With ``(S_lin, S_ang) = S`` the joint's motion subspace in frame j (3 x nv
    each, constant in frame j) and its nv rates ``qd_j``, ``qdd_j``::

        WI    = jA_i iw_i                                           jw_i      (6a)
        W     = WI + S_ang qd_j                                     jw_j      (6b)
        WP    = jA_i iwdot_i + S_ang qdd_j + WI x S_ang qd_j                  (8)
        U     = hat(WP) + hat(W) hat(W), from the products DV of W            (9)
        VSP   = iVdot_i + iU_i iP_j
        VP    = jA_i VSP + S_lin qdd_j + (WI + W) x S_lin qd_j      jVdot_j  (10)

    For a prismatic joint ``W = WI`` and the last term is Khalil's
    ``2 WI x qd_j ja_j``; for a revolute one ``S_lin = 0``.  ``(WI + W) x``
    is the Coriolis term of a joint that slides and turns at once (planar,
    free flyer).

    Written once for every algorithm that runs it: over plain sympy
    expressions (:func:`link_kinematics`) or recording each vector into a
    program under the names above (Newton-Euler, the regressor).

    Parameters
    ----------
    parent : LinkMotion
        Link i = a(j).
    jA_i, iP_j : sympy.Matrix
        3x3 and 3x1: the rotation from frame i to frame j and the position
        of O_j in frame i.
    S : tuple of sympy.Matrix
        ``(S_lin, S_ang)``, 3 x nv each (:meth:`JointModel.subspace`).
    qd_j, qdd_j : sequence of sympy.Expr
        The joint's nv rates and accelerations (empty for a fixed frame).
    record : callable, optional
        ``record(name, value) -> value``: names a vector or matrix (``"WI"``,
        ``"W"``, ``"WP"``, ``"DV"``, ``"U"``, ``"VSP"``, ``"VP"``); by
        default values are kept as expressions.

    Returns
    -------
    LinkMotion

    Examples
    --------
    A revolute joint about z at rest, turning at QP1, on a base accelerating at g along z:

    >>> import sympy
    >>> QP1, g = sympy.symbols("QP1 g")
    >>> z, zero = sympy.Matrix([0, 0, 1]), sympy.zeros(3, 1)
    >>> base = LinkMotion(zero, zero, sympy.Matrix([0, 0, g]), sympy.zeros(3, 3))
    >>> link = forward_step(base, sympy.eye(3), zero, (zero, z), [QP1], [0])
    >>> link.w.T, link.Vdot.T, link.U[0, 0]
    (Matrix([[0, 0, QP1]]), Matrix([[0, 0, g]]), -QP1**2)
    """
    S_lin, S_ang = S
    turns, slides = any(S_ang), any(S_lin)
    # Plain lists between the named vectors: one Matrix per recorded value, and
    # no product with a structural zero is ever formed (Krang's derivation time).
    WI = record("WI" if turns else "W", sympy.Matrix(times(jA_i, parent.w)))                          # (6a) jw_i
    w_rel = along(S_ang, qd_j)
    w = record("W", sympy.Matrix(plus(WI, w_rel)))                                                  # (6b)
    wdot = record("WP", sympy.Matrix(plus(times(jA_i, parent.wdot), along(S_ang, qdd_j), cross(WI, w_rel))))  # (8)
    DV = angular_products(w, record)
    U = u_matrix(wdot, DV, record)                                                             # (9)
    VSP = record("VSP", sympy.Matrix(plus(parent.Vdot, times(parent.U, iP_j))))
    v_rel = along(S_lin, qd_j)
    if not turns:  # W = WI: Khalil's 2 WI x qd_j ja_j (zero for a fixed frame)
        coriolis = scaled(2, cross(WI, v_rel))
    elif slides:
        coriolis = plus(cross(WI, v_rel), cross(w, v_rel))
    else:
        coriolis = [sympy.S.Zero] * 3
    Vdot = record("VP", sympy.Matrix(plus(times(jA_i, VSP), along(S_lin, qdd_j), coriolis)))         # (10)
    return LinkMotion(w, wdot, Vdot, U, DV)


def link_kinematics(robot, qd=None, qdd=None, base=True, accelerations=True, frames=None):
    """Recursive link velocities and accelerations (SYMORO+ eq. 6, 8-10).

    From the base to the leaves, for each frame j with antecedent i = a(j)::

        jw_i    = jA_i iw_i                                                  (6a)
        jw_j    = jw_i + sigmabar_j qd_j ja_j                                 (6b)
        jV_j    = jA_i (iV_i + iw_i x iP_j) + sigma_j qd_j ja_j               (6c)
        jwdot_j = jA_i iwdot_i + sigmabar_j (qdd_j ja_j + jw_i x qd_j ja_j)   (8)
        jU_j    = hat(jwdot_j) + hat(jw_j) hat(jw_j)                          (9)
        jVdot_j = jA_i (iVdot_i + iU_i iP_j) + sigma_j (qdd_j ja_j + 2 jw_i x qd_j ja_j)   (10)

    Parameters
    ----------
    robot : Robot
    qd, qdd : sequence of nj expressions, optional
        Joint velocities and accelerations; default ``robot.qd`` (QP) and
        ``robot.qdd`` (QDP).
    base : bool, optional
        Start from the base motion ``W0, V0, WP0, VP0`` of ``robot.base``
        (default) or from a base at rest.  Gravity is not included.
    accelerations : bool, optional
        Also run eq. 8-10.
    frames : sequence of str, optional
        Only these frames (and their ancestors); default all.

    Returns
    -------
    dict str -> LinkKinematics
        For ``'0'`` and every frame (fixed and cut frames included).

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> th1 = sympy.Symbol("th1")
    >>> arm = Robot.create("one", [Frame("1", "0", 0, 1, KKPlacement(theta=th1))])
    >>> link_kinematics(arm)["1"].U
    Matrix([
    [-QP1**2,   -QDP1, 0],
    [   QDP1, -QP1**2, 0],
    [      0,       0, 0]])
    """
    qd_j = _joint_values(robot, qd, robot.joint_speeds, "qd")
    qdd_j = _joint_values(robot, qdd, robot.joint_accelerations, "qdd")
    if frames is None:
        wanted = set(robot.labels)
    else:
        wanted = {label for f in frames for label in robot.root_path(str(f))}
    zero = sympy.zeros(3, 1)
    b = robot.base
    w = {BASE: sympy.Matrix(b.W0) if base else zero}
    V = {BASE: sympy.Matrix(b.V0) if base else zero}
    wdot = {BASE: sympy.Matrix(b.WP0) if base else zero}
    Vdot = {BASE: sympy.Matrix(b.VP0) if base else zero}
    U = {BASE: root_link_motion(w[BASE], wdot[BASE], Vdot[BASE]).U}
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        if j not in wanted:
            continue
        iT_j = sympy.Matrix(frame.transform())
        jA_i = iT_j[:3, :3].T
        iP_j = iT_j[:3, 3]
        S_lin, S_ang = frame.joint.subspace(frame.axis)
        qdj, qddj = qd_j.get(j, ()), qdd_j.get(j, ())
        V[j] = jA_i * (V[i] + w[i].cross(iP_j)) + S_lin * sympy.Matrix(len(qdj), 1, list(qdj))  # (6c)
        if accelerations:  # (6a-b), (8)-(10)
            motion = forward_step(LinkMotion(w[i], wdot[i], Vdot[i], U[i]), jA_i, iP_j, (S_lin, S_ang), qdj, qddj)
            w[j], wdot[j], Vdot[j], U[j] = motion.w, motion.wdot, motion.Vdot, motion.U
        else:
            w[j] = jA_i * w[i] + S_ang * sympy.Matrix(len(qdj), 1, list(qdj))  # (6a-b)
    if not accelerations:
        return {label: LinkKinematics(w[label], V[label]) for label in w}
    return {label: LinkKinematics(w[label], V[label], wdot[label], Vdot[label], U[label]) for label in w}


def link_velocities(robot, qd=None, base=True):
    """Link velocities by the recursion of SYMORO+ eq. 6.

    Parameters
    ----------
    robot : Robot
    qd : sequence of nj expressions, optional
        Default ``robot.qd`` (QP1, QP2 ...).
    base : bool, optional
        Use the base velocities W0, V0 of ``robot.base`` (default) or zero.

    Returns
    -------
    dict str -> (sympy.Matrix, sympy.Matrix)
        ``label -> (jw_j, jV_j)``, both 3x1 in frame j, for ``'0'`` and
        every frame: angular velocity of link j and linear velocity of O_j.

    Examples
    --------
    >>> import sympy
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> w2, V2 = link_velocities(arm)["2"]
    >>> w2.T, sympy.simplify(V2.T)
    (Matrix([[0, 0, QP1 + QP2]]), Matrix([[L1*QP1*sin(th2), L1*QP1*cos(th2), 0]]))
    """
    states = link_kinematics(robot, qd=qd, base=base, accelerations=False)
    return {label: (s.w, s.V) for label, s in states.items()}


def link_accelerations(robot, qd=None, qdd=None, base=True):
    """Link accelerations by the recursion of SYMORO+ eq. 8-10.

    Parameters
    ----------
    robot : Robot
    qd, qdd : sequence of nj expressions, optional
        Default ``robot.qd`` and ``robot.qdd``.
    base : bool, optional
        Use the base motion W0, V0, WP0, VP0 of ``robot.base`` (default) or a
        base at rest.  Gravity is NOT included (the dynamic models subtract
        it from VP0 themselves).

    Returns
    -------
    dict str -> (sympy.Matrix, sympy.Matrix)
        ``label -> (jwdot_j, jVdot_j)``, 3x1 in frame j: angular
        acceleration of link j and linear acceleration of O_j.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> th1, L1 = sympy.symbols("th1 L1")
    >>> arm = Robot.create("one", [
    ...     Frame("1", "0", 0, 1, KKPlacement(theta=th1)),
    ...     Frame("2", "1", 2, 0, KKPlacement(d=L1))])
    >>> wd2, Vd2 = link_accelerations(arm)["2"]
    >>> wd2.T, Vd2.T
    (Matrix([[0, 0, QDP1]]), Matrix([[-L1*QP1**2, L1*QDP1, 0]]))
    """
    states = link_kinematics(robot, qd=qd, qdd=qdd, base=base)
    return {label: (s.wdot, s.Vdot) for label, s in states.items()}


def jdot_qdot(robot, frame, projection=BASE, qd=None):
    """``Jdot qd`` of the origin of ``frame`` (SYMORO+ section 4.4).

    The acceleration recursion (eq. 8-10) run with ``qdd = 0`` and the base
    at rest gives ``[rVdot_n; rwdot_n] = rA_0 (d/dt 0J_n) qd``: the part of
    the acceleration of frame n that does not depend on qdd, projected into
    frame ``projection`` (for r = 0, ``d/dt(0J_n) qd`` exactly).

    Parameters
    ----------
    robot : Robot
    frame : str
    projection : str, optional
        Default ``'0'``.
    qd : sequence of nj expressions, optional
        Default ``robot.qd``.

    Returns
    -------
    sympy.Matrix, shape (6, 1)
        Linear part first.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> th1, L1 = sympy.symbols("th1 L1")
    >>> arm = Robot.create("one", [
    ...     Frame("1", "0", 0, 1, KKPlacement(theta=th1)),
    ...     Frame("2", "1", 2, 0, KKPlacement(d=L1))])
    >>> jdot_qdot(arm, "2").T
    Matrix([[-L1*QP1**2*cos(th1), -L1*QP1**2*sin(th1), 0, 0, 0, 0]])
    """
    frame = str(frame)
    states = link_kinematics(robot, qd=qd, qdd=[0] * robot.nj, base=False, frames=[frame])
    s = states[frame]
    rA_n = rotation(robot, projection, frame)
    return sympy.Matrix.vstack(rA_n * s.Vdot, rA_n * s.wdot)


# ------------------------------------------------------ loop constraints
@dataclass(frozen=True)
class LoopVelocityConstraints:
    """Kinematic constraint equations of the loops (SYMORO+ eq. 11-13).

    Attributes
    ----------
    J : sympy.Matrix, shape (6B, nj)
        For loop b (rows 6b..6b+5): ``[V; w]`` of frame k relative to the
        closing frame k+B, projected in frame k, as a function of all joint
        velocities: ``kJ_k qd_1 - kJ_{k+B} qd_2`` of eq. 11, with each side's
        joints from the loop's root (the common ancestor of k and k+B) and
        each side's own origin.  ``J qd = 0`` on a closed loop.
    active, passive, cut : tuple of str
        Joint labels of q_a, q_p (passive, not cut) and q_c (cut joints).
    rows : tuple of int
        Rows of J kept in the first block of eq. 12: not along a cut joint's
        axis, and not identically zero.
    zero_rows : tuple of int
        Rows of J that vanish identically (e.g. rows 2, 3, 4 -- Vz, wx, wy --
        of a planar loop of revolute joints with parallel z axes).
    cut_rows : tuple of int
        For each cut joint, the row of J along its axis (2 for a prismatic
        joint, 5 for a revolute one, in frame k): the second block of eq. 12.
    Wa, Wp, Wac, Wpc, Wc : sympy.Matrix
        Blocks of eq. 12 (``Wa``: rows x active joints, ...).  The block of
        the first rows for the cut joints is zero by construction.

    Examples
    --------
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> c = loop_velocity_constraints(fourbar)
    >>> c.J.shape, c.Wa.shape, c.Wp.shape, c.Wc.shape
    ((6, 4), (2, 1), (2, 2), (1, 1))
    >>> c.G({}, [1.5, -1.5, 1.5, -1.5]).round(12) + 0.0   # dq/dq1 for q1, q2, q3, q4
    array([[ 1.],
           [-1.],
           [ 1.],
           [-1.]])
    """

    robot: Robot
    J: sympy.Matrix
    active: tuple[str, ...]
    passive: tuple[str, ...]
    cut: tuple[str, ...]
    rows: tuple[int, ...]
    zero_rows: tuple[int, ...]
    cut_rows: tuple[int, ...]
    Wa: sympy.Matrix
    Wp: sympy.Matrix
    Wac: sympy.Matrix
    Wpc: sympy.Matrix
    Wc: sympy.Matrix
    _compiled: dict = field(default_factory=dict, compare=False, repr=False)

    def _columns(self, labels):
        return speed_columns(self.robot, labels)

    def W_symbolic(self, simplify=False):
        """``W = -Wp^-1 Wa`` (eq. 13), symbolic, when Wp is square.

        Returns
        -------
        sympy.Matrix, shape (len(passive), len(active))

        Raises
        ------
        KaneRobotError
            When Wp is not square after the elimination of the zero rows: use
            :meth:`W` at a configuration.
        """
        if self.Wp.rows != self.Wp.cols:
            raise KaneRobotError(
                f"Wp is {self.Wp.rows} x {self.Wp.cols} after removing identically zero rows: "
                f"not square, use W(values, q) at a configuration (rows chosen numerically)"
            )
        # adjugate over determinant: defined wherever det(Wp) != 0 (an LU
        # factorisation would divide by pivots that vanish at some points)
        det = self.Wp.det(method="berkowitz")
        W = -(self.Wp.adjugate(method="berkowitz") * self.Wa) / det
        return W.applyfunc(sympy.simplify) if simplify else W

    def numeric(self, values):
        """``J`` compiled with ``values`` (dict str -> float, the geometric
        parameters) bound, once per set of values.

        Returns
        -------
        callable
            ``f(q) -> numpy.ndarray`` of shape (6B, nj), see
            :func:`kanerobot.geometry.numeric_function`.
        """
        key = tuple(sorted((str(k), repr(v)) for k, v in dict(values or {}).items()))
        if key not in self._compiled:
            self._compiled[key] = numeric_function(self.robot, self.J, values, ("q",))
        return self._compiled[key]

    def G(self, values, q, rtol=1e-9):
        """``dq / dq_a`` at a closed configuration q, numerically.

        Solves ``J qd = 0`` for all the non-active joints (passive and cut)
        by least squares on all 6B rows, so that redundant rows (planar loops,
        dependent equations at this q) need no elimination: the numerical
        rank of the passive columns must be their number.

        Parameters
        ----------
        values : dict str -> float
            Geometric parameters.
        q : sequence of nj floats
            A configuration that closes the loops (see
            :func:`kanerobot.geometry.solve_loops`).
        rtol : float, optional
            Relative threshold on the singular values for the rank.

        Returns
        -------
        numpy.ndarray, shape (nj, len(active))
            Row per joint of ``robot.joint_labels``: identity rows for the
            active joints.

        Raises
        ------
        SingularityError
            When the passive velocities are not determined by the active ones
            (a singular configuration of the loops) or the active velocities
            are constrained (q does not close the loops, or a singularity).
        """
        Jq = numpy.asarray(self.numeric(values)(q), dtype=float)
        a = self._columns(self.active)
        others = [c for c in range(self.robot.nj) if c not in a]
        Ja, Jo = Jq[:, a], Jq[:, others]
        if others:
            s = numpy.linalg.svd(Jo, compute_uv=False)
            scale = max(float(numpy.max(numpy.abs(Jq))), 1.0)
            rank = int(numpy.sum(s > rtol * scale))
            if rank < len(others):
                raise SingularityError(
                    f"the velocities of the passive joints {', '.join(self.robot.joint_labels[c] for c in others)} "
                    f"are not determined by the active ones at this configuration (rank {rank} < {len(others)})"
                )
            X = -numpy.linalg.lstsq(Jo, Ja, rcond=None)[0]
            residual = float(numpy.max(numpy.abs(Jo @ X + Ja))) if Ja.size else 0.0
            if residual > 1e3 * rtol * scale:
                raise SingularityError(
                    f"the active joint velocities are constrained at this configuration (residual {residual:.3g}): "
                    f"q may not close the loops"
                )
        else:
            X = numpy.zeros((0, len(a)))
        G = numpy.zeros((self.J.cols, len(a)))
        G[a, :] = numpy.eye(len(a))
        G[others, :] = X
        return G

    def W(self, values, q):
        """``W`` of eq. 13 at a configuration: ``qd_p = W qd_a`` for the passive
        (not cut) joints, numpy array of shape (len(passive), len(active))."""
        return self.G(values, q)[self._columns(self.passive), :]


def speed_columns(robot, labels):
    """Indices, in ``robot.qd``, of the speeds of the joints ``labels`` (one per speed of each)."""
    start, where = 0, {}
    for label in robot.joint_labels:
        nv = robot.frame(label).joint.nv
        where[label] = list(range(start, start + nv))
        start += nv
    return [c for label in labels for c in where[label]]


def _joint_columns(robot, f, point, i, cache):
    """Renaud's columns of joint f for the point O_point in frame i, 6 x nv (SYMORO+ eq. 5, one per speed):
    ``[iA_f (S_lin + S_ang x fP_point); iA_f S_ang]``."""
    S = robot.frame(f).motion_subspace()
    fP_point = position(robot, f, point, cache)
    iA_f = rotation(robot, i, f, cache)
    columns = [(sympy.Matrix(S[:3, k]), sympy.Matrix(S[3:, k])) for k in range(S.cols)]
    return sympy.Matrix.hstack(*[sympy.Matrix.vstack(iA_f * (lin + ang.cross(fP_point)), iA_f * ang) for lin, ang in columns])


def _loop_columns(robot, cut, closing, cache):
    """``kJ_k qd_1 - kJ_{k+B} qd_2`` of one loop, 6 x nv, in frame k (eq. 11)."""
    up, down = robot.path(cut, closing)
    blocks = []
    for f in robot.joint_labels:
        if f in up:
            blocks.append(_joint_columns(robot, f, cut, cut, cache))
        elif f in down:
            blocks.append(-_joint_columns(robot, f, closing, cut, cache))
        else:
            blocks.append(sympy.zeros(6, robot.frame(f).joint.nv))
    return sympy.Matrix.hstack(*blocks)


def loop_jacobian(robot):
    """``J`` of eq. 11 for every loop stacked, 6B x nv (one column per speed of the tree): ``J qd = 0``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> loop_jacobian(kr.load(kr.frames_path("fourbar"))).shape
    (6, 4)
    """
    if not robot.loops:
        raise KaneRobotError(f"robot {robot.name} has no loops")
    cache: dict = {}
    return sympy.Matrix.vstack(*[_loop_columns(robot, cut, closing, cache) for cut, closing in robot.loops])


def loop_rows(robot, J, cut):
    """``(cut_rows, zero_rows, rows)`` of eq. 12: each cut joint's rows of its loop (where its
    columns do not vanish), the other rows that vanish identically, and the rest."""
    cut_rows: list[int] = []
    for b, (k, _) in enumerate(robot.loops):
        if k in cut:
            block = J.extract(list(range(6 * b, 6 * b + 6)), speed_columns(robot, [k]))
            cut_rows.extend(6 * b + r for r in range(6) if any(x != 0 for x in block[r, :]))
    rng = numpy.random.default_rng(0)
    symbols = sorted(J.free_symbols, key=str)
    zero_rows = tuple(
        r for r in range(J.rows) if r not in cut_rows and all(_identically_zero(e, rng, symbols) for e in J[r, :])
    )
    rows = tuple(r for r in range(J.rows) if r not in cut_rows and r not in zero_rows)
    return tuple(cut_rows), zero_rows, rows


def _identically_zero(expr, rng, symbols, trials=3):
    """Zero at random points, then confirmed by sympy.simplify."""
    if expr == 0:
        return True
    f = sympy.lambdify(symbols, expr, modules="numpy")
    for _ in range(trials):
        if abs(complex(f(*rng.uniform(0.3, 1.7, len(symbols))))) > 1e-10:
            return False
    return sympy.simplify(expr) == 0


def loop_velocity_constraints(robot):
    """Kinematic constraint equations of the loops (SYMORO+ eq. 11-13).

    For each loop (k, k+B) the velocity of frame k is written along both
    sides of the loop, from the loop's root, and projected in frame k (eq.
    11); ``J qd = 0`` stacks the 6 rows of every loop.  Split by the joint
    kinds (eq. 12)::

        [ Wa   Wp   0  ] [qd_a]
        [ Wac  Wpc  Wc ] [qd_p] = 0,      qd_p = -Wp^-1 Wa qd_a = W qd_a   (13)
                         [qd_c]

    The second block is the row of each loop along its cut joint's axis (the
    only row where the cut joint appears, projected in frame k).

    Redundant rows, rank rule: a row of the first block is dropped when it
    vanishes identically (for a planar loop of revolute joints: Vz, wx, wy);
    any remaining dependence (at a configuration) is handled numerically by
    :meth:`LoopVelocityConstraints.G` / :meth:`LoopVelocityConstraints.W`,
    which solve all rows by least squares after a rank check.

    Parameters
    ----------
    robot : Robot
        A closed-loop robot.

    Returns
    -------
    LoopVelocityConstraints

    Examples
    --------
    >>> import sympy
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> c = loop_velocity_constraints(fourbar)
    >>> c.active, c.passive, c.cut, c.rows, c.zero_rows, c.cut_rows
    (('1',), ('2', '3'), ('4',), (0, 1), (2, 3, 4), (5,))
    >>> square = dict(zip(fourbar.q, [sympy.pi/2, -sympy.pi/2, sympy.pi/2, -sympy.pi/2]))
    >>> c.W_symbolic().subs(square)   # parallelogram: qd2 = -qd1, qd3 = qd1
    Matrix([
    [-1],
    [ 1]])
    >>> c.W({}, [1.5, -1.5, 1.5, -1.5]).round(12) + 0.0
    array([[-1.],
           [ 1.]])
    """
    J = loop_jacobian(robot)
    active = tuple(robot.active_joints)
    cut = tuple(k for k in robot.cut_joints if k not in active)
    passive = tuple(p for p in robot.passive_joints if p not in cut)
    cut_rows, zero_rows, rows = loop_rows(robot, J, cut)

    def block(rs, labels):
        return J.extract(list(rs), speed_columns(robot, labels))

    return LoopVelocityConstraints(
        robot=robot,
        J=J,
        active=active,
        passive=passive,
        cut=cut,
        rows=rows,
        zero_rows=zero_rows,
        cut_rows=cut_rows,
        Wa=block(rows, active),
        Wp=block(rows, passive),
        Wac=block(cut_rows, active),
        Wpc=block(cut_rows, passive),
        Wc=block(cut_rows, cut),
    )
