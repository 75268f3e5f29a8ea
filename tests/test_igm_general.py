"""General 6R inverse geometric model and numeric fallback (issue 8): random
geometries, checked by the pose round trip and against damped least squares
from many random starts (an independent method)."""

from dataclasses import replace

import numpy
import pytest
import sympy

from kanerobot import frames_path, load
from kanerobot.errors import KaneRobotError
from kanerobot.geometry import numeric_transform
from kanerobot.igm import numeric as num
from kanerobot.igm.api import inverse_geometric
from kanerobot.igm.general6r import General6R
from kanerobot.robot.description import Frame, KKPlacement, Robot

REVOLUTE = numpy.ones(6, dtype=bool)


def random_6r(rng):
    frames = [
        Frame(str(j), str(j - 1), 0, 1, KKPlacement(
            alpha=float(rng.uniform(-numpy.pi, numpy.pi)), d=float(rng.uniform(0.2, 1.0)),
            r=float(rng.uniform(-0.5, 0.5)), theta=sympy.Symbol(f"th{j}")))
        for j in range(1, 7)
    ]
    return Robot.create("general6r", frames)


def _check(seed, starts):
    """Round trip, the generating configuration found, and nothing that DLS
    finds from ``starts`` random starts missing.  Returns the counts."""
    rng = numpy.random.default_rng(seed)
    robot = random_6r(rng)
    solver = General6R(robot, {})
    q = rng.uniform(-numpy.pi, numpy.pi, 6)
    T = solver.model.pose(q)
    sols = inverse_geometric(robot, T, {})  # auto: the general method
    assert sols.method == "general"
    assert len(sols) <= 16 and len(sols) % 2 == 0  # real roots of a real polynomial come in pairs here
    for s in sols:
        assert num.pose_distance(solver.model.pose(s), T) <= 1e-10
    assert any(num.joint_distance(num.wrap(q, REVOLUTE), s, REVOLUTE) < 1e-7 for s in sols)
    numeric = inverse_geometric(robot, T, {}, method="numeric", starts=starts, rng=rng)
    for s in numeric:
        assert any(num.joint_distance(s, g, REVOLUTE) < 1e-6 for g in sols), "DLS found a solution the general method missed"
    return len(sols), len(numeric)


@pytest.mark.parametrize("seed", range(2))
def test_general_6r_random_geometry(seed):
    n_general, n_numeric = _check(seed, starts=40)
    assert n_general >= 2 and n_numeric >= 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 40))
def test_general_6r_many_geometries(seed):
    _check(seed, starts=400)


def test_general_6r_rejects_other_chains():
    frames = [Frame("1", "0", 1, 1, KKPlacement(r=sympy.Symbol("r1")))]
    with pytest.raises(KaneRobotError, match="6 revolute"):
        General6R(Robot.create("slider", frames), {})


def test_unreachable_is_empty_for_numeric_and_general():
    robot = random_6r(numpy.random.default_rng(3))
    T = numpy.eye(4)
    T[:3, 3] = 50.0
    sols = inverse_geometric(robot, T, {}, method="numeric", starts=10, rng=numpy.random.default_rng(0))
    assert sols == [] and "out of reach" in sols.message
    general = inverse_geometric(robot, T, {})
    assert general == [] and general.method == "general" and "out of reach" in general.message


@pytest.mark.long
def test_ur_like_special_geometry_goes_to_paul():
    """Three parallel axes (a UR5-like arm): the general elimination is
    degenerate, so 'auto' takes Paul's method, which finds the 8 solutions
    that damped least squares finds."""
    half = sympy.pi / 2
    rows = [(0, 0, 0.089), (half, 0, 0), (0, -0.425, 0), (0, -0.392, 0.109), (half, 0, 0.095), (-half, 0, 0.082)]
    robot = Robot.create("ur5like", [
        Frame(str(j + 1), str(j), 0, 1, KKPlacement(alpha=a, d=d, r=r, theta=sympy.Symbol(f"th{j + 1}")))
        for j, (a, d, r) in enumerate(rows)
    ])
    rng = numpy.random.default_rng(0)
    model = num.ChainModel(robot, "6", {})
    q = rng.uniform(-numpy.pi, numpy.pi, 6)
    T = model.pose(q)
    sols = inverse_geometric(robot, T, {})
    assert sols.method == "paul" and len(sols) == 8
    assert all(num.pose_distance(model.pose(s), T) <= 1e-10 for s in sols)
    assert any(num.joint_distance(num.wrap(q, REVOLUTE), s, REVOLUTE) < 1e-7 for s in sols)
    for s in num.numeric_inverse(model, T, starts=30, rng=rng):
        assert any(num.joint_distance(s, g, REVOLUTE) < 1e-6 for g in sols)


@pytest.mark.long
def test_twelve_real_solutions_all_found():
    """A geometry and pose with 12 real solutions (found by searching 15000
    random cases): the general method returns all 12, and damped least
    squares from 500 random starts finds exactly the same 12."""
    rng = numpy.random.default_rng(10802)
    robot = random_6r(rng)
    solver = General6R(robot, {})
    T = solver.model.pose(rng.uniform(-numpy.pi, numpy.pi, 6))
    sols = solver(T)
    assert len(sols) == 12
    assert max(num.pose_distance(solver.model.pose(s), T) for s in sols) <= 1e-10
    numeric = num.numeric_inverse(solver.model, T, starts=500, rng=numpy.random.default_rng(0))
    assert len(numeric) == 12
    assert all(any(num.joint_distance(x, s, REVOLUTE) < 1e-6 for s in sols) for x in numeric)


def test_general_method_says_it_does_not_apply_to_a_spherical_wrist():
    """Issue 13 defect 6: it answered 'the pose is out of reach' for a reachable pose."""
    robot = load(frames_path("rx90"))
    values = {"D3": 0.45, "RL4": 0.38}
    T = numeric_transform(robot, "0", "6", values)([0.3, -0.7, 1.1, 0.4, -0.9, 2.0])
    with pytest.raises(KaneRobotError, match=r"the general 6R method does not apply to the geometry of RX90 \(spherical joint 4, 5, 6\).*use method='auto'"):
        inverse_geometric(robot, T, values, method="general")
    assert len(inverse_geometric(robot, T, values, method="auto")) == 8


def test_general_6r_with_joint_offsets_reports_q():
    """theta_j = th_j + c_j: the general method solves for the KK angles and reports q (issue 13)."""
    rng = numpy.random.default_rng(7)
    plain = random_6r(rng)
    offsets = rng.uniform(-1.5, 1.5, 6)
    frames = [replace(f, placement=replace(f.placement, theta=f.q + float(c))) for f, c in zip(plain.frames, offsets)]
    robot = Robot.create("general6r_offsets", frames)
    q = rng.uniform(-numpy.pi, numpy.pi, 6)
    T = num.ChainModel(robot, "6", {}).pose(q)
    sols = inverse_geometric(robot, T, {})
    assert sols.method == "general" and sols
    assert any(num.joint_distance(num.wrap(q, REVOLUTE), s, REVOLUTE) < 1e-7 for s in sols)
    assert all(num.pose_distance(num.ChainModel(robot, "6", {}).pose(s), T) <= 1e-10 for s in sols)
