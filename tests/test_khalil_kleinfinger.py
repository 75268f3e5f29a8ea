"""Automatic conversion of general frames to Khalil-Kleinfinger frames (issue 15).

:func:`kanerobot.to_khalil_kleinfinger` must give

* the published tables where the robot has one: the UR5 written as general
  frames (tests/data/dh/ur5_dh.toml) gives ur5_dh.par's alpha, d, r and
  theta offsets, the RX-90 written as general frames (its KK transforms at
  q = 0) gives rx90.par's (OpenSYMORO's RX90.par) geometry;
* the same models: inverse dynamics, mass matrix, direct dynamics at random
  states, to 1e-12 relative, with no more operations (fewer for Krang);
* the same geometry: every new frame is its old frame moved by the constant
  transform the conversion reports, at random q, and the fast geometric
  model of the end frame equals the original's;
* exact inertia transforms, checked against the centre-of-mass route of
  :func:`kanerobot.robot.dh.inertia_about_origin`.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import DescriptionError
from kanerobot.geometry import fast_geometric_model, numeric_transform
from kanerobot.robot.description import Base, Frame, GeneralPlacement, KKPlacement, Robot
from kanerobot.robot.dh import inertia_about_origin
from kanerobot.robot.khalil_kleinfinger import _moved_inertia, khalil_kleinfinger_conversion

DATA = Path(__file__).resolve().parent / "data" / "dh"
MODELS = ("inverse_dynamics", "mass_matrix", "direct_dynamics")


def relative_error(actual, expected):
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    return float(np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-300))


def converted_values(conversion, values):
    """The converted robot's values: the original's, with the kept inertial
    symbols replaced by their meaning in the new frames."""
    bound = {sympy.Symbol(name): value for name, value in values.items()}
    out = dict(values)
    for symbol, expression in conversion.parameters.items():
        out[str(symbol)] = float(expression.xreplace(bound))
    return out


def assert_same_models(original, conversion, values, seed, tol=1e-12):
    """Inverse dynamics, mass matrix and direct dynamics equal at random states; returns op counts."""
    robot = conversion.robot
    before, after = kr.derive(original), kr.derive(robot)
    f0 = before.numeric(values, backend="numpy", physical=False)
    f1 = after.numeric(converted_values(conversion, values), backend="numpy", physical=False)
    rng = np.random.default_rng(seed)
    n = original.dof
    for _ in range(3):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)
        tau = f0.inverse_dynamics(q, qd, qdd)
        assert relative_error(f1.inverse_dynamics(q, qd, qdd), tau) < tol
        assert relative_error(f1.mass_matrix(q), f0.mass_matrix(q)) < tol
        assert relative_error(f1.direct_dynamics(q, qd, tau), f0.direct_dynamics(q, qd, tau)) < 1e3 * tol
        assert relative_error(f1.direct_dynamics(q, qd, tau), qdd) < 1e-9
    counts = {name: (before.op_count(name), after.op_count(name)) for name in MODELS}
    for name, (old, new) in counts.items():
        print(f"{original.name} {name}: {old} -> {new}")
        assert sum(new.values()) <= sum(old.values()), name
    return counts


def assert_same_geometry(original, conversion, values, seed):
    """Each new frame is its old frame times the reported change; end frames are the old poses."""
    robot = conversion.robot
    rng = np.random.default_rng(seed)
    # each transform is generated once (seconds of sympy for Float-laden frames), then evaluated at every q
    old_poses = {label: numeric_transform(original, "0", label, values) for label in original.labels}
    new_poses = {label: numeric_transform(robot, "0", label, values) for label in original.labels + conversion.end_frames}
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, original.dof)
        for label in original.labels:
            old, new = old_poses[label](q), new_poses[label](q)
            change = np.array(conversion.changes[label].xreplace({sympy.Symbol(k): v for k, v in values.items()}), dtype=float)
            assert np.max(np.abs(new - old @ change)) < 1e-12 * max(1.0, np.max(np.abs(old))), label
            assert np.allclose(new[:3, 2], old[:3, :3] @ np.array(original.frame(label).axis, dtype=float).ravel(), atol=1e-12) or not original.frame(label).is_joint
        for end in conversion.end_frames:
            old = old_poses[robot.frame(end).antecedent](q)
            assert np.max(np.abs(new_poses[end](q) - old)) < 1e-12 * max(1.0, np.max(np.abs(old)))


def fast_end_pose(robot, end, values):
    """The fast geometric model 0T_end (12 entries) evaluated: a function of q."""
    program = fast_geometric_model(robot, "0", end)
    function = program.to_function()
    q_symbols = list(robot.q)

    def evaluate(q):
        bound = dict(zip(q_symbols, q))
        return function(*[bound[s] if s in bound else values[str(s)] for s in function.args])

    return evaluate


# ------------------------------------------------------------------ UR5
@pytest.mark.long
def test_ur5_general_frames_give_the_published_table_and_models():
    original = kr.load(DATA / "ur5_dh.toml")
    assert not any(f.is_kk for f in original.frames)
    conversion = khalil_kleinfinger_conversion(original)
    robot, table = conversion.robot, kr.load(DATA / "ur5_dh.par")
    assert robot.labels == table.labels and conversion.end_frames == () and conversion.general == ()
    for frame, expected in zip(robot.frames, table.frames):
        assert frame.is_kk and frame.antecedent == expected.antecedent and frame.sigma == expected.sigma
        for key in ("gamma", "b", "alpha", "d", "r"):
            got, want = getattr(frame.placement, key), getattr(expected.placement, key)
            assert float(got) == pytest.approx(float(want), abs=1e-15), (frame.label, key)
            assert (got == 0) == (want == 0) and got.has(sympy.pi) == want.has(sympy.pi), (frame.label, key, got)
        assert frame.offset == expected.offset, frame.label
    for label in robot.links:
        for key, value in table.dynamics[label].items():
            assert float(robot.dynamics[label][key]) == pytest.approx(float(value), rel=1e-14, abs=1e-16), (label, key)
    values = {}
    assert_same_models(original, conversion, values, seed=5)
    assert_same_geometry(original, conversion, values, seed=6)


# ------------------------------------------------------------------ RX-90
def rx90_as_general_frames():
    """frames/rx90.par with each frame written as (R0, P, axis z) of its transform at q = 0."""
    table = kr.load(kr.frames_path("rx90.par"))
    frames = []
    for f in table.frames:
        T = f.transform().xreplace({f.q: 0})
        frames.append(Frame(f.label, f.antecedent, f.sigma, f.mu, GeneralPlacement(T[:3, :3], T[:3, 3], [0, 0, 1], f.q)))
    return table, Robot.create("RX90_general", frames, dynamics=table.dynamics, base=table.base)


def test_rx90_general_frames_convert_back_to_its_table():
    table, original = rx90_as_general_frames()
    conversion = khalil_kleinfinger_conversion(original)
    robot = conversion.robot
    for frame, expected in zip(robot.frames, table.frames):
        for key in KKPlacement.KEYS:
            assert sympy.simplify(getattr(frame.placement, key) - getattr(expected.placement, key)) == 0, (frame.label, key)
    assert robot.labels == table.labels and conversion.parameters == {}
    values = random_parameters(original, np.random.default_rng(3))
    assert_same_models(original, conversion, values, seed=4)


# ------------------------------------------------------------------ Krang
@pytest.mark.long
def test_krang_tree_converts_with_equal_models_and_fewer_operations():
    original = kr.load(kr.frames_path("krang.toml"))
    conversion = khalil_kleinfinger_conversion(original)
    robot = conversion.robot
    # The spine's axis is parallel to the base pitch axis at (0, L1, -L2):
    # a normal of symbolic direction, so frame 2 stays a general frame.
    assert conversion.general == ("2",)
    assert all(robot.frame(label).is_kk for label in robot.labels if label != "2")
    assert conversion.end_frames == ("10le", "10re")
    assert robot.frame("6l").placement == KKPlacement(alpha=-sympy.pi / 2, theta="q_3l", r="-L7")
    values = random_parameters(original, np.random.default_rng(8))
    counts = assert_same_models(original, conversion, values, seed=9, tol=1e-11)
    for name in ("inverse_dynamics", "mass_matrix"):
        old, new = counts[name]
        assert sum(new.values()) < sum(old.values()), name
    assert_same_geometry(original, conversion, values, seed=10)


# ------------------------------------------------------------------ random chains
def random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


def random_unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_robot(seed, shape):
    """General frames of random placements and axes; ``shape`` is (label, antecedent, sigma) per frame."""
    rng = np.random.default_rng(seed)
    frames = []
    for label, antecedent, sigma in shape:
        R, P = random_rotation(rng), rng.uniform(-0.5, 0.5, 3)
        q = f"q{label} + 0.3" if sigma == 0 else (f"q{label}" if sigma == 1 else 0)
        frames.append(Frame(label, antecedent, sigma, 1 if sigma != 2 else 0, GeneralPlacement(R.tolist(), P.tolist(), random_unit(rng).tolist(), q)))
    robot = Robot.create(f"random{seed}", frames, base=Base.from_values(G=[0, 0, -9.81]))
    values = random_parameters(robot, rng)
    values.update({f"{name}{label}": rng.uniform(-1, 1) for label in robot.links for name in ("FX", "FY", "FZ", "CX", "CY", "CZ")})
    numeric = {sympy.Symbol(k): v for k, v in values.items()}
    dynamics = {label: {k: sympy.Float(v.xreplace(numeric)) if v != 0 else v for k, v in robot.dynamics[label].items()} for label in robot.links}
    for label in robot.links:
        dynamics[label].update({name: sympy.Float(values[f"{name}{label}"]) for name in ("FX", "FY", "FZ", "CX", "CY", "CZ")})
    # Every parameter is a number now: the models need no values.
    return Robot.create(robot.name, frames, dynamics=dynamics, base=robot.base), {}


SHAPES = {
    "serial with prismatic joints": [("1", "0", 0), ("2", "1", 1), ("3", "2", 0), ("4", "3", 1), ("5", "4", 0)],
    "tree with a fixed frame": [("1", "0", 0), ("2", "1", 0), ("3", "2", 1), ("4", "1", 0), ("5", "4", 2), ("6", "5", 0), ("7", "4", 0)],
}


@pytest.mark.parametrize("kind", list(SHAPES))
@pytest.mark.long
def test_random_general_frames_keep_geometry_and_dynamics(kind):
    original, values = random_robot(len(kind), SHAPES[kind])
    conversion = khalil_kleinfinger_conversion(original)
    robot = conversion.robot
    assert all(f.is_kk for f in robot.frames) and conversion.general == ()
    for f in robot.frames:
        if f.is_joint:
            assert f.q == original.frame(f.label).q
    assert_same_geometry(original, conversion, values, seed=11)
    assert_same_models(original, conversion, values, seed=12, tol=1e-11)
    end = robot.frame(conversion.end_frames[0]).antecedent
    old_fast, new_fast = fast_end_pose(original, end, values), fast_end_pose(robot, conversion.end_frames[0], values)
    for q in np.random.default_rng(13).uniform(-np.pi, np.pi, (3, original.dof)):
        assert np.max(np.abs(new_fast(q) - old_fast(q))) < 1e-12


@pytest.mark.long
def test_floating_base_keeps_its_dynamics():
    """A free-flying chain: the base link 0 stays as it is, the models agree
    at random states (q = position, unit quaternion, joints)."""
    chain, _ = random_robot(3, SHAPES["serial with prismatic joints"])
    rng = np.random.default_rng(15)
    base_link = dict(zip(("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M"), (0.5, 0.01, 0.02, 0.6, 0.03, 0.7, 0.1, -0.1, 0.2, 4.0)))
    dynamics = dict(chain.dynamics)
    dynamics["0"] = base_link
    original = Robot.create("flyer", chain.frames, dynamics=dynamics, base=chain.base, floating=True)
    conversion = khalil_kleinfinger_conversion(original)
    assert conversion.robot.floating and dict(conversion.robot.dynamics["0"]) == dict(original.dynamics["0"])
    f0 = kr.derive(original).numeric({}, backend="numpy", physical=False)
    f1 = kr.derive(conversion.robot).numeric({}, backend="numpy", physical=False)
    for _ in range(3):
        quaternion = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion), rng.uniform(-2, 2, 5)])
        qd, qdd = rng.normal(size=11), rng.normal(size=11)
        assert relative_error(f1.mass_matrix(q), f0.mass_matrix(q)) < 1e-12
        assert relative_error(f1.inverse_dynamics(q, qd, qdd), f0.inverse_dynamics(q, qd, qdd)) < 1e-12


def test_parallel_axes_give_zeros_and_right_angles():
    """A planar arm of axes along -x of frame 0, written with odd frames: the
    first axis needs gamma (x0 lies on it) and b, the parallel axes give d =
    the link lengths and r = 0 (SYMORO's choice), angles exact multiples of
    pi/2, and the last frame keeps its origin (r3 = -0.1, the height of the
    old frame 3) with an end frame restoring its axes."""
    tilted = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]  # z of frame 1 is -x of frame 0
    frames = [
        Frame("1", "0", 0, 1, GeneralPlacement(tilted, [0, 0, 0.3], [0, 0, -1], "q1")),
        Frame("2", "1", 0, 1, GeneralPlacement(np.eye(3).tolist(), [0, 0.5, 0.1], [0, 0, -1], "q2")),
        Frame("3", "2", 0, 1, GeneralPlacement(np.eye(3).tolist(), [0, 0.4, 0], [0, 0, -1], "q3")),
    ]
    original = Robot.create("planar", frames)
    conversion = khalil_kleinfinger_conversion(original)
    table = {f.label: tuple(getattr(f.placement, key) for key in KKPlacement.KEYS) for f in conversion.robot.frames}
    q1, q2, q3 = sympy.symbols("q1 q2 q3")
    half = sympy.pi / 2
    assert table == {
        "1": (half, 0.3, -half, 0, q1, 0),
        "2": (0, 0, 0, 0.5, q2, 0),
        "3": (0, 0, 0, 0.4, q3, -0.1),
        "4": (0, 0, sympy.pi, 0, -half, 0),
    }
    assert conversion.branched == ("1",) and conversion.end_frames == ("4",)
    assert_same_geometry(original, conversion, {}, seed=14)


# ------------------------------------------------------------------ inertia
def test_inertia_transform_equals_the_centre_of_mass_route():
    rng = np.random.default_rng(21)
    for _ in range(5):
        m, c = rng.uniform(0.5, 3), rng.uniform(-0.3, 0.3, 3)
        A = rng.normal(size=(3, 3))
        Ig = A @ A.T + np.eye(3) * 0.1
        J = Ig + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        values = dict(zip(("XX", "XY", "XZ", "YY", "YZ", "ZZ"), (J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2])))
        values.update(zip(("MX", "MY", "MZ"), m * c))
        values["M"] = m
        F, C = rng.normal(size=3), rng.normal(size=3)
        values.update(zip(("FX", "FY", "FZ", "CX", "CY", "CZ"), list(F) + list(C)))
        R, p = random_rotation(rng), rng.uniform(-0.5, 0.5, 3)
        moved = _moved_inertia(values, sympy.Matrix(R), sympy.Matrix(p))
        # The old frame seen from the new one: rotation R^T, origin -R^T p.
        expected = inertia_about_origin(m, c, Ig, R.T, -R.T @ p)
        for key, value in expected.items():
            assert float(moved[key]) == pytest.approx(float(value), abs=1e-12), key
        # The wrench: the same force, its moment about the new origin.
        assert np.allclose([float(moved[k]) for k in ("FX", "FY", "FZ")], R.T @ F, atol=1e-14)
        assert np.allclose([float(moved[k]) for k in ("CX", "CY", "CZ")], R.T @ (C - np.cross(p, F)), atol=1e-14)


# ------------------------------------------------------------------ refusals
def test_symbolic_rotations_are_refused():
    frames = [Frame("1", "0", 0, 1, GeneralPlacement([[1, 0, 0], [0, "cos(a)", "-sin(a)"], [0, "sin(a)", "cos(a)"]], [0, 0, 0], [0, 0, 1], "q1"))]
    with pytest.raises(DescriptionError, match=r"frame 1: its rotation or axis is symbolic; .* needs numbers there"):
        kr.to_khalil_kleinfinger(Robot.create("sym", frames))


def test_closed_loops_and_wheeled_robots_are_refused():
    fourbar = kr.load(kr.frames_path("fourbar.toml"))
    with pytest.raises(DescriptionError, match=f"{fourbar.name} has closed loops: the conversion .* handles serial and tree robots"):
        khalil_kleinfinger_conversion(fourbar)
    with pytest.raises(DescriptionError, match="is a wheeled robot: its posture joints and wheels are tied to their frames"):
        khalil_kleinfinger_conversion(kr.load(kr.frames_path("diffdrive.toml")))


def test_kk_robots_are_returned_as_they_are():
    robot = kr.load(kr.frames_path("rx90.par"))
    assert kr.to_khalil_kleinfinger(robot) is robot


# ------------------------------------------------------------------ command line
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "kanerobot", *map(str, args)], capture_output=True, text=True)


def test_convert_to_par_converts_general_frames(tmp_path):
    target = tmp_path / "ur5.par"
    done = run_cli("convert", DATA / "ur5_dh.toml", target)
    assert done.returncode == 0, done.stderr
    assert "converted UR5_DH to Khalil-Kleinfinger frames; no frame needs gamma or b" in done.stderr
    written, table = kr.load(target), kr.load(DATA / "ur5_dh.par")
    for frame, expected in zip(written.frames, table.frames):
        for key in ("alpha", "d", "r"):
            assert float(getattr(frame.placement, key)) == pytest.approx(float(getattr(expected.placement, key)), abs=1e-15)
        assert frame.offset == expected.offset


@pytest.mark.long
def test_convert_to_par_of_a_random_chain_with_an_end_frame(tmp_path):
    """General frames of random placements, through .toml and the command line
    to a .par: a .par holds no frame without a link, so the end frame is left
    out (and said so); the frames read back are those of the conversion."""
    original, _ = random_robot(len("serial with prismatic joints"), SHAPES["serial with prismatic joints"])
    source, target = tmp_path / "arm.toml", tmp_path / "arm.par"
    kr.save(original, source)
    done = run_cli("convert", source, target)
    assert done.returncode == 0, done.stderr
    assert "end frames added at the old poses: 6" in done.stderr
    assert "end frames 6 not written: a .par holds no frame without a link (NF = NL + 2B)" in done.stderr
    written, expected = kr.load(target), khalil_kleinfinger_conversion(original).robot
    assert written.labels == expected.labels[:-1] == ("1", "2", "3", "4", "5")
    q = np.random.default_rng(16).uniform(-1, 1, original.dof)
    for label in written.labels:
        assert np.allclose(numeric_transform(written, "0", label, {})(q), numeric_transform(expected, "0", label, {})(q), atol=1e-12)
    f0 = kr.derive(original).numeric({}, backend="numpy", physical=False)
    f1 = kr.derive(written).numeric({}, backend="numpy", physical=False)
    qd, qdd = np.random.default_rng(17).uniform(-2, 2, (2, original.dof))
    assert relative_error(f1.inverse_dynamics(q, qd, qdd), f0.inverse_dynamics(q, qd, qdd)) < 1e-12
    assert relative_error(f1.mass_matrix(q), f0.mass_matrix(q)) < 1e-12


@pytest.mark.long
def test_convert_kk_option_for_toml(tmp_path):
    plain, kk = tmp_path / "plain.toml", tmp_path / "kk.toml"
    assert run_cli("convert", kr.frames_path("krang.toml"), plain).returncode == 0
    done = run_cli("convert", "--kk", kr.frames_path("krang.toml"), kk)
    assert done.returncode == 0, done.stderr
    assert "links 1, 2, 3, 4l, 5l, 6l, 7l, 8l, 9l, 10l, 4r, 5r, 6r, 7r, 8r, 9r, 10r keep SYMORO's inertial symbols" in done.stderr
    assert "frames 2 stay general frames" in done.stderr and "end frames added at the old poses: 10le, 10re" in done.stderr
    assert not any(f.is_kk for f in kr.load(plain).frames)
    assert sum(f.is_kk for f in kr.load(kk).frames) == len(kr.load(kk).frames) - 1
