"""kr.identify end to end: a simulated robot with known parameters, torque noise,
least squares, standard deviations, physical consistency, files and command line.

The truth is the random physically consistent parameters the simulation ran
with, mapped to base parameters by the base parameter set's relations
(``base.matrix``); predictions are checked against the Newton-Euler inverse
dynamics on a fresh trajectory, and the observation matrix against the
unit-parameter rule (:func:`unit_regressor`).
"""

import dataclasses
import tomllib

import numpy as np
import pytest
from conftest import derived, library
from reference_dynamics import unit_regressor

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.control import computed_torque
from kanerobot.dynamics.parameters import is_physically_consistent, random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.identification.data import DataError, RecordedData, save_data
from kanerobot.identification.excitation import FourierTrajectory, fourier_excitation
from kanerobot.identification.identify import identify
from kanerobot.identification.numeric_regressor import Regressors
from kanerobot.identification.regressor import identification_model


def planar_with_gravity():
    """planar2 with gravity in its plane (along -x0), so that first moments matter."""
    robot = library("planar2")
    return dataclasses.replace(robot, base=kr.Base.from_values(G=["G1", 0, 0]))


def truth(robot, seed):
    values = random_parameters(robot, np.random.default_rng(seed), wrench=False)
    values["G1"] = -9.81
    model = kr.derive(robot)
    return values, model.numeric({k: values[k] for k in model.parameters})


def fresh_error(result, fn, n, seed):
    """Relative RMS error (%) of the identified model's torques on a new motion."""
    rng = np.random.default_rng(seed)
    tr = FourierTrajectory(rng.uniform(-0.5, 0.5, n), 0.6 * rng.normal(size=(n, 3)), 0.6 * rng.normal(size=(n, 3)), 0.3)
    q, qd, qdd = tr.sample(np.linspace(0.0, 3.0, 400))
    true = fn.inverse_dynamics(q, qd, qdd)
    return 100 * np.linalg.norm(result.predict(q, qd, qdd) - true) / np.linalg.norm(true)


def base_truth(result, values):
    """``K_b = T K`` of the true standard parameters, by the base parameter set's own relations."""
    base = result.base
    T = base.matrix(result.regressors.bound_values)
    assert [name for name in base.names if name in result.names] == result.names
    rows = [base.names.index(name) for name in result.names]
    return T[rows] @ np.array([values[name] for name in base.parameters])


@pytest.fixture(scope="module")
def planar():
    robot = planar_with_gravity()
    values, fn = truth(robot, seed=11)
    regs = Regressors(robot, values)
    return robot, values, fn, regs


@pytest.fixture(scope="module")
def recording(planar):
    """Two periods of an optimised Fourier excitation tracked by computed torque, 200 Hz, 1 % torque noise."""
    robot, _values, fn, regs = planar
    tr = fourier_excitation(regs, harmonics=4, frequency=0.2, maxiter=40).trajectory
    q0, qd0, _ = tr(0.0)
    t = np.arange(0.0, 2 * tr.period, 0.005)
    run = kr.simulate(fn, None, np.concatenate([q0, qd0]), (0.0, t[-1]), controller=computed_torque(fn, tr), t_eval=t)
    rng = np.random.default_rng(3)
    noise = 0.01 * np.sqrt(np.mean(run.tau**2, axis=0)) * rng.normal(size=run.tau.shape)
    return RecordedData(run.t, run.q, run.tau + noise, joints=robot.joint_labels)


@pytest.mark.parametrize("method", ["ls", "wls"])
def test_simulated_identification_meets_the_acceptance(planar, recording, method):
    robot, values, fn, regs = planar
    result = identify(regs, recording, method=method)
    true = base_truth(result, values)
    error = 100 * np.abs(result.values - true) / np.abs(true)
    well = np.array([result.relative_std[name] for name in result.names]) < 1.0
    assert well.sum() >= len(result.names) - 2  # all but the small friction of joint 2 (FV2, FS2: %std 2-6)
    assert error[well].max() < 2.0, dict(zip(result.names, error.round(3)))
    assert fresh_error(result, fn, robot.dof, seed=21) < 3.0
    assert result.condition_number < 100
    assert result.rows == 2 * (len(recording) - 4)  # two trimmed samples at each end


def test_noise_free_data_give_the_base_parameters_exactly(planar):
    _robot, values, fn, regs = planar
    rng = np.random.default_rng(4)
    tr = FourierTrajectory([0.2, -0.3], rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), 0.25)
    t = np.arange(0.0, 4.0, 1e-3)
    q, qd, qdd = tr.sample(t)
    data = {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": fn.inverse_dynamics(q, qd, qdd)}
    exact = identify(regs, data)
    true = base_truth(exact, values)
    np.testing.assert_allclose(exact.values, true, rtol=1e-8)
    assert exact.relative_residual < 1e-10
    # no acceleration: the energy and filtered models, to their discretisation
    energy = identify(regs, data, form="energy", window=50)
    np.testing.assert_allclose(energy.values, true, rtol=1e-6)
    filtered = identify(regs, data, form="filtered", bandwidth=40.0)
    np.testing.assert_allclose(filtered.values, true, rtol=1e-4)


def test_standard_deviations_match_the_scatter_of_repeated_experiments(planar):
    _robot, _values, fn, regs = planar
    rng = np.random.default_rng(5)
    tr = FourierTrajectory([0.0, 0.0], rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), 0.5)
    t = np.arange(0.0, 2.0, 0.01)
    q, qd, qdd = tr.sample(t)
    tau = fn.inverse_dynamics(q, qd, qdd)
    estimates, predicted = [], []
    for _ in range(40):
        noisy = tau + 0.05 * rng.normal(size=tau.shape)
        result = identify(regs, {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": noisy})
        estimates.append(result.values)
        predicted.append([result.std[name] for name in result.names])
    ratio = np.std(estimates, axis=0, ddof=1) / np.mean(predicted, axis=0)
    assert np.all((ratio > 0.6) & (ratio < 1.5)), ratio


def test_covariance_and_condition_number_by_the_textbook_formulas(planar, recording):
    robot, values, _fn, regs = planar
    result = identify(regs, recording, cutoff=20.0)
    # the observation matrix again, by the unit-parameter regressor on the same filtered motion
    from kanerobot.identification.filtering import derivatives

    q, qd, qdd = derivatives(recording.q, 0.005, cutoff=20.0, accuracy=4)  # low-passed: five-point stencils
    ends = slice(result.options["trim"], -result.options["trim"])  # 3 / cutoff seconds at each end: filtfilt's transients
    assert result.options["trim"] == 30
    W = unit_regressor(robot, values, regs.parameters)(q, qd, qdd)[ends][:, :, result.columns]
    y = recording.tau[ends]
    A = W.transpose(1, 0, 2).reshape(-1, len(result.names))
    b = y.T.reshape(-1)
    x = np.linalg.solve(A.T @ A, A.T @ b)
    sigma2 = np.sum((b - A @ x) ** 2) / (A.shape[0] - A.shape[1])
    C = sigma2 * np.linalg.inv(A.T @ A)
    np.testing.assert_allclose(result.ls_estimates[result.names[0]], x[0], rtol=1e-9)
    np.testing.assert_allclose(result.covariance, C, rtol=1e-6, atol=1e-12 * np.abs(C).max())
    assert result.condition_number == pytest.approx(np.linalg.cond(A), rel=1e-9)
    for k, name in enumerate(result.names):
        assert result.relative_std[name] == pytest.approx(100 * np.sqrt(C[k, k]) / abs(x[k]), rel=1e-6)


def test_weighted_least_squares_weighs_each_joint_by_its_noise(planar):
    _robot, values, fn, regs = planar
    rng = np.random.default_rng(6)
    tr = FourierTrajectory([0.0, 0.0], rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), 0.5)
    t = np.arange(0.0, 4.0, 0.005)
    q, qd, qdd = tr.sample(t)
    tau = fn.inverse_dynamics(q, qd, qdd) + rng.normal(size=(len(t), 2)) * [0.2, 0.02]  # joint 1 ten times noisier
    data = {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": tau}
    wls = identify(regs, data, method="wls")
    assert wls.weights[0] / wls.weights[1] == pytest.approx(0.1, rel=0.2)
    true = base_truth(wls, values)
    # its standard deviations hold for these unequal noises: every error within 4 sigma
    std = np.array([wls.std[name] for name in wls.names])
    assert np.all(np.abs(wls.values - true) < 4 * std), (wls.values - true) / std


def test_physical_estimate_is_made_of_real_bodies(planar, recording):
    robot, _values, fn, regs = planar
    result = identify(regs, recording, method="wls", physical=True)
    assert result.standard is not None
    for label in robot.links:
        link = {kind: result.standard[f"{kind}{label}"] for kind in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")}
        assert is_physically_consistent(link, tol=0.0), (label, link)
        assert all(result.standard[f"{kind}{label}"] >= 0 for kind in ("IA", "FV", "FS"))
    assert all(result.consistent.values())
    # its base parameters are those of its standard ones, and close to the least-squares ones
    T = result.T
    K = np.array([result.standard[name] for name in regs.parameters])
    np.testing.assert_allclose(result.values, T @ K, rtol=1e-12, atol=1e-12)
    ls = np.array([result.ls_estimates[name] for name in result.names])
    std = np.array([result.std[name] for name in result.names])
    assert np.all(np.abs(result.values - ls) < 5 * std + 1e-3 * np.abs(ls))
    assert fresh_error(result, fn, robot.dof, seed=22) < 3.0


def test_physical_estimate_corrects_an_unphysical_least_squares_fit(planar):
    # a short, poorly exciting motion with heavy noise: least squares gives a negative rotor inertia or friction
    _robot, _values, fn, regs = planar
    rng = np.random.default_rng(8)
    tr = FourierTrajectory([0.0, 0.0], 0.3 * rng.normal(size=(2, 2)), 0.3 * rng.normal(size=(2, 2)), 0.5)
    t = np.arange(0.0, 2.0, 0.01)
    q, qd, qdd = tr.sample(t)
    tau = fn.inverse_dynamics(q, qd, qdd)
    for seed in range(20):
        noisy = tau + np.random.default_rng(seed).normal(size=tau.shape) * np.abs(tau).max()
        data = {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": noisy}
        ls = identify(regs, data)
        negative = [n for n in ls.names if n[:2] in ("IA", "FV", "FS") and ls.estimates[n] < 0]
        if negative:
            break
    assert negative, "no unphysical least-squares estimate in 20 draws"
    result = identify(regs, data, physical=True)
    assert result.ls_estimates == ls.estimates
    assert all(result.estimates[n] >= 0 for n in negative if n in result.base.parameters)
    assert all(result.consistent.values())


def test_models_and_base_sets_give_the_same_fit(planar, recording):
    """A robot, its identification model or its Regressors give the same estimates; the
    symbolic base set (geometry bound by the values) fits the data as the numeric one."""
    robot, values, _fn, regs = planar
    geometry = {"L1": values["L1"], "G1": -9.81}
    reference = identify(regs, recording)
    assert reference.base.method == "numeric" and len(reference.base) == len(reference.names) == 11
    assert f"base parameter set: 11 base parameters of {robot.name} (numeric method)" in reference.summary()
    for model in (robot, identification_model(robot)):
        other = identify(model, recording, values=geometry)
        assert other.names == reference.names
        np.testing.assert_allclose(other.values, reference.values, rtol=1e-9)
        np.testing.assert_allclose(other.covariance, reference.covariance, rtol=1e-6)
    symbolic = identify(regs, recording, base=kr.base_parameter_set(robot))
    assert symbolic.base.method == "symbolic" and len(symbolic.names) == 11
    np.testing.assert_allclose(symbolic.residual, reference.residual, atol=1e-9 * np.abs(recording.tau).max())
    np.testing.assert_allclose(symbolic.values, base_truth(symbolic, values), rtol=0.05)
    # without rotor inertias (a model that leaves out the simulated IA2): IA2 leaves the base set, IA1 leaves ZZR1
    no_rotor = identify(robot, recording, values=geometry, rotor=False)
    assert "IA2" not in no_rotor.names and len(no_rotor.names) == 10
    assert "base parameter set: 10 base parameters of" in no_rotor.summary()


def test_physical_parametrisation_jacobian_is_exact(planar):
    from kanerobot.identification.identify import _Parametrisation

    robot, _values, _fn, regs = planar
    param = _Parametrisation(regs)
    theta = np.random.default_rng(9).normal(size=param.size)
    J = param.jacobian(theta)
    e = 1e-6
    numeric = np.column_stack([(param.standard(theta + e * d) - param.standard(theta - e * d)) / (2 * e) for d in np.eye(param.size)])
    np.testing.assert_allclose(J, numeric, atol=1e-8)
    # a random theta gives real bodies
    K = dict(zip(regs.parameters, param.standard(theta)))
    for label in robot.links:
        assert is_physically_consistent({kind: K[f"{kind}{label}"] for kind in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")})


def test_identify_reads_files_and_the_command_line_writes_estimates(planar, recording, tmp_path, capsys):
    robot, values, _fn, regs = planar
    path = save_data(recording, tmp_path / "run.csv")
    from_file = identify(robot, path, values={"L1": values["L1"], "G1": -9.81})
    direct = identify(regs, recording)
    np.testing.assert_allclose(from_file.values, direct.values, rtol=1e-12)
    # the command line, on a robot file of its own (gravity in the plane) and a TOML of values
    robot_file = tmp_path / "planar_g.toml"
    kr.save(robot, robot_file)
    (tmp_path / "g.toml").write_text(f"L1 = {values['L1']!r}\nG1 = -9.81\n")
    out = tmp_path / "estimates.toml"
    assert main(["identify", str(robot_file), str(path), "--values", str(tmp_path / "g.toml"), "--method", "wls", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "condition number" in printed and "ZZR1" in printed
    saved = tomllib.loads(out.read_text())
    wls = identify(regs, recording, method="wls")
    for name in wls.names:
        assert saved[name] == pytest.approx(wls.estimates[name], rel=1e-12)
    result_csv = wls.save(tmp_path / "estimates.csv")
    assert result_csv.read_text().splitlines()[0] == "name,estimate,std,relative_std_percent"


def test_mistakes_are_reported(planar, recording, tmp_path, capsys):
    _robot, _values, _fn, regs = planar
    with pytest.raises(KaneRobotError, match="unknown identification method 'gls'"):
        identify(regs, recording, method="gls")
    with pytest.raises(KaneRobotError, match="unknown identification model"):
        identify(regs, recording, form="kalman")
    with pytest.raises(DataError, match="3 joint column"):
        identify(regs, {"t": [0.0, 1.0], "q": np.zeros((2, 3)), "tau": np.zeros((2, 3))})
    t = np.arange(0.0, 1.0, 0.01)
    still = {"t": t, "q": np.zeros((len(t), 2)), "tau": np.zeros((len(t), 2))}
    with pytest.raises(KaneRobotError, match=r"rank deficient.*fourier_excitation"):
        identify(regs, still)
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q_1,q_2,tau_1\n0,0,0,0\n")
    assert main(["identify", "planar2", str(bad), "--values", str(_values_file(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.csv:1: tau_<joint> columns" in err and "Traceback" not in err


def _values_file(folder):
    path = folder / "geometry.toml"
    path.write_text("L1 = 0.5\nG3 = -9.81\n")
    return path


@pytest.mark.slow
def test_rx90_identification_from_a_simulated_excitation():
    robot = library("rx90")
    values = random_parameters(robot, np.random.default_rng(5), wrench=False)
    model = derived("rx90")
    fn = model.numeric({k: values[k] for k in model.parameters})
    regs = Regressors(robot, values)
    excitation = fourier_excitation(regs, harmonics=4, frequency=0.2, maxiter=30)
    assert excitation.condition_number < excitation.initial_condition_number
    tr = excitation.trajectory
    q0, qd0, _ = tr(0.0)
    t = np.arange(0.0, 2 * tr.period, 0.005)
    run = kr.simulate(fn, None, np.concatenate([q0, qd0]), (0.0, t[-1]), controller=computed_torque(fn, tr), t_eval=t)
    rng = np.random.default_rng(6)
    tau = run.tau + 0.01 * np.sqrt(np.mean(run.tau**2, axis=0)) * rng.normal(size=run.tau.shape)
    result = identify(regs, {"t": run.t, "q": run.q, "tau": tau}, method="wls")
    assert len(result.names) == 52
    true = base_truth(result, values)
    error = 100 * np.abs(result.values - true) / np.abs(true)
    well = np.array([result.relative_std[name] for name in result.names]) < 1.0
    assert well.sum() >= 20
    assert error[well].max() < 2.0
    assert fresh_error(result, fn, 6, seed=23) < 3.0
