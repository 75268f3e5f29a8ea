"""Newton-Euler inverse dynamics, checked against an independent spatial-vector
RNEA (tests/reference_dynamics.py) on random physically consistent
parameters (:mod:`kanerobot.dynamics.parameters`) and random states, and
against OpenSYMORO's RX-90 output."""

import dataclasses
import functools

import numpy
import pytest
import sympy
from conftest import assert_close, library, opensymoro_equations, program_function, tree_robot
from reference_dynamics import ReferenceModel, mass_matrix_by_unit_accelerations

from kanerobot.dynamics.newton_euler import coriolis_gravity, gravity_torques, inverse_dynamics
from kanerobot.dynamics.parameters import INERTIA_NAMES, is_physically_consistent, random_link, random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import WRENCH_NAMES, Base, Robot
from kanerobot.robot.expressions import parse_expression

FLAGS = ("qd", "qdd", "gravity", "friction", "rotor", "wrench")


# ------------------------------------------------------------------ robots
def with_wrench(robot):
    """The robot with a symbolic wrench FX<j> .. CZ<j> on every link."""
    dynamics = {label: dict(robot.dynamics[label]) for label in robot.links}
    for label in robot.links:
        dynamics[label].update({name: f"{name}{label}" for name in WRENCH_NAMES})
    return Robot.create(
        robot.name,
        robot.frames,
        links=robot.links,
        dynamics=dynamics,
        joint_parameters={label: dict(v) for label, v in robot.joint_parameters.items()},
        base=robot.base,
    )


def moving(robot):
    """The robot on a base with symbolic W0, WP0, V0, VP0 and a general gravity G."""
    base = Base.from_values(
        W0=["W01", "W02", "W03"],
        WP0=["WP01", "WP02", "WP03"],
        V0=["V01", "V02", "V03"],
        VP0=["VP01", "VP02", "VP03"],
        G=["G1", "G2", "G3"],
    )
    return dataclasses.replace(robot, base=base)


@functools.cache
def robot(name):
    if name == "tree":
        # the tree of conftest.py, its fixed frame 7 carrying a link (a tool)
        return with_wrench(tree_robot(links=["1", "2", "3", "4", "5", "6", "7"]))
    loaded = library(name)
    if name == "rx90":
        return loaded  # the wrench of frames/rx90.par is on link 6, as in OpenSYMORO
    return with_wrench(loaded)


@functools.cache
def moving_robot(name):
    return moving(robot(name))


@functools.cache
def idm(name, base="fixed", **flags):
    r = robot(name) if base == "fixed" else moving_robot(name)
    return inverse_dynamics(r, **flags)


# ----------------------------------------------------------------- helpers
def states(robot, rng, count=3):
    n = robot.nj
    for _ in range(count):
        yield rng.uniform(-numpy.pi, numpy.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)


def evaluate(program, robot, values, q, qd, qdd):
    """The program's outputs at one state, by Program.to_function."""
    numbers = dict(values)
    for symbols, x in ((robot.q, q), (robot.qd, qd), (robot.qdd, qdd)):
        numbers.update({s.name: float(v) for s, v in zip(symbols, x) if isinstance(s, sympy.Symbol)})
    function = program_function(program)
    return numpy.asarray(function(*[numbers[s.name] for s in function.args]), dtype=float)


# ------------------------------------------------ agreement with the reference
@pytest.mark.parametrize("name", ["rx90", "stanford", "puma560", "krang", "tree"])
def test_inverse_dynamics_matches_reference(name, rng):
    r = robot(name)
    program = idm(name)
    assert list(program.outputs) == [f"GAM{label}" for label in r.joint_labels]
    values = random_parameters(r, rng)
    reference = ReferenceModel(r, values)
    for q, qd, qdd in states(r, rng):
        assert_close(evaluate(program, r, values, q, qd, qdd), reference.inverse_dynamics(q, qd, qdd))


@pytest.mark.parametrize("name", ["rx90", "krang", "tree"])
def test_moving_base_matches_reference(name, rng):
    r = moving_robot(name)
    program = idm(name, base="moving")
    assert not any(s.name.startswith("V0") for s in program.inputs)  # V0 is not needed
    values = random_parameters(r, rng, gravity=(2.0, -3.0, -9.0))  # G1 .. G3 in the file: a direction that tests all three
    assert all(values[k] != 0 for k in ("W01", "WP02", "VP03", "V01", "G1"))
    reference = ReferenceModel(r, values)
    for q, qd, qdd in states(r, rng):
        assert_close(evaluate(program, r, values, q, qd, qdd), reference.inverse_dynamics(q, qd, qdd))


@pytest.mark.parametrize("off", FLAGS)
@pytest.mark.parametrize("name", ["puma560", "tree"])
@pytest.mark.long
def test_each_term_can_be_dropped(name, off, rng):
    r = moving_robot(name) if name == "tree" else robot(name)
    program = inverse_dynamics(r, **{off: False})
    values = random_parameters(r, rng)
    reference = ReferenceModel(r, values)
    for q, qd, qdd in states(r, rng, count=2):
        qd = numpy.zeros_like(qd) if off == "qd" else qd
        qdd = numpy.zeros_like(qdd) if off == "qdd" else qdd
        options = {k: False for k in ("gravity", "friction", "rotor", "wrench") if k == off}
        expected = reference.inverse_dynamics(q, qd, qdd, **options)
        assert_close(evaluate(program, r, values, q, qd, qdd), expected)
    names = {s.name for s in program.inputs}
    dropped = {"qd": "QP1", "qdd": "QDP1", "gravity": "G3", "friction": "FV1", "rotor": "IA1", "wrench": "FX1"}[off]
    assert dropped not in names


def test_customized_joint_values_from_the_robot(rng):
    """QP and QDP values given in the description (here 0 and 1) are used as such."""
    r = robot("puma560")
    joint_parameters = {label: dict(v) for label, v in r.joint_parameters.items()}
    joint_parameters["2"]["QP"] = 0
    joint_parameters["3"]["QDP"] = 1
    dynamics = {label: dict(v) for label, v in r.dynamics.items()}
    custom = Robot.create(r.name, r.frames, links=r.links, dynamics=dynamics, joint_parameters=joint_parameters, base=r.base)
    program = inverse_dynamics(custom)
    assert not {"QP2", "QDP3"} & {s.name for s in program.inputs}
    values = random_parameters(custom, rng)
    q, qd, qdd = next(states(custom, rng))
    qd[1], qdd[2] = 0.0, 1.0
    expected = ReferenceModel(custom, values).inverse_dynamics(q, qd, qdd)
    assert_close(evaluate(program, custom, values, q, qd, qdd), expected)


# ----------------------------------------------------- H and Q specialisations
@pytest.mark.parametrize("name", ["rx90", "krang", "tree"])
def test_coriolis_gravity_is_the_model_at_zero_acceleration(name, rng):
    r = robot(name)
    H = coriolis_gravity(r)
    assert list(H.outputs) == [f"GAM{label}" for label in r.joint_labels]
    assert not {"IA1", "QDP1"} & {s.name for s in H.inputs}
    values = random_parameters(r, rng)
    reference = ReferenceModel(r, values)
    for q, qd, qdd in states(r, rng, count=2):
        zero = numpy.zeros_like(qdd)
        h = evaluate(H, r, values, q, qd, qdd)
        assert_close(h, evaluate(idm(name), r, values, q, qd, zero))
        assert_close(h, reference.inverse_dynamics(q, qd, zero))
        # GAM = A qdd + H, the rotor inertias on the diagonal of A
        A = reference.mass_matrix(q)
        assert_close(evaluate(idm(name), r, values, q, qd, qdd), A @ qdd + h)


@pytest.mark.parametrize("name", ["rx90", "stanford", "krang", "tree"])
def test_gravity_torques(name, rng):
    r = robot(name)
    Q = gravity_torques(r)
    assert list(Q.outputs) == [f"Q{label}" for label in r.joint_labels]
    assert not {s.name for s in Q.inputs} & {"QP1", "QDP1", "FV1", "FS1", "IA1", "FX1"}
    values = random_parameters(r, rng)
    reference = ReferenceModel(r, values)
    for q, qd, qdd in states(r, rng, count=2):
        zero = numpy.zeros_like(q)
        expected = reference.inverse_dynamics(q, zero, zero, friction=False, wrench=False)
        assert_close(evaluate(Q, r, values, q, qd, qdd), expected)


# ------------------------------------------------------------- cost and layout
def test_rx90_operation_counts():
    rx90 = robot("rx90")
    counts = inverse_dynamics(rx90).op_count()
    print("RX-90 inverse dynamics:", counts)
    assert counts["mul"] <= 378 and counts["add"] <= 329
    assert counts["fn"] == 16  # C2..C6, S2..S6 (link 1 turns about the gravity axis) and 6 sign
    # Without gravity, what OpenSYMORO's RX90_idm.txt reaches (343 multiplications, 300 additions).
    counts = inverse_dynamics(rx90, gravity=False).op_count()
    assert counts["mul"] <= 343 and counts["add"] <= 300
    ccg, gravity = coriolis_gravity(rx90).op_count(), gravity_torques(rx90).op_count()
    print("RX-90 Coriolis, centrifugal, gravity and friction:", ccg, "gravity:", gravity)
    assert ccg["mul"] <= 332 and ccg["add"] <= 281
    assert gravity["mul"] <= 89 and gravity["add"] <= 57 and gravity["fn"] == 10


@pytest.mark.parametrize("model, filename", [(inverse_dynamics, "RX90_idm.txt"), (coriolis_gravity, "RX90_ccg.txt")])
def test_rx90_agrees_with_opensymoro(model, filename, rng):
    """OpenSYMORO's RX-90 files leave out gravity: without it, every
    equation of the plain program is one of theirs, and the torques agree."""
    equations = opensymoro_equations(filename)
    rx90 = robot("rx90")
    program = model(rx90, gravity=False, trig=False)
    theirs = {f"{name} = {expr}" for name, expr in equations}
    assert [line for line in str(program).splitlines() if line not in theirs] == []
    values = random_parameters(rx90, rng)
    q, qd, qdd = next(states(rx90, rng))
    point = {sympy.Symbol(k): v for k, v in values.items()}
    for symbols, x in ((rx90.q, q), (rx90.qd, qd), (rx90.qdd, qdd)):
        point.update(zip(symbols, x))
    for name, expr in equations:
        point[sympy.Symbol(name)] = float(parse_expression(expr).xreplace(point))
    gam = [point[sympy.Symbol(f"GAM{label}")] for label in rx90.joint_labels]
    assert_close(evaluate(program, rx90, values, q, qd, qdd), gam)


def test_krang_tree_has_one_torque_per_joint():
    program = inverse_dynamics(library("krang"))
    assert list(program.outputs) == [f"GAM{label}" for label in library("krang").joint_labels]


def test_trig_option_keeps_the_cheaper_form():
    rx90 = robot("rx90")
    for model in (inverse_dynamics, coriolis_gravity):
        with_rules, plain = model(rx90), model(rx90, trig=False)
        assert sum(with_rules.op_count().values()) <= sum(plain.op_count().values())


def test_inputs():
    rx90 = robot("rx90")
    inputs = [s.name for s in inverse_dynamics(rx90).inputs]
    assert inputs[:18] == [f"{name}{k}" for name in ("th", "QP", "QDP") for k in range(1, 7)]
    assert inputs[18:20] == ["D3", "RL4"]
    assert inputs[20:31] == ["XX1", "XY1", "XZ1", "YY1", "YZ1", "ZZ1", "MX1", "MY1", "MZ1", "M1", "IA1"]
    assert inputs[-1] == "G3"
    plain = [s.name for s in inverse_dynamics(rx90, qd=False, qdd=False, gravity=False, rotor=False).inputs]
    assert not [n for n in plain if n.startswith(("QP", "QDP", "IA", "G"))]


# ------------------------------------------------------------------ errors
def test_structures_of_other_algorithms_are_refused():
    with pytest.raises(KaneRobotError, match="closed loops"):
        inverse_dynamics(library("sr400"))
    arm = library("planar2")
    # a floating base is the free-flyer root joint of the same recursion: its six forces come first
    floating = Robot.create(arm.name, arm.frames, floating=True)
    assert list(inverse_dynamics(floating).outputs)[:7] == ["GAMFX0", "GAMFY0", "GAMFZ0", "GAMCX0", "GAMCY0", "GAMCZ0", "GAM1"]
    wheeled = Robot.create(arm.name, arm.frames, wheeled=True)
    with pytest.raises(KaneRobotError, match="wheeled"):
        coriolis_gravity(wheeled)
    flexible = Robot.create(arm.name, arm.frames, joint_parameters={"2": {"eta": 1}})
    with pytest.raises(KaneRobotError, match="flexible joints \\(2\\)"):
        gravity_torques(flexible)


# ------------------------------------ the parameter generator and the reference
def test_random_parameters_are_physically_consistent(rng):
    for _ in range(20):
        assert is_physically_consistent(random_link(rng))
    r = robot("krang")
    values = random_parameters(r, rng)
    for label in r.links:
        assert is_physically_consistent({name: values[str(r.dynamics[label][name])] for name in INERTIA_NAMES})


@pytest.mark.parametrize("name", ["rx90", "tree"])
def test_mass_matrix_by_unit_accelerations(name, rng):
    r = robot(name)
    values = random_parameters(r, rng)
    q = rng.uniform(-numpy.pi, numpy.pi, r.nj)
    A = mass_matrix_by_unit_accelerations(r, values, q)
    numpy.testing.assert_allclose(A, A.T, atol=1e-12)
    assert numpy.linalg.eigvalsh(A)[0] > 0
    # the same columns from the symbolic model customized to qd = 0, no gravity, friction nor wrench
    program = inverse_dynamics(r, qd=False, gravity=False, friction=False, wrench=False)
    columns = [evaluate(program, r, values, q, 0 * q, e) for e in numpy.eye(r.nj)]
    assert_close(numpy.array(columns).T, A)
