"""Trajectory optimisation by direct collocation (kanerobot.optimal, issue 29).

Independent references: closed forms (the minimum-effort rest-to-rest motion
of a point mass, a cubic with a linear force; the minimum-time rest-to-rest
turn of a rotor under a torque bound, bang-bang in ``2 sqrt(theta J / U)``),
and re-simulation of the optimal torques by ``kr.simulate`` on the C backend
(numpy without a compiler), whose motion must stay within the collocation
error the result estimates.
"""

import shutil

import numpy as np
import pytest

import kanerobot as kr
from kanerobot.codegen import compiled
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.robot.description import GeneralPlacement, JointLimits

casadi = pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")

from kanerobot.optimal import collocate, dynamics_function, frame_position  # noqa: E402 (needs casadi)

#: The plant of the re-simulations: compiled C, numpy without a compiler.
PLANT = "c" if any(shutil.which(name) for name in compiled.COMPILERS) else "numpy"
IDENTITY = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]


def one_joint(sigma, axis, name):
    """A single joint on a fixed base: a slide (sigma 1) or a rotor (sigma 0) about ``axis``."""
    frame = kr.Frame("1", "0", sigma, 1, GeneralPlacement(R0=IDENTITY, P=[0, 0, 0], axis=axis, q="q1"))
    return kr.Robot.create(name, [frame])


def one_joint_model(sigma, axis, name, **values):
    """Its numeric model: random inertia, no friction or rotor, the given values over them."""
    robot = one_joint(sigma, axis, name)
    numbers = random_parameters(robot, np.random.default_rng(0), friction=False, rotor=False, wrench=False)
    numbers.update(values)
    return kr.derive(robot).numeric(numbers, backend="numpy")


@pytest.fixture(scope="module")
def point_mass():
    """A 2 kg mass on a horizontal slide (gravity along z: no force along x)."""
    return one_joint_model(1, [1, 0, 0], "slide", M1=2.0)


@pytest.fixture(scope="module")
def planar2():
    robot = kr.load(kr.frames_path("planar2"))
    values = random_parameters(robot, np.random.default_rng(3), friction=False)
    values["FV1"] = values["FV2"] = 0.1  # viscous friction: smooth, in the collocated and the simulated models
    model = kr.derive(robot)
    return model.numeric(values, backend="numpy"), model.numeric(values, backend=PLANT)


def test_minimum_effort_point_mass_is_the_closed_form(point_mass):
    """m x'' = u, x from 0 to d at rest in T, min integral u^2: x = d (3 s^2 - 2 s^3),
    u = 6 m d / T^2 (1 - 2 s), cost 12 m^2 d^2 / T^3.  Hermite-Simpson represents the cubic
    exactly: the knots and torques equal the closed form to the solver's tolerance."""
    m, d, T = 2.0, 0.8, 1.5
    result = collocate(point_mass, [0.0], [d], duration=T, intervals=8, scheme="hermite-simpson")
    assert result.success, result.status
    s = result.t / T
    np.testing.assert_allclose(result.q[:, 0], d * (3 * s**2 - 2 * s**3), atol=1e-7)
    np.testing.assert_allclose(result.qd[:, 0], d * (6 * s - 6 * s**2) / T, atol=1e-7)
    np.testing.assert_allclose(result.u[:, 0], 6 * m * d / T**2 * (1 - 2 * s), atol=1e-6)
    np.testing.assert_allclose(result.objective, 12 * m**2 * d**2 / T**3, rtol=1e-7)
    assert result.collocation_error < 1e-7
    for t in (0.3, 0.77, 1.2):  # the trajectory interpolates as the scheme does: exact between the knots
        s = t / T
        q, qd, qdd = result.trajectory(t)
        np.testing.assert_allclose([q[0], qd[0], qdd[0]], [d * (3 * s**2 - 2 * s**3), d * (6 * s - 6 * s**2) / T,
                                                            d * (6 - 12 * s) / T**2], atol=1e-6)  # fmt: skip
        np.testing.assert_allclose(result.torque(t), 6 * m * d / T**2 * (1 - 2 * s), atol=1e-6)


def test_trapezoidal_converges_at_second_order(point_mass):
    """The trapezoidal rule is not exact on the cubic: its error at the knots falls by 4 when
    the intervals double, and the error estimate follows it."""
    d, T = 0.8, 1.5
    errors, estimates = [], []
    for N in (10, 20):
        result = collocate(point_mass, [0.0], [d], duration=T, intervals=N, scheme="trapezoidal")
        assert result.success
        s = result.t / T
        errors.append(np.abs(result.q[:, 0] - d * (3 * s**2 - 2 * s**3)).max())
        estimates.append(result.collocation_error)
    assert 3.0 < errors[0] / errors[1] < 5.0, errors
    assert 3.0 < estimates[0] / estimates[1] < 5.0, estimates


def test_minimum_time_rotor_is_bang_bang():
    """J theta'' = u, |u| <= U, from 0 to theta at rest, min T: full torque then full braking,
    T = 2 sqrt(theta J / U).  A rotor about the vertical (gravity along it: no torque)."""
    J, U, theta = 0.5, 2.0, 1.0
    rotor = one_joint_model(0, [0, 0, 1], "rotor", XX1=J, YY1=J, ZZ1=J, XY1=0.0, XZ1=0.0, YZ1=0.0, MX1=0.0, MY1=0.0, MZ1=0.0)
    result = collocate(rotor, [0.0], [theta], duration=(0.1, 10.0), objective="time", intervals=20,
                       scheme="trapezoidal", limits={"1": JointLimits(effort=U)})  # fmt: skip
    assert result.success, result.status
    exact = 2 * np.sqrt(theta * J / U)
    assert abs(result.duration - exact) / exact < 5e-3, (result.duration, exact)
    assert np.abs(result.u).max() <= U + 1e-6
    first, second = result.u[:9, 0], result.u[-9:, 0]
    np.testing.assert_allclose(first, U, rtol=1e-3)
    np.testing.assert_allclose(second, -U, rtol=1e-3)


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
def test_resimulated_torques_track_within_the_collocation_error(planar2, scheme):
    """The optimal torques fed open loop to kr.simulate (C backend) stay within the estimate."""
    fn, plant = planar2
    result = collocate(fn, [0.0, 0.0], [1.0, -0.6], duration=1.2, intervals=12, scheme=scheme)
    assert result.success and result.iterations > 0 and result.solve_time > 0
    tracking = result.track(plant)
    assert 0 < tracking.max_error <= result.collocation_error, (tracking.max_error, result.collocation_error)
    np.testing.assert_allclose(tracking.simulation.q[-1], [1.0, -0.6], atol=result.collocation_error)


def test_explicit_and_implicit_dynamics_give_one_solution(planar2):
    fn, _ = planar2
    a = collocate(fn, [0.0, 0.0], [0.7, 0.4], duration=1.0, intervals=8, dynamics="implicit")
    b = collocate(fn, [0.0, 0.0], [0.7, 0.4], duration=1.0, intervals=8, dynamics="explicit")
    assert a.success and b.success
    np.testing.assert_allclose(a.u, b.u, atol=1e-6)
    np.testing.assert_allclose(a.q, b.q, atol=1e-8)


def test_another_engines_functions_give_the_same_solution(planar2):
    """functions=: Lagrange's graphs (its direct dynamics A^-1 ([0; tau] - H) solved in the graph) in
    the same transcription as Newton-Euler's recursive programs: one optimum."""
    fn, _ = planar2
    lagrange = kr.derive(fn.model.robot, method="lagrange").numeric(fn.values, backend="numpy")
    functions = (lagrange.casadi("inverse_dynamics"), lagrange.casadi("direct_dynamics"))
    for dynamics in ("implicit", "explicit"):
        ours = collocate(fn, [0.0, 0.0], [0.7, 0.4], duration=1.0, intervals=8, dynamics=dynamics)
        theirs = collocate(fn, [0.0, 0.0], [0.7, 0.4], duration=1.0, intervals=8, dynamics=dynamics, functions=functions)
        np.testing.assert_allclose(theirs.u, ours.u, atol=1e-7)
        assert theirs.objective == pytest.approx(ours.objective, rel=1e-10)


def test_limits_are_respected(planar2):
    """Position, velocity and torque limits bind where the free solution goes past them."""
    fn, _ = planar2
    ends = [0.0, 0.0], [1.2, 0.05]
    free = collocate(fn, *ends, duration=1.0, intervals=12)
    peak = free.q[:, 1].max()
    assert peak > 0.05 + 0.02  # the elbow overshoots its end on the way: an upper limit can bind
    limits = {
        "1": JointLimits(velocity=0.9 * np.abs(free.qd[:, 0]).max(), effort=0.9 * np.abs(free.u[:, 0]).max()),
        "2": {"upper": (0.05 + peak) / 2},
    }
    bound = collocate(fn, *ends, duration=1.0, intervals=12, limits=limits)
    assert bound.success, bound.status
    assert np.abs(bound.qd[:, 0]).max() <= limits["1"].velocity + 1e-7
    assert np.abs(bound.u[:, 0]).max() <= limits["1"].effort + 1e-7
    elbow = np.concatenate([bound.q[:, 1], bound.midpoints["q"][:, 1]])  # knots and midpoints
    assert elbow.max() <= limits["2"]["upper"] + 1e-7  # IPOPT relaxes its bounds by 1e-8 relative
    assert np.isclose(elbow.max(), limits["2"]["upper"], atol=1e-7)  # active
    assert bound.objective > free.objective


def test_path_and_final_constraints(planar2):
    """A path constraint caps a speed; a final constraint places the tip, its joints left free (NaN)."""
    fn, _ = planar2
    free = collocate(fn, [0.0, 0.0], [0.8, 0.2], duration=1.0, intervals=10)
    cap = 0.8 * np.abs(free.qd[:, 0]).max()
    capped = collocate(fn, [0.0, 0.0], [0.8, 0.2], duration=1.0, intervals=10, path=[lambda q, qd, u: qd[0] - cap])
    assert capped.success and capped.qd[:, 0].max() <= cap + 1e-7 and capped.midpoints["qd"][:, 0].max() <= cap + 1e-7
    tip = frame_position(fn, "2")
    target = fn.pose("2", [0.5, 0.5])[:3, 3]
    reach = collocate(fn, [0.0, 0.0], [np.nan, np.nan], duration=1.0, intervals=10, final=[lambda q, qd: tip(q)[:2] - target[:2]])
    assert reach.success
    np.testing.assert_allclose(fn.pose("2", reach.q[-1])[:2, 3], target[:2], atol=1e-8)


@pytest.mark.long  # 20 s, most of it deriving and compiling diffdrive's models
def test_a_wheeled_base_is_collocated_and_tracked():
    """diffdrive: the wheels' speeds independent, the posture following by G(q); drive 0.4 m ahead
    at rest: the casadi dynamics equal the numeric ones, and the re-simulation tracks."""
    robot = kr.load(kr.frames_path("diffdrive"))
    values = random_parameters(robot, np.random.default_rng(2), friction=False)
    model = kr.derive(robot)
    fn = model.numeric(values, backend="numpy")
    f = dynamics_function(fn)
    rng = np.random.default_rng(4)
    q, qd, u = rng.uniform(-1, 1, fn.nq), rng.uniform(-1, 1, fn.nv), rng.uniform(-1, 1, fn.nv)
    qdot, qdd = (x.full().ravel() for x in f(q, qd, u))
    np.testing.assert_allclose(qdd, fn.direct_dynamics(q, qd, u), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(qdot, fn.configuration_derivative(q, qd), rtol=1e-10, atol=1e-12)
    q0 = np.zeros(fn.nq)
    q1 = np.full(fn.nq, np.nan)
    q1[robot.joint_labels.index("x")] = 0.4
    q1[robot.joint_labels.index("y")] = 0.0
    result = collocate(fn, q0, q1, duration=2.0, intervals=10)
    assert result.success, result.status
    assert result.trajectory.n == fn.nv and result.configuration(2.0)[0] == pytest.approx(0.4)
    tracking = result.track(model.numeric(values, backend=PLANT))
    assert tracking.max_error <= result.collocation_error, (tracking.max_error, result.collocation_error)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda fn: collocate(fn, [0, 0], [1, 1], scheme="euler"), "collocate: unknown scheme 'euler': choose among trapezoidal, hermite-simpson"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], intervals=1), "collocate: intervals must be an integer of at least 2, got 1"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], objective="time"), "collocate: objective 'time' needs a free final time"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], duration=(2.0, 1.0)), "collocate: a free duration needs 0 < shortest < longest"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], limits={"1": JointLimits(lower=1.0, upper=-1.0)}),
         "collocate: the limits of joint '1' are inconsistent: lower 1 is not below upper -1"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], limits={"1": {"effort": -3.0}}), "collocate: the effort limit of joint '1' must be positive"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], limits={"9": {"effort": 3.0}}), "collocate: limits given for '9', which is no joint"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], limits={"2": {"upper": 0.5}}), "collocate: q1 puts joint '2' at 1, outside its limits"),
        (lambda fn: collocate(fn, [0, 0, 0], [1, 1]), "collocate: q0 must have 2 values"),
        (lambda fn: collocate(fn.model, [0, 0], [1, 1]), "collocate needs a numeric model, model.numeric(values)"),
        (lambda fn: collocate(fn, [0, 0], [1, 1], actuation=np.ones((3, 1))), "collocate: the actuation must be a (2, k) matrix"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(planar2, call, message):
    fn, _ = planar2
    with pytest.raises(kr.KaneRobotError) as error:
        call(fn)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_floating_base_is_refused_in_one_line():
    robot = kr.load(kr.frames_path("satellite"))
    fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    with pytest.raises(kr.KaneRobotError, match="not its speeds' integral"):
        collocate(fn, np.zeros(fn.nq), np.zeros(fn.nq))


def test_verbose_prints_the_iterations(point_mass, capfd):
    """verbose=True: IPOPT's iteration table (its own output, on the process's stdout); silent by default."""
    collocate(point_mass, [0.0], [0.5], duration=1.0, intervals=4)
    assert "iter" not in capfd.readouterr().out
    result = collocate(point_mass, [0.0], [0.5], duration=1.0, intervals=4, verbose=True)
    out = capfd.readouterr().out
    assert "iter    objective" in out and f"Number of Iterations....: {result.iterations}" in out
