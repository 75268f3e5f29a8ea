"""Inverse geometric models in closed form (issue 8): every returned solution
is checked with the direct geometric model (an independent numpy product of
the frame transforms), and the configuration a pose came from must be found."""

import numpy
import pytest
import sympy
from conftest import corpus_robot, library

from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.geometry import loop_constraints, loop_solver, numeric_function, solve_loops
from kanerobot.igm import numeric as num
from kanerobot.igm.api import derive_igm, inverse_geometric
from kanerobot.igm.loops import all_loop_closures

POSES = 1000


class Case:
    """A robot, its derived IGM compiled for random geometric values, and a
    numpy direct geometric model."""

    def __init__(self, name, seed):
        self.robot = library(name)
        self.rng = numpy.random.default_rng(seed)
        self.values = random_parameters(self.robot, self.rng)
        self.igm = derive_igm(self.robot)
        self.solve = self.igm.solver(self.values)
        self.model = num.ChainModel(self.robot, self.igm.end, self.values)
        self.revolute = self.model.revolute_mask()

    def random_configuration(self):
        q = numpy.zeros(len(self.robot.joint_labels))
        k = len(self.model.columns)
        q[self.model.columns] = numpy.where(
            self.model.revolute, self.rng.uniform(-numpy.pi, numpy.pi, k), self.rng.uniform(0.05, 1.0, k)
        )
        return q


@pytest.fixture(scope="module", params=["rx90", "puma560", "stanford", "sr400"])
def case(request):
    return Case(request.param, seed=8)


def _found(case, q, sols, columns):
    qw = num.wrap(q, case.revolute)[columns]
    return any(num.joint_distance(qw, s[columns], case.revolute[columns]) < 1e-7 for s in sols)


@pytest.mark.long
def test_random_poses_round_trip(case):
    """1000 random poses: every solution reproduces the pose to 1e-10 and the
    generating configuration (its direct-chain joints) is among them."""
    worst, counts, missed = 0.0, [], 0
    for _ in range(POSES):
        q = case.random_configuration()
        T = case.model.pose(q)
        sols = case.solve(T)
        counts.append(len(sols))
        worst = max([worst] + [num.pose_distance(case.model.pose(s), T) for s in sols])
        missed += not _found(case, q, sols, case.model.columns)
    assert worst <= 1e-10
    assert missed == 0
    most = 16 if case.robot.loops else 8  # SR400: 8 arm solutions x 2 closures of the parallelogram
    assert max(counts) == most and min(counts) >= 1


def test_solutions_are_distinct(case):
    T = case.model.pose(case.random_configuration())
    sols = case.solve(T)
    for a in range(len(sols)):
        for b in range(a):
            assert num.joint_distance(sols[a], sols[b], case.revolute) > 1e-7
        assert numpy.all(sols[a][case.revolute] <= numpy.pi) and numpy.all(sols[a][case.revolute] > -numpy.pi)


def test_far_pose_out_of_reach_unless_prismatic(case):
    T = case.model.pose(case.random_configuration())
    T[:3, 3] += 100.0
    sols = case.solve(T)
    if case.revolute[case.model.columns].all():
        assert sols == [] and "out of reach" in sols.message
    else:  # the Stanford arm's unbounded prismatic joint reaches it
        assert sols and all(num.pose_distance(case.model.pose(s), T) <= 1e-10 for s in sols)


def test_sr400_full_configurations_close_the_loop():
    """SR400: the loop joints of every solution close the parallelogram, and a
    configuration closed by the numeric loop solver (from the active joints)
    is found whole."""
    case = Case("sr400", seed=2)
    closure = numeric_function(case.robot, sympy.Matrix(loop_constraints(case.robot)), case.values)
    active = case.robot.active_joints
    found = 0
    for _ in range(10):
        qa = case.rng.uniform(-1.0, 1.0, len(active))
        try:
            q = solve_loops(case.robot, case.values, qa, guess=case.rng.uniform(-numpy.pi, numpy.pi, 3))
        except KaneRobotError:
            continue
        sols = case.solve(case.model.pose(q))
        assert all(numpy.max(numpy.abs(closure(s))) <= 1e-10 for s in sols)
        assert _found(case, q, sols, numpy.arange(len(q)))
        found += 1
    assert found >= 5


def test_rx90_program_lists_the_types_and_eight_branches():
    text = str(derive_igm(library("rx90")))
    assert "type 2" in text and "type 8" in text and "type 3" in text
    assert "at most 8 solutions" in text


def test_rx90_wrist_singularity_gives_a_family():
    """th5 = 0: th4 and th6 turn about the same axis; the result says which
    joint is free, and moving it (with th6 compensating) keeps the pose."""
    case = Case("rx90", seed=3)
    q = numpy.array([0.3, -0.4, 0.5, 0.7, 0.0, -0.2])
    T = case.model.pose(q)
    sols = case.solve(T)
    assert sols and sols.singular
    for s, free in zip(sols, sols.families):
        assert num.pose_distance(case.model.pose(s), T) <= 1e-10
        if free:
            assert free == ("4",)
            moved = s.copy()
            moved[3] += 0.8
            moved[5] -= 0.8  # z4 and z6 aligned (th5 = 0) with alpha5 = -alpha6
            assert num.pose_distance(case.model.pose(moved), T) <= 1e-10


def test_six_joint_chains_still_get_their_finite_set(case):
    """Not redundant (6 joints, 6 pose components): ``inverse_geometric`` lists
    the compiled closed form's set, each member checked with the direct model,
    the generating configuration among them (redundant chains are refused:
    tests/test_igm_redundant.py)."""
    q = case.random_configuration()
    T = case.model.pose(q)
    sols = inverse_geometric(case.robot, T, case.values)
    assert len(sols) >= 2 and sols.message == f"{len(sols)} solution(s)"
    assert len(sols) == len(case.solve(T))
    assert all(num.pose_distance(case.model.pose(s), T) <= 1e-10 for s in sols)
    assert _found(case, q, sols, case.model.columns)


def test_numeric_fallback_agrees_with_closed_form():
    """Damped least squares from 40 random starts converges only to solutions
    of the closed form (an independent path to the same set)."""
    case = Case("puma560", seed=5)
    T = case.model.pose(case.random_configuration())
    closed = case.solve(T)
    numeric = inverse_geometric(case.robot, T, case.values, method="numeric", starts=40,
                                rng=numpy.random.default_rng(1))
    assert numeric.method == "numeric" and len(numeric) >= 2
    for q in numeric:
        assert any(num.joint_distance(q, s, case.revolute) < 1e-6 for s in closed)


def test_paul_without_decoupling_on_planar_and_errors():
    arm = library("planar2")
    T = num.ChainModel(arm, "2", {"L1": 0.7}).pose([0.4, -1.1])
    [q] = inverse_geometric(arm, T, {"L1": 0.7}, method="paul")
    assert numpy.allclose(q, [0.4, -1.1], atol=1e-12)
    with pytest.raises(KaneRobotError, match="Pieper"):
        inverse_geometric(arm, T, {"L1": 0.7}, method="pieper")
    with pytest.raises(KaneRobotError, match="unknown IGM method"):
        inverse_geometric(arm, T, {"L1": 0.7}, method="magic")
    with pytest.raises(KaneRobotError, match="4x4"):
        inverse_geometric(arm, T[:3], {"L1": 0.7})


def test_fourbar_assembly_modes_match_numeric_loop_solver():
    """Both closures of the four-bar in closed form; the numeric least-squares
    solver from many guesses finds nothing else."""
    fourbar = library("fourbar")
    revolute = numpy.ones(4, dtype=bool)
    rng = numpy.random.default_rng(0)
    solve = loop_solver(fourbar, {})
    for th1 in (0.4, 1.5, -2.0):
        closed = all_loop_closures(fourbar, {}, [th1])
        assert len(closed) == 2
        for _ in range(10):
            try:
                q = solve([th1], guess=rng.uniform(-numpy.pi, numpy.pi, 3))
            except KaneRobotError:
                continue
            assert any(num.joint_distance(num.wrap(q, revolute), c, revolute) < 1e-7 for c in closed)


REFERENCE_VALUES = {"testLoop": {"d": 0.8}, "TwoLoops": {"d12": 0.8, "d3": 1.0, "d4": 0.7, "d7": 0.5, "g12": 0.3}}


@pytest.mark.parametrize("name", ["testLoop", pytest.param("TwoLoops", marks=pytest.mark.slow)])
def test_reference_loops_closed_form_contains_numeric(name):
    """OpenSYMORO's loop examples: every assembly mode in closed form closes
    the loops, and whatever the numeric solver finds from random guesses is
    one of them."""
    robot = corpus_robot(name)
    rng = numpy.random.default_rng(4)
    values = REFERENCE_VALUES[name]
    closure = numeric_function(robot, sympy.Matrix(loop_constraints(robot)), values)
    revolute = numpy.array([robot.frame(label).sigma == 0 for label in robot.joint_labels])
    solve = loop_solver(robot, values)
    checked = 0
    for _ in range(3):
        qa = rng.uniform(-0.5, 0.5, len(robot.active_joints))
        closed = all_loop_closures(robot, values, qa)
        assert all(numpy.max(numpy.abs(closure(q))) <= 1e-10 for q in closed)
        for _ in range(8):
            try:
                q = solve(qa, guess=rng.uniform(-numpy.pi, numpy.pi, len(solve.unknown)))
            except KaneRobotError:
                continue
            assert any(num.joint_distance(num.wrap(q, revolute), c, revolute) < 1e-7 for c in closed)
            checked += 1
    assert checked >= 3


def test_rx90_shoulder_singularity_gives_a_family():
    """Wrist centre on axis 1 (D3 cos th2 = RL4 sin(th2 + th3)): th1 is free."""
    robot = library("rx90")
    values = {"D3": 0.45, "RL4": 0.5}
    model = num.ChainModel(robot, "6", values)
    q = numpy.array([0.7, 0.0, numpy.arcsin(0.9), 0.3, 0.8, -0.4])
    T = model.pose(q)
    sols = inverse_geometric(robot, T, values)
    assert sols and any("1" in free for free in sols.families)
    assert all(num.pose_distance(model.pose(s), T) <= 1e-10 for s in sols)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rx90", "puma560"])
def test_paul_without_pieper_points(name):
    """method='paul' (matrix equations only, no wrist-centre equations) also
    gives the 8 solutions."""
    robot = library(name)
    values = {k: 0.4 + 0.1 * i for i, k in enumerate(robot.geometric_parameters)}
    model = num.ChainModel(robot, "6", values)
    rng = numpy.random.default_rng(0)
    for _ in range(100):
        q = rng.uniform(-3, 3, 6)
        T = model.pose(q)
        sols = inverse_geometric(robot, T, values, method="paul")
        assert len(sols) == 8 and sols.method == "paul"
        assert all(num.pose_distance(model.pose(s), T) <= 1e-10 for s in sols)
        assert any(num.joint_distance(num.wrap(q, numpy.ones(6, bool)), s, numpy.ones(6, bool)) < 1e-7 for s in sols)


def test_tree_robot_needs_and_takes_an_end_frame():
    """A tree of two planar arms: the end frame must be named; each branch
    then has its own IGM."""
    from kanerobot.robot.description import Frame, KKPlacement, Robot

    th = sympy.symbols("th1:5")
    tree = Robot.create("twoarms", [
        Frame("1", "0", 0, 1, KKPlacement(theta=th[0])),
        Frame("2", "1", 0, 1, KKPlacement(d=1, theta=th[1])),
        Frame("3", "0", 0, 1, KKPlacement(d=2, theta=th[2])),
        Frame("4", "3", 0, 1, KKPlacement(d=1, theta=th[3])),
    ])
    T = numpy.eye(4)
    with pytest.raises(KaneRobotError, match="several end frames"):
        inverse_geometric(tree, T, {})
    model = num.ChainModel(tree, "4", {})
    q = numpy.array([0.0, 0.0, 0.4, -0.9])
    sols = inverse_geometric(tree, model.pose(q), {}, end="4")
    assert len(sols) == 1 and numpy.allclose(sols[0][2:], [0.4, -0.9], atol=1e-12)
