"""kr.simulate: a pendulum's period, energy conservation on every kind of
model, loops that stay closed, rolling constraints that hold, momentum of a
floating base, stiff flexible joints, events, outputs and errors."""

import dataclasses

import numpy as np
import pytest
import sympy
from conftest import derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Frame, KKPlacement, Robot
from kanerobot.simulation import Event, SimulationResult, event, joint_limit, plant

TIGHT = {"rtol": 1e-10, "atol": 1e-12}


def pendulum_robot():
    """One revolute joint about z0, gravity along x0 (G1 > 0 hangs it at q = 0)."""
    th1 = sympy.Symbol("th1")
    return Robot.create("pendulum", [Frame("1", "0", 0, 1, KKPlacement(theta=th1))], base=kr.Base.from_values(G=["G1", 0, 0]))


def test_pendulum_matches_its_small_angle_period():
    model = kr.derive(pendulum_robot())
    values = dict.fromkeys(model.parameters, 0.0)
    J, ml, g = 0.5, 1.0, 9.81  # inertia about the axis, first moment, gravity
    values.update(ZZ1=J, MX1=ml, G1=g)
    period = 2 * np.pi * np.sqrt(J / (ml * g))
    amplitude = 1e-3
    up = event(lambda t, q, qd: q[0], direction=1, name="up")
    result = kr.simulate(model, values, [amplitude, 0.0], (0.0, 5.2 * period), events=up, rtol=1e-11, atol=1e-14)
    crossings = result.events["up"]["t"]
    assert len(crossings) == 5
    measured = np.diff(crossings).mean()
    # The period grows with the amplitude as 1 + a^2/16 (6e-8 here): the small-angle period to 1e-6.
    assert abs(measured / period - 1) < 1e-6
    assert abs(measured / (period * (1 + amplitude**2 / 16)) - 1) < 1e-9
    assert result.relative_energy_drift < 1e-8
    assert result.events["up"]["q"].shape == (5, 1)


def passive(robot, seed, **options):
    return random_parameters(robot, np.random.default_rng(seed), friction=False, wrench=False, **options)


def test_rx90_conserves_energy_without_input_and_friction():
    robot = library("rx90")
    values = passive(robot, 1)
    x0 = np.concatenate([np.random.default_rng(2).uniform(-1, 1, 6), np.zeros(6)])
    result = kr.simulate(derived("rx90"), values, x0, (0.0, 2.0), **TIGHT)
    assert result.kinetic.max() > 1.0  # it moves
    assert result.relative_energy_drift < 1e-8
    np.testing.assert_allclose(result.energy_drift, result.energy_change)  # no work done
    assert result.success and result.q.shape == (len(result.t), 6) and result.tau.shape == (len(result.t), 6)


def test_energy_balance_with_input_and_friction():
    robot = library("rx90")
    values = random_parameters(robot, np.random.default_rng(1), wrench=False)
    for name in values:
        if name.startswith("FS"):
            values[name] = 0.0  # Coulomb friction chatters where a joint stops
    controller = lambda t, q, qd: 5 * np.sin(3 * t + np.arange(6))  # noqa: E731
    result = kr.simulate(derived("rx90"), values, np.zeros(12), (0.0, 1.0), controller, **TIGHT)
    assert abs(result.energy_change[-1]) > 0.1  # the torques and friction change the energy ...
    assert result.relative_energy_drift < 1e-8  # ... by exactly their work
    np.testing.assert_allclose(result.tau[-1], 5 * np.sin(3 + np.arange(6)))


def krang_values(seed=17):
    robot = library("krang")
    values = passive(robot, seed)
    values["G3"] = -9.81
    return robot, values


@pytest.mark.long
def test_passive_krang_conserves_energy():
    robot, values = krang_values()
    x0 = np.concatenate([np.random.default_rng(3).uniform(-0.5, 0.5, 17), np.zeros(17)])
    result = kr.simulate(kr.derive(robot), values, x0, (0.0, 1.0), **TIGHT)
    assert result.kinetic.max() > 10.0
    assert result.relative_energy_drift < 1e-8


@pytest.mark.slow
def test_passive_krang_ten_seconds_energy_drift():
    """The issue's target: 10 s of passive Krang at rtol 1e-10, relative drift below 1e-6."""
    robot, values = krang_values()
    x0 = np.concatenate([np.random.default_rng(3).uniform(-0.5, 0.5, 17), np.zeros(17)])
    result = kr.simulate(kr.derive(robot), values, x0, (0.0, 10.0), rtol=1e-10, atol=1e-12)
    assert result.t[-1] == 10.0
    assert result.relative_energy_drift < 1e-6


def test_compiled_fast_path_agrees_with_numpy():
    robot = library("planar2")
    values = passive(robot, 4)
    model = derived("planar2")
    x0 = [0.3, -0.2, 1.0, 0.5]
    try:
        c = kr.simulate(model, values, x0, (0, 1), t_eval=[0.5, 1.0], backend="c", **TIGHT)
    except KaneRobotError as exc:
        pytest.skip(f"no C backend: {exc}")
    assert plant(c.numeric).fast is not None
    n = kr.simulate(model, values, x0, (0, 1), t_eval=[0.5, 1.0], backend="numpy", **TIGHT)
    assert plant(n.numeric).fast is None
    np.testing.assert_allclose(c.q, n.q, rtol=1e-9, atol=1e-11)
    # Kane's model has no direct program: A and H solve it, on the compiled path too.
    k = kr.simulate(derived("planar2", "kane"), values, x0, (0, 1), t_eval=[0.5, 1.0], backend="c", **TIGHT)
    np.testing.assert_allclose(k.q, n.q, rtol=1e-9, atol=1e-11)


def test_fourbar_stays_closed_and_conserves_energy():
    robot = dataclasses.replace(library("fourbar"), base=kr.Base.from_values(G=[0, "G2", 0]))
    fn = kr.derive(robot).numeric(passive(robot, 3), backend="numpy")
    q0 = fn.configuration([1.0], guess=[-1.0, 1.0, -1.0])
    result = kr.simulate(fn, None, np.concatenate([q0, [0.5]]), (0.0, 2.0), **TIGHT)
    assert result.monitors["closure_residual"].max() < 1e-8
    assert max(fn.closure_residual(q) for q in result.q) < 1e-9
    assert result.relative_energy_drift < 1e-6
    assert np.ptp(result.q[:, 0]) > 0.5  # it swings (0.78 rad with G2 = 9.81)
    assert result.qd.shape == (len(result.t), 1) and result.tau.shape == (len(result.t), 1)


def test_sr400_stays_closed():
    robot = library("sr400")
    fn = derived("sr400").numeric(passive(robot, 2), backend="numpy")
    q0 = fn.configuration([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    result = kr.simulate(fn, None, np.concatenate([q0, 0.3 * np.ones(6)]), (0.0, 0.3), t_eval=np.linspace(0, 0.3, 7), rtol=1e-9, atol=1e-11)
    assert result.monitors["closure_residual"].max() < 1e-8
    assert result.relative_energy_drift < 1e-6


def test_diffdrive_keeps_rolling_and_conserves_energy():
    robot = library("diffdrive")
    fn = derived("diffdrive").numeric(passive(robot, 5), backend="numpy")
    x0 = np.concatenate([np.zeros(fn.n), [1.0, 0.5]])
    result = kr.simulate(fn, None, x0, (0.0, 2.0), **TIGHT)
    assert result.monitors["constraint_residual"].max() < 1e-9
    assert result.relative_energy_drift < 1e-8
    assert np.hypot(*result.q[-1, :2]) > 0.1  # the base moved


@pytest.mark.long
def test_flexible_joints_with_stiff_solvers():
    robot = library("planar2flex")
    values = passive(robot, 6)
    values.update(k1=1e5, k2=1e5)
    fn = derived("planar2flex").numeric(values)
    x0 = [0.3, -0.2, 0.3, -0.2, 0.0, 0.0, 0.0, 0.0]
    for method in ("Radau", "BDF"):
        result = kr.simulate(fn, None, x0, (0.0, 0.5), method=method, rtol=1e-8, atol=1e-10)
        assert result.success and result.njev > 0
        assert result.relative_energy_drift < 1e-5
        assert result.monitors["deflection"].shape == (len(result.t), 2)
        assert np.abs(result.monitors["deflection"]).max() < 1e-2  # stiff springs: the links follow the motors


def test_floating_base_conserves_momentum():
    robot = library("satellite")
    values = passive(robot, 7, gravity=0.0)
    rng = np.random.default_rng(8)
    x0 = np.concatenate([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0, 1.0], [0.3, -0.2, 0.5], rng.uniform(-1, 1, 9)])
    result = kr.simulate(derived("satellite"), values, x0, (0.0, 3.0), **TIGHT)
    momentum = result.monitors["momentum"]
    assert np.abs(momentum[0]).max() > 0.1
    assert np.abs(momentum - momentum[0]).max() < 1e-8 * np.abs(momentum[0]).max()
    assert result.monitors["quaternion_norm_error"].max() < 1e-9
    np.testing.assert_allclose(np.linalg.norm(result.q[:, 3:7], axis=1), 1.0, atol=1e-15)
    assert result.monitors["base_pose"].shape == (len(result.t), 4, 4)
    np.testing.assert_allclose(result.monitors["base_pose"][:, :3, 3], result.q[:, :3])
    assert result.relative_energy_drift < 1e-8
    assert np.abs(result.q[-1, 3:7] - [0, 0, 0, 1]).max() > 0.01  # the base turned


def test_floating_base_under_gravity_falls_freely():
    robot = library("satellite")
    values = passive(robot, 7)
    g = np.array([values["G1"], values["G2"], values["G3"]])
    x0 = np.concatenate([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.3, -0.2, 0.5], np.zeros(9)])
    result = kr.simulate(derived("satellite"), values, x0, (0.0, 1.0), t_eval=[1.0], **TIGHT)
    # Linear momentum grows as m g t: the centre of mass falls freely.
    mass = sum(values[f"M{j}"] for j in range(4))
    np.testing.assert_allclose(result.monitors["momentum"][-1, :3], mass * g * 1.0, rtol=1e-8, atol=1e-9)


def test_joint_limits_stop_or_record():
    robot = pendulum_robot()
    model = kr.derive(robot)
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(ZZ1=0.5, MX1=1.0, G1=9.81)
    fn = model.numeric(values, backend="numpy")
    stop = kr.simulate(fn, None, [1.0, 0.0], (0.0, 5.0), events=[joint_limit("1", lower=-0.5)])
    assert stop.terminated_by == "limit 1" and stop.status == 1
    assert stop.q[-1, 0] == pytest.approx(-0.5, abs=1e-8)
    assert stop.t[-1] < 1.0
    record = kr.simulate(fn, None, [1.0, 0.0], (0.0, 3.0), events=[joint_limit(0, -0.5, terminal=False), lambda t, q, qd: qd[0]])
    assert record.terminated_by is None and record.t[-1] == 3.0
    assert len(record.events["limit 0"]["t"]) >= 2
    assert len(record.events["<lambda>"]["t"]) >= 2  # velocity zero at each turn
    with pytest.raises(KaneRobotError, match="'9' is not a coordinate of pendulum"):
        kr.simulate(fn, None, [1.0, 0.0], (0.0, 1.0), events=[joint_limit("9", upper=1.0)])
    with pytest.raises(KaneRobotError, match="needs a lower or an upper limit"):
        joint_limit(0)


def test_events_on_a_flexible_motor():
    values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
    result = kr.simulate(derived("flexarm1"), values, [0.0, 0.0, 0.0, 0.0], (0.0, 2.0), controller=[1.0],
                         events=joint_limit("qr1", upper=0.05), method="Radau", backend="numpy")  # fmt: skip
    assert result.terminated_by == "limit qr1"
    assert result.q[-1, 1] == pytest.approx(0.05, abs=1e-8)


def test_progress_is_shown_on_stderr(capsys):
    robot = pendulum_robot()
    model = kr.derive(robot)
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(ZZ1=0.5, MX1=1.0, G1=9.81)
    kr.simulate(model, values, [0.1, 0.0], (0.0, 1.0), progress=True, backend="numpy")
    err = capsys.readouterr().err
    assert "simulate pendulum: done, t = 1 s" in err and "relative energy drift" in err
    kr.simulate(model, values, [0.1, 0.0], (0.0, 1.0), backend="numpy")
    assert capsys.readouterr().err == ""


def test_save_npz_and_csv(tmp_path):
    robot = library("planar2")
    fn = derived("planar2").numeric(passive(robot, 1), backend="numpy")
    result = kr.simulate(fn, None, [0, 0, 1, 0], (0, 1), t_eval=np.linspace(0, 1, 5))
    assert isinstance(result, SimulationResult) and "planar2" in repr(result)
    data = np.load(result.save(tmp_path / "run.npz"))
    np.testing.assert_array_equal(data["q"], result.q)
    np.testing.assert_array_equal(data["energy"], result.energy)
    table = np.genfromtxt(result.save(tmp_path / "run.csv"), delimiter=",", names=True)
    np.testing.assert_allclose(table["q_2"], result.q[:, 1])
    assert table.shape == (5,)
    with pytest.raises(KaneRobotError, match=r"use a .npz or .csv file"):
        result.save(tmp_path / "run.txt")
    summary = result.summary()
    assert summary["samples"] == 5 and summary["kind"] == "fixed base"


def test_clear_errors():
    robot = library("planar2")
    model = derived("planar2")
    values = passive(robot, 1)
    with pytest.raises(KaneRobotError, match=r"x0 for planar2 must have 4 values: q \(2: joints 1, 2\) then qd"):
        kr.simulate(model, values, [0, 0, 1], (0, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match=r"controller returned torques of shape \(3,\) at t = 0; planar2 needs 2 torques"):
        kr.simulate(model, values, [0, 0, 1, 0], (0, 1), lambda t, q, qd: np.zeros(3), backend="numpy")
    with pytest.raises(KaneRobotError, match="not finite"):
        kr.simulate(model, values, [0, 0, 1, 0], (0, 1), lambda t, q, qd: [np.nan, 0.0], backend="numpy")
    with pytest.raises(KaneRobotError, match="constant torques for planar2 must have 2 values"):
        kr.simulate(model, values, [0, 0, 1, 0], (0, 1), [1.0, 2.0, 3.0], backend="numpy")
    with pytest.raises(KaneRobotError, match="t_span must be"):
        kr.simulate(model, values, [0, 0, 1, 0], (1, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match="values are needed"):
        kr.simulate(model, None, [0, 0, 1, 0], (0, 1))
    fn = model.numeric(values, backend="numpy")
    with pytest.raises(KaneRobotError, match="already numeric"):
        kr.simulate(fn, values, [0, 0, 1, 0], (0, 1))
    fourbar = derived("fourbar").numeric(passive(library("fourbar"), 1), backend="numpy")
    with pytest.raises(KaneRobotError, match=r"does not close the loops .* fn.configuration\(q_active\)"):
        kr.simulate(fourbar, None, [0.1, 0.2, 0.3, 0.4, 0.0], (0, 1))
    with pytest.raises(KaneRobotError, match=r"x0 for fourbar must have 5 values: q \(4: every joint 1, 2, 3, 4, closing the loops\) then qd \(1: the active joints 1\)"):
        kr.simulate(fourbar, None, [0.1, 0.2], (0, 1))
    satellite = library("satellite")
    with pytest.raises(KaneRobotError, match=r"quaternion q\[3:7\] \(x y z w\) is zero"):
        kr.simulate(derived("satellite"), passive(satellite, 1), np.zeros(19), (0, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match=r"x0 for satellite must have 19 values: q \(10: base x y z, quaternion x y z w, joints 1, 2, 3\)"):
        kr.simulate(derived("satellite"), passive(satellite, 1), np.zeros(18), (0, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match="an event needs a function"):
        Event(3.0)


# ---------------------------------------------------------------- joint limits of the robot (issue 25)
#: One hinge about y at 1 m, an arm of mass 2 with its centre 0.5 along x: from rest at q = 0 (horizontal)
#: gravity -z turns it towards +q (x -> -z), onto its upper limit 1.2.
HINGE = """<robot name="hinge"><link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/>
    <limit lower="-0.3" upper="1.2" effort="20" velocity="4"/></joint>
</robot>"""
M, L, G, J, UPPER = 2.0, 0.5, 9.81, 0.03 + 2.0 * 0.5**2, 1.2


@pytest.fixture(scope="module")
def hinge(tmp_path_factory):
    """The URDF's file, and its numeric model (numpy backend: nothing to compile)."""
    path = tmp_path_factory.mktemp("hinge") / "hinge.urdf"
    path.write_text(HINGE)
    robot = kr.load(path)
    return path, kr.derive(robot).numeric(robot.values, backend="numpy")


def fall_time(angle):
    """Time to fall from rest at 0 to ``angle``: J qd^2 / 2 = m g l sin q, t = int dq / qd (q = u^2: no singularity)."""
    from scipy.integrate import quad

    return quad(lambda u: 2 * u / np.sqrt(2 * M * G * L * np.sin(u * u) / J), 0.0, np.sqrt(angle), epsabs=1e-13, epsrel=1e-13)[0]


def test_a_urdf_limit_stops_the_run_by_default(hinge):
    _path, fn = hinge
    result = kr.simulate(fn, None, [0.0, 0.0], (0.0, 2.0))
    assert result.limits == "stop" and result.terminated_by == "limit hinge" and result.status == 1
    assert result.t[-1] == pytest.approx(fall_time(UPPER), rel=1e-7)
    assert result.q[-1, 0] == pytest.approx(UPPER, abs=1e-9)
    (stop,) = result.limit_events
    assert (stop["joint"], stop["side"], stop["limit"], stop["event"]) == ("hinge", "upper", UPPER, "stop")
    assert stop["t"] == result.t[-1] and stop["rate"] == pytest.approx(np.sqrt(2 * M * G * L * np.sin(UPPER) / J), rel=1e-7)
    assert "joint 'hinge' reached its upper limit 1.2 at t = " in result.message


def test_the_impact_law_keeps_the_joint_inside_and_takes_the_energy_of_restitution(hinge):
    _path, fn = hinge
    e = 0.5
    t = np.linspace(0.0, 3.0, 3001)
    result = kr.simulate(fn, None, [0.0, 0.0], (0.0, 3.0), limits="impact", restitution=e, t_eval=t)
    assert result.t[-1] == 3.0 and result.q[:, 0].max() <= UPPER + 1e-9
    impacts = [r for r in result.limit_events if r["event"] == "impact"]
    first = impacts[0]
    assert first["t"] == pytest.approx(fall_time(UPPER), rel=1e-7)
    assert first["rebound"] == pytest.approx(-e * first["rate"], rel=1e-12)
    # between the first two impacts the energy is the potential at the stop plus e^2 of the kinetic energy before
    kinetic = M * G * L * np.sin(UPPER)  # J qd^2 / 2 on arrival, from rest at q = 0 (U = -m g l sin q)
    flight = (result.t > first["t"] + 1e-6) & (result.t < impacts[1]["t"] - 1e-6)
    assert flight.sum() > 10
    np.testing.assert_allclose(result.energy[flight], -kinetic + e**2 * kinetic, rtol=1e-7)
    # the kinetic energy the impacts took is in the work: the energy balance still closes
    assert result.relative_energy_drift < 1e-6
    # the rebounds shrink by e until the arm rests on its stop, pressed by gravity
    assert [r["event"] for r in result.limit_events][-1] == "rest"
    assert result.q[-1, 0] == pytest.approx(UPPER, abs=1e-9) and result.qd[-1, 0] == 0.0


def test_ignore_passes_the_limit_as_before(hinge):
    _path, fn = hinge
    result = kr.simulate(fn, None, [0.0, 0.0], (0.0, 2.0), limits="ignore")
    assert result.t[-1] == 2.0 and result.q[:, 0].max() > UPPER + 0.5 and result.limit_events == []


def test_limits_are_checked(hinge):
    _path, fn = hinge
    with pytest.raises(KaneRobotError, match=r"x0 puts joint 'hinge' at 1\.5, beyond its upper limit 1\.2"):
        kr.simulate(fn, None, [1.5, 0.0], (0.0, 1.0))
    with pytest.raises(KaneRobotError, match="limits must be one of 'stop', 'impact', 'ignore', got 'clamp'"):
        kr.simulate(fn, None, [0.0, 0.0], (0.0, 1.0), limits="clamp")
    with pytest.raises(KaneRobotError, match=r"restitution must be a number in \[0, 1\], got 1\.5"):
        kr.simulate(fn, None, [0.0, 0.0], (0.0, 1.0), limits="impact", restitution=1.5)


def test_the_command_line_takes_the_limit_law(hinge, tmp_path, capsys):
    from kanerobot.cli import main

    path, _ = hinge
    assert main(["simulate", str(path), "--t", "1", "--samples", "11"]) == 0
    out, err = capsys.readouterr()
    assert "terminated_by          limit hinge" in out
    assert "joint 'hinge' reached its upper limit 1.2 at t = " in err and "--limits impact" in err
    assert main(["simulate", str(path), "--t", "1", "--samples", "11", "--limits", "impact", "--restitution", "0.3"]) == 0
    out, err = capsys.readouterr()
    assert "final_time             1" in out and "limit_events" in out
    with pytest.raises(SystemExit) as stop:  # argparse's usage error: one line, status 2
        main(["simulate", str(path), "--restitution", "2"])
    assert stop.value.code == 2 and "argument --restitution: takes a coefficient of restitution in [0, 1]" in capsys.readouterr().err


TWO = """<robot name="two"><link name="base"/>
  <link name="a"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.3 0 0.05"/><mass value="0.7"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.015" iyz="0" izz="0.015"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 1 0"/><limit lower="-0.2" upper="0.2" effort="1" velocity="1"/></joint>
</robot>"""


def test_an_impact_on_two_joints_takes_the_energy_of_the_inertia_it_meets(tmp_path):
    """The elbow strikes its stop while the shoulder swings: the impulse acts on the elbow alone, so
    the kinetic energy drops by (1 - e^2) r^2 / (2 (A^-1)_jj), A the mass matrix at the impact."""
    path = tmp_path / "two.urdf"
    path.write_text(TWO)
    robot = kr.load(path)
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    e = 0.3
    result = kr.simulate(fn, None, [0.0, 0.0, 0.0, 0.0], (0.0, 2.0), limits="impact", restitution=e)
    first, second = result.limit_events[:2]
    assert (first["joint"], first["event"]) == ("elbow", "impact") and first["rebound"] == pytest.approx(-e * first["rate"], rel=1e-12)
    (at,) = np.flatnonzero(result.t == first["t"])  # the last output before the impact
    w = np.linalg.inv(np.asarray(fn.mass_matrix(result.q[at]), dtype=float))[1, 1]
    flight = (result.t > first["t"]) & (result.t < second["t"])
    expected = result.energy[0] - (1 - e**2) * first["rate"] ** 2 / (2 * w)
    np.testing.assert_allclose(result.energy[flight], expected, rtol=1e-7)
    # the elbow stays between its stops, comes to rest on them and leaves them; no energy is lost but at the impacts
    assert -0.2 - 1e-9 <= result.q[:, 1].min() and result.q[:, 1].max() <= 0.2 + 1e-9
    events = [(r["joint"], r["event"]) for r in result.limit_events]
    assert ("elbow", "rest") in events and ("elbow", "release") in events
    assert result.relative_energy_drift < 1e-6
