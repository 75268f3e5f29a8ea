"""Simulating a robot with a ball joint: q integrated through the joint models, the energy kept.

``kr.simulate`` on the ball-and-plane tree of tests/ball_robots.py (fixed
base, no friction, no torque: random_values zeroes friction) integrates
``q' = configuration_derivative(q, qd)`` joint by joint, the ball joint's
quaternion kept unit.  Over 2 s from a random state (DOP853, tolerances
1e-12), the total energy drifts by less than 1e-9 of itself, the energy
computed by an independent path: pinocchio's ``computeKineticEnergy`` and
``computePotentialEnergy`` on the same model, and our own energy functions
(:mod:`kanerobot.dynamics.energy`), which agree with pinocchio's at every
state (with the values the dynamic model does not need: the mass of link 1,
which turns about the vertical).
"""

import numpy as np
import pytest
from ball_robots import ball_tree, pinocchio_q, random_state, random_values

import kanerobot as kr
from kanerobot.dynamics import energy

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare the energy with pinocchio's")
from kanerobot.interop import to_pinocchio  # noqa: E402

#: Over 1.5 s (2 s of motion at tolerances 1e-12): the long group.
pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def run():
    """(robot, values, fn, result) of 2 s of free motion from a random state."""
    robot = ball_tree()
    values = random_values(robot, 11)
    fn = kr.derive(robot).numeric(values, backend="numpy")
    q, qd, _ = random_state(robot, np.random.default_rng(12))
    result = kr.simulate(fn, None, np.concatenate([q, qd]), (0.0, 2.0), method="DOP853", rtol=1e-12, atol=1e-12)
    return robot, values, fn, result


def test_energy_drift_below_1e_9(run):
    robot, values, fn, result = run
    pmodel = to_pinocchio(robot, values)
    data = pmodel.createData()

    def pinocchio_energy(q, qd):
        pq = pinocchio_q(robot, q)
        return pin.computeKineticEnergy(pmodel, data, pq, qd) + pin.computePotentialEnergy(pmodel, data, pq)

    assert result.t[-1] == 2.0 and np.ptp(result.q[:, 0]) > 0.5  # it moved
    start, end = (result.q[0], result.qd[0]), (result.q[-1], result.qd[-1])
    E0, E1 = pinocchio_energy(*start), pinocchio_energy(*end)
    ours = [float(energy.total_energy(fn, q, qd, values)) for q, qd in (start, end)]
    assert abs(E0) > 1.0
    assert abs(E1 - E0) < 1e-9 * abs(E0), (E0, E1)
    np.testing.assert_allclose(ours, [E0, E1], rtol=0, atol=1e-11)
    assert abs(ours[1] - ours[0]) < 1e-9 * abs(ours[0])


def test_the_ball_joint_quaternion_stays_unit(run):
    _, _, fn, result = run
    (_, qs, _), = fn._quaternions
    np.testing.assert_allclose(np.linalg.norm(result.q[:, qs], axis=1), 1.0, rtol=0, atol=1e-14)
    assert np.max(result.monitors["quaternion_norm_error"]) < 1e-9
    # the integrated q follows q' = configuration_derivative(q, qd): the joint models', not qd
    qdot = fn.configuration_derivative(result.q[-1], result.qd[-1])
    assert qdot.shape == (9,) and not np.allclose(qdot[1:5], 0.0)
