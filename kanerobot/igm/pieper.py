"""Pieper's decoupling: which 6-joint chains it applies to.

Pieper's method splits the inverse geometric model of a 6-DOF chain into a
position problem and an orientation problem when three joints are prismatic
or three consecutive revolute joints have concurrent axes (a spherical
joint), wherever the spherical joint is in the chain:

* at the start (joints 1, 2, 3) or at the end (joints 4, 5, 6), its centre
  is a point fixed in the base or in the terminal frame, which gives the
  position equations that :func:`kanerobot.igm.paul.chain_equations` adds
  with ``points=True``;
* in the middle (joints 2, 3, 4 or 3, 4, 5), with the spherical joint made
  of joints k, k+1, k+2, its centre C is fixed in the frames before joint k
  (its position in frame 0 depends on q_1 ... q_k-1 only) and in the frames
  after joint k+2 (its position in the terminal frame depends on
  q_k+3 ... q_6 only)::

      0T6 . [6P_C(q_k+3 ... q_6); 1] = [0P_C(q_1 ... q_k-1); 1]

  :func:`centres` gives C in both frames, and
  :func:`kanerobot.igm.paul.chain_equations` (``centres=``) adds these
  equations with every pre- and post-multiplication: the three outer joints
  come from them, then the orientation equations give the three joints of
  the spherical joint (Paul's method for both, in one
  :class:`kanerobot.igm.program.SolutionProgram`).

The centre must be the origin of one of the frames of the spherical joint
(true of Khalil-Kleinfinger tables: it is the origin of frame k, with
``d_k+1 = d_k+2 = r_k+1 = 0``).
"""

import numpy
import sympy

from kanerobot.geometry import inverse_transform
from kanerobot.robot import joints


def decoupled_structure(robot, chain):
    """Name the structure that makes Pieper's method apply, or None.

    Parameters
    ----------
    robot : Robot
    chain : sequence of str
        Labels of the frames from the base to the terminal frame.

    Returns
    -------
    str or None
        ``'three prismatic joints'``, ``'spherical joint i, j, k'`` (the
        labels of three consecutive revolute joints with concurrent axes: the
        first three, the last three, or three in the middle whose centre is
        a frame origin, see :func:`centres`) or None.

    Examples
    --------
    >>> import kanerobot as kr
    >>> rx90 = kr.load(kr.frames_path("rx90"))
    >>> decoupled_structure(rx90, rx90.root_path("6"))
    'spherical joint 4, 5, 6'
    """
    moving = [label for label in chain if robot.frame(label).is_joint]
    if len(moving) != 6:
        return None
    if sum(isinstance(robot.frame(label).joint, joints.Prismatic) for label in moving) == 3:
        return "three prismatic joints"
    trio = _spherical_trio(robot, chain, moving)
    return None if trio is None else f"spherical joint {', '.join(trio)}"


def centres(robot, chain):
    """The centre of a spherical joint in the middle of the chain, for
    :func:`kanerobot.igm.paul.chain_equations`.

    Returns
    -------
    list of (int, int, sympy.Matrix, sympy.Matrix)
        Empty unless the chain has 6 joints and a spherical joint that is
        neither the first nor the last three joints (those need no more than
        ``points=True``); else one tuple ``(first, last, left, right)``:
        ``first`` and ``last`` index (in ``chain``) the frames of the first
        and last joints of the spherical joint, ``left`` the centre (4x1,
        homogeneous) in the frame before ``first``, ``right`` in the frame
        ``last``; neither depends on a joint variable.

    Examples
    --------
    >>> import kanerobot as kr
    >>> rx90 = kr.load(kr.frames_path("rx90"))
    >>> centres(rx90, rx90.root_path("6"))
    []
    """
    moving = [label for label in chain if robot.frame(label).is_joint]
    if len(moving) != 6 or sum(isinstance(robot.frame(label).joint, joints.Prismatic) for label in moving) == 3:
        return []
    trio = _spherical_trio(robot, chain, moving)
    if trio is None or trio[0] == moving[0] or trio[-1] == moving[-1]:
        return []
    first, last = chain.index(trio[0]), chain.index(trio[-1])
    found = _centre(robot, chain, first, last)
    return [(first, last) + found] if found else []


def _spherical_trio(robot, chain, moving):
    """The labels of three consecutive revolute joints with concurrent axes
    (an end trio first), or None.  A middle trio counts only when its centre
    is a frame origin (:func:`_centre`)."""
    axes = _random_axes(robot, chain)
    for i in (0, 3, 1, 2):
        trio = moving[i:i + 3]
        if not all(isinstance(robot.frame(label).joint, joints.Revolute) for label in trio):
            continue
        if not _concurrent([axes[t] for t in trio]):
            continue
        if i in (1, 2) and _centre(robot, chain, list(chain).index(trio[0]), list(chain).index(trio[-1])) is None:
            continue
        return trio
    return None


def _centre(robot, chain, first, last):
    """The centre of the spherical joint made of the frames ``first`` ...
    ``last`` of ``chain``: ``(left, right)``, its homogeneous coordinates
    in the frame before ``first`` and in the frame ``last``, both free of
    joint variables; None when no frame origin ``first ... last`` is it."""
    factors = [sympy.Matrix(robot.frame(label).transform()) for label in chain]
    variables = {robot.frame(label).q for label in chain if robot.frame(label).is_joint}
    origin = sympy.Matrix([0, 0, 0, 1])
    for a in range(first, last + 1):
        left = origin
        for M in reversed(factors[first:a + 1]):
            left = M * left
        right = origin
        for M in factors[a + 1:last + 1]:
            right = inverse_transform(M) * right
        left, right = (sympy.Matrix([sympy.trigsimp(sympy.expand(x)) for x in v]) for v in (left, right))
        if not (left.free_symbols | right.free_symbols) & variables:
            return left, right
    return None


def _random_axes(robot, chain, seed=1):
    """Joint axes (point, unit direction) in the base for random values of
    every symbol: concurrency that holds there holds identically."""
    rng = numpy.random.default_rng(seed)
    T = sympy.eye(4)
    symbols = set()
    mats = []
    for label in chain:
        A = sympy.Matrix(robot.frame(label).transform())
        mats.append((label, A))
        symbols |= A.free_symbols
    values = {s: sympy.Float(rng.uniform(0.3, 1.3)) for s in symbols}
    out = {}
    for label, A in mats:
        T = T * A.xreplace(values)
        M = numpy.array(T.evalf(), dtype=float)
        axis = numpy.array(robot.frame(label).axis, dtype=float).reshape(3)
        out[label] = (M[:3, 3], M[:3, :3] @ axis)
    return out


def _concurrent(lines, tol=1e-9):
    """True when the three lines (point, direction) meet at one point."""
    rows, rhs = [], []
    for p, e in lines:
        P = numpy.eye(3) - numpy.outer(e, e)  # distance to the line: P (x - p)
        rows.append(P)
        rhs.append(P @ p)
    A, b = numpy.vstack(rows), numpy.concatenate(rhs)
    x, *_ = numpy.linalg.lstsq(A, b, rcond=None)
    return float(numpy.max(numpy.abs(A @ x - b))) < tol
