"""Energies of kanerobot.dynamics.energy: against the Lagrange engine's own
energies, closed forms, the wheeled model's potential, and the power balance
dE/dt = qd . (tau - friction) along the motion of every kind of model."""

import dataclasses

import numpy as np
import pytest
import sympy
from conftest import derived, library, plate_robot, tree_robot

import kanerobot as kr
from kanerobot.dynamics import energy, lagrange
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Frame, KKPlacement, Robot


def lagrange_energies(robot, values, q, qd):
    """(T, U) of the Lagrange engine's energy program."""
    program = lagrange.energy(robot)
    f = program.to_function()
    state = dict(zip(map(str, robot.q), q)) | dict(zip(map(str, robot.qd), qd))
    args = [state.get(str(s), values.get(str(s), 0.0)) for s in f.args]
    out = np.asarray(f(*args), dtype=float).reshape(-1)
    outputs = list(program.outputs)
    return out[outputs.index("T")], out[outputs.index("U")]


@pytest.mark.parametrize("name", ["rx90", "planar2", "stanford"])
def test_energies_match_the_lagrange_engine(name):
    robot = library(name)
    rng = np.random.default_rng(5)
    values = random_parameters(robot, rng, wrench=False)
    fn = kr.derive(robot).numeric(values, backend="numpy")
    for _ in range(3):
        q, qd = rng.uniform(-2, 2, (2, robot.nj))
        T, U = lagrange_energies(robot, values, q, qd)
        assert energy.kinetic_energy(fn, q, qd) == pytest.approx(T, rel=1e-10, abs=1e-12)
        # Symbols no model needs (a mass turning about the vertical) shift U by a constant: give them.
        assert energy.gravity_energy(fn, q, values=values) == pytest.approx(U, rel=1e-10, abs=1e-12)


def test_energies_of_a_tree_with_a_fixed_frame_carrying_a_link():
    for robot in (tree_robot(), plate_robot()):
        rng = np.random.default_rng(2)
        values = random_parameters(robot, rng, wrench=False)
        fn = kr.derive(robot).numeric(values, backend="numpy")
        q, qd = rng.uniform(-1, 1, (2, robot.nj))
        T, U = lagrange_energies(robot, values, q, qd)
        assert energy.kinetic_energy(fn, q, qd) == pytest.approx(T, rel=1e-10)
        assert energy.gravity_energy(fn, q, values=values) == pytest.approx(U, rel=1e-10, abs=1e-12)


def pendulum(G=("G1", 0, 0)):
    th1 = sympy.Symbol("th1")
    return Robot.create("pendulum", [Frame("1", "0", 0, 1, KKPlacement(theta=th1))], base=kr.Base.from_values(G=list(G)))


def test_pendulum_closed_form():
    """A compound pendulum hanging along x0: T = 1/2 J qd^2, U = -m g l cos(q)."""
    robot = pendulum()
    model = kr.derive(robot)
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(ZZ1=0.7, MX1=1.3, G1=9.81, IA1=0.2)
    fn = model.numeric(values, backend="numpy")
    q = np.linspace(-3, 3, 7)[:, None]
    qd = np.linspace(-2, 2, 7)[:, None]
    np.testing.assert_allclose(energy.kinetic_energy(fn, q, qd), 0.5 * (0.7 + 0.2) * qd[:, 0] ** 2, rtol=1e-12)
    np.testing.assert_allclose(energy.gravity_energy(fn, q), -1.3 * 9.81 * np.cos(q[:, 0]), rtol=1e-12, atol=1e-12)
    com = energy.centres_of_mass(fn, q, values={"M1": 2.0})["1"]
    np.testing.assert_allclose(com, np.column_stack([np.cos(q[:, 0]), np.sin(q[:, 0]), 0 * q[:, 0]]) * 1.3 / 2.0, atol=1e-12)
    assert energy.elastic_energy(fn, q).tolist() == [0.0] * 7


def test_wheeled_energies_match_the_wheeled_model():
    robot = library("diffdrive")
    rng = np.random.default_rng(4)
    values = random_parameters(robot, rng, wrench=False)
    fn = derived("diffdrive").numeric(values, backend="numpy")
    q = rng.uniform(-1, 1, (5, fn.n))
    qa = rng.uniform(-1, 1, (5, fn.m))
    np.testing.assert_allclose(energy.gravity_energy(fn, q), fn.potential_energy(q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(energy.kinetic_energy(fn, q, qa), fn.kinetic_energy(q, qa), rtol=1e-12)


def flow(fn, q, qd, tau):
    """(qdot, qdd) of the model's direct dynamics."""
    from kanerobot.simulation import plant

    p = plant(fn)
    q = p.prepare(np.asarray(q, dtype=float))
    return p.qdot(q, qd), np.asarray(fn.direct_dynamics(q, qd, tau), dtype=float)


def check_power_balance(fn, q, qd, tau, h=1e-5, rtol=1e-6):
    """dE/dt by central differences along the flow equals power(fn, q, qd, tau)."""
    from kanerobot.simulation import plant

    p = plant(fn)
    qdot, qdd = flow(fn, q, qd, tau)
    E = lambda s: energy.total_energy(fn, p.prepare(q + s * qdot), qd + s * qdd)  # noqa: E731
    numeric = (E(h) - E(-h)) / (2 * h)
    P = energy.power(fn, q, qd, tau)
    scale = abs(P) + np.abs(qd).max() * np.abs(tau).max() + 1.0
    assert abs(numeric - P) < rtol * scale, (numeric, P)
    return P


def test_power_balance_fixed_base_with_friction():
    robot = library("rx90")
    rng = np.random.default_rng(11)
    values = random_parameters(robot, rng, wrench=False)
    fn = derived("rx90").numeric(values, backend="numpy")
    for _ in range(3):
        q, qd, tau = rng.uniform(-1, 1, (3, 6))
        check_power_balance(fn, q, qd, tau)
    rates, f = energy.friction_torques(fn, q, qd)
    FV = np.array([values[f"FV{j}"] for j in range(1, 7)])
    FS = np.array([values[f"FS{j}"] for j in range(1, 7)])
    np.testing.assert_allclose(f, FV * qd + FS * np.sign(qd))
    np.testing.assert_allclose(rates, qd)


def test_power_balance_closed_loop():
    robot = library("fourbar")
    robot = dataclasses.replace(robot, base=kr.Base.from_values(G=[0, "G2", 0]))  # gravity in the plane
    rng = np.random.default_rng(3)
    fn = kr.derive(robot).numeric(random_parameters(robot, rng, wrench=False), backend="numpy")
    q = fn.configuration([0.7], guess=[-0.7, 0.7, -0.7])
    P = check_power_balance(fn, q, np.array([0.8]), np.array([0.3]))
    rates, _ = energy.friction_torques(fn, q, [0.8])
    assert rates.shape == (4,)  # friction on every joint of the loop
    assert P != 0


def test_power_balance_flexible_joints():
    robot = library("planar2flex")
    rng = np.random.default_rng(8)
    values = random_parameters(robot, rng, wrench=False)
    for method in ("newton-euler", "kane"):
        fn = derived("planar2flex", method).numeric(values, backend="numpy")
        z, zd = rng.uniform(-0.5, 0.5, (2, 4))
        tau = rng.uniform(-1, 1, 2)
        check_power_balance(fn, z, zd, tau)
        k1 = values["k1"]
        assert energy.elastic_energy(fn, [0.1, 0.0, 0.3, 0.0]) == pytest.approx(0.5 * k1 * 0.2**2)


def test_power_balance_floating_base():
    robot = library("satellite")
    rng = np.random.default_rng(9)
    values = random_parameters(robot, rng, wrench=False)  # gravity, friction
    fn = derived("satellite").numeric(values, backend="numpy")
    q = np.concatenate([rng.uniform(-1, 1, 3), [0.1, -0.2, 0.3, 0.9] / np.linalg.norm([0.1, -0.2, 0.3, 0.9]), rng.uniform(-1, 1, 3)])
    qd = rng.uniform(-1, 1, 9)
    check_power_balance(fn, q, qd, rng.uniform(-1, 1, 3))
    # Gravity on the whole robot: U = -g . (sum M) x_G, which moves with the base.
    shifted = q.copy()
    shifted[:3] += [1.0, 2.0, 3.0]
    mass = sum(values[f"M{j}"] for j in range(4))
    g = np.array([values["G1"], values["G2"], values["G3"]])
    assert energy.gravity_energy(fn, shifted) - energy.gravity_energy(fn, q) == pytest.approx(-mass * g @ [1.0, 2.0, 3.0])


def test_power_balance_wheeled_base():
    robot = library("diffdrive")
    rng = np.random.default_rng(6)
    fn = derived("diffdrive").numeric(random_parameters(robot, rng, wrench=False), backend="numpy")
    q = rng.uniform(-1, 1, fn.n)
    check_power_balance(fn, q, rng.uniform(-1, 1, fn.m), rng.uniform(-1, 1, fn.m))


def test_batches_and_errors():
    robot = library("planar2")
    fn = derived("planar2").numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    q, qd = np.zeros((4, 2)), np.ones((4, 2))
    assert energy.total_energy(fn, q, qd).shape == (4,)
    assert isinstance(energy.kinetic_energy(fn, q[0], qd[0]), float)
    with pytest.raises(KaneRobotError, match=r"q must have 2 values \(joints 1, 2\)"):
        energy.kinetic_energy(fn, [0.0], [0.0, 0.0])
    with pytest.raises(KaneRobotError, match="tau must have 2 values"):
        energy.power(fn, [0, 0], [0, 0], [1.0])
    with pytest.raises(KaneRobotError, match="no energy for"):
        energy.kinetic_energy(object(), [0.0], [0.0])
