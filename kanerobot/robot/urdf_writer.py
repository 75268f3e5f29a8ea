"""Robots as URDF files: ``kr.save(robot, "x.urdf")``.

:func:`write_urdf` is the inverse of :func:`kanerobot.robot.urdf.read_urdf`:
reading its text back gives the same kinematics and the same SYMORO
parameters (to rounding, 1e-12 in the tests).

- Every frame of the robot becomes a joint named by the frame's label, in
  the robot's order; its child link is ``link_<label>`` and its parent link
  that of its antecedent (``link_0`` for the base, the URDF's root link).
  Revolute frames are ``continuous`` joints (``revolute`` when limits are
  given, as URDF requires them then), prismatic ones ``prismatic`` and fixed
  frames (sigma = 2) ``fixed``.
- The joint's ``<origin xyz rpy>`` is the frame's placement at q = 0 in its
  antecedent, ``aT_j(q = 0)``, and its ``<axis>`` the joint axis in the
  frame: a Khalil-Kleinfinger frame (``Rz(gamma) Tz(b) Rx(alpha) Tx(d)
  Rz(theta) Tz(r)``) is split as that origin then a motion about its z, a
  general frame as ``[R0; P]`` then ``Rot(axis, q)``.  A joint offset
  (``theta = q2 - pi/2``, ``r = q3 + L0``) is folded into the origin, so
  that the URDF's zero is the robot's q = 0 and the joint variables are
  unchanged.
- A link's SYMORO parameters about its frame origin (``XX .. ZZ = J``,
  ``MS = (MX, MY, MZ)``, ``M``) become its ``<inertial>``: the centre of
  mass ``c = MS / M`` (``rpy`` 0) and the inertia about it ``I_c = J - M
  (|c|^2 1 - c c^T)``, the inverse of the reader's conversion.  A massless
  link (all ten parameters 0) gets no ``<inertial>``; a link with no mass
  but first moments is not a rigid body and is refused.
- ``FV`` and ``FS`` of a joint are ``<dynamics damping friction>`` (those
  of a fixed frame act on nothing and are not written).  URDF has
  no rotor inertia and no external wrench: a nonzero ``IA`` or ``FX .. CZ``
  is refused (set them to 0 in ``values``).  Gravity, the base's velocities
  and the joint parameters are not part of a URDF: the reader's gravity is
  ``G = [G1, G2, G3]`` with the values of its ``gravity=`` option
  (``(0, 0, -9.81)`` by default), whatever gravity the written robot had.
  The reader gives every dynamic parameter a symbol and the written
  number as its value (zeros included: ``IA`` 0, no ``<dynamics>``: ``FV``
  and ``FS`` 0), so a robot read back has the same numbers, as values.
- A mimic joint (``robot.mimics``) gets its ``<mimic joint multiplier
  offset>`` (the joint variables are the robot's: the coupling holds as is).
- A floating robot's free flyer is not a URDF joint: the tree is written
  under the root link ``link_0``, which carries link 0's inertia; reading
  the file back with ``floating=True`` restores the free flyer.  A fixed
  base's link 0 never moves: ``link_0`` then has no ``<inertial>``.
- The reader orders the joints depth first from the root, so ``q`` read
  back is in the robot's order when its frames are numbered depth first
  (every chain, ``frames/krang.toml``); a tree numbered otherwise gets the
  same joints, labels and models in another order.

Numbers are the robot's values: every parameter symbol is bound from
``robot.values`` and the ``values`` mapping (which wins); a symbol without
a value is one :class:`~kanerobot.errors.RobotFileError` naming it.  Floats
are written with ``repr`` (17 significant digits: no loss).  Closed loops and
wheeled robots have no URDF form and are refused.

Examples
--------
>>> import kanerobot as kr
>>> from kanerobot.dynamics.parameters import random_parameters
>>> from kanerobot.robot.urdf import urdf_from_text
>>> robot = kr.load(kr.frames_path("rx90"))
>>> values = random_parameters(robot, np.random.default_rng(1), rotor=False, wrench=False)
>>> values.update(D3=0.5, RL4=0.45)
>>> text = write_urdf(robot, values=values)
>>> print(text.splitlines()[3])
  <joint name="1" type="continuous">
>>> back = urdf_from_text(text)
>>> back.joint_labels == robot.joint_labels, back.values["PX3"], back.values["PY4"]  # d3 on x2, r4 on y3 (alpha4 = -pi/2)
(True, 0.5, 0.45)
>>> write_urdf(robot)
Traceback (most recent call last):
  ...
kanerobot.errors.RobotFileError: <string>: cannot write robot RX90 as URDF: no value for CX6, CY6, CZ6, D3, FS1, FS2, FS3, FS4, FS5, FS6, FV1, FV2 ... (86 in all): give them in robot.values or values={...}
"""

import math
from xml.sax.saxutils import quoteattr

import numpy as np
import sympy

from kanerobot.robot import joints
from kanerobot.robot.description import BASE, FRICTION_NAMES, INERTIAL_NAMES, WRENCH_NAMES
from kanerobot.robot.files import NumbersWriter

__all__ = ["write_urdf", "rpy_angles"]

_INERTIA_INDEX = (("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2), ("izz", 2, 2))
_J_NAMES = (("XX", 0, 0), ("XY", 0, 1), ("XZ", 0, 2), ("YY", 1, 1), ("YZ", 1, 2), ("ZZ", 2, 2))
_LIMIT_KEYS = ("lower", "upper", "effort", "velocity")
#: A link's parameters that the file holds or refuses when nonzero (friction last: a fixed frame's is not written).
_WRITTEN = INERTIAL_NAMES + WRENCH_NAMES + FRICTION_NAMES


def rpy_angles(R):
    """URDF's ``(roll, pitch, yaw)`` of a rotation matrix: ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    At pitch = +-pi/2 (gimbal lock) roll is 0 and yaw takes the whole
    rotation about z.

    >>> from kanerobot.robot.urdf import rpy_matrix
    >>> R = rpy_matrix(0.3, -0.2, 1.1)
    >>> [round(a, 12) for a in rpy_angles(R)]
    [0.3, -0.2, 1.1]
    >>> np.allclose(rpy_matrix(*rpy_angles(rpy_matrix(0.4, math.pi / 2, 0.1))), rpy_matrix(0.4, math.pi / 2, 0.1))
    True
    """
    R = np.asarray(R, dtype=float)
    cos_pitch = math.hypot(R[0, 0], R[1, 0])
    pitch = math.atan2(-R[2, 0], cos_pitch)
    if cos_pitch < 1e-12:
        return 0.0, pitch, math.atan2(-R[0, 1], R[1, 1])
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def write_urdf(robot, path=None, values=None, limits=None):
    """The text of a URDF file describing ``robot`` (see the module's notes).

    Parameters
    ----------
    robot : Robot
        Any robot without closed loops or wheels; Khalil-Kleinfinger or
        general frames, fixed frames, fixed or floating base.
    path : str or Path, optional
        The file's name in error messages (``kr.save`` writes the text).
    values : mapping str -> float, optional
        Values of the parameter symbols, over ``robot.values``.
    limits : mapping label -> mapping, optional
        ``<limit>`` of joints, as :func:`~kanerobot.robot.urdf.parse_urdf`
        gives them (``lower``, ``upper``, ``velocity``, ``effort``); a
        revolute joint with limits is written ``revolute``.  Default: the
        robot's own ``robot.limits`` (what a URDF it was read from gave), so
        that URDF -> kanerobot -> URDF keeps them.

    Returns
    -------
    str

    Raises
    ------
    RobotFileError
        A closed loop, wheels, a symbol without a value, a rotor inertia or
        external wrench (no URDF form), or a link with first moments but no mass.
    """
    return _Writer(robot, path, values, limits).text()


def _float(x):
    """``repr`` of a float, ``-0.0`` written as ``0.0``."""
    x = float(x)
    return repr(x + 0.0) if x != 0 else "0.0"


def _floats(xs):
    return " ".join(_float(x) for x in xs)


class _Writer(NumbersWriter):
    format = "URDF"

    def __init__(self, robot, path, values, limits):
        super().__init__(robot, path, values)
        if limits is None:  # the robot's own (a URDF read keeps them): JointLimits -> the keys given
            limits = {label: {key: value for key, value in lim._asdict().items() if value is not None}
                      for label, lim in getattr(robot, "limits", {}).items()}
        self.limits = {label: limit for label, limit in dict(limits).items() if limit}

    def number(self, expr, what):
        """The float value of ``expr`` with the values bound; a free symbol is an error."""
        expr = sympy.sympify(expr)
        if expr.free_symbols:
            expr = expr.xreplace(self.substitution)
        missing = sorted(str(s) for s in expr.free_symbols)
        if missing:
            self.fail(f"{what} needs a value for {', '.join(missing)}: give it in robot.values or values={{...}}")
        return float(expr)

    def matrix(self, M, what):
        return np.array([[self.number(x, what) for x in row] for row in M.tolist()], dtype=float)

    # ------------------------------------------------------------ parts
    def check(self):
        if self.robot.loops:
            cut = ", ".join(f"{a}-{b}" for a, b in self.robot.loops)
            self.fail(f"it has closed loops (cut joints {cut}); a URDF is a tree: save it as .par or .toml")
        if self.robot.wheeled or self.robot.wheels:
            self.fail("it is a wheeled robot (wheels rolling on the ground have no URDF form): save it as .par or .toml")
        if self.robot.discs:
            self.fail(f"joint(s) {', '.join(d.joint for d in self.robot.discs)} are rolling discs (rolling on the ground has no URDF "
                      f"form): save it as .toml, or load the URDF back with discs=")  # fmt: skip
        several = next((item for item in self.robot.mimics if item.more), None)
        if several is not None:
            self.fail(f"mimic joint {several.joint} follows {len(several.terms)} joints ({', '.join(several.leaders)}) and a URDF "
                      f"<mimic> has one leader: save it as .toml")  # fmt: skip
        self.check_values()
        unknown = sorted(set(self.limits) - set(self.robot.joint_labels))
        if unknown:
            self.fail(f"limits given for {unknown[0]!r}, which is not a joint of the robot (joints: {', '.join(self.robot.joint_labels)})")

    def needed(self):
        """Names of the symbols the file's numbers depend on (not the joint variables)."""
        robot, names = self.robot, set()
        for frame in robot.frames:
            T = frame.transform()
            names |= {str(s) for s in (T.subs(frame.q, 0) if frame.is_joint else T).free_symbols}
        for label in robot.links:
            if label != BASE or robot.floating:
                keys = _WRITTEN if label == BASE or robot.frame(label).is_joint else _WRITTEN[:-2]
                names |= {str(s) for key in keys for s in sympy.sympify(robot.dynamics[label][key]).free_symbols}
        for item in robot.mimics:
            names |= {str(s) for x in (item.multiplier, item.offset) for s in sympy.sympify(x).free_symbols}
        return names

    def origin(self, frame):
        """``(xyz, rpy)`` of ``aT_j`` at q = 0 (offsets folded in), in the antecedent."""
        T = frame.transform()
        if frame.is_joint:
            T = T.subs(frame.q, 0)
        T = self.matrix(T, f"the placement of frame {frame.label}")
        return T[:3, 3], rpy_angles(T[:3, :3])

    def inertial(self, label):
        """``(mass, c, I_c)`` of link ``label``, or None if massless; refuses IA and wrenches."""
        if label not in self.robot.links:
            return None
        table = self.robot.dynamics[label]
        what = f"link {label}"
        for key in ("IA",) + WRENCH_NAMES:
            value = self.number(table[key], f"{key} of {what}")
            if value != 0:
                kind = "rotor inertia" if key == "IA" else "external wrench"
                self.fail(f"{what} has {kind} {key} = {value:g} and URDF has none: set it to 0 (values={{'{key}{self.robot.stems[label]}': 0}})")
        J = np.zeros((3, 3))
        for key, i, j in _J_NAMES:
            J[i, j] = J[j, i] = self.number(table[key], f"{key} of {what}")
        MS = np.array([self.number(table[key], f"{key} of {what}") for key in ("MX", "MY", "MZ")])
        mass = self.number(table["M"], f"M of {what}")
        if mass == 0:
            if MS.any():
                self.fail(f"{what} has no mass (M = 0) but first moments MS = {MS.tolist()}: not a rigid body; give its mass")
            return None if not J.any() else (0.0, np.zeros(3), J)
        c = MS / mass
        return mass, c, J - mass * (c @ c * np.eye(3) - np.outer(c, c))

    def friction(self, frame):
        if frame.label not in self.robot.links or not frame.is_joint:
            return None
        table = self.robot.dynamics[frame.label]
        damping, friction = (self.number(table[key], f"{key} of link {frame.label}") for key in ("FV", "FS"))
        return (damping, friction) if damping or friction else None

    # ------------------------------------------------------------- text
    def link(self, label):
        name = quoteattr(f"link_{label}")
        # a fixed base's link 0 never moves: its inertia means nothing (and may have no values)
        body = self.inertial(label) if label != BASE or self.robot.floating else None
        if body is None:
            return [f"  <link name={name}/>"]
        mass, c, I = body
        inertia = " ".join(f"{key}=\"{_float(I[i, j])}\"" for key, i, j in _INERTIA_INDEX)
        return [
            f"  <link name={name}>",
            "    <inertial>",
            f"      <origin xyz=\"{_floats(c)}\" rpy=\"0 0 0\"/>",
            f"      <mass value=\"{_float(mass)}\"/>",
            f"      <inertia {inertia}/>",
            "    </inertial>",
            "  </link>",
        ]

    def joint(self, frame):
        xyz, rpy = self.origin(frame)
        limit = self.limits.get(frame.label)
        if frame.sigma == joints.FIXED:
            kind = "fixed"
        elif frame.sigma == joints.PRISMATIC:
            kind = "prismatic"
        else:
            kind = "revolute" if limit else "continuous"
        out = [
            f"  <joint name={quoteattr(frame.label)} type=\"{kind}\">",
            f"    <parent link={quoteattr('link_' + frame.antecedent)}/>",
            f"    <child link={quoteattr('link_' + frame.label)}/>",
            f"    <origin xyz=\"{_floats(xyz)}\" rpy=\"{_floats(rpy)}\"/>",
        ]
        if frame.is_joint:
            axis = self.matrix(frame.axis, f"the axis of frame {frame.label}").ravel()
            out.append(f"    <axis xyz=\"{_floats(axis)}\"/>")
        if limit:
            keys = [key for key in _LIMIT_KEYS if key in limit]
            out.append("    <limit " + " ".join(f"{key}=\"{_float(limit[key])}\"" for key in keys) + "/>")
        damping = self.friction(frame)
        if damping is not None:
            out.append(f"    <dynamics damping=\"{_float(damping[0])}\" friction=\"{_float(damping[1])}\"/>")
        mimic = next((item for item in self.robot.mimics if item.joint == frame.label), None)
        if mimic is not None:
            k, o = (self.number(getattr(mimic, key), f"the {key} of mimic joint {frame.label}") for key in ("multiplier", "offset"))
            out.append(f"    <mimic joint={quoteattr(mimic.leader)} multiplier=\"{_float(k)}\" offset=\"{_float(o)}\"/>")
        out.append("  </joint>")
        return out

    def text(self):
        self.check()
        robot = self.robot
        out = ['<?xml version="1.0"?>', f"<robot name={quoteattr(robot.name)}>"]
        if robot.floating:
            out.append("  <!-- floating base: the free flyer is not written; read with floating=True -->")
        out += self.link(BASE)
        for frame in robot.frames:
            out += self.joint(frame)
            out += self.link(frame.label)
        out.append("</robot>")
        return "\n".join(out) + "\n"
