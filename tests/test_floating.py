"""Floating-base dynamics (kanerobot.dynamics.floating) against independent paths.

* tests/reference_dynamics.FloatingReferenceModel: a plain numpy spatial
  RNEA with a free base (Featherstone's conventions, angular first, its own
  quaternion-to-rotation formula), its inertia matrix by unit accelerations
  and its free-floating model by solving the 6x6 base block numerically;
* pinocchio's free flyer (the `pin` package), when installed;
* the models against each other: A from inverse dynamics, direct dynamics
  inverting inverse dynamics, a zero base wrench in free floating, momentum
  conserved along a simulation.

Parameters are random and physically consistent
(kanerobot.dynamics.parameters.random_parameters), friction, rotor inertia
and external wrench included unless pinocchio is the other side.
"""

import numpy as np
import pytest
import sympy
from conftest import assert_close, floating_copy, library, plate_robot, tree_robot
from reference_dynamics import FloatingReferenceModel, quaternion_matrix

import kanerobot as kr
from kanerobot.dynamics import floating
from kanerobot.dynamics.floating import FloatingBaseModel
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.interop import to_pinocchio

RTOL = 1e-9


def satellite():
    return library("satellite")


ROBOTS = {
    "satellite": satellite,
    "tree": lambda: floating_copy(tree_robot()),  # KK and general frames, prismatic joints, a fixed leaf
    "plate": lambda: floating_copy(plate_robot()),  # a fixed frame inside the tree that carries a link
}


def random_state(rng, n, batch=None):
    shape = (batch,) if batch else ()
    quaternion = rng.normal(size=shape + (4,))
    quaternion /= np.linalg.norm(quaternion, axis=-1, keepdims=True)
    q = np.concatenate([rng.normal(size=shape + (3,)), quaternion, rng.uniform(-np.pi, np.pi, shape + (n,))], axis=-1)
    return q, rng.uniform(-2, 2, shape + (6 + n,)), rng.uniform(-3, 3, shape + (6 + n,))


@pytest.fixture(scope="module", params=list(ROBOTS))
def case(request):
    """(model, numeric functions, reference, values, rng) of a robot, numpy backend."""
    robot = ROBOTS[request.param]()
    rng = np.random.default_rng(list(ROBOTS).index(request.param) + 11)
    values = random_parameters(robot, rng)
    model = FloatingBaseModel(robot)
    return model, model.numeric(values, backend="numpy"), FloatingReferenceModel(robot, values), values, rng


def wrenches(model, rng):
    return {label: rng.uniform(-2, 2, 6) for label in model.wrench}


# ------------------------------------------------------ the reference model
def with_wrench(reference, robot, values, wrench):
    """A reference model whose external wrenches are ``wrench`` {label: FX..CZ}."""
    values = dict(values)
    for label, six in wrench.items():
        for name, value in zip(("FX", "FY", "FZ", "CX", "CY", "CZ"), six):
            symbol = robot.dynamics[label][name]
            if isinstance(symbol, sympy.Symbol):
                values[symbol.name] = float(value)
    return FloatingReferenceModel(robot, values)


@pytest.mark.long
def test_generalized_forces_against_reference(case):
    model, fn, reference, values, rng = case
    for _ in range(4):
        q, qd, qdd = random_state(rng, model.n)
        wrench = wrenches(model, rng)
        expected = with_wrench(reference, model.robot, values, wrench).generalized_forces(q, qd, qdd)
        assert_close(fn.inverse_dynamics(q, qd, qdd, wrench=wrench), expected)
        assert_close(fn.h(q, qd, wrench=wrench), with_wrench(reference, model.robot, values, wrench).generalized_forces(q, qd, 0 * qdd))
        assert_close(fn.gravity(q), reference.generalized_forces(q, 0 * qd, 0 * qdd, friction=False, rotor=False, wrench=False))
        assert_close(fn.mass_matrix(q), reference.mass_matrix(q))


def test_direct_dynamics_against_reference(case):
    """The recursive direct model against the reference's A^-1 ([0; tau] - H)."""
    model, fn, reference, values, rng = case
    for _ in range(3):
        q, qd, _ = random_state(rng, model.n)
        tau = rng.uniform(-5, 5, model.n)
        wrench = wrenches(model, rng)
        other = with_wrench(reference, model.robot, values, wrench)
        H = other.generalized_forces(q, qd, np.zeros(model.nv))
        expected = np.linalg.solve(other.mass_matrix(q), np.concatenate([np.zeros(6), tau]) - H)
        assert_close(fn.direct_dynamics(q, qd, tau, wrench=wrench), expected)


def test_base_acceleration_against_reference(case):
    model, fn, reference, values, rng = case
    for _ in range(4):
        q, qd, qdd = random_state(rng, model.n)
        wrench = wrenches(model, rng)
        base, torques = fn.base_acceleration(q, qd, qdd[6:], wrench=wrench)
        expected_base, expected_torques = with_wrench(reference, model.robot, values, wrench).free_floating(q, qd, qdd[6:])
        assert_close(base, expected_base)
        assert_close(torques, expected_torques)


def test_batches_match_single_states(case):
    model, fn, _, _, rng = case
    q, qd, qdd = random_state(rng, model.n, batch=5)
    tau = rng.uniform(-1, 1, (5, model.n))
    batched = [fn.inverse_dynamics(q, qd, qdd), fn.mass_matrix(q), fn.direct_dynamics(q, qd, tau), fn.base_acceleration(q, qd, qdd[:, 6:])[1]]
    assert [x.shape for x in batched] == [(5, model.nv), (5, model.nv, model.nv), (5, model.nv), (5, model.n)]
    for k in range(5):
        assert_close(batched[0][k], fn.inverse_dynamics(q[k], qd[k], qdd[k]))
        assert_close(batched[1][k], fn.mass_matrix(q[k]))
        assert_close(batched[2][k], fn.direct_dynamics(q[k], qd[k], tau[k]))
        assert_close(batched[3][k], fn.base_acceleration(q[k], qd[k], qdd[k, 6:])[1])


# ---------------------------------------------------------------- consistency
def test_mass_matrix_columns_are_unit_accelerations(case):
    model, fn, _, _, rng = case
    q, qd, _ = random_state(rng, model.n)
    A, h = fn.mass_matrix(q), fn.h(q, qd)
    assert_close(A, A.T, rtol=1e-14)
    assert np.linalg.eigvalsh(A).min() > 0
    for k, e in enumerate(np.eye(model.nv)):
        assert_close(fn.inverse_dynamics(q, qd, e) - h, A[:, k])


def test_direct_dynamics_inverts_inverse_dynamics(case):
    model, fn, _, _, rng = case
    for _ in range(3):
        q, qd, _ = random_state(rng, model.n)
        tau = rng.uniform(-5, 5, model.n)
        wrench = wrenches(model, rng)
        qdd = fn.direct_dynamics(q, qd, tau, wrench=wrench)
        forces = fn.inverse_dynamics(q, qd, qdd, wrench=wrench)
        assert_close(forces, np.concatenate([np.zeros(6), tau]))


def test_free_floating_gives_no_base_wrench(case):
    model, fn, _, _, rng = case
    q, qd, qdd = random_state(rng, model.n)
    base, torques = fn.base_acceleration(q, qd, qdd[6:])
    forces = fn.inverse_dynamics(q, qd, np.concatenate([base, qdd[6:]]))
    assert np.abs(forces[:6]).max() < 1e-9 * (1 + np.abs(forces).max())
    assert_close(forces[6:], torques)
    # And direct dynamics with those torques gives back the joint accelerations.
    assert_close(fn.direct_dynamics(q, qd, torques), np.concatenate([base, qdd[6:]]))


@pytest.mark.long
def test_c_backend_matches_numpy():
    model = FloatingBaseModel(satellite())
    rng = np.random.default_rng(5)
    values = random_parameters(model.robot, rng)
    fn_c = model.numeric(values, backend="auto")
    if fn_c.backend != "c":
        pytest.skip(f"no C backend: {fn_c.fallback_reason}")
    fn = model.numeric(values, backend="numpy")
    q, qd, qdd = random_state(rng, model.n, batch=4)
    wrench = {"3": rng.uniform(-1, 1, 6)}
    assert_close(fn_c.inverse_dynamics(q, qd, qdd, wrench=wrench), fn.inverse_dynamics(q, qd, qdd, wrench=wrench))
    assert_close(fn_c.mass_matrix(q), fn.mass_matrix(q))
    assert_close(fn_c.base_acceleration(q, qd, qdd[:, 6:])[0], fn.base_acceleration(q, qd, qdd[:, 6:])[0])
    assert_close(fn_c.gravity(q[0]), fn.gravity(q[0]))
    assert_close(fn_c.coriolis_matrix(q, qd), fn.coriolis_matrix(q, qd))
    tau = rng.uniform(-1, 1, (4, model.n))
    assert_close(fn_c.direct_dynamics(q, qd, tau, wrench=wrench), fn.direct_dynamics(q, qd, tau, wrench=wrench))
    assert fn_c.backend == "c"


# ------------------------------------------------------------- base pose
def test_quaternion_helpers():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.normal(size=4)
        R = floating.quaternion_to_rotation(x)
        assert_close(R, quaternion_matrix(x), rtol=1e-13)
        back = floating.rotation_to_quaternion(R)
        assert_close(back, np.sign(x[3]) * x / np.linalg.norm(x), rtol=1e-12)
    # The four branches of Shepperd's method: half turns about x, y, z and the identity.
    for x in ([1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]):
        assert_close(floating.rotation_to_quaternion(floating.quaternion_to_rotation(x)), np.array(x, float))


def test_integrate_follows_the_configuration_derivative():
    rng = np.random.default_rng(4)
    q, qd, _ = random_state(rng, 3)
    dt = 1e-6
    forward = floating.integrate(q, qd, dt)
    assert abs(np.linalg.norm(forward[3:7]) - 1) < 1e-15
    finite = (forward - floating.integrate(q, qd, -dt)) / (2 * dt)
    assert_close(finite, floating.configuration_derivative(q, qd), rtol=1e-8)
    # A pure translation and a constant twist compose: two half steps make one step.
    assert_close(floating.integrate(floating.integrate(q, qd, 0.35), qd, 0.35), floating.integrate(q, qd, 0.7), rtol=1e-12)
    # wT_0 is the pose of q.
    T = floating.base_pose(forward)
    assert_close(T[:3, :3], quaternion_matrix(forward[3:7]), rtol=1e-12)
    assert_close(T[:3, 3], forward[:3])


def test_momentum_is_conserved_in_free_flight():
    """No gravity, torques, friction nor wrench: linear and angular momentum
    in the world frame stay constant along a solve_ivp integration of
    direct_dynamics with the quaternion update, and the quaternion stays unit."""
    from scipy.integrate import solve_ivp

    robot = satellite()
    rng = np.random.default_rng(8)
    values = random_parameters(robot, rng, friction=False, wrench=False, gravity=0.0)
    model = FloatingBaseModel(robot)
    fn = model.numeric(values, backend="numpy")
    q0, qd0, _ = random_state(rng, model.n)
    nq = model.nq

    def rates(t, y):
        q, qd = y[:nq], y[nq:]
        return np.concatenate([fn.configuration_derivative(q, qd), fn.direct_dynamics(q, qd, np.zeros(model.n))])

    solution = solve_ivp(rates, (0.0, 1.0), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-11, atol=1e-12, t_eval=np.linspace(0, 1, 11))
    assert solution.success
    momentum0 = fn.momentum(q0, qd0)
    assert np.abs(momentum0).max() > 0.1  # something to conserve
    for y in solution.y.T:
        q, qd = y[:nq], y[nq:]
        assert abs(np.linalg.norm(q[3:7]) - 1) < 1e-9
        assert_close(fn.momentum(q, qd), momentum0, rtol=1e-8)
    assert np.abs(solution.y[nq:, -1] - qd0).max() > 1e-3  # the robot did move


# ---------------------------------------------------------------- programs
def test_programs_layout_and_costs():
    model = FloatingBaseModel(satellite())
    assert list(model.program("inverse_dynamics").outputs) == [f"GAM{s}" for s in floating.BASE_FORCE_NAMES] + ["GAM1", "GAM2", "GAM3"]
    assert list(model.program("base_acceleration").outputs) == [s.name for s in floating.BASE_ACCELERATION] + ["GAM1", "GAM2", "GAM3"]
    assert list(model.program("gravity").outputs)[:6] == [f"Q{s}" for s in floating.BASE_FORCE_NAMES]
    # The 6x6 base system is solved in the program: reciprocals of three pivots and of M+_0, no numpy.
    solve = model.program("base_acceleration")
    assert {str(s) for s, _ in solve.assignments()} >= {"IM0", "KGID1", "KGID2", "KGID3"}
    for name in floating.MODELS:
        counts = model.op_count(name)
        assert counts["mul"] > 0 and counts["add"] > 0
    assert list(model.program("direct_dynamics").outputs) == [s.name for s in floating.BASE_ACCELERATION] + ["QDP1", "QDP2", "QDP3"]
    # The articulated inertia at the base is a full 6x6: six pivots.
    assert {f"BID{k}" for k in range(1, 7)} <= {str(s) for s, _ in model.program("direct_dynamics").assignments()}
    assert len(model.program("coriolis_matrix").outputs) == 9 * 9
    with pytest.raises(KaneRobotError, match="unknown model 'jacobian'"):
        model.program("jacobian")


def test_customized_robot_keeps_zeros():
    """A base with its centre of mass at O_0 and principal axes along frame 0
    costs fewer operations: the zeros propagate through the base solve."""
    robot = satellite()
    zeros = {name + "0": 0 for name in ("XY", "XZ", "YZ", "MX", "MY", "MZ")}
    plain, custom = floating.base_acceleration(robot), floating.base_acceleration(robot.subs(zeros))
    assert custom.op_count()["mul"] < plain.op_count()["mul"]


# ------------------------------------------------------------------ errors
def test_zero_mass_is_a_clear_error():
    robot = satellite()
    model = FloatingBaseModel(robot)
    values = random_parameters(robot, np.random.default_rng(0))
    with pytest.raises(KaneRobotError, match=r"robot satellite: the floating base \(link 0\) has mass M0 = 0.*give M0 > 0"):
        model.numeric(dict(values, M0=0.0), backend="numpy")
    with pytest.raises(KaneRobotError, match=r"floating base .*M0 = -1"):
        model.numeric(dict(values, M0=-1.0), backend="numpy")
    massless = robot.subs({"M0": 0})
    for build in (FloatingBaseModel, floating.base_acceleration, floating.mass_matrix, floating.inverse_dynamics):
        with pytest.raises(KaneRobotError, match="link 0"):
            build(massless)
    weightless = robot.subs({f"M{j}": 0 for j in range(4)})
    with pytest.raises(KaneRobotError, match="mass"):
        FloatingBaseModel(weightless)
    with pytest.raises(KaneRobotError, match="negative mass"):
        model.numeric(dict(values, M2=-0.5), backend="numpy")


def test_wrong_state_lengths_name_the_expected_length():
    model = FloatingBaseModel(satellite())
    fn = model.numeric(random_parameters(model.robot, np.random.default_rng(0)), backend="numpy")
    q, qd, qdd = random_state(np.random.default_rng(1), 3)
    with pytest.raises(KaneRobotError, match=r"q must have 10 values \(base position x y z, quaternion x y z w, joints th1 th2 th3\)"):
        fn.inverse_dynamics(q[:9], qd, qdd)
    with pytest.raises(KaneRobotError, match=r"qd must have 9 values"):
        fn.h(q, qd[:3])
    with pytest.raises(KaneRobotError, match=r"qdd \(joints\) must have 3 values"):
        fn.base_acceleration(q, qd, qdd)
    with pytest.raises(KaneRobotError, match=r"tau must have 3 values"):
        fn.direct_dynamics(q, qd, qdd)
    with pytest.raises(KaneRobotError, match="quaternion"):
        fn.mass_matrix(np.concatenate([q[:3], np.zeros(4), q[7:]]))
    with pytest.raises(KaneRobotError, match="7 \\+ n"):
        floating.integrate(q, qd[:8], 0.1)
    with pytest.raises(ParameterError, match="no value for M0"):
        model.numeric({k: v for k, v in random_parameters(model.robot, np.random.default_rng(0)).items() if k != "M0"})


def test_fixed_base_robot_is_refused():
    with pytest.raises(KaneRobotError, match="no floating base"):
        FloatingBaseModel(library("rx90"))


def test_satellite_par_round_trips(tmp_path):
    robot = satellite()
    assert robot.floating and robot.links == ("0", "1", "2", "3") and robot.dof == 9
    assert list(robot.base.G) == list(sympy.symbols("G1 G2 G3"))
    path = tmp_path / "satellite.par"
    kr.save(robot, path)
    again = kr.load(path)
    assert again.floating and dict(again.dynamics["0"]) == dict(robot.dynamics["0"])


# --------------------------------------------------------------- pinocchio
@pytest.mark.parametrize("name", list(ROBOTS))
@pytest.mark.long
def test_against_pinocchio_free_flyer(name):
    pin = pytest.importorskip("pinocchio", reason="pinocchio is not installed: pip install -e '.[bench]' (the pin package) to compare with it")
    robot = ROBOTS[name]()
    rng = np.random.default_rng(21 + list(ROBOTS).index(name))
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    model = FloatingBaseModel(robot)
    fn = model.numeric(values, backend="numpy")
    pmodel = to_pinocchio(robot, values)
    data = pmodel.createData()
    assert (pmodel.nq, pmodel.nv) == (model.nq, model.nv)
    for _ in range(4):
        q, qd, qdd = random_state(rng, model.n)
        tau = pin.rnea(pmodel, data, q, qd, qdd)
        assert_close(fn.inverse_dynamics(q, qd, qdd), tau)
        A = pin.crba(pmodel, data, q)
        A = np.triu(A) + np.triu(A, 1).T
        assert_close(fn.mass_matrix(q), A)
        assert_close(fn.h(q, qd), pin.nonLinearEffects(pmodel, data, q, qd))
        assert_close(fn.gravity(q), pin.computeGeneralizedGravity(pmodel, data, q))
        torques = rng.uniform(-5, 5, model.n)
        expected = pin.aba(pmodel, data, q, qd, np.concatenate([np.zeros(6), torques]))
        assert_close(fn.direct_dynamics(q, qd, torques), expected)
        base, joint_torques = fn.base_acceleration(q, qd, qdd[6:])
        full = np.concatenate([base, qdd[6:]])
        assert_close(pin.rnea(pmodel, data, q, qd, full), np.concatenate([np.zeros(6), joint_torques]))
        assert_close(fn.integrate(q, qd, 0.3), pin.integrate(pmodel, q, 0.3 * qd), rtol=1e-12)
        assert_close(fn.coriolis_matrix(q, qd), pin.computeCoriolisMatrix(pmodel, data, q, qd))


# ----------------------------------- the Kane and Lagrange engines (issues 4, 5)
ENGINE_CASES = [(name, method) for name in ("satellite", "tree") for method in ("kane", "lagrange")]


@pytest.fixture(scope="module", params=ENGINE_CASES, ids=["-".join(case) for case in ENGINE_CASES])
def kane_case(request):
    """(Kane or Lagrange numeric, Newton-Euler numeric, rng) of a robot on
    random physically consistent parameters, numpy backend."""
    name, method = request.param
    robot = ROBOTS[name]()
    rng = np.random.default_rng(ENGINE_CASES.index(request.param) + 41)
    values = random_parameters(robot, rng)
    engine = FloatingBaseModel(robot, method=method).numeric(values, backend="numpy")
    return engine, FloatingBaseModel(robot).numeric(values, backend="numpy"), rng


@pytest.mark.long
def test_kane_and_lagrange_match_newton_euler(kane_case):
    """Every model of the Kane engine (KanesMethod with the base's body-frame
    twist as its first six speeds) and of the Lagrange engine (Boltzmann-Hamel
    equations from the link energies) equals Newton-Euler's to 1e-9
    relative: A, C, [F_0; GAM], H, Q, and the direct dynamics and the
    free-floating base acceleration, which Kane and Lagrange solve
    numerically from A and H while Newton-Euler runs its recursive
    programs.  C comes from three routes: Christoffel plus Hamel terms on
    Newton-Euler's and on Lagrange's A, the seed's getAC rule on
    KanesMethod's h_vel plus 1/2 A S."""
    kane, ne, rng = kane_case
    n = kane.n
    for _ in range(3):
        q, qd, qdd = random_state(rng, n)
        wrench = wrenches(ne.model, rng)
        tau = rng.uniform(-5, 5, n)
        assert_close(kane.mass_matrix(q), ne.mass_matrix(q))
        assert_close(kane.coriolis_matrix(q, qd), ne.coriolis_matrix(q, qd))
        assert_close(kane.inverse_dynamics(q, qd, qdd, wrench=wrench), ne.inverse_dynamics(q, qd, qdd, wrench=wrench))
        assert_close(kane.h(q, qd, wrench=wrench), ne.h(q, qd, wrench=wrench))
        assert_close(kane.gravity(q), ne.gravity(q))
        assert_close(kane.direct_dynamics(q, qd, tau, wrench=wrench), ne.direct_dynamics(q, qd, tau, wrench=wrench))
        for mine, theirs in zip(kane.base_acceleration(q, qd, qdd[6:], wrench=wrench), ne.base_acceleration(q, qd, qdd[6:], wrench=wrench)):
            assert_close(mine, theirs)
    # Batches too, through the numeric solves of the Kane engine.
    q, qd, qdd = random_state(rng, n, batch=4)
    tau = rng.uniform(-5, 5, (4, n))
    assert_close(kane.direct_dynamics(q, qd, tau), ne.direct_dynamics(q, qd, tau))
    for mine, theirs in zip(kane.base_acceleration(q, qd, qdd[:, 6:]), ne.base_acceleration(q, qd, qdd[:, 6:])):
        assert_close(mine, theirs)


def test_kane_model_layout_and_objects():
    """The Kane floating model has Newton-Euler's outputs, no program for the
    models it solves from A and H, and exposes sympy's mechanics objects."""
    robot = satellite()
    kane, ne = FloatingBaseModel(robot, method="kane"), FloatingBaseModel(robot)
    for name in ("inverse_dynamics", "h", "gravity"):
        assert list(kane.program(name).outputs) == list(ne.program(name).outputs), name
    # Kane writes every entry of A's upper triangle (some are zero only
    # numerically, by orthogonality); Newton-Euler leaves out its structural zeros.
    assert set(kane.program("mass_matrix").outputs) >= set(ne.program("mass_matrix").outputs)
    assert len(kane.program("mass_matrix").outputs) == 9 * 10 // 2
    assert not kane.has_program("direct_dynamics") and not kane.has_program("base_acceleration")
    assert kane.has_program("mass_matrix") and ne.has_program("direct_dynamics")
    with pytest.raises(KaneRobotError, match="solved numerically"):
        kane.program("direct_dynamics")
    assert kane.op_count("direct_dynamics")["mul"] > kane.op_count("mass_matrix")["mul"]
    assert kane.kanes_method.mass_matrix.shape == (9, 9)
    assert [body.name for body in kane.bodies] == ["B0", "B1", "B2", "B3"]  # the base is a body
    assert set(kane.frames) == {"0", "1", "2", "3"}
    assert kane.loads
    assert set(kane.parameters) <= set(random_parameters(robot, np.random.default_rng(0)))
    with pytest.raises(KaneRobotError, match="available are newton-euler, lagrange, kane"):
        FloatingBaseModel(robot, method="featherstone")


@pytest.mark.long
def test_kane_c_backend_matches_numpy():
    """The Kane engine's programs compiled to C (A laid out from its full upper
    triangle), and its numeric solves on top of them."""
    model = FloatingBaseModel(satellite(), method="kane")
    rng = np.random.default_rng(43)
    values = random_parameters(model.robot, rng)
    fn_c = model.numeric(values, backend="auto")
    if fn_c.backend != "c":
        pytest.skip(f"no C backend: {fn_c.fallback_reason}")
    fn = model.numeric(values, backend="numpy")
    q, qd, qdd = random_state(rng, model.n, batch=3)
    wrench = {"3": rng.uniform(-1, 1, 6)}
    assert_close(fn_c.mass_matrix(q), fn.mass_matrix(q))
    assert_close(fn_c.inverse_dynamics(q, qd, qdd, wrench=wrench), fn.inverse_dynamics(q, qd, qdd, wrench=wrench))
    tau = rng.uniform(-1, 1, (3, model.n))
    assert_close(fn_c.direct_dynamics(q, qd, tau, wrench=wrench), fn.direct_dynamics(q, qd, tau, wrench=wrench))
    assert_close(fn_c.base_acceleration(q, qd, qdd[:, 6:])[1], fn.base_acceleration(q, qd, qdd[:, 6:])[1])
    assert_close(fn_c.coriolis_matrix(q, qd), fn.coriolis_matrix(q, qd))
    assert fn_c.backend == "c"


@pytest.mark.parametrize("method", ["newton-euler", "kane", "lagrange"])
@pytest.mark.parametrize("name", ["satellite", "tree"])
@pytest.mark.long
def test_coriolis_matrix_is_passive(name, method):
    """``C nu`` is the velocity part of H (H - Q without friction nor wrench),
    and ``A' - 2C`` is skew-symmetric, with ``A'`` exact: the time derivative
    of the inertia matrix program along the joint rates (A depends on the
    joints only), evaluated on its own."""
    from kanerobot.symbolic.derivative import time_derivative

    robot = ROBOTS[name]()
    rng = np.random.default_rng(61 + ["satellite", "tree"].index(name))
    values = random_parameters(robot, rng, friction=False, wrench=False)
    model = FloatingBaseModel(robot, method=method)
    fn = model.numeric(values, backend="numpy")
    adot = time_derivative(model.program("mass_matrix"), robot.q, robot.qd)
    adot_fn = adot.to_function()
    N = model.nv
    names = sympy.Matrix(N, N, lambda i, j: sympy.Symbol(f"A{i + 1}{j + 1}" if N < 10 else f"A{i + 1}_{j + 1}"))
    for _ in range(3):
        q, qd, _ = random_state(rng, model.n)
        C = fn.coriolis_matrix(q, qd)
        assert_close(C @ qd, fn.h(q, qd) - fn.gravity(q))
        symbols = list(robot.q) + list(floating.QUATERNION) + list(robot.qd) + list(floating.BASE_VELOCITY)
        state = dict(values) | {s.name: x for s, x in zip(symbols, np.concatenate([q[7:], q[3:7], qd[6:], qd[:6]]))}
        flat = dict(zip(adot.outputs, np.atleast_1d(adot_fn(*[state.get(s.name, 0.0) for s in adot_fn.args]))))
        Adot = np.zeros((N, N))
        for i in range(N):
            for j in range(i, N):
                Adot[i, j] = Adot[j, i] = flat.get(f"d{names[i, j]}_dt", 0.0)
        assert np.abs(Adot).max() > 1e-3  # the joints move: A changes
        S = Adot - 2 * C
        assert np.abs(S + S.T).max() < 1e-10 * (1 + np.abs(C).max())


@pytest.mark.parametrize("name", ["satellite", pytest.param("tree", marks=pytest.mark.slow)])  # the tree: 4.5 s
@pytest.mark.long
def test_nested_kane_equals_kanes_method(name):
    """The free flyer is link 0's root joint of Kane's nested sums (link 0 a body,
    its speeds the six unit twists of frame 0): every model equals the one read
    off sympy's KanesMethod, an independent derivation, to 1e-9 relative, with
    the same outputs, and is smaller."""
    robot = ROBOTS[name]()
    system = FloatingBaseModel(robot, method="kane").kane_system
    rng = np.random.default_rng(47)
    values = random_parameters(robot, rng)
    q, qd, qdd = random_state(rng, robot.nj)
    point = dict(values)
    point.update(zip(["QX0", "QY0", "QZ0", "QW0"], q[3:7]))
    point.update((str(s), x) for s, x in zip(robot.q, q[7:]))
    point.update((str(s), x) for s, x in zip(floating.BASE_VELOCITY + tuple(robot.qd), qd))
    point.update((str(s), x) for s, x in zip(floating.BASE_ACCELERATION + tuple(robot.qdd), qdd))
    point.update((str(robot.joint_parameters[j]["GAM"]), 0.0) for j in robot.joint_labels)

    def evaluate(program):
        function = program.to_function()
        return np.asarray(function(*[point[str(s)] for s in function.args]), dtype=float)

    for model in ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix"):
        nested, km = system.program(model), system.program(model, source="kanes_method")
        assert list(nested.outputs) == list(km.outputs), model
        assert_close(evaluate(nested), evaluate(km), what=model)
        assert sum(nested.op_count().values()) < sum(km.op_count().values()), model
