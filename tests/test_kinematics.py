"""Kinematic models, each checked against an independent path: finite
differences of the geometric model, the Jacobian, numerical time derivatives,
the numerically solved loops, and OpenSYMORO's RX-90 Jacobian."""

import numpy
import pytest
import sympy
from conftest import corpus_file, random_values

from kanerobot import geometry, kinematics
from kanerobot.errors import KaneRobotError, SingularityError
from kanerobot.robot.description import Base, Robot
from kanerobot.robot.expressions import parse_expression

H = 1e-6


def vee(S):
    """Vector of the skew-symmetric part of a 3x3 matrix."""
    return 0.5 * numpy.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def fd_jacobian(T, q, h=H):
    """6 x nj Jacobian of the origin of T(q) in the frame T is given in,
    by central differences: dP/dq and vee(dR/dq R^T)."""
    T0 = T(q)
    cols = []
    for k in range(len(q)):
        e = numpy.zeros(len(q))
        e[k] = h
        Tp, Tm = T(q + e), T(q - e)
        dT = (Tp - Tm) / (2 * h)
        cols.append(numpy.concatenate([dT[:3, 3], vee(dT[:3, :3] @ T0[:3, :3].T)]))
    return numpy.array(cols).T


def block_rotation(R):
    out = numpy.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R
    return out


# --------------------------------------------------------------- Jacobian
def test_renaud_factor_matches_opensymoro_rx90(rx90, rng):
    reference = {}
    for line in corpus_file("RX90_jac.txt").read_text().splitlines():
        name, _, expr = line.partition(" = ")
        if expr and name[:1] in "JL" and name[1:].isdigit():
            reference[name] = parse_expression(expr)
    assert len(reference) == 36 + 9
    rotate, shift, J = kinematics.renaud_factors(rx90, "6", "0", "0")
    assert rotate == sympy.eye(6)
    symbols = sorted(rx90.joint_symbols | {sympy.Symbol("D3"), sympy.Symbol("RL4")}, key=str)
    for _ in range(3):
        point = dict(zip(symbols, rng.uniform(-2, 2, len(symbols))))
        for r in range(6):
            for c in range(6):
                assert float(J[r, c].subs(point)) == pytest.approx(float(reference[f"J{r + 1}{c + 1}"].subs(point)), abs=1e-12)
        for r in range(3):
            for c in range(3):
                assert float(shift[r, 3 + c].subs(point)) == pytest.approx(float(reference[f"L{r + 1}{c + 1}"].subs(point)), abs=1e-12)
    # one entry exactly, as printed
    D3, th1, th2 = sympy.symbols("D3 th1 th2")
    assert sympy.simplify(J[0, 2] - D3 * sympy.sin(th2) * sympy.cos(th1)) == 0


def _check_against_fd(robot, frame, rng, **kw):
    values = random_values(robot, rng)
    J = geometry.numeric_function(robot, kinematics.jacobian(robot, frame, **kw), values)
    T = geometry.numeric_transform(robot, "0", frame, values)
    for _ in range(3):
        q = rng.uniform(-2, 2, robot.nj)
        numpy.testing.assert_allclose(J(q), fd_jacobian(T, q), atol=1e-6)


def test_jacobian_against_finite_differences_serial(serial, rng):
    _check_against_fd(serial, "6", rng)


def test_jacobian_against_finite_differences_tree(tree, rng):
    for frame in ("3", "7", "5"):
        _check_against_fd(tree, frame, rng)


def test_jacobian_against_finite_differences_closed_loop_tree(sr400, rng):
    _check_against_fd(sr400, "9", rng)


@pytest.mark.long
def test_renaud_forms_give_the_same_jacobian(rx90, tree, rng):
    for robot, frame, forms in [
        (rx90, "6", [dict(intermediate="3", computation="2"), dict(intermediate="0"), dict(computation="5")]),
        (tree, "7", [dict(intermediate="2", computation="5"), dict(intermediate="4")]),
    ]:
        values = random_values(robot, rng)
        q = rng.uniform(-2, 2, robot.nj)
        direct = geometry.numeric_function(robot, kinematics.jacobian(robot, frame), values)(q)
        for form in forms:
            other = geometry.numeric_function(robot, kinematics.jacobian(robot, frame, **form), values)(q)
            numpy.testing.assert_allclose(other, direct, atol=1e-12)


@pytest.mark.parametrize("projection", ["3", "6", "2"])
def test_jacobian_projection_is_a_rotation(rx90, rng, projection):
    values = random_values(rx90, rng)
    q = rng.uniform(-2, 2, 6)
    J0 = geometry.numeric_function(rx90, kinematics.jacobian(rx90, "6"), values)(q)
    Jr = geometry.numeric_function(rx90, kinematics.jacobian(rx90, "6", projection), values)(q)
    rA0 = geometry.numeric_transform(rx90, projection, "0", values)(q)[:3, :3]
    numpy.testing.assert_allclose(Jr, block_rotation(rA0) @ J0, atol=1e-12)


def test_jacobian_columns_are_zero_off_the_path(tree):
    J = kinematics.jacobian(tree, "3")
    assert kinematics.path_joints(tree, "3") == ("1", "2", "3")
    assert J[:, 3:] == sympy.zeros(6, 3)


def test_determinant_and_inverse_kinematic_model_rx90(rx90, rng):
    det = kinematics.jacobian_determinant(rx90, "6")
    th = sympy.symbols("th1:7")
    D3, RL4 = sympy.symbols("D3 RL4")
    documented = D3 * RL4 * (D3 * sympy.cos(th[1]) - RL4 * sympy.sin(th[1] + th[2])) * sympy.sin(th[4]) * sympy.cos(th[2])
    assert sympy.simplify(det - documented) == 0
    values = random_values(rx90, rng)
    J = geometry.numeric_function(rx90, kinematics.jacobian(rx90, "6"), values)
    d = geometry.numeric_function(rx90, sympy.Matrix([det]), values)
    twist = sympy.Matrix(kinematics.TWIST_SYMBOLS)
    qd = kinematics.inverse_kinematic_model(rx90, "6", projection="2")
    ikm = sympy.lambdify([list(rx90.q), list(twist)], qd.xreplace({sympy.Symbol(k): v for k, v in values.items()}))
    for _ in range(3):
        q = rng.uniform(-2, 2, 6)
        assert d(q)[0, 0] == pytest.approx(numpy.linalg.det(J(q)), rel=1e-9)
        t = rng.uniform(-1, 1, 6)
        R = geometry.numeric_transform(rx90, "2", "0", values)(q)[:3, :3]
        numpy.testing.assert_allclose(block_rotation(R) @ J(q) @ numpy.asarray(ikm(q, t), float).reshape(-1), t, atol=1e-9)


def test_determinant_stanford_and_square_checks(stanford, tree, rng):
    det = kinematics.jacobian_determinant(stanford, "6", simplify=False)
    values = random_values(stanford, rng)
    J = geometry.numeric_function(stanford, kinematics.jacobian(stanford, "6"), values)
    d = geometry.numeric_function(stanford, sympy.Matrix([det]), values)
    q = rng.uniform(-2, 2, 6)
    assert d(q)[0, 0] == pytest.approx(numpy.linalg.det(J(q)), rel=1e-9)
    with pytest.raises(KaneRobotError, match="not square"):
        kinematics.jacobian_determinant(tree, "7")
    with pytest.raises(KaneRobotError, match="not square"):
        kinematics.inverse_kinematic_model(tree, "3", rows=[0, 1])
    # three joints move frame 3 of the tree: its position rows are square
    det3 = kinematics.jacobian_determinant(tree, "3", rows=[0, 1, 2], simplify=False)
    values = random_values(tree, rng)
    q = rng.uniform(-2, 2, tree.nj)
    J3 = geometry.numeric_function(tree, kinematics.jacobian(tree, "3"), values)(q)[:3, :3]
    assert geometry.numeric_function(tree, sympy.Matrix([det3]), values)(q)[0, 0] == pytest.approx(numpy.linalg.det(J3), rel=1e-9)


# ------------------------------------------------------------ recursions
def _velocity_functions(robot, values, states):
    """label -> f(q, qd) giving [0V_j; 0w_j] (the recursion, rotated to frame 0)."""
    out = {}
    for label, (w, V) in states.items():
        if label == "0":
            continue
        A = geometry.rotation(robot, "0", label)
        out[label] = geometry.numeric_function(robot, sympy.Matrix.vstack(A * V, A * w), values, ("q", "qd"))
    return out


@pytest.mark.parametrize("name", ["rx90", "tree", "sr400"])
@pytest.mark.long
def test_link_velocities_equal_jacobian_times_qd(name, request, rng):
    robot = request.getfixturevalue(name)
    values = random_values(robot, rng)
    velocities = _velocity_functions(robot, values, kinematics.link_velocities(robot))
    q, qd = rng.uniform(-2, 2, robot.nj), rng.uniform(-1, 1, robot.nj)
    for label, f in velocities.items():
        J = geometry.numeric_function(robot, kinematics.jacobian(robot, label), values)(q)
        numpy.testing.assert_allclose(f(q, qd).reshape(-1), J @ qd, atol=1e-12)


@pytest.mark.long
def test_link_velocities_with_a_moving_base(tree, rng):
    W0, V0 = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    moving = Robot.create("moving", tree.frames, base=Base.from_values(W0=W0.tolist(), V0=V0.tolist()))
    values = random_values(tree, rng)
    velocities = _velocity_functions(moving, values, kinematics.link_velocities(moving))
    q, qd = rng.uniform(-2, 2, tree.nj), rng.uniform(-1, 1, tree.nj)
    for label, f in velocities.items():
        J = geometry.numeric_function(tree, kinematics.jacobian(tree, label), values)(q)
        P = geometry.numeric_transform(tree, "0", label, values)(q)[:3, 3]
        expected = J @ qd + numpy.concatenate([V0 + numpy.cross(W0, P), W0])
        numpy.testing.assert_allclose(f(q, qd).reshape(-1), expected, atol=1e-12)
    rest = kinematics.link_velocities(moving, base=False)["7"]
    assert rest == kinematics.link_velocities(tree)["7"]


@pytest.mark.parametrize("name", ["rx90", "tree"])
@pytest.mark.long
def test_link_accelerations_are_time_derivatives_of_velocities(name, request, rng):
    robot = request.getfixturevalue(name)
    values = random_values(robot, rng)
    velocities = _velocity_functions(robot, values, kinematics.link_velocities(robot))
    accelerations = {}
    for label, (wd, Vd) in kinematics.link_accelerations(robot).items():
        if label != "0":
            A = geometry.rotation(robot, "0", label)
            accelerations[label] = geometry.numeric_function(
                robot, sympy.Matrix.vstack(A * Vd, A * wd), values, ("q", "qd", "qdd"))
    q0, qd0, qdd0 = rng.uniform(-2, 2, robot.nj), rng.uniform(-1, 1, robot.nj), rng.uniform(-1, 1, robot.nj)

    def state(t):
        return q0 + qd0 * t + qdd0 * t**2 / 2, qd0 + qdd0 * t

    h = 1e-5
    for label, f in velocities.items():
        numeric = (f(*state(h)) - f(*state(-h))) / (2 * h)
        numpy.testing.assert_allclose(accelerations[label](q0, qd0, qdd0), numeric, atol=1e-7)


@pytest.mark.long
def test_base_accelerations_add_rigid_body_terms(tree, rng):
    WP0, VP0 = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    pushed = Robot.create("pushed", tree.frames, base=Base.from_values(WP0=WP0.tolist(), VP0=VP0.tolist()))
    values = random_values(tree, rng)
    q, qd, qdd = (rng.uniform(-1, 1, tree.nj) for _ in range(3))
    with_base = kinematics.link_accelerations(pushed)
    at_rest = kinematics.link_accelerations(pushed, base=False)
    for label in tree.labels:
        diff = sympy.Matrix.vstack(with_base[label][0] - at_rest[label][0], with_base[label][1] - at_rest[label][1])
        got = geometry.numeric_function(tree, diff, values, ("q", "qd", "qdd"))(q, qd, qdd).reshape(-1)
        T = geometry.numeric_transform(tree, label, "0", values)(q)
        P = numpy.linalg.inv(T)[:3, 3]
        expected = numpy.concatenate([T[:3, :3] @ WP0, T[:3, :3] @ (VP0 + numpy.cross(WP0, P))])
        numpy.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize("name,frame", [("rx90", "6"), ("stanford", "6"), ("tree", "7")])
@pytest.mark.long
def test_jdot_qdot_is_the_derivative_of_the_jacobian(name, frame, request, rng):
    robot = request.getfixturevalue(name)
    values = random_values(robot, rng)
    J = geometry.numeric_function(robot, kinematics.jacobian(robot, frame), values)
    jq = geometry.numeric_function(robot, kinematics.jdot_qdot(robot, frame), values, ("q", "qd"))
    q, qd = rng.uniform(-2, 2, robot.nj), rng.uniform(-1, 1, robot.nj)
    numeric = (J(q + H * qd) - J(q - H * qd)) / (2 * H) @ qd
    numpy.testing.assert_allclose(jq(q, qd).reshape(-1), numeric, atol=1e-6)
    other = kinematics.jdot_qdot(robot, frame, projection="2")
    R = geometry.numeric_transform(robot, "2", "0", values)(q)[:3, :3]
    got = geometry.numeric_function(robot, other, values, ("q", "qd"))(q, qd).reshape(-1)
    numpy.testing.assert_allclose(got, block_rotation(R) @ numeric, atol=1e-6)


# ------------------------------------------------------- loop constraints
def _root(robot, cut, closing):
    up, down = robot.path(cut, closing)
    return robot.antecedent((up or down)[-1] if up else down[0])


@pytest.mark.parametrize("name", ["sr400", "twoloops", "akr3000"])
def test_loop_constraint_jacobian_is_the_relative_twist(name, request, rng):
    robot = request.getfixturevalue(name)
    c = kinematics.loop_velocity_constraints(robot)
    assert c.J.shape == (6 * len(robot.loops), robot.nj)
    values = random_values(robot, rng)
    q = rng.uniform(-2, 2, robot.nj)  # any configuration: the loops need not be closed
    Jq = c.numeric(values)(q)
    for b, (cut, closing) in enumerate(robot.loops):
        root = _root(robot, cut, closing)
        Tk = geometry.numeric_transform(robot, root, cut, values)
        TkB = geometry.numeric_transform(robot, root, closing, values)
        kAroot = Tk(q)[:3, :3].T
        expected = block_rotation(kAroot) @ (fd_jacobian(Tk, q) - fd_jacobian(TkB, q))
        numpy.testing.assert_allclose(Jq[6 * b:6 * b + 6], expected, atol=1e-6)


def test_loop_constraint_blocks_of_a_planar_loop(sr400):
    c = kinematics.loop_velocity_constraints(sr400)
    assert (c.active, c.passive, c.cut) == (("1", "2", "4", "5", "6", "7"), ("3", "8"), ("9",))
    assert c.zero_rows == (2, 3, 4) and c.cut_rows == (5,) and c.rows == (0, 1)
    assert c.Wa.shape == (2, 6) and c.Wp.shape == (2, 2) and c.Wc.shape == (1, 1)
    assert c.J.extract(list(c.rows), [8]) == sympy.zeros(2, 1)  # the cut joint is not in the first block


@pytest.mark.parametrize("name", ["testloop", "sr400", "twoloops"])
@pytest.mark.long
def test_W_matches_finite_differences_of_the_solved_loops(name, request, rng):
    robot = request.getfixturevalue(name)
    values = random_values(robot, rng)
    solve = geometry.loop_solver(robot, values)
    c = kinematics.loop_velocity_constraints(robot)
    index = [robot.joint_labels.index(label) for label in solve.unknown]
    qa = rng.uniform(-1, 1, len(robot.active_joints))
    q0 = solve(qa, guess=rng.uniform(-0.5, 0.5, len(solve.unknown)))
    G = c.G(values, q0)
    h = 1e-5
    numeric = numpy.zeros_like(G)
    for k in range(len(qa)):
        e = numpy.zeros(len(qa))
        e[k] = h
        plus = solve(qa + e, guess=q0[index])
        minus = solve(qa - e, guess=q0[index])
        numeric[:, k] = (plus - minus) / (2 * h)
    numpy.testing.assert_allclose(G, numeric, atol=1e-6)
    passive = [robot.joint_labels.index(label) for label in c.passive]
    numpy.testing.assert_allclose(c.W(values, q0), numeric[passive], atol=1e-6)
    if c.Wp.rows == c.Wp.cols:
        W = geometry.numeric_function(robot, c.W_symbolic(), values)(q0)
        numpy.testing.assert_allclose(W, numeric[passive], atol=1e-6)


def test_W_at_a_singular_configuration(testloop):
    # both sides of the loop superposed: the passive joints are not determined
    c = kinematics.loop_velocity_constraints(testloop)
    q = [0.3, 0.5, 0.3, 0.5, 0.0]
    with pytest.raises(SingularityError, match="not determined"):
        c.W({"d": 1.0}, q)
    with pytest.raises(KaneRobotError, match="no loops"):
        kinematics.loop_velocity_constraints(Robot.create("open", testloop.frames[:2]))
