"""Identification from a robot's own recordings (issue 24): the route a user takes, on realistic defects.

A wall-mounted 7-joint arm (frames/arm7.urdf: zero products of inertia in the
file, no friction, no rotor inertia, gravity along -y of its base) has a
random physical truth with every parameter nonzero.  Its training and test
runs are logged as a real controller logs them: jittered time stamps (steps
of 10-33 ms), 25 % stale rows, motor currents with per-joint drive gains, 1 %
noise (kanerobot.identification.synthetic).  The user's route is
``kr.load(urdf, gravity=...)``, ``kr.identify(robot, "train.csv",
gains="gains.toml", cutoff=..., method="wls")`` and ``result.validate("test.csv")``,
or ``kanerobot identify`` on the command line.

The references are independent of the identification programs
(tests/reference_identification.py): the rank of the regressor of every
standard parameter built by unit parameters on the numeric inverse dynamics;
pinocchio's ``computeJointTorqueRegressor`` on the URDF file itself.
"""

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.identification import synthetic
from kanerobot.identification.recording import Recording
from kanerobot.identification.regressor import STANDARD_NAMES

sys.path.insert(0, str(Path(__file__).parent))
from reference_identification import (
    full_regressor_by_units,
    least_squares_reference,
    pinocchio_regressor,
    rank,
)

#: Seconds of each run (about 2100 rows kept of 2800 logged).
DURATION = 60.0
#: Cut-off (Hz) of the positions' low-pass: above the synthetic.excitation's band (< 1 Hz), below the 20 Hz Nyquist frequency.
CUTOFF = 5.0


class Experiment:
    """The arm as a user gets it, its truth, two logged runs on disk and the identification, built once."""

    def __init__(self, folder):
        self.path = kr.frames_path("arm7")
        self.robot = kr.load(self.path, gravity=synthetic.GRAVITY)
        rng = np.random.default_rng(24)
        self.truth = synthetic.random_truth(self.robot, rng)
        self.model = synthetic.symbolic_dynamics(self.robot)  # the simulator's model: independent of the URDF reader's parameters
        self.numeric = kr.derive(self.model).numeric(self.truth, backend="numpy")  # the truth's torques: no compile needed
        lower, upper, velocity = synthetic.joint_limit_arrays(self.robot)
        self.gains = synthetic.random_gains(7, rng)
        self.files = []
        self.runs = []
        for name in ("train", "test"):
            trajectory = synthetic.excitation(7, DURATION, rng, lower=lower, upper=upper, velocity=velocity)
            run = synthetic.defective_recording(self.model, self.truth, trajectory, gains=self.gains, rng=rng, duration=DURATION, dynamics=self.numeric)
            self.runs.append(run)
            self.files.append(synthetic.write_csv(run, folder / f"{name}.csv", self.robot.joint_labels))
        self.gains_file = synthetic.write_gains(self.gains, folder / "gains.toml", self.robot.joint_labels)
        self.result = kr.identify(self.robot, self.files[0], gains=self.gains_file, cutoff=CUTOFF, method="wls")
        K = np.array([self.truth[name] for name in self.result.regressors.parameters])
        self.true_base = self.result.T @ K

    def prepared(self, k):
        """Run k as identify prepares it: ``RecordedData`` at the kept time stamps, torques from the currents."""
        recording = Recording.read(self.files[k], joints=self.robot).prepare(cutoff=CUTOFF, at="samples")
        return recording.to_recorded(gains=self.gains)


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    return Experiment(tmp_path_factory.mktemp("arm7"))


def test_the_recordings_have_the_defects(experiment):
    train = experiment.runs[0]
    steps = np.diff(train.t)
    assert steps.min() >= 0.010 - 1e-12 and steps.max() <= 0.033 + 1e-12
    assert abs(train.stale.mean() - 0.25) < 0.01
    log = " ".join(experiment.result.log)
    assert f"dropped {int(train.stale.sum())} of {len(train.t)} rows that repeat the previous row" in log
    assert "current as measured there, not interpolated" in log


def test_every_standard_parameter_is_an_unknown_whatever_the_file_says(experiment):
    robot, result = experiment.robot, experiment.result
    assert result.regressors.parameters == [name + label for label in robot.links for name in STANDARD_NAMES]
    # the file's zeros are values (0), not structure: no rotor inertia or friction in a URDF, zero products of inertia
    assert {robot.values[name + label] for label in robot.joint_labels for name in ("IA", "FV", "FS")} == {0.0}
    zeros = [name + label for label in robot.joint_labels for name in ("XY", "XZ", "YZ", "MX", "MY") if robot.values[name + label] == 0]
    assert len(zeros) >= 20
    # products of inertia, first moments, rotor inertias, friction: identified
    assert {"XYa2", "XZa2", "YZa7", "IAa3", "FVa5", "FSa7"} <= set(result.names)
    assert set(zeros) <= set(result.regressors.parameters)


def test_base_parameters_equal_the_rank_of_the_full_regressor(experiment):
    data = experiment.prepared(0)
    rows = np.random.default_rng(0).choice(len(data.t), 300, replace=False)
    W, names = full_regressor_by_units(experiment.model, experiment.truth, data.q[rows], data.qd[rows], data.qdd[rows])
    # the reference itself: its columns times the truth are the truth's torques (linearity, no program of identification)
    tau = experiment.numeric.inverse_dynamics(data.q[rows], data.qd[rows], data.qdd[rows])
    assert np.abs(W @ np.array([experiment.truth[name] for name in names]) - tau).max() <= 1e-10 * np.abs(tau).max()
    count, _ = rank(W.reshape(-1, W.shape[-1]))
    assert count == len(experiment.result.names) == 64


def test_estimates_are_the_true_base_parameters_within_three_standard_deviations(experiment):
    result = experiment.result
    std = np.array([result.std[name] for name in result.names])
    z = (result.values - experiment.true_base) / std
    assert np.abs(z).max() < 3.0, dict(zip(result.names, z.round(2)))
    assert np.all(std > 0)


def test_the_test_run_is_predicted_to_the_noise_floor(experiment):
    result = experiment.result
    check = result.validate(experiment.files[1])
    estimate = result._values.copy()
    try:
        result._values = experiment.true_base  # the true parameters, on the same prepared samples
        floor = result.validate(experiment.files[1])
    finally:
        result._values = estimate
    assert 0.005 < floor.overall < 0.02  # 1 % noise on the currents
    assert check.overall <= 1.05 * floor.overall
    assert min(check.correlation.values()) > 0.999
    assert check.joints == experiment.robot.joint_labels


def test_pinocchio_regressor_gives_the_same_count_and_test_error(experiment):
    pytest.importorskip("pinocchio", reason="needs pinocchio: pip install pin (the bench extra)")
    robot = experiment.robot
    ls = kr.identify(robot, experiment.files[0], gains=experiment.gains_file, cutoff=CUTOFF, method="ls")
    train, test = experiment.prepared(0), experiment.prepared(1)
    n = len(robot.joint_labels)
    keep = slice(ls.options["trim"], -ls.options["trim"])  # identify's trim of the filter's ends, the same samples for both
    assert ls.options["trim"] == 24  # 3 / cutoff seconds at the median step of 25 ms
    W = [pinocchio_regressor(experiment.path, d.q[keep], d.qd[keep], d.qdd[keep], synthetic.GRAVITY, robot.joint_labels).reshape(-1, n, 13 * n)
         for d in (train, test)]  # fmt: skip
    reference = least_squares_reference(W[0], train.tau[keep], W[1], test.tau[keep])
    assert len(reference["columns"]) == len(ls.names) == 64
    ours = ls.validate(experiment.files[1])
    assert abs(ours.overall / reference["overall"] - 1) < 0.01
    np.testing.assert_allclose([ours.relative_rms[j] for j in robot.joint_labels], reference["per_joint"], rtol=0.01)


@pytest.mark.long
def test_the_command_line_identifies_and_validates(experiment, tmp_path, capsys):
    output = tmp_path / "estimate.toml"
    train, test = experiment.files
    code = main(["identify", str(experiment.path), str(train), "--gravity", "0,-9.81,0", "--gains", str(experiment.gains_file),
                 "--cutoff", str(CUTOFF), "--method", "wls", "--validate", str(test), "-o", str(output)])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    estimates = kr.cli.read_values(output)
    np.testing.assert_allclose([estimates[name] for name in experiment.result.names], experiment.result.values, rtol=1e-12)
    assert "validation on" in out.out and "rel. error" in out.out
    for name in ("estimate_validation_torques.png", "estimate_validation_residuals.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def _corrupt(lines, kind):
    """A copy of a recording's lines (header first) with one mistake at line 101 of the file; its expected message."""
    lines = list(lines)
    cells = lines[100].split(",")
    if kind == "nan":
        cells[3] = "nan"
        lines[100] = ",".join(cells)
        return lines, r":101: .*q_a3"
    if kind == "time going back":
        cells[0] = repr(float(lines[98].split(",")[0]))
        lines[100] = ",".join(cells)
        return lines, r":101: .*time"
    if kind == "gap":
        shift = 5.0
        lines[100:] = [",".join([repr(float(row.split(",")[0]) + shift)] + row.split(",")[1:]) for row in lines[100:]]
        return lines, r":101: gap of 5\.\d+ s between lines \d+ and 101"
    if kind == "wrong column count":
        lines[100] = ",".join(cells[:-1])
        return lines, r":101: .*14 .*15"
    if kind == "unknown joint name":
        lines[0] = lines[0].replace("q_a7", "q_wrist_3").replace("current_a7", "current_wrist_3")
        return lines, r":1: unknown joint name 'wrist_3'.*a1, a2, a3, a4, a5, a6, a7"
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["nan", "time going back", "gap", "wrong column count", "unknown joint name"])
@pytest.mark.long
def test_each_bad_recording_is_one_clear_error_naming_file_and_row(experiment, tmp_path, capsys, kind):
    lines, message = _corrupt(experiment.files[0].read_text().splitlines(), kind)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    code = main(["identify", str(experiment.path), str(bad), "--gravity", "0,-9.81,0", "--gains", str(experiment.gains_file),
                 "--cutoff", str(CUTOFF), "-o", str(tmp_path / "estimate.toml")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(f"kanerobot: error: {bad}:"), err
    assert re.search(message, err), err
    assert not (tmp_path / "estimate.toml").exists()  # nothing half-written


def test_drive_gains_identified_with_one_known_gain(experiment, tmp_path):
    """Only joint a1's gain given: the other six identified with the base parameters, the scale fixed by a1's.

    The arm's own dynamics couples the joints' equations through the links' inertias: strongly for the
    shoulder and elbow (their gains to 0.1 %), less for the light wrist (1 to 7 %); every gain within 3 of
    its standard deviations of the truth, and so every base parameter."""
    robot, truth_gains = experiment.robot, experiment.gains
    known = tmp_path / "a1.toml"
    known.write_text(f"[gains]\na1 = {float(truth_gains[0])!r}\n")
    result = kr.identify(robot, experiment.files[0], gains=known, identify_gains=True, cutoff=CUTOFF, method="wls")
    assert list(result.gains) == list(robot.joint_labels[1:])
    for k, joint in enumerate(robot.joint_labels[1:], start=1):
        assert abs(result.gains[joint] - truth_gains[k]) < 3 * result.gain_std[joint]
        assert result.gain_std[joint] < 0.1 * result.gains[joint]
        if joint in ("a2", "a3", "a4"):
            assert abs(result.gains[joint] / truth_gains[k] - 1) < 0.005 and result.gain_std[joint] < 0.005 * result.gains[joint]
    z = (result.values - experiment.true_base) / np.array([result.std[name] for name in result.names])
    assert np.abs(z).max() < 3.0
    check = result.validate(experiment.files[1])  # the identified gains read the test run's currents
    assert check.overall < 0.0105
    assert "drive gains identified: a2 " in result.summary()
    saved = kr.cli.read_values(result.save(tmp_path / "estimate.toml"))
    assert saved["gain_a2"] == pytest.approx(result.gains["a2"], rel=1e-12)
    with pytest.raises(kr.KaneRobotError, match="give the gain of at least one joint"):
        kr.identify(robot, experiment.files[0], identify_gains=True, cutoff=CUTOFF)


def test_predictions_read_recordings_as_the_identification_did(experiment, tmp_path):
    result, robot = experiment.result, experiment.robot
    test = experiment.prepared(1)
    # torques recorded (not currents): the identification's gains are not applied to them
    path = tmp_path / "tau.csv"
    Recording(test.t, test.q, tau=test.tau, joints=robot.joint_labels).write(path)
    check = result.validate(path)
    assert check.overall < 0.0105
    # positions alone: predicted torques; a mapping without torques too
    motion = {"t": test.t, "q": test.q, "joints": list(robot.joint_labels)}
    predicted = result.predict(motion)
    np.testing.assert_allclose(predicted, check.predicted, rtol=1e-9, atol=1e-9)
    with pytest.raises(kr.KaneRobotError, match=r"predict\(q, qd, qdd\) needs the rates and accelerations too"):
        result.predict(test.q)
    # a prepared Recording is taken as it is (not prepared twice)
    prepared = Recording.read(experiment.files[1], joints=robot).prepare(cutoff=CUTOFF, at="samples")
    again = result.validate(prepared)
    assert again.log == prepared.log
    keep = slice(result.options["trim"], -result.options["trim"])
    np.testing.assert_allclose(again.predicted, result.predict(test.q[keep], test.qd[keep], test.qdd[keep]), rtol=1e-12, atol=1e-12)
    # joints that are not the robot's: one error naming them
    with pytest.raises(kr.errors.DataError, match=r"joint\(s\) x1 of the recording are not the robot's"):
        result.validate(dataclasses.replace(prepared, joints=("x1",) + robot.joint_labels[1:]))


def test_options_of_recordings_are_refused_where_they_cannot_apply(experiment):
    data = experiment.prepared(0)
    arrays = {"t": data.t, "q": data.q, "qd": data.qd, "qdd": data.qdd, "tau": data.tau}
    with pytest.raises(kr.KaneRobotError, match="period= and max_gap= prepare a recording as it comes"):
        kr.identify(experiment.robot, arrays, max_gap=0.5)
    # the rates and accelerations given at its own time stamps serve as they are: the file's estimate
    np.testing.assert_allclose(kr.identify(experiment.robot, arrays, method="wls", trim=experiment.result.options["trim"]).values,
                               experiment.result.values, rtol=1e-9, atol=1e-9 * np.abs(experiment.result.values).max())  # fmt: skip
