"""The root joint: how link 0 moves, for every recursion that starts there.

Link 0 hangs from the world by a root joint, as in pinocchio (the universe
and joint 1) and Featherstone's spatial_v2 (``jcalc`` case 'Fb'):

- a **fixed** root (a fixed base, or a base moving with a known motion):
  link 0 moves with ``robot.base``'s ``W0, WP0, VP0`` (zero for a fixed
  base), all in frame 0; its wrench is a reaction no model outputs;
- a **free flyer** (``robot.floating``): six degrees of freedom whose speeds
  ``V = (v, w)`` (:data:`~kanerobot.dynamics.free_flyer.BASE_VELOCITY`) are
  the velocity of O_0 and the angular velocity of link 0 in frame 0, and
  whose orientation is the unit quaternion of ``wR_0``; its motion subspace
  is the identity, so the wrench that link 0 needs, ``[0f_0; 0m_0]``, is the
  six generalized forces of the base.

:func:`root_motion` gives the motion every forward recursion starts from
(SYMORO+ eqs 6-10 at j = 0), gravity folded in as a base acceleration::

    fixed:       0w_0 = W0,   0wdot_0 = WP0,   0Vdot_0 = VP0 - G
    free flyer:  0w_0 = w,    0wdot_0 = wdot,  0Vdot_0 = vdot + w x v - 0R_w G

(``vdot`` is the derivative of the body-frame speed ``v``, so the classical
acceleration of O_0 adds ``w x v``).  :func:`state_inputs` orders a
program's inputs the way each root's models have always taken them.
"""

import sympy

from kanerobot.dynamics.common import check_structure, program_inputs
from kanerobot.dynamics.free_flyer import (
    BASE_ACCELERATION,
    BASE_VELOCITY,
    QUATERNION,
    check_floating,
    gravity_in_base,
)
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import FIXED, FREE_FLYER, Fixed, FreeFlyer

__all__ = ["check_root", "is_free", "root_joint", "root_joint_model", "root_motion", "state_inputs"]


def is_free(robot):
    """True when link 0 hangs from the world by a free-flyer joint (``robot.floating``)."""
    return bool(robot.floating)


def root_joint(robot):
    """The joint type of link 0 on the world: ``joints.FREE_FLYER`` or ``joints.FIXED``.

    Its ``joints.JOINT_SIZES`` entry is what the root adds to the joints' ``(nq, nv)``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.robot.joints import JOINT_SIZES
    >>> JOINT_SIZES[root_joint(kr.load(kr.frames_path("satellite")))], JOINT_SIZES[root_joint(kr.load(kr.frames_path("rx90")))]
    ((7, 6), (0, 0))
    """
    return FREE_FLYER if is_free(robot) else FIXED


def root_joint_model(robot):
    """The root joint of ``robot`` as a joint model: :class:`~kanerobot.robot.joints.FreeFlyer` or :class:`~kanerobot.robot.joints.Fixed`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> root_joint_model(kr.load(kr.frames_path("satellite"))), root_joint_model(kr.load(kr.frames_path("rx90")))
    (FreeFlyer(), Fixed())
    """
    return FreeFlyer() if is_free(robot) else Fixed()


def check_root(robot, what):
    """Raise unless the recursions handle ``robot`` on its root: a floating tree
    (:func:`~kanerobot.dynamics.free_flyer.check_floating`) or, on a fixed root,
    a rigid serial or tree robot (:func:`~kanerobot.dynamics.common.check_structure`)."""
    if is_free(robot):
        check_floating(robot, what)
    else:
        check_structure(robot, what, flexible=False)


def root_motion(program, robot, *, qd=True, qdd=True, gravity=True, base=True):
    """``(0w_0, 0wdot_0, 0Vdot_0)``: the motion of link 0 in frame 0, gravity included.

    Parameters
    ----------
    program : Program
        Receives the named vectors ``W0``, ``WP0``, ``VP0`` (components
        ``W10 .. VP30``) and, for a free flyer, gravity in frame 0 (``G0``).
    robot : Robot
    qd, qdd : bool, optional
        A free flyer's speeds (``VX0 .. WZ0``) and their derivatives
        (``DVX0 .. DWZ0``); False sets them to zero.  A fixed root's motion
        is ``robot.base``'s whatever these say (it is a parameter, not state).
    gravity : bool, optional
        Subtract gravity ``G`` (``robot.base.G``: frame 0 for a fixed root,
        the world frame for a free flyer).
    base : bool, optional
        A fixed root's known motion; False puts it at rest (gravity still
        applies).  A free flyer's motion is state: ``qd`` and ``qdd`` say.

    Returns
    -------
    tuple of sympy.Matrix
        Three 3x1 vectors.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.symbolic.program import Program
    >>> w, wdot, Vdot = root_motion(Program(), kr.load(kr.frames_path("rx90")))
    >>> w.T, Vdot.T
    (Matrix([[0, 0, 0]]), Matrix([[0, 0, -G3]]))
    >>> w, wdot, Vdot = root_motion(Program(), kr.load(kr.frames_path("satellite")), gravity=False)
    >>> w.T, Vdot.T
    (Matrix([[WX0, WY0, WZ0]]), Matrix([[VP10, VP20, VP30]]))
    """

    def vec(name, v):
        return program.assign_matrix(lambda r, c: f"{name}{r}{BASE}", v)

    zero = sympy.zeros(3, 1)
    if not is_free(robot):
        W0, WP0, VP0 = (robot.base.W0, robot.base.WP0, robot.base.VP0) if base else (zero, zero, zero)
        return vec("W", W0), vec("WP", WP0), vec("VP", VP0 - robot.base.G if gravity else VP0)
    v, w = (sympy.Matrix(BASE_VELOCITY[:3]), sympy.Matrix(BASE_VELOCITY[3:])) if qd else (zero, zero)
    dv, dw = (sympy.Matrix(BASE_ACCELERATION[:3]), sympy.Matrix(BASE_ACCELERATION[3:])) if qdd else (zero, zero)
    g = gravity_in_base(program, robot) if gravity else zero
    return vec("W", w), vec("WP", dw), vec("VP", dv + w.cross(v) - g)


def state_inputs(robot, what, *, qd, qdd, names, gravity, other=()):
    """Input symbols of a recursive program: the state, then the parameters.

    A fixed root takes ``q, [QP], [QDP], other``, then the geometric
    parameters in the robot's order, each link's ``names`` link by link,
    then ``W0, WP0, VP0`` and ``G`` (if ``gravity``) of ``robot.base``; a
    free flyer ``q, quaternion, [QP, base speeds], [QDP, base
    accelerations], other``, then the parameters sorted by name (its base
    motion is state).  Checks that a free-flyer robot is one the recursions
    handle (:func:`~kanerobot.dynamics.free_flyer.check_floating`, with
    ``what`` for the message).
    """
    if is_free(robot):
        check_floating(robot, what)
        state = [robot.q, QUATERNION]
        state += [robot.qd, BASE_VELOCITY] if qd else []
        state += [robot.qdd, BASE_ACCELERATION] if qdd else []
        return program_inputs(robot, state + [other], names, base=("G",) if gravity else False)
    groups = [robot.q] + ([robot.qd] if qd else []) + ([robot.qdd] if qdd else []) + [other]
    groups.append([sympy.Symbol(name) for name in robot.geometric_parameters])
    for label in robot.links:
        groups.extend(_symbols(robot.dynamics[label][name]) for name in names)
    base = robot.base
    groups.append(_symbols(sympy.Matrix.vstack(base.W0, base.WP0, base.VP0, base.G if gravity else sympy.zeros(0, 1))))
    out, seen = [], set()  # a set beside the list: `in` on the list made this quadratic in the parameters
    for group in groups:
        for value in group:
            value = sympy.sympify(value)
            if isinstance(value, sympy.Symbol) and value not in seen:
                seen.add(value)
                out.append(value)
    return out


def _symbols(expr):
    """Free symbols of ``expr``, sorted by name."""
    return sorted(sympy.sympify(expr).free_symbols, key=str)
