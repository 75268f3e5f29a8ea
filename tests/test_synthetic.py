"""Synthetic recordings of the wall-mounted 7-joint arm (frames/arm7.urdf, issue 24).

The arm's truth is random (seeded) and physical; its recordings have the
defects of a real controller's logs.  The references are independent of
kanerobot's identification programs (tests/reference_identification.py):
the regressor of every standard parameter by unit parameters on the numeric
inverse dynamics, and pinocchio's regressor on the URDF file itself.
"""

import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import kanerobot as kr
from kanerobot.dynamics.parameters import check_physical
from kanerobot.identification.base_parameters import base_parameter_set
from kanerobot.identification.regressor import STANDARD_NAMES
from kanerobot.identification.synthetic import (
    GRAVITY,
    defective_recording,
    excitation,
    joint_limit_arrays,
    random_gains,
    random_truth,
    symbolic_dynamics,
    write_csv,
    write_gains,
)
from kanerobot.robot.urdf import parse_urdf

sys.path.insert(0, str(Path(__file__).parent))
from reference_identification import (
    full_regressor_by_units,
    least_squares_reference,
    pinocchio_parameters,
    pinocchio_regressor,
    rank,
    relative_rms,
    standard_parameters,
)

try:
    import pinocchio  # noqa: F401

    HAS_PINOCCHIO = True
except ImportError:
    HAS_PINOCCHIO = False

DURATION = 20.0
#: Base parameters of the arm with gravity along -y: with IA, FV, FS and without.
BASE_COUNT, BASE_COUNT_INERTIAL = 64, 45


class Arm:
    """The arm, its symbolic copy, truth and two defective recordings, built once."""

    def __init__(self):
        self.path = kr.frames_path("arm7")
        parsed = parse_urdf(self.path)
        self.robot, self.joint_names = parsed.robot, parsed.joint_names
        self.model = symbolic_dynamics(self.robot)
        self.dynamic = kr.derive(self.model)
        rng = np.random.default_rng(24)
        self.truth = random_truth(self.robot, rng)
        self.numeric = self.dynamic.numeric(self.truth, backend="numpy")  # a simulation of a few thousand states: no compile
        self.lower, self.upper, self.velocity = joint_limit_arrays(self.robot)
        self.gains = random_gains(7, rng)
        self.trajectories, self.runs = [], []
        for _ in range(2):  # training, test
            trajectory = excitation(7, DURATION, rng, lower=self.lower, upper=self.upper, velocity=self.velocity)
            self.trajectories.append(trajectory)
            self.runs.append(defective_recording(self.model, self.truth, trajectory, gains=self.gains, rng=rng, duration=DURATION,
                                                 dynamics=self.numeric))  # fmt: skip
        self._units = {}

    def units(self, k):
        """The unit-parameter regressor of run k at its true states (computed once)."""
        if k not in self._units:
            run = self.runs[k]
            self._units[k] = full_regressor_by_units(self.dynamic, self.truth, run.q_true, run.qd, run.qdd)
        return self._units[k]


@pytest.fixture(scope="module")
def arm():
    return Arm()


def test_the_library_ships_the_arm_as_given_to_a_user():
    path = kr.frames_path("arm7")
    assert path.name == "arm7.urdf" and "arm7" in kr.robot_names()
    robot = kr.load(path)
    assert robot.joint_labels == ("a1", "a2", "a3", "a4", "a5", "a6", "a7") and robot.structure == "serial"
    root = ET.parse(path).getroot()
    inertias = [element.attrib for element in root.iter("inertia")]
    assert len(inertias) == 8 and all(float(i[key]) == 0.0 for i in inertias for key in ("ixy", "ixz", "iyz"))
    assert root.find("joint/dynamics") is None  # no friction in the file
    masses = [float(m.attrib["value"]) for m in root.iter("mass")][1:]
    assert all(0.5 <= m <= 4.0 for m in masses)
    centres = {link.attrib["name"]: link.find("inertial/origin").attrib["xyz"] for link in root.iter("link") if link.find("inertial") is not None}
    assert centres["link6"] == "0 0 0" and centres["link3"] == "0 0 0.11"  # at the origin, on the joint axis
    assert all(robot.limits[label].lower < 0 < robot.limits[label].upper and robot.limits[label].effort > 0 for label in robot.joint_labels)
    lengths = [abs(robot.values[name]) for name in robot.geometric_parameters]
    assert all(0.04 <= x <= 0.4 for x in lengths)
    assert "wall" in path.read_text() and "(0, -9.81, 0)" in path.read_text()


def test_the_copy_has_every_parameter_unknown_and_gravity_as_symbols(arm):
    model = arm.model
    assert model.frames == arm.robot.frames and model.links == arm.robot.links and model.limits == arm.robot.limits
    for label in model.links:
        for name in STANDARD_NAMES:
            assert str(model.dynamics[label][name]) == name + label
        assert all(model.dynamics[label][name] == 0 for name in ("FX", "FY", "FZ", "CX", "CY", "CZ"))
    assert [str(g) for g in model.base.G] == ["G1", "G2", "G3"]
    assert dict(model.values) == {**{k: arm.robot.values[k] for k in arm.robot.geometric_parameters}, "G1": 0.0, "G2": -9.81, "G3": 0.0}


def test_the_truth_is_physical_near_the_file_with_every_parameter_nonzero(arm):
    truth = arm.truth
    names = standard_parameters(arm.model)
    assert len(names) == 91 and set(names) <= set(truth)
    check_physical(arm.model, truth)
    values = np.array([truth[name] for name in names])
    assert np.all(values != 0) and np.abs(values).min() > 1e-7
    for label in arm.model.links:
        assert all(truth[name + label] > 0 for name in ("IA", "FV", "FS", "M"))
        assert abs(truth["M" + label] / arm.robot.values["M" + label] - 1) <= 0.15
        for name in ("XY", "XZ", "YZ", "MX", "MY", "MZ"):
            assert abs(truth[name + label]) > 1e-6  # where the file has zeros too
    assert (truth["G1"], truth["G2"], truth["G3"]) == GRAVITY


def test_friction_dominates_the_wrist_and_gravity_the_shoulder(arm):
    run = arm.runs[0]
    fv = np.array([arm.truth["FV" + label] for label in arm.model.joint_labels])
    fs = np.array([arm.truth["FS" + label] for label in arm.model.joint_labels])
    friction = fv * run.qd + fs * np.sign(run.qd)
    rms = lambda x: np.sqrt(np.mean(x**2, axis=0))  # noqa: E731
    ratio = rms(friction) / rms(run.tau - friction)
    print("rms friction / rms of the rest, per joint:", np.round(ratio, 2))
    assert np.all(ratio[4:] > 2.0) and np.all(ratio[:2] < 1.0)


def test_excitations_stay_inside_the_joint_limits_and_differ(arm):
    t = np.linspace(0.0, DURATION, 4001)
    for trajectory in arm.trajectories:
        q, qd, qdd = trajectory.sample(t)
        assert np.all(q >= arm.lower) and np.all(q <= arm.upper) and np.all(np.abs(qd) <= arm.velocity) and np.abs(qdd).max() <= 4.0
        assert np.all(q.max(axis=0) - q.min(axis=0) > 0.3 * (arm.upper - arm.lower))  # they move
    assert not np.allclose(arm.trajectories[0].a, arm.trajectories[1].a)


def test_the_recordings_have_the_defects_of_real_ones(arm):
    for run in arm.runs:
        steps = np.diff(run.t)
        assert 0.010 <= steps.min() and steps.max() <= 0.033 and steps.std() > 0.005  # jittered, not uniform
        assert len(run) > DURATION / 0.033
        repeated = np.r_[False, np.all(run.q[1:] == run.q[:-1], axis=1) & np.all(run.current[1:] == run.current[:-1], axis=1)]
        assert np.array_equal(repeated, run.stale)  # a stale row repeats the previous one; a fresh one never does
        assert abs(repeated.mean() - 0.25) < 0.01
        fresh = ~run.stale
        assert np.array_equal(run.q[fresh], run.q_true[fresh])
        error = run.current[fresh] * run.gains - run.tau[fresh]
        relative = np.sqrt(np.mean(error**2, axis=0) / np.mean(run.tau**2, axis=0))
        assert np.all((0.007 < relative) & (relative < 0.013)), relative  # 1 % of each joint's RMS
        assert np.all(run.gains >= 5.0) and np.all(run.gains <= 40.0)


def test_quantised_positions_and_a_clean_clock(arm):
    rng = np.random.default_rng(5)
    step = 2 * np.pi / 2**20
    run = defective_recording(arm.model, arm.truth, arm.trajectories[0], gains=arm.gains, rng=rng, duration=2.0, jitter=None,
                              period=0.004, stale=0.0, noise=0.0, resolution=step, dynamics=arm.numeric)  # fmt: skip
    assert np.allclose(np.diff(run.t), 0.004, rtol=0, atol=1e-12) and not run.stale.any()
    assert np.allclose(run.q / step, np.round(run.q / step), rtol=0, atol=1e-6) and np.abs(run.q - run.q_true).max() <= step / 2
    assert np.allclose(run.torque(), run.tau, rtol=1e-14, atol=1e-12)


# -m slow: the default run checks the same on the prepared samples (tests/test_identify_recordings.py)
@pytest.mark.slow
def test_unit_parameter_regressor_times_the_truth_is_the_true_torque(arm):
    W, names = arm.units(0)
    K = np.array([arm.truth[name] for name in names])
    run = arm.runs[0]
    assert np.abs(W @ K - run.tau).max() <= 1e-10 * np.abs(run.tau).max()


def test_pinocchio_on_the_urdf_gives_the_true_torques(arm):
    pin = pytest.importorskip("pinocchio", reason="needs pinocchio: pip install pin")
    model = pin.buildModelFromUrdf(str(arm.path))
    # The parameter map: pinocchio's 10 parameters of each body are SYMORO's of the same frame, in its order.
    for label in arm.robot.joint_labels:
        theirs = model.inertias[model.getJointId(arm.joint_names[label])].toDynamicParameters()
        ours = [arm.robot.values.get(name + label, 0.0) for name in ("M", "MX", "MY", "MZ", "XX", "XY", "YY", "XZ", "YZ", "ZZ")]
        assert np.allclose(theirs, ours, rtol=1e-12, atol=1e-15)
    run = arm.runs[1]
    Y = pinocchio_regressor(arm.path, run.q_true, run.qd, run.qdd, GRAVITY, [arm.joint_names[label] for label in arm.robot.joint_labels])
    tau = Y @ pinocchio_parameters(arm.truth, arm.robot.joint_labels)
    assert np.abs(tau - run.tau.reshape(-1)).max() <= 1e-10 * np.abs(run.tau).max()


# -m slow: the default run checks the count on the prepared samples (tests/test_identify_recordings.py)
@pytest.mark.slow
def test_independent_base_parameter_count(arm):
    rng = np.random.default_rng(7)
    N = 300
    q = rng.uniform(arm.lower, arm.upper, (N, 7))
    qd, qdd = rng.normal(size=(N, 7)), rng.normal(size=(N, 7)) * 3
    W, names = full_regressor_by_units(arm.dynamic, arm.truth, q, qd, qdd)
    r, s = rank(W)
    inertial = [k for k, name in enumerate(names) if not name.startswith(("IA", "FV", "FS"))]
    r_inertial, s_inertial = rank(W[..., inertial])
    print(f"independent rank: {r} with IA, FV, FS (gap {s[r - 1]:.2e} -> {s[r]:.2e}); {r_inertial} without")
    assert (r, r_inertial) == (BASE_COUNT, BASE_COUNT_INERTIAL)
    assert s[r - 1] > 1e-6 and s[r] < 1e-12 and s_inertial[r_inertial - 1] > 1e-6 and s_inertial[r_inertial] < 1e-12
    if HAS_PINOCCHIO:  # pinocchio's regressor on the file has the same rank
        Y = pinocchio_regressor(arm.path, q, qd, qdd, GRAVITY, [arm.joint_names[label] for label in arm.robot.joint_labels])
        assert rank(Y)[0] == BASE_COUNT
    # kanerobot's own base parameters agree with the independent count.
    assert len(base_parameter_set(arm.model, method="numeric", values=dict(arm.model.values))) == BASE_COUNT


# -m slow: the default run compares identify with this reference on pinocchio's regressor (tests/test_identify_recordings.py)
@pytest.mark.slow
def test_least_squares_reference_on_the_fresh_rows(arm):
    """Identified on the training run's fresh rows (measured torque = current x gain, exact states),
    the base parameters predict the test run's true torques to the noise level."""
    (W_train, _), (W_test, _) = arm.units(0), arm.units(1)
    train, test = arm.runs
    fresh = ~train.stale
    result = least_squares_reference(W_train[fresh], train.torque()[fresh], W_test, test.tau)
    print("relative RMS error on the test run per joint:", np.round(result["per_joint"], 4), "overall:", round(result["overall"], 4))
    assert len(result["columns"]) == BASE_COUNT
    assert result["overall"] < 0.005 and np.all(result["per_joint"] < 0.02)
    exact = least_squares_reference(W_train, train.tau, W_test, test.tau)  # noiseless: exact to rounding
    assert exact["overall"] < 1e-9
    assert relative_rms(test.tau, test.tau)[1] == 0.0


def test_files_as_a_user_gets_them(arm, tmp_path):
    run = arm.runs[0]
    names = [arm.joint_names[label] for label in run.joints]
    path = write_csv(run, tmp_path / "train.csv", arm.joint_names, tau=True)
    header = path.read_text().splitlines()[0].split(",")
    assert header == ["t"] + [f"q_{n}" for n in names] + [f"current_{n}" for n in names] + [f"tau_{n}" for n in names]
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    assert np.array_equal(table, np.hstack([run.t[:, None], run.q, run.current, run.tau]))
    assert write_csv(run, tmp_path / "plain.csv", names).read_text().splitlines()[0].count("tau_") == 0
    gains = tomllib.loads(write_gains(run.gains, tmp_path / "gains.toml", names).read_text())
    assert gains == {"gains": dict(zip(names, run.gains.tolist()))}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gains.toml", "plain.csv", "train.csv"]  # no temporary file left
