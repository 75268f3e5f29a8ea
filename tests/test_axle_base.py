"""A floating base on two coaxial discs (issue 28: "the Krang lab's own URDF balances without a hand-written .toml").

A two-wheeled inverted pendulum is written as its URDF gives it: the root
link is the body, the wheels hang on it.  Loaded with ``floating=True`` and
its wheels declared as discs, :func:`~kanerobot.robot.axle_base.on_axle`
gives its base x, y, heading and pitch joints.  The reference is its twin
written by hand as ``frames/krang_wheeled.toml`` is: a planar chassis
(``wheeled = true``: OpenSYMORO's rolling rows, :mod:`kanerobot.dynamics.wheeled`,
an independent derivation) with the wheels and the pitch on the heading
frame, the wheels' angles measured from it.  The two are one system in
coordinates related by ``phi_twin = phi + pitch``: ``qd_twin = T qd``, so
``M = T^T M_twin T``, ``h = T^T h_twin`` and the linearised ``A`` are
similar.  Bodies and lengths are random; the body's wheel centres are off
its frame's origin.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from test_disc_files import _dynamics_table, _frame, body

import kanerobot as kr
from kanerobot import control
from kanerobot.errors import RobotFileError
from kanerobot.robot.axle_base import on_axle
from kanerobot.robot.description import Ground
from kanerobot.robot.frames_toml import frames_from_text

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "krang"


@pytest.fixture(scope="module")
def segway():
    rng = np.random.default_rng(2028)
    R, b = float(rng.uniform(0.15, 0.3)), float(rng.uniform(0.4, 0.7))
    mid = np.array([rng.uniform(-0.05, 0.05), 0.0, rng.uniform(-0.1, 0.1)])  # the axle's middle in the body's frame
    chassis = body(rng, 0.3)
    chassis = (10 * chassis[0], chassis[1] + np.array([0.0, 0.0, 0.5]), 10 * chassis[2])  # heavy, its centre of mass high
    return {"R": R, "b": b, "mid": mid, "bodies": [chassis, body(rng), body(rng)], "rng": rng}


def urdf_text(s):
    def inertial(x):
        m, c, I = float(x[0]), [float(v) for v in x[1]], np.asarray(x[2], dtype=float).tolist()
        return (f'<inertial><origin xyz="{c[0]!r} {c[1]!r} {c[2]!r}"/><mass value="{m!r}"/><inertia ixx="{I[0][0]!r}" '
                f'ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/></inertial>')  # fmt: skip

    def wheel(name, child, y):
        x, z = float(s["mid"][0]), float(s["mid"][2])
        return (f'<joint name="{name}" type="continuous"><parent link="body"/><child link="{child}"/>'
                f'<origin xyz="{x!r} {y!r} {z!r}"/><axis xyz="0 1 0"/></joint>')  # fmt: skip

    chassis, right, left = (inertial(x) for x in s["bodies"])
    return "\n".join(['<?xml version="1.0"?>', '<robot name="segway">', f'<link name="body">{chassis}</link>',
                      f'<link name="right">{right}</link>', f'<link name="left">{left}</link>',
                      wheel("wr", "right", -s["b"] / 2), wheel("wl", "left", s["b"] / 2), "</robot>", ""])  # fmt: skip


def twin_text(s):
    """The hand-written twin: planar chassis x, y, th; the body's pitch p and both wheels on th."""
    m, c, I = s["bodies"][0]
    chassis = _dynamics_table((m, c - s["mid"], I))  # the body about the axle's middle
    right, left = (_dynamics_table(x) for x in s["bodies"][1:])
    return ('name = "twin"\nwheeled = true\nposture = ["x", "y", "th"]\n\n[base]\nG = [0, 0, -9.81]\n'
            + _frame("x", "0", 1, "[0, 0, 0]", "[1, 0, 0]", "x", "mu = 0\nlink = false\n")
            + _frame("y", "x", 1, "[0, 0, 0]", "[0, 1, 0]", "y", "mu = 0\nlink = false\n")
            + _frame("th", "y", 0, f"[0, 0, {s['R']!r}]", "[0, 0, 1]", "th", "mu = 0\nlink = false\n")
            + _frame("p", "th", 0, "[0, 0, 0]", "[0, 1, 0]", "pitch", "mu = 0\n" + chassis)
            + _frame("wr", "th", 0, f"[0, {-s['b'] / 2!r}, 0]", "[0, 1, 0]", "phi_r", right)
            + _frame("wl", "th", 0, f"[0, {s['b'] / 2!r}, 0]", "[0, 1, 0]", "phi_l", left)
            + "".join(f'\n[[wheel]]\njoint = "{w}"\nradius = {s["R"]!r}\n' for w in ("wr", "wl")))  # fmt: skip


@pytest.fixture(scope="module")
def urdf_path(segway, tmp_path_factory):
    path = tmp_path_factory.mktemp("axle") / "segway.urdf"
    path.write_text(urdf_text(segway))
    return path


@pytest.fixture(scope="module")
def robots(segway, urdf_path):
    robot = kr.load(urdf_path, floating=True, discs={"wr": segway["R"], "wl": segway["R"]})
    return robot, frames_from_text(twin_text(segway), "twin.toml")


# speeds (pitch, wr, wl) -> the twin's (wr, wl, p): its wheels' angles are ours plus the pitch
T = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


def twin_configuration(q):
    """Ours (x, y, heading, pitch, wr, wl) -> the twin's (x, y, th, p, wr, wl)."""
    q = np.asarray(q, dtype=float)
    return np.concatenate([q[..., :4], q[..., 4:6] + q[..., 3:4]], axis=-1)


def test_the_base_link_gets_x_y_heading_and_pitch_joints(robots, segway):
    robot, _ = robots
    assert not robot.floating and robot.joint_labels == ("x", "y", "heading", "pitch", "wr", "wl")
    assert robot.links == ("base", "wr", "wl") and robot.frame("wr").antecedent == "base"
    # the axle's geometry bound to the file's numbers (the pair coaxial by them): the base at minus the axle's middle
    np.testing.assert_allclose(np.array(robot.frame("base").placement.P, dtype=float).ravel(), -segway["mid"], atol=1e-15)
    model = kr.derive(robot)
    assert model.independent == ("pitch", "wr", "wl")
    assert model.constraint.contact == {} and model.constraint.redundant == (("wl", "lateral"),)  # touching by construction


@pytest.mark.parametrize("method", ["newton-euler", "kane"])
def test_models_equal_the_planar_chassis_twin(robots, segway, method):
    robot, twin = robots
    fn = kr.derive(robot, method).numeric(robot.values, backend="numpy")
    ref = kr.derive(twin).numeric({}, backend="numpy")
    assert ref.model.independent == ("p", "wr", "wl") or ref.model.independent == ("wr", "wl", "p")
    order = [ref.model.independent.index(k) for k in ("wr", "wl", "p")]
    Tt = np.zeros((3, 3))
    Tt[order] = T  # rows in the twin's order of independent speeds
    rng = segway["rng"]
    for _ in range(3):
        q, v = rng.uniform(-1, 1, 6), rng.uniform(-2, 2, 3)
        qt = twin_configuration(q)
        M, M0 = fn.mass_matrix(q), ref.mass_matrix(qt)
        scale = np.abs(M).max()
        np.testing.assert_allclose(M, Tt.T @ M0 @ Tt, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(fn.h(q, v), Tt.T @ ref.h(qt, Tt @ v), rtol=0, atol=1e-12 * scale * 10)
        np.testing.assert_allclose(fn.gravity(q), Tt.T @ ref.gravity(qt), rtol=0, atol=1e-12 * scale * 10)


def test_linearised_balance_is_the_twins_and_the_lqr_holds_it(robots, segway):
    """The upright equilibrium and A, B about it equal the twin's (similar by T); the LQR brings a 0.1 rad push back."""
    robot, twin = robots
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    lqr = control.lqr_balance(fn, pitch="pitch")
    assert lqr.motors == ["wr", "wl"]  # each wheel motor on its own joint: the wheels hang on the body
    ref = kr.derive(twin).numeric({}, backend="numpy")
    k = robot.joint_labels.index("pitch")
    # the twin's motors hold our equilibrium too (lqr_balance checks it: n^T Q = 0 with n its pitch and both wheels)
    control.lqr_balance(ref, twin_configuration(lqr.q_eq), pitch="p")
    A, B = control.linearize(fn, lqr.q_eq, lqr.u_eq, lqr.actuation, order=8, step=1e-2)
    labels = list(control.controlled_coordinates(ref))
    P = np.zeros((3, 3))
    for row, label in enumerate(labels):  # the twin's positions from ours (pitch, wr, wl)
        P[row] = T[("wr", "wl", "p").index(label)]
    # the twin's state is S x, its generalized forces tau0 with P^T tau0 = tau (virtual work): the same motors
    tau0 = np.linalg.solve(P.T, lqr.actuation)
    A0, B0 = control.linearize(ref, twin_configuration(lqr.q_eq), lqr.u_eq, tau0, order=8, step=1e-2)
    S = np.kron(np.eye(2), P)
    np.testing.assert_allclose(A, np.linalg.solve(S, A0 @ S), rtol=0, atol=1e-9 * np.abs(A).max())
    np.testing.assert_allclose(B, np.linalg.solve(S, B0), rtol=0, atol=1e-9 * np.abs(B).max())
    x0q = lqr.q_eq.copy()
    x0q[k] += 0.1
    result = kr.simulate(fn, None, np.concatenate([x0q, np.zeros(3)]), (0.0, 5.0), lqr, t_eval=[5.0])
    assert abs(result.q[-1, k] - lqr.q_eq[k]) < 1e-3


@pytest.mark.parametrize(
    "change, words",
    [
        ({"wl": 0.2}, "their radii differ"),
        ({"origin": '<origin xyz="0.3 0.3 0.0"/>'}, "are not one axle"),
        ({"axis": '<axis xyz="0 0.6 0.8"/>'}, "are not one axle"),
    ],
)
def test_discs_that_are_not_one_level_axle_are_refused_in_one_line(segway, tmp_path, change, words):
    text = urdf_text(dict(segway, mid=np.zeros(3)))
    left = f'<origin xyz="0.0 {segway["b"] / 2!r} 0.0"/><axis xyz="0 1 0"/>'
    assert left in text
    if "origin" in change:  # the left wheel moved forward: the centres' line is not the axle
        text = text.replace(left, change["origin"] + '<axis xyz="0 1 0"/>')
    if "axis" in change:  # the left wheel's axle tilted
        text = text.replace(left, left.split("<axis")[0] + change["axis"])
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    radii = {"wr": segway["R"], "wl": change.get("wl", segway["R"])}
    with pytest.raises(RobotFileError, match=words) as info:
        kr.load(path, floating=True, discs=radii)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_an_axle_off_the_slope_and_a_fixed_base_are_refused(urdf_path, segway):
    robot = kr.load(urdf_path, floating=True)
    tilt = np.radians(10)
    with pytest.raises(kr.errors.DescriptionError, match="not along the ground"):
        on_axle(robot.with_discs([("wr", segway["R"]), ("wl", segway["R"])], Ground([0, np.sin(tilt), np.cos(tilt)])))
    with pytest.raises(RobotFileError, match="floating=True") as info:
        kr.load(urdf_path, discs={"wr": segway["R"], "wl": segway["R"]})
    assert "which is fixed" in str(info.value)


def test_a_slope_about_the_axle_gives_the_lean_of_statics(urdf_path, segway):
    """On a slope the equilibrium puts the whole centre of mass above the contact line (closed form)."""
    tilt = np.radians(10)
    n = np.array([np.sin(tilt), 0.0, np.cos(tilt)])
    robot = on_axle(kr.load(urdf_path, floating=True).with_discs([("wr", segway["R"]), ("wl", segway["R"])], Ground(list(n))))
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    q = control.upright_equilibrium(fn, pitch="pitch")
    c = fn.center_of_mass(q)
    contact = fn.pose("wr", q)[:3, 3] - segway["R"] * n  # below the right wheel's centre, on the plane
    along = np.cross(n, [0.0, 1.0, 0.0])  # the rolling direction in the plane
    gravity = np.array([0.0, 0.0, -1.0])
    # the centre of mass on the vertical plane through the contact line: (c - contact) has no component across it
    across = np.cross(gravity, [0.0, 1.0, 0.0])
    assert abs((c - contact) @ across) < 1e-10 and abs(along @ n) < 1e-15


# ------------------------------------------------------------------ Krang, as a lab's URDF
def lab_module():
    sys.path.insert(0, str(EXAMPLES))
    import krang_lab_urdf

    return krang_lab_urdf


def test_the_shipped_krang_lab_urdf_is_what_its_script_writes(tmp_path):
    path = tmp_path / "krang_lab.urdf"
    lab_module().main(path)
    assert path.read_text() == (EXAMPLES / "krang_lab.urdf").read_text()


@pytest.mark.long
def test_krang_lab_urdf_equals_krang_wheeled_and_balances_on_flat_ground_and_a_slope():
    """The lab layout loaded with two discs: the models of frames/krang_wheeled.toml (same numbers, T-related speeds)
    to 1e-12, and the LQR holds it 10 s after a 0.1 rad push, on flat ground and on a 10-degree slope."""
    lab_module()  # examples/krang on the path
    from krang_control import body_values, wheeled_values

    lab = kr.load(EXAMPLES / "krang_lab.urdf", floating=True, discs={"wr": 0.25, "wl": 0.25})
    fn = kr.derive(lab).numeric(lab.values)
    values = wheeled_values(body_values()[1], 0.25, 0.6, rotor=0.0)
    values.update({k: 0.0 for k in values if k.startswith("IA")})
    ref = kr.derive(kr.load(kr.frames_path("krang_wheeled"))).numeric(values)
    m = len(fn.model.independent)
    Tk = np.eye(m)
    Tk[:3, :3] = [[1, 1, 0], [1, 0, 1], [1, 0, 0]]  # ours (pitch, wr, wl, body) -> the toml's (wr, wl, q_imu, body)
    rng = np.random.default_rng(3)
    for _ in range(2):
        q, v = rng.uniform(-1, 1, fn.nq), rng.uniform(-1, 1, m)
        qt = np.concatenate([q[:3], q[4:6] + q[3], q[3:4], q[6:]])
        M = fn.mass_matrix(q)
        np.testing.assert_allclose(M, Tk.T @ ref.mass_matrix(qt) @ Tk, rtol=0, atol=1e-12 * np.abs(M).max())
        np.testing.assert_allclose(fn.h(q, v), Tk.T @ ref.h(qt, Tk @ v), rtol=0, atol=1e-11 * np.abs(M).max())
    tilt = np.radians(10)
    slope = on_axle(kr.load(EXAMPLES / "krang_lab.urdf", floating=True).with_discs([("wr", 0.25), ("wl", 0.25)],
                                                                                  Ground([np.sin(tilt), 0, np.cos(tilt)])))  # fmt: skip
    for robot, model in ((lab, fn), (slope, kr.derive(slope).numeric(slope.values))):
        lqr = control.lqr_balance(model, pitch="pitch")
        k = robot.joint_labels.index("pitch")
        x0 = np.concatenate([lqr.q_eq, np.zeros(m)])
        x0[k] += 0.1
        result = kr.simulate(model, None, x0, (0.0, 10.0), lqr, t_eval=[10.0])
        assert abs(result.q[-1, k] - lqr.q_eq[k]) < 1e-5
