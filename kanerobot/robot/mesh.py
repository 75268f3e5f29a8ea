"""Triangle meshes and the mass properties MuJoCo gives them: STL files read safely, volume, centre and inertia.

A mesh is vertices (n x 3) and triangles (m x 3 indices into them).
:func:`read_stl` reads a binary or an ASCII STL file (its bytes: the caller
chooses which file may be read), merging the repeated vertices as MuJoCo
does; :func:`mesh_inertia` computes the mesh's volume (or area), centre and
inertia per unit density exactly as MuJoCo's compiler does (``mjCMesh``,
MuJoCo 3.x and 4.0), for each ``<mesh inertia>`` mode:

- ``legacy`` (MuJoCo's default): the union of the pyramids from the area
  centroid of the faces to each face, every pyramid counted positive (a
  non-convex mesh is over-counted): the centre from those pyramids, then the
  inertia and the volume from the pyramids with their apex at that centre;
- ``exact``: the same pyramids with their signs (the divergence theorem: the
  solid's exact integrals), for a closed mesh whose faces turn outwards;
- ``convex``: ``exact`` on the mesh's convex hull;
- ``shell``: the mass on the surface (the measure is the area).

MuJoCo then diagonalises the inertia by Jacobi rotations that stop once
the next rotation is below about 1e-7 rad: the inertias of its model may
differ from these exact integrals by about 1e-7 of their size (measured on
MuJoCo 4.0: 1e-11 on the mass matrix of dm_control's dog).  The convex
hull (``convex``, and a mesh given by its vertices only) is qhull's, through
:class:`scipy.spatial.ConvexHull`, as MuJoCo's.

The vertices are first moved as ``<mesh refpos refquat scale>`` say:
``refpos`` subtracted, turned by the conjugate of ``refquat``, then scaled
axis by axis (a scale that mirrors the mesh reverses its faces, so that they
still turn outwards).

A mistake in a file is a :class:`~kanerobot.errors.RobotFileError` naming
the file (and the line of an ASCII file); a mesh without a volume (or an
area), or whose inertia is not a rigid body's, is a
:class:`~kanerobot.errors.DescriptionError`.

Examples
--------
A unit cube of 12 triangles: volume 1, centre (0.5, 0.5, 0.5), moments 1/6:

>>> corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
>>> faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
...          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
>>> cube = mesh_inertia(corners, faces)
>>> round(cube.measure, 12), np.round(cube.centre, 12).tolist(), np.round(np.diag(cube.inertia), 12).tolist()
(1.0, [0.5, 0.5, 0.5], [0.166666666667, 0.166666666667, 0.166666666667])
"""

import math
import os
import struct
from dataclasses import dataclass

import numpy as np

from kanerobot.errors import DescriptionError, RobotFileError

__all__ = ["MODES", "MeshInertia", "mesh_inertia", "read_obj", "read_stl"]

#: MuJoCo's ``<mesh inertia>`` modes (``legacy`` is its default).
MODES = ("legacy", "exact", "convex", "shell")
#: MuJoCo's smallest value of a denominator (``mjMINVAL``): smaller faces have no area, smaller meshes no volume.
MINVAL = 1e-15
#: The largest coordinate MuJoCo reads from an STL file (``2**30``).
_STL_BOUND = 2.0**30
#: MuJoCo's tolerances on the triangle inequality of a mesh's principal moments.
_INEQUALITY_RTOL, _INEQUALITY_ATOL = 1e-6, 1e-9


@dataclass(frozen=True)
class MeshInertia:
    """A mesh's mass properties per unit density.

    Attributes
    ----------
    measure : float
        The volume (m^3; the area, m^2, for ``shell``): the mass is the density times it.
    centre : ndarray, shape (3,)
        The centre of mass, in the mesh's coordinates (after ``refpos``, ``refquat`` and ``scale``).
    inertia : ndarray, shape (3, 3)
        The inertia about the centre per unit density (times the density: kg m^2), in the mesh's axes.
    """

    measure: float
    centre: np.ndarray
    inertia: np.ndarray


# ------------------------------------------------------------------ STL
def read_stl(data: bytes, path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The vertices and triangles of an STL file, repeated vertices merged (as MuJoCo does).

    Parameters
    ----------
    data : bytes
        The file's bytes: binary STL (80 bytes of header, a 32-bit count n, then n records of 50 bytes)
        or ASCII STL (``solid``, then ``facet`` .. ``outer loop`` .. three ``vertex x y z`` .. ``endfacet``).
    path : str or Path
        The file, named in errors.

    Returns
    -------
    vertices : ndarray, shape (n, 3)
        float64 values of the file's single-precision numbers (an ASCII file's are rounded to single
        precision too, as a binary file holds them).
    faces : ndarray of int, shape (m, 3)
        Each triangle's vertices (indices into ``vertices``), corners in the file's order.

    Raises
    ------
    RobotFileError
        A file that is neither, a truncated one, a number that is not finite or larger than 2**30.

    Examples
    --------
    >>> text = b"solid t\\nfacet normal 0 0 1\\nouter loop\\nvertex 0 0 0\\nvertex 1 0 0\\nvertex 0 1 0\\nendloop\\nendfacet\\nendsolid t\\n"
    >>> vertices, faces = read_stl(text, "t.stl")
    >>> vertices[faces].tolist()
    [[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]
    """
    if len(data) >= 84:
        (count,) = struct.unpack_from("<I", data, 80)
        if count >= 1 and len(data) == 84 + 50 * count:
            records = np.frombuffer(data, dtype=np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("flags", "<u2")]),
                                    count=count, offset=84)  # fmt: skip
            corners = records["corners"].reshape(-1, 3)
            _check_bounds(corners, path, None)
            return _merged(corners)
    if data.lstrip()[:5].lower() == b"solid":
        return _ascii_stl(data, path)
    if len(data) < 84:
        raise RobotFileError(path, None, f"not an STL file: {len(data)} bytes, shorter than a binary STL's header (84 bytes), "
                                         f"and no ASCII 'solid'")  # fmt: skip
    (count,) = struct.unpack_from("<I", data, 80)
    raise RobotFileError(path, None, f"a truncated or damaged binary STL file: its header counts {count} triangles, "
                                     f"{84 + 50 * count} bytes, but it has {len(data)} bytes")  # fmt: skip


def _ascii_stl(data, path):
    corners = []
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise RobotFileError(path, None, "an ASCII STL file (it begins with 'solid') holds bytes that are not ASCII") from None
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words or words[0].lower() != "vertex":
            continue
        try:
            corners.append([float(word) for word in words[1:]])
        except ValueError:
            corners.append([])
        if len(corners[-1]) != 3:
            raise RobotFileError(path, number, f"'{line.strip()}': a vertex is 3 numbers")
        _check_bounds(np.array(corners[-1:]), path, number)
    if not corners or len(corners) % 3:
        raise RobotFileError(path, None, f"an ASCII STL file with {len(corners)} vertices: each facet is 3 vertices, and it "
                                         f"needs at least one")  # fmt: skip
    return _merged(np.array(corners, dtype=np.float32))


def _check_bounds(corners, path, line):
    """MuJoCo's bounds on an STL file's numbers: finite, at most 2**30 (``line``: an ASCII file's, else None)."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(corners) <= _STL_BOUND).all(axis=1)
    if bad.any():
        where = "" if line else f" (triangle {int(np.argmax(bad)) // 3})"
        raise RobotFileError(path, line, f"a vertex{where} is not a finite number of at most 2**30 in size")


def _merged(corners):
    """``(vertices, faces)`` of three corners per triangle, equal vertices made one (``-0.0`` equals ``0.0``)."""
    vertices, index = np.unique(corners.astype(np.float64) + 0.0, axis=0, return_inverse=True)
    return vertices, index.reshape(-1, 3)


# ------------------------------------------------------------------ OBJ
def read_obj(data: bytes, path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray | None]:
    """The vertices and triangles of a Wavefront OBJ file, as MuJoCo reads them (tinyobjloader).

    Every ``v x y z`` is a vertex (single precision); the faces are the ``f`` lines of the file's first
    group (a ``g`` or ``o`` line after faces ends it: MuJoCo takes the first shape only), each index
    ``i``, ``i/t``, ``i//n`` or ``i/t/n`` (1-based; negative: from the last vertex read), a quad split
    along its shorter diagonal (as tinyobjloader).  No ``f`` line: the faces are None (the convex hull's).

    Parameters
    ----------
    data : bytes
    path : str or Path
        The file, named in errors.

    Returns
    -------
    vertices : ndarray, shape (n, 3)
    faces : ndarray of int, shape (m, 3), or None

    Raises
    ------
    RobotFileError
        ``path:line:`` a number that is not one, an index out of range, a face of fewer than 3 or more than 4 corners.

    Examples
    --------
    >>> vertices, faces = read_obj(b"v 0 0 0\\nv 1 0 0\\nv 1 1 0\\nv 0 1 0\\nf 1 2 3 4\\n", "square.obj")
    >>> faces.tolist()
    [[0, 1, 2], [0, 2, 3]]
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RobotFileError(path, None, "an OBJ file is text (UTF-8): this one is not") from None
    vertices: list[list[float]] = []
    polygons: list[tuple[int, list[int]]] = []  # (line, 0-based corners) of the first group
    ended = False
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "v":
            vertices.append(_obj_numbers(words[1:4], path, number, line))
        elif words[0] in ("g", "o"):
            ended = ended or bool(polygons)
        elif words[0] == "f" and not ended:
            polygons.append((number, [_obj_index(word, len(vertices), path, number) for word in words[1:]]))
    corners = np.array(vertices, dtype=np.float32).astype(np.float64).reshape(-1, 3)
    _check_bounds(corners, path, None)
    faces = [triangle for number, polygon in polygons for triangle in _obj_triangles(polygon, corners, path, number)]
    return corners, (np.array(faces, dtype=np.int64) if faces else None)


def _obj_numbers(words, path, number, line):
    try:
        values = [float(word) for word in words]
    except ValueError:
        values = []
    if len(values) != 3:
        raise RobotFileError(path, number, f"'{line.strip()}': a vertex is 'v x y z'")
    return values


def _obj_index(word, count, path, number):
    try:
        index = int(word.split("/", 1)[0])
    except ValueError:
        raise RobotFileError(path, number, f"'{word}' is not a vertex index (i, i/t, i//n or i/t/n)") from None
    if index == 0:
        raise RobotFileError(path, number, "vertex index 0: OBJ counts vertices from 1 (or from -1 backwards)")
    return index - 1 if index > 0 else count + index


def _obj_triangles(polygon, vertices, path, number):
    if len(polygon) not in (3, 4) or not all(0 <= i < len(vertices) for i in polygon):
        why = f"a face of {len(polygon)} corners: give triangles or quads" if len(polygon) not in (3, 4) else \
            f"a face names a vertex that does not exist (the file has {len(vertices)})"
        raise RobotFileError(path, number, why)
    if len(polygon) == 3:
        return [polygon]
    a, b, c, d = polygon
    if np.linalg.norm(vertices[a] - vertices[c]) <= np.linalg.norm(vertices[b] - vertices[d]):
        return [[a, b, c], [a, c, d]]
    return [[a, b, d], [b, c, d]]


# -------------------------------------------------------------- inertia
def _quaternion_matrix(q):
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])  # fmt: skip


def _triangles(vertices, faces):
    """Each triangle's area, unit normal and centre (MuJoCo's: a face whose doubled area is below MINVAL has none)."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    cross = np.cross(b - a, c - a)
    length = np.linalg.norm(cross, axis=1)
    keep = length >= MINVAL
    normal = np.where(keep[:, None], cross / np.where(keep, length, 1.0)[:, None], cross)
    return np.where(keep, length / 2, 0.0), normal, (a + b + c) / 3


def _hull(vertices):
    """The convex hull's triangles, turned outwards (qhull, as MuJoCo)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(vertices)
    except (QhullError, ValueError) as exc:
        raise DescriptionError(f"its convex hull cannot be built (flat or too few vertices): {str(exc).splitlines()[0]}", key="mesh") from None
    faces = hull.simplices.copy()
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    inwards = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    faces[inwards] = faces[inwards][:, [0, 2, 1]]
    return faces


def _repeated_edge(vertices, faces):
    """A directed edge two faces share (their orientations disagree), or None; faces below MuJoCo's area are skipped."""
    area, _, _ = _triangles(vertices, faces)
    kept = faces[area > math.sqrt(MINVAL)]
    edges = np.concatenate([kept[:, [0, 1]], kept[:, [1, 2]], kept[:, [2, 0]]])
    unique, counts = np.unique(edges, axis=0, return_counts=True)
    return None if counts.max(initial=0) < 2 else tuple(int(i) for i in unique[np.argmax(counts)])


def mesh_inertia(vertices, faces=None, mode="legacy", scale=(1.0, 1.0, 1.0), refpos=(0.0, 0.0, 0.0), refquat=(1.0, 0.0, 0.0, 0.0)) -> MeshInertia:
    """A mesh's volume (or area), centre and inertia per unit density, as MuJoCo's compiler computes them.

    Parameters
    ----------
    vertices : array_like, shape (n, 3)
    faces : array_like of int, shape (m, 3), optional
        Triangles (counter-clockwise seen from outside); None: the convex hull's.
    mode : {'legacy', 'exact', 'convex', 'shell'}
        MuJoCo's ``<mesh inertia>`` (see the module's notes).
    scale : array_like, shape (3,)
    refpos : array_like, shape (3,)
    refquat : array_like, shape (4,)
        ``<mesh scale refpos refquat>`` (the quaternion w x y z, normalised here).

    Returns
    -------
    MeshInertia

    Raises
    ------
    DescriptionError
        ``exact`` with faces whose orientations disagree or a negative volume; a mesh without area or
        volume; principal moments that are not positive or break the triangle inequality (as MuJoCo).

    Examples
    --------
    A tetrahedron of the unit axes: volume 1/6, centre at a quarter of each axis.

    >>> tetra = mesh_inertia([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    >>> round(tetra.measure * 6, 12), np.round(tetra.centre, 12).tolist()
    (1.0, [0.25, 0.25, 0.25])
    """
    if mode not in MODES:
        raise DescriptionError(f"inertia mode {mode!r}: use one of {', '.join(MODES)}", key="mesh")
    vertices = np.array(vertices, dtype=float).reshape(-1, 3)
    scale = np.asarray(scale, dtype=float)
    faces = _hull(vertices) if faces is None or len(faces) == 0 else np.array(faces, dtype=np.int64).reshape(-1, 3)
    if np.prod(scale) < 0:
        faces = faces[:, [0, 2, 1]]  # mirrored: the faces still turn outwards
    if mode == "exact":
        edge = _repeated_edge(vertices, faces)
        if edge is not None:
            raise DescriptionError(f"faces have inconsistent orientations (two faces run from vertex {edge[0]} to vertex {edge[1]}; "
                                   f"'exact' needs a closed mesh whose faces turn outwards): fix the mesh, or use inertia=\"convex\"",
                                   key="mesh")  # fmt: skip
    vertices = (vertices - np.asarray(refpos, dtype=float)) @ _quaternion_matrix(refquat) * scale  # v -> R^T (v - refpos), then scaled
    area, _, centres = _triangles(vertices, faces)
    if area.sum() < MINVAL:
        raise DescriptionError("the mesh's surface area is too small (below 1e-15)", key="mesh")
    face_centre = (area @ centres) / area.sum()
    solid = _hull(vertices) if mode == "convex" else faces
    centre = _centre(vertices, solid, face_centre, mode, area, centres)
    measure, inertia = _second_moments(vertices - centre, solid, mode)
    _check_moments(np.linalg.eigvalsh(inertia)[::-1])
    return MeshInertia(float(measure), centre, inertia)


def _centre(vertices, faces, face_centre, mode, area, centres):
    """The centre of the pyramids from ``face_centre`` to each face (of the faces, for ``shell``)."""
    if mode == "shell":
        return face_centre  # the area-weighted centres of the faces (MuJoCo's pyramids from it give the same)
    area, normal, centres = _triangles(vertices, faces)
    volume = np.einsum("ij,ij->i", centres - face_centre, normal) * area / 3
    if mode == "legacy":
        volume = np.abs(volume)
    total = volume.sum()
    if total < MINVAL:
        why = "negative (its faces turn inwards)" if total < 0 else "too small (a flat or open mesh): try inertia=\"shell\""
        raise DescriptionError(f"the mesh's volume is {why}", key="mesh")
    return (volume @ (0.75 * centres + 0.25 * face_centre)) / total


def _second_moments(vertices, faces, mode):
    """``(measure, inertia)`` about the origin (the centre) from the pyramids with their apex there."""
    area, normal, centres = _triangles(vertices, faces)
    d, e, f = (vertices[faces[:, k]] for k in range(3))
    if mode == "shell":
        weight, divisor = area, 12.0
    else:
        weight, divisor = np.einsum("ij,ij->i", centres, normal) * area / 3, 20.0
        if mode == "legacy":
            weight = np.abs(weight)
    s = d + e + f
    # the second moments of a tetrahedron (apex at the origin) or a triangle: w/C (d d^T + e e^T + f f^T + s s^T)
    P = np.einsum("i,ij,ik->jk", weight / divisor, s, s) + sum(np.einsum("i,ij,ik->jk", weight / divisor, x, x) for x in (d, e, f))
    return weight.sum(), np.trace(P) * np.eye(3) - P


def _check_moments(moments):
    """MuJoCo's checks of a mesh's principal moments (decreasing): positive, and each at most the sum of the others."""
    if moments[2] <= 0:
        raise DescriptionError(f"the mesh's principal moments {moments.tolist()} are not all positive", key="mesh")
    for k in range(3):
        others = moments.sum() - moments[k]
        if others < moments[k] * (1 - _INEQUALITY_RTOL) - _INEQUALITY_ATOL:
            raise DescriptionError(f"the mesh's principal moments {moments.tolist()} break the triangle inequality A + B >= C", key="mesh")
