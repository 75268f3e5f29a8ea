"""The mass and inertia of MJCF bodies, for :mod:`kanerobot.robot.mjcf`'s reader: a body's ``<inertial>``, or its geoms'
(primitive shapes and meshes, as MuJoCo computes them), with ``<compiler boundmass boundinertia>`` applied.

:mod:`kanerobot.robot.mjcf` holds the reader (its notes give the whole mapping, inertias included) and calls
:func:`body_inertia` for each body and :func:`mesh_assets` for the ``<asset><mesh>`` elements; each function here takes
that reader (its ``numbers``, ``fail``, ``compiler``, ...) first.  The meshes' volumes, centres and inertias are
:func:`kanerobot.robot.mesh.mesh_inertia`'s.  The equalities (joint couplings, connect loops) are in
:mod:`kanerobot.robot.mjcf_equalities`.

Examples
--------
>>> from kanerobot.robot.mjcf import mjcf_from_text
>>> robot = mjcf_from_text('''<mujoco><worldbody><body name="cube">
...   <joint name="slider" type="slide"/><geom type="box" size="0.1 0.1 0.1" density="500"/>
... </body></worldbody></mujoco>''').robot
>>> round(robot.values["Mslider"], 12), round(robot.values["XXslider"], 12)  # 500 * 0.2**3 and m (0.2**2 + 0.2**2) / 12
(4.0, 0.026666666667)
"""

import math
from pathlib import Path

import numpy as np

from kanerobot.dynamics.parameters import rigid_sum
from kanerobot.errors import DescriptionError, RobotFileError
from kanerobot.robot.mesh import MODES as MESH_MODES
from kanerobot.robot.mesh import mesh_inertia, read_obj, read_stl
from kanerobot.robot.xmlfile import Element

__all__ = ["MINVAL", "body_inertia", "mesh_assets"]

#: The shapes whose mass and inertia MuJoCo computes from ``size`` (a mesh's needs its vertices).
SHAPES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")
#: The mesh files read, by extension and media type (MuJoCo's ``content_type``).
MESH_TYPES = {".stl": "model/stl", ".obj": "model/obj"}
MESH_READERS = {"model/stl": read_stl, "model/obj": read_obj}
#: MuJoCo's smallest mass of a moving body (``mjMINVAL``).
MINVAL = 1e-15


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


def body_inertia(reader, body, static=False):
    """``(m, J_O, MS)`` of a body about its origin in its axes, or None without mass.  A ``static`` body
    (welded to the world) never moves: a geom whose inertia is not computed adds nothing to it."""
    mode = reader.compiler["inertiafromgeom"]
    if body.inertial is not None and mode != "true":
        mass, centre, inertia = _inertial(reader, body)
    else:
        parts = []
        for element, attrib, kind, what, R, p, length in body.geoms if mode != "false" else ():
            part = _geom_inertia(reader, body, element, attrib, kind, what, R, p, length, static)
            if part is not None:
                parts.append(part)
        mass, J, MS = rigid_sum(parts)
        centre = MS / mass if mass > 0 else np.zeros(3)
        inertia = J - mass * (centre @ centre * np.eye(3) - np.outer(centre, centre))
    if mass == 0 and reader.compiler["boundmass"] == 0:
        return None
    return _bounded(reader, mass, centre, inertia)


def _inertial(reader, body):
    """``(m, centre of mass, inertia about it)`` of a body's ``<inertial>``, in the body's axes."""
    element = body.inertial
    attrib = element.attrib
    what = f"the <inertial> of body {body.name!r}"
    (mass,) = reader.numbers(element, attrib, "mass", 1, what)
    if mass < 0:
        reader.fail(element, f"{what}: mass=\"{attrib['mass']}\" < 0: give a mass >= 0")
    pos = reader.numbers(element, attrib, "pos", 3, what)
    if "fullinertia" in attrib and "diaginertia" in attrib:
        reader.fail(element, f"{what}: diaginertia and fullinertia both given: keep one")
    if "fullinertia" in attrib:
        if any(key in attrib for key in ("quat", "axisangle", "euler", "xyaxes", "zaxis")):
            reader.fail(element, f"{what}: fullinertia takes no orientation (it is in the body's axes): remove it")
        xx, yy, zz, xy, xz, yz = reader.numbers(element, attrib, "fullinertia", 6, what)
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif "diaginertia" in attrib:
        R = reader.orientation(element, attrib, what)
        inertia = R @ np.diag(reader.numbers(element, attrib, "diaginertia", 3, what)) @ R.T
    else:
        reader.fail(element, f"{what} has neither diaginertia=\"...\" nor fullinertia=\"...\": give the inertia about the centre of mass")
    return mass, pos, inertia


def _bounded(reader, mass, centre, inertia):
    """``(m, J_O, MS)`` with ``<compiler boundmass boundinertia>`` applied to the mass and principal moments."""
    mass = max(mass, reader.compiler["boundmass"])
    if reader.compiler["boundinertia"] > 0:
        moments, axes = np.linalg.eigh(inertia)
        inertia = axes @ np.diag(np.maximum(moments, reader.compiler["boundinertia"])) @ axes.T
    c = np.asarray(centre, dtype=float)
    return mass, inertia + mass * (c @ c * np.eye(3) - np.outer(c, c)), mass * c


def _geom_inertia(reader, body, element, attrib, kind, what, R, p, length, static=False):
    """``(R, p, (m, J, 0))`` of a geom's solid, or None for one that adds no mass."""
    low, high = reader.compiler["inertiagrouprange"]
    group = reader.number(element, attrib, "group", what, 0.0)
    if not low <= group <= high:
        return None
    if "mass" in attrib:
        mass = reader.number(element, attrib, "mass", what, 0.0)
    else:
        density = reader.number(element, attrib, "density", what, 1000.0)
        if density == 0:
            return None
        mass = None
    if mass == 0:
        return None
    if kind not in SHAPES and static:
        return None
    if kind == "mesh":
        return _mesh_geom_inertia(reader, element, attrib, what, R, p, length, mass)
    if "mesh" in attrib:
        reader.fail(element, f"{what}: a {kind} fitted to mesh=\"{attrib['mesh']}\" is not supported: give the geom its size "
                    f"(without mesh=...), or type=\"mesh\"")  # fmt: skip
    if kind not in SHAPES:
        reader.fail(element, f"{what} is a {kind}, whose mass and inertia kanerobot does not compute: give body {body.name!r} an "
                    f"<inertial>, or this geom mass=\"0\" (or density=\"0\") if it is visual only")  # fmt: skip
    if reader.flag(element, attrib, "shellinertia", what, "false") == "true":
        reader.fail(element, f"{what}: shellinertia=\"true\" (a hollow shell) is not supported: give body {body.name!r} an <inertial>")
    size = reader.numbers(element, attrib, "size", (1, 2, 3), what, (0, 0, 0))
    size = np.concatenate([size, np.zeros(3 - len(size))])
    if length is not None:
        size[1 if kind in ("capsule", "cylinder") else 2] = length / 2
        if kind == "sphere":
            reader.fail(element, f"{what}: a sphere takes no fromto: give pos and size")
    if any(size[:_SIZES[kind]] <= 0):
        reader.fail(element, f"{what}: size=\"{attrib.get('size', '')}\" must give {_SIZES[kind]} positive number"
                    f"{'s' * (_SIZES[kind] > 1)} for a {kind}")  # fmt: skip
    if mass is None:
        mass = reader.number(element, attrib, "density", what, 1000.0) * _volume(kind, size)
    return R, p, (mass, np.diag(_shape_inertia(kind, size, mass)), np.zeros(3))


def mesh_assets(reader):
    """``{name: (element, attributes)}`` of the ``<asset><mesh>`` elements (a mesh without a name is named
    after its file, as MuJoCo does); nothing is read yet."""
    out: dict[str, tuple[Element, dict]] = {}
    for block in reader.root.findall("asset"):
        for element in block.findall("mesh"):
            attrib = reader.resolved(element, "main")
            name = attrib.get("name", "").strip() or Path(attrib.get("file", "").replace("\\", "/").strip()).stem
            if not name:
                reader.fail(element, "a <mesh> has neither name=\"...\" nor file=\"...\": name it")
            if name in out:
                reader.fail(element, f"<mesh name=\"{name}\"> is defined twice (first at line {out[name][0].line}): rename one")
            out[name] = (element, attrib)
    return out


def _mesh_geom_inertia(reader, element, attrib, what, R, p, length, mass):
    """``(R, centre, (m, J, 0))`` of a mesh geom (its mesh's volume or area times its density, or its mass),
    placed as MuJoCo places it: the mesh's centre in the geom's frame."""
    if length is not None:
        reader.fail(element, f"{what}: a mesh geom takes no fromto: give pos and an orientation")
    if reader.flag(element, attrib, "shellinertia", what, "false") == "true":
        reader.fail(element, f"{what}: shellinertia=\"true\" on a mesh geom: MuJoCo refuses it; write inertia=\"shell\" on its <mesh>")
    name = attrib.get("mesh", "").strip()
    if name not in reader.meshes:
        known = ", ".join(sorted(reader.meshes)[:8]) or "none"
        reader.fail(element, f"{what}: mesh=\"{name}\" names no <mesh> of <asset> (meshes: {known}): give the name of one")
    if name not in reader.mesh_inertias:
        reader.mesh_inertias[name] = _mesh_inertia(reader, *reader.meshes[name])
    mesh = reader.mesh_inertias[name]
    if mass is None:
        mass = reader.number(element, attrib, "density", what, 1000.0) * mesh.measure
    elif mesh.measure <= 1e-14:
        return None  # MuJoCo gives no mass to a geom whose mass is written but whose volume is below mjEPS
    return R, p + R @ mesh.centre, (mass, mass / mesh.measure * mesh.inertia, np.zeros(3))


def _mesh_inertia(reader, element, attrib):
    """The volume or area, centre and inertia per unit density of a ``<mesh>`` (its file or its
    ``vertex`` and ``face``), moved by its ``refpos refquat scale``."""
    name = attrib.get("name", "").strip()
    what = f"<mesh{' name=' + repr(name) if name else ''}{' file=' + repr(attrib['file'].strip()) if 'file' in attrib else ''}>"
    for key in ("builtin", "plugin"):
        if key in attrib or element.find(key) is not None:
            reader.fail(element, f"{what}: a {key} mesh (generated by MuJoCo) is not supported: give a file or vertex=\"...\"")
    mode = reader.flag(element, attrib, "inertia", what, "legacy", MESH_MODES)
    scale = reader.numbers(element, attrib, "scale", 3, what, (1, 1, 1))
    refpos = reader.numbers(element, attrib, "refpos", 3, what, (0, 0, 0))
    refquat = reader.numbers(element, attrib, "refquat", 4, what, (1, 0, 0, 0))
    if np.linalg.norm(refquat) < MINVAL:
        reader.fail(element, f"{what}: refquat=\"{attrib['refquat']}\" is zero: give a rotation (w x y z)")
    if mode == "convex" and reader.number(element, attrib, "maxhullvert", what, -1.0) != -1:
        reader.fail(element, f"{what}: maxhullvert with inertia=\"convex\" (a hull qhull stops early) is not supported: remove maxhullvert")
    if "file" in attrib:
        if "vertex" in attrib:
            reader.fail(element, f"{what}: both file and vertex give its vertices: keep one")
        vertices, faces = _mesh_file(reader, element, attrib, what)
    else:
        vertices, faces = _inline_mesh(reader, element, attrib, what)
    try:
        return mesh_inertia(vertices, faces, mode, scale, refpos, refquat)
    except DescriptionError as exc:
        reader.fail(element, f"{what}: {exc}")


def _mesh_file(reader, element, attrib, what):
    """The vertices and faces of a mesh's STL or OBJ file, found as MuJoCo finds it (``<compiler meshdir assetdir
    strippath>``), read only inside the model's folder."""
    name = attrib["file"].strip()
    if "://" in name or name.startswith(("//", "\\\\")):
        reader.fail(element, f"{what} is a URL: nothing is fetched from the network; copy the file next to the model")
    if reader.compiler["strippath"] == "true":
        name = name.replace("\\", "/").rsplit("/", 1)[-1]
    if Path(name).is_absolute():
        reader.fail(element, f"{what} is an absolute path: give it relative to the model's folder {reader.folder} (or its meshdir)")
    target = (reader.folder / reader.compiler["meshdir"] / name).resolve()
    if not target.is_relative_to(reader.folder):
        reader.fail(element, f"{what}: {target} is outside the model's folder {reader.folder}: only files in it (or below) are "
                    f"read; copy the file next to the model")  # fmt: skip
    kind = attrib.get("content_type", "").strip() or MESH_TYPES.get(target.suffix.lower(), target.suffix)
    if kind not in MESH_READERS:
        reader.fail(element, f"{what}: a {kind or 'file without extension'} mesh is not read (kanerobot reads STL and OBJ "
                    f"meshes): convert it to STL")  # fmt: skip
    if not target.is_file():
        reader.fail(element, f"{what}: no such file {target}")
    try:
        data = target.read_bytes()
    except OSError as exc:
        reader.fail(element, f"{what}: cannot read {target}: {exc.strerror}")
    try:
        return MESH_READERS[kind](data, target)
    except RobotFileError as exc:
        reader.fail(element, f"{what}: {exc}")


def _inline_mesh(reader, element, attrib, what):
    """A mesh's ``vertex`` (single precision, as MuJoCo keeps them) and ``face`` (None: the convex hull's)."""
    if "vertex" not in attrib:
        reader.fail(element, f"{what} has neither file=\"...\" nor vertex=\"...\": give one")
    vertices = reader.numbers(element, attrib, "vertex", _count(reader, element, attrib, "vertex", what, 12), what).reshape(-1, 3)
    vertices = vertices.astype(np.float32).astype(float)
    if "face" not in attrib:
        return vertices, None
    faces = reader.numbers(element, attrib, "face", _count(reader, element, attrib, "face", what, 3), what)
    if np.any(faces != np.round(faces)) or np.any(faces < 0) or np.any(faces >= len(vertices)):
        reader.fail(element, f"{what}: face=\"...\" holds a number that is not the index of a vertex (0 to {len(vertices) - 1})")
    return vertices, faces.astype(np.int64).reshape(-1, 3)


def _count(reader, element, attrib, key, what, least):
    """The number of numbers in ``attrib[key]``: a multiple of 3, at least ``least``."""
    count = len(attrib[key].split())
    if count < least or count % 3:
        reader.fail(element, f"{what}: {key}=\"...\" holds {count} numbers: give 3 per {'vertex' if key == 'vertex' else 'triangle'}"
                    f"{', at least 4 vertices' * (key == 'vertex')}")  # fmt: skip
    return count
