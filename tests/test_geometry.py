"""Geometric models: transforms between any frames, DGM, loop closure."""

import numpy
import pytest
import sympy
from conftest import library, random_values

from kanerobot import geometry
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot.description import Base, Frame, KKPlacement, Robot


# An independent Khalil-Kleinfinger product, from elementary numpy matrices.
def _rot(axis, angle):
    c, s = numpy.cos(angle), numpy.sin(angle)
    T = numpy.eye(4)
    a, b = {"x": (1, 2), "z": (0, 1)}[axis]
    T[a, a], T[a, b], T[b, a], T[b, b] = c, -s, s, c
    return T


def _trans(axis, length):
    T = numpy.eye(4)
    T["xyz".index(axis), 3] = length
    return T


def kk_numeric(robot, label, values, q):
    """a(j)T_j from the KK parameters: Rz(gamma) Tz(b) Rx(alpha) Tx(d) Rz(theta) Tz(r)."""
    p = robot.frame(label).placement
    subs = {sympy.Symbol(k): v for k, v in values.items()}
    subs.update({s: v for s, v in zip(robot.q, q)})
    g, b, al, d, th, r = (float(sympy.sympify(getattr(p, k)).subs(subs)) for k in KKPlacement.KEYS)
    return _rot("z", g) @ _trans("z", b) @ _rot("x", al) @ _trans("x", d) @ _rot("z", th) @ _trans("z", r)


def test_dgm_matches_an_independent_product_of_elementary_transforms(serial, rng):
    values = random_values(serial, rng)
    T = geometry.numeric_transform(serial, "0", "6", values)
    for _ in range(3):
        q = rng.uniform(-numpy.pi, numpy.pi, serial.nj)
        expected = numpy.eye(4)
        for label in serial.root_path("6"):
            expected = expected @ kk_numeric(serial, label, values, q)
        numpy.testing.assert_allclose(T(q), expected, atol=1e-12)
    assert geometry.direct_geometric_model(serial) == geometry.transform(serial, "0", "6")


@pytest.mark.parametrize("pairs", [
    [("3", "7"), ("7", "3"), ("0", "5"), ("6", "2"), ("3", "3"), ("2", "0")],
])
@pytest.mark.long
def test_transform_inverse_and_through_the_base_on_a_tree(tree, rng, pairs):
    values = random_values(tree, rng)
    base = {label: geometry.numeric_transform(tree, "0", label, values) for label in tree.labels}
    base["0"] = lambda q: numpy.eye(4)
    for i, j in pairs:
        ij = geometry.numeric_transform(tree, i, j, values)
        ji = geometry.numeric_transform(tree, j, i, values)
        for _ in range(3):
            q = rng.uniform(-2, 2, tree.nj)
            numpy.testing.assert_allclose(ij(q) @ ji(q), numpy.eye(4), atol=1e-12)
            numpy.testing.assert_allclose(ij(q), numpy.linalg.inv(base[i](q)) @ base[j](q), atol=1e-12)


def test_transform_between_the_sides_of_a_loop(sr400, rng):
    values = random_values(sr400, rng)
    T = geometry.numeric_transform(sr400, "9", "10", values)
    T09 = geometry.numeric_transform(sr400, "0", "9", values)
    T010 = geometry.numeric_transform(sr400, "0", "10", values)
    q = rng.uniform(-2, 2, sr400.nj)
    numpy.testing.assert_allclose(T(q), numpy.linalg.inv(T09(q)) @ T010(q), atol=1e-12)


def test_transform_with_a_shared_cache_gives_the_same_expressions(tree, sr400):
    for robot in (tree, sr400):
        cache = {}
        labels = ("0",) + robot.labels
        for i in labels:
            for j in labels:
                T = geometry.transform(robot, i, j, cache=cache)
                assert T == geometry.transform(robot, i, j)
                T[0, 0] = sympy.Symbol("changed")  # the result is the caller's, not the cache's
                assert geometry.transform(robot, i, j, cache=cache) == geometry.transform(robot, i, j)


def test_inverse_transform_is_exact():
    t, x, y = sympy.symbols("t x y")
    T = sympy.Matrix([[sympy.cos(t), -sympy.sin(t), 0, x], [sympy.sin(t), sympy.cos(t), 0, y], [0, 0, 1, 0], [0, 0, 0, 1]])
    assert sympy.simplify(geometry.inverse_transform(T) - T.inv()) == sympy.zeros(4)


def test_world_placement_prepends_z(rx90, rng):
    Z = [0, -1, 0, 0.5, 1, 0, 0, -0.2, 0, 0, 1, 0.8, 0, 0, 0, 1]
    placed = Robot.create("placed", rx90.frames, base=Base.from_values(Z=Z))
    values = random_values(rx90, rng)
    q = rng.uniform(-2, 2, 6)
    world = geometry.numeric_function(placed, geometry.direct_geometric_model(placed, world=True), values)(q)
    local = geometry.numeric_transform(placed, "0", "6", values)(q)
    numpy.testing.assert_allclose(world, numpy.array(Z, dtype=float).reshape(4, 4) @ local, atol=1e-12)


def test_terminal_frame(sr400, tree, rx90):
    assert geometry.terminal_frame(rx90) == "6"
    assert geometry.terminal_frame(sr400) == "6"
    with pytest.raises(KaneRobotError, match="several end frames"):
        geometry.direct_geometric_model(tree)


def test_numeric_transform_lists_missing_values_and_refuses_joint_variables(rx90):
    with pytest.raises(ParameterError, match="no value for D3, RL4"):
        geometry.numeric_transform(rx90, "0", "6", {})
    with pytest.raises(ParameterError, match="th1"):
        geometry.numeric_transform(rx90, "0", "6", {"D3": 1, "RL4": 1, "th1": 0.0})
    # only the symbols of this transform are needed; extra names are ignored
    T = geometry.numeric_transform(rx90, "0", "2", {"unused": 3.0})
    numpy.testing.assert_allclose(T(numpy.zeros(6))[:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-15)


# ------------------------------------------------------------------ loops
def _closing_error(robot, values, q):
    worst = 0.0
    for cut, closing in robot.loops:
        a = geometry.numeric_transform(robot, "0", cut, values)(q)
        b = geometry.numeric_transform(robot, "0", closing, values)(q)
        worst = max(worst, float(numpy.max(numpy.abs(a - b))))
    return worst


@pytest.mark.parametrize("name", ["testloop", "sr400", "twoloops"])
@pytest.mark.long
def test_solve_loops_closes_every_loop(name, request, rng):
    robot = request.getfixturevalue(name)
    values = random_values(robot, rng)
    solve = geometry.loop_solver(robot, values)
    assert len(geometry.loop_constraints(robot)) == 12 * len(robot.loops)
    for _ in range(3):
        qa = rng.uniform(-1, 1, len(robot.active_joints))
        q = solve(qa, guess=rng.uniform(-0.5, 0.5, len(solve.unknown)))
        index = [robot.joint_labels.index(a) for a in robot.active_joints]
        numpy.testing.assert_array_equal(q[index], qa)
        assert _closing_error(robot, values, q) < 1e-10
        residual = geometry.numeric_function(robot, sympy.Matrix(geometry.loop_constraints(robot)), values)(q)
        assert numpy.max(numpy.abs(residual)) < 1e-10


def test_solve_loops_reports_a_loop_that_cannot_close():
    t1, t2, t3, t4 = sympy.symbols("t1:5")
    far = Robot.create("far", [  # ground link 5, three links of length 1: never closes
        Frame("1", "0", 0, 1, KKPlacement(theta=t1)),
        Frame("2", "1", 0, 0, KKPlacement(d=1, theta=t2)),
        Frame("3", "0", 0, 0, KKPlacement(d=5, theta=t3)),
        Frame("4", "3", 0, 0, KKPlacement(d=1, theta=t4)),
        Frame("5", "2", 2, 0, KKPlacement(d=1))], loops=[("4", "5")])
    with pytest.raises(KaneRobotError, match="do not close: largest residual"):
        geometry.solve_loops(far, {}, [0.3])
    with pytest.raises(KaneRobotError, match="needs 1 values"):
        geometry.solve_loops(far, {}, [0.3, 0.2])
    with pytest.raises(ParameterError, match="no value for d"):
        geometry.solve_loops(Robot.create("x", far.frames[:4] + (Frame("5", "2", 2, 0, KKPlacement(d=sympy.Symbol("d"))),),
                                          loops=far.loops), {}, [0.3])
    with pytest.raises(KaneRobotError, match="no loops"):
        geometry.solve_loops(Robot.create("open", far.frames[:2]), {}, [0.3])


def test_shipped_four_bar_is_the_unit_parallelogram():
    # the robot of the docstring examples of geometry and kinematics
    th = sympy.symbols("th1:5")
    built = Robot.create("fourbar", [
        Frame("1", "0", 0, 1, KKPlacement(theta=th[0])),
        Frame("2", "1", 0, 0, KKPlacement(d=1, theta=th[1])),
        Frame("3", "0", 0, 0, KKPlacement(d=1, theta=th[2])),
        Frame("4", "3", 0, 0, KKPlacement(d=1, theta=th[3])),
        Frame("5", "2", 2, 0, KKPlacement(d=1))], loops=[("4", "5")])
    fourbar = library("fourbar")
    assert fourbar == built
    for a in (0.4, 1.5, 2.5):
        q = geometry.solve_loops(fourbar, {}, [a], guess=[-a, a, -a])
        numpy.testing.assert_allclose(q, [a, -a, a, -a], atol=1e-9)
        assert _closing_error(fourbar, {}, q) < 1e-10
    with pytest.raises(KaneRobotError, match="no end frame outside its loops"):
        geometry.terminal_frame(fourbar)


@pytest.mark.parametrize("name,i,j", [("rx90", "0", "6"), ("tree", "3", "7"), ("sr400", "10", "9")])
def test_fast_geometric_model_evaluates_to_the_transform(name, i, j, request, rng):
    robot = request.getfixturevalue(name)
    program = geometry.fast_geometric_model(robot, i, j)
    assert len(program.outputs) == 12
    values = random_values(robot, rng)
    names = sorted(values)
    f = program.to_function(args=list(robot.q) + [sympy.Symbol(n) for n in names])
    T = geometry.numeric_transform(robot, i, j, values)
    for _ in range(2):
        q = rng.uniform(-2, 2, robot.nj)
        got = f(*q, *(values[n] for n in names)).reshape(3, 4)
        numpy.testing.assert_allclose(got, T(q)[:3], atol=1e-12)
