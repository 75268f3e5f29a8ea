"""A wheel's radius from its link's shapes in a URDF or MJCF file: what ``discs=`` reads when no radius is given.

``kr.load("robot.urdf", discs=["wr", "wl"])`` (``--disc wr`` on the command
line, a ``[[disc]]`` table without ``radius`` in a side file) takes each
disc's radius from the primitive shapes of its joint's link, so that a user
need not guess it:

- URDF: the child link's ``<collision>`` elements, else its ``<visual>``
  ones; a ``<cylinder radius length>`` whose axis (z of the element's
  ``<origin rpy>``) is parallel to the joint's ``<axis>``, or a ``<sphere
  radius>``, centred on the joint's origin (the disc's centre: the origin of
  its link's frame);
- MJCF: the geoms of the joint's body that collide (``contype`` or
  ``conaffinity`` not 0), else the others; a ``cylinder`` (its radius
  ``size[0]``, its axis along ``fromto`` or z of the geom's frame) or a
  ``sphere``, by the same rule, centred on the joint's ``pos``.

The shapes that fit must agree on one radius; meshes are not read.  Any
other case (no shape, only meshes or boxes, cylinders across the joint's
axis or away from its origin, two radii) is one
:class:`~kanerobot.errors.RobotFileError` naming the file, the line of the
link, body or shape, and what to give instead.  The radius found is a plain
number, put into the :class:`~kanerobot.robot.description.Disc` as if the
user had typed it: the description knows nothing of shapes.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "wheel.urdf"
>>> _ = path.write_text('''<robot name="w"><link name="axle"/>
... <link name="wheel"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
...   <collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.3" length="0.05"/></geometry></collision>
... </link>
... <joint name="spin" type="continuous"><parent link="axle"/><child link="wheel"/><axis xyz="0 1 0"/></joint></robot>''')
>>> radius_reader(path)("spin", "discs={'spin': RADIUS}")
0.3
"""

import functools
import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from kanerobot.errors import RobotFileError
from kanerobot.robot import joints, mjcf, urdf
from kanerobot.robot.description import BASE
from kanerobot.robot.xmlfile import Element, parse_xml

__all__ = ["Shape", "WheelLink", "disc_radius", "radius_reader"]

#: How close to parallel a cylinder's axis and the joint's are (the sine of their angle), and how close to the
#: joint's origin a shape's centre is (a length, in the file's unit).
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Shape:
    """One shape of a wheel's link, placed in the frame of the wheel's joint.

    Attributes
    ----------
    kind : str
        ``"cylinder"``, ``"sphere"``, or another shape's name (``"mesh"``, ``"box"``): no radius.
    radius : float or None
    axis : ndarray, shape (3,), or None
        A cylinder's unit axis.
    centre : ndarray, shape (3,)
    element : Element
        The element that gives it (its line for the errors).
    collision : bool
        A collision shape (preferred) rather than a visual one.
    """

    kind: str
    radius: float | None
    axis: np.ndarray | None
    centre: np.ndarray
    element: Element
    collision: bool


@dataclass(frozen=True)
class WheelLink:
    """What a file says of the link of one joint: its element, the joint's axis and origin, and its shapes."""

    what: str  # "link 'wheel'", "body 'wheel'", for the messages
    element: Element
    axis: np.ndarray
    origin: np.ndarray
    shapes: tuple[Shape, ...]


def disc_radius(link: WheelLink, label: str, instead: str) -> float:
    """The radius of the disc of joint ``label`` that ``link``'s shapes give (see the module's notes).

    Parameters
    ----------
    link : WheelLink
    label : str
        The disc's joint, for the messages.
    instead : str
        What to give instead where the file gives no radius (``discs={'wr': RADIUS} ...``).

    Returns
    -------
    float

    Raises
    ------
    RobotFileError
        ``path:line: disc LABEL: why: give its radius, INSTEAD``.
    """

    def fail(element, why) -> NoReturn:
        raise RobotFileError(element.path, element.line, f"disc {label}: {why}: give its radius, {instead}")

    for collision in (True, False):
        fits = [shape for shape in link.shapes if shape.collision == collision and _fits(shape, link) is None]
        if not fits:
            continue
        first, radius = fits[0], float(fits[0].radius or 0.0)  # _fits: a radius
        other = next((shape for shape in fits if not math.isclose(shape.radius or 0.0, radius, rel_tol=1e-12)), None)
        if other is not None:
            fail(other.element, f"{link.what} has a {first.kind} of radius {radius:g} (line {first.element.line}) and a "
                                f"{other.kind} of radius {other.radius:g} (line {other.element.line}): which is the wheel?")  # fmt: skip
        if not radius > 0:
            fail(first.element, f"the {first.kind} of {link.what} has radius {radius:g}: a disc's radius must be > 0")
        return radius
    if not link.shapes:
        fail(link.element, f"{link.what} has no shape to read the wheel's radius from (no cylinder or sphere)")
    shape = next((shape for shape in link.shapes if shape.radius is not None), link.shapes[0])
    why = _fits(shape, link) or "has no radius"
    fail(shape.element, f"the {shape.kind} of {link.what} {why} (a wheel is a cylinder along its joint's axis, or a sphere, "
                        f"centred on the joint's origin; meshes are not read)")  # fmt: skip


def _fits(shape, link):
    """None if ``shape`` is the wheel of ``link``'s joint, else why not."""
    if shape.radius is None:
        return "has no radius"
    if shape.axis is not None and np.linalg.norm(np.cross(shape.axis, link.axis)) > TOLERANCE:
        return f"has its axis along ({_vector(shape.axis)}), not along the joint's axis ({_vector(link.axis)})"
    offset = shape.centre - link.origin
    if np.linalg.norm(offset) > TOLERANCE:
        return f"is centred at ({_vector(shape.centre)}), not on the joint's origin ({_vector(link.origin)})"
    return None


def _vector(v):
    return " ".join(f"{x + 0.0:.6g}" for x in v)


def radius_reader(path: str | os.PathLike) -> Callable[[str, str], float] | None:
    """``radius(label, instead)``: the radius of the disc of joint ``label`` read from the robot file ``path``.

    The file is read at the first call.  None for a ``.par`` or ``.toml``
    file, which gives no shapes.

    Parameters
    ----------
    path : str or Path
        A ``.urdf`` or ``.xml`` (MJCF) file.

    Returns
    -------
    callable or None
        ``radius(label, instead) -> float``; raises
        :class:`~kanerobot.errors.RobotFileError` (:func:`disc_radius`),
        ``instead`` saying what to give where the file gives no radius.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in (".urdf", ".xml"):
        return None
    links: dict[str, Callable[[], WheelLink]] = {}  # the shapes of a link read when asked: another link's do not matter

    def radius(label, instead):
        if not links:
            links.update(_urdf_links(path) if suffix == ".urdf" else _mjcf_links(path))
        if label not in links:
            raise RobotFileError(path, None, f"disc {label}: no revolute joint {label} in the file: give its radius, {instead}")
        return disc_radius(links[label](), label, instead)

    return radius


# ------------------------------------------------------------------ URDF
def _urdf_links(path):
    """``{label: () -> WheelLink}`` of the revolute joints of a URDF file (labels as :mod:`kanerobot.robot.urdf` gives them)."""
    root = parse_xml(Path(path).read_bytes(), path, "a URDF file")
    reader = urdf.UrdfReader(path, root)
    links = reader.links()
    joint_list = reader.joints(links)
    out = {}
    for element, name, kind, _, child in joint_list:
        if urdf.JOINT_TYPES[kind] != joints.REVOLUTE:
            continue
        label = name if name != BASE else urdf.base_joint_label(name, joint_list)
        out[label] = functools.partial(_urdf_link, reader, element, name, links[child], child)
    return out


def _urdf_link(reader, joint, name, link, child):
    axis = np.array(reader.floats(joint.find("axis"), "xyz", 3, f"axis of joint {name!r}", (1.0, 0.0, 0.0)))
    return WheelLink(f"link {child!r}", link, axis / np.linalg.norm(axis), np.zeros(3), tuple(_urdf_shapes(reader, link, child)))


def _urdf_shapes(reader, link, name):
    """The shapes of a ``<link>``'s ``<collision>`` and ``<visual>`` elements, in the link's frame."""
    for tag in ("collision", "visual"):
        for element in link.findall(tag):
            what = f"<{tag}> of link {name!r}"
            centre, R = reader.origin(element, what)
            geometry = element.find("geometry")
            for shape in geometry.children if geometry is not None else ():
                radius = None
                if shape.tag in ("cylinder", "sphere"):
                    (radius,) = reader.floats(shape, "radius", 1, f"{shape.tag} of {what}")
                axis = R[:, 2] if shape.tag == "cylinder" else None
                yield Shape(shape.tag, radius, axis, centre, shape, tag == "collision")


# ------------------------------------------------------------------ MJCF
def _mjcf_links(path):
    """``{label: () -> WheelLink}`` of the hinge joints of an MJCF file (labels as :mod:`kanerobot.robot.mjcf` gives them)."""
    with warnings.catch_warnings():  # kr.load said them already
        warnings.simplefilter("ignore")
        ids = mjcf.parse_mjcf(path).joint_ids
    reader = mjcf.MjcfReader(Path(path), parse_xml(Path(path).read_bytes(), path, mjcf.KIND))
    hinges = {joint.index: (joint, body) for body in reader.bodies() for joint in body.joints if joint.kind == "hinge"}
    return {label: functools.partial(_mjcf_link, reader, *hinges[index]) for label, index in ids.items() if index in hinges}


def _mjcf_link(reader, joint, body):
    what = f"body {body.name!r}"
    return WheelLink(what, body.element, joint.axis, joint.pos, tuple(_mjcf_shapes(reader, body, what)))


def _mjcf_shapes(reader, body, what):
    """The shapes of a body's geoms, in the body's frame (where its joints' axes and positions are)."""
    for element, attrib, kind, geom, R, p, _ in body.geoms:
        collision = any(reader.number(element, attrib, key, geom, 1.0) != 0 for key in ("contype", "conaffinity"))
        radius = None
        if kind in ("cylinder", "sphere"):
            radius = float(reader.numbers(element, attrib, "size", (1, 2, 3), f"{geom} of {what}", (0.0,))[0])
        yield Shape(kind, radius, R[:, 2] if kind == "cylinder" else None, p, element, collision)
