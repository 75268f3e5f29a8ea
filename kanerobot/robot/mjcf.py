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
forces: they are ignored (a wheel's cylinder or sphere gives the radius
that ``kr.load``'s ``discs=`` leaves out: :mod:`kanerobot.robot.wheel_shapes`).  An active ``<equality><joint joint1 joint2
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

The reader is three files: this one (the document, its includes, defaults
and attributes, the bodies and joints and the frames they make),
:mod:`kanerobot.robot.mjcf_inertia` (the bodies' masses and inertias, from
``<inertial>``, geoms and meshes) and :mod:`kanerobot.robot.mjcf_equalities`
(joint and tendon couplings, connect loops); :mod:`kanerobot.robot.mjcf_writer`
writes MJCF files.

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
from kanerobot.robot.description import BASE, Base, Frame, GeneralPlacement, JointLimits, Robot
from kanerobot.robot.expressions import EXACT, snapped_entry, symbol
from kanerobot.robot.files import DEFAULT_GRAVITY, GRAVITY_NAMES, checked_gravity
from kanerobot.robot.joints.quaternion import quaternion_product, quaternion_to_rotation
from kanerobot.robot.mesh import MeshInertia
from kanerobot.robot.mjcf_equalities import check_loops, close_loops, equalities, mimics, refuse_tendons
from kanerobot.robot.mjcf_inertia import MINVAL, body_inertia, mesh_assets
from kanerobot.robot.names import DYNAMIC_NAMES, StemChooser
from kanerobot.robot.urdf import RESERVED_SYMBOLS
from kanerobot.robot.xmlfile import Element, parse_xml

__all__ = ["MjcfRobot", "mjcf_from_text", "parse_mjcf", "read_mjcf"]

KIND = "an MJCF file"
#: MuJoCo's joint types, and ours.
JOINT_TYPES = {"hinge": joints.Revolute, "slide": joints.Prismatic, "ball": joints.Spherical, "free": joints.FreeFlyer}
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
    return MjcfReader(path, parse_xml(data, path, KIND)).result()


def mjcf_from_text(text: str | bytes, path: str | os.PathLike = "<string>") -> MjcfRobot:
    """:func:`parse_mjcf` of the text of an MJCF file; ``path`` names it in errors (includes are read next to it)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return MjcfReader(Path(path), parse_xml(data, path, KIND)).result()


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


class MjcfReader:
    """One MJCF document (its includes spliced in) into an :class:`MjcfRobot`."""

    def __init__(self, path, root):
        self.path = path
        self.folder = Path(path).resolve().parent
        if root.tag != "mujoco":
            self.fail(root, f"the document element is <{root.tag}>: an MJCF file is one <mujoco> element")
        self.root = self.expanded(root, [Path(path).resolve()])
        self.compiler = self.compiler_settings()
        self.defaults = self.default_classes()
        self.meshes = mesh_assets(self)
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

    # ------------------------------------------------------------- build
    def result(self):
        bodies = self.bodies()
        couplings, connects = equalities(self, bodies)
        refuse_tendons(self)
        option = self.option()
        self.values.update(zip(GRAVITY_NAMES, option))
        free = [body for body in bodies if any(joint.kind == "free" for joint in body.joints)]
        objects = self.free_objects(free)
        free = [body for body in free if body not in objects]
        for body in free:
            self.check_free(body, free)
        root = free[0] if free else bodies[0]
        static = {body.index for body in _welded(bodies[0])}
        inertias = {body.index: body_inertia(self, body, body.index in static) for body in bodies[1:]}
        self.check_masses(bodies, inertias)
        inertias = self.scaled(bodies, inertias)
        builder = _Builder(self, root, inertias, couplings)
        for body in root.children:
            builder.add(body)
        if connects:
            check_loops(self, connects, root, couplings)
            close_loops(builder, connects, bodies)
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
                                 mimics=mimics(self), loops=self.loops)  # fmt: skip
        except DescriptionError as exc:
            raise RobotFileError(reader.path, None, str(exc)) from None
        free = next((joint.index for joint in self.root.joints), None) if floating else None
        return MjcfRobot(robot, MappingProxyType(self.joint_names), MappingProxyType(self.joint_ids), free, MappingProxyType(self.body_names),
                         MappingProxyType(self.cut_joints))  # fmt: skip


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
