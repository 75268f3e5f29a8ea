"""The robot description: an immutable tree of frames with its parameters.

A :class:`Robot` is what every model of kanerobot is computed from.  It is
built once, from a file (:func:`kanerobot.load`) or in Python, validated on
construction, and never changed afterwards; :meth:`Robot.subs` returns a new
robot with some parameters bound to values.

Frames are numbered in SYMORO's way (Khalil and Kleinfinger; SYMORO+ section
2.1): frame j is fixed to link j, a(j) is its antecedent and ``'0'`` is the
base.  A closed-loop robot is described by its equivalent tree, each loop cut
at a passive joint k, plus a fixed frame k + B on the other link that
coincides with frame k when the loop is closed (NF = NL + 2B).

A wheeled mobile robot (``wheeled``) moves its chassis in the plane: its
posture ``xi = [x y theta]`` is three joints of the tree (:attr:`Robot.posture`:
x and y prismatic, theta revolute about the vertical, the chassis being the
link of theta), and its :class:`Wheel` s say which revolute joints are wheels
rolling on the ground, their kind (fixed, steering, castor), radius and, for
a castor, its offset (OpenSYMORO section IV-E; Campion and Chung).  The
constraints and the dynamics are in :mod:`kanerobot.dynamics.wheeled`.

A mimic joint (:class:`MimicJoint`, :attr:`Robot.mimics`) is a joint of the
tree whose variable follows another's, ``q_m = multiplier q_leader + offset``
(a URDF ``<mimic>``: a gripper's second finger); the models hold it as a
constraint (:mod:`kanerobot.dynamics.mimic`).

A rolling disc (:class:`Disc`, :attr:`Robot.discs`) is the link of a revolute
joint anywhere in the tree, rolling without slipping on the robot's
:class:`Ground` (a plane of frame 0: level or a slope); the robot may choose
the independent speeds of its constraints (:attr:`Robot.independent`).  The
description holds the geometry only; :mod:`kanerobot.dynamics.rolling_disc`
builds the constraints.
"""

import difflib
import html
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

import sympy

from kanerobot.errors import DescriptionError, KaneRobotError, ParameterError
from kanerobot.robot import joints
from kanerobot.robot.expressions import parse_expression, symbol

# The parameter names live below this module (kanerobot.robot.names) so that the
# tables can use them too; they are imported from here by much of the package.
from kanerobot.robot.names import (
    BASE,
    BASE_VECTOR_NAMES,
    DYNAMIC_NAMES,
    FRICTION_NAMES,
    INERTIAL_NAMES,
    JOINT_NAMES,
    WRENCH_NAMES,
    is_stem,
    label_stem,
    natural_key,
)
from kanerobot.robot.tables import html_tables

STRUCTURES = ("serial", "tree", "closed loop")
#: Kinds of wheels: fixed (axle fixed on the chassis), steering (turned about a
#: vertical axis through its centre by a steering joint), castor (turned about a
#: vertical axis at a horizontal distance ``offset`` from its centre).
WHEEL_KINDS = ("fixed", "steering", "castor")


def _expr(value, key, label):
    try:
        return parse_expression(value)
    except Exception as exc:  # ExpressionError, or a sympy error on odd input
        raise DescriptionError(f"{key} of {label}: {exc}", key=key, label=label) from None


def _vector(values, size, key, label):
    values = list(values)
    if len(values) != size:
        raise DescriptionError(f"{key} of {label} needs {size} values, got {len(values)}", key=key, label=label)
    return sympy.ImmutableMatrix([_expr(v, key, label) for v in values])


@dataclass(frozen=True)
class KKPlacement:
    """Khalil-Kleinfinger parameters of a frame relative to its antecedent."""

    gamma: sympy.Expr = sympy.S.Zero
    b: sympy.Expr = sympy.S.Zero
    alpha: sympy.Expr = sympy.S.Zero
    d: sympy.Expr = sympy.S.Zero
    theta: sympy.Expr = sympy.S.Zero
    r: sympy.Expr = sympy.S.Zero

    KEYS = ("gamma", "b", "alpha", "d", "theta", "r")

    def __post_init__(self):
        # Numbers and strings become sympy, so equal robots compare equal
        # however they were built.
        for key in self.KEYS:
            object.__setattr__(self, key, _expr(getattr(self, key), key, "a KK frame"))

    def transform(self):
        return joints.kk_transform(self.gamma, self.b, self.alpha, self.d, self.theta, self.r)

    def joint_variable(self, joint):
        """theta of a revolute joint, r of a prismatic one (None for a fixed frame)."""
        return {joints.Revolute.name: self.theta, joints.Prismatic.name: self.r}.get(joint.name)

    @property
    def axis(self):
        return sympy.ImmutableMatrix([0, 0, 1])


@dataclass(frozen=True)
class GeneralPlacement:
    """A frame given by its rotation ``R0`` and position ``P`` at q = 0 and its
    joint axis ``axis`` (unit, in the frame itself), as in the Krang report."""

    R0: sympy.ImmutableMatrix
    P: sympy.ImmutableMatrix
    axis: sympy.ImmutableMatrix
    q: sympy.Expr = sympy.S.Zero

    def __post_init__(self):
        for key, rows, cols in (("R0", 3, 3), ("P", 3, 1), ("axis", 3, 1)):
            value = getattr(self, key)
            flat = [v for row in value for v in row] if _is_nested(value) else list(value)
            if len(flat) != rows * cols:
                raise DescriptionError(f"{key} needs {rows}x{cols} values, got {len(flat)}", key=key)
            object.__setattr__(self, key, sympy.ImmutableMatrix(rows, cols, [_expr(v, key, "a frame") for v in flat]))
        object.__setattr__(self, "q", _expr(self.q, "q", "a frame"))

    def transform(self, joint, coordinates=None):
        """``[R0, P; 0 1] M(q)`` of ``joint``: q is ``self.q`` for one coordinate, else ``coordinates``."""
        return joint.placed(self.R0, self.P, self.axis, (self.q,) if joint.nq == 1 else tuple(coordinates or ()))

    def joint_variable(self, joint):
        """q of a joint with one coordinate (None otherwise)."""
        return self.q if joint.nq == 1 else None


@dataclass(frozen=True)
class Frame:
    """Frame ``label`` on its antecedent ``antecedent``.

    ``joint`` is the frame's joint model (:mod:`kanerobot.robot.joints`), or
    SYMORO's code ``sigma`` of one: 0 (revolute), 1 (prismatic) or 2 (fixed);
    ``mu`` is 1 for an active (actuated) joint and 0 for a passive one.  ``label`` is any name
    without whitespace (a URDF joint's name as written: ``l-hip.y``);
    ``stem`` is the part of the symbol and variable names built for the
    frame (``XX<stem>``, ``H<stem>``): ASCII letters, digits and ``_``,
    :func:`~kanerobot.robot.names.label_stem` of the label by default (the
    label itself for a label made of those characters).
    """

    label: str
    antecedent: str
    joint: joints.JointModel
    mu: int
    placement: KKPlacement | GeneralPlacement
    # The constructor takes SYMORO's sigma code for joint too and None for stem: __post_init__ turns them into
    # the joint model and the label's stem, which the type checker sees the fields hold.
    if TYPE_CHECKING:
        stem: str

        def __init__(self, label: str, antecedent: str, joint: joints.JointModel | int, mu: int,
                     placement: KKPlacement | GeneralPlacement, stem: str | None = None) -> None: ...
    else:
        stem: str | None = None

    def __post_init__(self):
        if self.stem is None:
            object.__setattr__(self, "stem", label_stem(self.label))
        try:
            object.__setattr__(self, "joint", joints.from_sigma(self.joint))
        except ValueError:
            raise DescriptionError(
                f"sigma of frame {self.label} is {self.joint}: use 0 (revolute), 1 (prismatic) or 2 (fixed)",
                key="sigma",
                label=self.label,
            ) from None

    @property
    def sigma(self):
        """SYMORO's code of the joint (0 revolute, 1 prismatic, 2 fixed; None for the others): for the file writers."""
        return self.joint.sigma

    @property
    def is_joint(self):
        return self.joint.nv > 0

    @property
    def joint_key(self):
        """The placement field holding the joint variable: ``"theta"`` (revolute)
        or ``"r"`` (prismatic) of a KK frame, ``"q"`` of a general frame; None if fixed."""
        if not self.is_joint:
            return None
        if not self.is_kk:
            return "q"
        return "theta" if isinstance(self.joint, joints.Revolute) else "r"

    @property
    def joint_expression(self):
        """theta (revolute KK), r (prismatic KK) or a general frame's q, as
        written: the joint variable plus its offset; None if fixed."""
        return self.placement.joint_variable(self.joint)

    @cached_property
    def _variable_and_offset(self):
        expr = self.joint_expression
        if expr is None:
            return None, sympy.S.Zero
        return joints.split_joint_variable(expr, self.label)

    @property
    def q(self):
        """The joint variable, a plain symbol (``th2`` of ``theta = th2 - pi/2``);
        None if fixed."""
        return self._variable_and_offset[0]

    @property
    def offset(self):
        """The constant added to the joint variable in theta (revolute) or r
        (prismatic): ``-pi/2`` of ``theta = th2 - pi/2``; 0 if none or fixed."""
        return self._variable_and_offset[1]

    @property
    def axis(self):
        """Unit joint axis in this frame, 3x1 (z for Khalil-Kleinfinger frames)."""
        return self.placement.axis

    @property
    def is_kk(self):
        return isinstance(self.placement, KKPlacement)

    def transform(self):
        """4x4 transform aT_j of this frame in its antecedent, a function of q."""
        if isinstance(self.placement, KKPlacement):
            return self.placement.transform()
        return self.placement.transform(self.joint, self.coordinates)

    @property
    def coordinates(self):
        """The joint's configuration symbols, ``nq`` of them: ``(q,)`` for one, named by the joint model otherwise."""
        if self.joint.nq == 1:
            return (self.q,)
        return tuple(symbol(name) for name in self.joint.configuration_names(self.stem))

    def motion_subspace(self):
        """``S_j``, 6 x nv, linear rows first, in this frame (:meth:`JointModel.motion_subspace`)."""
        return self.joint.motion_subspace(self.axis)


@dataclass(frozen=True)
class Wheel:
    """A wheel of a wheeled mobile robot, rolling on the ground of the world.

    The wheel is the link of the revolute joint ``joint``: the joint axis is
    its axle (horizontal), the joint variable its rotation phi, and the
    origin of its frame its centre, at height ``radius`` above the ground
    ``z = 0`` of the world.  It touches the ground at the point below its
    centre; rolling without slipping makes that point's velocity zero
    (:mod:`kanerobot.dynamics.wheeled` checks the geometry and builds the
    constraints).

    Parameters
    ----------
    joint : str
        Label of the wheel's revolute joint.
    kind : {"fixed", "steering", "castor"}
        ``fixed``: the axle is fixed on the chassis; ``steering``: a
        steering joint ``steer`` turns the wheel about a vertical axis
        through its centre (the steering angle beta is a coordinate of its
        own, free of the constraints); ``castor``: a joint ``steer`` turns it
        about a vertical axis at the horizontal distance ``offset`` from its
        centre (beta then follows the motion).
    radius : number or expression
        The contact geometry: the wheel's radius, > 0.
    steer : str, optional
        Label of the steering (or castor swivel) joint: revolute, about the
        vertical, between the chassis and the wheel.  Required for steering
        and castor wheels, refused for fixed ones.
    offset : number or expression, optional
        Castor only (required, not 0): the horizontal distance from the
        steering axis to the wheel centre.

    Raises
    ------
    DescriptionError
        ``key`` ``"wheel:kind"``, ``"wheel:radius"``, ``"wheel:steer"`` or
        ``"wheel:offset"`` and ``label`` the wheel's joint, for a file
        reader to point at the line.

    Examples
    --------
    >>> Wheel("4", "fixed", radius="R")
    Wheel(joint='4', kind='fixed', radius=R, steer=None, offset=0)
    >>> Wheel("7", "castor", radius="Rc", steer="6")
    Traceback (most recent call last):
      ...
    kanerobot.errors.DescriptionError: castor wheel 7 has no offset: give offset, the horizontal distance from its steering axis (joint 6) to its centre
    """

    joint: str
    kind: str = "fixed"
    radius: sympy.Expr | None = None
    steer: str | None = None
    offset: sympy.Expr | None = None

    def __post_init__(self):
        joint = str(self.joint)
        object.__setattr__(self, "joint", joint)
        if self.kind not in WHEEL_KINDS:
            guess = difflib.get_close_matches(str(self.kind).lower(), WHEEL_KINDS, n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            raise DescriptionError(
                f"wheel {joint}: kind {self.kind!r} is not a kind of wheel{hint}; use {', '.join(WHEEL_KINDS)}",
                key="wheel:kind",
                label=joint,
            )
        if self.radius is None:
            raise DescriptionError(
                f"wheel {joint} has no contact geometry: give its radius (the height of its centre above the ground)",
                key="wheel:radius",
                label=joint,
            )
        radius = _expr(self.radius, "radius", f"wheel {joint}")
        if radius.is_number and not (radius.is_real and radius > 0):
            raise DescriptionError(f"wheel {joint} has radius {radius}: a wheel's radius must be > 0", key="wheel:radius", label=joint)
        object.__setattr__(self, "radius", radius)
        steer = None if self.steer is None else str(self.steer)
        object.__setattr__(self, "steer", steer)
        if self.kind == "fixed" and steer is not None:
            raise DescriptionError(
                f"wheel {joint} is fixed but has a steering joint {steer}: remove steer, or make it a steering or castor wheel",
                key="wheel:steer",
                label=joint,
            )
        if self.kind != "fixed" and steer is None:
            raise DescriptionError(
                f"{self.kind} wheel {joint} has no steering joint: give steer, the label of the revolute joint "
                f"that turns it about the vertical",
                key="wheel:steer",
                label=joint,
            )
        if self.offset is None:
            if self.kind == "castor":
                raise DescriptionError(
                    f"castor wheel {joint} has no offset: give offset, the horizontal distance from its steering "
                    f"axis (joint {steer}) to its centre",
                    key="wheel:offset",
                    label=joint,
                )
            offset = sympy.S.Zero
        else:
            offset = _expr(self.offset, "offset", f"wheel {joint}")
        if self.kind == "castor" and offset == 0:
            raise DescriptionError(
                f"castor wheel {joint} has offset 0: a castor's centre is off its steering axis (offset != 0); "
                f"a wheel centred on its steering axis is a steering wheel",
                key="wheel:offset",
                label=joint,
            )
        if self.kind != "castor" and offset != 0:
            raise DescriptionError(
                f"{self.kind} wheel {joint} has an offset {offset}: only a castor has one (a steering wheel's axis "
                f"goes through its centre); make it a castor or remove offset",
                key="wheel:offset",
                label=joint,
            )
        object.__setattr__(self, "offset", offset)

    def subs(self, mapping):
        """A new wheel with ``mapping`` ({Symbol: value}) applied to radius and offset."""
        assert self.radius is not None and self.offset is not None  # __post_init__ sets them
        return replace(self, radius=self.radius.xreplace(mapping), offset=self.offset.xreplace(mapping))


@dataclass(frozen=True)
class Disc:
    """A rigid disc rolling without slipping on the robot's :class:`Ground`.

    The disc is the link of the revolute joint ``joint``: the joint axis is
    its axle, the origin of its frame its centre; it may sit anywhere in the
    tree and tilt (:class:`kanerobot.dynamics.rolling_disc.RollingDisc`
    computes its contact point from its pose).

    Parameters
    ----------
    joint : str
        Label of the disc's revolute joint.
    radius : number or expression
        The disc's radius (> 0); for a torus wheel, the radius of the circle
        of its tyre's centres.
    tyre : number or expression, optional
        A torus wheel's tyre (tube) radius (>= 0; default 0, a thin disc).

    Raises
    ------
    DescriptionError
        ``key`` ``"disc:radius"`` or ``"disc:tyre"`` and ``label`` the
        disc's joint, for a file reader to point at the line.

    Examples
    --------
    >>> Disc("wl", "R")
    Disc(joint='wl', radius=R, tyre=0)
    >>> Disc("wl", -0.1)
    Traceback (most recent call last):
      ...
    kanerobot.errors.DescriptionError: disc wl has radius -0.100000000000000: a disc's radius must be > 0
    """

    joint: str
    radius: sympy.Expr
    tyre: sympy.Expr = sympy.S.Zero

    def __post_init__(self):
        joint = str(self.joint)
        object.__setattr__(self, "joint", joint)
        radius = _expr(self.radius, "radius", f"disc {joint}")
        if radius.is_number and not (radius.is_real and radius > 0):
            raise DescriptionError(f"disc {joint} has radius {radius}: a disc's radius must be > 0", key="disc:radius", label=joint)
        tyre = _expr(self.tyre, "tyre", f"disc {joint}")
        if tyre.is_number and not (tyre.is_real and tyre >= 0):
            raise DescriptionError(
                f"disc {joint} has tyre radius {tyre}: a torus wheel's tyre radius must be >= 0 (0: a thin disc)",
                key="disc:tyre", label=joint,
            )  # fmt: skip
        object.__setattr__(self, "radius", radius)
        object.__setattr__(self, "tyre", tyre)

    def subs(self, mapping):
        """A new disc with ``mapping`` ({Symbol: value}) applied to its radii."""
        return replace(self, radius=self.radius.xreplace(mapping), tyre=self.tyre.xreplace(mapping))


#: The level ground's normal: z up in frame 0.
_UP = sympy.ImmutableMatrix([0, 0, 1])


@dataclass(frozen=True)
class Ground:
    """The plane the robot's discs roll on: the points ``p`` of frame 0 with ``normal . p = height``.

    Parameters
    ----------
    normal : sequence of 3 numbers or expressions, optional
        Its unit normal in frame 0, towards the discs (default ``(0, 0, 1)``:
        the level ground ``z = 0`` of frame 0, gravity's frame); a slope is a
        tilted normal (``[sin(alpha), 0, cos(alpha)]``).
    height : number or expression, optional
        ``normal . p`` of its points (default 0).

    Raises
    ------
    DescriptionError
        ``key`` ``"ground:normal"`` or ``"ground:height"``: a normal that is
        not 3 values, or numbers that are not a unit vector.

    Examples
    --------
    >>> ground = Ground()
    >>> list(ground.normal), ground.height
    ([0, 0, 1], 0)
    >>> Ground([0, 0, 2])
    Traceback (most recent call last):
      ...
    kanerobot.errors.DescriptionError: the ground's normal [0, 0, 2] is not a unit vector (its length is 2): give the plane's unit normal in frame 0
    """

    normal: sympy.ImmutableMatrix = _UP
    height: sympy.Expr = sympy.S.Zero

    def __post_init__(self):
        try:
            normal = _vector(self.normal, 3, "normal", "the ground")
        except DescriptionError as exc:
            raise DescriptionError(str(exc), key="ground:normal") from None
        except TypeError:
            raise DescriptionError(f"normal of the ground needs 3 values, got {self.normal!r}", key="ground:normal") from None
        if all(v.is_number for v in normal):
            length = sympy.sqrt(sum(v**2 for v in normal))
            if abs(float(length) - 1) > 1e-9:
                raise DescriptionError(
                    f"the ground's normal {list(normal)} is not a unit vector (its length is {sympy.nsimplify(length)}): "
                    f"give the plane's unit normal in frame 0",
                    key="ground:normal",
                )
        object.__setattr__(self, "normal", normal)
        try:
            height = _expr(self.height, "height", "the ground")
        except DescriptionError as exc:
            raise DescriptionError(str(exc), key="ground:height") from None
        object.__setattr__(self, "height", height)

    def subs(self, mapping):
        """A new ground with ``mapping`` ({Symbol: value}) applied to its normal and height."""
        return replace(self, normal=sympy.ImmutableMatrix(self.normal.xreplace(mapping)), height=self.height.xreplace(mapping))


@dataclass(frozen=True)
class Base:
    """Placement and motion of the base frame 0.

    ``Z`` is the 4x4 transform of frame 0 in the world frame (SYMORO's fT0);
    ``W0, WP0, V0, VP0`` its angular and linear velocity and acceleration and
    ``G`` the gravity acceleration, all 3x1 in frame 0.
    """

    Z: sympy.ImmutableMatrix = field(default_factory=lambda: sympy.ImmutableMatrix(sympy.eye(4)))
    W0: sympy.ImmutableMatrix = field(default_factory=lambda: sympy.ImmutableMatrix([0, 0, 0]))
    WP0: sympy.ImmutableMatrix = field(default_factory=lambda: sympy.ImmutableMatrix([0, 0, 0]))
    V0: sympy.ImmutableMatrix = field(default_factory=lambda: sympy.ImmutableMatrix([0, 0, 0]))
    VP0: sympy.ImmutableMatrix = field(default_factory=lambda: sympy.ImmutableMatrix([0, 0, 0]))
    G: sympy.ImmutableMatrix = field(default_factory=lambda: sympy.ImmutableMatrix([0, 0, symbol("G3")]))

    @classmethod
    def from_values(cls, **values):
        """Build from plain lists; ``Z`` may be 16 values (row by row) or 4x4."""
        kwargs = {}
        for key, value in values.items():
            if value is None:
                continue
            if key == "Z":
                flat = [v for row in value for v in row] if _is_nested(value) else list(value)
                kwargs["Z"] = sympy.ImmutableMatrix(4, 4, list(_vector(flat, 16, "Z", "the base")))
            elif key in BASE_VECTOR_NAMES:
                kwargs[key] = _vector(value, 3, key, "the base")
            else:
                raise DescriptionError(f"unknown base parameter {key!r}; known: Z, {', '.join(BASE_VECTOR_NAMES)}", key=key)
        return cls(**kwargs)


def _is_nested(value):
    return len(value) > 0 and isinstance(value[0], (list, tuple, sympy.MatrixBase))


def default_dynamics(label):
    """SYMORO's default symbols for link ``label``: XX3, ..., M3, IA3, FV3, FS3,
    and no external wrench."""
    values = {name: symbol(name + label) for name in INERTIAL_NAMES + FRICTION_NAMES}
    values.update({name: sympy.S.Zero for name in WRENCH_NAMES})
    return values


def default_joint_parameters(label):
    """QP3, QDP3, GAM3 symbols, a rigid joint (eta = 0) and stiffness k3."""
    return {
        "QP": symbol("QP" + label),
        "QDP": symbol("QDP" + label),
        "GAM": symbol("GAM" + label),
        "eta": sympy.S.Zero,
        "k": symbol("k" + label),
    }


def _frozen_values(values):
    """``{name: float}`` of ``values``, read-only; a value that is not a finite number is refused."""
    out = {}
    for name, value in dict(values or {}).items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if number != number or number in (float("inf"), float("-inf")):
            raise DescriptionError(f"value of {name} is {value!r}: values must be finite numbers", key="values", label=str(name))
        out[str(name)] = number
    return MappingProxyType(out)


def _frozen_limits(limits, labels):
    """``{label: JointLimits}`` of ``limits``, read-only; a label that is no joint, or a lower above its upper, is refused."""
    out = {}
    for label, item in dict(limits or {}).items():
        label = str(label)
        if label not in labels:
            raise DescriptionError(f"limits given for {label!r}, which is not a moving joint of the robot", key="limits", label=label)
        item = JointLimits(*item) if not isinstance(item, JointLimits) else item
        if item.lower is not None and item.upper is not None and item.lower > item.upper:
            raise DescriptionError(
                f"joint {label}: lower limit {item.lower:g} > upper limit {item.upper:g}: give lower <= upper",
                key="limits",
                label=label,
            )
        out[label] = item
    return MappingProxyType(out)


class MimicJoint(NamedTuple):
    """A joint whose variable follows others': ``q_joint = multiplier q_leader + sum k_i q_i + offset``.

    All are joints of one speed (revolute or prismatic); the leaders move on
    their own (a mimic of a mimic is resolved by :meth:`Robot.create` into a
    mimic of the independent joints at the end of the chain).  ``more`` holds
    further ``(leader, multiplier)`` terms: a linear coupling of several
    joints (an MJCF fixed-tendon equality) is one joint that follows all the
    others.  ``multiplier``, ``offset`` and the terms' multipliers are
    expressions (numbers, or symbols bound with the other parameters); the
    offset fixes the configuration, not the speeds.

    Examples
    --------
    >>> MimicJoint("finger2", "finger1", -1, 0)
    MimicJoint(joint='finger2', leader='finger1', multiplier=-1, offset=0, more=())
    >>> MimicJoint("ankle", "hip", -1, 0, (("knee", -1),)).terms
    (('hip', -1), ('knee', -1))
    """

    joint: str
    leader: str
    multiplier: sympy.Expr = sympy.S.One
    offset: sympy.Expr = sympy.S.Zero
    more: tuple[tuple[str, sympy.Expr], ...] = ()

    @property
    def terms(self):
        """Every ``(leader, multiplier)``: the first leader's, then :attr:`more`."""
        return ((self.leader, self.multiplier), *self.more)

    @property
    def leaders(self):
        """The labels of the joints it follows."""
        return tuple(leader for leader, _ in self.terms)


def _mimic_item(item):
    """``item`` as a :class:`MimicJoint` whose labels are strings and whose more terms are pairs."""
    if not isinstance(item, MimicJoint):
        try:
            item = MimicJoint(*item)
        except TypeError:
            raise DescriptionError(
                f"mimic {item!r}: give (joint, leader, multiplier, offset[, more])", key="mimic", label=None) from None
    joint = str(item.joint)
    try:
        more = tuple((str(leader), k) for leader, k in item.more)
    except (TypeError, ValueError):
        raise DescriptionError(
            f"mimic joint {joint}: more={item.more!r} must be (leader, multiplier) pairs", key="mimic", label=joint) from None
    return item._replace(joint=joint, leader=str(item.leader), more=more)


def _check_mimics(frames, mimics):
    """The couplings as :class:`MimicJoint` s, each mimic of a mimic resolved to the chain's independent joints.

    Raises
    ------
    DescriptionError
        ``key`` ``"mimic"`` and ``label`` the mimic joint, for an unknown
        label, a joint that is not of one speed, a joint mimicked twice or
        mimicking itself, a leader named twice in one coupling, and a cycle
        of mimics.
    """
    by_label = {f.label: f for f in frames}
    given: dict[str, MimicJoint] = {}
    for item in mimics:
        item = _mimic_item(item)
        joint = item.joint
        for role, label in (("mimic joint", joint), *(("its leader", leader) for leader in item.leaders)):
            frame = by_label.get(label)
            if frame is None or not frame.is_joint or frame.joint.nv != 1:
                what = "is not a frame of the robot" if frame is None else f"is {_kind(frame)}, not a joint of one speed"
                raise DescriptionError(
                    f"mimic joint {joint}: {role} {label} {what}; a mimic couples revolute or prismatic joints",
                    key="mimic", label=joint,
                )  # fmt: skip
        if joint in item.leaders:
            raise DescriptionError(f"mimic joint {joint} mimics itself: name another joint as its leader", key="mimic", label=joint)
        twice = next((leader for n, leader in enumerate(item.leaders) if leader in item.leaders[:n]), None)
        if twice is not None:
            raise DescriptionError(
                f"mimic joint {joint} names leader {twice} twice: give each leader once, multipliers summed", key="mimic", label=joint)
        if joint in given:
            raise DescriptionError(
                f"mimic joint {joint} mimics both {given[joint].leader} and {item.leader}: give it one coupling", key="mimic", label=joint)
        where = f"mimic joint {joint}"
        given[joint] = MimicJoint(joint, item.leader, _expr(item.multiplier, "multiplier", where), _expr(item.offset, "offset", where),
                                  tuple((leader, _expr(k, "multiplier", f"{where} (leader {leader})")) for leader, k in item.more))  # fmt: skip
    return tuple(_resolved(joint, given) for joint in given)


def _resolved(joint, given):
    """``given[joint]`` with every leader that is itself a mimic replaced by its own terms, down to independent joints."""
    terms: dict[str, sympy.Expr] = {}
    offset = sympy.S.Zero

    def expand(label, k, chain):
        nonlocal offset
        if label not in given:
            terms[label] = terms.get(label, sympy.S.Zero) + k
            return
        if label in chain:
            cycle = " -> ".join(chain[chain.index(label):] + [label])
            raise DescriptionError(f"mimic joints form a cycle ({cycle}): one of them must move on its own", key="mimic", label=joint)
        item = given[label]
        offset += k * item.offset
        for leader, multiplier in item.terms:
            expand(leader, k * multiplier, chain + [label])

    expand(joint, sympy.S.One, [])
    (leader, k), *more = terms.items()
    return MimicJoint(joint, leader, k, offset, tuple(more))


class JointLimits(NamedTuple):
    """A joint's limits as its source gives them (a URDF's ``<limit>``); None where not given.

    ``lower`` and ``upper`` are positions (rad or m), ``velocity`` the
    largest speed, ``effort`` the largest torque or force (absolute values).
    """

    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None


def _frozen_table(table):
    return MappingProxyType({label: MappingProxyType(dict(values)) for label, values in table.items()})


@dataclass(frozen=True, eq=True)
class Robot:
    """An immutable robot description.

    Parameters
    ----------
    name : str
    frames : sequence of Frame
        In an order where every antecedent comes before its successors.
    links : sequence of str, optional
        Labels of the frames that carry a link (with inertial parameters).
        Default: every joint frame that does not cut a loop; ``'0'`` is added
        for a floating base, and for a wheeled base without ``posture``.  With
        a ``posture``, the base 0 is the ground and the x and y frames are
        massless slides: they carry no link by default, the chassis being
        the link of the theta joint.
    dynamics : mapping label -> {name: value}, optional
        Dynamic parameters per link (:data:`DYNAMIC_NAMES`); names left out
        take SYMORO's default symbols (``XX3`` ...; external wrench 0).
    joint_parameters : mapping label -> {name: value}, optional
        Per joint: :data:`JOINT_NAMES`; defaults ``QP3``, ``QDP3``, ``GAM3``,
        rigid, ``k3``.
    base : Base, optional
    loops : sequence of (cut, closing) label pairs, optional
        Frame ``cut`` is the joint where a loop is opened; the fixed frame
        ``closing`` coincides with it when the loop is closed.
    floating, wheeled : bool
        Flags for a floating base and a wheeled mobile base.
    wheels : sequence of Wheel, optional
        The wheels of a wheeled robot (``wheeled`` must be true).
    posture : sequence of 3 str, optional
        Labels of the joints of the planar posture ``xi = [x y theta]`` of
        a wheeled robot: x on the base 0 and prismatic, y on x and prismatic,
        theta on y and revolute (their axes horizontal, horizontal and
        vertical: :mod:`kanerobot.dynamics.wheeled` checks it).  Required
        with wheels.
    values : mapping name -> float, optional
        Numbers for the robot's parameters as its source gives them (a URDF
        file's masses and lengths: :mod:`kanerobot.robot.urdf`), so that
        ``kr.derive(robot).numeric(robot.values)`` runs; a read-only
        mapping, empty by default (``.par`` and ``.toml`` files hold no
        values).  :meth:`subs` drops the names it binds.
    limits : mapping label -> JointLimits, optional
        Per moving joint, its position, velocity and effort limits as the
        source gives them (a URDF's ``<limit>``); read-only, empty by
        default.  :func:`kanerobot.simulate` enforces the positions (its
        ``limits``); :func:`kanerobot.simulation.joint_limits` makes events
        of them.
    mimics : sequence of MimicJoint or (joint, leader, multiplier, offset[, more]), optional
        Joints whose variable follows others' (``q_joint = multiplier
        q_leader + offset``, plus ``k q_i`` for each ``(i, k)`` of ``more``,
        :class:`MimicJoint`): still frames and joints of the tree (``q`` holds
        them), but not degrees of freedom; a mimic of a mimic is resolved to
        the independent joints at the end of the chain.
        :func:`kanerobot.derive` holds them as a constraint
        (:mod:`kanerobot.dynamics.mimic`).
    discs : sequence of Disc or (joint, radius[, tyre]), or mapping joint -> radius or (radius, tyre), optional
        Revolute joints whose links are discs rolling without slipping on
        ``ground`` (:class:`Disc`); :func:`kanerobot.derive` holds them as a
        constraint (:class:`~kanerobot.dynamics.rolling_disc.RollingDisc`).
        Not with ``wheeled`` (a planar chassis's wheels).
    ground : Ground, optional
        The plane the discs roll on (default: ``z = 0`` of frame 0).
    independent : sequence of str, optional
        The joints whose speeds are the independent ones under the discs'
        constraints (default: the models choose, the dependent speeds being
        the first joints from the root that the constraints determine).

    Examples
    --------
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> import sympy
    >>> th1, th2, L1 = sympy.symbols("th1 th2 L1")
    >>> arm = Robot.create("planar2", [
    ...     Frame("1", "0", 0, 1, KKPlacement(theta=th1)),
    ...     Frame("2", "1", 0, 1, KKPlacement(d=L1, theta=th2))])
    >>> arm.dof, arm.joint_labels, arm.structure
    (2, ('1', '2'), 'serial')
    """

    name: str
    frames: tuple[Frame, ...]
    links: tuple[str, ...]
    dynamics: Mapping[str, Mapping[str, sympy.Expr]]
    joint_parameters: Mapping[str, Mapping[str, sympy.Expr]]
    base: Base
    loops: tuple[tuple[str, str], ...]
    floating: bool = False
    wheeled: bool = False
    wheels: tuple[Wheel, ...] = ()
    posture: tuple[str, ...] = ()
    values: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    limits: Mapping[str, "JointLimits"] = field(default_factory=lambda: MappingProxyType({}))
    mimics: tuple[MimicJoint, ...] = ()
    discs: tuple[Disc, ...] = ()
    ground: Ground = Ground()
    independent: tuple[str, ...] = ()

    # ------------------------------------------------------------------ build
    @classmethod
    def create(
        cls,
        name,
        frames,
        links=None,
        dynamics=None,
        joint_parameters=None,
        base=None,
        loops=(),
        floating=False,
        wheeled=False,
        wheels=(),
        posture=None,
        values=None,
        limits=None,
        mimics=(),
        discs=(),
        ground=None,
        independent=(),
    ):
        """Validate the parts and build a robot, filling SYMORO's defaults."""
        frames = tuple(frames)
        loops = tuple((str(cut), str(closing)) for cut, closing in loops)
        _check_frames(frames)
        labels = {f.label for f in frames}
        for cut, closing in loops:
            _check_loop(frames, labels, cut, closing)
        discs, ground, independent = _check_discs(frames, discs, ground, independent, bool(wheeled))  # before the wheels: names both
        wheels = tuple(wheels or ())
        posture = tuple(str(label) for label in posture) if posture else ()
        _check_wheels(frames, wheels, posture, bool(wheeled))
        mimics = _check_mimics(frames, mimics or ())
        if links is None:
            links = default_links(frames, loops, floating, wheeled, posture)
        links = tuple(str(label) for label in links)
        _check_links(links, labels, loops)
        table = _dynamics_table(links, dynamics, frames)
        jtable = _joint_table(frames, joint_parameters)
        robot = cls(
            name=str(name),
            frames=frames,
            links=links,
            dynamics=_frozen_table(table),
            joint_parameters=_frozen_table(jtable),
            base=base if base is not None else Base(),
            loops=loops,
            floating=bool(floating),
            wheeled=bool(wheeled),
            wheels=wheels,
            posture=posture,
            values=_frozen_values(values),
            limits=_frozen_limits(limits, {f.label for f in frames if f.is_joint}),
            mimics=mimics,
            discs=discs,
            ground=ground,
            independent=independent,
        )
        for key, label, message in robot.state_leaks()[:1]:
            raise DescriptionError(message, key=key, label=label)
        return _rolling_root(robot)

    def __hash__(self):
        return hash((self.name, self.frames, self.links, self.loops))

    # -------------------------------------------------------------- structure
    @property
    def structure(self):
        """``'serial'``, ``'tree'`` or ``'closed loop'``."""
        if self.loops:
            return "closed loop"
        children: dict[str, int] = {}  # frame -> its joints
        for f in self.frames:
            if f.is_joint:
                children[f.antecedent] = children.get(f.antecedent, 0) + 1
        return "tree" if any(n > 1 for n in children.values()) else "serial"

    @property
    def labels(self):
        """Frame labels in order (the base ``'0'`` not included)."""
        return tuple(f.label for f in self.frames)

    @cached_property
    def stems(self):
        """``{label: stem}`` of every frame and of the base ``'0'``: the part of the symbol and program variable
        names built for the frame (``H<stem>``); the label itself for a label of letters, digits and ``_``."""
        return MappingProxyType({BASE: BASE, **{f.label: f.stem for f in self.frames}})

    def frame(self, label):
        """The :class:`Frame` called ``label``."""
        label = str(label)
        for f in self.frames:
            if f.label == label:
                return f
        known = ", ".join(self.labels)
        raise DescriptionError(f"robot {self.name} has no frame {label!r}; frames are 0, {known}", label=label)

    def antecedent(self, label):
        return self.frame(label).antecedent

    def children(self, label):
        """Labels of the frames whose antecedent is ``label``."""
        return tuple(f.label for f in self.frames if f.antecedent == str(label))

    def root_path(self, label):
        """Labels from the base (excluded) down to ``label`` (included)."""
        path = []
        label = str(label)
        while label != BASE:
            path.append(label)
            label = self.antecedent(label)
        return tuple(reversed(path))

    def path(self, start, end):
        """Frames between ``start`` and ``end`` through their common ancestor.

        Returns ``(up, down)``: ``up`` from ``start`` climbing to (excluding)
        the common ancestor, ``down`` from below the ancestor to ``end``.
        """
        a, b = self.root_path(start), self.root_path(end)
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return tuple(reversed(a[n:])), tuple(b[n:])

    @property
    def nl(self):
        """Number of moving links (the floating or wheeled base not counted)."""
        return sum(1 for label in self.links if label != BASE)

    @property
    def nj(self):
        """Number of joints (SYMORO's NJ), loop-cut joints included: the joint variables of ``q``.

        Not the degrees of freedom (:attr:`dof`) where a structure fixes or adds speeds.
        """
        return sum(1 for f in self.frames if f.is_joint)

    @property
    def nf(self):
        return len(self.frames)

    @property
    def joint_labels(self):
        """Labels of the joints (revolute and prismatic frames), in order."""
        return tuple(f.label for f in self.frames if f.is_joint)

    @property
    def cut_joints(self):
        return tuple(cut for cut, _ in self.loops)

    @property
    def active_joints(self):
        """Actuated joints: all joints of an open chain, mu = 1 ones in a loop."""
        if not self.loops:
            return self.joint_labels
        return tuple(f.label for f in self.frames if f.is_joint and f.mu == 1)

    @property
    def passive_joints(self):
        active = set(self.active_joints)
        return tuple(label for label in self.joint_labels if label not in active)

    @property
    def flexible_joints(self):
        """Labels of the flexible joints (``eta = 1``), in joint order."""
        return tuple(label for label in self.joint_labels if self.joint_parameters[label]["eta"] == 1)

    @cached_property
    def dof(self):
        """Degrees of freedom: the independent speeds, the size of the mass matrix of the robot's models.

        The joints of an open chain; the active joints of closed loops (the
        loops fix the others); 6 more for a floating base; one more for each
        flexible joint (its motor turns on its own); for a wheeled robot, its
        joints less the rank of its rolling constraints
        (:func:`kanerobot.rolling.mobility`: Krang on its two wheels has 22
        joints and 19 degrees of freedom); for rolling discs, the speeds less
        the rank of their rows (:func:`kanerobot.rolling.disc_mobility`); one
        less for each mimic joint.  ``kr.derive(robot)``'s state has
        ``dof`` speeds (``state_space.nv``), and ``q`` the :attr:`nj` joint
        variables (and a floating base's 7 coordinates).

        Raises
        ------
        KaneRobotError
            For a wheeled robot whose wheels do not roll
            (:func:`kanerobot.rolling.check_wheels`).
        """
        if self.wheeled and self.wheels:
            from kanerobot.rolling import mobility  # the rank of the rolling constraints: the wheels' kinematics

            return mobility(self)
        if self.discs:
            from kanerobot.rolling import disc_mobility  # the rank of the discs' rows: their kinematics

            return disc_mobility(self)
        speeds = sum(self.frame(label).joint.nv for label in self.active_joints) - len(self.mimics)
        return speeds + (6 if self.floating else 0) + len(self.flexible_joints)

    @property
    def mimic_joints(self):
        """Labels of the mimic joints (:attr:`mimics`), in joint order."""
        mimic = {item.joint for item in self.mimics}
        return tuple(label for label in self.joint_labels if label in mimic)

    @property
    def q(self):
        """Joint variables in joint order, as a sympy column (``nq`` of each joint: a ball joint's quaternion)."""
        return sympy.Matrix([q for label in self.joint_labels for q in self.frame(label).coordinates])

    @cached_property
    def joint_speeds(self):
        """``{label: (speeds...)}``: each joint's ``nv`` speeds, ``(QP<stem>,)`` for one (a customised 0 stays 0)."""
        return {label: self._rates(label, "QP", "speed_names") for label in self.joint_labels}

    @cached_property
    def joint_accelerations(self):
        """``{label: (accelerations...)}``: the time derivatives of :attr:`joint_speeds`, ``(QDP<stem>,)`` for one."""
        return {label: self._rates(label, "QDP", "acceleration_names") for label in self.joint_labels}

    def _rates(self, label, parameter, names):
        frame = self.frame(label)
        if frame.joint.nv == 1:
            return (self.joint_parameters[label][parameter],)
        return tuple(symbol(name) for name in getattr(frame.joint, names)(frame.stem))

    def split_rates(self, values, what="qd"):
        """``{label: (values...)}``: a flat sequence of the joints' speeds (or accelerations), joint by joint.

        Raises
        ------
        KaneRobotError
            When ``values`` does not hold one value per speed of the joints.
        """
        values = list(values)
        sizes = [self.frame(label).joint.nv for label in self.joint_labels]
        if len(values) != sum(sizes):
            joints_named = ", ".join(self.joint_labels)
            if any(n != 1 for n in sizes):
                joints_named += " (" + ", ".join(f"{n} for {label}" for label, n in zip(self.joint_labels, sizes) if n != 1) + ")"
            raise KaneRobotError(f"{what} needs {sum(sizes)} values (joints {joints_named}), got {len(values)}")
        out, start = {}, 0
        for label, n in zip(self.joint_labels, sizes):
            out[label] = tuple(sympy.sympify(v) for v in values[start:start + n])
            start += n
        return out

    @property
    def qd(self):
        """Joint velocities QP in joint order (a customised 0 stays 0), ``nv`` of each joint."""
        return sympy.Matrix([v for label in self.joint_labels for v in self.joint_speeds[label]])

    @property
    def qdd(self):
        """Joint accelerations QDP in joint order, ``nv`` of each joint."""
        return sympy.Matrix([v for label in self.joint_labels for v in self.joint_accelerations[label]])

    @property
    def joint_symbols(self):
        """The joint variables, as a set of symbols."""
        return {q for f in self.frames if f.is_joint for q in f.coordinates}

    @property
    def geometric_parameters(self):
        """Names of the free symbols of the geometry that are not joint variables."""
        names = set()
        for f in self.frames:
            names |= {str(s) for s in f.transform().free_symbols}
        for entry in self.base.Z:
            names |= {str(s) for s in entry.free_symbols}
        return sorted(names - {str(s) for s in self.joint_symbols})

    def parameter_order(self, names):
        """``names`` (strings or symbols) sorted in the robot's order, SYMORO's.

        Frame by frame (the base ``0`` first: its placement ``Z`` and, when
        floating, its link), each frame's geometric parameters in the
        columns of the table (``gamma b alpha d theta r``, or ``R0 P axis``),
        then its link's dynamic parameters (``XX XY XZ YY YZ ZZ MX MY MZ M IA
        FV FS``, the external wrench ``FX .. CZ``) and its joint's (``QP QDP
        GAM eta k``); then the wheels (radius, offset), the discs (radius,
        tyre) and their ground (normal, height), then the base's motion
        and gravity (``W0 WP0 V0 VP0 G``).  A symbol is placed where the
        description first names it; names the description does not hold come
        last, ``D3`` before ``D10``.  The one order of a model's parameter
        vector: every exported function and numeric model lists its
        parameters so.

        Parameters
        ----------
        names : iterable of str or sympy.Symbol

        Returns
        -------
        list
            The items of ``names``, in that order.

        Examples
        --------
        >>> import kanerobot as kr
        >>> kr.load(kr.frames_path("rx90")).parameter_order(["G3", "FS1", "RL4", "M10", "XX4", "M9", "D3", "ZZ1"])
        ['ZZ1', 'FS1', 'D3', 'RL4', 'XX4', 'G3', 'M9', 'M10']
        """
        rank = self._parameter_ranks
        return sorted(names, key=lambda name: (rank.get(str(name), len(rank)), natural_key(str(name))))

    @cached_property
    def _parameter_ranks(self):
        """``{symbol name: position}`` in the order :meth:`parameter_order` describes."""
        ranks: dict[str, int] = {}

        def add(values):
            for value in values:
                for s in sorted(sympy.sympify(0 if value is None else value).free_symbols, key=str):
                    ranks.setdefault(str(s), len(ranks))

        add(self.base.Z)
        for label in (BASE, *self.labels):
            if label != BASE:
                placement = self.frame(label).placement
                keys = ("gamma", "b", "alpha", "d", "theta", "r") if isinstance(placement, KKPlacement) else ("R0", "P", "axis", "q")
                for key in keys:
                    value = getattr(placement, key)
                    add(value if isinstance(value, sympy.MatrixBase) else [value])
            add(self.dynamics.get(label, {}).get(name) for name in DYNAMIC_NAMES)
            add(self.joint_parameters.get(label, {}).get(name) for name in JOINT_NAMES)
        add(v for wheel in self.wheels for v in (wheel.radius, wheel.offset))
        add(v for disc in self.discs for v in (disc.radius, disc.tyre))
        add([*self.ground.normal, self.ground.height])
        add(v for key in BASE_VECTOR_NAMES for v in getattr(self.base, key))
        return MappingProxyType(ranks)

    def state_leaks(self):
        """Places where the state of the models is used as a parameter.

        The joint variables (``robot.q``) and the rates ``QP``, ``QDP``,
        ``GAM`` are the state: a joint variable may appear only in its own
        frame's theta, r or q (with a constant offset), and each rate must
        be a name of its own or a number.  Anything else (``XX2 = th1``,
        ``d3 = QP1``, ``QP2 = th2``) would make a coordinate look like a
        parameter of the models, which would then ignore the state given to
        them.

        Returns
        -------
        list of tuple
            ``(key, label, message)`` per problem, ``key`` and ``label``
            pointing at the value at fault (the base's label is ``"0"``);
            empty for a sound robot.

        Examples
        --------
        >>> import kanerobot as kr
        >>> kr.load(kr.frames_path("rx90")).state_leaks()
        []
        """
        state = {f.q: f"the joint variable of frame {f.label}" for f in self.frames if f.is_joint}
        leaks = _rate_leaks(self, state)
        for value, key, label, what, own in _parameter_values(self):
            used = sorted((s for s in sympy.sympify(value).free_symbols if s in state and s != own), key=str)
            if used:
                leaks.append((key, label, f"{key.partition(':')[2] or key} of {what} uses {used[0]} ({state[used[0]]}): "
                                          f"a joint variable or rate belongs to its joint alone; give this value a "
                                          f"parameter of its own"))
        return leaks

    @property
    def has_offsets(self):
        """True when some joint reads ``variable + offset``."""
        return any(f.is_joint and f.offset != 0 for f in self.frames)

    def without_offsets(self):
        """The same robot with every joint offset dropped (theta = th2 for th2 - pi/2).

        Its configuration ``theta`` is this robot's ``q + offset``: algorithms
        that solve for the Khalil-Kleinfinger angles themselves (the inverse
        geometric model) work on it and subtract :meth:`offset_values`.

        Examples
        --------
        >>> import kanerobot as kr
        >>> from dataclasses import replace
        >>> arm = kr.load(kr.frames_path("planar2"))
        >>> f2 = arm.frame("2")
        >>> shifted = replace(arm, frames=(arm.frames[0], replace(f2, placement=replace(f2.placement, theta=f2.q - 1))))
        >>> shifted.has_offsets, shifted.without_offsets() == arm
        (True, True)
        """
        frames = []
        for f in self.frames:
            if f.is_joint and f.offset != 0:
                f = replace(f, placement=replace(f.placement, **{f.joint_key: f.q}))
            frames.append(f)
        return replace(self, frames=tuple(frames))

    def offset_values(self, values=None):
        """The offsets of the joints, in joint order, as floats.

        Parameters
        ----------
        values : dict, optional
            Values of the parameters an offset uses (``L0`` of ``r2 + L0``).

        Raises
        ------
        ParameterError
            When an offset uses a parameter missing from ``values``.
        """
        mapping = {symbol(str(k)): v for k, v in (values or {}).items()}
        out = []
        for label in self.joint_labels:
            offset = sympy.sympify(self.frame(label).offset).xreplace(mapping)
            if offset.free_symbols:
                missing = ", ".join(sorted(map(str, offset.free_symbols)))
                raise ParameterError(f"the offset of joint {label} of {self.name} needs a value for {missing}")
            out.append(float(offset))
        return out

    # ------------------------------------------------------------ derivation
    def subs(self, values):
        """A new robot with the symbols named in ``values`` replaced.

        ``values`` maps names (or symbols) to numbers or expressions.  Joint
        variables may not be substituted: they stay the robot's coordinates.
        """
        mapping = {}
        joint_names = {str(s) for s in self.joint_symbols}
        for key, value in values.items():
            name = str(key)
            if name in joint_names:
                raise DescriptionError(f"{name} is a joint variable of {self.name} and cannot be given a value", label=name)
            mapping[symbol(name)] = parse_expression(value)

        def sub(expr):
            return sympy.sympify(expr).xreplace(mapping)

        def sub_matrix(m):
            return sympy.ImmutableMatrix(m.xreplace(mapping))

        frames = []
        for f in self.frames:
            p = f.placement
            if isinstance(p, KKPlacement):
                p = KKPlacement(*(sub(getattr(p, k)) for k in KKPlacement.KEYS))
            else:
                p = GeneralPlacement(sub_matrix(p.R0), sub_matrix(p.P), sub_matrix(p.axis), p.q)
            frames.append(replace(f, placement=p))
        base = Base(**{k: sub_matrix(getattr(self.base, k)) for k in ("Z",) + BASE_VECTOR_NAMES})
        return Robot(
            name=self.name,
            frames=tuple(frames),
            links=self.links,
            dynamics=_frozen_table({l: {k: sub(v) for k, v in d.items()} for l, d in self.dynamics.items()}),
            joint_parameters=_frozen_table({l: {k: sub(v) for k, v in d.items()} for l, d in self.joint_parameters.items()}),
            base=base,
            loops=self.loops,
            floating=self.floating,
            wheeled=self.wheeled,
            wheels=tuple(wheel.subs(mapping) for wheel in self.wheels),
            posture=self.posture,
            values=MappingProxyType({k: v for k, v in self.values.items() if symbol(k) not in mapping}),
            limits=self.limits,
            mimics=tuple(MimicJoint(m.joint, m.leader, sub(m.multiplier), sub(m.offset), tuple((leader, sub(k)) for leader, k in m.more))
                         for m in self.mimics),
            discs=tuple(disc.subs(mapping) for disc in self.discs),
            ground=self.ground.subs(mapping),
            independent=self.independent,
        )

    def with_discs(self, discs, ground=None, independent=()):
        """The same robot with these rolling discs, their ground and independent speeds (as :meth:`create` takes them).

        What :func:`kanerobot.load` does with its ``discs=`` option: the
        discs of a URDF or MJCF robot declared beside its file.

        Examples
        --------
        >>> import kanerobot as kr
        >>> robot = kr.load(kr.frames_path("planar2")).with_discs([("2", "R")])
        >>> robot.discs, robot.ground.height
        ((Disc(joint='2', radius=R, tyre=0),), 0)
        """
        discs, ground, independent = _check_discs(self.frames, discs, ground, independent, self.wheeled)
        robot = replace(self, discs=discs, ground=ground, independent=independent)
        for key, label, message in robot.state_leaks()[:1]:
            raise DescriptionError(message, key=key, label=label)
        return _rolling_root(robot)

    @property
    def wheel_joints(self):
        """Labels of the wheels' joints, in the order of :attr:`wheels`."""
        return tuple(wheel.joint for wheel in self.wheels)

    def wheel(self, joint):
        """The :class:`Wheel` whose joint is ``joint``."""
        for wheel in self.wheels:
            if wheel.joint == str(joint):
                return wheel
        known = ", ".join(self.wheel_joints) or "none"
        raise DescriptionError(f"robot {self.name} has no wheel on joint {joint!r}; wheels: {known}", label=str(joint))

    def __repr__(self):
        return (
            f"<Robot {self.name!r}: {self.structure}, {self.nl} links, {self.nj} joints, "
            f"{self.nf} frames, {self._dof_text()} DOF>"
        )

    def _dof_text(self):
        """:attr:`dof` for the repr, which must not fail: ``?`` for wheels that do not roll."""
        try:
            return str(self.dof)
        except KaneRobotError:
            return "?"

    def _repr_html_(self):
        """How Jupyter shows a robot: its summary line, then its parameter tables as HTML tables."""
        head = html.escape(repr(self))
        return f"<div><p><code>{head}</code></p>\n{html_tables(self)}</div>"


def root_discs(robot):
    """The joints of ``robot``'s discs that hang on link 0 (through fixed frames only).

    Examples
    --------
    >>> import kanerobot as kr
    >>> root_discs(kr.load(kr.frames_path("planar2")).with_discs([("2", 0.1)]))
    ()
    """
    out = []
    for disc in robot.discs:
        path = robot.root_path(disc.joint)[:-1]
        if all(not robot.frame(label).is_joint for label in path):
            out.append(disc.joint)
    return tuple(out)


def _rolling_root(robot):
    """``robot``, refused when discs hang on a fixed base link: nothing would let them roll.

    (A floating base link on two coaxial discs gets the joints they leave it
    where a file is loaded: :func:`kanerobot.robot.axle_base.on_axle`.)
    """
    on_base = root_discs(robot) if robot.discs and not robot.floating else ()
    if on_base:
        raise DescriptionError(
            f"disc {on_base[0]} hangs on the base link 0, which is fixed: nothing lets it roll; load the robot with "
            f"floating=True (--floating on the command line): a base link on two coaxial discs then moves along the ground, "
            f"turns and pitches about their axle", key="disc:joint", label=on_base[0],
        )  # fmt: skip
    return robot


def default_links(frames, loops=(), floating=False, wheeled=False, posture=()):
    """The links :meth:`Robot.create` gives by default: every joint frame that
    does not cut a loop; the base for a floating robot and for a wheeled
    robot without posture; with a posture, not its x and y slides."""
    cut = {c for c, _ in loops}
    slides = set(posture[:2]) if posture else set()
    links = [f.label for f in frames if f.is_joint and f.label not in cut and f.label not in slides]
    return ([BASE] if floating or (wheeled and not posture) else []) + links


def _rate_leaks(robot, state):
    """Problems of the rates QP, QDP, GAM (a joint variable, an expression); each rate named is added to ``state``."""
    leaks = []
    for label in robot.joint_labels:
        for key in ("QP", "QDP", "GAM"):
            value = sympy.sympify(robot.joint_parameters[label][key])
            if isinstance(value, sympy.Symbol) and value in state:
                leaks.append((key, label, f"{key} of joint {label} is {value}, {state[value]}: give it its own name, e.g. {key}{label}"))
            elif isinstance(value, sympy.Symbol):
                state[value] = f"{key} of joint {label}"
            elif value.free_symbols:
                leaks.append((key, label, f"{key} of joint {label} is {value}: a joint velocity, acceleration or torque "
                                          f"is a name (e.g. {key}{label}) or a number"))
    return leaks


def parameter_symbol_names(robot):
    """Names of the symbols in ``robot``'s parameter values (frames, links, joints' eta and k, base, wheels).

    The joint variables are left out; the rates and torques (``QP``, ``GAM``
    ...) are not parameter values.

    >>> import kanerobot as kr
    >>> sorted(parameter_symbol_names(kr.load(kr.frames_path("planar2"))))[:4]
    ['FS1', 'FS2', 'FV1', 'FV2']
    """
    names = set()
    for value, *_ in _parameter_values(robot):
        names |= {str(s) for s in sympy.sympify(value).free_symbols}
    return names - {str(s) for s in robot.joint_symbols}


def _parameter_values(robot):
    """Yield ``(value, key, label, what, own)`` for every parameter value of ``robot`` that is not a rate.

    ``what`` names its owner in messages; ``own`` is the joint variable the
    value may use (a frame's theta, r or q), else None.
    """
    for f in robot.frames:
        p, what = f.placement, f"frame {f.label}"
        if f.is_kk:
            for key in KKPlacement.KEYS:
                yield getattr(p, key), key, f.label, what, f.q if key == f.joint_key else None
        else:
            for key in ("R0", "P", "axis"):
                for value in getattr(p, key):
                    yield value, key, f.label, what, None
            yield p.q, "q", f.label, what, f.q
    for label, values in robot.dynamics.items():
        for key, value in values.items():
            yield value, key, label, "the base" if label == BASE else f"link {label}", None
    for label, values in robot.joint_parameters.items():
        for key in ("eta", "k"):
            yield values[key], key, label, f"joint {label}", None
    for key in ("Z",) + BASE_VECTOR_NAMES:
        for value in getattr(robot.base, key):
            yield value, key, BASE, "the base", None
    for wheel in robot.wheels:
        yield wheel.radius, "wheel:radius", wheel.joint, f"wheel {wheel.joint}", None
        yield wheel.offset, "wheel:offset", wheel.joint, f"wheel {wheel.joint}", None
    yield from _disc_values(robot)
    for mimic in robot.mimics:
        yield mimic.multiplier, "mimic:multiplier", mimic.joint, f"mimic joint {mimic.joint}", None
        yield mimic.offset, "mimic:offset", mimic.joint, f"mimic joint {mimic.joint}", None
        for leader, k in mimic.more:
            yield k, "mimic:multiplier", mimic.joint, f"mimic joint {mimic.joint} (leader {leader})", None


def _disc_values(robot):
    """:func:`_parameter_values` of the discs (radius, tyre) and of their ground (normal, height)."""
    for disc in robot.discs:
        yield disc.radius, "disc:radius", disc.joint, f"disc {disc.joint}", None
        yield disc.tyre, "disc:tyre", disc.joint, f"disc {disc.joint}", None
    for value in robot.ground.normal:
        yield value, "ground:normal", None, "the ground", None
    yield robot.ground.height, "ground:height", None, "the ground", None


def _check_links(links, labels, loops):
    """Links are frames of the robot (or the base), listed once, none a frame closing a loop."""
    cut_labels = {cut for cut, _ in loops}
    closing_labels = {closing for _, closing in loops}
    for label in links:
        if label != BASE and label not in labels:
            raise DescriptionError(f"link {label} is not a frame of the robot", key="links", label=label)
        if label in cut_labels or label in closing_labels:
            raise DescriptionError(
                f"frame {label} closes a loop and cannot carry a link", key="links", label=label
            )
    if len(set(links)) != len(links):
        raise DescriptionError("a link is listed twice", key="links")


def _dynamics_table(links, dynamics, frames=()):
    """Per link, its dynamic parameters: SYMORO's defaults overridden by the known names given."""
    dynamics = dict(dynamics or {})
    table = {}
    stems = {f.label: f.stem for f in frames}
    for label in links:
        values = default_dynamics(stems.get(label, label))
        for key, value in dict(dynamics.pop(label, {})).items():
            if key not in DYNAMIC_NAMES:
                raise DescriptionError(
                    f"unknown dynamic parameter {key!r} for link {label}; known: {', '.join(DYNAMIC_NAMES)}",
                    key=key,
                    label=label,
                )
            values[key] = _expr(value, key, f"link {label}")
        table[label] = values
    if dynamics:
        extra = ", ".join(sorted(dynamics))
        raise DescriptionError(f"dynamic parameters given for {extra}, which are not links", key="dynamics", label=extra)
    return table


def _joint_table(frames, joint_parameters):
    """Per joint, its joint parameters: SYMORO's defaults overridden by the known names given, eta 0 or 1."""
    joint_parameters = dict(joint_parameters or {})
    jtable = {}
    for frame in frames:
        if not frame.is_joint:
            continue
        values = default_joint_parameters(frame.stem)
        for key, value in dict(joint_parameters.pop(frame.label, {})).items():
            if key not in JOINT_NAMES:
                raise DescriptionError(
                    f"unknown joint parameter {key!r} for joint {frame.label}; known: {', '.join(JOINT_NAMES)}",
                    key=key,
                    label=frame.label,
                )
            values[key] = _expr(value, key, f"joint {frame.label}")
        if values["eta"] not in (0, 1):
            raise DescriptionError(
                f"eta of joint {frame.label} must be 0 (rigid) or 1 (flexible), got {values['eta']}",
                key="eta",
                label=frame.label,
            )
        jtable[frame.label] = values
    if joint_parameters:
        extra = ", ".join(sorted(joint_parameters))
        raise DescriptionError(f"joint parameters given for {extra}, which are not joints", key="joint_parameters", label=extra)
    return jtable


def _check_wheels(frames, wheels, posture, wheeled):
    """The wheels and the posture name joints of the right types, in the right places."""
    by_label = {f.label: f for f in frames}
    if (wheels or posture) and not wheeled:
        what = "wheels" if wheels else "a posture"
        raise DescriptionError(
            f"the robot has {what} but is not wheeled: set wheeled = true (or remove them)",
            key="wheel:joint" if wheels else "posture",
            label=wheels[0].joint if wheels else None,
        )
    if posture:
        _check_posture(posture, by_label)
    if not wheels:
        if posture:
            raise DescriptionError("the robot has a posture but no wheels: describe its wheels", key="posture")
        return
    if not posture:
        raise DescriptionError(
            "a robot with wheels needs the posture of its planar base: posture = [x, y, theta], the labels of its "
            "x and y prismatic joints and its theta revolute joint",
            key="posture",
        )
    seen = _check_wheel_joints(wheels, posture, by_label)
    _check_steering(wheels, posture, by_label, seen)


def _disc_item(item):
    """``item`` (a :class:`Disc` or ``(joint, radius[, tyre])``) as a :class:`Disc`."""
    if isinstance(item, Disc):
        return item
    if isinstance(item, (tuple, list)) and len(item) in (2, 3):
        return Disc(*item)
    raise DescriptionError(f"disc {item!r}: give a Disc or (joint, radius[, tyre])", key="disc:joint")


def _check_discs(frames, discs, ground, independent, wheeled):
    """``(discs, ground, independent)`` checked: each disc a revolute joint of the tree, once; the independent speeds joints.

    Raises
    ------
    DescriptionError
        ``key`` ``"disc:joint"`` (``label`` the disc's joint), ``"ground"`` or
        ``"independent"`` (``label`` the joint at fault).
    """
    by_label = {f.label: f for f in frames}
    if isinstance(discs, Mapping):  # {joint: radius or (radius, tyre)}, as RollingDisc takes them
        discs = [(joint, *(value if isinstance(value, (tuple, list)) else (value,))) for joint, value in discs.items()]
    discs = tuple(_disc_item(item) for item in discs or ())
    ground = Ground() if ground is None else ground
    if not isinstance(ground, Ground):
        raise DescriptionError(f"ground {ground!r}: give a Ground(normal, height)", key="ground")
    independent = tuple(str(label) for label in independent or ())
    if not discs:
        if ground != Ground():
            raise DescriptionError("the robot has a ground but no discs to roll on it: declare its discs (or remove the ground)",
                                   key="ground")  # fmt: skip
        if independent:
            raise DescriptionError("independent speeds are chosen for the constraints of rolling discs, and the robot has no "
                                   "disc: declare its discs (or remove independent)", key="independent")  # fmt: skip
        return discs, ground, independent
    if wheeled:
        raise DescriptionError(
            f"disc {discs[0].joint}: the robot is wheeled (a planar chassis on wheels) and has discs: describe its wheels "
            f"either as wheels of the chassis or as discs, not both", key="disc:joint", label=discs[0].joint,
        )  # fmt: skip
    seen = set()
    for disc in discs:
        j = disc.joint
        frame = by_label.get(j)
        if frame is None:
            guess = difflib.get_close_matches(j, list(by_label), n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            raise DescriptionError(f"disc {j}: there is no joint {j}{hint}; joints: {', '.join(f.label for f in frames if f.is_joint)}",
                                   key="disc:joint", label=j)  # fmt: skip
        if not isinstance(frame.joint, joints.Revolute):
            raise DescriptionError(
                f"disc {j}: joint {j} is {_kind(frame)}, but a disc turns about its axle: name a revolute joint",
                key="disc:joint", label=j,
            )  # fmt: skip
        if j in seen:
            raise DescriptionError(f"disc {j} is declared twice: declare each disc once", key="disc:joint", label=j)
        seen.add(j)
    for n, label in enumerate(independent):
        frame = by_label.get(label)
        if frame is None or not frame.is_joint:
            what = "is not a frame of the robot" if frame is None else "is a fixed frame"
            raise DescriptionError(f"independent speed {label} {what}: name moving joints", key="independent", label=label)
        if label in independent[:n]:
            raise DescriptionError(f"independent speed {label} is named twice: name each joint once", key="independent", label=label)
    return discs, ground, independent


#: Joint types as error messages name them.


def _ancestors(by_label, label):
    """The labels of the frames from ``label``'s antecedent down to the base 0."""
    out = []
    while label != BASE:
        label = by_label[label].antecedent
        out.append(label)
    return out


def _kind(frame):
    """The joint type of ``frame`` in a message."""
    return "fixed (sigma = 2)" if not frame.is_joint else frame.joint.name


def _check_posture(posture, by_label):
    """The posture is 3 different joints x, y, theta: prismatic, prismatic, revolute, in a chain on the base."""
    if len(posture) != 3:
        raise DescriptionError(
            f"posture names {len(posture)} joints: give the 3 joints x, y, theta of the planar base", key="posture"
        )
    if len(set(posture)) != 3:
        raise DescriptionError(f"posture {list(posture)} names a joint twice: give 3 different joints x, y, theta", key="posture")
    roles = (("x", joints.Prismatic, BASE), ("y", joints.Prismatic, posture[0]), ("theta", joints.Revolute, posture[1]))
    for label, (role, kind, antecedent) in zip(posture, roles):
        if label not in by_label:
            known = ", ".join(by_label)
            raise DescriptionError(f"posture: {role} is joint {label}, which is not a frame (frames: {known})", key="posture", label=label)
        frame = by_label[label]
        if not isinstance(frame.joint, kind):
            raise DescriptionError(
                f"posture: {role} is joint {label}, which is {_kind(frame)}; x and y must be prismatic joints "
                f"and theta a revolute joint",
                key="posture",
                label=label,
            )
        if frame.antecedent != antecedent:
            where = "the base 0" if antecedent == BASE else f"frame {antecedent}"
            raise DescriptionError(
                f"posture: {role} (joint {label}) hangs on frame {frame.antecedent}, not on {where}: the planar base "
                f"is the chain 0 -> x -> y -> theta",
                key="posture",
                label=label,
            )


def _check_wheel_joints(wheels, posture, by_label):
    """Each wheel is a revolute joint carried by the chassis, described once, not of the posture; returns their labels."""
    seen = set()
    for wheel in wheels:
        if not isinstance(wheel, Wheel):
            raise DescriptionError(f"expected a Wheel, got {wheel!r}", key="wheel:joint")
        j = wheel.joint
        if j not in by_label:
            known = ", ".join(by_label)
            raise DescriptionError(f"wheel {j}: there is no frame {j} (frames: {known})", key="wheel:joint", label=j)
        frame = by_label[j]
        if not isinstance(frame.joint, joints.Revolute):
            raise DescriptionError(
                f"wheel {j}: joint {j} is {_kind(frame)}, but a wheel turns about its axle: make it a revolute joint (sigma = 0)",
                key="wheel:joint",
                label=j,
            )
        if j in seen:
            raise DescriptionError(f"wheel {j} is described twice", key="wheel:joint", label=j)
        seen.add(j)
        if j in posture:
            raise DescriptionError(f"wheel {j}: joint {j} is a joint of the posture, not a wheel", key="wheel:joint", label=j)
        if posture[2] not in _ancestors(by_label, j):
            raise DescriptionError(
                f"wheel {j} does not hang on the chassis (the theta frame {posture[2]}): it must be carried by the mobile base",
                key="wheel:joint",
                label=j,
            )
    return seen


def _check_steering(wheels, posture, by_label, seen):
    """Each steering joint is a revolute joint between the chassis and its wheel, steering that wheel alone."""
    steers: dict[str, str] = {}
    for wheel in wheels:
        j, steer = wheel.joint, wheel.steer
        if steer is None:
            continue
        if steer not in by_label:
            raise DescriptionError(f"wheel {j}: its steering joint {steer} is not a frame", key="wheel:steer", label=j)
        if not isinstance(by_label[steer].joint, joints.Revolute):
            raise DescriptionError(
                f"wheel {j}: its steering joint {steer} is {_kind(by_label[steer])}; it must be a revolute joint about the vertical",
                key="wheel:steer",
                label=j,
            )
        if steer in seen or steer in posture:
            what = "a wheel's joint" if steer in seen else "a joint of the posture"
            raise DescriptionError(f"wheel {j}: its steering joint {steer} is {what}", key="wheel:steer", label=j)
        if steer not in _ancestors(by_label, j) or posture[2] not in _ancestors(by_label, steer):
            raise DescriptionError(
                f"wheel {j}: its steering joint {steer} is not between the chassis (frame {posture[2]}) and the wheel: "
                f"the wheel's frame must descend from it",
                key="wheel:steer",
                label=j,
            )
        if steer in steers:
            raise DescriptionError(
                f"joint {steer} steers wheels {steers[steer]} and {j}: give each wheel its own steering joint",
                key="wheel:steer",
                label=j,
            )
        steers[steer] = j


def _check_frames(frames):
    """Frames have unique labels, their own joint variables, constant offsets, valid types and placements, in tree order."""
    seen = {BASE}
    for f in frames:
        if f.is_kk and f.joint.sigma is None:
            raise DescriptionError(
                f"frame {f.label} is {f.joint.name}: a Khalil-Kleinfinger frame's joint is revolute, prismatic or "
                f"fixed; give the frame a general placement (R0, P) for a {f.joint.name} joint",
                key="sigma",
                label=f.label,
            )
    by_label = _check_labels(frames)
    variables = _joint_variables(frames)
    _check_offsets(frames, variables)
    for f in frames:
        if f.mu not in (0, 1):
            raise DescriptionError(f"mu of frame {f.label} is {f.mu}: use 1 (active) or 0 (passive)", key="mu", label=f.label)
        if f.antecedent not in seen:
            raise DescriptionError(_antecedent_message(f, by_label), key="ant", label=f.label)
        seen.add(f.label)
        _check_placement(f)


def _check_labels(frames):
    """Every item is a Frame whose label is a name without whitespace, used once and not 0, and whose stem is
    letters, digits and ``_``, used once; returns frames by label."""
    by_label: dict[str, Frame] = {}
    by_stem = {BASE: BASE}
    for f in frames:
        if not isinstance(f, Frame):
            raise DescriptionError(f"expected a Frame, got {f!r}")
        if not isinstance(f.label, str) or not f.label or not f.label.isprintable() or any(c.isspace() for c in f.label):
            raise DescriptionError(
                f"frame label {f.label!r} must be a name: printable characters, no whitespace", key="label", label=str(f.label)
            )
        if f.label in by_label or f.label == BASE:
            raise DescriptionError(f"frame label {f.label} is used twice (0 is the base)", key="label", label=f.label)
        if not is_stem(f.stem):
            raise DescriptionError(
                f"stem {f.stem!r} of frame {f.label} must be ASCII letters, digits and '_' (it is part of symbol names)",
                key="label",
                label=f.label,
            )
        if f.stem in by_stem:
            other = by_stem[f.stem]
            raise DescriptionError(
                f"frames {other} and {f.label} have the same stem {f.stem!r} in symbol names (a label's characters other "
                f"than letters, digits and '_' become '_'): rename one, or give it a stem of its own, "
                f"Frame({f.label!r}, ..., stem={f.stem + '_2'!r})",
                key="label",
                label=f.label,
            )
        by_label[f.label] = f
        by_stem[f.stem] = f.label
    return by_label


def _joint_variables(frames):
    """Map each joint variable to its frame: a joint's theta or r holds one, of its own."""
    variables: dict[sympy.Symbol, str] = {}  # joint variable -> its frame
    for f in frames:
        if f.joint.nq == 1:
            key = f.joint_key
            if not sympy.sympify(f.joint_expression).free_symbols:
                kind, stem = f.joint.name, "th" if isinstance(f.joint, joints.Revolute) else key
                raise DescriptionError(
                    f"frame {f.label} is {kind} but its {key} is {f.joint_expression}: {key} holds the joint variable "
                    f"(e.g. {stem}{f.label}, or {stem}{f.label} + an offset)",
                    key=key,
                    label=f.label,
                )
            try:
                q = f.q
            except joints.JointVariableError as exc:
                raise DescriptionError(f"{key} of frame {f.label}: {exc}", key=key, label=f.label) from None
            if q in variables:
                raise DescriptionError(
                    f"frames {variables[q]} and {f.label} use the same joint variable {q}: give each joint its own",
                    key=key,
                    label=f.label,
                )
            variables[q] = f.label
    return variables


def _check_offsets(frames, variables):
    """A joint's offset uses no joint variable."""
    for f in frames:
        if f.joint.nq == 1:
            # An offset is a constant: another joint's variable in it would
            # couple two joints and hide a coordinate among the parameters.
            shared = sorted(str(s) for s in sympy.sympify(f.offset).free_symbols if s in variables)
            if shared:
                raise DescriptionError(
                    f"{f.joint_key} of frame {f.label} is {f.joint_expression}: its offset uses the joint variable "
                    f"{', '.join(shared)} of frame {variables[symbol(shared[0])]}; an offset must be a constant",
                    key=f.joint_key,
                    label=f.label,
                )


def _antecedent_message(frame, by_label):
    if frame.antecedent not in by_label:
        known = ", ".join(["0"] + list(by_label))
        return f"antecedent {frame.antecedent} of frame {frame.label} is not a frame (known: {known})"
    chain, label = [frame.label], frame.antecedent
    while label in by_label and label not in chain:
        chain.append(label)
        label = by_label[label].antecedent
    if label in chain:
        cycle = " -> ".join(chain[chain.index(label):] + [label])
        return f"antecedent cycle {cycle}: every frame must descend from the base 0"
    return (
        f"antecedent {frame.antecedent} of frame {frame.label} comes after it: list frames so that "
        f"a(j) comes before j (for numbered frames, a(j) < j)"
    )


def _check_placement(f):
    p = f.placement
    if isinstance(p, KKPlacement):
        if isinstance(f.joint, joints.Revolute) and p.theta == 0:
            raise DescriptionError(f"frame {f.label} is revolute but its theta is 0: theta holds the joint variable", key="theta", label=f.label)
        if isinstance(f.joint, joints.Prismatic) and p.r == 0:
            raise DescriptionError(f"frame {f.label} is prismatic but its r is 0: r holds the joint variable", key="r", label=f.label)
        return
    if not isinstance(p, GeneralPlacement):
        raise DescriptionError(f"frame {f.label}: placement must be KKPlacement or GeneralPlacement", label=f.label)
    if p.R0.shape != (3, 3) or p.P.shape != (3, 1) or p.axis.shape != (3, 1):
        raise DescriptionError(f"frame {f.label}: R0 must be 3x3, P and axis 3x1", key="R0", label=f.label)
    norm = _unit_residual(p.axis) if f.is_joint else None
    if norm is not None:
        raise DescriptionError(
            f"axis of frame {f.label} is {list(p.axis)}, not a unit vector (|e|^2 - 1 = {norm}): normalise it",
            key="axis",
            label=f.label,
        )
    if any(e.is_number and not e.is_real for e in list(p.R0) + list(p.P) + list(p.axis)):
        raise DescriptionError(f"frame {f.label}: R0, P and axis must be real", key="R0", label=f.label)
    if all(e.is_number for e in p.R0):
        R = sympy.Matrix(p.R0)
        ortho = max(abs(float(v)) for v in (R.T * R - sympy.eye(3)))
        if ortho > 1e-9 or abs(float(R.det()) - 1) > 1e-9:
            raise DescriptionError(
                f"R0 of frame {f.label} is not a rotation (orthonormal with det +1): check its rows and signs",
                key="R0",
                label=f.label,
            )


def _unit_residual(axis):
    """``|axis|^2 - 1`` where it is not 0 (None when ``axis`` is a unit vector).

    Tested numerically, at three points of the axis's symbols when it has
    any: ``sympy.simplify`` could run for hours on a large expression written
    in a file (``(a+b+c+d+e+f)**64``).
    """
    residual = sum(e**2 for e in axis) - 1
    symbols = sorted(residual.free_symbols, key=str)
    for point in ((0.3, 0.7), (1.1, -0.4), (-0.6, 0.2))[: 3 if symbols else 1]:
        values = {s: sympy.Float(point[n % 2] + 0.01 * n) for n, s in enumerate(symbols)}
        value = residual.xreplace(values).evalf(15)
        if not (value.is_number and abs(value) < 1e-9):
            return residual if not symbols else f"{value} at {', '.join(f'{s} = {v}' for s, v in values.items())}"
    return None


def _check_loop(frames, labels, cut, closing):
    by_label = {f.label: f for f in frames}
    if cut not in labels or closing not in labels:
        missing = cut if cut not in labels else closing
        raise DescriptionError(
            f"loop ({cut}, {closing}) does not close: frame {missing} does not exist", key="loops", label=missing
        )
    if not by_label[cut].is_joint:
        raise DescriptionError(f"loop ({cut}, {closing}): the cut frame {cut} must be a joint (sigma 0 or 1)", key="sigma", label=cut)
    if by_label[closing].is_joint:
        raise DescriptionError(
            f"loop ({cut}, {closing}) does not close: the closing frame {closing} must be fixed (sigma = 2)",
            key="sigma",
            label=closing,
        )
    if by_label[cut].antecedent == by_label[closing].antecedent:
        raise DescriptionError(
            f"loop ({cut}, {closing}) does not close: frames {cut} and {closing} hang on the same frame "
            f"{by_label[cut].antecedent}; the closing frame must be on the other link of the cut joint",
            key="ant",
            label=closing,
        )
