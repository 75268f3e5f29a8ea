"""The energy and filtered identification models (SYMORO+ 6.2, 6.3), the regressors
they are built on, the data files and the filters.

Independent checks: the regressor of the identification program against the
Newton-Euler inverse dynamics with unit parameters (the rule of SYMORO+ 6.1,
:func:`unit_regressor` here);
the energy regressor against kanerobot.dynamics.energy; the energy identity
and the filtered model against the torques and motion of kr.simulate.
"""

import numpy as np
import pytest
from conftest import derived, library
from reference_dynamics import unit_regressor

import kanerobot as kr
from kanerobot.control import computed_torque
from kanerobot.dynamics import energy
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.identification import filtering
from kanerobot.identification.base_parameters import base_parameter_set
from kanerobot.identification.data import DataError, RecordedData, as_recorded, load_data, save_data
from kanerobot.identification.energy_model import energy_model
from kanerobot.identification.excitation import FourierTrajectory
from kanerobot.identification.numeric_regressor import Regressors


def _setup(name, seed=0, friction=True):
    robot = library(name)
    values = random_parameters(robot, np.random.default_rng(seed), friction=friction, wrench=False)
    model = kr.derive(robot)
    fn = model.numeric({k: values[k] for k in model.parameters})
    return robot, values, fn


@pytest.fixture(scope="module")
def rx90():
    robot, values, fn = _setup("rx90", seed=3)
    return robot, values, fn, Regressors(robot, values)


@pytest.fixture(scope="module")
def rx90_unit(rx90):
    robot, values, _fn, regs = rx90
    return unit_regressor(robot, values, regs.parameters)


@pytest.fixture(scope="module")
def rx90_run(rx90):
    """rx90 tracking a Fourier motion by computed torque, with friction, sampled at 1 kHz."""
    _robot, _values, fn, _regs = rx90
    rng = np.random.default_rng(7)
    tr = FourierTrajectory(rng.uniform(-0.5, 0.5, 6), 0.5 * rng.normal(size=(6, 3)), 0.5 * rng.normal(size=(6, 3)), 0.5)
    q0, qd0, _ = tr(0.0)
    t = np.arange(0.0, 1.0 + 1e-9, 1e-3)
    # friction="model": the motion of the model the regressors write, FS sign(qd) included
    run = kr.simulate(fn, None, np.concatenate([q0, qd0]), (0.0, t[-1]), controller=computed_torque(fn, tr), t_eval=t,
                      friction="model", rtol=1e-11, atol=1e-12)
    return run


# ------------------------------------------------------------------ regressors
def test_regressor_equals_newton_euler_with_unit_parameters(rx90, rx90_unit):
    _robot, values, fn, regs = rx90
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-2, 2, (20, 6)) for _ in range(3))
    K = np.array([values[name] for name in regs.parameters])
    tau = fn.inverse_dynamics(q, qd, qdd)
    scale = np.abs(tau).max()
    D, unit = regs.regressor(q, qd, qdd), rx90_unit(q, qd, qdd)
    assert np.abs(unit @ K - tau).max() < 1e-10 * scale
    assert np.abs(D @ K - tau).max() < 1e-10 * scale
    assert np.abs(D - unit).max() < 1e-10 * np.abs(unit).max()  # column by column
    assert regs.parameters == regs.identification.parameters


def test_base_columns_reproduce_the_regressor(rx90, rx90_unit):
    _robot, values, _fn, regs = rx90
    base = regs.base_columns()
    assert regs.base_parameter_set() is regs.base_parameter_set()  # computed once
    assert regs.base_parameter_set().method == "numeric"
    rng = np.random.default_rng(2)
    q, qd, qdd = (rng.uniform(-2, 2, (15, 6)) for _ in range(3))
    D = rx90_unit(q, qd, qdd)
    K = np.array([values[name] for name in regs.parameters])
    assert np.abs(D[:, :, base.columns] @ (base.T @ K) - D @ K).max() < 1e-9 * np.abs(D @ K).max()
    # the count is the rank of the regressor: 40 inertial for the RX-90 plus 12 friction (SYMORO+ regrouping)
    W = D.reshape(-1, len(regs.parameters))
    assert len(base.names) == np.linalg.matrix_rank(W, tol=1e-9 * np.abs(W).max()) == 52
    assert "ZZR1" in base.names and base.names[-12:] == [f"{k}{j}" for j in range(1, 7) for k in ("FV", "FS")]


def test_base_columns_of_the_regressor():
    import dataclasses

    robot = library("planar2")
    robot = dataclasses.replace(robot, base=kr.Base.from_values(G=["G1", 0, 0]))
    geometry = {"L1": 0.7, "G1": -9.81}
    values = dict(random_parameters(robot, np.random.default_rng(1), wrench=False), **geometry)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-2, 2, (12, 2)) for _ in range(3))
    # without rotor inertias: no IA column, IA1 leaves ZZR1 and IA2 (a base parameter of its own) the set
    regs = Regressors(robot, geometry, rotor=False, backend="numpy")
    base = regs.base_columns()
    with_rotor = Regressors(robot, geometry, backend="numpy").base_columns()
    assert "IA1" not in regs.parameters and "IA2" in with_rotor.names
    assert base.names == [name for name in with_rotor.names if name != "IA2"]
    D = unit_regressor(robot, values, regs.parameters)(q, qd, qdd)
    K = np.array([values[name] for name in regs.parameters])
    assert np.abs(D[:, :, base.columns] @ (base.T @ K) - D @ K).max() < 1e-10 * np.abs(D @ K).max()
    # the symbolic set, its geometry bound by the regressor's values, on the same columns
    symbolic = regs.base_columns(base_parameter_set(robot, rotor=False))
    assert np.abs(D[:, :, symbolic.columns] @ (symbolic.T @ K) - D @ K).max() < 1e-10 * np.abs(D @ K).max()
    # a set computed with other options
    with pytest.raises(KaneRobotError, match="differ in FS1, FS2, FV1, FV2: compute it with friction=True, rotor=False"):
        regs.base_columns(base_parameter_set(robot, friction=False, rotor=False))


def test_regressors_need_the_geometric_values():
    robot = library("rx90")
    with pytest.raises(KaneRobotError, match="no value for D3"):
        Regressors(robot, {"RL4": 0.4, "G3": -9.81})


# ------------------------------------------------------------------ energy model
def test_energy_regressor_is_the_total_energy(rx90):
    _robot, values, fn, regs = rx90
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-2, 2, (25, 6)), rng.uniform(-2, 2, (25, 6))
    K = np.array([values[name] for name in regs.parameters])
    H = regs.energy(q, qd) @ K
    E = energy.kinetic_energy(fn, q, qd) + energy.potential_energy(fn, q, values)
    assert np.abs(H - E).max() < 1e-10 * np.abs(E).max()


def test_energy_regressor_follows_eq52_for_a_planar_arm():
    # planar2 with gravity along -x0 (G1): link 2 at angle s = q1 + q2 from x0, origin P2 = L1 (cos q1, sin q1)
    import dataclasses

    robot = library("planar2")
    robot = dataclasses.replace(robot, base=kr.Base.from_values(G=["G1", 0, 0]))
    L1, g = 0.7, -9.81
    regs = Regressors(robot, {"L1": L1, "G1": g}, backend="numpy")
    q, qd = np.array([0.3, -1.1]), np.array([0.8, 1.7])
    h = dict(zip(regs.parameters, regs.energy(q, qd)[0]))
    w2 = qd.sum()
    V2 = L1 * qd[0] * np.array([np.sin(q[1]), np.cos(q[1]), 0.0])  # velocity of O2 in frame 2
    assert h["ZZ1"] == pytest.approx(0.5 * qd[0] ** 2)
    assert h["ZZ2"] == pytest.approx(0.5 * w2**2)
    assert h["XX2"] == h["YY2"] == h["XY2"] == 0.0
    assert h["M2"] == pytest.approx(0.5 * V2 @ V2 - g * L1 * np.cos(q[0]))  # 1/2 V^T V - g.P
    assert h["MX2"] == pytest.approx(w2 * V2[1] - g * np.cos(q.sum()))  # w3 V2 - w2 V3 - g.s2
    assert h["MY2"] == pytest.approx(-w2 * V2[0] + g * np.sin(q.sum()))  # w1 V3 - w3 V1 - g.n2
    assert h["IA2"] == pytest.approx(0.5 * qd[1] ** 2)
    assert h["FV1"] == h["FS2"] == 0.0


def test_energy_identity_holds_along_a_simulated_motion(rx90, rx90_run):
    _robot, values, _fn, regs = rx90
    run = rx90_run
    K = np.array([values[name] for name in regs.parameters])
    W, y = energy_model(regs, run.t, run.q, run.qd, run.tau, window=100)
    assert W.shape == (10, len(K))
    work = np.abs(y).max()
    assert work > 1.0  # the motion does work
    assert np.abs(W @ K - y).max() < 1e-7 * work
    # without the friction columns the balance fails: friction dissipates
    friction = [k for k, name in enumerate(regs.parameters) if name[:2] in ("FV", "FS")]
    K_nf = K.copy()
    K_nf[friction] = 0.0
    assert np.abs(W @ K_nf - y).max() > 1e-3 * work


def test_energy_model_checks_its_intervals(rx90):
    _robot, _values, _fn, regs = rx90
    t = np.linspace(0, 1, 11)
    z = np.zeros((11, 6))
    with pytest.raises(KaneRobotError, match="no interval of 20 steps"):
        energy_model(regs, t, z, z, z, window=20)
    with pytest.raises(KaneRobotError, match="increasing sample indices"):
        energy_model(regs, t, z, z, z, bounds=[0, 5, 3])


# ------------------------------------------------------------------ filtered model
def test_lagrange_form_gives_the_torques(rx90):
    _robot, values, fn, regs = rx90
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (10, 6)) for _ in range(3))
    K = np.array([values[name] for name in regs.parameters])
    e = 1e-6  # d/dt D1 along the motion, central difference
    D1p, _ = regs.lagrangian(q + e * qd, qd + e * qdd)
    D1m, _ = regs.lagrangian(q - e * qd, qd - e * qdd)
    _, D2 = regs.lagrangian(q, qd)
    tau = fn.inverse_dynamics(q, qd, qdd)
    assert np.abs(((D1p - D1m) / (2 * e) + D2) @ K - tau).max() < 1e-7 * np.abs(tau).max()


def test_filtered_model_equals_the_filtered_torque(rx90, rx90_run):
    _robot, values, _fn, regs = rx90
    run = rx90_run
    K = np.array([values[name] for name in regs.parameters])
    a = 60.0
    W, tau_f = filtering.filtered_model(regs, run.t, run.q, run.qd, a, tau=run.tau)
    settled = slice(int(10 / (a * 1e-3)), None)
    error = np.abs(W @ K - tau_f)[settled].max() / np.abs(tau_f[settled]).max()
    assert error < 1e-4
    # the filtered torque is the torque, delayed and smoothed: they differ
    assert np.abs(tau_f - run.tau)[settled].max() > 1e-2 * np.abs(run.tau).max()


def test_second_order_filters_match_their_transfer_functions():
    dt, a, w = 1e-3, 40.0, 7.0
    t = np.arange(0.0, 3.0, dt)
    x = np.sin(w * t)
    F = a**2 / (1j * w + a) ** 2
    steady = t > 1.5
    y = filtering.second_order_filter(x, dt, a)
    np.testing.assert_allclose(y[steady], np.abs(F) * np.sin(w * t[steady] + np.angle(F)), atol=1e-4)
    yd = filtering.second_order_filter(x, dt, a, derivative=True)
    Fd = F * 1j * w
    np.testing.assert_allclose(yd[steady], np.abs(Fd) * np.sin(w * t[steady] + np.angle(Fd)), atol=1e-3)


def test_derivatives_decimation_and_uniform_sampling():
    dt = 2e-3
    t = np.arange(0.0, 2.0, dt)
    q = np.column_stack([np.sin(3 * t), np.cos(2 * t)])
    rng = np.random.default_rng(0)
    noisy = q + 1e-5 * rng.normal(size=q.shape)
    _qf, qd, qdd = filtering.derivatives(noisy, dt, cutoff=15.0)
    inner = slice(100, -100)
    np.testing.assert_allclose(qd[inner, 0], 3 * np.cos(3 * t[inner]), atol=2e-3)
    np.testing.assert_allclose(qdd[inner, 1], -4 * np.cos(2 * t[inner]), atol=5e-2)
    d = filtering.decimate(q, 5)
    assert d.shape == (200, 2)
    np.testing.assert_allclose(d[20:-20], q[::5][20:-20], atol=2e-5)  # flat pass band (no 1 % ripple), zero phase
    with pytest.raises(DataError, match="not uniform at sample 3"):
        filtering.check_uniform([0.0, 0.1, 0.2, 0.35, 0.4])
    with pytest.raises(KaneRobotError, match="Nyquist"):
        filtering.lowpass(q, dt, 300.0)


# ------------------------------------------------------------------ data files
def _recording():
    t = np.linspace(0.0, 1.0, 21)
    return RecordedData(t, np.column_stack([t, t**2]), np.column_stack([np.cos(t), np.sin(t)]), joints=("1", "2"))


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_recordings_round_trip(tmp_path, suffix):
    data = _recording()
    path = save_data(data, tmp_path / f"run{suffix}")
    back = load_data(path)
    np.testing.assert_array_equal(back.t, data.t)
    np.testing.assert_array_equal(back.q, data.q)
    np.testing.assert_array_equal(back.tau, data.tau)
    assert back.joints == ("1", "2") and back.qd is None
    assert not list(tmp_path.glob(".*tmp"))  # nothing left half-written


def test_simulation_csv_reads_as_a_recording(tmp_path):
    robot = library("planar2")
    values = random_parameters(robot, np.random.default_rng(0), friction=False, wrench=False)
    run = kr.simulate(derived("planar2"), values, [0.2, 0.1, 0.0, 0.0], (0.0, 0.2), t_eval=np.linspace(0, 0.2, 11), backend="numpy")
    data = load_data(run.save(tmp_path / "run.csv"))
    np.testing.assert_allclose(data.q, run.q, rtol=1e-15)
    assert data.qd is not None and data.qdd is not None  # the simulation's columns are read too
    assert as_recorded(data, robot).joints == robot.joint_labels


def test_csv_mistakes_are_named_with_their_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("t,q_1,q_2,tau_1\n0,0,0,0\n")
    with pytest.raises(DataError, match=r"bad.csv:1: tau_<joint> columns \(1\) do not match the q_<joint> columns \(1, 2\)"):
        load_data(path)
    path.write_text("t,q_1,tau_1\n0,0,0\n0.1,abc,0\n")
    with pytest.raises(DataError, match=r"bad.csv:3: 'abc' is not a number"):
        load_data(path)
    path.write_text("t,q_1,tau_1\n0,0,0\n0.1,0,0\n0.1,0,0\n")
    with pytest.raises(DataError, match=r"bad.csv:4: time does not increase"):
        load_data(path)
    path.write_text("time,q_1,tau_1\n0,0,0\n")
    with pytest.raises(DataError, match=r"bad.csv:1: no column 't'"):
        load_data(path)
    path.write_text("t,q_1,tau_1\n0,0,0\n0.1,0\n")
    with pytest.raises(DataError, match=r"bad.csv:3: 2 values for 3 columns"):
        load_data(path)
    with pytest.raises(DataError, match="no such file"):
        load_data(tmp_path / "none.csv")


def test_recording_must_match_the_robot(tmp_path):
    robot = library("rx90")
    with pytest.raises(DataError, match=rf"2 joint column\(s\) \(1, 2\) but robot {robot.name} has 6 joints \(1, 2, 3, 4, 5, 6\)"):
        as_recorded(_recording(), robot)
    np.savez(tmp_path / "x.npz", t=np.arange(3.0), q=np.zeros((3, 2)))
    with pytest.raises(DataError, match="no array tau"):
        load_data(tmp_path / "x.npz")
    with pytest.raises(DataError, match="q is not finite at sample 1"):
        RecordedData([0.0, 1.0], [[0.0], [np.nan]], [[0.0], [0.0]])
