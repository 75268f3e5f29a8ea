"""Mesh geoms that give MJCF bodies their mass (kanerobot/robot/mesh.py), against MuJoCo and closed forms.

A random convex mesh (the hull of random points) and a non-convex U-shaped
prism, written as binary STL files, are the geoms of a small random tree
(fixed and floating) with every ``<mesh inertia>`` mode (``legacy``, the
default, over-counts the U's volume), ``scale`` (mirroring too), ``refpos``,
``refquat``, a default class, ``meshdir``, a ``mass`` and a mesh given by
its vertices only: the mass matrix, the bias forces and the inverse
dynamics equal MuJoCo's ``mj_fullM``, ``qfrc_bias`` and ``mj_inverse``.  A
box mesh has a box's closed-form volume and inertia (solid and shell), and
loads as the same robot as a ``type="box"`` geom.  Each malformed mesh is one
line naming the element's file and line.  dm_control's dog (78 bodies of
bone meshes) equals MuJoCo in the long group.

MuJoCo diagonalises each mesh's inertia by Jacobi rotations that stop when
the next rotation is below about 1e-7 rad: its model's mesh inertias differ
from the exact integrals (ours) by up to about 1e-7 of their size.  The
meshes here are small (inertias below 1e-3 kg m^2), as a robot's are, so
that this stays below the 1e-9 of the comparison; the masses and centres
are compared to 1e-12, the inertias of the large meshes to 1e-6.
"""

import dataclasses
import importlib.util
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from ball_robots import random_state

import kanerobot as kr
from kanerobot.errors import KaneRobotWarning
from kanerobot.robot.mesh import mesh_inertia, read_stl
from kanerobot.robot.mjcf import parse_mjcf

mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo is the reference of the MJCF reader)")
from mujoco_reference import MujocoReference, worst_errors  # noqa: E402 (needs mujoco)

TOL = 1e-9


# ------------------------------------------------------------------ meshes
def write_stl(path, triangles, ascii=False):
    """Triangles (m x 3 x 3) as a binary (or ASCII) STL file."""
    triangles = np.asarray(triangles, dtype=np.float32)
    if ascii:
        facets = "".join("facet normal 0 0 0\n outer loop\n" + "".join(f"  vertex {x!r} {y!r} {z!r}\n" for x, y, z in t.tolist())
                         + " endloop\nendfacet\n" for t in triangles)  # fmt: skip
        Path(path).write_text(f"solid mesh\n{facets}endsolid mesh\n")
        return
    records = b"".join(struct.pack("<3f", 0, 0, 0) + t.tobytes() + b"\0\0" for t in triangles)
    Path(path).write_bytes(b"\0" * 80 + struct.pack("<I", len(triangles)) + records)


def hull_triangles(points):
    """The convex hull of ``points`` as triangles turned outwards (scipy's qhull, not the reader's)."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(points)
    triangles = points[hull.simplices]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    inwards = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0
    triangles[inwards] = triangles[inwards][:, [0, 2, 1]]
    return triangles


def prism_triangles(outline, triangulation, height):
    """A prism over a polygon (counter-clockwise ``outline``, its ``triangulation``), faces turned outwards."""
    outline = np.asarray(outline, dtype=float)
    out = []
    for a, b, c in triangulation:
        out.append([[*outline[a], 0], [*outline[c], 0], [*outline[b], 0]])
        out.append([[*outline[a], height], [*outline[b], height], [*outline[c], height]])
    for p, q in zip(outline, np.roll(outline, -1, axis=0)):
        out += [[[*p, 0], [*q, 0], [*q, height]], [[*p, 0], [*q, height], [*p, height]]]
    return np.array(out)


#: A U (non-convex: legacy over-counts it), 3 x 3 with a 1 x 2 notch, and its triangles.
U_OUTLINE = [[0, 0], [3, 0], [3, 3], [2, 3], [2, 1], [1, 1], [1, 3], [0, 3]]
U_TRIANGLES = [(0, 1, 4), (0, 4, 5), (1, 2, 4), (2, 3, 4), (0, 5, 7), (5, 6, 7)]


def box_triangles(half, centre=(0, 0, 0)):
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half + centre
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4],
             [1, 5, 7], [1, 7, 3]]  # fmt: skip
    return corners[faces]


def _v(x):
    return " ".join(f"{float(v):.17g}" for v in np.ravel(x))


def no_friction(values):
    return {name: (0.0 if name.startswith(("FV", "FS")) else value) for name, value in values.items()}


# --------------------------------------------------------- random trees
def mesh_tree(folder, seed, floating):
    """A random tree whose bodies take their mass from meshes (STL files under ``folder/parts``); its MJCF path."""
    rng = np.random.default_rng(seed)
    parts = Path(folder) / "parts"
    parts.mkdir(exist_ok=True)
    write_stl(parts / "hull.stl", hull_triangles(rng.normal(size=(25, 3)) * [0.03, 0.02, 0.025]))
    write_stl(parts / "u.stl", prism_triangles(np.array(U_OUTLINE) * 0.03, U_TRIANGLES, 0.04))
    write_stl(parts / "notch.stl", prism_triangles(np.array(U_OUTLINE) * 0.02, U_TRIANGLES, 0.05))
    quat = lambda: f'quat="{_v(rng.normal(size=4))}"'  # noqa: E731
    pos = lambda: f'pos="{_v(rng.uniform(-0.1, 0.1, 3))}"'  # noqa: E731
    tetra = rng.uniform(-0.05, 0.05, (5, 3))
    root = '<freejoint name="root"/>' if floating else f'<joint name="h0" axis="{_v(rng.normal(size=3))}"/>'
    text = f"""<mujoco model="meshes{seed}">
  <compiler angle="radian" meshdir="parts"/>
  <default>
    <mesh scale="1.2 1.2 1.2"/>
    <default class="bone"><geom type="mesh" density="{rng.uniform(200, 1000):.17g}" group="1"/></default>
  </default>
  <asset>
    <mesh name="hull" file="hull.stl"/>
    <mesh name="hull_convex" file="hull.stl" inertia="convex" scale="1 1 1"/>
    <mesh name="u" file="u.stl" {quat().replace("quat", "refquat")} refpos="{_v(rng.uniform(-0.05, 0.05, 3))}"/>
    <mesh name="u_exact" file="u.stl" inertia="exact" scale="{_v(rng.uniform(0.5, 1.5, 3) * [-1, 1, 1])}"/>
    <mesh name="u_convex" file="u.stl" inertia="convex"/>
    <mesh name="shell" file="hull.stl" inertia="shell"/>
    <mesh file="notch.stl" inertia="shell" scale="0.7 0.7 0.7"/>
    <mesh name="tetra" vertex="{_v(tetra)}"/>
  </asset>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body name="a" {pos()} {quat()}>
      {root}
      <geom class="bone" mesh="hull" {pos()} {quat()}/>
      <body name="b" {pos()} {quat()}>
        <joint name="h1" {pos()} axis="{_v(rng.normal(size=3))}"/>
        <geom class="bone" mesh="u" {pos()} euler="{_v(rng.uniform(-3, 3, 3))}"/>
        <geom type="box" size="0.02 0.03 0.04" {pos()}/>
        <body name="c" {pos()}>
          <joint name="ball" type="ball" {pos()}/>
          <geom type="mesh" mesh="u_exact" mass="{rng.uniform(0.05, 0.2):.17g}" {pos()} {quat()}/>
          <geom type="mesh" mesh="hull_convex" {pos()}/>
          <body name="d" {pos()} {quat()}>
            <joint name="s" type="slide" axis="{_v(rng.normal(size=3))}"/>
            <geom type="mesh" mesh="shell" density="3" {pos()} {quat()}/>
            <geom type="mesh" mesh="u_convex" {pos()}/>
            <geom type="mesh" mesh="tetra" {pos()}/>
            <body name="e" {pos()}>
              <joint name="h2" axis="{_v(rng.normal(size=3))}"/>
              <geom type="mesh" mesh="u" density="5" class="bone"/>
              <geom type="mesh" mesh="notch" density="40" {pos()}/>
              <geom type="mesh" mesh="hull" group="6"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
    path = Path(folder) / "meshes.xml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def mesh_pair(request, tmp_path_factory):
    """``(parsed, MuJoCo model, numeric model)`` of a random tree of meshes."""
    path = mesh_tree(tmp_path_factory.mktemp("meshes"), 3, request.param)
    parsed = parse_mjcf(path)
    fn = kr.derive(parsed.robot).numeric(no_friction(parsed.robot.values), backend="numpy")
    return parsed, mujoco.MjModel.from_xml_path(str(path)), fn


def test_random_mesh_trees_equal_mujoco(mesh_pair):
    parsed, model, fn = mesh_pair
    robot = parsed.robot
    assert robot.dof == model.nv == (12 if robot.floating else 7)
    rng = np.random.default_rng(3)
    states = [random_state(robot, rng) for _ in range(3)]
    assert max(worst_errors(fn, MujocoReference(parsed, model), states)) < TOL


def test_mesh_masses_and_centres_are_mujocos(mesh_pair):
    """Each body's mass is MuJoCo's ``body_mass``; a free root's centre of mass its ``body_ipos``."""
    parsed, model, _ = mesh_pair
    values, stems = parsed.robot.values, parsed.robot.stems
    for label, body in parsed.body_names.items():
        if label != "0":
            assert values["M" + stems[label]] == pytest.approx(model.body(body).mass[0], rel=1e-12, abs=0), body
    if parsed.robot.floating:
        stem = stems["0"]
        ms = np.array([values[key + stem] for key in ("MX", "MY", "MZ")])
        assert values["M" + stem] == pytest.approx(model.body("a").mass[0], rel=1e-12, abs=0)
        np.testing.assert_allclose(ms / values["M" + stem], model.body("a").ipos, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mode", ["legacy", "exact", "convex", "shell"])
def test_mesh_integrals_are_mujocos(mode, tmp_path, monkeypatch):
    """A large U (3 x 3 x 1, moved, turned, mirrored) alone in a body: MuJoCo's mass and centre to 1e-12,
    its inertia to 1e-6 (MuJoCo's own diagonalisation, see the module's notes); legacy over-counts."""
    monkeypatch.chdir(tmp_path)
    triangles = prism_triangles(U_OUTLINE, U_TRIANGLES, 1.0)
    write_stl(tmp_path / "u.stl", triangles)
    moves = 'scale="0.5 -2 1.3" refpos="0.1 0.2 -0.3" refquat="0.3 0.5 -0.2 0.7"'
    model = mujoco.MjModel.from_xml_string(f'<mujoco><asset><mesh name="m" file="u.stl" inertia="{mode}" {moves}/></asset>'
                                           f'<worldbody><body><freejoint/><geom type="mesh" mesh="m" density="1"/></body>'
                                           f'</worldbody></mujoco>')  # fmt: skip
    vertices, faces = read_stl((tmp_path / "u.stl").read_bytes(), "u.stl")
    ours = mesh_inertia(vertices, faces, mode, scale=(0.5, -2, 1.3), refpos=(0.1, 0.2, -0.3), refquat=(0.3, 0.5, -0.2, 0.7))
    assert ours.measure == pytest.approx(model.body_mass[1], rel=1e-12)
    np.testing.assert_allclose(ours.centre, model.body_ipos[1], rtol=0, atol=1e-12)
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, model.body_iquat[1])
    R = R.reshape(3, 3)
    theirs = R @ np.diag(model.body_inertia[1]) @ R.T
    assert np.abs(ours.inertia - theirs).max() < 1e-6 * np.abs(theirs).max()
    exact = mesh_inertia(vertices, faces, "exact").measure
    assert exact == pytest.approx(7.0, rel=1e-12)  # the U's own volume
    assert mesh_inertia(vertices, faces, "legacy").measure > exact + 1  # pyramids from the area centroid, all counted positive
    assert mesh_inertia(vertices, faces, "convex").measure == pytest.approx(9.0, rel=1e-12)  # its hull: the 3 x 3 square


def test_box_mesh_closed_form(tmp_path):
    """A box mesh (half sizes a b c, off the origin): volume 8abc, inertia V/3 (b^2 + c^2, ..); its shell the
    six faces' integrals; in a body it is the same robot as a type="box" geom."""
    a, b, c = 0.375, 0.25, 0.125  # exact in single precision, as an STL file holds them
    centre = np.array([0.5, -0.25, 0.75])
    triangles = box_triangles([a, b, c], centre)
    vertices = triangles.reshape(-1, 3)
    faces = np.arange(len(vertices)).reshape(-1, 3)
    volume = 8 * a * b * c
    for mode in ("legacy", "exact", "convex"):
        solid = mesh_inertia(vertices, faces, mode)
        assert solid.measure == pytest.approx(volume, rel=1e-13)
        np.testing.assert_allclose(solid.centre, centre, rtol=0, atol=1e-14)
        np.testing.assert_allclose(solid.inertia, volume / 3 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]), rtol=0, atol=1e-15)
    # the shell: faces normal to x (area 4bc each) hold x^2 = a^2, y^2 averaging b^2/3, ..
    xx = 2 * (4 * b * c * a * a + (4 * a * b + 4 * a * c) * a * a / 3)
    yy = 2 * (4 * a * c * b * b + (4 * a * b + 4 * b * c) * b * b / 3)
    zz = 2 * (4 * a * b * c * c + (4 * a * c + 4 * b * c) * c * c / 3)
    shell = mesh_inertia(vertices, faces, "shell")
    assert shell.measure == pytest.approx(8 * (a * b + b * c + c * a), rel=1e-13)
    np.testing.assert_allclose(shell.inertia, np.diag([yy + zz, xx + zz, xx + yy]), rtol=0, atol=1e-15)
    write_stl(tmp_path / "box.stl", triangles)
    q = np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2])
    w, x, y, z = q
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])  # fmt: skip
    pos = np.array([0.1, 0.0, 0.2])
    body = ('<mujoco><asset><mesh name="box" file="box.stl"/></asset><worldbody><body name="l"><joint name="j" axis="0 1 1"/>'
            '{}</body></worldbody></mujoco>')  # fmt: skip
    (tmp_path / "mesh.xml").write_text(body.format(f'<geom type="mesh" mesh="box" pos="{_v(pos)}" quat="{_v(q)}" density="700"/>'))
    (tmp_path / "box.xml").write_text(body.format(f'<geom type="box" size="{a} {b} {c}" pos="{_v(pos + R @ centre)}" quat="{_v(q)}" '
                                                  f'density="700"/>'))  # fmt: skip
    meshed, boxed = kr.load(tmp_path / "mesh.xml").values, kr.load(tmp_path / "box.xml").values
    assert meshed["Mj"] == pytest.approx(700 * volume, rel=1e-13)
    assert meshed.keys() == boxed.keys() and all(abs(meshed[k] - boxed[k]) < 1e-13 for k in meshed)


def obj_text(vertices, faces, heads=None):
    """An OBJ file: ``heads`` maps a face's index to the lines written before it (``g``, ``o``, ``usemtl``)."""
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in np.asarray(vertices, dtype=np.float32).astype(float).tolist()]
    for k, face in enumerate(faces):
        lines += (heads or {}).get(k, []) + ["f " + " ".join(face)]
    return "\n".join(lines) + "\n"


def test_obj_meshes_are_mujocos(tmp_path, monkeypatch):
    """OBJ files as MuJoCo reads them: faces of the first group only (an open surface here, whose legacy volume
    MuJoCo computes all the same), ``usemtl`` splitting nothing, quads split along their shorter diagonal,
    the index forms (``i``, ``i//n``, ``i/t/n``, negative); mirrored ``exact``."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(2)
    u = prism_triangles(U_OUTLINE, U_TRIANGLES, 1.0).reshape(-1, 3)
    corners, index = np.unique(u, axis=0, return_inverse=True)
    u_faces = [[str(i + 1) for i in face] for face in index.reshape(-1, 3)]
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float) + rng.normal(size=(8, 3)) * 0.15
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    files = {"groups.obj": obj_text(corners, u_faces, {0: ["o first"], 10: ["g second"]}),
             "materials.obj": obj_text(corners, u_faces, {0: ["usemtl a"], 10: ["usemtl b"]}),
             "quads.obj": "vt 0 0\nvn 0 0 1\n" + obj_text(cube, [[f"{i + 1}/1/1" for i in quad] for quad in quads]),
             "normals.obj": "vn 0 0 1\n" + obj_text(cube, [[f"{i + 1}//1" for i in quad] for quad in quads]),
             "backwards.obj": obj_text(cube, [[str(i - 8) for i in quad] for quad in quads])}  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        for mesh in ("", ' scale="-1 0.5 2" inertia="exact"') if name == "quads.obj" else ("",):
            xml = (f'<mujoco><asset><mesh name="m" file="{name}"{mesh}/></asset><worldbody><body name="b"><freejoint/>'
                   f'<geom type="mesh" mesh="m" density="1" contype="0" conaffinity="0"/></body></worldbody></mujoco>')  # fmt: skip
            (tmp_path / "robot.xml").write_text(xml)
            values = kr.load(tmp_path / "robot.xml").values
            model = mujoco.MjModel.from_xml_path(str(tmp_path / "robot.xml"))
            assert values["M0"] == pytest.approx(model.body_mass[1], rel=1e-12), name
            np.testing.assert_allclose([values[k + "0"] / values["M0"] for k in ("MX", "MY", "MZ")], model.body_ipos[1], rtol=0, atol=1e-12)


def test_ascii_stl_reads_as_binary(tmp_path):
    """An ASCII STL (which MuJoCo does not read) gives the vertices and faces of the same binary file."""
    triangles = hull_triangles(np.random.default_rng(5).normal(size=(12, 3)))
    write_stl(tmp_path / "b.stl", triangles)
    write_stl(tmp_path / "a.stl", triangles, ascii=True)
    binary = read_stl((tmp_path / "b.stl").read_bytes(), "b.stl")
    text = read_stl((tmp_path / "a.stl").read_bytes(), "a.stl")
    np.testing.assert_array_equal(binary[0], text[0])
    np.testing.assert_array_equal(binary[1], text[1])
    assert len(binary[0]) == len(np.unique(triangles.reshape(-1, 3), axis=0)) < 3 * len(triangles)  # repeated corners merged


# ------------------------------------------------------------------ errors
def mesh_model(mesh='<mesh name="m" file="m.stl"/>', geom='<geom type="mesh" mesh="m"/>', head=""):
    """A one-joint model: its <mesh> on line 3, its mesh geom on line 8."""
    return f'<mujoco>{head}\n<asset>\n{mesh}\n</asset>\n<worldbody>\n<body name="b">\n<joint name="j"/>\n{geom}\n</body>\n</worldbody>\n</mujoco>\n'


def _truncated(folder):
    write_stl(folder / "m.stl", box_triangles([0.1, 0.1, 0.1]))
    (folder / "m.stl").write_bytes((folder / "m.stl").read_bytes()[:-7])


def _flipped(folder):
    triangles = box_triangles([0.1, 0.1, 0.1])
    triangles[3] = triangles[3][[0, 2, 1]]
    write_stl(folder / "m.stl", triangles)


def _flat(folder):
    write_stl(folder / "m.stl", [[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 1, 0], [1, 0, 0]]])


def _bad_ascii(folder):
    (folder / "m.stl").write_text("solid m\nfacet normal 0 0 1\nouter loop\nvertex 0 0\n")


def _pentagon(folder):
    (folder / "m.obj").write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\n# a pentagon\nf 1 2 3 4 5\n")


def _box(folder):
    write_stl(folder / "m.stl", box_triangles([0.1, 0.1, 0.1]))


MESH_ERRORS = [
    (None, mesh_model(), 3, "<mesh name='m' file='m.stl'>: no such file"),
    (_truncated, mesh_model(), 3, "a truncated or damaged binary STL file: its header counts 12 triangles, 684 bytes, but it has 677"),
    (_box, mesh_model('<mesh name="m" file="../m.stl"/>'), 3, "is outside the model's folder"),
    (_box, mesh_model('<mesh name="m" file="/etc/m.stl"/>'), 3, "is an absolute path"),
    (_box, mesh_model(geom='<geom type="mesh" mesh="n"/>'), 8, "mesh=\"n\" names no <mesh> of <asset> (meshes: m)"),
    (_bad_ascii, mesh_model(), 3, "m.stl:4: 'vertex 0 0': a vertex is 3 numbers"),
    (_flipped, mesh_model('<mesh name="m" file="m.stl" inertia="exact"/>'), 3, "faces have inconsistent orientations"),
    (_flat, mesh_model(), 3, "the mesh's volume is too small (a flat or open mesh): try inertia=\"shell\""),
    (_box, mesh_model('<mesh name="m" file="m.msh"/>'), 3, "a .msh mesh is not read (kanerobot reads STL and OBJ meshes): convert it to STL"),
    (_pentagon, mesh_model('<mesh name="m" file="m.obj"/>'), 3, "m.obj:7: a face of 5 corners: give triangles or quads"),
    (_box, mesh_model(geom='<geom type="box" mesh="m"/>'), 8, "a box fitted to mesh=\"m\" is not supported"),
    (_box, mesh_model(geom='<geom type="mesh" mesh="m" shellinertia="true"/>'), 8, "write inertia=\"shell\" on its <mesh>"),
    (_box, mesh_model('<mesh name="m" file="m.stl" inertia="hollow"/>'), 3, "inertia=\"hollow\": use 'legacy' or 'exact' or 'convex' or 'shell'"),
    (_box, mesh_model('<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0"/>'), 3, "vertex=\"...\" holds 11 numbers: give 3 per vertex"),
    (_box, mesh_model('<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" face="0 1 4"/>'), 3, "not the index of a vertex (0 to 3)"),
]


@pytest.mark.parametrize("make, text, line, words", MESH_ERRORS)
def test_malformed_meshes_name_the_line(make, text, line, words, tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    if make is not None:
        make(folder)
        make(tmp_path)  # beside the model's folder, for the path that leaves it
    path = folder / "robot.xml"
    path.write_text(text)
    with pytest.raises(kr.RobotFileError) as info:
        kr.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and words in message and "\n" not in message, message


@pytest.mark.parametrize("make, text", [(case[0], case[1]) for case in MESH_ERRORS if case[3].startswith(("<mesh", "a trunc", "faces", "the mesh"))])
def test_mujoco_refuses_the_broken_meshes_too(make, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if make is not None:
        make(tmp_path)
    (tmp_path / "robot.xml").write_text(text)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(tmp_path / "robot.xml"))


# -------------------------------------------------------------------- dog
@pytest.mark.long
def test_dog_equals_mujoco(tmp_path, monkeypatch):
    """dm_control's dog: its bones' meshes give its 78 bodies their mass; its ball is left out (one warning), its
    springs too; the tree (79 speeds with the free root) equals MuJoCo's model of the whole file."""
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.find_spec("dm_control")
    if spec is None:
        pytest.skip("pip install -e '.[test]' (dm-control holds the dog)")
    path = Path(spec.submodule_search_locations[0], "suite", "dog.xml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", KaneRobotWarning)
        parsed = parse_mjcf(path)
    assert any("'ball'" in str(w.message) for w in caught) and any("joint springs" in str(w.message) for w in caught)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert parsed.robot.floating and parsed.robot.dof == model.nv - 6  # the ball's free joint left out
    tree = dataclasses.replace(parsed, robot=dataclasses.replace(parsed.robot, mimics=()))
    fn = kr.derive(tree.robot).numeric(no_friction(tree.robot.values), backend="numpy", physical=False)
    rng = np.random.default_rng(0)
    states = [random_state(tree.robot, rng) for _ in range(2)]
    assert max(worst_errors(fn, MujocoReference(tree, model), states)) < TOL
