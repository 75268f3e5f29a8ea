"""The ``<visual>`` elements of a URDF: what each link looks like, for the viewer.

:mod:`kanerobot.robot.urdf` reads the kinematics and inertias and ignores
visual elements; this module reads them, once that reader has accepted the
file (so the document is a ``<robot>`` without DOCTYPE, and parsing it again
with :mod:`xml.etree.ElementTree` expands no entity).  Each visual is placed
in the frame of the joint that carries its link (URDF's child link frame is
the joint frame), or in frame ``0`` for the root link.

Mesh files are looked for on disk only, never fetched: a relative path from
the URDF's folder, ``file://`` as an absolute path, ``package://NAME/rest``
in a folder ``NAME`` of the URDF's folder or of one of its parents.  A mesh
that is not found is reported in :attr:`Visual.missing` (all of them in one
line by :func:`missing_meshes`) and replaced by the link's ``<collision>``
shapes, if it has some; loading a found mesh is the viewer's work (trimesh,
which comes with viser).

Examples
--------
>>> text = '''<robot name="r"><link name="base"><visual><geometry><box size="1 2 3"/></geometry></visual></link>
...   <link name="arm"><visual><origin xyz="0 0 0.5"/><geometry><mesh filename="package://r/arm.stl"/></geometry></visual></link>
...   <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint></robot>'''
>>> found = link_visuals(text, {"0": "base", "j": "arm"}, "/nowhere/r.urdf")
>>> [(v.label, v.kind, v.size) for v in found]
[('0', 'box', (1.0, 2.0, 3.0)), ('j', 'mesh', (1.0, 1.0, 1.0))]
>>> found[1].origin[:3, 3].tolist(), found[1].path, found[1].missing
([0.0, 0.0, 0.5], None, 'package://r/arm.stl')
"""

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from kanerobot.errors import RobotFileError
from kanerobot.robot.urdf import rpy_matrix

__all__ = ["Visual", "link_visuals", "missing_meshes", "urdf_visuals"]

#: The grey of a visual without a material colour (RGBA, 0-1).
DEFAULT_RGBA = (0.7, 0.7, 0.72, 1.0)
#: How many missing mesh files :func:`missing_meshes` names.
SHOWN_MISSING = 3


@dataclass(frozen=True)
class Visual:
    """One ``<visual>`` of a link.

    Attributes
    ----------
    label : str
        The frame it moves with (``"0"`` for the root link).
    origin : numpy.ndarray, shape (4, 4)
        Its pose in that frame (``<origin xyz rpy>``).
    kind : str
        ``"mesh"``, ``"box"``, ``"cylinder"`` or ``"sphere"``.
    size : tuple of float
        Box: ``(x, y, z)``; cylinder: ``(radius, length)`` along z;
        sphere: ``(radius,)``; mesh: the scale ``(sx, sy, sz)``.
    rgba : tuple of float
        Colour, 0-1 (the material's, else :data:`DEFAULT_RGBA`).
    path : Path or None
        The mesh file found on disk.
    missing : str or None
        A mesh's ``filename`` that was not found (then ``path`` is None);
        with a ``kind`` other than ``"mesh"`` or a ``path``, this Visual is
        one of the link's collision shapes (or meshes), drawn instead.
    """

    label: str
    origin: np.ndarray
    kind: str
    size: tuple
    rgba: tuple = DEFAULT_RGBA
    path: Path | None = None
    missing: str | None = None


def urdf_visuals(path):
    """The visuals of the URDF file ``path``, placed in the frames :func:`kanerobot.load` gives its links.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    list of Visual

    Raises
    ------
    RobotFileError
        What :func:`kanerobot.robot.urdf.parse_urdf` refuses in the file.
    """
    from kanerobot.robot.urdf import parse_urdf

    parsed = parse_urdf(path)  # checks the file (and refuses a DOCTYPE) before it is parsed again here
    return link_visuals(Path(path).read_bytes(), parsed.link_names, path)


def link_visuals(text, link_names, path):
    """The visuals of a URDF document that :mod:`kanerobot.robot.urdf` has read.

    Parameters
    ----------
    text : str or bytes
        The document.
    link_names : mapping str -> str
        Frame label -> URDF link name (:attr:`UrdfRobot.link_names`).
    path : str or Path
        The file, whose folder mesh paths are relative to.

    Returns
    -------
    list of Visual
        In the order of the file.
    """
    root = ElementTree.fromstring(text)
    label_of = {link: label for label, link in link_names.items()}
    colours = {m.get("name"): _rgba(m) for m in root.findall("material") if m.get("name")}
    folder = Path(path).resolve().parent
    out = []
    for link in root.findall("link"):
        label = label_of.get(link.get("name"))
        if label is None:  # a link no joint reaches: parse_urdf refused such files, kept for safety
            continue
        try:
            visuals = [v for v in (_visual(e, label, folder, colours) for e in link.findall("visual")) if v is not None]
        except ValueError as exc:
            raise RobotFileError(path, None, f"visual of link {link.get('name')!r}: {exc}") from None
        out.extend(_stand_ins(visuals, link, label, folder, path))
    return out


def _visual(element, label, folder, colours):
    """The Visual of a ``<visual>`` (or ``<collision>``) element, None when it has no shape the viewer draws."""
    shape = _shape(element.find("geometry"), folder)
    if shape is None:
        return None
    material = element.find("material")
    rgba = _rgba(material) if material is not None and material.find("color") is not None else None
    if rgba is None and material is not None:
        rgba = colours.get(material.get("name"))
    kind, size, found, missing = shape
    return Visual(label, _origin(element.find("origin")), kind, size, rgba or DEFAULT_RGBA, found, missing)


def _stand_ins(visuals, link, label, folder, path):
    """``visuals`` with the first missing mesh replaced by the link's collision shapes, in its colour.

    A robot's collision shapes are often its meshes' bounding boxes: better
    than nothing where the meshes are not on disk.  Drawn once per link (a
    second missing mesh of the link stays missing).
    """
    first = next((k for k, v in enumerate(visuals) if v.missing), None)
    if first is None:
        return visuals
    try:
        shapes = [_visual(e, label, folder, {}) for e in link.findall("collision")]
    except ValueError as exc:
        raise RobotFileError(path, None, f"collision of link {link.get('name')!r}: {exc}") from None
    lost = visuals[first]
    shapes = [replace(s, rgba=lost.rgba, missing=lost.missing) for s in shapes if s is not None and s.missing is None]
    return visuals[:first] + (shapes or [lost]) + visuals[first + 1 :]


def missing_meshes(visuals, path):
    """One line on the meshes of ``visuals`` not found on disk, None when all were.

    Parameters
    ----------
    visuals : list of Visual
        What :func:`link_visuals` gave.
    path : str or Path
        The URDF file they come from.

    Returns
    -------
    str or None
        How many mesh files are missing, the first few, where they were
        looked for and how many links are drawn with their collision shapes.

    Examples
    --------
    >>> lost = [Visual("1", np.eye(4), "mesh", (1.0, 1.0, 1.0), missing="arm.stl")]
    >>> print(missing_meshes(lost, "/robots/r.urdf"))
    kanerobot: 1 mesh file of r.urdf not found on disk (arm.stl), looked for under /robots (package://NAME/... in a folder NAME there or above); the links are drawn without it
    """
    names = list(dict.fromkeys(v.missing for v in visuals if v.missing))
    if not names:
        return None
    shown = ", ".join(names[:SHOWN_MISSING]) + (", ..." if len(names) > SHOWN_MISSING else "")
    folder = Path(path).resolve().parent
    stood_in = len({v.label for v in visuals if v.missing and (v.kind != "mesh" or v.path is not None)})
    instead = (
        f"{stood_in} link{'s' if stood_in > 1 else ''} drawn with {'their' if stood_in > 1 else 'its'} collision shapes instead"
        if stood_in
        else f"the links are drawn without {'them' if len(names) > 1 else 'it'}"
    )
    return (
        f"kanerobot: {len(names)} mesh file{'s' if len(names) > 1 else ''} of {Path(path).name} not found on disk ({shown}), "
        f"looked for under {folder} (package://NAME/... in a folder NAME there or above); {instead}"
    )


def _floats(text, count, default):
    """``count`` numbers of an attribute, ``default`` when it is absent; ValueError saying what is wrong otherwise."""
    if text is None:
        return default
    try:
        values = tuple(float(x) for x in text.split())
    except ValueError:
        values = ()
    if len(values) != count:
        raise ValueError(f"{text!r} is not {count} numbers separated by spaces")
    if not all(np.isfinite(values)):  # as the URDF reader refuses them: a NaN pose would reach the page
        raise ValueError(f"{text!r} has a number that is not finite: give finite numbers")
    return values


def _float(element, key, default):
    return _floats(element.get(key), 1, (default,))[0]


def _origin(element):
    T = np.eye(4)
    if element is not None:
        T[:3, :3] = np.array(rpy_matrix(*_floats(element.get("rpy"), 3, (0.0, 0.0, 0.0))), dtype=float)
        T[:3, 3] = _floats(element.get("xyz"), 3, (0.0, 0.0, 0.0))
    return T


def _rgba(element):
    colour = element.find("color")
    return _floats(colour.get("rgba"), 4, None) if colour is not None else None


def _shape(geometry, folder):
    """``(kind, size, path, missing)`` of a ``<geometry>``, None when it has none the viewer draws."""
    if geometry is None:
        return None
    for child in geometry:
        if child.tag == "box":
            return "box", _floats(child.get("size"), 3, (0.1, 0.1, 0.1)), None, None
        if child.tag == "cylinder":
            return "cylinder", (_float(child, "radius", 0.05), _float(child, "length", 0.1)), None, None
        if child.tag == "sphere":
            return "sphere", (_float(child, "radius", 0.05),), None, None
        if child.tag == "mesh":
            name = child.get("filename", "")
            found = _mesh_file(name, folder)
            return "mesh", _floats(child.get("scale"), 3, (1.0, 1.0, 1.0)), found, None if found else name
    return None


def _mesh_file(name, folder):
    """The file a mesh ``filename`` names, looked for on disk only (None when absent)."""
    if name.startswith("package://"):
        package, _, rest = name[len("package://") :].partition("/")
        # ROS resolves a package by name; without ROS, the package is a folder beside or above the URDF
        candidates = [parent / package / rest for parent in (folder, *folder.parents)]
        candidates.append(folder / rest)
    elif name.startswith("file://"):
        candidates = [Path(name[len("file://") :])]
    else:
        candidates = [folder / name]
    return next((c for c in candidates if c.is_file()), None)
