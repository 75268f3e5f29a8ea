"""Robots from MJCF files (MuJoCo's ``.xml``): ``kr.load("robot.xml")``.

An MJCF ``<worldbody>`` is a tree of bodies, each placed in its parent by
``pos`` and an orientation (``quat`` w x y z, ``euler``, ``axisangle``,
``xyaxes`` or ``zaxis``, in the units of ``<compiler angle eulerseq>``:
degrees and ``"xyz"`` by default, as MuJoCo), moved by its joints.  It is read
into a :class:`~kanerobot.robot.description.Robot` of general frames
(:class:`~kanerobot.robot.description.GeneralPlacement`), as MuJoCo's
``mj_kinematics`` places the bodies:

- each joint is a frame labelled by the joint's name (an unnamed joint is
  ``joint<i>``, ``i`` its MuJoCo index): ``hinge`` a revolute joint about
  ``axis`` through ``pos``, ``slide`` a prismatic joint along ``axis``,
  ``ball`` a spherical joint about ``pos`` (MuJoCo's ``qpos`` w x y z is
  our x y z w), each in the body's axes as the joints before it in the same
  body left them (several joints in one body are a chain of massless
  frames, the last one carrying the body); q is MuJoCo's ``qpos`` (a
  joint's ``ref``, where the body is as written, is folded into its
  placement);
- ``free`` (or ``<freejoint>``) on a child of the world body makes the robot
  floating: that body is link 0 and the free joint the free flyer (our base
  speeds are the velocity of the body's origin and its angular velocity, both
  in the body's frame; MuJoCo's linear velocity is in the world frame); the
  other children of the world body are then static scenery (bodies without
  joints), left out;
- a body without joints is a fixed frame welded to its parent, labelled by
  the body's name (``body<i>`` unnamed);
- a body's ``<inertial mass pos quat diaginertia|fullinertia>``, or its
  geoms' (``inertiafromgeom``: sphere, capsule, ellipsoid, cylinder, box
  and mesh with ``density`` (1000) or ``mass``, as MuJoCo computes them:
  a mesh's volume, centre and inertia by :mod:`kanerobot.robot.mesh` from
  its ``<asset><mesh>``, an STL or OBJ file found through ``<compiler meshdir
  assetdir strippath>`` in the model's folder (or ``vertex`` and
  ``face``), with its ``inertia`` mode, ``scale``, ``refpos`` and
  ``refquat``), become
  SYMORO's parameters about the frame origin (XX .. ZZ, MX MY MZ, M),
  symbols named after the frame's stem with the file's numbers in
  ``robot.values`` (as :mod:`kanerobot.robot.urdf` does); ``<compiler
  boundmass boundinertia settotalmass inertiagrouprange>`` apply;
- a joint's ``armature`` is ``IA``, ``damping`` ``FV``, ``frictionloss``
  ``FS``; its ``range`` (hinge and slide) and the ``forcerange`` or
  ``ctrlrange`` times ``gear`` of a motor driving it are kept in
  ``robot.limits``;
- ``<default>`` classes and ``childclass`` give the attributes not written;
  ``<frame>`` elements move what they hold; ``<include file>`` splices a
  file of the same folder (no URL, no path outside it);
- gravity is ``G = [G1, G2, G3]`` with ``<option gravity>``'s numbers
  (``0 0 -9.81`` by default).

Contacts, actuators, sensors, sites, cameras, lights, assets and the geoms'
shapes other than for inertia do not change the mass matrix or the bias
forces: they are ignored.  An active ``<equality><joint joint1 joint2
polycoef>`` (``q1 - ref1 = a0 + a1 (q2 - ref2)``, linear) is a mimic joint
(:class:`~kanerobot.robot.description.MimicJoint`, modelled by
:mod:`kanerobot.dynamics.mimic`); so is an active ``<equality><tendon
tendon1 tendon2 polycoef>`` on fixed tendons (``L1 - L1_0 = a0 + a1 (L2 -
L2_0)``, ``L = sum coef q``: a linear coupling of their joints), whose
dependent joint is the last joint of tendon1 with a coefficient that is
not 0, its leaders the others (``MimicJoint.more``); an equality on a
spatial tendon is refused.  An active ``<equality><connect>`` (body1's
point held on body2's: a ball joint outside the tree) closes a loop as
SYMORO+ does (``Robot.loops``, :mod:`kanerobot.dynamics.closed_loop`): cut
at a new massless ball joint (labelled by the equality's name, else
``connect<i>``, ``i`` its MuJoCo index; ``MjcfRobot.cut_joints``) at
body1's point, closed by a fixed frame ``<label>_closure`` on body2 where
that point is at qpos0 (``body1 anchor [body2]``) or at ``site2``
(``site1 site2``); the joints an actuator drives are the active ones, and
they must be as many speeds as the mechanism's degrees of freedom and
fix the others (else one error naming the equality and the joints).  A
loop on a free-floating robot, or beside joint couplings, is refused.
What would change the dynamics and is not read is refused with one line
naming the element: any other active ``<equality>`` (``weld``: a loop
cut at no joint, ``flex``), tendon damping, a height field or SDF geom,
or a primitive fitted to a mesh, that gives a body its mass, a mesh file
other than STL and OBJ, ``<composite>``, ``<replicate>``.  Joint springs
(``stiffness``), fluid forces (``<option
density viscosity>``) and gravity compensation are passive forces the model
has no place for: they are left out with one
:class:`~kanerobot.errors.KaneRobotWarning`.

Parsing is safe (:func:`kanerobot.robot.xmlfile.parse_xml`: no entity
expanded, no network); any mistake is one
:class:`~kanerobot.errors.RobotFileError` ``path:line: what and how to fix``.

Examples
--------
>>> text = '''<mujoco model="pendulum">
...   <worldbody>
...     <body name="arm" pos="0 0 1">
...       <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
...       <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
...     </body>
...   </worldbody>
... </mujoco>'''
>>> robot = mjcf_from_text(text).robot
>>> robot.joint_labels, robot.frame("hinge").q, robot.values["FVhinge"]
(('hinge',), q_hinge, 0.1)
>>> round(robot.values["Mhinge"], 6), round(robot.values["MZhinge"], 6), robot.values["G3"]
(4.45059, -1.112647, -9.81)
"""

import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np
import sympy

from kanerobot.dynamics.parameters import rigid_sum
from kanerobot.errors import DescriptionError, KaneRobotWarning, RobotFileError
from kanerobot.robot import joints
from kanerobot.robot.description import BASE, Base, Frame, GeneralPlacement, JointLimits, MimicJoint, Robot
from kanerobot.robot.expressions import EXACT, exact_number, snapped_entry, symbol
from kanerobot.robot.files import DEFAULT_GRAVITY, GRAVITY_NAMES, checked_gravity
from kanerobot.robot.joints.quaternion import quaternion_product, quaternion_to_rotation
from kanerobot.robot.mesh import MODES as MESH_MODES
from kanerobot.robot.mesh import MeshInertia, mesh_inertia, read_obj, read_stl
from kanerobot.robot.names import DYNAMIC_NAMES, StemChooser
from kanerobot.robot.urdf import RESERVED_SYMBOLS
from kanerobot.robot.xmlfile import Element, parse_xml

__all__ = ["MjcfRobot", "mjcf_from_text", "parse_mjcf", "read_mjcf"]

KIND = "an MJCF file"
#: MuJoCo's joint types, and ours.
JOINT_TYPES = {"hinge": joints.Revolute, "slide": joints.Prismatic, "ball": joints.Spherical, "free": joints.FreeFlyer}
#: The shapes whose mass and inertia MuJoCo computes from ``size`` (a mesh's needs its vertices).
SHAPES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")
#: The mesh files read, by extension and media type (MuJoCo's ``content_type``).
MESH_TYPES = {".stl": "model/stl", ".obj": "model/obj"}
MESH_READERS = {"model/stl": read_stl, "model/obj": read_obj}
#: MuJoCo's smallest mass of a moving body (``mjMINVAL``).
MINVAL = 1e-15
#: Elements of a body that do not change its dynamics (contacts, visuals, sensors' places).
_IGNORED_IN_BODY = {"site", "camera", "light", "plugin"}
#: Elements that make bodies or joints the reader does not build.
_REFUSED_IN_BODY = {
    "composite": "<composite> (bodies generated by MuJoCo) is not supported: write the bodies out",
    "flexcomp": "<flexcomp> (deformable bodies) is not supported",
    "replicate": "<replicate> is not supported: write the copies out",
    "attach": "<attach> (a model attached from another file) is not supported: write its bodies in the file",
}
#: Attributes of ``<compiler>`` with an effect on the dynamics that the reader refuses, and why.
_REFUSED_COMPILER = {
    "coordinate": ("global", "coordinate=\"global\" is not supported (MuJoCo 3 dropped it): write local coordinates"),
    "alignfree": ("true", "alignfree=\"true\" moves free bodies' frames onto their inertia: remove it"),
    "balanceinertia": ("true", "balanceinertia=\"true\" changes inertias that break the triangle inequality: fix them and remove it"),
}


@dataclass(frozen=True)
class MjcfRobot:
    """What :func:`parse_mjcf` reads: the robot and how it maps to MuJoCo's model.

    Attributes
    ----------
    robot : Robot
    joint_names : mapping label -> str
        The MuJoCo name of each joint frame's joint ('' for an unnamed one).
    joint_ids : mapping label -> int
        MuJoCo's index of each joint frame's joint (``model.jnt_qposadr[i]``
        and ``model.jnt_dofadr[i]`` locate its coordinates).
    free_joint : int or None
        MuJoCo's index of the free joint (the robot's free flyer), None for a fixed base.
    body_names : mapping label -> str
        The MuJoCo body each frame carries (``"0"``: the world, or the free body).
    cut_joints : mapping label -> int
        The ball joint cutting the loop of each ``<equality><connect>`` (no joint of MuJoCo's), and
        MuJoCo's index of that equality (``model.eq_data[i]``).
    """

    robot: Robot
    joint_names: Mapping[str, str]
    joint_ids: Mapping[str, int]
    free_joint: int | None = None
    body_names: Mapping[str, str] = field(default_factory=dict)
    cut_joints: Mapping[str, int] = field(default_factory=dict)


def read_mjcf(path: str | os.PathLike, gravity=None) -> Robot:
    """Read a robot from an MJCF file (see the module's notes for the mapping).

    Parameters
    ----------
    path : str or Path
    gravity : sequence of 3 floats, optional
        The values of ``G1 G2 G3`` (m/s^2, in the world frame, or in frame 0
        of a free-flying robot) instead of the file's ``<option gravity>``.

    Returns
    -------
    Robot

    Raises
    ------
    RobotFileError
        ``path:line: what and how to fix`` for anything wrong in the file.
    """
    parsed = parse_mjcf(path)
    if gravity is None:
        return parsed.robot
    values = {**parsed.robot.values, **dict(zip(GRAVITY_NAMES, checked_gravity(gravity, path)))}
    return replace(parsed.robot, values=MappingProxyType(values))


def parse_mjcf(path: str | os.PathLike) -> MjcfRobot:
    """:func:`read_mjcf`, with the joints' MuJoCo names and indices: an :class:`MjcfRobot`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RobotFileError(path, None, f"cannot read: {exc.strerror}") from None
    return _Reader(path, parse_xml(data, path, KIND)).result()


def mjcf_from_text(text: str | bytes, path: str | os.PathLike = "<string>") -> MjcfRobot:
    """:func:`parse_mjcf` of the text of an MJCF file; ``path`` names it in errors (includes are read next to it)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return _Reader(Path(path), parse_xml(data, path, KIND)).result()


# ------------------------------------------------------------------ maths
def _quaternion_matrix(q):
    """The rotation of a unit quaternion in MuJoCo's order (w, x, y, z) (:func:`quaternion_to_rotation` takes ours, x y z w)."""
    return quaternion_to_rotation(np.roll(q, -1))


def _quaternion_product(a, b):
    """``a * b`` in MuJoCo's order (w, x, y, z) (:func:`quaternion_product` takes ours)."""
    return np.roll(quaternion_product(np.roll(a, -1), np.roll(b, -1)), 1)


def _axis_angle(axis, angle):
    """The quaternion of a rotation by ``angle`` about the unit ``axis``."""
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * np.asarray(axis, dtype=float)])


def _z_to(vector):
    """The smallest rotation taking z onto ``vector`` (unit), as MuJoCo's ``mjuu_z2quat``."""
    axis = np.cross([0.0, 0.0, 1.0], vector)
    s = float(np.linalg.norm(axis))
    axis = np.array([1.0, 0.0, 0.0]) if s < 1e-10 else axis / s
    return _axis_angle(axis, math.atan2(s, vector[2]))


def _shape_inertia(kind, size, mass):
    """Principal moments of a solid ``kind`` of ``size`` and ``mass`` about its centre, in its axes (MuJoCo's formulas)."""
    if kind == "sphere":
        return np.full(3, 2 * mass * size[0] ** 2 / 5)
    if kind == "capsule":
        r, h = size[0], 2 * size[1]
        sphere = mass * 4 * r / (4 * r + 3 * h)  # the two hemispheres' share of the volume
        cylinder = mass - sphere
        side = cylinder * (3 * r * r + h * h) / 12 + 2 * sphere * r * r / 5 + sphere * h * (3 * r + 2 * h) / 8
        return np.array([side, side, cylinder * r * r / 2 + 2 * sphere * r * r / 5])
    if kind == "cylinder":
        r, h = size[0], 2 * size[1]
        side = mass * (3 * r * r + h * h) / 12
        return np.array([side, side, mass * r * r / 2])
    a, b, c = (x * x for x in size[:3])
    if kind == "ellipsoid":
        return mass / 5 * np.array([b + c, a + c, a + b])
    return mass / 3 * np.array([b + c, a + c, a + b])  # box of half-sizes size


def _volume(kind, size):
    if kind == "sphere":
        return 4 * math.pi * size[0] ** 3 / 3
    if kind == "capsule":
        return math.pi * size[0] ** 2 * (2 * size[1] + 4 * size[0] / 3)
    if kind == "cylinder":
        return math.pi * size[0] ** 2 * 2 * size[1]
    if kind == "ellipsoid":
        return 4 * math.pi * size[0] * size[1] * size[2] / 3
    return 8 * size[0] * size[1] * size[2]


#: Sizes each shape reads (the others of ``size`` are ignored).
_SIZES = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}


# ------------------------------------------------------------------ reader
@dataclass
class _Joint:
    element: Element
    name: str
    kind: str
    pos: np.ndarray
    axis: np.ndarray
    attrib: dict
    free_tag: bool = False  # a <freejoint> element
    index: int = -1


@dataclass
class _Body:
    element: Element
    name: str
    index: int
    parent: int
    pos: np.ndarray
    R: np.ndarray
    joints: list = field(default_factory=list)
    geoms: list = field(default_factory=list)  # (element, attributes, type, what, R, p, fromto length) in the body's frame
    inertial: Element | None = None
    children: list = field(default_factory=list)


class _Reader:
    """One MJCF document (its includes spliced in) into an :class:`MjcfRobot`."""

    def __init__(self, path, root):
        self.path = path
        self.folder = Path(path).resolve().parent
        if root.tag != "mujoco":
            self.fail(root, f"the document element is <{root.tag}>: an MJCF file is one <mujoco> element")
        self.root = self.expanded(root, [Path(path).resolve()])
        self.compiler = self.compiler_settings()
        self.defaults = self.default_classes()
        self.meshes = self.mesh_assets()
        self.mesh_inertias: dict[str, MeshInertia] = {}  # each mesh read and integrated once, when a geom needs it
        self.values: dict[str, float] = {}
        self.unmodelled: dict[str, list[str]] = {}  # what is left out -> the elements, for the one warning

    def fail(self, element, message):
        raise RobotFileError(element.path if element is not None else self.path, element.line if element is not None else None, message)

    # ---------------------------------------------------------- include
    def expanded(self, element, chain):
        """``element`` with each ``<include file>`` replaced by the children of that file's ``<mujoco>``."""
        children = []
        for child in element.children:
            if child.tag != "include":
                children.append(self.expanded(child, chain))
                continue
            target = self.include_path(child, chain)
            try:
                data = target.read_bytes()
            except OSError as exc:
                self.fail(child, f"<include file=\"{child.attrib['file']}\">: cannot read {target}: {exc.strerror}")
            included = parse_xml(data, target, KIND)
            if included.tag != "mujoco":
                self.fail(included, f"an included file holds one <mujoco> element, not <{included.tag}>")
            children.extend(self.expanded(included, chain + [target]).children)
        element.children = children
        return element

    def include_path(self, element, chain):
        """The file an ``<include>`` names: next to the model (in its folder or below), not a URL, not included twice."""
        name = self.attribute(element, "file", "an <include>")
        if "://" in name or name.startswith(("//", "\\\\")):
            self.fail(element, f"<include file=\"{name}\"> is a URL: nothing is fetched from the network; copy the file next to the model")
        if Path(name).is_absolute():
            self.fail(element, f"<include file=\"{name}\"> is an absolute path: give it relative to the model's folder {self.folder}")
        target = (self.folder / name).resolve()
        if not target.is_relative_to(self.folder):
            self.fail(element, f"<include file=\"{name}\"> is outside the model's folder {self.folder}: only files in it (or below) "
                               f"are read; copy the file next to the model")  # fmt: skip
        if target in chain:
            self.fail(element, f"<include file=\"{name}\"> includes {target.name} again (an include cycle): remove it")
        return target

    # ------------------------------------------------------- attributes
    def attribute(self, element, key, what):
        value = element.attrib.get(key)
        if value is None or not value.strip():
            self.fail(element, f"{what}: <{element.tag}> has no {key}=\"...\": give it")
        return value.strip()

    def numbers(self, element, attrib, key, counts, what, default=None):
        """The numbers of ``attrib[key]`` (``counts``: the numbers of numbers accepted), or ``default``."""
        text = attrib.get(key)
        if text is None:
            if default is None:
                self.fail(element, f"{what}: <{element.tag}> has no {key}=\"...\": give it")
            return np.array(default, dtype=float)
        counts = (counts,) if isinstance(counts, int) else counts
        try:
            values = [float(part) for part in text.split()]
        except ValueError:
            values = None
        if values is None or len(values) not in counts or not all(math.isfinite(x) for x in values):
            expected = " or ".join(map(str, counts))
            self.fail(element, f"{what}: {key}=\"{text}\" must be {expected} finite number{'s' * (max(counts) > 1)} separated by spaces")
        return np.array(values)

    def number(self, element, attrib, key, what, default):
        return float(self.numbers(element, attrib, key, 1, what, (default,))[0])

    def flag(self, element, attrib, key, what, default, choices=("false", "true")):
        value = attrib.get(key, default).strip()
        if value not in choices:
            self.fail(element, f"{what}: {key}=\"{value}\": use {' or '.join(map(repr, choices))}")
        return value

    def orientation(self, element, attrib, what):
        """The rotation (3x3) of ``quat``, ``axisangle``, ``euler``, ``xyaxes`` or ``zaxis`` (identity without)."""
        given = [key for key in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if key in attrib]
        if len(given) > 1:
            self.fail(element, f"{what}: {' and '.join(given)} both give its orientation: keep one")
        if not given:
            return np.eye(3)
        key = given[0]
        angle = math.pi / 180 if self.compiler["angle"] == "degree" else 1.0
        if key == "quat":
            q = self.numbers(element, attrib, key, 4, what)
            if np.linalg.norm(q) < MINVAL:
                self.fail(element, f"{what}: quat=\"{attrib[key]}\" is zero: give a rotation (w x y z), \"1 0 0 0\" for none")
            return _quaternion_matrix(q / np.linalg.norm(q))
        if key == "axisangle":
            x = self.numbers(element, attrib, key, 4, what)
            axis = self.unit(element, x[:3], f"{what}: the axis of axisangle=\"{attrib[key]}\"")
            return _quaternion_matrix(_axis_angle(axis, x[3] * angle))
        if key == "euler":
            x = self.numbers(element, attrib, key, 3, what) * angle
            q = np.array([1.0, 0.0, 0.0, 0.0])
            for letter, a in zip(self.compiler["eulerseq"], x):
                step = _axis_angle(np.eye(3)["xyz".index(letter.lower())], a)
                # lower case: axes that move with the body (post-multiplied); upper case: fixed axes
                q = _quaternion_product(q, step) if letter.islower() else _quaternion_product(step, q)
            return _quaternion_matrix(q)
        if key == "xyaxes":
            x = self.numbers(element, attrib, key, 6, what)
            ex = self.unit(element, x[:3], f"{what}: the x axis of xyaxes=\"{attrib[key]}\"")
            ey = self.unit(element, x[3:] - ex * (ex @ x[3:]), f"{what}: the y axis of xyaxes=\"{attrib[key]}\" (once orthogonal to x)")
            return np.column_stack([ex, ey, np.cross(ex, ey)])
        z = self.unit(element, self.numbers(element, attrib, key, 3, what), f"{what}: zaxis=\"{attrib[key]}\"")
        return _quaternion_matrix(_z_to(z))

    def unit(self, element, vector, what):
        norm = float(np.linalg.norm(vector))
        if norm < 1e-10:
            self.fail(element, f"{what} is zero: give a direction")
        return np.asarray(vector, dtype=float) / norm

    # -------------------------------------------------- compiler, defaults
    def compiler_settings(self):
        attrib: dict[str, str] = {}
        elements = self.root.findall("compiler")
        for element in elements:
            attrib.update(element.attrib)
        element = elements[-1] if elements else self.root
        out = {
            "angle": self.flag(element, attrib, "angle", "<compiler>", "degree", ("degree", "radian")),
            "eulerseq": attrib.get("eulerseq", "xyz").strip(),
            "inertiafromgeom": self.flag(element, attrib, "inertiafromgeom", "<compiler>", "auto", ("false", "true", "auto")),
            "autolimits": self.flag(element, attrib, "autolimits", "<compiler>", "true"),
            "boundmass": self.number(element, attrib, "boundmass", "<compiler>", 0.0),
            "boundinertia": self.number(element, attrib, "boundinertia", "<compiler>", 0.0),
            "settotalmass": self.number(element, attrib, "settotalmass", "<compiler>", -1.0),
            "inertiagrouprange": self.numbers(element, attrib, "inertiagrouprange", 2, "<compiler>", (0, 5)),
            "meshdir": attrib.get("meshdir", attrib.get("assetdir", "")).strip(),
            "strippath": self.flag(element, attrib, "strippath", "<compiler>", "false"),
        }
        seq = out["eulerseq"]
        if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
            self.fail(element, f"<compiler eulerseq=\"{seq}\">: give 3 letters of xyzXYZ (lower case: moving axes, upper case: fixed)")
        for key, (refused, why) in _REFUSED_COMPILER.items():
            if attrib.get(key, "").strip() == refused:
                self.fail(element, f"<compiler {why}")
        return out

    def default_classes(self):
        """``{class: {tag: attributes}}``, each class with what it inherits; the top one is ``main``."""
        classes: dict[str, dict[str, dict]] = {"main": {}}
        lines: dict[str, int] = {}

        def visit(element, name, inherited):
            own = {tag: dict(attrib) for tag, attrib in inherited.items()}
            for child in element.children:
                if child.tag != "default":
                    own[child.tag] = {**own.get(child.tag, {}), **child.attrib}
            classes[name] = own
            for child in element.findall("default"):
                child_name = self.attribute(child, "class", "a nested <default>")
                if child_name in classes:
                    self.fail(child, f"default class {child_name!r} is defined twice (first at line {lines[child_name]}): rename one")
                lines[child_name] = child.line
                visit(child, child_name, own)

        for element in self.root.findall("default"):
            visit(element, element.attrib.get("class", "main"), classes.get("main", {}))
        return classes

    def resolved(self, element, cls, tag=None):
        """The attributes of ``element`` with those of its class (``class``, else the enclosing ``childclass``);
        ``tag``: the element of ``<default>`` that gives them, if not ``element``'s own."""
        name = element.attrib.get("class", cls)
        if name not in self.defaults:
            self.fail(element, f"<{element.tag}> uses class {name!r}, which no <default class=...> defines (classes: "
                               f"{', '.join(sorted(self.defaults))})")  # fmt: skip
        return {**self.defaults[name].get(tag or element.tag, {}), **element.attrib}

    # ------------------------------------------------------------ bodies
    def bodies(self):
        """Every body in MuJoCo's order (depth first, the file's order), the world body first."""
        worldbody = [element for element in self.root.findall("worldbody")]
        if not worldbody:
            self.fail(self.root, "no <worldbody>: an MJCF robot is the bodies of <worldbody>")
        world = _Body(worldbody[0], "world", 0, -1, np.zeros(3), np.eye(3))
        out = [world]
        for element in worldbody:
            self.walk(element, world, np.eye(3), np.zeros(3), "main", out)
        joint_index = 0
        for body in out:  # MuJoCo numbers the joints body by body
            for joint in body.joints:
                joint.index = joint_index
                joint_index += 1
        return out

    def walk(self, container, body, R, p, cls, out):
        """What ``container`` (a body, a ``<frame>``, the world body) holds, placed by ``(R, p)`` in ``body``'s frame."""
        for child in container.children:
            tag = child.tag
            if tag == "body":
                self.body(child, body, R, p, cls, out)
            elif tag == "frame":
                attrib = child.attrib
                Rf = self.orientation(child, attrib, "a <frame>")
                pf = self.numbers(child, attrib, "pos", 3, "a <frame>", (0, 0, 0))
                self.walk(child, body, R @ Rf, p + R @ pf, attrib.get("childclass", cls), out)
            elif tag in ("joint", "freejoint"):
                self.joint(child, body, R, p, cls)
            elif tag == "geom":
                attrib = self.resolved(child, cls)
                self.geom_frame(child, attrib, body, R, p)
            elif tag == "inertial":
                if container is not body.element:
                    self.fail(child, "an <inertial> inside a <frame>: put it in its <body>")
                if body.index == 0:
                    continue  # the world's inertia never moves
                if body.inertial is not None:
                    self.fail(child, f"body {body.name!r} has two <inertial> (the first at line {body.inertial.line}): keep one")
                body.inertial = child
            elif tag in _REFUSED_IN_BODY:
                self.fail(child, _REFUSED_IN_BODY[tag])
            elif tag not in _IGNORED_IN_BODY:
                self.fail(child, f"unknown element <{tag}> in a body: an MJCF body holds body, frame, joint, freejoint, geom, "
                                 f"inertial, site, camera and light elements")  # fmt: skip

    def body(self, element, parent, R, p, cls, out):
        index = len(out)
        name = element.attrib.get("name", "").strip()
        what = f"body {name!r}" if name else f"body {index} (unnamed)"
        pos = self.numbers(element, element.attrib, "pos", 3, what, (0, 0, 0))
        own_R = self.orientation(element, element.attrib, what)
        body = _Body(element, name or f"body{index}", index, parent.index, p + R @ pos, R @ own_R)
        if self.number(element, element.attrib, "gravcomp", what, 0.0) != 0:
            self.unmodelled.setdefault("gravity compensation (gravcomp)", []).append(repr(body.name))
        out.append(body)
        parent.children.append(body)
        self.walk(element, body, np.eye(3), np.zeros(3), element.attrib.get("childclass", cls), out)

    def joint(self, element, body, R, p, cls):
        if element.tag == "freejoint":
            attrib, kind = dict(element.attrib), "free"
        else:
            attrib = self.resolved(element, cls)
            kind = attrib.get("type", "hinge").strip()
        name = attrib.get("name", "").strip()
        what = f"joint {name!r}" if name else f"a joint of body {body.name!r}"
        if kind not in JOINT_TYPES:
            self.fail(element, f"{what} has unknown type {kind!r}: use one of {', '.join(JOINT_TYPES)}")
        pos = p + R @ self.numbers(element, attrib, "pos", 3, what, (0, 0, 0))
        axis = np.array([0.0, 0.0, 1.0])
        if kind in ("hinge", "slide"):
            axis = R @ self.unit(element, self.numbers(element, attrib, "axis", 3, what, (0, 0, 1)), f"{what}: its axis")
        body.joints.append(_Joint(element, name, kind, pos, axis, attrib, element.tag == "freejoint"))

    def geom_frame(self, element, attrib, body, R, p):
        """Keep the geom with its placement in the body's frame (``fromto`` gives position, axis and length)."""
        kind = attrib.get("type", "sphere").strip()
        name = attrib.get("name", "").strip()
        what = f"geom {name!r}" if name else f"a geom of body {body.name!r}"
        if "fromto" in attrib:
            ends = self.numbers(element, attrib, "fromto", 6, what)
            length = float(np.linalg.norm(ends[3:] - ends[:3]))
            if length < 1e-10:
                self.fail(element, f"{what}: fromto=\"{attrib['fromto']}\" has two equal ends: give a segment")
            pos, Rg = (ends[:3] + ends[3:]) / 2, _quaternion_matrix(_z_to((ends[3:] - ends[:3]) / length))
        else:
            pos = self.numbers(element, attrib, "pos", 3, what, (0, 0, 0))
            Rg = self.orientation(element, attrib, what)
            length = None
        body.geoms.append((element, attrib, kind, what, R @ Rg, p + R @ pos, length))

    # ------------------------------------------------------------ inertia
    def body_inertia(self, body, static=False):
        """``(m, J_O, MS)`` of a body about its origin in its axes, or None without mass.  A ``static`` body
        (welded to the world) never moves: a geom whose inertia is not computed adds nothing to it."""
        mode = self.compiler["inertiafromgeom"]
        if body.inertial is not None and mode != "true":
            mass, centre, inertia = self.inertial(body)
        else:
            parts = []
            for element, attrib, kind, what, R, p, length in body.geoms if mode != "false" else ():
                part = self.geom_inertia(body, element, attrib, kind, what, R, p, length, static)
                if part is not None:
                    parts.append(part)
            mass, J, MS = rigid_sum(parts)
            centre = MS / mass if mass > 0 else np.zeros(3)
            inertia = J - mass * (centre @ centre * np.eye(3) - np.outer(centre, centre))
        if mass == 0 and self.compiler["boundmass"] == 0:
            return None
        return self.bounded(mass, centre, inertia)

    def inertial(self, body):
        """``(m, centre of mass, inertia about it)`` of a body's ``<inertial>``, in the body's axes."""
        element = body.inertial
        attrib = element.attrib
        what = f"the <inertial> of body {body.name!r}"
        (mass,) = self.numbers(element, attrib, "mass", 1, what)
        if mass < 0:
            self.fail(element, f"{what}: mass=\"{attrib['mass']}\" < 0: give a mass >= 0")
        pos = self.numbers(element, attrib, "pos", 3, what)
        if "fullinertia" in attrib and "diaginertia" in attrib:
            self.fail(element, f"{what}: diaginertia and fullinertia both given: keep one")
        if "fullinertia" in attrib:
            if any(key in attrib for key in ("quat", "axisangle", "euler", "xyaxes", "zaxis")):
                self.fail(element, f"{what}: fullinertia takes no orientation (it is in the body's axes): remove it")
            xx, yy, zz, xy, xz, yz = self.numbers(element, attrib, "fullinertia", 6, what)
            inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        elif "diaginertia" in attrib:
            R = self.orientation(element, attrib, what)
            inertia = R @ np.diag(self.numbers(element, attrib, "diaginertia", 3, what)) @ R.T
        else:
            self.fail(element, f"{what} has neither diaginertia=\"...\" nor fullinertia=\"...\": give the inertia about the centre of mass")
        return mass, pos, inertia

    def bounded(self, mass, centre, inertia):
        """``(m, J_O, MS)`` with ``<compiler boundmass boundinertia>`` applied to the mass and principal moments."""
        mass = max(mass, self.compiler["boundmass"])
        if self.compiler["boundinertia"] > 0:
            moments, axes = np.linalg.eigh(inertia)
            inertia = axes @ np.diag(np.maximum(moments, self.compiler["boundinertia"])) @ axes.T
        c = np.asarray(centre, dtype=float)
        return mass, inertia + mass * (c @ c * np.eye(3) - np.outer(c, c)), mass * c

    def geom_inertia(self, body, element, attrib, kind, what, R, p, length, static=False):
        """``(R, p, (m, J, 0))`` of a geom's solid, or None for one that adds no mass."""
        low, high = self.compiler["inertiagrouprange"]
        group = self.number(element, attrib, "group", what, 0.0)
        if not low <= group <= high:
            return None
        if "mass" in attrib:
            mass = self.number(element, attrib, "mass", what, 0.0)
        else:
            density = self.number(element, attrib, "density", what, 1000.0)
            if density == 0:
                return None
            mass = None
        if mass == 0:
            return None
        if kind not in SHAPES and static:
            return None
        if kind == "mesh":
            return self.mesh_geom_inertia(element, attrib, what, R, p, length, mass)
        if "mesh" in attrib:
            self.fail(element, f"{what}: a {kind} fitted to mesh=\"{attrib['mesh']}\" is not supported: give the geom its size "
                               f"(without mesh=...), or type=\"mesh\"")  # fmt: skip
        if kind not in SHAPES:
            self.fail(element, f"{what} is a {kind}, whose mass and inertia kanerobot does not compute: give body {body.name!r} an "
                               f"<inertial>, or this geom mass=\"0\" (or density=\"0\") if it is visual only")  # fmt: skip
        if self.flag(element, attrib, "shellinertia", what, "false") == "true":
            self.fail(element, f"{what}: shellinertia=\"true\" (a hollow shell) is not supported: give body {body.name!r} an <inertial>")
        size = self.numbers(element, attrib, "size", (1, 2, 3), what, (0, 0, 0))
        size = np.concatenate([size, np.zeros(3 - len(size))])
        if length is not None:
            size[1 if kind in ("capsule", "cylinder") else 2] = length / 2
            if kind == "sphere":
                self.fail(element, f"{what}: a sphere takes no fromto: give pos and size")
        if any(size[:_SIZES[kind]] <= 0):
            self.fail(element, f"{what}: size=\"{attrib.get('size', '')}\" must give {_SIZES[kind]} positive number"
                               f"{'s' * (_SIZES[kind] > 1)} for a {kind}")  # fmt: skip
        if mass is None:
            mass = self.number(element, attrib, "density", what, 1000.0) * _volume(kind, size)
        return R, p, (mass, np.diag(_shape_inertia(kind, size, mass)), np.zeros(3))

    # ------------------------------------------------------------- meshes
    def mesh_assets(self):
        """``{name: (element, attributes)}`` of the ``<asset><mesh>`` elements (a mesh without a name is named
        after its file, as MuJoCo does); nothing is read yet."""
        out: dict[str, tuple[Element, dict]] = {}
        for block in self.root.findall("asset"):
            for element in block.findall("mesh"):
                attrib = self.resolved(element, "main")
                name = attrib.get("name", "").strip() or Path(attrib.get("file", "").replace("\\", "/").strip()).stem
                if not name:
                    self.fail(element, "a <mesh> has neither name=\"...\" nor file=\"...\": name it")
                if name in out:
                    self.fail(element, f"<mesh name=\"{name}\"> is defined twice (first at line {out[name][0].line}): rename one")
                out[name] = (element, attrib)
        return out

    def mesh_geom_inertia(self, element, attrib, what, R, p, length, mass):
        """``(R, centre, (m, J, 0))`` of a mesh geom (its mesh's volume or area times its density, or its mass),
        placed as MuJoCo places it: the mesh's centre in the geom's frame."""
        if length is not None:
            self.fail(element, f"{what}: a mesh geom takes no fromto: give pos and an orientation")
        if self.flag(element, attrib, "shellinertia", what, "false") == "true":
            self.fail(element, f"{what}: shellinertia=\"true\" on a mesh geom: MuJoCo refuses it; write inertia=\"shell\" on its <mesh>")
        name = attrib.get("mesh", "").strip()
        if name not in self.meshes:
            known = ", ".join(sorted(self.meshes)[:8]) or "none"
            self.fail(element, f"{what}: mesh=\"{name}\" names no <mesh> of <asset> (meshes: {known}): give the name of one")
        if name not in self.mesh_inertias:
            self.mesh_inertias[name] = self.mesh_inertia(*self.meshes[name])
        mesh = self.mesh_inertias[name]
        if mass is None:
            mass = self.number(element, attrib, "density", what, 1000.0) * mesh.measure
        elif mesh.measure <= 1e-14:
            return None  # MuJoCo gives no mass to a geom whose mass is written but whose volume is below mjEPS
        return R, p + R @ mesh.centre, (mass, mass / mesh.measure * mesh.inertia, np.zeros(3))

    def mesh_inertia(self, element, attrib):
        """The volume or area, centre and inertia per unit density of a ``<mesh>`` (its file or its
        ``vertex`` and ``face``), moved by its ``refpos refquat scale``."""
        name = attrib.get("name", "").strip()
        what = f"<mesh{' name=' + repr(name) if name else ''}{' file=' + repr(attrib['file'].strip()) if 'file' in attrib else ''}>"
        for key in ("builtin", "plugin"):
            if key in attrib or element.find(key) is not None:
                self.fail(element, f"{what}: a {key} mesh (generated by MuJoCo) is not supported: give a file or vertex=\"...\"")
        mode = self.flag(element, attrib, "inertia", what, "legacy", MESH_MODES)
        scale = self.numbers(element, attrib, "scale", 3, what, (1, 1, 1))
        refpos = self.numbers(element, attrib, "refpos", 3, what, (0, 0, 0))
        refquat = self.numbers(element, attrib, "refquat", 4, what, (1, 0, 0, 0))
        if np.linalg.norm(refquat) < MINVAL:
            self.fail(element, f"{what}: refquat=\"{attrib['refquat']}\" is zero: give a rotation (w x y z)")
        if mode == "convex" and self.number(element, attrib, "maxhullvert", what, -1.0) != -1:
            self.fail(element, f"{what}: maxhullvert with inertia=\"convex\" (a hull qhull stops early) is not supported: remove maxhullvert")
        if "file" in attrib:
            if "vertex" in attrib:
                self.fail(element, f"{what}: both file and vertex give its vertices: keep one")
            vertices, faces = self.mesh_file(element, attrib, what)
        else:
            vertices, faces = self.inline_mesh(element, attrib, what)
        try:
            return mesh_inertia(vertices, faces, mode, scale, refpos, refquat)
        except DescriptionError as exc:
            self.fail(element, f"{what}: {exc}")

    def mesh_file(self, element, attrib, what):
        """The vertices and faces of a mesh's STL or OBJ file, found as MuJoCo finds it (``<compiler meshdir assetdir
        strippath>``), read only inside the model's folder."""
        name = attrib["file"].strip()
        if "://" in name or name.startswith(("//", "\\\\")):
            self.fail(element, f"{what} is a URL: nothing is fetched from the network; copy the file next to the model")
        if self.compiler["strippath"] == "true":
            name = name.replace("\\", "/").rsplit("/", 1)[-1]
        if Path(name).is_absolute():
            self.fail(element, f"{what} is an absolute path: give it relative to the model's folder {self.folder} (or its meshdir)")
        target = (self.folder / self.compiler["meshdir"] / name).resolve()
        if not target.is_relative_to(self.folder):
            self.fail(element, f"{what}: {target} is outside the model's folder {self.folder}: only files in it (or below) are "
                               f"read; copy the file next to the model")  # fmt: skip
        kind = attrib.get("content_type", "").strip() or MESH_TYPES.get(target.suffix.lower(), target.suffix)
        if kind not in MESH_READERS:
            self.fail(element, f"{what}: a {kind or 'file without extension'} mesh is not read (kanerobot reads STL and OBJ "
                               f"meshes): convert it to STL")  # fmt: skip
        if not target.is_file():
            self.fail(element, f"{what}: no such file {target}")
        try:
            data = target.read_bytes()
        except OSError as exc:
            self.fail(element, f"{what}: cannot read {target}: {exc.strerror}")
        try:
            return MESH_READERS[kind](data, target)
        except RobotFileError as exc:
            self.fail(element, f"{what}: {exc}")

    def inline_mesh(self, element, attrib, what):
        """A mesh's ``vertex`` (single precision, as MuJoCo keeps them) and ``face`` (None: the convex hull's)."""
        if "vertex" not in attrib:
            self.fail(element, f"{what} has neither file=\"...\" nor vertex=\"...\": give one")
        vertices = self.numbers(element, attrib, "vertex", self.count(element, attrib, "vertex", what, 12), what).reshape(-1, 3)
        vertices = vertices.astype(np.float32).astype(float)
        if "face" not in attrib:
            return vertices, None
        faces = self.numbers(element, attrib, "face", self.count(element, attrib, "face", what, 3), what)
        if np.any(faces != np.round(faces)) or np.any(faces < 0) or np.any(faces >= len(vertices)):
            self.fail(element, f"{what}: face=\"...\" holds a number that is not the index of a vertex (0 to {len(vertices) - 1})")
        return vertices, faces.astype(np.int64).reshape(-1, 3)

    def count(self, element, attrib, key, what, least):
        """The number of numbers in ``attrib[key]``: a multiple of 3, at least ``least``."""
        count = len(attrib[key].split())
        if count < least or count % 3:
            self.fail(element, f"{what}: {key}=\"...\" holds {count} numbers: give 3 per {'vertex' if key == 'vertex' else 'triangle'}"
                               f"{', at least 4 vertices' * (key == 'vertex')}")  # fmt: skip
        return count

    # ------------------------------------------------------------- build
    def result(self):
        bodies = self.bodies()
        couplings = self.equalities(bodies)
        self.refuse_tendons()
        option = self.option()
        self.values.update(zip(GRAVITY_NAMES, option))
        free = [body for body in bodies if any(joint.kind == "free" for joint in body.joints)]
        objects = self.free_objects(free)
        free = [body for body in free if body not in objects]
        for body in free:
            self.check_free(body, free)
        root = free[0] if free else bodies[0]
        static = {body.index for body in _welded(bodies[0])}
        inertias = {body.index: self.body_inertia(body, body.index in static) for body in bodies[1:]}
        self.check_masses(bodies, inertias)
        inertias = self.scaled(bodies, inertias)
        builder = _Builder(self, root, inertias, couplings)
        for body in root.children:
            builder.add(body)
        if self.connects:
            self.check_loops(root, couplings)
            builder.close_loops(self.connects, bodies)
        if root.index != 0:  # static scenery beside a free body never moves: it is no part of the robot
            for body in bodies[0].children:
                if body is not root and body not in objects and any(other.joints for other in _subtree(body)):
                    joint = next(other for other in _subtree(body) if other.joints).joints[0]
                    self.fail(joint.element, f"body {body.name!r} moves (its joints) beside the free body {root.name!r}: a robot "
                                             f"has one free-flying root or a fixed base; split the model")  # fmt: skip
        self.warn_unmodelled()
        return builder.robot(self.root.attrib.get("model", "").strip() or Path(self.path).stem)

    def option(self):
        gravity = np.array(DEFAULT_GRAVITY, dtype=float)
        for element in self.root.findall("option"):
            gravity = self.numbers(element, element.attrib, "gravity", 3, "<option>", gravity)
            density = self.number(element, element.attrib, "density", "<option>", 0.0)
            viscosity = self.number(element, element.attrib, "viscosity", "<option>", 0.0)
            if density or viscosity:
                self.unmodelled.setdefault("fluid forces (<option density viscosity>)", []).append(f"line {element.line}")
        return tuple(float(g) for g in gravity)

    def equalities(self, bodies):
        """The active ``<equality><joint>`` and ``<equality><tendon>`` couplings as ``(element, terms, a0)``:
        ``sum coef (q - ref) = a0`` over ``terms`` ``[(joint, coef), ...]``, the dependent joint first (a mimic
        joint, :func:`_mimic`); any other active equality is refused."""
        joints = {joint.name: joint for body in bodies for joint in body.joints if joint.name}
        out = []
        self.connects: list[_Connect] = []
        index = -1  # MuJoCo's index of the equality
        for block in self.root.findall("equality"):
            for element in block.children:
                index += 1
                attrib = self.resolved(element, "main", "equality")
                if self.flag(element, attrib, "active", f"<equality> <{element.tag}>", "true") != "true":
                    continue
                name = attrib.get("name", "").strip()
                what = f"<equality> <{element.tag}{' name=' + repr(name) if name else ''}>"
                if element.tag == "connect":
                    self.connects.append(self.connect(element, attrib, what, bodies, name or f"connect{index}", index))
                    continue
                if element.tag == "weld":
                    self.fail(element, f"{what} is not supported: a weld removes all 6 relative motions, and kanerobot cuts a loop at a "
                                       f"joint (a ball joint for a <connect>), not at a fixed one; put body2 in body1 without a joint if "
                                       f"it is rigid, or use a <connect>, or make it active=\"false\"")  # fmt: skip
                if element.tag not in ("joint", "tendon"):
                    self.fail(element, f"{what} is not supported (its constraint would change the dynamics; joint and fixed-tendon "
                                       f"couplings and connect loops are): remove it, or make it active=\"false\"")  # fmt: skip
                if element.tag == "joint":
                    out.append(self.joint_equality(element, attrib, what, joints))
                else:
                    out.append(self.tendon_equality(element, attrib, what, joints))
        return out

    def linear(self, element, attrib, what, second):
        """``a0, a1`` of ``polycoef``; refused if not linear while a second joint or tendon is named."""
        polycoef = self.numbers(element, attrib, "polycoef", 5, what, (0, 1, 0, 0, 0))
        if second and any(polycoef[2:]):
            self.fail(element, f"{what}: polycoef=\"{attrib.get('polycoef')}\" is not linear: a mimic joint is "
                               f"a linear coupling (a0 + a1 x); give the last three coefficients 0")  # fmt: skip
        return float(polycoef[0]), float(polycoef[1])

    def joint_equality(self, element, attrib, what, joints):
        """MuJoCo's ``q1 - ref1 = a0 + a1 (q2 - ref2)``: joint1 follows joint2."""
        coupled = []
        for key in ("joint1", "joint2"):
            joint_name = attrib.get(key, "").strip()
            if key == "joint2" and not joint_name:
                self.fail(element, f"{what} holds joint1 at a constant: lock the joint (remove it) instead, or give joint2")
            coupled.append(self.coupled_joint(element, f"{what}: {key}=\"{joint_name}\"", joint_name, joints))
        a0, a1 = self.linear(element, attrib, what, True)
        return element, [(coupled[0], 1.0), (coupled[1], -a1)], a0

    def coupled_joint(self, element, what, joint_name, joints):
        if joint_name not in joints:
            self.fail(element, f"{what} names no joint of the model")
        if joints[joint_name].kind not in ("hinge", "slide"):
            self.fail(element, f"{what} is a {joints[joint_name].kind} joint; a coupling takes hinge and slide joints")
        return joints[joint_name]

    def fixed_tendons(self, joints):
        """``{name: (element, [(joint, coef), ...])}`` of the ``<tendon><fixed>`` elements, ``{name: element}`` of the spatial ones."""
        fixed, spatial = {}, {}
        for block in self.root.findall("tendon"):
            for element in block.children:
                name = element.attrib.get("name", "").strip()
                if element.tag != "fixed":
                    spatial[name] = element
                    continue
                terms = []
                for child in element.children:
                    if child.tag != "joint":
                        continue
                    joint_name = child.attrib.get("joint", "").strip()
                    what = f"fixed tendon {name!r}: <joint joint=\"{joint_name}\">"
                    joint = self.coupled_joint(child, what, joint_name, joints)
                    terms.append((joint, self.number(child, child.attrib, "coef", what, math.nan)))
                    if math.isnan(terms[-1][1]):
                        self.fail(child, f"{what} has no coef=\"...\": give it")
                fixed[name] = (element, terms)
        return fixed, spatial

    def tendon_equality(self, element, attrib, what, joints):
        """MuJoCo's ``L1 - L1_0 = a0 + a1 (L2 - L2_0)`` (``= a0`` without tendon2), ``L = sum coef q`` of a fixed
        tendon and ``L_0`` its value at qpos0 (the refs): one linear coupling of their joints.  The dependent
        joint is the last joint of tendon1 whose coefficient in the coupling is not 0."""
        fixed, spatial = self.fixed_tendons(joints)
        tendons = []
        for key in ("tendon1", "tendon2"):
            tendon_name = attrib.get(key, "").strip()
            if key == "tendon2" and not tendon_name:
                break
            if tendon_name in spatial:
                self.fail(element, f"{what}: {key}=\"{tendon_name}\" is a spatial tendon (line {spatial[tendon_name].line}); "
                                   f"only fixed tendons (linear in the joints) are couplings: remove the equality")  # fmt: skip
            if tendon_name not in fixed:
                self.fail(element, f"{what}: {key}=\"{tendon_name}\" names no tendon of the model")
            tendons.append(fixed[tendon_name][1])
        a0, a1 = self.linear(element, attrib, what, len(tendons) > 1)
        coefs: dict[str, float] = {}
        by_name = {}
        for scale, terms in zip((1.0, -a1), tendons):
            for joint, coef in terms:
                coefs[joint.name] = coefs.get(joint.name, 0.0) + scale * coef
                by_name[joint.name] = joint
        moving = [joint for joint, _ in tendons[0] if coefs[joint.name] != 0]
        if not moving:
            self.fail(element, f"{what}: no joint of tendon1 moves the coupling (every coefficient is 0): remove the equality")
        dependent = moving[-1]
        terms = [(dependent, coefs[dependent.name])] + [(by_name[n], c) for n, c in coefs.items() if c != 0 and n != dependent.name]
        if len(terms) == 1:
            self.fail(element, f"{what} holds joint {dependent.name!r} at a constant: lock the joint (remove it) instead")
        return element, terms, a0

    def connect(self, element, attrib, what, bodies, name, index):
        """A ``<connect>``'s two bodies and points: ``body1 anchor [body2]`` (body2's point is where the anchor is at
        qpos0, the world without body2) or ``site1 site2`` (the sites' places, wherever they are at qpos0)."""
        named = {body.element.attrib.get("name", "").strip(): body for body in bodies[1:]}
        named.pop("", None)
        named["world"] = bodies[0]
        if "site1" in attrib or "site2" in attrib:
            mixed = [key for key in ("body1", "body2", "anchor") if key in attrib]
            if mixed:
                self.fail(element, f"{what} gives site1/site2 and {'/'.join(mixed)}: give site1 and site2, or body1 and anchor "
                                   f"(and body2)")  # fmt: skip
            sites = self.sites(bodies)
            ends = []
            for key in ("site1", "site2"):
                site = attrib.get(key, "").strip()
                if not site:
                    self.fail(element, f"{what} has no {key}=\"...\": give both sites (or body1 and anchor)")
                if site not in sites:
                    self.fail(element, f"{what}: {key}=\"{site}\" names no site of the model")
                ends.append(sites[site])
            return _Connect(element, what, name, index, ends[0][0], ends[1][0], ends[0][1], ends[1][1])
        ends = []
        for key in ("body1", "body2"):
            body = attrib.get(key, "world" if key == "body2" else "").strip()
            if not body:
                self.fail(element, f"{what} has no body1=\"...\": give body1 and anchor (or site1 and site2)")
            if body not in named:
                self.fail(element, f"{what}: {key}=\"{body}\" names no body of the model")
            ends.append(named[body])
        return _Connect(element, what, name, index, ends[0], ends[1], self.numbers(element, attrib, "anchor", 3, what), None)

    def sites(self, bodies):
        """``{name: (body, position in the body's frame)}`` of the named sites (``<frame>`` elements and classes applied)."""
        out = {}

        def visit(container, body, R, p, cls):
            for child in container.children:
                if child.tag == "frame":
                    Rf = self.orientation(child, child.attrib, "a <frame>")
                    pf = self.numbers(child, child.attrib, "pos", 3, "a <frame>", (0, 0, 0))
                    visit(child, body, R @ Rf, p + R @ pf, child.attrib.get("childclass", cls))
                elif child.tag == "site":
                    attrib = self.resolved(child, cls)
                    name = attrib.get("name", "").strip()
                    if name:
                        out[name] = (body, p + R @ self.numbers(child, attrib, "pos", 3, f"site {name!r}", (0, 0, 0)))

        classes = {0: "main"}
        for body in bodies:
            cls = body.element.attrib.get("childclass", classes.get(body.parent, "main")) if body.index else "main"
            classes[body.index] = cls
            visit(body.element, body, np.eye(3), np.zeros(3), cls)
        return out

    def check_loops(self, root, couplings):
        """Loops close on a fixed base without joint couplings (the models that compose them)."""
        connect = self.connects[0]
        if root.index != 0:
            self.fail(connect.element, f"{connect.what}: a loop on a free-floating robot (the free joint of body {root.name!r}) is not "
                                       f"supported: kanerobot's closed loops have a fixed base; remove the free joint or the connect")  # fmt: skip
        if couplings:
            self.fail(connect.element, f"{connect.what}: a loop and joint couplings (the equality at line {couplings[0][0].line}) in "
                                       f"one model are not supported: keep one kind")  # fmt: skip

    def refuse_tendons(self):
        for block in self.root.findall("tendon"):
            for element in block.children:
                attrib = self.resolved(element, "main", "tendon")
                what = f"tendon {attrib.get('name', '').strip()!r}" if attrib.get("name") else "a tendon"
                if self.number(element, attrib, "damping", what, 0.0) != 0:
                    self.fail(element, f"{what} has damping: tendon forces are not modelled; remove damping (a joint's damping is FV)")
                if self.number(element, attrib, "stiffness", what, 0.0) != 0:
                    self.unmodelled.setdefault("tendon springs (stiffness)", []).append(what)

    def free_objects(self, free):
        """The free bodies that are objects beside the robot (a ball to play with): a top-level free body with
        no joint below it, when another free body carries more bodies.  Without contacts their motion does
        not couple with the robot's, so they are left out, with one warning."""
        if len(free) < 2:
            return []
        robot = max(free, key=lambda body: len(_subtree(body)))
        objects = [body for body in free if len(_subtree(body)) < len(_subtree(robot)) and body.parent == 0
                   and not any(other.joints for other in _subtree(body) if other is not body)]  # fmt: skip
        if objects:
            names = ", ".join(f"{body.name or 'body ' + str(body.index)!r} (line {body.element.line})" for body in objects)
            warnings.warn(KaneRobotWarning(f"{self.path}: free bodies left out, objects beside the robot {robot.name!r} (without "
                                           f"contacts their motion does not couple with its): {names}"), stacklevel=4)  # fmt: skip
        return objects

    def check_free(self, body, free):
        joint = next(joint for joint in body.joints if joint.kind == "free")
        what = f"free joint {joint.name!r}" if joint.name else f"the free joint of body {body.name!r}"
        if body.parent != 0:
            self.fail(joint.element, f"{what} is not on a child of <worldbody>: only a top-level body can be free (the robot's "
                                     f"free-flying root)")  # fmt: skip
        if len(body.joints) > 1:
            self.fail(joint.element, f"{what}: body {body.name!r} has other joints besides its free joint: a free body has 6 degrees "
                                     f"of freedom, no more")  # fmt: skip
        if body is not free[0]:
            self.fail(joint.element, f"{what}: a second free body (the first is {free[0].name!r}, line {free[0].element.line}): "
                                     f"kanerobot's robot has one free-flying root; load one body per file")  # fmt: skip
        for key in ("armature", "damping", "frictionloss", "stiffness"):
            if self.number(joint.element, joint.attrib, key, what, 0.0) != 0:
                self.fail(joint.element, f"{what} has {key}: the free flyer has no rotor inertia, friction or spring; remove it")

    def check_masses(self, bodies, inertias):
        """Refuse a moving body without mass, nor bodies welded to it, as MuJoCo does."""
        for body in bodies[1:]:
            if not body.joints:
                continue
            if sum(inertias[b.index][0] for b in _welded(body) if inertias[b.index] is not None) < MINVAL:
                self.fail(body.element, f"body {body.name!r} moves (joint {body.joints[0].name or body.joints[0].index!r}) but has no mass, "
                                        f"nor have the bodies welded to it: MuJoCo refuses it (mass of moving bodies larger than "
                                        f"{MINVAL:g}); give it an <inertial> or a geom")  # fmt: skip

    def scaled(self, bodies, inertias):
        """``<compiler settotalmass>``: every body's mass and inertia scaled so that they add up to it."""
        target = self.compiler["settotalmass"]
        total = sum(item[0] for item in inertias.values() if item is not None)
        if target <= 0 or total <= 0:
            return inertias
        k = target / total
        return {index: None if item is None else (item[0] * k, item[1] * k, item[2] * k) for index, item in inertias.items()}

    def warn_unmodelled(self):
        if self.unmodelled:
            parts = "; ".join(f"{what} ({', '.join(where[:5])}{' ...' * (len(where) > 5)})" for what, where in self.unmodelled.items())
            warnings.warn(KaneRobotWarning(f"{self.path}: passive forces left out of the model (it has no place for them): {parts}"),
                          stacklevel=4)  # fmt: skip


@dataclass
class _Connect:
    """A ``<connect>``: body1's point ``point1`` (in its frame) held on body2's ``point2`` (None: where point1 is at qpos0)."""

    element: Element
    what: str
    name: str
    index: int  # MuJoCo's index of the equality
    body1: "_Body"
    body2: "_Body"
    point1: np.ndarray
    point2: np.ndarray | None


def _world_poses(bodies):
    """``{index: (R, p)}``: each body's axes and origin in the world at qpos0 (where the file places it)."""
    out = {0: (np.eye(3), np.zeros(3))}
    for body in bodies[1:]:
        R, p = out[body.parent]
        out[body.index] = (R @ body.R, p + R @ body.pos)
    return out


def _actuated(reader):
    """The names of the joints an actuator drives (``joint`` or ``jointinparent``)."""
    out = set()
    for block in reader.root.findall("actuator"):
        for element in block.children:
            attrib = reader.resolved(element, "main")
            out |= {attrib.get(key, "").strip() for key in ("joint", "jointinparent")}
    return out - {""}


def _welded(body):
    """``body`` and the bodies welded to it (no joint on the way)."""
    out, stack = [], [body]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(child for child in item.children if not child.joints)
    return out


def _subtree(body):
    out, stack = [], [body]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(item.children)
    return out


class _Builder:
    """The frames, links and values of the bodies hung from the root (the world, or the free body)."""

    def __init__(self, reader, root, inertias, couplings=()):
        self.reader = reader
        self.root = root
        self.inertias = inertias
        self.couplings = couplings
        self.frames: list[Frame] = []
        self.dynamics: dict[str, dict] = {}
        self.limits: dict[str, JointLimits] = {}
        self.joint_names: dict[str, str] = {}
        self.joint_ids: dict[str, int] = {}
        self.body_names = {BASE: root.name if root.index else "world"}
        self.taken = {BASE}
        self.stems = StemChooser(RESERVED_SYMBOLS)  # the URDF reader's rule: one for both
        self.anchor = {root.index: (BASE, np.zeros(3))}  # body -> (the frame that carries it, its origin in that frame)
        self.merged = [(np.eye(3), np.zeros(3), inertias.get(root.index))] if root.index else []  # link 0's parts
        self.rigid = {root.index: (np.eye(3), np.zeros(3))} if root.index else {}  # bodies fixed to the free body, in frame 0
        self.effort = _efforts(reader)
        self.loops: list[tuple[str, str]] = []
        self.cut_joints: dict[str, int] = {}

    def label(self, name):
        """A label no frame has: ``name`` (whitespace as ``_``: dm_control's body 'pinch site'), else ``name_2`` ..."""
        name = "_".join(name.split())
        label, n = name, 2
        while label in self.taken:
            label, n = f"{name}_{n}", n + 1
        self.taken.add(label)
        return label

    def stem(self, label):
        """The label's stem, unique, its symbols no other frame's (:class:`~kanerobot.robot.names.StemChooser`)."""
        return self.stems.stem(label)

    def parameter(self, name, value):
        self.reader.values[name] = float(value)
        return symbol(name)

    def length(self, name, value):
        """A length of a placement: a symbol with its value, a structural 0 for a 0 of the file."""
        return self.parameter(name, value) if abs(value) > EXACT else sympy.S.Zero

    def add(self, body):
        parent_label, origin = self.anchor[body.parent]
        R, o = body.R, origin + body.pos
        if not body.joints:  # a fixed frame, welded to its parent
            label = self.label(body.name)
            stem = self.stem(label)
            self.frames.append(self.frame(label, stem, parent_label, joints.Fixed(), R, o, np.array([0.0, 0.0, 1.0])))
            self.body_names[label] = body.name
            self.anchor[body.index] = (label, np.zeros(3))
            if body.parent in self.rigid:  # welded to the free body: part of link 0, no link of its own
                R_a, p_a = self.rigid[body.parent]
                self.rigid[body.index] = (R_a @ R, p_a + R_a @ o)
                self.merged.append((R_a @ R, p_a + R_a @ o, self.inertias[body.index]))
            elif self.inertias[body.index] is not None:
                self.dynamics[label] = self.link(stem, self.inertias[body.index], None)
        else:
            for k, joint in enumerate(body.joints):
                label = self.label(joint.name or f"joint{joint.index}")
                stem = self.stem(label)
                R0, P, after = self.joint_placement(joint, R, o)
                model = JOINT_TYPES[joint.kind]()
                self.frames.append(self.frame(label, stem, parent_label, model, R0, P, joint.axis))
                self.joint_names[label], self.joint_ids[label] = joint.name, joint.index
                self.body_names[label] = body.name
                if k + 1 < len(body.joints):  # a massless frame of the chain of the body's joints
                    self.dynamics[label] = self.link(stem, None, joint)
                else:  # the last one carries the body, its inertia moved to the joint's frame
                    inertia = self.inertias[body.index] or (0.0, np.zeros((3, 3)), np.zeros(3))
                    self.dynamics[label] = self.link(stem, rigid_sum([(np.eye(3), after, inertia)]), joint)
                self.add_limits(label, joint)
                parent_label, R, o = label, np.eye(3), after
            self.anchor[body.index] = (parent_label, o)
        for child in body.children:
            self.add(child)

    def joint_placement(self, joint, R, o):
        """``(R0, P, origin after)``: the frame of a joint whose body has rotation ``R`` and origin ``o`` in the
        antecedent, and where the body's origin is in the joint's frame (MuJoCo turns a body about the joint's ``pos``)."""
        degrees = math.pi / 180 if self.reader.compiler["angle"] == "degree" else 1.0
        ref = self.reader.number(joint.element, joint.attrib, "ref", "a joint", 0.0)
        axis, pos = joint.axis, joint.pos  # in the body's axes, which are the new frame's
        if joint.kind == "slide":
            return R, o - R @ axis * ref, np.zeros(3)  # q = qpos - ref: the body as written at qpos = ref
        R0 = R @ _quaternion_matrix(_axis_angle(axis, -ref * degrees)) if joint.kind == "hinge" and ref else R
        return R0, o + R @ pos, -pos

    def frame(self, label, stem, antecedent, model, R0, P, axis):
        placement = GeneralPlacement(
            [snapped_entry(x) for x in np.asarray(R0).flat],
            [self.length(f"P{xyz}{stem}", p) for xyz, p in zip("XYZ", P)],
            [snapped_entry(x) for x in axis],
            symbol("q_" + stem) if model.nq == 1 else 0,
        )
        return Frame(label, antecedent, model, 1, placement, stem)

    def link(self, stem, body, joint):
        """SYMORO's parameters of a frame's link: the ten inertial ones (structural zeros for a massless frame of a
        chain of joints), and the rotor inertia and friction of its joint."""
        out = dict.fromkeys(DYNAMIC_NAMES, sympy.S.Zero)
        if body is not None:
            mass, J, MS = body
            for (i, j), key in zip(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)), ("XX", "XY", "XZ", "YY", "YZ", "ZZ")):
                out[key] = self.parameter(key + stem, J[i, j])
            for k, key in enumerate(("MX", "MY", "MZ")):
                out[key] = self.parameter(key + stem, MS[k])
            out["M"] = self.parameter("M" + stem, mass)
        if joint is not None:
            what = f"joint {joint.name!r}" if joint.name else f"joint {joint.index}"
            for key, attribute in (("IA", "armature"), ("FV", "damping"), ("FS", "frictionloss")):
                value = self.reader.number(joint.element, joint.attrib, attribute, what, 0.0)
                if value < 0:
                    self.reader.fail(joint.element, f"{what}: {attribute}=\"{value:g}\" < 0: give a value >= 0")
                out[key] = self.parameter(key + stem, value)
            if self.reader.number(joint.element, joint.attrib, "stiffness", what, 0.0) != 0:
                self.reader.unmodelled.setdefault("joint springs (stiffness)", []).append(repr(joint.name or joint.index))
        return out

    def add_limits(self, label, joint):
        if joint.kind not in ("hinge", "slide"):
            return
        what = f"joint {joint.name!r}" if joint.name else f"joint {joint.index}"
        limited = self.reader.flag(joint.element, joint.attrib, "limited", what, "auto", ("false", "true", "auto"))
        lower = upper = None
        if limited == "true" or (limited == "auto" and self.reader.compiler["autolimits"] == "true" and "range" in joint.attrib):
            lower, upper = self.reader.numbers(joint.element, joint.attrib, "range", 2, what, (0, 0))
            if joint.kind == "hinge" and self.reader.compiler["angle"] == "degree":
                lower, upper = math.radians(lower), math.radians(upper)
            if lower > upper:
                self.reader.fail(joint.element, f"{what}: range=\"{joint.attrib['range']}\" has lower > upper: give lower <= upper")
        effort = self.effort.get(joint.name) if joint.name else None
        if lower is not None or effort is not None:
            self.limits[label] = JointLimits(None if lower is None else float(lower), None if upper is None else float(upper),
                                             None, effort)  # fmt: skip

    def mimics(self):
        """The joint couplings of the model's ``<equality><joint>`` and ``<equality><tendon>`` elements (:func:`_mimic`)."""
        return tuple(_mimic(self, *coupling) for coupling in self.couplings)

    def close_loops(self, connects, bodies):
        """Each ``<connect>`` a loop (SYMORO+'s): cut at a new massless ball joint at body1's point, closed by a fixed frame
        on body2 where that point is (the ball at its identity at qpos0 for body1 and anchor), the actuated joints active."""
        poses = _world_poses(bodies)
        for connect in connects:
            self.close_loop(connect, poses)
        self.activate(connects, bodies, poses)

    def moving(self, label):
        """The joint frame (or the base) that moves the frame ``label``: its link."""
        by_label = {frame.label: frame for frame in self.frames}
        while label != BASE and not by_label[label].is_joint:
            label = by_label[label].antecedent
        return label

    def close_loop(self, connect, poses):
        (label1, o1), (label2, o2) = self.anchor[connect.body1.index], self.anchor[connect.body2.index]
        if self.moving(label1) == self.moving(label2):
            self.reader.fail(connect.element, f"{connect.what}: bodies {connect.body1.name!r} and {connect.body2.name!r} move together "
                                              f"(no joint between them): the connect closes no loop; remove it")  # fmt: skip
        (R1, p1), (R2, p2) = poses[connect.body1.index], poses[connect.body2.index]
        point2 = connect.point2 if connect.point2 is not None else R2.T @ (p1 + R1 @ connect.point1 - p2)
        cut = self.label(connect.name)
        closing = self.label(f"{cut}_closure")
        z = np.array([0.0, 0.0, 1.0])
        self.frames.append(replace(self.frame(cut, self.stem(cut), label1, joints.Spherical(), np.eye(3), o1 + connect.point1, z), mu=0))
        self.frames.append(replace(self.frame(closing, self.stem(closing), label2, joints.Fixed(), R2.T @ R1, o2 + point2, z), mu=0))
        self.loops.append((cut, closing))
        self.cut_joints[cut] = connect.index

    def activate(self, connects, bodies, poses):
        """The joints driven by an actuator are the active ones: as many speeds as the mechanism's degrees of freedom
        (its joints' speeds less the rank of the loops' point constraints at qpos0), which must fix the others."""
        J, labels, columns = _point_constraints(self, connects, bodies, poses)
        actuated = _actuated(self.reader)
        active = [label for label in labels if self.joint_names.get(label) in actuated]
        active_columns = [c for label in active for c in columns[label]]
        passive_columns = [c for c in range(J.shape[1]) if c not in active_columns]
        rank = _rank(J)
        dof = J.shape[1] - rank
        where = connects[0].what if len(connects) == 1 else f"the loops ({', '.join(f'{c.what} line {c.element.line}' for c in connects)})"
        if len(active_columns) != dof:
            names = ", ".join(repr(self.joint_names[label]) for label in active) or "none"
            self.reader.fail(connects[0].element, f"{where}: the mechanism has {dof} degree(s) of freedom ({J.shape[1]} joint speeds, "
                                                  f"{rank} independent loop constraints) but the actuators drive {len(active_columns)} "
                                                  f"joint speed(s) ({names}): the active joints of a closed-loop robot are its "
                                                  f"actuated ones; drive {dof} of joints {', '.join(repr(self.joint_names[x]) for x in labels)} "
                                                  f"by a <motor joint=...>")  # fmt: skip
        if _rank(J[:, passive_columns]) < len(passive_columns):
            passive = [label for label in labels if label not in active]
            self.reader.fail(connects[0].element, f"{where}: the actuated joints {', '.join(repr(self.joint_names[x]) for x in active)} "
                                                  f"do not drive the mechanism: the passive joints "
                                                  f"{', '.join(repr(self.joint_names[x]) for x in passive)} are not determined by them "
                                                  f"at the model's configuration; actuate others")  # fmt: skip
        cut = {label for label, _ in self.loops}
        self.frames = [replace(frame, mu=int(frame.label in active)) if frame.is_joint and frame.label not in cut else frame
                       for frame in self.frames]  # fmt: skip

    def robot(self, name):
        reader = self.reader
        floating = self.root.index != 0
        if not floating and not any(frame.is_joint for frame in self.frames):
            reader.fail(reader.root, f"model {name!r} has no joint: nothing moves")
        dynamics = dict(self.dynamics)
        if floating:
            zero = rigid_sum(self.merged)
            dynamics = {BASE: self.link(BASE, zero, None), **dynamics}
            self.body_names[BASE] = self.root.name
        try:
            robot = Robot.create(name, self.frames, links=list(dynamics), dynamics=dynamics, floating=floating, values=reader.values,
                                 limits=self.limits, base=Base(G=sympy.ImmutableMatrix([symbol(g) for g in GRAVITY_NAMES])),
                                 mimics=self.mimics(), loops=self.loops)  # fmt: skip
        except DescriptionError as exc:
            raise RobotFileError(reader.path, None, str(exc)) from None
        free = next((joint.index for joint in self.root.joints), None) if floating else None
        return MjcfRobot(robot, MappingProxyType(self.joint_names), MappingProxyType(self.joint_ids), free, MappingProxyType(self.body_names),
                         MappingProxyType(self.cut_joints))  # fmt: skip


def _point_constraints(builder, connects, bodies, poses):
    """``(J, labels, columns)``: the loops' point constraints at qpos0 (3 rows per connect: the velocity of body1's point
    less body2's, in the world, from the joints between them), one column per speed of MuJoCo's joints (the ball joints'
    three about the world axes: the same rank); ``labels`` the joint frames, ``columns[label]`` their columns."""
    by_body = {body.index: body for body in bodies}
    labels = [frame.label for frame in builder.frames if frame.is_joint and frame.label not in builder.cut_joints]
    joint_of = {builder.joint_ids[label]: label for label in labels}
    columns, n = {}, 0
    for label in labels:
        width = 3 if isinstance(next(f for f in builder.frames if f.label == label).joint, joints.Spherical) else 1
        columns[label], n = list(range(n, n + width)), n + width
    J = np.zeros((3 * len(connects), n))
    for b, connect in enumerate(connects):
        R1, p1 = poses[connect.body1.index]
        R2, p2 = poses[connect.body2.index]
        x1 = p1 + R1 @ connect.point1
        x2 = x1 if connect.point2 is None else p2 + R2 @ connect.point2
        chain1, chain2 = _chain(by_body, connect.body1), _chain(by_body, connect.body2)
        common = {body.index for body in chain1} & {body.index for body in chain2}
        for sign, chain, x in ((1.0, chain1, x1), (-1.0, chain2, x2)):
            for body in chain:
                if body.index in common:
                    break  # the loop's root and what is above it move both points alike
                R, p = poses[body.index]
                for joint in body.joints:
                    c, a = p + R @ joint.pos, R @ joint.axis
                    cols = columns[joint_of[joint.index]]
                    if joint.kind == "hinge":
                        J[3 * b:3 * b + 3, cols[0]] += sign * np.cross(a, x - c)
                    elif joint.kind == "slide":
                        J[3 * b:3 * b + 3, cols[0]] += sign * a
                    else:
                        J[3 * b:3 * b + 3, cols] += sign * np.cross(np.eye(3), x - c).T
    return J, labels, columns


def _chain(by_body, body):
    """``body`` and its ancestors up to the world, in that order."""
    out = [body]
    while out[-1].index != 0:
        out.append(by_body[out[-1].parent])
    return out


def _rank(J, rtol=1e-9):
    if J.size == 0:
        return 0
    s = np.linalg.svd(J, compute_uv=False)
    return int(np.sum(s > rtol * max(1.0, float(s[0]))))


def _mimic(builder, element, terms, a0):
    """``MimicJoint`` of the coupling ``sum c_i (q_i - ref_i) = a0``, the dependent joint d first: our q is MuJoCo's
    qpos, so ``q_d = (a0 + sum c_i ref_i - sum_{i != d} c_i q_i) / c_d`` (refs of hinges in radians)."""
    degrees = math.pi / 180 if builder.reader.compiler["angle"] == "degree" else 1.0
    labels = {name: label for label, name in builder.joint_names.items()}
    (mimic, c_d), *leaders = terms
    constant = a0
    for joint, c in terms:
        constant += c * builder.reader.number(joint.element, joint.attrib, "ref", "a joint", 0.0) * (degrees if joint.kind == "hinge" else 1.0)
    (leader, c_l), *more = leaders
    return MimicJoint(labels[mimic.name], labels[leader.name], exact_number(-c_l / c_d), exact_number(constant / c_d),
                      tuple((labels[joint.name], exact_number(-c / c_d)) for joint, c in more))


def _efforts(reader):
    """``{joint name: largest torque or force}`` of the actuators that drive one joint: a joint's
    ``actuatorfrcrange``, else an actuator's ``forcerange``, else a motor's ``ctrlrange`` times its gear."""
    out: dict[str, float] = {}
    for block in reader.root.findall("actuator"):
        for element in block.children:
            attrib = reader.resolved(element, "main")
            joint = attrib.get("joint", "").strip()
            if not joint:
                continue
            what = f"actuator {attrib.get('name', joint)!r}"
            gear = abs(float(reader.numbers(element, attrib, "gear", (1, 2, 3, 4, 5, 6), what, (1,))[0]))
            limited = attrib.get("forcelimited", "auto").strip()
            if limited == "true" or (limited == "auto" and "forcerange" in attrib):
                out.setdefault(joint, float(np.abs(reader.numbers(element, attrib, "forcerange", 2, what)).max()))
            elif element.tag == "motor" and attrib.get("ctrllimited", "auto").strip() != "false" and "ctrlrange" in attrib:
                out.setdefault(joint, gear * float(np.abs(reader.numbers(element, attrib, "ctrlrange", 2, what)).max()))
    return out
