"""The numeric geometry of a drawn robot: what every view of kanerobot draws.

:func:`skeleton` compiles a robot's frames once, for given values of its
geometric parameters, into a :class:`Skeleton`; calling it on a
configuration gives a :class:`Scene`, plain numpy arrays in the world frame:

- every frame's pose ``(4, 4)`` by label (``'0'`` the base);
- the link polylines: for a Khalil-Kleinfinger frame j the points of its
  table, ``O_a(j)``, then ``b`` along ``z_a(j)``, then ``d`` along the
  common normal ``x`` (``z_a(j)`` turned by ``gamma``), then ``r`` along
  ``z_j`` to ``O_j`` (SYMORO+ eq. 1-b), so that a wrong ``b``, ``d`` or
  ``r`` shows as a wrong bend; a straight segment ``O_a(j) -> O_j`` for a
  general frame;
- each joint's axis: its origin, unit vector and kind (revolute or
  prismatic), active or passive, loop-cutting or not;
- the loops: each cut joint k with the fixed frame k + B that closes it
  (their origins coincide when the loop is closed);
- the wheels: centre, axle and radius;
- the base: ``Z`` (SYMORO's fT0) for a fixed or wheeled base, the free
  flyer's pose ``wT_0`` for a floating one.

The matplotlib views (:mod:`kanerobot.visual.draw`,
:mod:`kanerobot.visual.animate`) and the browser viewer draw these numbers
and nothing else, so the picture is the geometric model: the origins are
those of :func:`kanerobot.geometry.numeric_transform` (and of
``fn.pose``).  Numbers are never invented: a geometric parameter without a
value is an error naming it.

Examples
--------
>>> import kanerobot as kr
>>> arm = kr.load(kr.frames_path("planar2"))
>>> scene = skeleton(arm, {"L1": 0.5})([0.0, 0.3])
>>> scene.origin("2").tolist()
[0.5, 0.0, 0.0]
>>> [(j.label, j.kind) for j in scene.joints]
[('1', 'revolute'), ('2', 'revolute')]
>>> skeleton(kr.load(kr.frames_path("rx90")))
Traceback (most recent call last):
...
kanerobot.errors.ParameterError: robot RX90: no value for the geometric parameters D3, RL4: give them as values={'D3': ..., 'RL4': ...} in Python, or --set D3=VALUE --set RL4=VALUE on the command line
"""

from dataclasses import dataclass

import numpy
import sympy

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.geometry import loop_solver, numeric_function
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import base_pose

__all__ = ["Cut", "JointAxis", "Link", "Scene", "Skeleton", "WheelShape", "skeleton"]

#: The free flyer's coordinates at the head of a floating robot's ``q``.
FLOATING_COORDINATES = ("x", "y", "z", "qx", "qy", "qz", "qw")


@dataclass(frozen=True)
class Link:
    """The polyline drawn for frame ``label`` from its antecedent's origin.

    Attributes
    ----------
    label, antecedent : str
    points : numpy.ndarray, shape (4, 3) or (2, 3)
        World coordinates: ``O_a, O_a + b z_a, + d x, O_j`` for a
        Khalil-Kleinfinger frame (``kind == "kk"``; consecutive points
        coincide where b, d or r is 0), ``O_a, O_j`` for a general frame.
    kind : {"kk", "general"}
    """

    label: str
    antecedent: str
    points: numpy.ndarray
    kind: str


@dataclass(frozen=True)
class JointAxis:
    """A joint's axis in the world frame.

    Attributes
    ----------
    label : str
    origin : numpy.ndarray, shape (3,)
        The origin of the joint's frame.
    axis : numpy.ndarray, shape (3,)
        Unit vector of the joint axis (``z_j`` of a Khalil-Kleinfinger frame).
    kind : {"revolute", "prismatic"}
    active : bool
        Actuated (every joint of an open chain; ``mu = 1`` in a loop).
    cut : bool
        The joint where a loop is cut (drawn dashed).
    variable : str
        The name of the joint variable (``th1``, ``q_w``; ``r`` of a
        prismatic Khalil-Kleinfinger frame), for labels and sliders.
    """

    label: str
    origin: numpy.ndarray
    axis: numpy.ndarray
    kind: str
    active: bool
    cut: bool
    variable: str = ""


@dataclass(frozen=True)
class Cut:
    """A loop: cut joint ``cut`` and the fixed frame ``closing`` that coincides with it when closed.

    Attributes
    ----------
    cut, closing : str
    points : numpy.ndarray, shape (2, 3)
        The origins of the two frames (one point twice when the loop is closed).
    gap : float
        Their distance (0 for a closed loop).
    """

    cut: str
    closing: str
    points: numpy.ndarray
    gap: float


@dataclass(frozen=True)
class WheelShape:
    """A wheel: a circle of ``radius`` about ``centre`` in the plane normal to ``axis``.

    Attributes
    ----------
    joint : str
        The wheel's joint (its frame's origin is the centre).
    centre, axis : numpy.ndarray, shape (3,)
        World coordinates; ``axis`` is the unit axle.
    radius : float
    kind : {"fixed", "steering", "castor"}
    """

    joint: str
    centre: numpy.ndarray
    axis: numpy.ndarray
    radius: float
    kind: str


@dataclass(frozen=True)
class Scene:
    """A robot at one configuration, in numbers (world frame).

    Attributes
    ----------
    name : str
        The robot's name.
    q : numpy.ndarray, shape (nj,)
        Every joint's value, in ``robot.joint_labels`` order (closed by the
        loop solver when only the active joints were given).
    base : numpy.ndarray, shape (4, 4)
        ``wT_0``: the pose of the base frame 0 in the world (``Z``, or the
        free flyer's pose of a floating robot).
    poses : dict str -> numpy.ndarray, shape (4, 4)
        ``wT_j`` of every frame, the base ``'0'`` included.
    links : tuple of Link
        One per frame, in the robot's frame order.
    joints : tuple of JointAxis
        One per joint, in ``robot.joint_labels`` order.
    cuts : tuple of Cut
        One per loop, in ``robot.loops`` order.
    wheels : tuple of WheelShape
    floating : bool
        The base is a free flyer (draw the world frame apart from frame 0).
    values : dict str -> float
        The geometric parameters used (those the drawing needs).
    """

    name: str
    q: numpy.ndarray
    base: numpy.ndarray
    poses: dict[str, numpy.ndarray]
    links: tuple[Link, ...]
    joints: tuple[JointAxis, ...]
    cuts: tuple[Cut, ...]
    wheels: tuple[WheelShape, ...]
    floating: bool
    values: dict[str, float]

    def origin(self, label):
        """The origin of frame ``label`` in the world, shape (3,)."""
        return self.poses[str(label)][:3, 3]

    @property
    def origins(self):
        """``{label: origin (3,)}`` of every frame, the base included."""
        return {label: T[:3, 3] for label, T in self.poses.items()}

    def points(self):
        """Every point drawn: origins, polyline points and wheel rims' extremes, shape (k, 3)."""
        parts = [T[:3, 3][None] for T in self.poses.values()] + [link.points for link in self.links]
        parts += [numpy.array([w.centre - w.radius, w.centre + w.radius]) for w in self.wheels]
        if self.floating:
            parts.append(numpy.zeros((1, 3)))  # the world origin, drawn with the floating base
        return numpy.concatenate(parts)

    @property
    def size(self):
        """A length for the drawing: the largest extent of :meth:`points` (1 when they are one point).

        Triads and axes are drawn as fractions of it.
        """
        points = self.points()
        extent = float(numpy.max(points.max(axis=0) - points.min(axis=0)))
        return extent if extent > 1e-9 else 1.0

    def as_dict(self):
        """The scene as plain lists and numbers (JSON-serialisable), for the browser viewer.

        Returns
        -------
        dict
            Keys ``name, q, base, poses, links, joints, cuts, wheels,
            floating, values``; arrays become nested lists (row by row).
        """
        return {
            "name": self.name,
            "q": self.q.tolist(),
            "base": self.base.tolist(),
            "poses": {label: T.tolist() for label, T in self.poses.items()},
            "links": [{"label": k.label, "antecedent": k.antecedent, "points": k.points.tolist(), "kind": k.kind} for k in self.links],
            "joints": [
                {"label": j.label, "origin": j.origin.tolist(), "axis": j.axis.tolist(), "kind": j.kind, "active": j.active,
                 "cut": j.cut, "variable": j.variable}
                for j in self.joints
            ],
            "cuts": [{"cut": c.cut, "closing": c.closing, "points": c.points.tolist(), "gap": c.gap} for c in self.cuts],
            "wheels": [
                {"joint": w.joint, "centre": w.centre.tolist(), "axis": w.axis.tolist(), "radius": w.radius, "kind": w.kind}
                for w in self.wheels
            ],
            "floating": self.floating,
            "values": dict(self.values),
        }


def _missing_message(robot, missing):
    names = ", ".join(missing)
    example = ", ".join(f"{name!r}: ..." for name in missing)
    options = " ".join(f"--set {name}=VALUE" for name in missing)
    plural = "s" if len(missing) > 1 else ""
    return (
        f"robot {robot.name}: no value for the geometric parameter{plural} {names}: give {'them' if plural else 'it'} as "
        f"values={{{example}}} in Python, or {options} on the command line"
    )


class Skeleton:
    """A robot's drawing geometry compiled for given parameter values; call it on a configuration.

    Built by :func:`skeleton`.

    Attributes
    ----------
    robot : Robot
    values : dict str -> float
        The values of the geometric parameters the drawing uses.
    coordinates : tuple of str
        What a full ``q`` holds: the joint labels, after the free flyer's
        ``x y z qx qy qz qw`` for a floating robot.
    nq : int
        ``len(coordinates)``.
    """

    def __init__(self, robot, values=None):
        self.robot = robot
        given = {**{str(k): v for k, v in robot.values.items()}, **{str(k): v for k, v in (values or {}).items()}}
        self._frames = robot.frames
        columns: list[sympy.Expr] = []
        self._layout = []
        for f in robot.frames:
            T = f.transform()
            self._layout.append(len(columns))
            columns.extend(T[r, c] for r in range(3) for c in range(4))
            if f.is_kk:
                p = f.placement
                columns.extend((p.gamma, p.b, p.d))
        self._z_column = len(columns)
        columns.extend(robot.base.Z[r, c] for r in range(3) for c in range(4))
        self._wheel_column = len(columns)
        columns.extend(wheel.radius for wheel in robot.wheels)
        joint_names = {str(s) for s in robot.joint_symbols}
        needed = sorted({str(s) for e in columns for s in sympy.sympify(e).free_symbols} - joint_names)
        missing = [name for name in needed if name not in given]
        if missing:
            raise ParameterError(_missing_message(robot, missing))
        self.values = {name: _number(name, given[name]) for name in needed}
        self._evaluate = numeric_function(robot, sympy.Matrix(columns), self.values, ("q",))
        self._labels = robot.joint_labels
        self._active = set(robot.active_joints)
        self._cuts = set(robot.cut_joints)
        self._solve = None  # the loop solver, compiled on the first active-joints q
        self.coordinates = (FLOATING_COORDINATES if robot.floating else ()) + self._labels
        self.nq = len(self.coordinates)

    def __repr__(self):
        return f"<Skeleton of {self.robot.name}: q of {self.nq} ({', '.join(self.coordinates)})>"

    def default(self):
        """The configuration drawn when none is given: joints at 0 (a floating base at the world origin).

        Returns
        -------
        numpy.ndarray, shape (nq,) or (len(robot.active_joints),)
            For a closed-loop robot the active joints at 0 (the loops
            are closed from there).
        """
        if self.robot.loops:
            return numpy.zeros(len(self.robot.active_joints))
        q = numpy.zeros(self.nq)
        if self.robot.floating:
            q[6] = 1.0  # unit quaternion (x y z w)
        return q

    def configuration(self, q=None, guess=None):
        """The base pose and the full joint vector that ``q`` stands for.

        Parameters
        ----------
        q : array_like, optional
            ``nq`` values (see :attr:`coordinates`); for a closed-loop robot
            also the active joints alone, ``robot.active_joints`` order,
            whose passive joints are found by
            :func:`kanerobot.geometry.loop_solver`.  Default :meth:`default`.
        guess : array_like, optional
            Starting point of the loop solver (the passive joints in the
            loops, its ``unknown`` order); default 0.  It picks the assembly
            mode.

        Returns
        -------
        base : numpy.ndarray, shape (4, 4)
            ``wT_0``.
        joints : numpy.ndarray, shape (nj,)
            In ``robot.joint_labels`` order.

        Raises
        ------
        KaneRobotError
            A ``q`` of the wrong length (the message says the layout), not
            finite, or whose loops do not close.
        """
        robot = self.robot
        q = self.default() if q is None else numpy.asarray(q, dtype=float).reshape(-1)
        if not numpy.all(numpy.isfinite(q)):
            raise KaneRobotError(f"q of {robot.name} has values that are not finite: {q.tolist()}")
        if robot.loops and len(q) == len(robot.active_joints) != self.nq:
            if self._solve is None:
                self._solve = loop_solver(robot, self.values)
            q = self._solve(q, guess=guess)
        if len(q) != self.nq:
            also = (
                f", or {len(robot.active_joints)} (the active joints {', '.join(robot.active_joints)}, the loops closed numerically)"
                if robot.loops else ""
            )
            raise KaneRobotError(
                f"q of {robot.name} needs {self.nq} values ({', '.join(self.coordinates)}){also}, got {len(q)}"
            )
        if robot.floating:
            return base_pose(_unit_base(q[:7], robot.name)), q[7:]
        return None, q

    def __call__(self, q=None, guess=None):
        """The :class:`Scene` at configuration ``q`` (arguments of :meth:`configuration`).

        Returns
        -------
        Scene
        """
        base, joints = self.configuration(q, guess)
        flat = self._evaluate(joints).reshape(-1)
        Z = numpy.eye(4)
        Z[:3, :] = flat[self._z_column : self._z_column + 12].reshape(3, 4)
        world = Z if base is None else base
        poses = {BASE: world}
        links, axes = [], []
        for f, start in zip(self._frames, self._layout):
            local = numpy.eye(4)
            local[:3, :] = flat[start : start + 12].reshape(3, 4)
            parent = poses[f.antecedent]
            T = poses[f.label] = parent @ local
            if f.is_kk:
                gamma, b, d = flat[start + 12 : start + 15]
                bent = parent[:3, 3] + b * parent[:3, 2]
                normal = parent[:3, :3] @ numpy.array([numpy.cos(gamma), numpy.sin(gamma), 0.0])
                points = numpy.array([parent[:3, 3], bent, bent + d * normal, T[:3, 3]])
            else:
                points = numpy.array([parent[:3, 3], T[:3, 3]])
            links.append(Link(f.label, f.antecedent, points, "kk" if f.is_kk else "general"))
            if f.is_joint:
                axis = T[:3, :3] @ numpy.asarray(f.axis, dtype=float).reshape(3)
                axes.append(JointAxis(f.label, T[:3, 3].copy(), axis / numpy.linalg.norm(axis), f.joint.name,
                                      f.label in self._active, f.label in self._cuts, str(f.q)))
        cuts = tuple(
            Cut(cut, closing, numpy.array([poses[cut][:3, 3], poses[closing][:3, 3]]),
                float(numpy.linalg.norm(poses[cut][:3, 3] - poses[closing][:3, 3])))
            for cut, closing in self.robot.loops
        )
        axis_of = {j.label: j.axis for j in axes}
        wheels = tuple(
            WheelShape(w.joint, poses[w.joint][:3, 3].copy(), axis_of[w.joint], float(flat[self._wheel_column + n]), w.kind)
            for n, w in enumerate(self.robot.wheels)
        )
        return Scene(self.robot.name, joints, world, poses, tuple(links), tuple(axes), cuts, wheels,
                     bool(self.robot.floating), dict(self.values))


def _unit_base(pose, name):
    """The free flyer's ``x y z qx qy qz qw`` with a unit quaternion; a zero one is refused."""
    norm = numpy.linalg.norm(pose[3:7])
    if not norm > 1e-12:
        raise KaneRobotError(f"q of {name}: the base quaternion q[3:7] (x y z w) is zero; give a unit quaternion such as 0, 0, 0, 1")
    out = pose.copy()
    out[3:7] /= norm
    return out


def _number(name, value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"the value of {name} is {value!r}, not a number") from None
    if not numpy.isfinite(number):
        raise ParameterError(f"the value of {name} is {number}, not a finite number")
    return number


def skeleton(robot, values=None):
    """Compile the drawing geometry of ``robot`` for the parameter ``values``.

    Parameters
    ----------
    robot : Robot
    values : dict str -> float, optional
        Values of the geometric parameters (lengths of the tables, symbols
        of ``Z`` and of the wheels' radii), on top of ``robot.values`` (a
        URDF's numbers).  Other names are ignored, so a simulation's whole
        parameter set can be given.

    Returns
    -------
    Skeleton
        ``skeleton(robot, values)(q)`` is the :class:`Scene` at ``q``.

    Raises
    ------
    ParameterError
        A geometric parameter without a value: one message lists every
        missing name and how to give them (``values={...}``, ``--set
        NAME=VALUE``); a value that is not a finite number.

    Examples
    --------
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> scene = skeleton(fourbar)([1.2], guess=[-1.2, 1.2, -1.2])   # the active joint: the loop is closed
    >>> scene.q.round(8).tolist(), round(scene.cuts[0].gap, 12)
    ([1.2, -1.2, 1.2, -1.2], 0.0)
    >>> [j.label for j in scene.joints if j.cut]
    ['4']
    """
    return Skeleton(robot, values)
