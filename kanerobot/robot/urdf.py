"""Robots from URDF files (``.urdf``): ``kr.load("robot.urdf")``.

A URDF file is a tree of links joined by joints.  It is read into the
project's :class:`~kanerobot.robot.description.Robot` as a tree of general
frames (:class:`~kanerobot.robot.description.GeneralPlacement`, as
``frames/krang.toml``):

- the URDF's root link (the one link that is no joint's child) is link 0,
  the base; every joint, moving or fixed, is a frame labelled by the
  joint's name exactly (``l-hip.y``, so that ROS ``joint_states`` match
  ``robot.joint_labels`` by name) and carries the joint's child link.  The
  symbols of a frame are named after its stem (``robot.stems``): the name
  with every character other than letters, digits and ``_`` made ``_``
  (``q_l_hip_y``); where two names would share a stem, or a stem would make
  a symbol name another frame's, the later one's stem gets ``_2``; a
  joint named ``0`` (the base's label) is labelled ``0_2``
  (:func:`parse_urdf`'s ``joint_names`` maps the labels to the names);
- frames come depth first from the root, each link's joints in the order
  of the file, so ``robot.joint_labels`` (the order of ``q``) is the moving
  joints' names in that order;
- a joint's ``<origin xyz rpy>`` gives the frame's rotation ``R0 = Rz(y)
  Ry(p) Rx(r)`` and position ``P`` at q = 0 in its parent's frame, its
  ``<axis>`` (normalised; default ``1 0 0``) the joint axis in the frame
  itself, so that ``aT_j = [R0 Rot(axis, q); P]`` is URDF's
  ``origin * Rot(axis, q)`` exactly (prismatic: ``P + R0 axis q``);
  ``revolute`` and ``continuous`` are revolute joints (a continuous joint
  is an angle like any other, not a cos/sin pair), ``prismatic``
  prismatic, ``fixed`` a fixed frame (sigma = 2); ``floating`` and
  ``planar`` joints inside the tree are refused;
- a ``<mimic joint multiplier offset>`` joint is, by default
  (``mimic="constraint"``), a mimic joint of the robot
  (:attr:`~kanerobot.robot.description.Robot.mimics`: ``q = multiplier
  q_leader + offset``, numbers as written, defaults 1 and 0; a mimic of a
  mimic resolved to the chain's independent joint), which the models hold
  as a constraint (:mod:`kanerobot.dynamics.mimic`: pinocchio's
  ``buildModelFromUrdf(path, mimic=True)``); ``mimic="independent"`` reads
  it as a joint of its own, as pinocchio's ``buildModelFromUrdf`` does by
  default, and ``mimic="constraint"`` refuses the file.  A ``<mimic>`` on a
  fixed joint (Talos's reduced grippers) means nothing and one
  :class:`~kanerobot.errors.KaneRobotWarning` says it is ignored, as does
  one whose leader is no joint of the file (example-robot-data's Alex
  hands): that joint is read as a joint of its own;
- a link's ``<inertial>`` (origin xyz/rpy of the centre of mass frame,
  mass m, inertia I_c about the centre of mass in that frame) becomes
  SYMORO's parameters about the frame origin, in the frame's axes, exactly:
  ``J_O = R I_c R^T + m (|c|^2 1 - c c^T)`` (XX .. ZZ), ``MS = m c`` (MX MY
  MZ), ``M = m``; a link without ``<inertial>`` is massless (zeros);
- a joint's ``<dynamics damping friction>`` gives the viscous and Coulomb
  friction ``FV`` and ``FS`` of its frame (0 without one); URDF has no
  rotor inertia: ``IA`` is 0.  ``<limit lower upper velocity effort>`` of a
  moving joint goes to ``robot.limits`` (a continuous joint's lower and
  upper are dropped: it has none), which :func:`kanerobot.simulate`
  enforces (its ``limits``) and :func:`kanerobot.simulation.joint_limits`
  turns into simulation events.

A number in the file is a value, not a structure.  Every link given
dynamic parameters has its ten inertial parameters as symbols with
SYMORO's names per frame (``XX<stem>`` .. ``M<stem>``), a moving joint's
link ``IA<stem>``, ``FV<stem>`` and ``FS<stem>`` too (a fixed frame's
link has no joint: no rotor inertia or friction), all with the file's
numbers in ``robot.values``, zeros included (a product of inertia that is 0
in the file, a link without ``<inertial>``, a joint without
``<dynamics>``): identification estimates them all, none silently
vanishes.  The lengths of ``P`` are ``PX<stem>``, ``PY<stem>``,
``PZ<stem>`` (the joint variable ``q_<stem>``), except the lengths that are 0 in the file, which stay
structural zeros: they make the frame's form (the conversion to
Khalil-Kleinfinger frames reads it) and are not identified.  Gravity is
``G = [G1, G2, G3]`` in frame 0, its values those of the ``gravity=``
option, ``(0, 0, -9.81)`` by default (pinocchio's; URDF has none).  The
rotations ``R0`` and the axes are numbers (entries within 1e-14 of 0 or
+-1 are made exact, so that ``rpy="1.5707963267948966 0 0"`` gives exact
zeros).  ``robot.values`` holds the file's numbers, so that
``kr.derive(robot).numeric(robot.values)`` runs; ``bind=True`` puts the
numbers into the description instead (zeros vanish: the shortest
programs), as ``numeric(robot.values, bind=True)`` does for the models.

``floating=True`` hangs link 0 from the world by a free flyer (pinocchio's
``JointModelFreeFlyer`` at the root link): ``q = (position, quaternion x y
z w, joints)``.  Link 0 is then the rigid body of the root link and of every
link fixed to it (fixed joints from the root): their inertias are added in
frame 0, and those fixed frames carry no link of their own.

Parsing is safe: expat with line numbers, no DOCTYPE (so no entity, internal
or external, is ever expanded), no network; ``package://`` mesh paths are
not followed (visual and collision elements are ignored, but for the
cylinder or sphere of a wheel whose radius ``kr.load``'s ``discs=`` leaves
out: :mod:`kanerobot.robot.wheel_shapes`).  Any mistake is
one :class:`~kanerobot.errors.RobotFileError` ``path:line: what and how to
fix``.

Examples
--------
>>> text = '''<robot name="pendulum">
...   <link name="base"/>
...   <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
...     <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
...   <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
...     <origin xyz="0 0 1" rpy="0 0 0"/><axis xyz="0 1 0"/></joint>
... </robot>'''
>>> robot = urdf_from_text(text)
>>> robot.joint_labels, robot.frame("hinge").q
(('hinge',), q_hinge)
>>> robot.dynamics["hinge"]["MZ"], robot.values["MZhinge"], robot.values["YYhinge"]
(MZhinge, -1.0, 0.6)
>>> robot.dynamics["hinge"]["XY"], robot.values["XYhinge"], robot.values["IAhinge"]  # zeros of the file are values
(XYhinge, 0.0, 0.0)
>>> robot.base.G.T, urdf_from_text(text, gravity=(0, -9.81, 0)).values["G2"]
(Matrix([[G1, G2, G3]]), -9.81)
>>> urdf_from_text(text, bind=True).dynamics["hinge"]["YY"]
0.600000000000000
"""

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np
import sympy

from kanerobot.dynamics.parameters import NEGLIGIBLE, link_faults, rigid_sum
from kanerobot.errors import DescriptionError, KaneRobotWarning, RobotFileError
from kanerobot.robot import joints
from kanerobot.robot.description import BASE, DYNAMIC_NAMES, Base, Frame, GeneralPlacement, JointLimits, Robot
from kanerobot.robot.expressions import exact_number, snapped_entry, symbol
from kanerobot.robot.files import DEFAULT_GRAVITY, GRAVITY_NAMES, checked_gravity
from kanerobot.robot.names import StemChooser
from kanerobot.robot.xmlfile import Element, parse_xml

#: URDF joint types read, and their sigma.
JOINT_TYPES = {"revolute": joints.REVOLUTE, "continuous": joints.REVOLUTE, "prismatic": joints.PRISMATIC, "fixed": joints.FIXED}
#: URDF joint types refused, and why.
REFUSED_TYPES = {
    "floating": "a floating joint inside the tree is not supported: a free-flying robot is kr.load(path, floating=True) "
    "(--floating on the command line), with a free flyer under the root link",
    "planar": "planar joints are not supported: write it as two prismatic joints and a revolute joint (three joints "
    "through massless links)",
}
#: Gravity of ``robot.values`` (``G1 G2 G3``, z up) unless ``gravity=`` says otherwise: pinocchio's default; URDF gives none.
GRAVITY = DEFAULT_GRAVITY
#: What a ``<mimic>`` is (:func:`read_urdf`'s ``mimic``), the default first.
MIMIC = ("constraint", "independent", "refuse")
#: The keywords of :func:`read_urdf` (``kr.load(path, **options)``).
OPTIONS = ("floating", "bind", "mimic", "physical", "gravity")
#: The command line's flag of each keyword (:mod:`kanerobot.command_options` adds them to every command that loads a
#: robot); ``physical=False`` is ``--unphysical``, as ``kanerobot identify --physical`` already means a physical estimate.
FLAGS = {"floating": "--floating", "mimic": "--mimic", "physical": "--unphysical", "gravity": "--gravity"}

_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
#: Symbols no stem's symbols may take: gravity and the base's quaternion.
RESERVED_SYMBOLS = frozenset({*GRAVITY_NAMES, "QX0", "QY0", "QZ0", "QW0"})


@dataclass(frozen=True)
class UrdfRobot:
    """What :func:`parse_urdf` reads: the robot and how it maps to the file.

    Attributes
    ----------
    robot : Robot
    joint_names : mapping label -> str
        The URDF joint name of each frame: the label itself (labels are the
        file's names exactly, but for a joint named ``0``, the base's label,
        labelled ``0_2``; ``robot.stems`` gives the part of the symbol names).
    link_names : mapping label -> str
        The URDF link each frame carries; ``"0"`` is the root link.
    limits : mapping label -> mapping
        ``<limit>`` of each joint that has one: ``lower``, ``upper``,
        ``velocity``, ``effort`` (those written).
    """

    robot: Robot
    joint_names: Mapping[str, str]
    link_names: Mapping[str, str]
    limits: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


# ------------------------------------------------------------------- XML
# ------------------------------------------------------------------ maths
def rpy_matrix(roll, pitch, yaw):
    """URDF's ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, y, z), a numpy 3x3."""
    cr, sr, cp, sp, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def about_origin(mass, centre, inertia):
    """SYMORO's ``(J_O, MS)`` of a body: inertia about the frame origin and first moments.

    ``centre`` is the centre of mass c and ``inertia`` the inertia about it,
    both in the frame's axes: ``J_O = I_c + m (|c|^2 1 - c c^T)``, ``MS = m c``.

    >>> J, MS = about_origin(2.0, np.array([0.0, 0.0, -0.5]), np.diag([0.1, 0.1, 0.01]))
    >>> np.diag(J).tolist(), MS.tolist()
    ([0.6, 0.6, 0.01], [0.0, 0.0, -1.0])
    """
    c = np.asarray(centre, dtype=float)
    return inertia + mass * (c @ c * np.eye(3) - np.outer(c, c)), mass * c


# ----------------------------------------------------------------- reader
def advice(name, value):
    """A load option as an error advises it: the keyword of ``kr.load`` and the command line's flag.

    >>> advice("mimic", "independent"), advice("physical", False)
    ("mimic='independent' (--mimic independent on the command line)", 'physical=False (--unphysical on the command line)')
    """
    flag = FLAGS.get(name)
    if flag is None:
        return f"{name}={value!r}"
    given = "" if isinstance(value, bool) else " " + (",".join(f"{x:g}" for x in value) if isinstance(value, tuple) else str(value))
    return f"{name}={value!r} ({flag}{given} on the command line)"


def read_urdf(path, floating=False, bind=False, mimic="constraint", physical=True, gravity=GRAVITY):
    """Read a robot from a URDF file (see the module's notes for the mapping).

    Parameters
    ----------
    path : str or Path
    floating : bool, optional
        A free flyer under the root link (link 0 carries the root link's
        inertia and that of the links fixed to it).
    bind : bool, optional
        Numbers in the description instead of symbols and ``robot.values``.
    mimic : {"constraint", "independent", "refuse"}, optional
        What a ``<mimic>`` joint is: a mimic joint of the robot, its variable
        following its leader's (default; the models hold it as a
        constraint), a joint of its own (pinocchio's default), or refused.
    physical : bool, optional
        Refuse an ``<inertial>`` that is not a rigid body's (negative mass,
        inertia about the centre of mass not positive semi-definite or
        breaking the triangle inequality), as ``numeric(..., physical=True)``
        would (:func:`~kanerobot.dynamics.parameters.link_faults`): not the
        links of a fixed base (they never move), links fixed together as
        one body, and a correction below
        :data:`~kanerobot.dynamics.parameters.NEGLIGIBLE` of the robot
        read with one :class:`~kanerobot.errors.KaneRobotWarning`.  False
        reads every one as written (pinocchio does; then use
        ``numeric(..., physical=False)``).
    gravity : sequence of 3 floats, optional
        The gravity acceleration in frame 0 (the root link's), the values of
        ``G1 G2 G3`` (``robot.base.G``); default ``(0, 0, -9.81)``,
        pinocchio's.  A URDF file holds no gravity.

    Returns
    -------
    Robot

    Raises
    ------
    RobotFileError
        ``path:line: what and how to fix`` for anything wrong in the file.
    """
    return parse_urdf(path, floating=floating, bind=bind, mimic=mimic, physical=physical, gravity=gravity).robot


def urdf_from_text(text, path="<string>", floating=False, bind=False, mimic="constraint", physical=True, gravity=GRAVITY):
    """:func:`read_urdf` of the text (str or bytes) of a URDF file; ``path`` names it in errors."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    options = dict(floating=floating, bind=bind, mimic=mimic, physical=physical, gravity=gravity)
    return UrdfReader(path, parse_xml(data, path, "a URDF file"), **options).result().robot


def parse_urdf(path, floating=False, bind=False, mimic="constraint", physical=True, gravity=GRAVITY):
    """:func:`read_urdf`, with the joint and link names and the limits: a :class:`UrdfRobot`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RobotFileError(path, None, f"cannot read: {exc.strerror}") from None
    options = dict(floating=floating, bind=bind, mimic=mimic, physical=physical, gravity=gravity)
    return UrdfReader(path, parse_xml(data, path, "a URDF file"), **options).result()


def base_joint_label(name, order):
    """The label of a joint named ``0``, the base's label: ``0_2`` (``0_3`` ... if taken by another joint)."""
    names, n = {joint for _, joint, *_ in order}, 2
    while f"{name}_{n}" in names:
        n += 1
    return f"{name}_{n}"


class UrdfReader:
    """One URDF document into a :class:`UrdfRobot`."""

    def __init__(self, path, root, floating=False, bind=False, mimic="constraint", physical=True, gravity=GRAVITY):
        self.path = path
        self.root = root
        self.floating = bool(floating)
        self.bind = bool(bind)
        if mimic not in MIMIC:
            raise RobotFileError(path, None, f"mimic={mimic!r}: use one of {', '.join(map(repr, MIMIC))}")
        self.mimic = mimic
        self.physical = physical
        self.values = dict(zip(GRAVITY_NAMES, checked_gravity(gravity, path)))
        self.inertials = {}  # {link name: its <inertial> element}, for the line of a body refused

    def fail(self, element, message):
        raise RobotFileError(self.path, element.line if element is not None else None, message)

    # ------------------------------------------------------- attributes
    def attribute(self, element, key, what):
        value = element.attrib.get(key)
        if value is None or not value.strip():
            self.fail(element, f"{what}: <{element.tag}> has no {key}=\"...\": give it")
        return value.strip()

    def floats(self, element, key, count, what, default=None):
        text = element.attrib.get(key) if element is not None else None
        if text is None:
            if default is None:
                self.fail(element, f"{what}: <{element.tag}> has no {key}=\"...\": give {count} number{'s' * (count > 1)}")
            return list(default)
        parts = text.split()
        try:
            numbers = [float(part) for part in parts]
        except ValueError:
            numbers = None
        if numbers is None or len(numbers) != count or not all(math.isfinite(x) for x in numbers):
            self.fail(element, f"{what}: {key}=\"{text}\" must be {count} finite number{'s' * (count > 1)} separated by spaces")
        return numbers

    def origin(self, parent, what):
        element = parent.find("origin")
        xyz = self.floats(element, "xyz", 3, f"origin of {what}", (0.0, 0.0, 0.0))
        rpy = self.floats(element, "rpy", 3, f"origin of {what}", (0.0, 0.0, 0.0))
        return np.array(xyz), rpy_matrix(*rpy)

    # ------------------------------------------------------------ links
    def links(self):
        """{name: element} of the ``<link>`` elements, names unique."""
        out: dict[str, Element] = {}
        for element in self.root.findall("link"):
            name = self.attribute(element, "name", "a link")
            if name in out:
                self.fail(element, f"link {name!r} is defined twice (first at line {out[name].line}): give each link its own name")
            out[name] = element
        if not out:
            self.fail(self.root, self.empty_robot())
        return out

    def empty_robot(self):
        """Why a ``<robot>`` without a ``<link>`` is no robot, and where the robot may be."""
        if self.root.children:
            return "no <link>: a URDF robot is links joined by joints"
        made = " xacro wrote it (xmlns:xacro) from a file of macros that calls none of them;" if "xmlns:xacro" in self.root.attrib else ""
        return f"the <robot> element is empty: no robot to load;{made} load the URDF that instantiates the robot (its links and joints)"

    def inertial(self, link):
        """``(m, J_O, MS)`` of a link's ``<inertial>`` in the link frame, or None without one."""
        name = link.attrib["name"]
        element = link.find("inertial")
        if element is None:
            return None
        what = f"inertial of link {name!r}"
        mass_element = element.find("mass")
        if mass_element is None:
            self.fail(element, f"{what} has no <mass value=\"...\"/>: give the link's mass (kg), or remove <inertial> for a massless link")
        (mass,) = self.floats(mass_element, "value", 1, f"mass of link {name!r}")
        tensor = element.find("inertia")
        if tensor is None:
            self.fail(element, f"{what} has no <inertia ixx=... iyz=.../>: give the inertia about the centre of mass")
        xx, xy, xz, yy, yz, zz = (self.floats(tensor, key, 1, f"inertia of link {name!r}")[0] for key in _INERTIA_KEYS)
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        c, R = self.origin(element, what)
        self.inertials[name] = element
        J, MS = about_origin(mass, c, R @ inertia @ R.T)
        return mass, J, MS

    def check_physical(self, robot, moving, link_names, merged):
        """Refuse the links of ``robot`` that are no rigid body's, as ``numeric`` would
        (:func:`~kanerobot.dynamics.parameters.link_faults`: the ``moving`` ones, those fixed together as one
        body); one warning names those whose correction is negligible.  ``merged``: the links of a free flyer's link 0."""
        used = {str(s) for label in moving for value in robot.dynamics[label].values() for s in sympy.sympify(value).free_symbols}
        faults = link_faults(robot, self.values, used)
        named = {label: repr(link_names[label]) for label in robot.links}
        if len(merged) > 1:
            named[BASE] += f" with the links fixed to it ({', '.join(map(repr, merged[1:]))})"
        where = {label: self.inertials.get(link_names[label], self.root) for label in robot.links}
        for fault in faults:
            if not fault.negligible:
                cost = "" if math.isinf(fault.size) else f" (it would take {fault.correction}: above {NEGLIGIBLE:g} of the robot, it matters)"
                self.fail(
                    where[fault.label],
                    f"link {named[fault.label]}: {'; '.join(fault.reasons)}: give a rigid body's mass (>= 0) and inertia (positive, each "
                    f"principal moment at most the sum of the other two), or load with {advice('physical', False)} to read it as "
                    f"written{cost}",
                )
        if faults:
            lines = "; ".join(f"link {named[f.label]} (line {where[f.label].line}): {f.correction}" for f in faults)
            warnings.warn(KaneRobotWarning(
                f"{self.path}: {len(faults)} link{'s' * (len(faults) > 1)} not quite a rigid body's, read as written: {lines}; "
                f"at most {NEGLIGIBLE:g} of the robot, this cannot change its dynamics"), stacklevel=2)  # fmt: skip

    # ----------------------------------------------------------- joints
    def joints(self, links):
        """``[(element, name, type, parent, child)]`` of the ``<joint>`` elements, checked."""
        out = []
        names: dict[str, int] = {}  # joint -> its line
        parent_of: dict[str, tuple[str, int]] = {}  # link -> (the joint whose child it is, its line)
        for element in self.root.findall("joint"):
            name = self.attribute(element, "name", "a joint")
            if name in names:
                self.fail(element, f"joint {name!r} is defined twice (first at line {names[name]}): give each joint its own name")
            names[name] = element.line
            kind = self.joint_type(element, name)
            ends = []
            for end in ("parent", "child"):
                tag = element.find(end)
                if tag is None:
                    self.fail(element, f"joint {name!r} has no <{end} link=\"...\"/>: name its {end} link")
                link = self.attribute(tag, "link", f"{end} of joint {name!r}")
                if link not in links:
                    known = ", ".join(sorted(links))
                    self.fail(tag, f"joint {name!r} names {end} link {link!r}, which is not a <link> of the file (links: {known})")
                ends.append(link)
            parent, child = ends
            if child in parent_of:
                first = parent_of[child]
                self.fail(
                    element,
                    f"link {child!r} has two parents: joint {name!r} and joint {first[0]!r} (line {first[1]}) both have it as "
                    f"child; a URDF is a tree, each link the child of one joint",
                )
            parent_of[child] = (name, element.line)
            if element.find("mimic") is not None and self.mimic == "refuse":
                mimicked = element.find("mimic").attrib.get("joint", "?")
                self.fail(
                    element.find("mimic"),
                    f"joint {name!r} mimics joint {mimicked!r}, and mimic joints are refused (mimic='refuse'): load with "
                    f"{advice('mimic', 'constraint')} to couple them, or {advice('mimic', 'independent')} to read {name!r} "
                    f"as a joint of its own (as pinocchio does)",
                )
            out.append((element, name, kind, parent, child))
        return out

    def joint_type(self, element, name):
        kind = self.attribute(element, "type", f"joint {name!r}")
        if kind in REFUSED_TYPES:
            self.fail(element, f"joint {name!r} is {kind}: {REFUSED_TYPES[kind]}")
        if kind not in JOINT_TYPES:
            self.fail(element, f"joint {name!r} has unknown type {kind!r}: use one of {', '.join(JOINT_TYPES)}")
        return kind

    def root_link(self, links, joint_list):
        """The one link that is no joint's child; refuses forests and cycles."""
        children = {child: (element, name, parent) for element, name, _, parent, child in joint_list}
        roots = [name for name in links if name not in children]
        if len(roots) > 1:
            self.fail(
                links[roots[1]],
                f"links {roots[0]!r} and {roots[1]!r} are both roots (no joint has them as child): a URDF is one tree; "
                f"join them with a joint",
            )
        reached = {roots[0]} if roots else set()
        stack = list(reached)
        by_parent: dict[str, list[str]] = {}
        for _, _, _, parent, child in joint_list:
            by_parent.setdefault(parent, []).append(child)
        while stack:
            for child in by_parent.get(stack.pop(), []):
                reached.add(child)
                stack.append(child)
        lost = [name for name in links if name not in reached]
        if lost:
            chain, link = [], lost[0]
            while link not in chain:
                chain.append(link)
                link = children[link][2]
            cycle = chain[chain.index(link):] + [link]
            element = children[cycle[0]][0]
            self.fail(
                element,
                f"joints form a cycle: links {' -> '.join(repr(name) for name in reversed(cycle))}; a URDF is a tree "
                f"(a closed chain is cut at one joint)",
            )
        return roots[0]

    # ------------------------------------------------------------- build
    def result(self):
        if self.root.tag != "robot":
            self.fail(self.root, f"the document element is <{self.root.tag}>: a URDF file is one <robot> element")
        links = self.links()
        joint_list = self.joints(links)
        root = self.root_link(links, joint_list)
        name = self.root.attrib.get("name", "").strip() or Path(str(self.path)).stem
        by_parent: dict[str, list[tuple]] = {}  # link -> its joints' entries of joint_list
        for item in joint_list:
            by_parent.setdefault(item[3], []).append(item)
        order, stack = [], list(reversed(by_parent.get(root, [])))
        while stack:  # depth first, each link's joints in the order of the file
            item = stack.pop()
            order.append(item)
            stack.extend(reversed(by_parent.get(item[4], [])))
        stems = self.stems(order)
        labels = {joint: joint if joint != BASE else base_joint_label(joint, order) for _, joint, *_ in order}
        frame_of = {root: BASE}
        frames, dynamics, link_names, limits = [], {}, {BASE: root}, {}
        root_body = self.inertial(links[root])  # read even where the base does not move (a fixed base: not in the model)
        rigid = {BASE: (np.eye(3), np.zeros(3), root_body)} if self.floating else {}  # link 0's parts: placement in 0, body
        merged = [root] if self.floating else []
        immobile = set() if self.floating else {BASE}  # links fixed to a fixed base: their bodies never enter the dynamics
        kinds = {}
        for element, joint_name, kind, parent, child in order:
            label, stem = labels[joint_name], stems[joint_name]
            kinds[label] = kind
            frame_of[child] = label
            link_names[label] = child
            frame, R, P = self.frame(element, label, stem, kind, frame_of[parent])
            frames.append(frame)
            limit = element.find("limit")
            if limit is not None:
                limits[label] = {key: self.floats(limit, key, 1, f"limit of joint {joint_name!r}")[0]
                                 for key in ("lower", "upper", "velocity", "effort") if key in limit.attrib}
            body = self.inertial(links[child])
            if kind == "fixed" and frame_of[parent] in immobile:
                immobile.add(label)
            if kind == "fixed" and frame_of[parent] in rigid:  # part of a free flyer's link 0: no link of its own
                R_a, p_a, _ = rigid[frame_of[parent]]
                rigid[label] = (R_a @ R, p_a + R_a @ P, body)
                merged.append(child)
                continue
            if kind != "fixed" or body is not None:
                dynamics[label] = self.link_parameters(stem, body, element if kind != "fixed" else None)
        if not self.floating and not any(frame.is_joint for frame in frames):
            self.fail(self.root, f"robot {name!r} has no moving joint: with its base fixed nothing moves; load it with "
                                 f"{advice('floating', True)} for a free body")  # fmt: skip
        if self.floating:
            dynamics = {BASE: self.link_parameters(BASE, rigid_sum(rigid.values()), None), **dynamics}
        try:
            # Position limits of continuous joints mean nothing (URDF ignores them); velocity and effort do.
            joint_limits = {label: JointLimits(*(None if kinds[label] == "continuous" and key in ("lower", "upper") else item.get(key)
                                                 for key in ("lower", "upper", "velocity", "effort")))
                            for label, item in limits.items() if kinds[label] != "fixed"}  # fmt: skip
            robot = Robot.create(name, frames, links=list(dynamics), dynamics=dynamics, floating=self.floating, values=self.values,
                                 limits=joint_limits, base=Base(G=sympy.ImmutableMatrix([symbol(g) for g in GRAVITY_NAMES])),
                                 mimics=self.mimics(order, labels, kinds))  # fmt: skip
        except DescriptionError as exc:
            at = {labels[joint]: element.find("mimic") if exc.key == "mimic" else element for element, joint, *_ in order}
            line = at[exc.label].line if at.get(exc.label) is not None else None
            raise RobotFileError(self.path, line, str(exc)) from None
        if self.physical:
            self.check_physical(robot, [label for label in dynamics if label not in immobile], link_names, merged)
        if self.bind:
            robot = robot.subs({key: exact_number(value) for key, value in robot.values.items()})
        joint_names = {labels[joint]: joint for _, joint, *_ in order}
        return UrdfRobot(robot, MappingProxyType(joint_names), MappingProxyType(link_names), MappingProxyType(limits))

    def mimics(self, order, labels, kinds):
        """The ``<mimic>`` couplings as ``(joint, leader, multiplier, offset)`` (``mimic="constraint"``).

        A ``<mimic>`` on a fixed joint, or naming no joint of the file, is
        ignored with one warning (the joint then moves on its own); one
        whose leader is fixed is refused.
        """
        if self.mimic != "constraint":
            return ()
        out, fixed, unknown = [], [], []
        for element, joint, kind, *_ in order:
            tag = element.find("mimic")
            if tag is None:
                continue
            leader = self.attribute(tag, "joint", f"mimic of joint {joint!r}")
            if kind == "fixed":
                fixed.append(f"{joint!r} (line {tag.line})")
                continue
            if leader not in labels:
                unknown.append(f"{joint!r} mimics {leader!r} (line {tag.line})")
                continue
            if kinds[labels[leader]] == "fixed":
                self.fail(tag, f"joint {joint!r} mimics joint {leader!r}, which is fixed: name a moving joint, or remove <mimic>")
            k, o = (self.floats(tag, key, 1, f"mimic of joint {joint!r}", (default,))[0] for key, default in (("multiplier", 1.0), ("offset", 0.0)))
            out.append((labels[joint], labels[leader], snapped_entry(k), snapped_entry(o)))
        if fixed:
            warnings.warn(KaneRobotWarning(
                f"{self.path}: <mimic> of fixed joint{'s' * (len(fixed) > 1)} {', '.join(fixed)} ignored: a fixed joint has no variable to couple"),
                stacklevel=4)  # fmt: skip
        if unknown:
            warnings.warn(KaneRobotWarning(
                f"{self.path}: <mimic> naming no joint of the file ignored, each such joint read as a joint of its own: "
                f"{', '.join(unknown)}; name the leader joint exactly to couple them"), stacklevel=4)  # fmt: skip
        return tuple(out)

    def stems(self, order):
        """{joint name: stem}: letters, digits and ``_``, unique, with symbol names that clash with no other's."""
        chooser = StemChooser(RESERVED_SYMBOLS)
        return {name: chooser.stem(name) for _, name, *_ in order}

    def parameter(self, name, value):
        """The symbol ``name``, with ``value`` (0 too: a number of the file is a value) in :attr:`values`."""
        self.values[name] = float(value)
        return symbol(name)

    def length(self, name, value):
        """A length of a joint's origin: :meth:`parameter`, but 0 for a 0 of the file.

        Unlike the dynamic parameters (values to identify: a 0 of the file is
        a value), the geometry's zeros stay structural: they make the frame's
        form, which the conversion to Khalil-Kleinfinger frames reads (a
        symbol whose value is 0 would be an offset it must keep), and they
        spare the programs their terms.
        """
        return self.parameter(name, value) if value != 0 else sympy.S.Zero

    def frame(self, element, label, stem, kind, antecedent):
        what = f"joint {element.attrib['name']!r}"
        P, R = self.origin(element, what)
        sigma = JOINT_TYPES[kind]
        axis = np.array([0.0, 0.0, 1.0])
        if sigma != joints.FIXED:
            axis_element = element.find("axis")
            axis = np.array(self.floats(axis_element, "xyz", 3, f"axis of {what}", (1.0, 0.0, 0.0)))
            norm = float(np.linalg.norm(axis))
            if norm == 0:
                self.fail(axis_element, f"axis of {what} is 0 0 0: give the direction of the joint axis, e.g. xyz=\"0 0 1\"")
            axis = axis / norm
        placement = GeneralPlacement(
            [snapped_entry(x) for x in R.flat],
            [self.length(f"P{xyz}{stem}", p) for xyz, p in zip("XYZ", P)],
            [snapped_entry(x) for x in axis],
            symbol("q_" + stem) if sigma != joints.FIXED else 0,
        )
        return Frame(label, antecedent, sigma, 1, placement, stem), R, P

    def link_parameters(self, stem, body, joint):
        """SYMORO's parameters of the link of the frame of ``stem``: the inertial ones
        (all ten, zeros of a massless link included), and the rotor inertia and
        friction of its ``joint`` (a moving joint's element; None for a fixed
        frame or the free flyer's link 0, which have none)."""
        out = dict.fromkeys(DYNAMIC_NAMES, sympy.S.Zero)
        mass, J, MS = body if body is not None else (0.0, np.zeros((3, 3)), np.zeros(3))
        for (i, j), key in zip(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)), ("XX", "XY", "XZ", "YY", "YZ", "ZZ")):
            out[key] = self.parameter(key + stem, J[i, j])
        for k, key in enumerate(("MX", "MY", "MZ")):
            out[key] = self.parameter(key + stem, MS[k])
        out["M"] = self.parameter("M" + stem, mass)
        if joint is None:
            return out
        out["IA"] = self.parameter("IA" + stem, 0.0)  # URDF has no rotor inertia: a value to identify, 0 in the file
        dyn = joint.find("dynamics")
        what = f"dynamics of joint {joint.attrib['name']!r}"
        for key, attribute in (("FV", "damping"), ("FS", "friction")):
            (value,) = self.floats(dyn, attribute, 1, what, (0.0,)) if dyn is not None else (0.0,)
            if value < 0:
                self.fail(dyn, f"{what}: {attribute}=\"{value:g}\" < 0: friction coefficients are >= 0")
            out[key] = self.parameter(key + stem, value)
        return out
