"""Recordings as they come (issue 24, point 4): jittered time stamps, stale rows,
motor currents, ROS joint names, and one clear error per mistake.

The signals are sums of sines with analytic derivatives.  After
:meth:`Recording.prepare`, the grid values are compared with two closed
forms: the exact derivatives, to the truncation error of central
differences, and the discrete response of what ``prepare`` computes (the
filtfilt gain ``1 / (1 + (f / fc)^8)`` of a 4th-order Butterworth applied
forward and backward, and the gains of the five-point central differences,
``(8 sin(w h) - sin(2 w h)) / (6 h)`` and ``(30 - 32 cos(w h) + 2 cos(2 w h)) / (12 h^2)``),
to the cubic spline's interpolation error.
"""

import dataclasses
import re

import numpy as np
import pytest
from conftest import library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import DataError, KaneRobotError
from kanerobot.identification import filtering
from kanerobot.identification.excitation import FourierTrajectory
from kanerobot.identification.identify import identify
from kanerobot.identification.numeric_regressor import Regressors
from kanerobot.identification.recording import Recording

ROS = ("panda_joint1", "joint_0.0", "l-hip.y")
FREQUENCIES = np.array([0.2, 0.5, 0.9])  # Hz: the band of an excitation motion
W = 2 * np.pi * FREQUENCIES
AMPLITUDES = np.array([[0.5, 0.3, 0.1], [0.3, 0.2, 0.4], [0.2, 0.4, 0.3]])  # (sine, joint)
PHASES = np.random.default_rng(24).uniform(0, 2 * np.pi, (3, 3))


def sines(t, derivative=0, gains=None):
    """``sum_i A_ij g_i sin(w_i t + phi_ij)`` differentiated ``derivative`` times; ``g_i = w_i^derivative`` by default."""
    g = W**derivative if gains is None else gains
    phase = W[:, None, None] * np.asarray(t)[None, None, :] + PHASES[:, :, None]
    wave = np.sin(phase + derivative * np.pi / 2)
    return np.einsum("ij,ijn->nj", AMPLITUDES * g[:, None], wave)


def jittered(rng, rows=1000, stale_rows=250):
    """Time stamps with steps uniform in 10-33 ms, and ``stale_rows`` rows (never two in a row) repeating the previous one."""
    t = np.cumsum(np.r_[0.0, rng.uniform(0.010, 0.033, rows - 1)])
    stale = np.sort(rng.choice(np.arange(1, rows // 2), stale_rows, replace=False)) * 2 - 1  # odd rows
    fresh = np.setdiff1d(np.arange(rows), stale)
    source = np.arange(rows)
    source[stale] = stale - 1  # a stale row shows the previous row's values
    return t, source, fresh


def spline_bound(h, derivative4):
    """Largest interpolation error of a cubic spline with knots at most ``h`` apart: ``5/384 h^4 max|f''''|``."""
    return 5 / 384 * h**4 * derivative4


# ---------------------------------------------------------------- preparing
def test_prepare_recovers_the_analytic_signal_from_jittered_stale_samples():
    rng = np.random.default_rng(1)
    t, source, fresh = jittered(rng)
    gains = np.array([2.0, 0.5, 4.0])
    tau = 3.0 * sines(t)[source] + 1.0  # any smooth torque
    rec = Recording(t, sines(t)[source], tau=tau, current=tau / gains, joints=ROS, source="run.csv")
    cutoff = 3.0
    ready = rec.prepare(cutoff=cutoff)

    assert ready.log[0] == "dropped 250 of 1000 rows that repeat the previous row (stale readings)"
    steps = np.diff(t[fresh])
    assert ready.period == round(float(np.median(steps)), 6)
    assert ready.log[1].startswith(f"time steps {1e3 * steps.min():.4g}-{1e3 * steps.max():.4g} ms (median ")
    assert "by cubic spline (q) and linear interpolation (tau, current)" in ready.log[1]
    assert ready.log[2] == "q low-passed by a zero-phase 4th-order Butterworth at 3 Hz (filtfilt) before differentiation"
    filtering.check_uniform(ready.t)
    assert ready.t[0] == t[0] and ready.t[-1] <= t[-1] < ready.t[-1] + ready.period

    dt = ready.period
    inner = slice(int(2.0 / dt), -int(2.0 / dt))  # filtfilt's end transients last about 3 periods of the cut-off (1 s)
    T = ready.t[inner]
    # the spline's error on the fresh samples, at most h apart; after the low-pass it is (nearly) band-limited
    # to the cut-off, so each derivative multiplies it by at most 2 pi fc (Bernstein)
    h = steps.max()
    e_q = spline_bound(h, np.abs(AMPLITUDES * W[:, None] ** 4).sum(axis=0).max())
    assert 1e-5 < e_q < 1e-4
    passband = 1.0 / (1.0 + (FREQUENCIES / cutoff) ** 8)  # |H|^2 of a 4th-order Butterworth, forward and backward
    # what the five-point central differences make of d/dt and d2/dt2 on sin(w t)
    difference = [np.ones_like(W), (8 * np.sin(W * dt) - np.sin(2 * W * dt)) / (6 * dt),
                  (30 - 32 * np.cos(W * dt) + 2 * np.cos(2 * W * dt)) / (12 * dt**2)]  # fmt: skip
    for d, value in enumerate((ready.q, ready.qd, ready.qdd)):
        discrete = sines(T, d, passband * difference[d])
        assert np.abs(value[inner] - discrete).max() < e_q * (2 * np.pi * cutoff) ** d
        # against the exact derivative: the filter's and the differences' closed-form deviation on top
        deviation = np.abs(AMPLITUDES * np.abs(W**d - passband * difference[d])[:, None]).sum(axis=0)
        assert np.all(np.abs(value[inner] - sines(T, d)).max(axis=0) < deviation + e_q * (2 * np.pi * cutoff) ** d)
    # torques and currents interpolated linearly: error h^2/8 max|tau''|
    e_tau = h**2 / 8 * 3.0 * np.abs(AMPLITUDES * W[:, None] ** 2).sum(axis=0).max()
    assert np.abs(ready.tau - (3.0 * sines(ready.t) + 1.0)).max() < e_tau
    np.testing.assert_allclose(ready.torque(gains), ready.tau, rtol=1e-12, atol=1e-12)


def test_an_already_uniform_recording_keeps_its_samples():
    t = 5.0 + np.arange(400) * 0.01
    q = sines(t)
    rec = Recording(t, q, joints=ROS)
    ready = rec.prepare(cutoff=False)
    assert ready.log == ["time steps uniform (10 ms within 0.1 %): samples kept as recorded", "qd and qdd by central differences of q (second order)"]
    assert np.array_equal(ready.t, t) and np.array_equal(ready.q, q)
    np.testing.assert_array_equal(ready.qd, np.gradient(q, 0.01, axis=0, edge_order=2))  # raw positions: second order
    # default cut-off: a fifth of the Nyquist frequency, stated
    default = rec.prepare()
    assert default.log[1] == ("q low-passed by a zero-phase 4th-order Butterworth at 10 Hz (filtfilt; default: a fifth of the "
                              "50 Hz Nyquist frequency of the grid) before differentiation")  # fmt: skip
    np.testing.assert_allclose(default.q, filtering.lowpass(q, 0.01, 10.0), rtol=0, atol=1e-12)
    # low-passed positions: five-point stencils, fourth order
    assert default.log[2] == "qd and qdd by central differences of q (fourth order, five-point stencils)"
    lq = default.q
    np.testing.assert_allclose(default.qd[2:-2], (lq[:-4] - 8 * lq[1:-3] + 8 * lq[3:-1] - lq[4:]) / 0.12, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(default.qdd[2:-2], (-lq[:-4] + 16 * lq[1:-3] - 30 * lq[2:-2] + 16 * lq[3:-1] - lq[4:]) / 12e-4,
                               rtol=1e-9, atol=1e-9)  # fmt: skip


def test_stale_keep_measured_rates_and_decimation():
    t = np.arange(600) * 0.01
    q, qd = sines(t), sines(t, 1)
    q[300:303] = q[299]  # stale positions, but the rates differ: not a stale row
    rec = Recording(t, q, qd=qd, tau=q.copy(), joints=ROS)
    ready = rec.prepare(decimation=2)
    assert ready.log[0] == "time steps uniform (10 ms within 0.1 %): samples kept as recorded"
    assert "at 5 Hz (filtfilt; default: a fifth of the 25 Hz Nyquist frequency of the decimated grid)" in ready.log[1]
    assert ready.log[2] == "measured qd kept; qdd by central differences of qd"
    assert ready.log[3] == "decimated by 2 (one sample in 2 kept after the low-pass; tau through an 8th-order anti-aliasing low-pass first): period 20 ms"
    np.testing.assert_array_equal(ready.t, t[::2])
    np.testing.assert_array_equal(ready.qd, qd[::2])
    np.testing.assert_allclose(ready.tau, filtering.decimate(q, 2))
    filtering.check_uniform(ready.t)
    # rows equal in every channel, time stamp too, are dropped even with stale="keep"
    twin = Recording(np.r_[t[:20], t[19:40]], np.r_[q[:20], q[19:40]], joints=ROS).prepare(stale="keep", cutoff=False)
    assert twin.log[0] == "dropped 1 of 41 rows that repeat the previous row and its time stamp"
    with pytest.raises(KaneRobotError, match="cut-off 30 Hz must lie between 0 and the Nyquist frequency of the grid decimated by 2, 25 Hz"):
        rec.prepare(decimation=2, cutoff=30.0)


# ---------------------------------------------------------------- torques
def test_currents_times_gains_give_the_torques():
    t = np.arange(50) * 0.01
    tau = sines(t)
    gains = {"panda_joint1": 2.0, "joint_0.0": -0.5, "l-hip.y": 4.0}
    current = tau / np.array(list(gains.values()))
    rec = Recording(t, sines(t), current=current, joints=ROS, source="arm.csv")
    np.testing.assert_allclose(rec.torque(list(gains.values())), tau, rtol=1e-15)
    np.testing.assert_allclose(rec.torque(dict(reversed(gains.items()))), tau, rtol=1e-15)
    with pytest.raises(DataError, match=r"^arm.csv: no gain for joint\(s\) l-hip.y: give one for each of panda_joint1, joint_0.0, l-hip.y$"):
        rec.torque({"panda_joint1": 2.0, "joint_0.0": -0.5})
    with pytest.raises(DataError, match=r"^arm.csv: gains for knee, not joints of the recording"):
        rec.torque({**gains, "knee": 1.0})
    with pytest.raises(DataError, match=r"^arm.csv: 2 gains for 3 joints"):
        rec.torque([1.0, 2.0])
    with pytest.raises(DataError, match=r"^arm.csv: motor currents but no torques: give the gains"):
        rec.torque()
    with pytest.raises(DataError, match=r"^arm.csv: no torques or currents: record tau_<joint> or current_<joint> for joints panda_joint1"):
        Recording(t, sines(t), joints=ROS, source="arm.csv").torque()
    with pytest.raises(DataError, match=r"^arm.csv: time steps .* are not uniform: call prepare"):
        Recording(t**1.1, sines(t), tau=tau, joints=ROS, source="arm.csv").to_recorded()


def test_a_prepared_recording_of_currents_identifies_the_robot():
    """planar2 tracks a Fourier motion, recorded with jitter, stale rows and currents: identify finds the base parameters.

    The true Coulomb friction is zero: its torque steps at every velocity
    reversal, and no interpolation of the torque across a gap of up to 66 ms
    puts the step where the grid's sign(qd) has it (the estimate of FS moves
    by several % then); viscous friction, inertia and gravity are smooth.
    """
    robot = dataclasses.replace(library("planar2"), base=kr.Base.from_values(G=["G1", 0, 0]))
    values = random_parameters(robot, np.random.default_rng(11), wrench=False)
    values.update(G1=-9.81, FS1=0.0, FS2=0.0)
    model = kr.derive(robot)
    fn = model.numeric({k: values[k] for k in model.parameters})
    regs = Regressors(robot, values)
    rng = np.random.default_rng(5)
    tr = FourierTrajectory([0.2, -0.3], 0.8 * rng.normal(size=(2, 3)), 0.8 * rng.normal(size=(2, 3)), 0.25)
    t, source, _ = jittered(rng, rows=1600, stale_rows=400)
    q, qd, qdd = tr.sample(t)
    gains = np.array([3.0, 1.5])
    current = (fn.inverse_dynamics(q, qd, qdd) / gains)[source]
    data = Recording(t, q[source], current=current, joints=robot.joint_labels).prepare(cutoff=3.0).to_recorded(dict(zip(robot.joint_labels, gains)))
    result = identify(regs, data, trim=60)
    base = result.base
    T = base.matrix(result.regressors.bound_values)
    true = T[[base.names.index(name) for name in result.names]] @ np.array([values[name] for name in base.parameters])
    # the regressor on the ~26 ms grid carries central differences' error, (w dt)^2 / 6 = 0.3 % of qdd at the top
    # harmonic (0.75 Hz), and the torque linear interpolation's, h^2 / 8 |tau''|: a few 1e-3 on parameters of 0.05-0.9
    assert np.abs(result.values - true).max() < 5e-3, dict(zip(result.names, result.values - true))


# ---------------------------------------------------------------- names
def test_ros_joint_names_match_exactly_and_take_the_robot_order(tmp_path):
    t = np.arange(20) * 0.01
    q = sines(t)
    path = tmp_path / "ros.csv"
    header = "t,effort_note," + ",".join(f"q_{j}" for j in reversed(ROS)) + "," + ",".join(f"tau_{j}" for j in ROS)
    body = [f"{t[k]:.17g},7," + ",".join(f"{q[k, j]:.17g}" for j in (2, 1, 0)) + "," + ",".join(f"{-q[k, j]:.17g}" for j in range(3)) for k in range(20)]
    path.write_text("\n".join([header] + body) + "\n")
    rec = Recording.read(path, joints=ROS)
    assert rec.joints == ROS
    np.testing.assert_array_equal(rec.q, q)
    np.testing.assert_array_equal(rec.tau, -q)
    assert Recording.read(path).joints == tuple(reversed(ROS))  # no robot: the file's order
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:1: unknown joint name 'joint_0.0' in column q_joint_0.0: the robot's joints are panda_joint1, joint_0_0, l-hip.y"):
        Recording.read(path, joints=("panda_joint1", "joint_0_0", "l-hip.y"))
    # names= maps the recording's names to the robot's
    renamed = Recording.read(path, joints=("a", "b", "c"), names={"panda_joint1": "a", "joint_0.0": "b", "l-hip.y": "c"})
    np.testing.assert_array_equal(renamed.q, q)


URDF = """<?xml version="1.0"?>
<robot name="ros">
  <link name="base"/>
  <link name="thigh"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="shin"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="l-hip.y" type="revolute"><parent link="base"/><child link="thigh"/><axis xyz="0 0 1"/></joint>
  <joint name="joint_0.0" type="revolute"><parent link="thigh"/><child link="shin"/><origin xyz="0.3 0 0"/><axis xyz="0 0 1"/></joint>
</robot>
"""


def test_a_robot_gives_its_joints_and_a_urdf_robot_its_urdf_names(tmp_path):
    from kanerobot.robot.urdf import parse_urdf

    (tmp_path / "legs.urdf").write_text(URDF)
    parsed = parse_urdf(tmp_path / "legs.urdf")
    t = np.arange(12) * 0.01
    arrays = {"t": t, "q": np.column_stack([t, 2 * t]), "joints": np.array(["joint_0.0", "l-hip.y"])}
    rec = Recording.read(arrays, parsed)
    assert rec.joints == ("l-hip.y", "joint_0.0") == parsed.robot.joint_labels  # the URDF's names are the labels
    np.testing.assert_array_equal(rec.q, np.column_stack([2 * t, t]))
    assert Recording.read(arrays, kr.load(tmp_path / "legs.urdf")).joints == rec.joints
    wrong = dict(arrays, joints=np.array(["joint_0_0", "l-hip.y"]))  # a sanitised name is not the joint's
    with pytest.raises(DataError, match=r"^recording: unknown joint name 'joint_0_0' in joints \(q column 0\): the robot's joints are l-hip.y, joint_0.0"):
        Recording.read(wrong, parsed)
    # NPZ without names: the robot's order, if the count matches
    rx90 = kr.load(kr.frames_path("rx90"))
    assert Recording.read({"t": t, "q": np.zeros((12, 6))}, rx90).joints == rx90.joint_labels
    with pytest.raises(DataError, match=r"q has 2 columns but the robot has 6 joints \(1, 2, 3, 4, 5, 6\); save the joint names"):
        Recording.read({"t": t, "q": np.zeros((12, 2))}, rx90)


# ---------------------------------------------------------------- files
def test_write_and_read_back_csv_and_npz(tmp_path):
    rng = np.random.default_rng(2)
    t, source, _ = jittered(rng, rows=200, stale_rows=50)
    rec = Recording(t, sines(t)[source], tau=sines(t, 2)[source], current=rng.normal(size=(200, 3)), joints=ROS)
    for ready in (rec, rec.prepare(decimation=2)):
        for suffix in (".csv", ".npz"):
            path = ready.write(tmp_path / f"run{suffix}")
            back = Recording.read(path)
            assert back.joints == ROS and back.channels == ready.channels and back.source == str(path)
            for name in ("t",) + ready.channels:
                assert np.array_equal(getattr(back, name), getattr(ready, name)), (suffix, name)
            assert back.log == [f"read {len(ready)} samples of {', '.join(ready.channels)} for joints {', '.join(ROS)} from run{suffix}"]
    with pytest.raises(DataError, match=r"cannot write a recording there: use a .csv or .npz file"):
        rec.write(tmp_path / "run.txt")


def write_csv(tmp_path, rows, header="t,q_a,q_b,tau_a,tau_b"):
    """A CSV file: ``header`` then ``rows`` (strings), 12 good rows by default around them."""
    path = tmp_path / "bad.csv"
    path.write_text("\n".join([header] + rows) + "\n")
    return path


def good_rows(count=12, start=0):
    return [f"{0.01 * k:.2f},{k},{2 * k},{-k},1" for k in range(start, start + count)]


@pytest.mark.parametrize(
    "rows, line, words",
    [
        (good_rows(12) + ["0.12,nan,24,-12,1"], 14, "column q_a is nan: remove the line or fill in the value"),
        (good_rows(12) + ["0.12,x,24,-12,1"], 14, "'x' in column q_a is not a number"),
        (good_rows(12) + ["0.12,12,24,-12"], 14, "4 values for 5 columns: give one value per column of the header"),
        (good_rows(14) + ["0.105,14,28,-14,1"], 16, "t = 0.105: time goes back from 0.13 s on the sample before: sort the samples by time"),
        (good_rows(13) + ["0.12,99,24,-12,1"], 15, "t = 0.12: the time stamp of the sample before, with other values: drop one of the two samples"),
    ],
    ids=["nan", "not a number", "fields", "time back", "time repeated"],
)
def test_a_bad_csv_row_gives_one_error_naming_the_file_and_line(tmp_path, rows, line, words):
    path = write_csv(tmp_path, rows + good_rows(5, start=20))
    with pytest.raises(DataError, match=f"^{re.escape(str(path))}:{line}: {re.escape(words)}$"):
        Recording.read(path)


def test_csv_header_mistakes_name_the_column(tmp_path):
    path = write_csv(tmp_path, good_rows(), header="t,q_a,qd_b,tau_a,tau_b")
    with pytest.raises(DataError, match=rf"^{path}:1: qd_<joint> columns for joints b but q_<joint> for a: give qd for every joint or for none"):
        Recording.read(path)
    path = write_csv(tmp_path, good_rows(), header="time,q_a,q_b,tau_a,tau_b")
    with pytest.raises(DataError, match=rf"^{path}:1: no column 't' in the header"):
        Recording.read(path)
    path = write_csv(tmp_path, good_rows(), header="t,q_a,q_b,tau_a,tau_b")
    with pytest.raises(DataError, match=rf"^{path}:1: unknown joint name 'b' in column q_b: the robot's joints are a, c"):
        Recording.read(path, joints=("a", "c"))
    with pytest.raises(DataError, match=rf"^{path}:1: no q column for joint\(s\) c of the robot: record q_<joint> for each of a, b, c"):
        Recording.read(path, joints=("a", "b", "c"))
    path = write_csv(tmp_path, good_rows(3))
    with pytest.raises(DataError, match=rf"^{path}: 3 sample lines: a recording needs at least 10; record longer"):
        Recording.read(path)


def test_a_gap_names_both_lines_and_times(tmp_path):
    rows = good_rows(12) + [f"{0.5 + 0.01 * k:.2f},{k},{2 * k},{-k},1" for k in range(12)]
    path = write_csv(tmp_path, rows)
    rec = Recording.read(path)
    with pytest.raises(DataError, match=rf"^{path}:14: gap of 0.39 s between lines 13 and 14 \(t = 0.11, t = 0.5\), longer than "
                                        rf"max_gap = 0.1 s \(10 times the median step\): split the recording there or give prepare\(max_gap=...\)$"):  # fmt: skip
        rec.prepare()
    assert len(rec.prepare(max_gap=0.4)) == 62  # 0 to 0.61 s every 10 ms
    # a run of stale rows dropped makes a gap too; the message says so
    rows = good_rows(12) + [good_rows(12)[-1].replace("0.11", f"{0.12 + 0.01 * k:.2f}", 1) for k in range(14)] + good_rows(12, start=26)
    rec = Recording.read(write_csv(tmp_path, rows))
    with pytest.raises(DataError, match=r":28: gap of 0.15 s between lines 13 and 28 .*\(14 repeated rows dropped between them: stale='keep' if the robot was at rest\)"):
        rec.prepare()
    assert rec.prepare(stale="keep").log[1] == "kept 14 rows that repeat the previous row (stale='keep')"


def test_array_mistakes_name_the_sample():
    t = np.arange(12) * 0.01
    q = np.zeros((12, 2))
    q[7, 1] = np.nan
    with pytest.raises(DataError, match=r"^recording: sample 7 \(t = 0.07\): q_b is nan: remove the sample or fill in the value$"):
        Recording.read({"t": t, "q": q, "joints": ["a", "b"]})
    with pytest.raises(DataError, match=r"^recording: sample 5 \(t = 0.03\): time goes back from 0.04 s on the sample before"):
        Recording(np.r_[t[:5], 0.03, t[6:]], np.zeros((12, 2)))
    with pytest.raises(DataError, match=r"^recording: no array q \(arrays: t\): give t and q"):
        Recording.read({"t": t})
    with pytest.raises(DataError, match=r"^recording: 3 joint names \(a, b, c\) for 2 columns of q"):
        Recording.read({"t": t, "q": np.zeros((12, 2)), "joints": ["a", "b", "c"]})


def test_the_report_says_what_was_done():
    t = np.arange(100) * 0.01
    text = str(Recording(t, sines(t), joints=ROS, source="walk.npz").prepare(cutoff=5.0))
    assert text.splitlines() == [
        "walk.npz: 100 samples over 0.99 s, uniform steps of 10 ms",
        "  joints: panda_joint1, joint_0.0, l-hip.y",
        "  channels: q, qd, qdd",
        "  - time steps uniform (10 ms within 0.1 %): samples kept as recorded",
        "  - q low-passed by a zero-phase 4th-order Butterworth at 5 Hz (filtfilt) before differentiation",
        "  - qd and qdd by central differences of q (fourth order, five-point stencils)",
    ]
    assert kr.Recording is Recording


def test_byte_order_mark_upper_case_suffix_and_text_arrays(tmp_path):
    written = write_csv(tmp_path, good_rows(12))
    path = tmp_path / "RUN.CSV"
    path.write_text("\ufeff" + written.read_text(), encoding="utf-8")  # a byte-order mark, as some spreadsheets save it
    rec = Recording.read(path)
    assert rec.joints == ("a", "b") and len(rec) == 12 and rec.tau is not None
    t = np.arange(12) * 0.01
    with pytest.raises(DataError, match=r"^recording: q holds values that are not numbers"):
        Recording.read({"t": t, "q": np.array(["x"] * 12)})


def test_a_uniform_3_khz_recording_is_kept_as_recorded():
    t = np.arange(3000) / 3000.0  # a step of 1/3 ms, 333 us once rounded: still uniform
    ready = Recording(t, sines(t)).prepare(cutoff=False)
    assert ready.log[0].startswith("time steps uniform") and np.array_equal(ready.t, t)


def test_joints_put_in_the_robot_order_by_name_or_refused():
    t = np.arange(12) * 0.01
    q = np.column_stack([t, 2 * t])
    assert Recording(t, q, joints=("b", "a")).for_robot(("a", "b")).q[:, 0].tolist() == (2 * t).tolist()
    assert Recording(t, q).for_robot(("a", "b")).joints == ("a", "b")  # unnamed columns: the robot's order
    with pytest.raises(DataError, match=r"joint\(s\) x of the recording are not the robot's \(a, b\)"):
        Recording(t, q, joints=("x", "b")).for_robot(("a", "b"))
