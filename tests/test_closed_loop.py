"""Closed-loop dynamics (SYMORO+ 5.2): Gamma_a = G^T Gamma_tr.

Independent paths: G from the numeric loop solver by finite differences
(virtual work), the constrained Kane equations of sympy's own KanesMethod
(u_dependent, velocity_constraints) on a four-bar written here from its
geometry, finite differences of the inertia matrix along a closed motion
(A-dot - 2C skew), and a simulation whose loops must stay closed.
"""

import numpy as np
import pytest
import sympy
from conftest import assert_close, assert_models_close, derived, library
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

import kanerobot as kr
from kanerobot.dynamics.closed_loop import equivalent_tree
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

LOOP_ROBOTS = ["fourbar", "sr400"]
_FUNCTIONS = {}


def _numeric(name, method="newton-euler", seed=0, **options):
    key = (name, method, seed, tuple(sorted(options.items())))
    if key not in _FUNCTIONS:
        values = random_parameters(library(name), np.random.default_rng(seed), **options)
        _FUNCTIONS[key] = (values, derived(name, method).numeric(values, backend="numpy"))
    return _FUNCTIONS[key]


def _closed_state(fn, rng):
    """A closed configuration near the parallelogram's assembly mode, and active rates."""
    robot = fn.robot
    n = robot.dof
    qa = rng.uniform(-0.8, 0.8, n)
    if robot.name == "fourbar":
        q = fn.configuration(qa, guess=[-qa[0], qa[0], -qa[0]])
    else:
        q = fn.configuration(qa)
    return q, rng.uniform(-1, 1, n), rng.uniform(-2, 2, n)


def _finite_difference_G(fn, q, eps=1e-4):
    """dq/dq_a by central differences of the loop solver (no Jacobian of the loops used)."""
    robot = fn.robot
    active = [robot.joint_labels.index(label) for label in robot.active_joints]
    others = [c for c in range(robot.nj) if c not in active]
    qa = q[active]
    columns = []
    for k in range(len(active)):
        step = np.zeros(len(active))
        step[k] = eps
        plus = fn.configuration(qa + step, guess=q[others], tol=1e-12)
        minus = fn.configuration(qa - step, guess=q[others], tol=1e-12)
        columns.append((plus - minus) / (2 * eps))
    return np.array(columns).T


def test_equivalent_tree_opens_the_loops():
    sr400 = library("sr400")
    tree = equivalent_tree(sr400)
    assert tree.loops == () and tree.dof == sr400.nj and sr400.dof == 6
    with pytest.raises(KaneRobotError, match="no loops"):
        equivalent_tree(tree)


@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_G_is_the_derivative_of_the_closed_configuration(name):
    _values, fn = _numeric(name)
    rng = np.random.default_rng(3)
    for _ in range(2):
        q, _, _ = _closed_state(fn, rng)
        assert np.allclose(fn.G(q), _finite_difference_G(fn, q), atol=1e-7)


@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_active_torques_do_the_virtual_work_of_the_tree_torques(name):
    """Gamma_a . dq_a = Gamma_tr . dq for every closed displacement, dq from the solver."""
    _values, fn = _numeric(name, seed=1)
    rng = np.random.default_rng(4)
    q, qd, qdd = _closed_state(fn, rng)
    G_fd = _finite_difference_G(fn, q)
    tau_tree = fn.tree.inverse_dynamics(q, fn.velocities(q, qd), fn.accelerations(q, qd, qdd))
    tau = fn.inverse_dynamics(q, qd, qdd)
    assert np.allclose(tau, G_fd.T @ tau_tree, rtol=1e-6, atol=1e-6 * np.abs(tau).max())


@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_passive_accelerations_keep_the_loops_closed_to_second_order(name):
    """q(t) along a closed path: the passive accelerations match finite differences of the solver."""
    _values, fn = _numeric(name)
    rng = np.random.default_rng(5)
    q, qd, qdd = _closed_state(fn, rng)
    robot = fn.robot
    active = [robot.joint_labels.index(label) for label in robot.active_joints]
    others = [c for c in range(robot.nj) if c not in active]
    h = 1e-3
    path = [fn.configuration(q[active] + qd * t + qdd * t * t / 2, guess=q[others], tol=1e-12) for t in (-h, 0, h)]
    qdd_fd = (path[2] - 2 * path[1] + path[0]) / h**2
    assert np.allclose(fn.accelerations(q, qd, qdd), qdd_fd, atol=1e-5 * (1 + np.abs(qdd_fd).max()))


@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_model_split_and_christoffel_properties(name):
    """A columns, H, Q; C qd = H_vel; C = 1/2 dH_vel/dqd (getAC); Adot - 2C skew by finite differences."""
    _values, fn = _numeric(name, seed=2, friction=False)
    rng = np.random.default_rng(6)
    q, qd, qdd = _closed_state(fn, rng)
    n = fn.robot.dof
    A, H, Q, C = fn.mass_matrix(q), fn.h(q, qd), fn.gravity(q), fn.coriolis_matrix(q, qd)
    tau = fn.inverse_dynamics(q, qd, qdd)
    scale = 1 + np.abs(tau).max()
    assert np.allclose(tau, A @ qdd + H, atol=1e-9 * scale)
    assert np.allclose(A, A.T, atol=1e-12 * scale) and np.linalg.eigvalsh(A).min() > 0
    assert np.allclose(Q, fn.h(q, np.zeros(n)), atol=1e-9 * scale)
    H_vel = H - Q
    assert np.allclose(C @ qd, H_vel, atol=1e-9 * scale)
    # getAC: the quadratic H_vel differentiated by central differences (exact for a quadratic)
    eps = 1e-3
    dH = np.array([(fn.h(q, qd + eps * e) - fn.h(q, qd - eps * e)) / (2 * eps) for e in np.eye(n)]).T
    assert np.allclose(C, dH / 2, atol=1e-7 * scale)
    # Adot along the closed motion with rates qd
    robot = fn.robot
    active = [robot.joint_labels.index(label) for label in robot.active_joints]
    others = [c for c in range(robot.nj) if c not in active]
    h = 1e-5
    A_plus = fn.mass_matrix(fn.configuration(q[active] + h * qd, guess=q[others], tol=1e-13))
    A_minus = fn.mass_matrix(fn.configuration(q[active] - h * qd, guess=q[others], tol=1e-13))
    N = (A_plus - A_minus) / (2 * h) - 2 * C
    assert np.allclose(N, -N.T, atol=1e-6 * scale)


@pytest.mark.parametrize("method", ["lagrange", "kane"])
@pytest.mark.parametrize("name", LOOP_ROBOTS)
@pytest.mark.long
def test_engines_agree_on_closed_loops(name, method):
    values, reference = _numeric(name, seed=7)
    engine = derived(name, method).numeric(values, backend="numpy")
    rng = np.random.default_rng(8)
    states = [_closed_state(reference, rng) for _ in range(3)]
    q, qd, qdd = (np.array(x) for x in zip(*states))
    assert_models_close(engine, reference, q, qd, qdd, what=f"{name} {method}")


def _fourbar_kanes_method(values):
    """The four-bar of frames/fourbar.toml written directly with sympy.physics.mechanics,
    its loop closed by configuration and velocity constraints (dependent q2, q3, q4)."""
    q = dynamicsymbols("q1:5")
    u = dynamicsymbols("u1:5")
    T1 = sympy.Symbol("T1")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    frames, origins = [], []
    A1 = N.orientnew("A1", "Axis", (q[0], N.z))
    A2 = A1.orientnew("A2", "Axis", (q[1], A1.z))
    A3 = N.orientnew("A3", "Axis", (q[2], N.z))
    O1 = O.locatenew("O1", 0)
    O2 = O1.locatenew("O2", A1.x)
    O3 = O.locatenew("O3", N.x)
    O4 = O3.locatenew("O4", A3.x)
    O5 = O2.locatenew("O5", A2.x)
    frames, origins = [A1, A2, A3], [O1, O2, O3]
    t = dynamicsymbols._t
    qdot_to_u = {qk.diff(t): uk for qk, uk in zip(q, u)}
    gap = O4.pos_from(O) - O5.pos_from(O)
    configuration = [gap.dot(N.x), gap.dot(N.y), q[2] + q[3] - q[0] - q[1]]
    velocity = [sympy.diff(c, t).subs(qdot_to_u) for c in configuration]
    g = N.x * values["G1"] + N.y * values["G2"] + N.z * values["G3"] if "G1" in values else None
    bodies, loads = [], []
    for k, (B, P) in enumerate(zip(frames, origins), start=1):
        v = {name: values[f"{name}{k}"] for name in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")}
        c = np.array([v["MX"], v["MY"], v["MZ"]]) / v["M"]
        J = np.array([[v["XX"], v["XY"], v["XZ"]], [v["XY"], v["YY"], v["YZ"]], [v["XZ"], v["YZ"], v["ZZ"]]])
        IG = J - v["M"] * (c @ c * np.eye(3) - np.outer(c, c))
        Gk = P.locatenew(f"G{k}", c[0] * B.x + c[1] * B.y + c[2] * B.z)
        P.set_vel(N, P.pos_from(O).dt(N).subs(qdot_to_u))
        Gk.set_vel(N, Gk.pos_from(O).dt(N).subs(qdot_to_u))
        I = inertia(B, IG[0, 0], IG[1, 1], IG[2, 2], IG[0, 1], IG[1, 2], IG[0, 2])
        bodies.append(RigidBody(f"B{k}", Gk, B, v["M"], (I, Gk)))
        loads.append((Gk, v["M"] * g))
    loads.append((A1, T1 * N.z))
    for B in frames:
        B.set_ang_vel(N, B.ang_vel_in(N).subs(qdot_to_u))
    km = KanesMethod(
        N, q_ind=[q[0]], u_ind=[u[0]], kd_eqs=[qk.diff(t) - uk for qk, uk in zip(q, u)],
        q_dependent=q[1:], configuration_constraints=configuration,
        u_dependent=u[1:], velocity_constraints=velocity,
    )
    km.kanes_equations(bodies, loads)
    return km, q, u, T1, velocity


def test_closed_loop_kane_matches_sympy_kanes_method_with_dependent_speeds():
    """Direct dynamics of the four-bar: each engine vs sympy's constrained KanesMethod."""
    robot = library("fourbar")
    rng = np.random.default_rng(11)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    g_names = [str(s) for s in robot.base.G if isinstance(s, sympy.Symbol)]
    assert g_names == ["G3"] or len(g_names) == 3
    km, q, u, T1, velocity = _fourbar_kanes_method({"G1": 0.0, "G2": 0.0, **values})
    M = sympy.lambdify([q, u], km.mass_matrix, "numpy")
    F = sympy.lambdify([q, u, T1], km.forcing, "numpy")
    V = sympy.lambdify([q, u], sympy.Matrix(velocity), "numpy")
    reference = derived("fourbar").numeric(values, backend="numpy")
    engines = {m: derived("fourbar", m).numeric(values, backend="numpy") for m in ("newton-euler", "lagrange", "kane")}
    for _ in range(3):
        qc, qd, _ = _closed_state(reference, rng)
        tau = rng.uniform(-3, 3, 1)
        # dependent speeds from sympy's velocity constraints (linear in u2..u4)
        B = np.array([V(qc, np.r_[qd, e]).ravel() - V(qc, np.r_[qd, 0, 0, 0]).ravel() for e in np.eye(3)]).T
        u_dep = np.linalg.solve(B, -V(qc, np.r_[qd, 0, 0, 0]).ravel())
        ud = np.linalg.solve(np.array(M(qc, np.r_[qd, u_dep]), dtype=float),
                             np.array(F(qc, np.r_[qd, u_dep], tau[0]), dtype=float).ravel())
        for method, fn in engines.items():
            assert np.allclose(fn.velocities(qc, qd)[1:], u_dep, rtol=1e-10, atol=1e-12), method
            assert np.allclose(fn.direct_dynamics(qc, qd, tau), ud[:1], rtol=1e-9, atol=1e-9), method


@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_loops_stay_closed_along_a_simulated_motion(name):
    """Integrate (q, qd_a) with q' = G qd_a and the direct dynamics: the loops stay closed."""
    _values, fn = _numeric(name, seed=3, friction=False)
    rng = np.random.default_rng(9)
    q0, qd0, _ = _closed_state(fn, rng)
    nj, n = fn.robot.nj, fn.robot.dof
    tau = np.zeros(n)

    def rhs(t, x):
        q, qd = x[:nj], x[nj:]
        return np.r_[fn.velocities(q, qd), fn.direct_dynamics(q, qd, tau)]

    # With gravity down (G3 = -9.81) the SR400 reaches a singular configuration near t = 0.33 s.
    T = 0.3 if name == "sr400" else 1.0
    solution = solve_ivp(rhs, (0, T), np.r_[q0, qd0], method="DOP853", rtol=1e-11, atol=1e-12, dense_output=True)
    assert solution.success
    residuals = [fn.closure_residual(solution.sol(t)[:nj]) for t in np.linspace(0, T, 11)]
    assert max(residuals) < 1e-8
    assert np.abs(solution.y[:nj, -1] - q0).max() > 1e-3  # it moved


def test_bad_configurations_are_reported(tmp_path):
    _values, fn = _numeric("fourbar")
    with pytest.raises(KaneRobotError, match="does not close the loops of fourbar"):
        fn.mass_matrix([0.3, 0.1, 0.2, 0.0])
    with pytest.raises(KaneRobotError, match=r"q must have 4 values \(every joint 1, 2, 3, 4\)"):
        fn.gravity([0.0, 0.0])
    # a rocker pivot 5 units away: unit links can never close the loop
    text = (kr.frames_path("fourbar")).read_text().replace('label = "3"\nantecedent = "0"\nsigma = 0\nmu = 0\nd = 1', 'label = "3"\nantecedent = "0"\nsigma = 0\nmu = 0\nd = 5')
    assert "d = 5" in text
    path = tmp_path / "farbar.toml"
    path.write_text(text)
    robot = kr.load(path)
    far = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    with pytest.raises(KaneRobotError, match="do not close"):
        far.configuration([0.3])


@pytest.mark.parametrize("method", ["newton-euler", "lagrange", "kane"])
@pytest.mark.parametrize("name", LOOP_ROBOTS)
@pytest.mark.long
def test_symbolic_closed_loop_programs_equal_the_numeric_projection(name, method):
    """W = -Wp^-1 Wa, passive rates and accelerations by the program; G by least squares numerically."""
    robot, model = library(name), derived(name, method)
    values = random_parameters(robot, np.random.default_rng(12), wrench=False)
    fn = model.numeric(values, backend="numpy")
    rng = np.random.default_rng(13)
    q, qd, qdd = _closed_state(fn, rng)
    env = {**values, **{str(robot.frame(label).q): v for label, v in zip(robot.joint_labels, q)}}
    jp = robot.joint_parameters
    for k, label in enumerate(robot.active_joints):
        env[str(jp[label]["QP"])], env[str(jp[label]["QDP"])] = qd[k], qdd[k]
    n = robot.dof
    A = fn.mass_matrix(q)
    expected = {
        "inverse_dynamics": fn.inverse_dynamics(q, qd, qdd),
        "h": fn.h(q, qd),
        "gravity": fn.gravity(q),
        "mass_matrix": np.array([A[i, j] for j in range(n) for i in range(j + 1)]),
    }
    for model_name, reference in expected.items():
        program = model.program(model_name)
        arguments = list(program.inputs)
        missing = [str(s) for s in arguments if str(s) not in env]
        assert not missing, missing  # the program reads no passive rate: it computes them
        got = np.array(program.to_function(args=arguments)(*[env[str(s)] for s in arguments]), dtype=float).ravel()
        got = np.broadcast_to(got, reference.shape) if got.size == 1 else got
        assert_close(got, reference, rtol=1e-10, what=model_name)


def test_cli_prints_and_exports_closed_loop_models(capsys):
    from kanerobot.cli import main

    assert main(["model", "sr400", "idm"]) == 0
    out = capsys.readouterr().out
    assert "projected on the active joints 1, 2, 4, 5, 6, 7" in out
    assert "QP3 = " in out and "GAM7 = " in out and "GAM3 =" not in out
    assert main(["model", "fourbar", "inm", "--lang", "python"]) == 0
    assert "Returns a 1x1 matrix" in capsys.readouterr().out
    assert main(["model", "fourbar", "cor"]) == 2
    assert "use model.numeric(values).coriolis_matrix" in capsys.readouterr().err
