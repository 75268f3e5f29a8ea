"""Wheeled mobile robots (OpenSYMORO IV-E): W qd = 0, qd = G qd_a, Gamma_a = G^T Gamma.

Independent paths: the contact points' velocities by finite differences of
the numeric geometric model (no W), sympy's own KanesMethod with dependent
speeds and velocity constraints derived by sympy (the naive build), Kane
against Newton-Euler on random physically consistent parameters, energy
along simulated motions (solve_ivp), the closed-form unicycle kinematics of
a differential drive, and finite differences of the projected inertia
matrix (Adot - 2C skew).
"""

import numpy as np
import pytest
import sympy
from conftest import assert_close, derived, library
from scipy.integrate import solve_ivp

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.dynamics.wheeled import (
    WheeledModel,
    adjugate_solver,
    nonholonomic_kanes_method,
    tree_robot,
)
from kanerobot.errors import KaneRobotError, RobotFileError, SingularityError
from kanerobot.robot.description import Robot, Wheel
from kanerobot.robot.frames_toml import frames_from_text, write_frames
from kanerobot.rolling import mobility, wheel_constraints
from kanerobot.symbolic.printing import matrix_entry_names

ROBOTS = ["diffdrive", "krang_wheeled"]
_NUMERIC = {}


def _numeric(name, method="newton-euler", seed=0, backend="numpy", **options):
    key = (name, method, seed, backend, tuple(sorted(options.items())))
    if key not in _NUMERIC:
        model = derived(name, method)
        values = random_parameters(model.robot, np.random.default_rng(seed), **options)
        _NUMERIC[key] = (values, model.numeric(values, backend=backend))
    return _NUMERIC[key]


# ------------------------------------------------------------ description
def test_files_describe_posture_wheels_and_links():
    dd = library("diffdrive")
    assert dd.wheeled and dd.posture == ("x", "y", "th")
    assert [(w.joint, w.kind, str(w.radius), w.steer, str(w.offset)) for w in dd.wheels] == [
        ("wr", "fixed", "R", None, "0"), ("wl", "fixed", "R", None, "0"), ("cw", "castor", "Rc", "cs", "d"),
    ]
    # The base is the ground and the x, y slides are massless: the chassis is the link of th.
    assert dd.links == ("th", "wr", "wl", "cs", "cw")
    krang = library("krang_wheeled")
    body = library("krang")
    assert krang.joint_labels[:5] == ("x", "y", "th", "wr", "wl") and krang.nj == 22
    assert krang.links == ("wr", "wl") + body.links  # the heading frame th is massless
    # The body's frames are krang.toml's, frame 1 hanging on the heading frame.
    for frame in body.frames:
        got = krang.frame(frame.label)
        assert got.placement == frame.placement and got.sigma == frame.sigma
        assert got.antecedent == ("th" if frame.label == "1" else frame.antecedent)
    assert mobility(dd) == 2 and mobility(krang) == 19


def test_wheels_round_trip_and_subs():
    robot = library("diffdrive")
    text = write_frames(robot)
    assert 'posture = ["x", "y", "th"]' in text and text.count("[[wheel]]") == 3
    assert frames_from_text(text) == robot
    bound = robot.subs({"R": 0.1, "d": 0.05})
    assert bound.wheel("wr").radius == sympy.Float(0.1) and bound.wheel("cw").offset == sympy.Float(0.05)
    assert bound.posture == robot.posture and bound.wheel_joints == ("wr", "wl", "cw")
    with pytest.raises(kr.DescriptionError, match="no wheel on joint 'x'"):
        robot.wheel("x")


def test_python_built_wheeled_robot_equals_file_robot():
    robot = library("diffdrive")
    again = Robot.create(
        robot.name, robot.frames, wheeled=True, posture=["x", "y", "th"],
        wheels=[Wheel("wr", "fixed", "R"), Wheel("wl", radius="R"), Wheel("cw", "castor", "Rc", steer="cs", offset="d")],
    )
    assert again == robot


# ------------------------------------------------------------ constraints
def test_differential_drive_constraints_and_choice_of_speeds():
    c = wheel_constraints(library("diffdrive"))
    th, R, b = sympy.symbols("th R b")
    assert c.W.shape == (6, 7) and c.rank == 5
    assert c.W[0, :5] == sympy.Matrix([[sympy.cos(th), sympy.sin(th), b / 2, -R, 0]])
    assert c.W[1, :] == c.W[3, :]  # coaxial fixed wheels: the same non-sliding row
    assert c.independent == ("wr", "wl") and c.dependent == ("x", "y", "th", "cs", "cw")
    krang = wheel_constraints(library("krang_wheeled"))
    assert krang.dependent == ("x", "y", "th") and krang.independent[:3] == ("wr", "wl", "1")


@pytest.mark.parametrize("name", ROBOTS)
def test_contact_points_do_not_move(name):
    """W from the geometry, checked without it: the wheels' material contact points
    have zero velocity, by central differences of the numeric frame transforms."""
    from kanerobot.geometry import numeric_transform

    values, fn = _numeric(name)
    robot = fn.robot
    rng = np.random.default_rng(1)
    q, qa = rng.uniform(-2, 2, robot.nj), rng.uniform(-1, 1, fn.m)
    qd = fn.velocities(q, qa)
    assert fn.constraint_residual(q, qd) < 1e-12
    eps = 1e-6
    for wheel in robot.wheels:
        T = numeric_transform(robot, "0", wheel.joint, values)
        radius = float(wheel.radius.xreplace({sympy.Symbol(k): v for k, v in values.items()}))
        T0 = T(q)
        local = np.linalg.solve(T0, np.append(T0[:3, 3] - [0, 0, radius], 1.0))  # the contact point, in the wheel
        velocity = (T(q + eps * qd) - T(q - eps * qd)) @ local / (2 * eps)
        assert np.abs(velocity[:3]).max() < 1e-7 * max(1.0, np.abs(qd).max())
        # A free joint rate (not G qd_a) moves them.
    assert fn.constraint_residual(q, rng.uniform(-1, 1, robot.nj)) > 1e-3


def test_G_stays_defined_where_LU_divides_by_zero():
    """The dependent block of the differential drive, solved symbolically: LU
    divides by cos(th) (infinite at th = pi/2), the adjugate only by -b."""
    c = wheel_constraints(library("diffdrive"))
    rows = list(c.square_rows)
    WD = c.W.extract(rows, c.columns(c.dependent))
    WI = c.W.extract(rows, c.columns(c.independent))
    th = sympy.Symbol("th")
    values, fn = _numeric("diffdrive")
    subs = {sympy.Symbol(k): v for k, v in values.items()}
    q = np.array([0.3, -0.2, np.pi / 2, 0.1, 0.2, 0.4, -0.3])
    at = {**subs, **dict(zip(fn.robot.q, q))}
    lu = (-WD.LUsolve(WI)).xreplace({th: sympy.pi / 2}).xreplace(at)
    assert any(not e.is_finite for e in lu)
    ours = np.array((-adjugate_solver(WD, WI)).xreplace(at).evalf(), dtype=float)
    assert_close(ours, fn.G(q)[c.columns(c.dependent)])


# -------------------------------------------------------- Kane vs Newton-Euler
@pytest.mark.parametrize("name", ["diffdrive", pytest.param("krang_wheeled", marks=pytest.mark.slow)])
def test_kane_agrees_with_newton_euler(name):
    _values, ne = _numeric(name, "newton-euler", seed=3)
    _, kane = _numeric(name, "kane", seed=3)
    rng = np.random.default_rng(4)
    q = rng.uniform(-np.pi, np.pi, (4, ne.n))
    qa, qdda, tau = rng.uniform(-2, 2, (4, ne.m)), rng.uniform(-3, 3, (4, ne.m)), rng.uniform(-5, 5, (4, ne.m))
    for function, args in [
        ("mass_matrix", (q,)),
        ("h", (q, qa)),
        ("inverse_dynamics", (q, qa, qdda)),
        ("direct_dynamics", (q, qa, tau)),
        ("gravity", (q,)),
        ("coriolis_matrix", (q, qa)),
    ]:
        assert_close(getattr(kane, function)(*args), getattr(ne, function)(*args))
    # Both are consistent: direct dynamics inverts inverse dynamics, A symmetric positive definite.
    assert_close(ne.inverse_dynamics(q, qa, ne.direct_dynamics(q, qa, tau)), tau)
    A = ne.mass_matrix(q)
    assert np.allclose(A, np.swapaxes(A, 1, 2)) and np.all(np.linalg.eigvalsh(A) > 0)


@pytest.mark.parametrize("name", ["diffdrive", pytest.param("krang_wheeled", marks=pytest.mark.slow)])
def test_lagrange_agrees_too(name):
    _, ne = _numeric(name, "newton-euler", seed=5)
    _, lagrange = _numeric(name, "lagrange", seed=5)
    rng = np.random.default_rng(5)
    q, qa, qdda = rng.uniform(-3, 3, (3, ne.n)), rng.uniform(-2, 2, (3, ne.m)), rng.uniform(-2, 2, (3, ne.m))
    assert_close(lagrange.inverse_dynamics(q, qa, qdda), ne.inverse_dynamics(q, qa, qdda))
    assert_close(lagrange.mass_matrix(q), ne.mass_matrix(q))
    assert_close(lagrange.gravity(q), ne.gravity(q))
    assert_close(lagrange.h(q, qa), ne.h(q, qa))
    assert_close(lagrange.coriolis_matrix(q, qa), ne.coriolis_matrix(q, qa))


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.long
def test_coriolis_matrix_is_christoffel(name):
    """h = C qd_a + Q without friction, and Adot - 2C is skew-symmetric (finite differences along qd = G qd_a)."""
    _, fn = _numeric(name, seed=6, friction=False, wrench=False)
    rng = np.random.default_rng(6)
    q, qa = rng.uniform(-2, 2, fn.n), rng.uniform(-1, 1, fn.m)
    C = fn.coriolis_matrix(q, qa)
    assert_close(C @ qa + fn.gravity(q), fn.h(q, qa))
    qd, eps = fn.velocities(q, qa), 1e-6
    Adot = (fn.mass_matrix(q + eps * qd) - fn.mass_matrix(q - eps * qd)) / (2 * eps)
    S = Adot - 2 * C
    assert np.abs(S + S.T).max() < 1e-6 * max(1.0, np.abs(Adot).max())


@pytest.mark.long
def test_sympy_constrained_kanes_method_agrees():
    """sympy's KanesMethod with u_dependent and velocity_constraints, its bodies
    and constraints derived by sympy from the frames (naive build), against the
    projected models (no rotor inertia in the naive build)."""
    robot = library("diffdrive")
    nk = nonholonomic_kanes_method(robot)
    km = nk.kanes_method
    assert [str(u) for u in nk.u] == ["uwr(t)", "uwl(t)"] and len(nk.u_dependent) == 5
    from sympy.physics.mechanics import msubs

    MM, F = msubs(km.mass_matrix, nk.substitutions), msubs(km.forcing, nk.substitutions)
    q, qd = list(robot.q), list(robot.qd)
    gam = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels]
    params = sorted((MM.free_symbols | F.free_symbols) - set(q) - set(qd) - set(gam), key=str)
    f = sympy.lambdify([q, qd, gam, params], [MM, F], modules="numpy", cse=True)
    values, ne = _numeric("diffdrive", "newton-euler", seed=7, rotor=False, friction=False, wrench=False)
    _, kane = _numeric("diffdrive", "kane", seed=7, rotor=False, friction=False, wrench=False)
    rng = np.random.default_rng(7)
    independent = [robot.joint_labels.index(label) for label in nk.independent]
    for _ in range(3):
        q0, qa, tau = rng.uniform(-3, 3, 7), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
        torques = np.zeros(7)
        torques[independent] = tau
        M, rhs = (np.array(x, dtype=float) for x in f(q0, ne.velocities(q0, qa), torques, [values[str(p)] for p in params]))
        accelerations = np.linalg.solve(M, rhs.ravel())  # dynamic equations, then the constraints' derivatives
        kd, knh = M[:2], M[2:]
        A_sympy = kd[:, :2] + kd[:, 2:] @ -np.linalg.solve(knh[:, 2:], knh[:, :2])
        for fn in (ne, kane):
            assert_close(fn.direct_dynamics(q0, qa, tau), accelerations[:2])
            assert_close(fn.mass_matrix(q0), A_sympy)


@pytest.mark.long
def test_kane_model_exposes_the_constrained_kanes_method():
    """WheeledModel(..., "kane").kanes_method: KanesMethod on the Kane engine's
    bodies and loads, evaluated through its kinematic program."""
    model = derived("diffdrive", "kane")
    km = model.kanes_method
    nk = model.nonholonomic_kane
    assert len(model.bodies) == 5 and set(model.frames) >= set(model.robot.joint_labels)
    from sympy.physics.mechanics import msubs

    MM, F = msubs(km.mass_matrix, nk.substitutions), msubs(km.forcing, nk.substitutions)
    values, fn = _numeric("diffdrive", "kane", seed=8, rotor=False, friction=False, wrench=False)
    robot = model.robot
    rng = np.random.default_rng(8)
    q0, qa, tau = rng.uniform(-3, 3, 7), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
    qd = fn.velocities(q0, qa)
    known = {sympy.Symbol(k): sympy.Float(v) for k, v in values.items()}
    torques = dict(zip(model.independent, tau))
    for k, label in enumerate(robot.joint_labels):
        known[robot.q[k]], known[robot.qd[k]], known[robot.qdd[k]] = sympy.Float(q0[k]), sympy.Float(qd[k]), sympy.S.Zero
        known[robot.joint_parameters[label]["GAM"]] = sympy.Float(torques.get(label, 0.0))
    for symbol, expr in nk.system.kinematics.assignments(include_dead=True):
        known[symbol] = expr.xreplace(known)
    M = np.array(MM.xreplace(known).evalf(), dtype=float)
    rhs = np.array(F.xreplace(known).evalf(), dtype=float).ravel()
    assert_close(fn.direct_dynamics(q0, qa, tau), np.linalg.solve(M, rhs)[:2])


# -------------------------------------------------------------- programs
@pytest.mark.parametrize("name, method", [("diffdrive", "newton-euler"), ("diffdrive", "kane"), ("krang_wheeled", "newton-euler")])
@pytest.mark.long
def test_programs_agree_with_numeric(name, method):
    model = derived(name, method)
    values, fn = _numeric(name, method, seed=9)
    rng = np.random.default_rng(9)
    q, qa, qdda = rng.uniform(-3, 3, model.n), rng.uniform(-2, 2, model.dof), rng.uniform(-2, 2, model.dof)
    given = dict(values)
    given.update({str(s): v for s, v in zip(model.q, q)})
    given.update({str(s): v for s, v in zip(model.qd, qa)})
    given.update({str(s): v for s, v in zip(model.qdd, qdda)})

    def run(program_name):
        program = model.program(program_name)
        assert not {str(s) for s in program.inputs} - set(given)
        out = program.to_function()(*[given[str(s)] for s in program.inputs])
        return dict(zip(program.outputs, np.asarray(out, dtype=float).ravel()))

    out = run("inverse_dynamics")
    assert_close([out[f"GAM{a}"] for a in model.independent], fn.inverse_dynamics(q, qa, qdda))
    out = run("h")
    assert_close([out[f"GAM{a}"] for a in model.independent], fn.h(q, qa))
    out = run("gravity")
    assert_close([out.get(f"Q{a}", 0.0) for a in model.independent], fn.gravity(q))
    out = run("mass_matrix")
    names, A = matrix_entry_names("A", (model.dof, model.dof)), fn.mass_matrix(q)
    for i in range(model.dof):
        for j in range(i, model.dof):
            assert abs(out.get(names[i][j], 0.0) - A[i, j]) <= 1e-9 * max(1.0, np.abs(A).max())
    assert model.op_count("inverse_dynamics")["mul"] > 0
    if name == "diffdrive":  # the dependent block's determinant is a constant: no division by a pivot
        assert model.program("inverse_dynamics").definition(sympy.Symbol("DETWD")).free_symbols <= set(
            sympy.symbols("Rc b d")
        )


def test_batches_and_shapes():
    _, fn = _numeric("diffdrive")
    rng = np.random.default_rng(10)
    q, qa = rng.uniform(-2, 2, (5, 7)), rng.uniform(-1, 1, (5, 2))
    assert fn.mass_matrix(q).shape == (5, 2, 2) and fn.G(q).shape == (5, 7, 2)
    assert fn.velocities(q, qa).shape == (5, 7) and fn.energy(q, qa).shape == (5,)
    assert fn.constraint_residual(q, fn.velocities(q, qa)).max() < 1e-12
    for k in range(5):
        assert_close(fn.h(q, qa)[k], fn.h(q[k], qa[k]))
    with pytest.raises(KaneRobotError, match="qd_a must have 2 values"):
        fn.h(q[0], np.ones(7))


# ------------------------------------------------------------- simulation
@pytest.mark.parametrize("name, duration", [("diffdrive", 3.0), ("krang_wheeled", 1.0)])
@pytest.mark.long
def test_simulation_keeps_constraints_and_energy(name, duration):
    _, fn = _numeric(name, seed=11, backend="auto", friction=False, wrench=False)
    rng = np.random.default_rng(11)
    x0 = np.concatenate([rng.uniform(-1, 1, fn.n), rng.uniform(-1, 1, fn.m)])
    times = np.linspace(0, duration, 31)
    sol = solve_ivp(fn.rhs, (0, duration), x0, method="DOP853", rtol=1e-11, atol=1e-11, t_eval=times)
    assert sol.success
    q, qa = sol.y[: fn.n].T, sol.y[fn.n :].T
    qd = np.array([np.gradient(sol.y[k], times) for k in range(fn.n)]).T  # the motion itself, not G qd_a
    assert np.max(fn.constraint_residual(q, fn.velocities(q, qa))) < 1e-9
    assert np.max(fn.constraint_residual(q, qd)[2:-2]) < 1e-2 * max(1.0, np.abs(qd).max())  # finite-difference check
    energy, kinetic = fn.energy(q, qa), fn.kinetic_energy(q, qa)
    assert kinetic.max() > 0.1 * abs(energy[0]) or np.ptp(kinetic) > 1e-3  # it moves
    drift = np.abs(energy - energy[0]).max() / max(abs(energy[0]), kinetic.max())
    assert drift < 1e-8, drift


def test_work_of_the_inputs_is_the_energy_gained():
    _, fn = _numeric("diffdrive", seed=12, backend="auto", friction=False, wrench=False)
    rng = np.random.default_rng(12)
    x0 = np.concatenate([rng.uniform(-1, 1, fn.n), rng.uniform(-1, 1, fn.m)])
    tau = np.array([0.7, -0.3])

    def rhs(t, x):
        out = fn.rhs(t, x[:-1], tau)
        return np.append(out, tau @ x[fn.n : fn.n + fn.m])  # power of the inputs

    sol = solve_ivp(rhs, (0, 2.0), np.append(x0, 0.0), method="DOP853", rtol=1e-11, atol=1e-11)
    end = sol.y[:, -1]
    gained = fn.energy(end[: fn.n], end[fn.n : -1]) - fn.energy(x0[: fn.n], x0[fn.n :])
    assert abs(gained - end[-1]) < 1e-8 * max(1.0, abs(end[-1]))


@pytest.mark.parametrize("wr, wl", [(2.0, 1.0), (1.5, 1.5), (1.0, -1.0), (-0.4, 1.3)])
def test_differential_drive_follows_the_unicycle(wr, wl):
    """Constant wheel rates: the chassis turns at R (wr - wl) / b on a circle of
    radius (b/2) (wr + wl) / (wr - wl) (a straight line for wr = wl)."""
    values, fn = _numeric("diffdrive", seed=13)
    R, b = values["R"], values["b"]
    rates = np.array([wr, wl])
    q0 = np.array([0.3, -0.2, 0.7, 0.0, 0.0, 0.5, 0.0])
    times = np.linspace(0, 4.0, 9)
    sol = solve_ivp(lambda t, q: fn.velocities(q, rates), (0, 4.0), q0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times)
    x, y, th = sol.y[:3]
    v, w = R * (wr + wl) / 2, R * (wr - wl) / b
    assert np.allclose(th, 0.7 + w * times, atol=1e-9)
    if wr == wl:
        expected_x, expected_y = 0.3 + v * times * np.cos(0.7), -0.2 + v * times * np.sin(0.7)
    else:
        radius = (b / 2) * (wr + wl) / (wr - wl)
        assert np.isclose(radius, v / w)
        expected_x = 0.3 + radius * (np.sin(th) - np.sin(0.7))
        expected_y = -0.2 - radius * (np.cos(th) - np.cos(0.7))
    assert np.allclose(x, expected_x, atol=1e-9) and np.allclose(y, expected_y, atol=1e-9)
    assert np.allclose(sol.y[3], wr * times, atol=1e-9) and np.allclose(sol.y[4], wl * times, atol=1e-9)


# ----------------------------------------------------------------- errors
TRICYCLE = """
name = "tricycle"
wheeled = true
posture = ["x", "y", "th"]

[[frame]]
label = "x"
antecedent = "0"
sigma = 1
axis = [1, 0, 0]
q = "x"

[[frame]]
label = "y"
antecedent = "x"
sigma = 1
axis = [0, 1, 0]
q = "y"

[[frame]]
label = "th"
antecedent = "y"
sigma = 0
P = [0, 0, "R"]
q = "th"

[[frame]]
label = "wr"
antecedent = "th"
sigma = 0
P = [0, "-b/2", 0]
axis = [0, 1, 0]
q = "phi_r"

[[frame]]
label = "wl"
antecedent = "th"
sigma = 0
P = [0, "b/2", 0]
axis = [0, 1, 0]
q = "phi_l"

[[frame]]
label = "st"
antecedent = "th"
sigma = 0
P = ["L", 0, 0]
q = "beta"

[[frame]]
label = "wf"
antecedent = "st"
sigma = 0
axis = [0, 1, 0]
q = "phi_f"

[[wheel]]
joint = "wr"
radius = "R"

[[wheel]]
joint = "wl"
radius = "R"

[[wheel]]
joint = "wf"
kind = "steering"
steer = "st"
radius = "R"
"""


def test_steering_wheel_and_its_singularity():
    """A tricycle: two fixed wheels and a steering wheel.  The independent speeds
    are the right wheel's rate and the steering rate; where the instantaneous
    centre of rotation is the right wheel's contact point, that wheel cannot
    turn and G is not defined: a SingularityError, not a division by zero."""
    robot = frames_from_text(TRICYCLE)
    ne, kane = WheeledModel(robot, "newton-euler"), WheeledModel(robot, "kane")
    assert ne.independent == ("wr", "st") and ne.dependent == ("x", "y", "th", "wl", "wf")
    values = random_parameters(robot, np.random.default_rng(14))
    fn, fk = ne.numeric(values, backend="numpy"), kane.numeric(values, backend="numpy")
    rng = np.random.default_rng(14)
    q, qa, tau = rng.uniform(-1, 1, (3, 7)), rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))
    assert_close(fk.direct_dynamics(q, qa, tau), fn.direct_dynamics(q, qa, tau))
    assert fn.constraint_residual(q, fn.velocities(q, qa)).max() < 1e-12
    singular = np.zeros(7)
    singular[5] = np.arctan2(values["L"], -values["b"] / 2)
    with pytest.raises(SingularityError, match="are not determined by those of wr, st"):
        fn.mass_matrix(singular)


def _file_error(text, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RobotFileError) as info:
        kr.load(path)
    return info.value


@pytest.mark.parametrize(
    "old, new, words, line_of",
    [
        ('joint = "wf"\nkind = "steering"\nsteer = "st"\nradius = "R"', 'joint = "wf"\nkind = "steering"\nsteer = "st"',
         "wheel wf has no contact geometry: give its radius", '[[wheel]]\njoint = "wf"'),
        ('[[wheel]]\njoint = "wr"', '[[wheel]]\njoint = "x"', "wheel x: joint x is prismatic, but a wheel turns about its axle", 'joint = "x"'),
        ('kind = "steering"', 'kind = "caster"', "kind 'caster' is not a kind of wheel", 'kind = "caster"'),
        ('kind = "steering"', 'kind = "castor"', "castor wheel wf has no offset", '[[wheel]]\njoint = "wf"'),
        ('kind = "steering"\nsteer = "st"', 'kind = "fixed"\nsteer = "st"', "wheel wf is fixed but has a steering joint st", 'steer = "st"'),
        ('kind = "steering"\nsteer = "st"', 'kind = "steering"', "steering wheel wf has no steering joint", '[[wheel]]\njoint = "wf"'),
        ('steer = "st"', 'steer = "wl"', "its steering joint wl is a wheel's joint", 'steer = "wl"'),
        ('steer = "st"', 'steer = "nope"', "its steering joint nope is not a frame", 'steer = "nope"'),
        ('wheeled = true', 'wheeled = false', "has wheels but is not wheeled: set wheeled = true", 'joint = "wr"'),
        ('posture = ["x", "y", "th"]', '', "needs the posture of its planar base", None),
        ('posture = ["x", "y", "th"]', 'posture = ["x", "th", "y"]', "posture: y is joint th, which is revolute", "posture ="),
        ('posture = ["x", "y", "th"]', 'posture = ["x", "y"]', "posture must be a list of the 3 joints", "posture ="),
        ('joint = "wr"\nradius = "R"', 'joint = "wr"\nradius = "R"\nrim = 2', "unknown key 'rim' in wheel wr", "rim = 2"),
        ('joint = "wl"\nradius = "R"', 'joint = "wr"\nradius = "R"', "wheel wr is described twice", None),
        ('joint = "wr"\nradius = "R"', 'joint = "wr"\nradius = -1', "wheel wr has radius -1: a wheel's radius must be > 0", "radius = -1"),
    ],
)
def test_file_errors_name_the_wheel_and_the_line(tmp_path, old, new, words, line_of):
    assert old in TRICYCLE
    text = TRICYCLE.replace(old, new, 1)
    error = _file_error(text, tmp_path)
    assert words in str(error), str(error)
    if line_of is not None:
        assert error.line == text[: text.index(line_of)].count("\n") + 1, str(error)


@pytest.mark.parametrize(
    "old, new, words",
    [
        ('label = "wl"\nantecedent = "th"\nsigma = 0\nP = [0, "b/2", 0]\naxis = [0, 1, 0]',
         'label = "wl"\nantecedent = "th"\nsigma = 0\nP = [0, "b/2", 0]\naxis = [0, 0, 1]',
         "wheel wl has its axle (the axis of joint wl) not horizontal"),
        ('P = [0, "b/2", 0]', 'P = [0, "b/2", "L"]', "wheel wl has its centre (the origin of frame wl) at height L + R above the ground, not at its radius R"),
        ('P = ["L", 0, 0]\nq = "beta"', 'P = ["L", 0, 0]\nq = "beta"\naxis = [1, 0, 0]', "steered by joint st, whose axis is not vertical"),
        ('label = "wf"\nantecedent = "st"\nsigma = 0', 'label = "wf"\nantecedent = "st"\nsigma = 0\nP = ["-L", 0, 0]',
         "steering wheel wf has its centre off its steering axis"),
        ('label = "y"\nantecedent = "x"\nsigma = 1\naxis = [0, 1, 0]', 'label = "y"\nantecedent = "x"\nsigma = 1\naxis = [1, 0, 0]',
         "must slide along perpendicular axes"),
    ],
)
def test_geometry_errors(old, new, words):
    assert old in TRICYCLE
    robot = frames_from_text(TRICYCLE.replace(old, new, 1))
    with pytest.raises(KaneRobotError) as info:
        WheeledModel(robot)
    assert words in str(info.value), str(info.value)


def test_castor_offset_must_match_the_geometry():
    text = kr.frames_path("diffdrive").read_text().replace('offset = "d"', 'offset = "a"')
    with pytest.raises(KaneRobotError, match=r"castor wheel cw has its centre at the horizontal distance .* not its offset a"):
        WheeledModel(frames_from_text(text))


def test_models_refuse_what_they_cannot_model():
    arm = library("planar2")
    with pytest.raises(KaneRobotError, match="not a wheeled robot"):
        WheeledModel(arm)
    with pytest.raises(KaneRobotError, match="describes no wheels"):
        WheeledModel(Robot.create(arm.name, arm.frames, wheeled=True))
    robot = library("diffdrive")
    with pytest.raises(KaneRobotError, match="unknown method"):
        WheeledModel(robot, "hamilton")
    with pytest.raises(KaneRobotError, match="2 independent speeds"):
        WheeledModel(robot, independent=["wr"])
    with pytest.raises(KaneRobotError, match="are not determined"):
        WheeledModel(robot, independent=["x", "y"])
    assert WheeledModel(robot, independent=["x", "th"]).dependent == ("y", "wr", "wl", "cs", "cw")
    with pytest.raises(KaneRobotError, match="no wheeled program for 'coriolis_matrix'"):
        derived("diffdrive").program("coriolis_matrix")
    with pytest.raises(kr.ParameterError, match="no value for"):
        derived("diffdrive").numeric({"R": 0.1})
    assert tree_robot(robot).wheeled is False and tree_robot(robot).links == robot.links
