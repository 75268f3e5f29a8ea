"""Kane's method (kanerobot.dynamics.kane) against the other engines and against itself.

- Every model (inverse dynamics, A, H, Q, C) equals Newton-Euler's
  (newton_euler, composite, coriolis) to 1e-9 relative, on random
  physically consistent parameters and random states, for the robots of
  frames/ (Krang included), a tree with oblique axes and moving bases.
- The programs the engine emits (Kane's equations summed from the leaves,
  NestedKane) satisfy KanesMethod's own equations, its mass_matrix and
  forcing evaluated as sympy formed them, to 1e-10 relative; they are
  about the size of Newton-Euler's and form no partial velocity per
  (body, speed) pair; the programs read off KanesMethod agree.
- The textbook KanesMethod build (naive_kanes_method) gives the same
  equations as the fast one on small robots.
- C from the seed's getAC rule (coefficients of h_vel) equals the program's C
  and the Christoffel C; A' - 2C is skew-symmetric (A' by finite differences).
- The right-hand side terms a, b1..b4, c of the seed's kanesRHS.
- The exposed objects are sympy.physics.mechanics objects.
- A plain Kane derivation constructs no KanesMethod (the class made to raise,
  the RX-90's models still equal Newton-Euler's); model.kanes_method builds it
  on demand; the benchmark's cart pendulum (3 links) equals Newton-Euler.
"""

import dataclasses
import importlib.util
from pathlib import Path

import numpy
import pytest
import sympy
from conftest import assert_close, derived, library
from conftest import program_outputs as evaluate
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, partial_velocity
from sympy.physics.vector import Vector

from kanerobot import geometry, kinematics
from kanerobot.dynamics import composite, coriolis, newton_euler
from kanerobot.dynamics.kane import KaneRHS, KaneSystem, naive_kanes_method
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import WRENCH_NAMES, Base, Frame, KKPlacement, Robot
from kanerobot.symbolic.printing import matrix_entry_names

ROBOTS = ("planar2", "rx90", "stanford", "puma560", "krang")
RTOL = 1e-9

_SYSTEMS, _REFERENCES = {}, {}


def system(robot):
    """One KaneSystem per robot for the whole file (the derivation is the slow part)."""
    key = id(robot)
    if key not in _SYSTEMS:
        _SYSTEMS[key] = (robot, KaneSystem(robot))
    return _SYSTEMS[key][1]


def rrp_arm():
    """A spatial 3-DOF arm (revolute, revolute, prismatic), gravity in any
    direction and a wrench on the last link."""
    th1, th2, r3, D2, R1 = sympy.symbols("th1 th2 r3 D2 R1")
    return Robot.create(
        "rrp",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=th1, r=R1)),
            Frame("2", "1", 0, 1, KKPlacement(alpha=-sympy.pi / 2, d=D2, theta=th2)),
            Frame("3", "2", 1, 1, KKPlacement(alpha=sympy.pi / 2, r=r3)),
        ],
        base=Base.from_values(G=["G1", "G2", "G3"]),
        dynamics={"3": {"FX": "FX3", "FZ": "FZ3", "CY": "CY3"}},
    )


def moving(robot):
    """``robot`` on a base with a symbolic motion (W0, WP0, V0, VP0) and gravity."""
    base = Base.from_values(
        W0=["w01", "w02", "w03"], WP0=["wp01", "wp02", "wp03"], V0=["v01", "v02", "v03"],
        VP0=["vp01", "vp02", "vp03"], G=["G1", "G2", "G3"],
    )  # fmt: skip
    return dataclasses.replace(robot, base=base)


def state(robot, rng, gam=0.0):
    """Parameter values and a random state, by name."""
    values = random_parameters(robot, rng)
    for x in robot.q:
        values[str(x)] = float(rng.uniform(-numpy.pi, numpy.pi))
    for x in list(robot.qd) + list(robot.qdd):
        if isinstance(x, sympy.Symbol):
            values[str(x)] = float(rng.uniform(-2, 2))
    for label in robot.joint_labels:
        values[str(robot.joint_parameters[label]["GAM"])] = gam if not callable(gam) else gam()
    return values


def matrix(outputs, prefix, n, symmetric=False):
    names = matrix_entry_names(prefix, (n, n))
    return numpy.array(
        [[outputs[names[min(i, j)][max(i, j)] if symmetric else names[i][j]] for j in range(n)] for i in range(n)]
    )


def reference_programs(robot, fixed_base=True):
    """Newton-Euler's models of ``robot`` (C, and A for a moving base, with the base at rest)."""
    key = id(robot)
    if key not in _REFERENCES:
        _REFERENCES[key] = (robot, _reference_programs(robot, fixed_base))
    return _REFERENCES[key][1]


def _reference_programs(robot, fixed_base):
    out = {
        "inverse_dynamics": newton_euler.inverse_dynamics(robot),
        "h": newton_euler.coriolis_gravity(robot),
        "gravity": newton_euler.gravity_torques(robot),
    }
    rest = robot if fixed_base else dataclasses.replace(robot, base=Base(Z=robot.base.Z, G=robot.base.G))
    A = composite.mass_matrix(rest)
    out["mass_matrix"] = A
    out["coriolis_matrix"] = coriolis.coriolis_matrix(rest, A)
    return out


# ------------------------------------------------------------ Newton-Euler


# Krang's case (18 s) is slow: tests/test_engines.py holds Krang's Kane models
# equal to Newton-Euler in the default run.
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "krang" else n for n in ROBOTS])
@pytest.mark.long
def test_every_model_equals_newton_euler(name):
    robot = library(name)
    kane = system(robot)
    reference = reference_programs(robot)
    rng = numpy.random.default_rng(sum(map(ord, name)))
    for _ in range(2):
        values = state(robot, rng)
        for model, program in reference.items():
            assert_close(evaluate(kane.program(model), values), evaluate(program, values), what=f"{name} {model}")


@pytest.mark.parametrize("case", ["tree", "stanford moving", "rrp moving"])
@pytest.mark.long
def test_trees_oblique_axes_and_moving_bases_equal_newton_euler(case, tree):
    """A tree with oblique revolute and prismatic axes and a fixed frame;
    moving bases (C is then the base-at-rest Coriolis matrix)."""
    robot = {"tree": tree, "stanford moving": moving(library("stanford")), "rrp moving": moving(rrp_arm())}[case]
    kane = system(robot)
    reference = reference_programs(robot, fixed_base=case == "tree")
    rng = numpy.random.default_rng(7)
    values = state(robot, rng)
    for model, program in reference.items():
        assert_close(evaluate(kane.program(model), values), evaluate(program, values), what=f"{case} {model}")


def test_output_names_and_inputs_are_newton_eulers():
    robot = library("rx90")
    kane = system(robot)
    assert list(kane.program("inverse_dynamics").outputs) == [f"GAM{j}" for j in robot.joint_labels]
    assert list(kane.program("gravity").outputs) == [f"Q{j}" for j in robot.joint_labels]
    assert list(kane.program("mass_matrix").outputs) == list(composite.mass_matrix(robot).outputs)
    # C23 (cos(th2 + th3)) is an intermediate of the kinematics: the output C23 keeps its name.
    assert list(kane.program("coriolis_matrix").outputs) == [f"C{i}{j}" for i in range(1, 7) for j in range(1, 7)]
    # u, u' and q are the robot's QP, QDP and joint variables.
    inputs = {s.name for s in kane.program("inverse_dynamics").inputs}
    assert {str(s) for s in list(robot.q) + list(robot.qd) + list(robot.qdd)} <= inputs
    assert not any(isinstance(s, sympy.Function) for s in kane.program("inverse_dynamics").inputs)


def planar_chain(n):
    """``n`` revolute joints about parallel axes: a robot with more than nine
    joints whose Kane models take a quarter of a second (Krang's ten)."""
    frames = [
        Frame(str(j), str(j - 1), 0, 1, KKPlacement(d=sympy.Symbol(f"L{j}") if j > 1 else 0, theta=sympy.Symbol(f"th{j}")))
        for j in range(1, n + 1)
    ]
    return Robot.create(f"chain{n}", frames)


def test_output_names_past_nine_joints_are_row_underscore_column():
    robot = planar_chain(10)
    kane = system(robot)
    names = matrix_entry_names("C", (10, 10))
    assert list(kane.program("mass_matrix").outputs) == list(composite.mass_matrix(robot).outputs)
    assert list(kane.program("mass_matrix").outputs)[:3] == ["A1_1", "A1_2", "A2_2"] and "A1_10" in kane.program("mass_matrix").outputs
    assert list(kane.program("coriolis_matrix").outputs) == [x for row in names for x in row]
    assert names[9][0] == "C10_1"


# Krang's Kane A and C (10 s) for their names: slow; the names past nine joints
# are checked on the chain above, Krang's matrices by name in tests/test_engines.py.
@pytest.mark.slow
def test_krang_output_names():
    krang = system(library("krang"))
    assert "A1_17" in krang.program("mass_matrix").outputs and "C17_1" in krang.program("coriolis_matrix").outputs


# ------------------------------------------------------------ KanesMethod's own equations


KM_RTOL = 1e-10


def value(expr, values):
    """``expr`` (a robot parameter: a symbol or a number) at ``values``."""
    expr = sympy.sympify(expr)
    return float(expr.xreplace({s: values[s.name] for s in expr.free_symbols}))


# Krang (6 s) with -m slow: the tree case holds its branches by default
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "krang" else n for n in ROBOTS + ("tree",)])
@pytest.mark.long
def test_nested_programs_satisfy_kanes_methods_own_equations(name, request):
    """The nested programs against KanesMethod's mass_matrix and forcing, evaluated
    as KanesMethod forms them (an independent path): A = MM + diag(IA), Kane's
    equations (MM + diag(IA)) u' = forcing hold with the nested torques, H, Q and
    C u = h_vel are forcing's parts, at random states and random physically
    consistent parameters, to 1e-10 relative."""
    robot = request.getfixturevalue("tree") if name == "tree" else library(name)
    kane = system(robot)
    km = kane.kanes_method_program()
    n, labels = robot.dof, robot.joint_labels
    gam = [str(robot.joint_parameters[j]["GAM"]) for j in labels]
    rng = numpy.random.default_rng(sum(map(ord, name)) + 3)
    for _ in range(2):
        values = state(robot, rng)
        IA = numpy.diag([value(robot.dynamics[j]["IA"], values) if j in robot.dynamics else 0.0 for j in labels])
        qdd = numpy.array([values[str(x)] for x in robot.qdd])
        out = evaluate(km, values)
        MM = matrix(out, "MM", n, symmetric=True)
        assert_close(matrix(evaluate(kane.program("mass_matrix"), values), "A", n, symmetric=True), MM + IA, rtol=KM_RTOL, what=f"{name} A")
        # Kane's equations with the torques of the nested inverse dynamics.
        torques = evaluate(kane.program("inverse_dynamics"), values)
        with_torques = dict(values, **{g: torques[f"GAM{j}"] for g, j in zip(gam, labels)})
        forcing = [evaluate(km, with_torques)[f"FORCING{j}"] for j in labels]
        assert_close((MM + IA) @ qdd, forcing, rtol=KM_RTOL, what=f"{name} Kane's equations with the nested GAM")
        # H = -forcing without torques; Q = -forcing at rest without torques nor wrenches.
        at_rest = dict(values, **dict.fromkeys(gam, 0.0))
        h = evaluate(kane.program("h"), values)
        assert_close([h[f"GAM{j}"] for j in labels], [-evaluate(km, at_rest)[f"FORCING{j}"] for j in labels], rtol=KM_RTOL, what=f"{name} H")
        for x in robot.qd:
            at_rest[str(x)] = 0.0
        for j in robot.links:
            for w in WRENCH_NAMES:
                if isinstance(robot.dynamics[j][w], sympy.Symbol):
                    at_rest[str(robot.dynamics[j][w])] = 0.0
        Q = evaluate(kane.program("gravity"), values)
        assert_close([Q[f"Q{j}"] for j in labels], [-evaluate(km, at_rest)[f"FORCING{j}"] for j in labels], rtol=KM_RTOL, what=f"{name} Q")
        # C u = h_vel = -forcing without gravity, friction, torques and wrenches.
        bare = dict(values, **dict.fromkeys(gam, 0.0))
        bare.update({str(s): 0.0 for s in robot.base.G if isinstance(s, sympy.Symbol)})
        bare.update({str(robot.dynamics[j][p]): 0.0 for j in robot.links for p in ("FV", "FS") + WRENCH_NAMES
                     if isinstance(robot.dynamics[j][p], sympy.Symbol)})
        qd = numpy.array([values[str(x)] for x in robot.qd])
        C = matrix(evaluate(kane.program("coriolis_matrix"), values), "C", n)
        assert_close(C @ qd, [-evaluate(km, bare)[f"FORCING{j}"] for j in labels], rtol=KM_RTOL, what=f"{name} C u")


def test_kanes_method_source_gives_the_same_programs():
    """program(name, source="kanes_method") reads the models off KanesMethod: same
    outputs and values as the nested programs, larger."""
    robot = library("rx90")
    kane = system(robot)
    rng = numpy.random.default_rng(31)
    values = state(robot, rng)
    for model in ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix"):
        nested, km = kane.program(model), kane.program(model, source="kanes_method")
        assert_close(evaluate(nested, values), evaluate(km, values), what=f"rx90 {model} nested vs KanesMethod")
        assert sum(nested.op_count().values()) < sum(km.op_count().values()), model
    with pytest.raises(KaneRobotError, match="source"):
        kane.program("mass_matrix", source="lagrange")


@pytest.mark.parametrize("name", ["rx90", "krang"])
def test_nested_programs_are_kanes_sums_in_order_n(name):
    """No partial velocity per (body, speed) pair and no A u' + H: the nested programs
    are about the size of Newton-Euler's (composite links for A, half for Q),
    with the weight on each body (gravity in every body frame, GV)."""
    robot = library(name)
    kane = system(robot)
    reference = reference_programs(robot)
    for model in ("inverse_dynamics", "mass_matrix", "gravity", "h"):
        program = kane.program(model)
        names = [s.name for s, _ in program.assignments()]
        assert not [x for x in names if x.startswith(("JW", "JV", "JG"))], model
        ours, theirs = (sum(p.op_count()[k] for k in ("add", "mul")) for p in (program, reference[model]))
        assert ours <= 1.05 * theirs, f"{name} {model}: {ours} operations, Newton-Euler {theirs}"
    idm = [s.name for s, _ in kane.program("inverse_dynamics").assignments()]
    assert any(x.startswith("GV") for x in idm) and any(x.startswith("AG") for x in idm)
    ours, theirs = (sum(p.op_count()[k] for k in ("add", "mul")) for p in (kane.program("gravity"), reference["gravity"]))
    assert ours < 0.75 * theirs, f"{name} gravity: {ours} operations, Newton-Euler {theirs}"


# ------------------------------------------------------------ naive KanesMethod


@pytest.mark.parametrize("make", [lambda: library("planar2"), rrp_arm], ids=["planar2", "rrp"])
def test_naive_kanes_method_gives_the_same_equations(make):
    robot = make()
    naive = naive_kanes_method(robot)
    assert isinstance(naive.kanes_method, KanesMethod)
    sub = naive.substitutions(robot)
    MM = naive.kanes_method.mass_matrix.xreplace(sub)
    forcing = naive.kanes_method.forcing.xreplace(sub)
    symbols = sorted(MM.free_symbols | forcing.free_symbols, key=str)
    numeric = sympy.lambdify(symbols, [MM, forcing])
    kane = system(robot)
    n = robot.dof
    rng = numpy.random.default_rng(11)
    for _ in range(2):
        values = state(robot, rng, gam=lambda: float(rng.uniform(-1, 1)))
        M, F = (numpy.array(x, dtype=float) for x in numeric(*[values[str(s)] for s in symbols]))
        IA = numpy.diag([values[str(robot.dynamics[j]["IA"])] for j in robot.joint_labels])
        gam = numpy.array([values[str(robot.joint_parameters[j]["GAM"])] for j in robot.joint_labels])
        qdd = numpy.array([values[str(x)] for x in robot.qdd])
        A = matrix(evaluate(kane.program("mass_matrix"), values), "A", n, symmetric=True)
        assert numpy.allclose(A, M + IA, rtol=RTOL, atol=RTOL)
        # Naive: M u' = forcing (torques included), so the torques are M u' - (forcing - GAM).
        expected = (M + IA) @ qdd - (F.ravel() - gam)
        ours = evaluate(kane.program("inverse_dynamics"), values)
        assert numpy.allclose([ours[f"GAM{j}"] for j in robot.joint_labels], expected, rtol=RTOL, atol=RTOL)


def test_naive_kanes_method_refuses_a_moving_base():
    with pytest.raises(KaneRobotError, match="moving base"):
        naive_kanes_method(moving(library("planar2")))


# ------------------------------------------------------------ C by getAC


def get_ac(h, qd):
    """The seed's getAC on the expanded velocity terms: C_ij = coeff(h_i, qd_j^2) qd_j
    + ccc - 1/2 sum_k coeff(ccc, qd_k) qd_k, with ccc = coeff(h_i, qd_j^1)."""
    n = len(qd)
    C = sympy.zeros(n, n)
    for i in range(n):
        poly = sympy.expand(h[i])
        for j in range(n):
            ccc = poly.coeff(qd[j], 1)
            cross = sum(ccc.coeff(qd[k], 1) * qd[k] for k in range(n))
            C[i, j] = poly.coeff(qd[j], 2) * qd[j] + ccc - sympy.Rational(1, 2) * cross
    return C


@pytest.mark.parametrize("make", [lambda: library("planar2"), rrp_arm], ids=["planar2", "rrp"])
def test_coriolis_matrix_is_the_seeds_getac_split(make):
    robot = make()
    kane = system(robot)
    n = robot.dof
    hv = kane.velocity_forces().substitute_back()
    qd = list(robot.qd)
    h = [hv[f"HV{j}"] for j in robot.joint_labels]
    # h_vel is homogeneous quadratic in the speeds.
    t = sympy.Symbol("t")
    for h_i in h:
        assert sympy.expand(h_i.xreplace({v: t * v for v in qd}) - t**2 * h_i) == 0
    C = get_ac(h, qd)
    rng = numpy.random.default_rng(5)
    values = state(robot, rng)
    point = {sympy.Symbol(k): v for k, v in values.items()}
    expected = numpy.array(C.xreplace(point).evalf(), dtype=float)
    ours = matrix(evaluate(kane.program("coriolis_matrix"), values), "C", n)
    assert numpy.allclose(ours, expected, rtol=RTOL, atol=RTOL)
    qd_values = numpy.array([values[str(v)] for v in qd])
    h_values = numpy.array([evaluate(kane.velocity_forces(), values)[f"HV{j}"] for j in robot.joint_labels])
    assert numpy.allclose(ours @ qd_values, h_values, rtol=RTOL, atol=RTOL)


@pytest.mark.parametrize("name", ["rx90", "krang"])
@pytest.mark.long
def test_getac_coriolis_equals_christoffel_and_adot_minus_2c_is_skew(name):
    robot = library(name)
    kane = system(robot)
    n = robot.dof
    A_program, C_program = kane.program("mass_matrix"), kane.program("coriolis_matrix")
    # Christoffel symbols of A (by composite links; test_every_model_equals_newton_euler
    # checks that A is Kane's A).
    christoffel = reference_programs(robot)["coriolis_matrix"]
    rng = numpy.random.default_rng(13)
    values = state(robot, rng)
    C = matrix(evaluate(C_program, values), "C", n)
    assert_close(evaluate(C_program, values), evaluate(christoffel, values), what=f"{name} getAC C vs Christoffel C")
    step = 1e-6
    qd = numpy.array([values[str(v)] for v in robot.qd])
    up, down = dict(values), dict(values)
    for x, v in zip(robot.q, qd):
        up[str(x)] += step * v
        down[str(x)] -= step * v
    Adot = (matrix(evaluate(A_program, up), "A", n, True) - matrix(evaluate(A_program, down), "A", n, True)) / (2 * step)
    N = Adot - 2 * C
    assert numpy.abs(N + N.T).max() <= 1e-6 * (1 + numpy.abs(N).max())


# ------------------------------------------------------------ right-hand side


@pytest.mark.long
def test_rhs_terms_of_krang():
    robot = library("krang")
    kane = system(robot)
    rhs = kane.rhs_terms()
    assert isinstance(rhs, KaneRHS) and rhs.frames == ("10l", "10r") and list(rhs.b) == ["b1", "b2", "b3", "b4"]
    n = robot.dof
    rng = numpy.random.default_rng(17)
    values = state(robot, rng, gam=lambda: float(rng.uniform(-1, 1)))
    for F, T in rhs.wrench_symbols.values():
        for s in list(F) + list(T):
            values[str(s)] = float(rng.uniform(-2, 2))
    # a: the joint torques and their reactions give the joint torques (seed eq. 15).
    a = evaluate(rhs.a, values)
    gam = [values[str(robot.joint_parameters[j]["GAM"])] for j in robot.joint_labels]
    assert numpy.allclose([a[f"a{j}"] for j in robot.joint_labels], gam)
    # c: gravity gives -Q.
    c, Q = evaluate(rhs.c, values), evaluate(newton_euler.gravity_torques(robot), values)
    c_values = [c[f"c{j}"] for j in robot.joint_labels]
    assert numpy.allclose(c_values, [-Q[f"Q{j}"] for j in robot.joint_labels], rtol=RTOL, atol=RTOL)
    # b: J^T f and J^T m with the Jacobian of each hand's origin, in its frame.
    point = {sympy.Symbol(k): v for k, v in values.items()}
    names_v, names_w = matrix_entry_names("JVT", (n, 3)), matrix_entry_names("JWT", (n, 3))
    for m, frame in enumerate(rhs.frames):
        J = numpy.array(kinematics.jacobian(robot, frame, projection=frame).xreplace(point).evalf(), dtype=float)
        jt = evaluate(rhs.jacobians[frame], values)
        JVT = numpy.array([[jt[names_v[i][c]] for c in range(3)] for i in range(n)])
        JWT = numpy.array([[jt[names_w[i][c]] for c in range(3)] for i in range(n)])
        assert numpy.allclose(JVT, J[:3].T, atol=1e-12) and numpy.allclose(JWT, J[3:].T, atol=1e-12)
        F, T = (numpy.array([values[str(s)] for s in group]) for group in rhs.wrench_symbols[frame])
        force, moment = evaluate(rhs.b[f"b{2 * m + 1}"], values), evaluate(rhs.b[f"b{2 * m + 2}"], values)
        assert numpy.allclose([force[f"b{2 * m + 1}_{j}"] for j in robot.joint_labels], JVT @ F, atol=1e-12)
        assert numpy.allclose([moment[f"b{2 * m + 2}_{j}"] for j in robot.joint_labels], JWT @ T, atol=1e-12)


def test_rhs_wrench_matches_newton_euler_external_wrench():
    """The environment's wrench at the origin of link 3 of the RRP arm:
    -(b1 + b2) is what Newton-Euler adds for the wrench FX3.. the link exerts."""
    robot = rrp_arm()
    kane = system(robot)
    rhs = kane.rhs_terms(frames=["3"])
    rng = numpy.random.default_rng(19)
    values = state(robot, rng)
    F, T = rhs.wrench_symbols["3"]
    for s in list(F) + list(T):
        values[str(s)] = 0.0
    values["FX3"], values["FZ3"], values["CY3"] = 0.7, -1.1, 0.4
    with_wrench = evaluate(newton_euler.inverse_dynamics(robot), values)
    without = evaluate(newton_euler.inverse_dynamics(robot), dict(values, FX3=0.0, FZ3=0.0, CY3=0.0))
    values.update({str(F[0]): -0.7, str(F[2]): 1.1, str(T[1]): -0.4})
    b1, b2 = evaluate(rhs.b["b1"], values), evaluate(rhs.b["b2"], values)
    for j in robot.joint_labels:
        assert with_wrench[f"GAM{j}"] - without[f"GAM{j}"] == pytest.approx(-(b1[f"b1_{j}"] + b2[f"b2_{j}"]), abs=1e-12)


# ------------------------------------------------------------ sympy objects


def test_exposed_objects_are_sympy_mechanics_objects():
    robot = library("rx90")
    kane = system(robot)
    n = robot.dof
    assert isinstance(kane.kanes_method, KanesMethod)
    assert kane.kanes_method.mass_matrix.shape == (n, n) and kane.kanes_method.forcing.shape == (n, 1)
    assert len(kane.bodies) == 6 and all(isinstance(b, RigidBody) for b in kane.bodies)
    assert set(kane.frames) == {"0"} | set(robot.labels)
    assert all(isinstance(f, ReferenceFrame) for f in kane.frames.values()) and kane.frames["0"] is kane.N
    for location, vector in kane.loads:
        assert isinstance(location, (Point, ReferenceFrame)) and isinstance(vector, Vector)
    t = dynamicsymbols._t
    assert [u.args for u in kane.u] == [(t,)] * n and [q.args for q in kane.q] == [(t,)] * n
    assert [str(q.func) for q in kane.q] == [str(q) for q in robot.q]
    # Kane's equations Fr + Fr* = 0 as KanesMethod forms them; Fr* = -(M u' + nonMM)
    # with KanesMethod's mass matrix, and Fr - nonMM its forcing.
    fr, frstar = kane.kanes_method.kanes_equations()
    assert fr.shape == frstar.shape == (n, 1) and kane.fr == fr
    M = kane.kanes_method.mass_matrix
    for k in range(n):
        assert sympy.expand(frstar[n - 1].diff(kane.udot[k]) + M[n - 1, k]) == 0
    # Each body's angular velocity is given in its own frame, linear in u.
    w6 = kane.frames["6"].ang_vel_in(kane.N)
    assert w6.args[0][1] is kane.frames["6"]
    assert partial_velocity([w6], kane.u, kane.N)[0][5] == kane.frames["6"].z
    # The inertia given is XX..ZZ about the frame origin: the body gets it as the
    # central inertia I_G = J_O - M (c.c E - c c^T), c = MS/M, in symbols of the
    # kinematic program; moved back to the origin (parallel axes) it is XX..ZZ.
    body = kane.bodies[5]
    assert body.inertia.point is kane.centres["6"] and body.masscenter is kane.centres["6"]
    I_G = body.central_inertia.to_matrix(body.frame)
    assert I_G[0, 1] == kane.real(kane.IG["6"][0, 1]) and I_G.is_symmetric()
    definitions = {}
    for sym, expr in kane.kinematics.assignments(include_dead=True):
        definitions[kane.real(sym)] = kane.real(expr).xreplace(definitions)
    I_O = body.parallel_axis(kane.origins["6"], body.frame).to_matrix(body.frame).xreplace(definitions)
    d = robot.dynamics["6"]
    J_O = sympy.Matrix([[d["XX"], d["XY"], d["XZ"]], [d["XY"], d["YY"], d["YZ"]], [d["XZ"], d["YZ"], d["ZZ"]]])
    assert sympy.simplify(I_O - kane.real(J_O)) == sympy.zeros(3, 3)
    # The frames are oriented on each other: 0A6(q) of the robot.
    rng = numpy.random.default_rng(23)
    q = rng.uniform(-3, 3, n)
    values = {k: v for k, v in random_parameters(robot, rng).items()}
    dcm = kane.N.dcm(kane.frames["6"]).xreplace(dict(zip(kane.q, q)))
    dcm = dcm.xreplace({s: values[s.name] for s in dcm.free_symbols if s.name in values})
    T = geometry.numeric_transform(robot, "0", "6", values)(q)
    assert numpy.allclose(numpy.array(dcm.evalf(), dtype=float), T[:3, :3])


# ------------------------------------------------------------ KanesMethod on demand


def cart_pendulum(n, monkeypatch):
    """The cart with an n-link pendulum of benchmarks/kane_vs_newton_euler.py (one generator for both)."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(folder))  # the script imports its sibling needs.py
    spec = importlib.util.spec_from_file_location("benchmark_kane_vs_newton_euler", folder / "kane_vs_newton_euler.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.cart_pendulum(n)


def test_kane_derivation_builds_no_kanes_method(monkeypatch):
    """A plain Kane derivation never constructs sympy's KanesMethod (nor the
    frames and bodies it needs): with the class made to raise, the RX-90's
    models still come out, equal to Newton-Euler's; model.kanes_method then
    builds it on demand."""
    import kanerobot.dynamics.kane.mechanics as mechanics_module  # stage 2 constructs KanesMethod

    def refuse(*args, **kwargs):
        raise AssertionError("KanesMethod constructed by a plain Kane derivation")

    monkeypatch.setattr(mechanics_module, "KanesMethod", refuse)
    robot = library("rx90")
    model = derived("rx90", "kane")
    reference = reference_programs(robot)
    rng = numpy.random.default_rng(37)
    values = state(robot, rng)
    for name, program in reference.items():
        assert_close(evaluate(model.program(name), values), evaluate(program, values), what=f"rx90 {name} without KanesMethod")
    built = model.kane_system.__dict__  # the stages are cached properties: in __dict__ once built
    assert not {"recursion", "mechanics", "kanes_method_models"} & set(built), sorted(built)
    with pytest.raises(AssertionError, match="plain Kane derivation"):
        model.kanes_method  # noqa: B018 -- asked for: built now (and here refused)
    assert "mechanics" not in built and "recursion" in built  # nothing half built is left
    monkeypatch.undo()
    # Available once asked for, after a failed attempt too, and the same object every time.
    km = model.kanes_method
    assert isinstance(km, KanesMethod) and km is model.kane_system.kanes_method and km.mass_matrix.shape == (6, 6)
    assert model.bodies[5].name == "B6" and sorted(model.frames) == ["0", "1", "2", "3", "4", "5", "6"]


def test_kanes_method_on_demand_equals_the_nested_programs():
    """A fresh system: the KanesMethod-read A and GAM (built on demand) equal the nested ones."""
    robot = library("planar2")
    kane = KaneSystem(robot)
    nested = {model: kane.program(model) for model in ("mass_matrix", "inverse_dynamics")}
    assert not {"recursion", "mechanics"} & set(kane.__dict__)
    values = state(robot, numpy.random.default_rng(41))
    for model, program in nested.items():
        assert_close(evaluate(kane.program(model, source="kanes_method"), values), evaluate(program, values), what=f"planar2 {model}")
    assert isinstance(kane.kanes_method, KanesMethod)
    with pytest.raises(AttributeError, match="no attribute 'kanes_methods'"):
        kane.kanes_methods  # noqa: B018  (a misspelt name is not a lazy attribute)


def test_cart_pendulum_kane_equals_newton_euler(monkeypatch):
    """The cart with a 3-link pendulum (the benchmark's robot with 20): Kane's
    models equal Newton-Euler's; the rail is horizontal (no gravity force on
    the cart) and the cart carries every mass (A11 = total mass + rotor)."""
    robot = cart_pendulum(3, monkeypatch)
    assert robot.dof == 4 and [f.sigma for f in robot.frames] == [1, 0, 0, 0]
    kane = KaneSystem(robot)
    reference = reference_programs(robot)
    values = state(robot, numpy.random.default_rng(43))
    for model, program in reference.items():
        assert_close(evaluate(kane.program(model), values), evaluate(program, values), what=f"cart pendulum {model}")
    assert evaluate(kane.program("gravity"), values)["Q1"] == 0
    total = sum(values[f"M{j}"] for j in range(1, 5)) + values["IA1"]
    assert evaluate(kane.program("mass_matrix"), values)["A11"] == pytest.approx(total, rel=1e-12)
    assert not {"recursion", "mechanics"} & set(kane.__dict__)


def test_closed_loops_and_floating_bases_are_refused():
    with pytest.raises(KaneRobotError, match="closed loops"):
        KaneSystem(library("sr400"))
    with pytest.raises(KaneRobotError, match="floating"):
        KaneSystem(dataclasses.replace(library("planar2"), floating=True))


def test_a_massless_link_needs_no_first_moments():
    robot = library("planar2")
    light = Robot.create(robot.name, robot.frames, dynamics={"2": {"M": 0, "MX": 0, "MY": 0, "MZ": 0}})
    kane = KaneSystem(light)
    rng = numpy.random.default_rng(29)
    values = state(light, rng)
    assert_close(evaluate(kane.inverse_dynamics(), values), evaluate(newton_euler.inverse_dynamics(light), values), what="M = 0")
    # No mass: the centre of mass is the origin and the central inertia is XX..ZZ itself.
    body = kane.bodies[1]
    d = light.dynamics["2"]
    J_O = sympy.Matrix([[d["XX"], d["XY"], d["XZ"]], [d["XY"], d["YY"], d["YZ"]], [d["XZ"], d["YZ"], d["ZZ"]]])
    assert body.mass == 0 and body.central_inertia.to_matrix(body.frame) == kane.real(J_O)
    assert body.masscenter.pos_from(kane.origins["2"]) == 0
    with pytest.raises(KaneRobotError, match="M = 0"):
        KaneSystem(Robot.create(robot.name, robot.frames, dynamics={"2": {"M": 0}}))


def test_krang_kane_programs_are_order_n():
    """Kane's A, C and Q of the 17-DOF Krang (naive KanesMethod does not finish):
    the nested programs cost what Newton-Euler's do (timing lives in
    benchmarks/kane_vs_naive.py, not in a test)."""
    from kanerobot.dynamics import composite

    robot = library("krang")
    kane = system(robot)
    ops = {model: kane.program(model).op_count() for model in ("mass_matrix", "coriolis_matrix", "gravity")}
    assert ops["mass_matrix"]["mul"] <= composite.mass_matrix(robot).op_count()["mul"]
    assert ops["gravity"]["mul"] < 400 and ops["coriolis_matrix"]["mul"] < 2 * 6003


@pytest.mark.long
def test_floating_base_speeds_come_first():
    """A floating robot: the base's body-frame twist u_VX0 .. u_WZ0 leads the
    generalized speeds, the base link is a body, and the nested programs serve
    it (the free flyer is link 0's root joint) with KanesMethod's outputs; the
    models themselves are checked against KanesMethod and Newton-Euler in
    tests/test_floating.py."""
    robot = library("satellite")
    kane = KaneSystem(robot)
    assert [str(u.func) for u in kane.u] == ["u_VX0", "u_VY0", "u_VZ0", "u_WX0", "u_WY0", "u_WZ0", "u1", "u2", "u3"]
    assert kane.n == 9 and kane.kanes_method.mass_matrix.shape == (9, 9)
    assert kane.bodies[0].name == "B0"
    # frame 0 turns with the base speeds; O_0 moves with them
    F0 = kane.frames["0"]
    assert kane.frames["0"].ang_vel_in(kane.N) == Vector([(sympy.Matrix(kane.u[3:6]), F0)])
    assert kane.origins["0"].vel(kane.N) == Vector([(sympy.Matrix(kane.u[:3]), F0)])
    A = kane.program("mass_matrix")
    assert A is not kane.program("mass_matrix", source="kanes_method")
    assert list(A.outputs) == list(kane.program("mass_matrix", source="kanes_method").outputs)
    assert list(kane.program("gravity").outputs)[:6] == ["QFX0", "QFY0", "QFZ0", "QCX0", "QCY0", "QCZ0"]
    assert len(kane.program("coriolis_matrix").outputs) == 9 * 9  # getAC plus 1/2 A S (coriolis.half_a_s)
    with pytest.raises(KaneRobotError, match="floating base"):
        kane.rhs_terms()
