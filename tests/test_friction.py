"""Coulomb friction in kr.simulate (issue 13, defect 2) and simulate()'s own input checks.

The references are closed forms: a one-link arm at rest sticks while its
gravity torque ``m g l cos q`` is below ``FS`` and slips above; a slider
on a horizontal plane decelerates at ``FS / m`` and stops at ``t = v0 m /
FS``; the regularised law ``FS tanh(qd / v_s)`` creeps at ``v_s
atanh(tau / FS)``.  On the other structures the laws are held against each
other, the energy balance and (floating base) the momentum.
"""

import dataclasses

import numpy as np
import pytest
import sympy
from conftest import derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Frame, KKPlacement, Robot, default_dynamics
from kanerobot.simulation import DEFAULT_FRICTION_VELOCITY, event, joint_limit, right_hand_side

# a one-link arm turning about z0 in a vertical plane, gravity along -y0:
# its gravity torque is m g l cos(q) with the first moment m l = MX1
J, ML, G = 0.6, 1.0, 9.81
FS = 4.0
THRESHOLD = float(np.arccos(FS / (ML * G)))  # above this angle gravity (m g l cos q) is below FS


def arm(fs="FS1"):
    th1 = sympy.Symbol("th1")
    dynamics = {"1": dict(default_dynamics("1"), FS=fs)}
    frames = [Frame("1", "0", 0, 1, KKPlacement(theta=th1))]
    return Robot.create("arm", frames, dynamics=dynamics, base=kr.Base.from_values(G=[0, "G2", 0]))


def arm_model():
    model = kr.derive(arm())
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(ZZ1=J, MX1=ML, G2=-G, FS1=FS)
    return model, values


def slider_model(m, fs):
    """A prismatic joint along z0 on a horizontal plane (gravity along x0, across the joint)."""
    r1 = sympy.Symbol("r1")
    robot = Robot.create("slider", [Frame("1", "0", 1, 1, KKPlacement(r=r1))], base=kr.Base.from_values(G=["G1", 0, 0]))
    model = kr.derive(robot)
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(M1=m, FS1=fs)
    values.update({k: 9.81 for k in values if k == "G1"})
    return model, values


def gravity_torque(q):
    return ML * G * np.cos(q)


# ---------------------------------------------------------------- stick and slip, exactly
def test_arm_below_the_threshold_sticks_exactly():
    model, values = arm_model()
    q0 = THRESHOLD + 0.05  # m g l cos q0 = 3.53 < FS = 4
    result = kr.simulate(model, values, [q0, 0.0], (0.0, 2.0), friction="stick-slip", backend="numpy")
    assert result.t[-1] == 2.0
    assert np.all(result.q[:, 0] == q0) and np.all(result.qd == 0.0) and np.all(result.qdd == 0.0)
    # the holding torque is the gravity torque, below FS
    np.testing.assert_allclose(result.friction[:, 0], -gravity_torque(q0), rtol=1e-12)
    assert abs(result.friction[0, 0]) < FS
    assert result.friction_events == [{"t": 0.0, "joint": "1", "event": "stick"}]
    assert np.all(result.friction_work == 0.0) and np.all(result.energy_drift == 0.0)


def test_arm_above_the_threshold_slips_at_once():
    model, values = arm_model()
    q0 = THRESHOLD - 0.05  # m g l cos q0 = 4.45 > FS
    result = kr.simulate(model, values, [q0, 0.0], (0.0, 0.5), t_eval=[0.0, 0.5], friction="stick-slip", backend="numpy")
    assert result.friction_events == [{"t": 0.0, "joint": "1", "event": "slip"}]
    # J qdd = -m g l cos q + FS: gravity wins by the excess over FS, friction at its bound
    np.testing.assert_allclose(result.qdd[0, 0], (FS - gravity_torque(q0)) / J, rtol=1e-12)
    np.testing.assert_allclose(result.friction[0, 0], -FS, rtol=1e-12)
    assert result.q[-1, 0] < q0 - 0.05 and result.qd[-1, 0] < 0


def test_arm_swings_and_sticks_where_gravity_falls_below_FS():
    """Released above the threshold it swings about the bottom (q = -pi/2) losing
    FS |dq| a swing; it can stop only where m g l |cos q| <= FS, and stays."""
    model, values = arm_model()
    result = kr.simulate(model, values, [0.3, 0.0], (0.0, 8.0), friction="stick-slip", backend="numpy")
    events = result.friction_events
    kinds = [e["event"] for e in events]
    assert kinds[0] == "slip" and kinds[-1] == "stick" and "reverse" in kinds
    for e in events[1:]:
        q = np.interp(e["t"], result.t, result.q[:, 0])
        if e["event"] == "reverse":  # stopped where gravity exceeds FS: could not stay
            assert gravity_torque(q) ** 2 > FS**2
        else:
            assert gravity_torque(q) ** 2 <= FS**2
    stuck = result.t > events[-1]["t"]
    assert stuck.sum() > 1 and np.all(result.qd[stuck] == 0.0) and np.ptp(result.q[stuck, 0]) == 0.0
    assert abs(result.q[-1, 0] + np.pi / 2) < np.arccos(FS / (ML * G)) + 1e-12
    # the energy lost is the friction work FS * (path length) of the exact law
    path = np.sum(np.abs(np.diff(result.q[:, 0])))
    assert abs(result.friction_work[-1] - FS * path) < 1e-6 * result.friction_work[-1]
    assert np.max(np.abs(result.energy_drift)) < 1e-7 * result.friction_work[-1]


# ---------------------------------------------------------------- the regularised default
@pytest.mark.parametrize("v_s", [None, 1e-4])
def test_regularised_arm_creeps_below_the_threshold_at_the_documented_rate(v_s):
    model, values = arm_model()
    q0 = THRESHOLD + 0.05
    result = kr.simulate(model, values, [q0, 0.0], (0.0, 1.0), friction_velocity=v_s, backend="numpy")
    scale = DEFAULT_FRICTION_VELOCITY if v_s is None else v_s
    assert result.friction_law == "regularised" and result.friction_velocity == scale
    # J qdd = -tau_g - FS tanh(qd / v_s): qd rises to the creep rate v_s atanh(tau_g / FS) and no further
    creep = scale * np.arctanh(gravity_torque(result.q[:, 0].min()) / FS)
    assert np.max(np.abs(result.qd)) <= creep * (1 + 1e-6)
    assert np.max(np.abs(result.qd)) > 0.9 * scale * np.arctanh(gravity_torque(q0) / FS)
    assert q0 - result.q[-1, 0] < creep * 1.0
    assert result.relative_energy_drift < 1e-6


def test_regularised_arm_above_the_threshold_slips():
    model, values = arm_model()
    q0 = THRESHOLD - 0.05
    result = kr.simulate(model, values, [q0, 0.0], (0.0, 0.5), t_eval=[0.0, 0.5], backend="numpy")
    exact = kr.simulate(model, values, [q0, 0.0], (0.0, 0.5), t_eval=[0.0, 0.5], friction="stick-slip", backend="numpy")
    assert result.q[-1, 0] < q0 - 0.05
    # the laws differ while |qd| ~ v_s: breaking away, the regularised joint gains about v_s of speed
    # on the exact one (friction below FS until then), so they part by about v_s t
    for v_s in (None, 1e-4):
        smooth = kr.simulate(model, values, [q0, 0.0], (0.0, 0.5), t_eval=[0.0, 0.5], friction_velocity=v_s, backend="numpy")
        scale = v_s or DEFAULT_FRICTION_VELOCITY
        assert 0.5 * scale * 0.5 < abs(smooth.q[-1, 0] - exact.q[-1, 0]) < 3 * scale * 0.5


def test_regularised_law_is_the_models_coulomb_term_away_from_rest():
    """The model re-bound with FS = 0 plus FS tanh(qd / v_s) equals the generated
    model's FS sign(qd) where tanh is 1 to rounding (qd >> v_s)."""
    model, values = arm_model()
    fn = model.numeric(values, backend="numpy")
    for law in ("regularised", "model"):
        f = right_hand_side(model, values, friction=law, backend="numpy")
        for q, qd in ((0.3, 0.5), (1.2, -0.2)):
            np.testing.assert_allclose(f(0.0, [q, qd])[1], fn.direct_dynamics([q], [qd], [0.0])[0], rtol=1e-13)
    f = right_hand_side(model, values, backend="numpy")
    np.testing.assert_allclose(f(0.0, [0.3, 0.0])[1], -gravity_torque(0.3) / J, rtol=1e-13)  # tanh(0) = 0: no friction at rest


# ---------------------------------------------------------------- a sliding joint
def test_slider_decelerates_at_FS_over_m_and_stays_stopped():
    m, fs, v0 = 1.5, 3.0, 2.0
    stop = v0 * m / fs  # 1 s, at q = v0^2 m / (2 FS) = 1
    model, values = slider_model(m, fs)
    times = np.linspace(0.0, 2.0, 41)
    result = kr.simulate(model, values, [0.0, v0], (0.0, 2.0), t_eval=times, friction="stick-slip", backend="numpy")
    sliding = times < stop
    np.testing.assert_allclose(result.qd[sliding, 0], v0 - fs / m * times[sliding], atol=1e-9)
    np.testing.assert_allclose(result.q[sliding, 0], v0 * times[sliding] - fs / (2 * m) * times[sliding] ** 2, atol=1e-9)
    np.testing.assert_allclose(result.qdd[sliding, 0], -fs / m, rtol=1e-12)
    assert [e["event"] for e in result.friction_events] == ["stick"]
    assert abs(result.friction_events[0]["t"] - stop) < 1e-9
    after = times > stop
    assert np.all(result.qd[after] == 0.0) and np.all(result.qdd[after] == 0.0)
    np.testing.assert_allclose(result.q[after, 0], v0**2 * m / (2 * fs), atol=1e-9)
    np.testing.assert_allclose(result.friction_work[-1], 0.5 * m * v0**2, rtol=1e-9)  # all the kinetic energy
    assert np.max(np.abs(result.energy_drift)) < 1e-9

    smooth = kr.simulate(model, values, [0.0, v0], (0.0, 2.0), t_eval=times, backend="numpy")
    # tanh(qd / v_s) = 1 until qd ~ v_s: the same stop, to v_s-sized distances
    np.testing.assert_allclose(smooth.q[:, 0], result.q[:, 0], atol=1e-5)
    assert np.max(np.abs(smooth.qd[after])) < DEFAULT_FRICTION_VELOCITY
    np.testing.assert_allclose(smooth.friction_work[-1], 0.5 * m * v0**2, rtol=1e-6)


@pytest.mark.parametrize("friction", ["stick-slip", "regularised"])
def test_user_events_across_stick_slip_phases(friction):
    """q = v0 t - FS t^2 / (2 m): recorded at q = 0.5, stopped at the limit q = 0.9."""
    m, fs, v0 = 1.5, 3.0, 2.0
    model, values = slider_model(m, fs)
    half = event(lambda t, q, qd: q[0] - 0.5, name="half")
    limit = joint_limit("1", upper=0.9)
    result = kr.simulate(model, values, [0.0, v0], (0.0, 2.0), events=[half, limit], friction=friction, backend="numpy")
    a = fs / m
    np.testing.assert_allclose(result.events["half"]["t"], [(v0 - np.sqrt(v0**2 - 2 * a * 0.5)) / a], rtol=1e-7)
    np.testing.assert_allclose(result.events["limit 1"]["t"], [(v0 - np.sqrt(v0**2 - 2 * a * 0.9)) / a], rtol=1e-7)
    assert result.terminated_by == "limit 1" and result.t[-1] == result.events["limit 1"]["t"][0]
    assert result.friction_events == []  # it never stopped


def test_a_negative_FS_is_refused():
    model, values = arm_model()
    for friction in ("regularised", "stick-slip"):
        # the numeric model's physical check speaks first, naming the value
        with pytest.raises(KaneRobotError, match=r"FS = -1 < 0"):
            kr.simulate(model, dict(values, FS1=-1.0), [0.3, 0.0], (0.0, 1.0), friction=friction, backend="numpy")


# ---------------------------------------------------------------- the RX-90 of the report
def rx90_with_coulomb():
    robot = library("rx90")
    values = random_parameters(robot, np.random.default_rng(0))
    values.update({name: 1.0 for name in values if name.startswith("FS")})
    return derived("rx90"), values


def test_passive_rx90_with_FS_1_simulates_one_second():
    model, values = rx90_with_coulomb()
    fn = model.numeric(values)
    runs = {law: kr.simulate(fn, None, np.zeros(12), (0.0, 1.0), friction=law) for law in ("regularised", "stick-slip")}
    for law, result in runs.items():
        assert result.success and result.t[-1] == 1.0, law
        # passive: the energy lost is the friction work, to the integration error
        assert result.friction_work[-1] > 1.0
        assert abs(result.energy_change[-1] + result.friction_work[-1]) < 1e-6 * result.friction_work[-1], law
        assert result.relative_energy_drift < 1e-8, law
    kinds = {e["event"] for e in runs["stick-slip"].friction_events}
    assert {"stick", "slip"} <= kinds
    # two laws, two paths: the same motion to the creep of the regularised one
    np.testing.assert_allclose(runs["regularised"].q[-1], runs["stick-slip"].q[-1], atol=5e-3)
    # the two laws differ by the regularised law's creep, of the order of v_s = 1e-3 (relative)
    np.testing.assert_allclose(runs["regularised"].friction_work[-1], runs["stick-slip"].friction_work[-1], rtol=1e-3)


# ---------------------------------------------------------------- other structures
def both_laws(fn, x0, t1, **options):
    return {law: kr.simulate(fn, None, x0, (0.0, t1), friction=law, **options) for law in ("regularised", "stick-slip")}


def test_closed_loop_friction_on_every_joint():
    robot = dataclasses.replace(library("fourbar"), base=kr.Base.from_values(G=[0, "G2", 0]))
    values = random_parameters(robot, np.random.default_rng(3), wrench=False)
    values.update({name: 0.5 for name in values if name.startswith("FS")})
    fn = kr.derive(robot).numeric(values, backend="numpy")
    q0 = fn.configuration([1.0], guess=[-1.0, 1.0, -1.0])
    runs = both_laws(fn, np.concatenate([q0, [0.0]]), 1.0)
    for result in runs.values():
        assert result.friction_labels == ["1", "2", "3", "4"] and np.all(result.friction[:, 3] == 0.0)  # FS4 = 0
        assert result.friction_work[-1] > 0.1 and result.relative_energy_drift < 1e-8
        assert result.monitors["closure_residual"].max() < 1e-8
    np.testing.assert_allclose(runs["regularised"].q[-1], runs["stick-slip"].q[-1], atol=1e-2)


def test_flexible_joint_friction_on_the_motor():
    values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.3, "K1": 100.0}
    fn = derived("flexarm1").numeric(values, backend="numpy")
    runs = both_laws(fn, [0.5, 0.5, 0.0, 0.0], 1.0, method="Radau")
    for result in runs.values():
        assert result.friction_labels == ["1", "r1"] and np.all(result.friction[:, 0] == 0.0)  # the link side has none
        assert result.friction_work[-1] > 0.01 and result.relative_energy_drift < 1e-6
    assert {"stick", "slip"} <= {e["event"] for e in runs["stick-slip"].friction_events}
    np.testing.assert_allclose(runs["regularised"].q[-1], runs["stick-slip"].q[-1], atol=1e-2)


@pytest.mark.long
def test_floating_base_joint_friction_keeps_the_momentum():
    robot = library("satellite")
    values = random_parameters(robot, np.random.default_rng(4), wrench=False)
    values.update({name: 0.2 for name in values if name.startswith("FS")})
    values.update({name: 0.0 for name in ("G1", "G2", "G3") if name in values})  # in orbit
    fn = derived("satellite").numeric(values, backend="numpy")
    q = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], np.zeros(3)])
    qd = np.concatenate([np.zeros(6), [1.0, -0.5, 0.8]])
    A = np.asarray(fn.mass_matrix(q))
    qd[:6] = -np.linalg.solve(A[:6, :6], A[:6, 6:] @ qd[6:])  # zero momentum
    runs = both_laws(fn, np.concatenate([q, qd]), 1.6)
    for result in runs.values():
        assert result.summary()["max_momentum_change"] < 1e-8  # friction is internal
        assert result.relative_energy_drift < 1e-6
    exact = runs["stick-slip"]
    # the joints stop for good: no torque drives them once the relative motion is gone
    assert {e["joint"] for e in exact.friction_events if e["event"] == "stick"} == {"1", "2", "3"}
    assert np.abs(exact.qd[-1, 6:]).max() < 1e-20 and abs(exact.kinetic[-1]) < 1e-12
    np.testing.assert_allclose(exact.friction_work[-1], exact.kinetic[0], rtol=1e-8)


@pytest.mark.slow
def test_wheeled_base_friction():
    robot = library("diffdrive")
    values = random_parameters(robot, np.random.default_rng(3), wrench=False)
    values.update({name: 0.01 for name in values if name.startswith("FS")})
    fn = derived("diffdrive").numeric(values, backend="numpy")
    x0 = np.zeros(fn.n + fn.m)
    x0[-2:] = [1.0, 0.5]
    runs = both_laws(fn, x0, 1.0)
    for result in runs.values():
        assert result.friction_work[-1] > 0 and result.relative_energy_drift < 1e-8
    np.testing.assert_allclose(runs["regularised"].q[-1], runs["stick-slip"].q[-1], atol=1e-3)


# ---------------------------------------------------------------- simulate()'s own inputs
class Untouchable:
    """A model that fails the test if simulate looks at it: the inputs are checked first."""

    def __getattr__(self, name):
        raise AssertionError(f"simulate used the model ({name}) before checking its own inputs")


@pytest.mark.parametrize(
    "x0, t_span, options, message",
    [
        ([0.0, 0.0], (0.0, 1.0), {"t_eval": []}, r"t_eval must be a non-empty list of output times in t_span \[0, 1\], got \[\]"),
        ([0.0, 0.0], (0.0, 1.0), {"t_eval": [0.0, 1.5]}, r"t_eval\[1\] = 1.5 is outside t_span \[0, 1\]"),
        ([0.0, 0.0], (0.0, 1.0), {"t_eval": [-0.5, 0.5]}, r"t_eval\[0\] = -0.5 is outside t_span \[0, 1\]"),
        ([0.0, 0.0], (0.0, 1.0), {"t_eval": [0.0, 0.5, 0.2]}, r"t_eval must increase strictly: t_eval\[2\] = 0.2 follows t_eval\[1\] = 0.5"),
        ([0.0, 0.0], (0.0, 1.0), {"t_eval": [0.0, np.nan]}, r"t_eval\[1\] = nan is outside t_span"),
        ([0.0, 0.0], (1.0, 0.0), {}, r"t_span must be \(start, end\) with end > start: \(1.0, 0.0\) runs backwards \(end 0 < start 1\)"),
        ([0.0, 0.0], (1.0, 1.0), {}, r"t_span must be \(start, end\) with end > start: \(1.0, 1.0\) is empty"),
        ([0.0, 0.0], (0.0, np.inf), {}, r"t_span must be two finite times \(start, end\), got \(0.0, inf\)"),
        ([0.0, 0.0], 5.0, {}, r"t_span must be \(start, end\) times, got 5.0"),
        ([0.0, np.nan], (0.0, 1.0), {}, r"x0 has values that are not finite at \[1\]: \[nan\]"),
        ([[0.0, 0.0]], (0.0, 1.0), {}, r"x0 must be one flat array \(q then qd\), got shape \(1, 2\)"),
        ([0.0, 0.0], (0.0, 1.0), {"friction": "coulomb"}, r"friction must be one of 'regularised', 'stick-slip', 'model', got 'coulomb'"),
    ],
)
def test_simulate_checks_its_inputs_before_any_work(x0, t_span, options, message):
    with pytest.raises(KaneRobotError, match=message):
        kr.simulate(Untouchable(), None, x0, t_span, **options)


def test_simulate_names_the_state_layout_and_the_friction_settings():
    model, values = arm_model()
    with pytest.raises(KaneRobotError, match=r"x0 for arm must have 2 values: q \(1: joints 1\) then qd \(1: their rates\); got shape \(3,\)"):
        kr.simulate(model, values, [0.0, 0.0, 0.0], (0.0, 1.0), backend="numpy")
    with pytest.raises(KaneRobotError, match=r"friction_velocity must be a positive speed \(rad/s or m/s\), got 0.0"):
        kr.simulate(model, values, [0.0, 0.0], (0.0, 1.0), friction_velocity=0.0, backend="numpy")
    with pytest.raises(KaneRobotError, match=r"right_hand_side: friction='stick-slip' switches"):
        right_hand_side(model, values, friction="stick-slip", backend="numpy")
    with pytest.raises(KaneRobotError, match="dense_output is not available with friction='stick-slip'"):
        kr.simulate(model, values, [0.0, 0.0], (0.0, 1.0), friction="stick-slip", dense_output=True, backend="numpy")


def test_a_number_for_FS_in_the_description_is_refused_with_what_to_write():
    model = kr.derive(arm(fs=0.5))
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(ZZ1=J, MX1=ML, G2=-G)
    with pytest.raises(KaneRobotError, match=r"arm: the Coulomb friction of joint 1 is FS = 0.5 in the robot's description; .* write a symbol \(FS1\) and give its value, or pass friction='model'"):
        kr.simulate(model, values, [0.3, 0.0], (0.0, 1.0), backend="numpy")
    # the model's own law still runs it (moving, away from the sign switch)
    result = kr.simulate(model, values, [0.3, 2.0], (0.0, 0.05), friction="model", backend="numpy")
    np.testing.assert_allclose(result.friction[0, 0], 0.5, rtol=1e-12)


def test_a_model_bound_without_the_physical_check_simulates_with_friction():
    """The FS = 0 re-binding keeps the caller's choice (it refused values bound with physical=False)."""
    model, values = arm_model()
    fn = model.numeric(dict(values, FV1=-0.01), backend="numpy", physical=False)
    with pytest.raises(kr.KaneRobotError, match=r"FV = -0.01 < 0"):
        model.numeric(dict(values, FV1=-0.01), backend="numpy")
    result = kr.simulate(fn, None, [THRESHOLD + 0.3, 0.0], (0.0, 0.2))
    assert result.t[-1] == 0.2 and result.friction_work[-1] > 0
