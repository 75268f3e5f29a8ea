"""Batched simulation on JAX (issue 29): :func:`kanerobot.batched.simulate_batch` against ``kr.simulate``.

Each plant of a batch, integrated by fixed-step RK4 on JAX, equals the same
plant integrated alone by scipy's adaptive solver at tight tolerances, to
the accuracy of RK4 at that step (an independent integrator and evaluation
path: C or numpy programs, scipy's error control).
"""

import numpy as np
import pytest
from ball_robots import ROTATION, ball_tree, random_values
from conftest import derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot import joints
from kanerobot.robot.description import GeneralPlacement

jax = pytest.importorskip("jax", reason="pip install -e '.[jax]'")

from kanerobot.batched import simulate_batch  # noqa: E402


def scipy_run(model, values, x0, t, controller=None):
    """kr.simulate of one plant at the times ``t`` (tolerances far below RK4's error)."""
    result = kr.simulate(model, values, x0, (t[0], t[-1]), controller, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12, friction="model")
    return np.hstack([result.q, result.qd])


def check_batch(name, plants, dt, steps, tolerance, controller=None, scipy_controller=None):
    model = derived(name)
    rng = np.random.default_rng(29)
    draws = [random_parameters(model.robot, rng, friction=False, wrench=False) for _ in range(plants)]
    n = model.n
    x0 = np.hstack([rng.uniform(-1, 1, (plants, n)), rng.uniform(-0.5, 0.5, (plants, n))])
    result = simulate_batch(model, draws, x0, controller, dt=dt, steps=steps, every=steps // 4)
    assert result.x.shape == (5, plants, 2 * n)
    errors = [np.max(np.abs(result.x[:, k] - scipy_run(model, draws[k], x0[k], result.t, scipy_controller))) for k in range(plants)]
    assert max(errors) < tolerance, errors
    return max(errors)


def test_planar_arms_equal_scipy():
    check_batch("planar2", plants=2, dt=1e-3, steps=200, tolerance=1e-9)


@pytest.mark.long
def test_rx90_plants_equal_scipy_under_a_controller():
    gains = np.array([50.0, 80.0, 40.0, 5.0, 5.0, 2.0])

    def pd(t, q, qd):  # the same law in JAX and in numpy: a PD to the origin
        return -gains * q - 0.2 * gains * qd

    check_batch("rx90", plants=4, dt=5e-4, steps=800, tolerance=1e-8, controller=pd, scipy_controller=pd)


@pytest.mark.long
def test_floating_satellite_equals_scipy():
    """A free flyer (quaternion) and its 3 joints, RK4 on q with the configuration rate, quaternions normalised per step."""
    model = derived("satellite")
    rng = np.random.default_rng(7)
    draws = [random_parameters(model.robot, rng, friction=False, wrench=False) for _ in range(2)]
    fn = model.numeric(draws[0])
    q0 = np.array([fn.random_configuration(rng) for _ in draws])
    q0[:, 3:7] *= [[1.0], [3.0]]  # a second quaternion off the unit sphere: normalised at the start
    x0 = np.hstack([q0, rng.uniform(-1, 1, (2, fn.nv))])
    result = simulate_batch(model, draws, x0, dt=1e-3, steps=400, every=100)
    assert result.x.shape == (5, 2, fn.nq + fn.nv)
    np.testing.assert_allclose(np.linalg.norm(result.x[:, :, 3:7], axis=2), 1.0, atol=1e-14)
    for k in range(2):
        x0[k, 3:7] /= np.linalg.norm(x0[k, 3:7])
        expected = scipy_run(model, draws[k], x0[k], result.t)
        error = np.max(np.abs(result.x[:, k] - expected))
        print(f"satellite plant {k}: max |x_RK4 - x_DOP853| = {error:.1e}")
        assert error < 1e-9
        assert np.max(np.abs(result.x[:, k, 3:7] - x0[k, 3:7])) > 1e-2  # the base turned


@pytest.mark.long
def test_ball_joint_equals_scipy():
    """A revolute joint then a spherical one (a quaternion inside the tree) on a fixed base."""
    frames = [
        kr.Frame("1", "0", 0, 1, GeneralPlacement(R0=ROTATION, P=[0, 0, "L0"], axis=[0, 1, 0], q="q1")),
        kr.Frame("2", "1", joints.Spherical(), 1, GeneralPlacement(R0=ROTATION, P=["L1", 0, 0], axis=[0, 0, 1])),
    ]
    model = kr.derive(kr.Robot.create("revolute_ball", frames))
    rng = np.random.default_rng(11)
    values = random_parameters(model.robot, rng, friction=False, wrench=False)
    fn = model.numeric(values)
    x0 = np.concatenate([fn.random_configuration(rng), rng.uniform(-1, 1, fn.nv)])
    result = simulate_batch(model, values, x0, dt=1e-3, steps=400, every=100)
    error = np.max(np.abs(result.x[:, 0] - scipy_run(model, values, x0, result.t)))
    assert error < 1e-9, error
    assert np.max(np.abs(result.x[-1, 0, 1:5] - x0[1:5])) > 1e-2  # the ball turned


def test_parameters_as_an_array_and_one_state_for_all():
    model = derived("planar2")
    values = random_parameters(model.robot, np.random.default_rng(1), friction=False)
    P = np.array([[values[name] for name in model.parameters]] * 2)
    P[1, model.parameters.index("M2")] *= 2  # a heavier second link
    result = simulate_batch(model, P, [0.4, 0.2, 1.0, -0.5], dt=1e-3, steps=20, every=20)
    assert result.x.shape == (2, 2, 4)
    alone = simulate_batch(model, values, [0.4, 0.2, 1.0, -0.5], dt=1e-3, steps=20, every=20)
    assert np.array_equal(alone.x[:, 0], result.x[:, 0])
    assert not np.allclose(result.x[-1, 0], result.x[-1, 1])


def test_solved_dynamics_equal_the_program():
    """dynamics="solve" (A qdd = tau - H, for XLA's compile time) integrates the same plants as the program."""
    model = derived("planar2")
    rng = np.random.default_rng(5)
    draws = [random_parameters(model.robot, rng, friction=False) for _ in range(3)]
    x0 = np.hstack([rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))])
    program = simulate_batch(model, draws, x0, dt=1e-3, steps=50, every=50)
    solved = simulate_batch(model, draws, x0, dt=1e-3, steps=50, every=50, dynamics="solve")
    np.testing.assert_allclose(solved.x, program.x, rtol=0, atol=1e-12)
    assert np.max(np.abs(program.x[-1] - program.x[0])) > 1e-2


def test_refusals_are_one_line():
    model = derived("planar2")
    values = random_parameters(model.robot, np.random.default_rng(1))
    with pytest.raises(KaneRobotError, match="2 initial states for 3 parameter sets"):
        simulate_batch(model, [values] * 3, np.zeros((2, 4)), dt=1e-3, steps=1)
    with pytest.raises(KaneRobotError, match="unknown dynamics 'aba': give one of program, solve"):
        simulate_batch(model, values, np.zeros(4), dt=1e-3, steps=1, dynamics="aba")
    with pytest.raises(KaneRobotError, match="must be > 0"):
        simulate_batch(model, values, np.zeros(4), dt=0.0, steps=1)
    satellite = derived("satellite")
    with pytest.raises(KaneRobotError, match=r"x0_batch: a quaternion x0\[:, 3:7\] \(x y z w\) is zero"):
        simulate_batch(satellite, random_parameters(library("satellite"), np.random.default_rng(2)), np.zeros(19), dt=1e-3, steps=1)
    plane = kr.derive(ball_tree())
    with pytest.raises(KaneRobotError, match=r"the planar joint of q\[5:8\] is not one: use kr.simulate"):
        simulate_batch(plane, random_values(plane.robot, 3), np.zeros(plane.nq + plane.nv), dt=1e-3, steps=1)
