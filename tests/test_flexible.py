"""Flexible joints (kanerobot.dynamics.flexible).

Numbers are checked by independent paths:

- Kane's method on the tree of links and rotors (KaneSystem: partial
  velocities, A and H solved numerically) against OpenSYMORO's three-step
  Newton-Euler recursion, for the inverse and direct models, Spong's and the
  full rotor model, on the library's flexible robots and on 3-D robots that
  mix rigid and flexible, revolute and prismatic joints, oblique axes and a
  moving base; random states, random physically consistent parameters;
- the spring's generalized active forces formed by KanesMethod from the
  torque pair on the link and on the rotor;
- as k grows, the flexible arm's motion converges to the rigid arm's
  (kr.derive of the same robot with eta = 0), error ~ 1/k;
- Lagrange's energies on the same tree, on the library robots;
- the one-link flexible arm against its equations written by hand;
- the inverse model fed with the direct model's accelerations.
"""

import functools

import numpy as np
import pytest
import sympy
from conftest import assert_close, library, tree_robot
from scipy.integrate import solve_ivp

import kanerobot as kr
from kanerobot.dynamics import flexible
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.robot.description import Base, Robot


def with_eta(robot, flexible_labels, **joint_values):
    """``robot`` with the joints ``flexible_labels`` flexible (eta = 1), the
    others rigid; ``joint_values`` override joint parameters of every
    flexible joint (``k=-5``)."""
    joints = {}
    for label in robot.joint_labels:
        values = dict(robot.joint_parameters[label], eta=int(label in flexible_labels))
        if label in flexible_labels:
            values.update(joint_values)
        joints[label] = values
    return Robot.create(
        robot.name,
        robot.frames,
        links=robot.links,
        dynamics={label: dict(values) for label, values in robot.dynamics.items()},
        joint_parameters=joints,
        base=robot.base,
        loops=robot.loops,
    )


def moving_tree():
    """conftest's tree (KK frames with gamma and b, general frames with oblique
    revolute and prismatic axes, a fixed leaf) with joints 2, 3 (prismatic), 5
    (oblique revolute) and 6 (oblique prismatic) flexible, on a moving base."""
    tree = tree_robot()
    base = Base.from_values(W0=["w1", "w2", "w3"], WP0=["wp1", 0, "wp3"], VP0=[0, "vp2", 0], G=["g1", "g2", "g3"])
    return with_eta(Robot.create("tree", tree.frames, base=base), {"2", "3", "5", "6"})


ROBOTS = {
    "flexarm1": lambda: library("flexarm1"),
    "planar2flex": lambda: library("planar2flex"),
    "rx90 2,3,5 flexible": lambda: with_eta(library("rx90"), {"2", "3", "5"}),
    "tree moving base": moving_tree,
}
#: (robot, rotor model) pairs the engines are compared on: both models on the
#: library robots, one each on the 3-D robots (Kane's derivation is the slow part).
CASES = [(name, rotor) for name in ("flexarm1", "planar2flex") for rotor in flexible.ROTORS]
CASES += [("rx90 2,3,5 flexible", "spong"), ("tree moving base", "full")]


@functools.cache
def case_robot(name):
    """The robot of ``ROBOTS[name]``, built once (library robots come from conftest's cache)."""
    return ROBOTS[name]()


@functools.cache
def model(name, method, rotor):
    """The flexible models of a case, derived once (the derivation is the slow part)."""
    return flexible.derive(case_robot(name), method=method, rotor=rotor)


def random_state(rng, fn, batch=4):
    z, zd, zdd = rng.uniform(-np.pi, np.pi, (batch, fn.m)), rng.uniform(-2, 2, (batch, fn.m)), rng.uniform(-3, 3, (batch, fn.m))
    tau = rng.uniform(-5, 5, (batch, fn.n))
    return z, zd, zdd, tau


# ------------------------------------------------------- robot files
def test_library_flexible_robots_read_eta_and_k(tmp_path):
    arm, planar = library("flexarm1"), library("planar2flex")
    assert flexible.flexible_joints(arm) == ("1",) and arm.joint_parameters["1"]["k"] == sympy.Symbol("K1")
    assert flexible.flexible_joints(planar) == ("1", "2")
    assert [planar.joint_parameters[j]["k"] for j in "12"] == list(sympy.symbols("k1 k2"))
    for robot in (arm, planar):
        for suffix in (".par", ".toml"):
            kr.save(robot, tmp_path / f"copy{suffix}")
            assert kr.load(tmp_path / f"copy{suffix}") == robot


def test_augmented_tree_maps_the_motor_parameters():
    robot = library("planar2flex")
    spong, full = flexible.augmented_robot(robot, "spong"), flexible.augmented_robot(robot, "full")
    for tree in (spong, full):
        assert tree.joint_labels == ("1", "2", "r1", "r2")
        assert flexible.flexible_joints(tree) == ()
        assert tree.frame("r2").antecedent == "1" and tree.frame("r2").q == sympy.Symbol("qr2")
        assert [tree.joint_parameters["2"][key] for key in ("GAM", "eta")] == [0, 0]
        assert [tree.dynamics["2"][key] for key in ("IA", "FV", "FS")] == [0, 0, 0]
        assert tree.joint_parameters["r2"]["GAM"] == sympy.Symbol("GAM2")
        assert [tree.dynamics["r2"][key] for key in ("FV", "FS", "M")] == [*sympy.symbols("FV2 FS2"), 0]
    assert spong.dynamics["r2"]["IA"] == sympy.Symbol("IA2") and spong.dynamics["r2"]["ZZ"] == 0
    assert full.dynamics["r2"]["ZZ"] == sympy.Symbol("IA2") and full.dynamics["r2"]["IA"] == 0


# ------------------------------------------- (1) Kane = Newton-Euler
@pytest.mark.parametrize("name, rotor", CASES)
@pytest.mark.long
def test_kane_agrees_with_three_step_newton_euler(name, rotor):
    robot = case_robot(name)
    rng = np.random.default_rng(CASES.index((name, rotor)))
    values = random_parameters(robot, rng)
    ne = model(name, "newton-euler", rotor).numeric(values, backend="numpy")
    kane = model(name, "kane", rotor).numeric(values, backend="numpy")
    assert not model(name, "kane", rotor).has_program("direct_dynamics")
    z, zd, zdd, tau = random_state(rng, ne)
    assert_close(kane.mass_matrix(z), ne.mass_matrix(z))
    assert_close(kane.h(z, zd), ne.h(z, zd))
    assert_close(kane.gravity(z), ne.gravity(z))
    assert_close(kane.direct_dynamics(z, zd, tau), ne.direct_dynamics(z, zd, tau))
    for got, expected in zip(kane.inverse_dynamics(z, zd, zdd), ne.inverse_dynamics(z, zd, zdd)):
        assert_close(got, expected)


@pytest.mark.parametrize("name, rotor", CASES[:4])
def test_lagrange_agrees_too(name, rotor):
    """Lagrange's energies on the same tree of links and rotors."""
    robot = case_robot(name)
    rng = np.random.default_rng(31)
    values = random_parameters(robot, rng)
    ne = model(name, "newton-euler", rotor).numeric(values, backend="numpy")
    lagrange = model(name, "lagrange", rotor).numeric(values, backend="numpy")
    z, zd, zdd, tau = random_state(rng, ne)
    assert_close(lagrange.direct_dynamics(z, zd, tau), ne.direct_dynamics(z, zd, tau))
    for got, expected in zip(lagrange.inverse_dynamics(z, zd, zdd), ne.inverse_dynamics(z, zd, zdd)):
        assert_close(got, expected)


@pytest.mark.parametrize("name", ["planar2flex", "tree moving base"])
@pytest.mark.long
def test_spring_generalized_forces_by_kanes_method(name):
    """The torque (force) pair -k (q_j - q_rj) on link j and its opposite on
    rotor r_j, through KanesMethod's partial velocities: Gamma_f on q_j,
    -Gamma_f on q_rj, nothing on the joints that carry both."""
    robot = case_robot(name)
    system = model(name, "kane", "full").kane_system
    rng = np.random.default_rng(5)
    values = {sympy.Symbol(k): v for k, v in random_parameters(robot, rng).items()}
    tree = system.robot
    values.update(zip(tree.q, rng.uniform(-np.pi, np.pi, tree.nj)))
    values.update(zip(tree.qd, rng.uniform(-2, 2, tree.nj)))
    for symbol, expr in system.kinematics.assignments(include_dead=True):
        values[symbol] = sympy.N(expr.xreplace(values))
    by_name = {s.name: v for s, v in values.items()}
    tau = sympy.Symbol("tau_spring", real=True)
    index = {label: k for k, label in enumerate(tree.joint_labels)}
    for j in flexible.flexible_joints(robot):
        frame = robot.frame(j)
        pair = []
        for label, sign in ((j, 1), (f"r{j}", -1)):
            B = system.frames[label]
            axis = sign * tau * (frame.axis[0] * B.x + frame.axis[1] * B.y + frame.axis[2] * B.z)
            pair.append((B if frame.sigma == 0 else system.origins[label], axis))
        fr = system.generalized_active_forces(pair)
        numbers = [float(e.xreplace({s: by_name[s.name] for s in e.free_symbols if s != tau}).subs(tau, 1)) for e in fr]
        expected = np.zeros(tree.nj)
        expected[index[j]], expected[index[f"r{j}"]] = 1.0, -1.0
        assert np.allclose(numbers, expected, atol=1e-12)


def test_full_model_adds_the_rotor_coupling_spong_neglects():
    """planar2flex: rotor 2 rides on link 1, so its kinetic energy is
    IA2 (qd1 + qd_r2)^2 / 2 (full) instead of IA2 qd_r2^2 / 2 (Spong); rotor 1
    is on the base.  A differs by IA2 at (th1, th1), (th1, qr2); H is the same
    (every axis is parallel: no gyroscopic torque)."""
    rng = np.random.default_rng(11)
    values = random_parameters(case_robot("planar2flex"), rng)
    spong = model("planar2flex", "newton-euler", "spong").numeric(values, backend="numpy")
    full = model("planar2flex", "newton-euler", "full").numeric(values, backend="numpy")
    z, zd, _, _ = random_state(rng, spong)
    coupling = np.zeros((4, 4))
    coupling[0, 0] = coupling[0, 3] = coupling[3, 0] = values["IA2"]
    assert_close(full.mass_matrix(z) - spong.mass_matrix(z), np.broadcast_to(coupling, (4, 4, 4)))
    assert_close(full.h(z, zd), spong.h(z, zd))
    # Spong: no IA on the link side, IA on the motor diagonal only.
    A = spong.mass_matrix(z[0])
    assert A[2, 2] == pytest.approx(values["IA1"]) and A[3, 3] == pytest.approx(values["IA2"])
    assert np.all(A[:2, 2:] == 0) and A[2, 3] == 0


@pytest.mark.parametrize("name", ["planar2flex", "rx90 2,3,5 flexible"])
def test_paper_model_is_the_link_rows_of_spongs(name):
    """inverse_dynamics(robot) and direct_dynamics(robot) (rotor=None: the
    paper's eqs 12-29, motor positions as inputs) give the link rows of
    Spong's model."""
    robot = case_robot(name)
    rng = np.random.default_rng(3)
    values = random_parameters(robot, rng)
    fn = model(name, "kane", "spong").numeric(values, backend="numpy")
    z, zd, zdd, tau = (x[0] for x in random_state(rng, fn))
    state = dict(zip(model(name, "kane", "spong").coordinates, z))
    state.update({str(s): v for s, v in zip(model(name, "kane", "spong").tree.qd, zd)})
    state.update({str(s): v for s, v in zip(model(name, "kane", "spong").tree.qdd, zdd)})
    state.update({str(robot.joint_parameters[label]["GAM"]): t for label, t in zip(robot.joint_labels, tau)})
    state.update(values)

    def run(program):
        f = program.to_function()
        return dict(zip(f.outputs, f(*[state[s.name] for s in f.args])))

    flex = flexible.flexible_joints(robot)
    inverse = run(flexible.inverse_dynamics(robot))
    expected = fn.inverse_dynamics(z, zd, zdd)
    assert_close([inverse[f"QDP{j}"] for j in flex], expected.qdd_flexible)
    assert_close([inverse[f"GAM{j}"] for j in robot.joint_labels if j not in flex], expected.torque_rigid)
    direct = run(flexible.direct_dynamics(robot))
    assert_close([direct[f"QDP{j}"] for j in robot.joint_labels], fn.direct_dynamics(z, zd, tau)[: robot.nj])


# --------------------------------------- (2) k -> infinity: rigid arm
@pytest.mark.long
def test_motion_converges_to_the_rigid_arm_as_k_grows():
    """planar2flex in a vertical plane, Spong's model, motors driven with the
    rigid arm's gravity torque at the start pose plus a small input, from
    rest with the springs deflected by gravity (q_r = q + g(q) / k).  The
    rigid arm is kr.derive of the same robot with eta = 0 (IA on the joint,
    friction on qd).  Stiffnesses 1e2, 1e4, 1e6 N m/rad against a gravity
    torque of about 10 N m: the link trajectories' distance to the rigid one
    falls like 1/k."""
    robot = library("planar2flex")
    values = random_parameters(robot, np.random.default_rng(3), friction=False)
    values.update(G1=9.81, FV1=0.5, FV2=0.5)
    rigid = kr.derive(with_eta(robot, set())).numeric(values, backend="numpy")
    q0, T = np.array([0.6, -0.4]), 1.0
    g0 = rigid.gravity(q0)

    def u(t):
        return 0.5 * np.array([np.sin(3 * t), np.cos(2 * t) - 1])

    def rigid_rhs(t, x):
        return np.concatenate([x[2:], rigid.direct_dynamics(x[:2], x[2:], g0 + u(t))])

    options = dict(method="LSODA", rtol=1e-10, atol=1e-12, dense_output=True)
    reference = solve_ivp(rigid_rhs, (0, T), np.concatenate([q0, [0, 0]]), **options)
    times = np.linspace(0, T, 201)
    q_rigid = reference.sol(times)[:2]
    assert np.ptp(q_rigid, axis=1).min() > 0.01  # the arm does move
    flexible_model = flexible.derive(robot)
    errors = []
    for k in (1e2, 1e4, 1e6):
        fn = flexible_model.numeric(dict(values, k1=k, k2=k), backend="numpy")
        x0 = np.concatenate([q0, q0 + g0 / k, np.zeros(4)])
        assert_close(fn.direct_dynamics(x0[:4], x0[4:], g0), np.zeros(4))  # at rest: balanced
        solution = solve_ivp(fn.rhs, (0, T), x0, args=(lambda t, x: g0 + u(t),), **options)
        assert solution.success
        errors.append(np.max(np.abs(solution.sol(times)[:2] - q_rigid)))
    assert errors[0] > 30 * errors[1] > 900 * errors[2]
    assert errors[2] < 1e-6


# --------------------------------------------- (3) one-link flexible arm
@pytest.mark.parametrize("rotor", flexible.ROTORS)
@pytest.mark.parametrize("method", flexible.METHODS)
def test_one_link_arm_matches_its_closed_form(method, rotor):
    """frames/flexarm1.par, x of frame 0 down (G1 > 0), MY1 = 0:
    I qdd + m g l sin q = k (q_r - q),  J qdd_r + FV qd_r + FS sign(qd_r) + k (q_r - q) = tau
    with I = ZZ1, m l = MX1, g = G1, J = IA1.  The rotor sits on the base:
    Spong's and the full model are the same."""
    rng = np.random.default_rng(17)
    I, ml, g, J, FV, FS, k = 0.7, 1.3, 9.81, 0.05, 0.2, 0.1, 250.0
    # M1 = 3 (absent from the equations): a real body needs I >= (m l)^2 / m.
    values = {"ZZ1": I, "MX1": ml, "MY1": 0.0, "M1": 3.0, "G1": g, "IA1": J, "FV1": FV, "FS1": FS, "K1": k}
    fn = flexible.derive(library("flexarm1"), method=method, rotor=rotor).numeric(values, backend="numpy")
    q, qr, qd, qrd, qrdd, tau = rng.uniform(-2, 2, (6, 6))
    z, zd = np.stack([q, qr], axis=1), np.stack([qd, qrd], axis=1)
    qdd = (k * (qr - q) - ml * g * np.sin(q)) / I
    expected_qrdd = (tau - FV * qrd - FS * np.sign(qrd) - k * (qr - q)) / J
    assert_close(fn.direct_dynamics(z, zd, tau[:, None]), np.stack([qdd, expected_qrdd], axis=1))
    assert_close(fn.mass_matrix(z), np.broadcast_to(np.diag([I, J]), (6, 2, 2)))
    assert_close(fn.h(z, zd), np.stack([ml * g * np.sin(q), FV * qrd + FS * np.sign(qrd)], axis=1))
    assert_close(fn.elastic_torques(z), (k * (qr - q))[:, None])
    inverse = fn.inverse_dynamics(z, zd, np.stack([np.full(6, np.nan), qrdd], axis=1))
    assert_close(inverse.qdd_flexible, qdd[:, None])
    assert inverse.torque_rigid.shape == (6, 0)
    assert_close(inverse.torque_motor, (J * qrdd + FV * qrd + FS * np.sign(qrd) + k * (qr - q))[:, None])
    # One state in, one state out; rhs for solve_ivp.
    x = np.concatenate([z[0], zd[0]])
    assert_close(fn.rhs(0.0, x, tau[:1]), np.concatenate([zd[0], [qdd[0], expected_qrdd[0]]]))
    assert fn.direct_dynamics(z[0], zd[0], tau[:1]).shape == (2,)


# ------------------------------------- (4) inverse of the direct model
@pytest.mark.parametrize("method", ["newton-euler", "kane"])
@pytest.mark.parametrize("name, rotor", CASES[2:])
def test_inverse_model_gives_back_the_direct_models_input(name, rotor, method):
    robot = case_robot(name)
    rng = np.random.default_rng(23)
    fn = model(name, method, rotor).numeric(random_parameters(robot, rng), backend="numpy")
    z, zd, _, tau = random_state(rng, fn)
    zdd = fn.direct_dynamics(z, zd, tau)
    inverse = fn.inverse_dynamics(z, zd, zdd)
    assert_close(inverse.qdd_flexible, zdd[:, fn.flexible_index])
    assert_close(inverse.torque_rigid, tau[:, fn.rigid_index])
    assert_close(inverse.torque_motor, tau[:, fn.flexible_index])
    # A zdd + H = B tau + S Gamma_f
    A, H = fn.mass_matrix(z), fn.h(z, zd)
    assert_close(np.einsum("nij,nj->ni", A, zdd) + H, fn.generalized_forces(z, tau))


def test_compiled_backend_gives_the_numpy_numbers():
    from kanerobot.codegen.compiled import find_compiler

    try:
        find_compiler()
    except kr.KaneRobotError:
        pytest.skip("no C compiler")
    rng = np.random.default_rng(29)
    values = random_parameters(library("planar2flex"), rng)
    c = model("planar2flex", "newton-euler", "full").numeric(values, backend="c")
    py = model("planar2flex", "newton-euler", "full").numeric(values, backend="numpy")
    z, zd, zdd, tau = random_state(rng, py)
    assert c.backend == "c"
    assert_close(c.mass_matrix(z), py.mass_matrix(z), rtol=1e-12)
    assert_close(c.direct_dynamics(z, zd, tau), py.direct_dynamics(z, zd, tau), rtol=1e-12)
    for got, expected in zip(c.inverse_dynamics(z, zd, zdd), py.inverse_dynamics(z, zd, zdd)):
        assert_close(got, expected, rtol=1e-12)


# ------------------------------------------------------------ (5) errors
@pytest.mark.parametrize("k", [-5, 0])
def test_non_positive_stiffness_in_the_robot_is_refused(k):
    robot = with_eta(library("planar2"), {"2"}, k=k)
    message = f"joint 2 is flexible \\(eta = 1\\) but its stiffness k is {k}: give k a positive value"
    with pytest.raises(kr.KaneRobotError, match=message):
        flexible.derive(robot)
    with pytest.raises(kr.KaneRobotError, match="joint 2 is flexible"):
        flexible.inverse_dynamics(robot)


def test_missing_or_non_positive_stiffness_value_names_the_joint():
    model_ = model("flexarm1", "newton-euler", "spong")
    values = {"ZZ1": 0.7, "MX1": 1.3, "MY1": 0.0, "G1": 9.81, "IA1": 0.05, "FV1": 0.2, "FS1": 0.1, "K1": 100.0}
    model_.numeric(values, backend="numpy")
    with pytest.raises(kr.ParameterError, match="no value for K1: give K1 \\(stiffness of flexible joint 1\\) a positive value"):
        model_.numeric({k: v for k, v in values.items() if k != "K1"})
    with pytest.raises(kr.ParameterError, match="flexible joint 1 has stiffness k = K1 = -3: it must be positive"):
        model_.numeric(dict(values, K1=-3.0))
    with pytest.raises(kr.ParameterError, match="flexible joint 1 has rotor inertia IA = IA1 = 0: it must be positive"):
        model_.numeric(dict(values, IA1=0.0))
    with pytest.raises(kr.ParameterError, match="qr1 is not a symbol of this robot"):
        model_.numeric(dict(values, qr1=0.0))


def test_other_errors():
    arm = library("flexarm1")
    with pytest.raises(kr.KaneRobotError, match="unknown method 'hamilton' for flexible joints"):
        flexible.derive(arm, method="hamilton")
    with pytest.raises(kr.KaneRobotError, match="unknown rotor model 'motor'"):
        flexible.derive(arm, rotor="motor")
    with pytest.raises(kr.KaneRobotError, match="has no program for direct_dynamics: it is solved numerically"):
        model("flexarm1", "kane", "spong").program("direct_dynamics")
    with pytest.raises(kr.KaneRobotError, match="closed loops"):
        flexible.derive(with_eta(library("sr400"), {"2"}))
    with pytest.raises(kr.KaneRobotError, match=r"joint 1 is flexible .* rotor inertia IA1 is 0"):
        flexible.derive(Robot.create("noia", arm.frames, dynamics={"1": {"IA": 0}}, joint_parameters={"1": {"eta": 1}}))
    with pytest.raises(kr.KaneRobotError, match="motor symbols qr2 are already used"):
        flexible.derive(library("planar2flex").subs({"L1": "qr2"}))


# ------------------------------------------------------------ op counts
def test_operation_counts_of_the_library_robots():
    """The three-step programs stay small (pinned so that a change shows)."""
    arm = model("flexarm1", "newton-euler", "spong")
    assert arm.op_count("inverse_dynamics") == {"add": 6, "mul": 12, "fn": 3}
    assert arm.op_count("direct_dynamics") == {"add": 6, "mul": 13, "fn": 3}
    planar = model("planar2flex", "newton-euler", "spong")
    assert planar.op_count("inverse_dynamics") == {"add": 37, "mul": 61, "fn": 6}
    assert planar.op_count("direct_dynamics") == {"add": 37, "mul": 63, "fn": 6}
    kane = model("planar2flex", "kane", "spong")
    assert kane.op_count("direct_dynamics")["mul"] > planar.op_count("direct_dynamics")["mul"]


@pytest.mark.parametrize("rotor", ["spong", "full"])
def test_coriolis_matrix_of_every_engine(rotor):
    """C of the tree of links and rotors: the engines agree, C zd = H(z, zd) - H(z, 0)
    without friction, and Adot - 2C is skew-symmetric (Adot by central differences)."""
    robot = library("planar2flex")
    rng = np.random.default_rng(21)
    values = random_parameters(robot, rng, friction=False)
    fns = {m: flexible.derive(robot, m, rotor).numeric(values, backend="numpy") for m in ("newton-euler", "kane", "lagrange")}
    ref = fns["newton-euler"]
    for _ in range(3):
        z, zd = rng.uniform(-1.5, 1.5, (2, ref.m))
        C = ref.coriolis_matrix(z, zd)
        scale = 1 + np.abs(C).max()
        for method in ("kane", "lagrange"):
            assert np.allclose(fns[method].coriolis_matrix(z, zd), C, rtol=1e-9, atol=1e-12 * scale), method
        assert np.allclose(C @ zd, ref.h(z, zd) - ref.h(z, np.zeros(ref.m)), atol=1e-12 * scale)
        h = 1e-6
        N = (ref.mass_matrix(z + h * zd) - ref.mass_matrix(z - h * zd)) / (2 * h) - 2 * C
        assert np.allclose(N, -N.T, atol=1e-7 * scale)
