"""Pieper's method (issue 8): a spherical joint in the middle of a 6-joint
chain (joints 2, 3, 4 and 3, 4, 5), and three prismatic joints (a gantry with
a wrist, and R P R P P R).  The robots are written as .par text with random
signed geometric values; every returned solution is checked with the direct
geometric model, the configuration a pose came from must be found, and the
number of solutions must be what damped least squares finds from many
starts."""

import numpy
import pytest
import sympy
from conftest import library

import kanerobot as kr
from kanerobot.igm import numeric as num
from kanerobot.igm.api import derive_igm, inverse_geometric
from kanerobot.igm.paul import NoClosedForm
from kanerobot.igm.pieper import centres, decoupled_structure

# name: (sigma, alpha, d, r, theta); a prismatic joint's variable is r<j>,
# a revolute joint's th<j>.
TABLES = {
    # spherical joint 2, 3, 4 (centre: origin of frame 2), axes 5 and 6 parallel
    "mid234": ([0] * 6, [0, "pi/2", "-pi/2", "pi/2", "-pi/2", 0],
               ["D1", "D2", 0, 0, "D5", "D6"], ["R1", "R2", 0, "R4", "R5", "R6"], None),
    # spherical joint 3, 4, 5 (centre: origin of frame 3), axes 1 and 2 parallel
    "mid345": ([0] * 6, [0, 0, "pi/2", "-pi/2", "pi/2", "-pi/2"],
               [0, "D2", "D3", 0, 0, "D6"], ["R1", "R2", "R3", 0, "R5", "R6"], None),
    # spherical joint 2, 3, 4, axes 5 and 6 perpendicular: the position
    # equations have no closed form of types 1 to 8 (a quartic)
    "mid234_general": ([0] * 6, [0, "pi/2", "-pi/2", "pi/2", "-pi/2", "pi/2"],
                       [0, "D2", 0, 0, "D5", "D6"], [0, "R2", 0, "R4", 0, "R6"], None),
    # PPP gantry with an RRR wrist (offsets R4, R6)
    "gantry": ([1, 1, 1, 0, 0, 0], [0, "-pi/2", "-pi/2", 0, "-pi/2", "pi/2"],
               ["D1", 0, 0, "D4", 0, 0], [0, 0, 0, "R4", 0, "R6"], [0, "-pi/2", 0, "th4", "th5", "th6"]),
    # prismatic joints 2, 4, 5 (not consecutive)
    "rprppr": ([0, 1, 0, 1, 1, 0], [0, "pi/2", 0, "pi/2", "-pi/2", "pi/2"],
               ["D1", "D2", 0, "D4", 0, "D6"], [0, 0, "R3", 0, 0, "R6"], ["th1", 0, "th3", "pi/2", 0, "th6"]),
}


def par_text(name, sigma, alpha, d, r, theta=None):
    """A 6-joint serial chain in the .par format (geometry only)."""
    n = len(sigma)
    theta = theta or [f"th{j + 1}" for j in range(n)]
    r = [f"r{j + 1}" if s == 1 else x for j, (s, x) in enumerate(zip(sigma, r))]
    theta = [f"th{j + 1}" if s == 0 else t for j, (s, t) in enumerate(zip(sigma, theta))]

    def braces(xs):
        return "{" + ",".join(map(str, xs)) + "}"

    return "\n".join([
        f"(* Robotname = '{name}' *)", f"NL = {n}", f"NJ = {n}", f"NF = {n}", "Type = 0",
        f"ant = {braces(range(n))}", f"sigma = {braces(sigma)}", f"b = {braces([0] * n)}",
        f"d = {braces(d)}", f"r = {braces(r)}", f"gamma = {braces([0] * n)}",
        f"alpha = {braces(alpha)}", f"mu = {braces([1] * n)}", f"theta = {braces(theta)}", "",
    ])


@pytest.fixture(scope="module")
def robots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pieper")
    out = {}
    for name, table in TABLES.items():
        path = folder / f"{name}.par"
        path.write_text(par_text(name, *table))
        out[name] = kr.load(path)
    return out


def geometric_values(robot, rng):
    """Random signed lengths, |x| in [0.1, 0.8], for every geometric symbol."""
    joints = {robot.frame(label).q for label in robot.joint_labels}
    symbols = set()
    for label in robot.root_path(robot.joint_labels[-1]):
        symbols |= sympy.Matrix(robot.frame(label).transform()).free_symbols
    names = sorted(str(s) for s in symbols - joints)
    return {n: float(rng.choice([-1.0, 1.0]) * rng.uniform(0.1, 0.8)) for n in names}


class Case:
    def __init__(self, robot, seed):
        self.robot = robot
        self.rng = numpy.random.default_rng(seed)
        self.values = geometric_values(robot, self.rng)
        self.igm = derive_igm(robot)
        self.solve = self.igm.solver(self.values)
        self.model = num.ChainModel(robot, self.igm.end, self.values)
        self.revolute = self.model.revolute_mask()

    def random_configuration(self):
        return numpy.where(self.revolute, self.rng.uniform(-numpy.pi, numpy.pi, 6), self.rng.uniform(-1.0, 1.0, 6))

    def found(self, q, sols):
        q = num.wrap(q, self.revolute)
        return any(num.joint_distance(q, s, self.revolute) < 1e-7 for s in sols)


def round_trip(case, poses):
    """Worst pose error, solution counts and misses over random poses."""
    worst, counts, missed = 0.0, [], 0
    for _ in range(poses):
        q = case.random_configuration()
        T = case.model.pose(q)
        sols = case.solve(T)
        counts.append(len(sols))
        worst = max([worst] + [num.pose_distance(case.model.pose(s), T) for s in sols])
        missed += not case.found(q, sols)
    return worst, counts, missed


def test_structures_are_recognised(robots):
    chain = [str(j) for j in range(1, 7)]
    assert decoupled_structure(robots["mid234"], chain) == "spherical joint 2, 3, 4"
    assert decoupled_structure(robots["mid345"], chain) == "spherical joint 3, 4, 5"
    assert decoupled_structure(robots["mid234_general"], chain) == "spherical joint 2, 3, 4"
    assert decoupled_structure(robots["gantry"], chain) == "three prismatic joints"
    assert decoupled_structure(robots["rprppr"], chain) == "three prismatic joints"
    # the centre is the origin of frame k, in the frame before joint k and in frame k+2
    (first, last, left, right), = centres(robots["mid234"], chain)
    assert (first, last) == (1, 3)
    assert list(left) == [sympy.Symbol("D2"), -sympy.Symbol("R2"), 0, 1]
    assert list(right) == [0, 0, -sympy.Symbol("R4"), 1]
    (first, last, _, _), = centres(robots["mid345"], chain)
    assert (first, last) == (2, 4)
    # end spherical joints need no centre equations; rx90 is unchanged
    rx90 = library("rx90")
    assert centres(rx90, rx90.root_path("6")) == []
    assert decoupled_structure(rx90, rx90.root_path("6")) == "spherical joint 4, 5, 6"


def test_not_concurrent_is_not_a_spherical_joint(tmp_path):
    sigma, alpha, _d, r, _ = TABLES["mid234"]
    path = tmp_path / "offset.par"
    path.write_text(par_text("offset", sigma, alpha, [0, "D2", "D3", 0, "D5", "D6"], r))
    robot = kr.load(path)
    assert decoupled_structure(robot, robot.root_path("6")) is None


@pytest.mark.parametrize("name, outer", [("mid234", "th1"), ("mid345", "th6")])
@pytest.mark.long
def test_program_solves_the_outer_joints_first(robots, name, outer):
    igm = derive_igm(robots[name])
    assert igm.method == "pieper"
    text = str(igm)
    assert "Pieper's method" in text and "at most 8 solutions" in text
    # the position equations of the centre give the three outer joints,
    # then the orientation the three joints of the spherical joint
    order = [str(u) for step in igm.program.steps for u in step.unknowns]
    assert order[0] == outer
    assert set(order[3:]) <= {"th2", "th3", "th4", "th5"} | ({"phi__th5_th6"} if name == "mid234" else set())
    wrist = {"mid234": {"th2", "th3", "th4"}, "mid345": {"th3", "th4", "th5"}}[name]
    assert {str(step.unknowns[0]) for step in igm.program.steps[-3:]} == wrist


@pytest.mark.parametrize("name, poses", [("mid234", 300), ("mid345", 300), ("gantry", 100), ("rprppr", 100)])
@pytest.mark.long
def test_random_poses_round_trip(robots, name, poses):
    """Every solution reproduces the pose to 1e-10, the generating
    configuration is among them; 8 solutions at most (2 for the prismatic
    robots, whose position is linear in the lengths)."""
    worst, counts, missed = round_trip(Case(robots[name], seed=11), poses)
    assert worst <= 1e-10
    assert missed == 0
    if name.startswith("mid"):
        assert max(counts) == 8 and min(counts) >= 1
    else:
        assert set(counts) == {2}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", ["mid234", "mid345", "gantry", "rprppr"])
def test_random_poses_round_trip_more_geometries(robots, name, seed):
    worst, counts, missed = round_trip(Case(robots[name], seed=seed), 500)
    assert worst <= 1e-10 and missed == 0 and min(counts) >= 1


def dls_agreement(case, poses, starts):
    for _ in range(poses):
        T = case.model.pose(case.random_configuration())
        sols = case.solve(T)
        dls = num.numeric_inverse(case.model, T, starts=starts, rng=numpy.random.default_rng(0))
        assert len(dls) == len(sols)
        assert all(any(num.joint_distance(s, d, case.revolute) < 1e-6 for d in dls) for s in sols)


@pytest.mark.parametrize("name", ["mid234", pytest.param("mid345", marks=pytest.mark.slow)])
def test_solution_count_agrees_with_damped_least_squares(robots, name):
    """Both have 8 solutions at this pose (seed 5)."""
    dls_agreement(Case(robots[name], seed=5), poses=1, starts=120)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mid234", "mid345", "gantry", "rprppr"])
def test_solution_count_agrees_with_damped_least_squares_more_poses(robots, name):
    dls_agreement(Case(robots[name], seed=6), poses=4, starts=200)


def test_auto_picks_pieper_for_a_middle_spherical_joint(robots):
    case = Case(robots["mid345"], seed=4)
    q = case.random_configuration()
    T = case.model.pose(q)
    sols = inverse_geometric(case.robot, T, case.values)
    assert sols.method == "pieper" and case.found(q, sols)


def test_middle_wrist_singularity_gives_a_family(robots):
    """th3 = 0: axes 2 and 4 coincide; th2 + th4 is what the pose fixes."""
    case = Case(robots["mid234"], seed=7)
    q = case.random_configuration()
    q[2] = 0.0
    T = case.model.pose(q)
    sols = case.solve(T)
    assert sols and sols.singular
    assert all(num.pose_distance(case.model.pose(s), T) <= 1e-10 for s in sols)
    family = [s for s, free in zip(sols, sols.families) if free]
    free = sols.families[sols.families.index(next(f for f in sols.families if f))]
    index = case.robot.joint_labels.index(free[0])
    other = {1: 3, 3: 1}[index]
    moved = family[0].copy()
    moved[index] += 0.7
    moved[other] -= 0.7
    assert num.pose_distance(case.model.pose(moved), T) <= 1e-10


def test_general_geometry_falls_back_to_the_general_method(robots):
    """A middle spherical joint whose position equations need a quartic:
    no closed form of types 1 to 8, and 'auto' uses the general 6R method
    (the failure is remembered, not derived again at each call)."""
    robot = robots["mid234_general"]
    with pytest.raises(NoClosedForm):
        derive_igm(robot)
    with pytest.raises(NoClosedForm):
        derive_igm(robot)
    case_values = geometric_values(robot, numpy.random.default_rng(9))
    model = num.ChainModel(robot, "6", case_values)
    revolute = model.revolute_mask()
    q = numpy.random.default_rng(9).uniform(-numpy.pi, numpy.pi, 6)
    T = model.pose(q)
    sols = inverse_geometric(robot, T, case_values)
    assert sols.method == "general"
    assert all(num.pose_distance(model.pose(s), T) <= 1e-10 for s in sols)
    assert any(num.joint_distance(num.wrap(q, revolute), s, revolute) < 1e-7 for s in sols)


def test_exported_python_gives_the_same_solutions(robots):
    """The generated code carries the centre's equations like the program."""
    import re

    from kanerobot.igm.export import generate_igm

    case = Case(robots["mid345"], seed=12)
    source = generate_igm(case.igm, "python")
    namespace = {}
    exec(source, namespace)
    names = re.search(r"p = \[(.*?)\]", source).group(1).split(", ")
    for _ in range(5):
        q = case.random_configuration()
        T = case.model.pose(q)
        exported = [num.wrap(numpy.array(s, dtype=float), case.revolute)
                    for s in namespace["igm_mid345"](T, [case.values[n] for n in names])]
        sols = case.solve(T)
        assert len(exported) == len(sols) and case.found(q, exported)
        assert all(num.pose_distance(case.model.pose(s), T) <= 1e-10 for s in exported)
