"""The three engines on joints of several speeds: direct dynamics and derivatives against pinocchio.

Each engine's own test module compares its programs (inverse dynamics, A,
H, Q, C) with pinocchio on the tree of tests/ball_robots.py; here the
numeric model ``kr.derive(robot, method).numeric(values)`` of every engine,
fixed and floating base, answers the direct dynamics (``aba``; Lagrange and
Kane solve it from their A and H) and the derivatives of the inverse and
direct dynamics (``computeRNEADerivatives``, ``computeABADerivatives``,
tangent-space columns) as pinocchio does, so the three engines agree on
every model.
"""

import numpy as np
import pytest
from ball_robots import ball_tree, pinocchio_q, random_state, random_values

import kanerobot as kr

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare the engines with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def robot_case(request):
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 21)
    return robot, values, to_pinocchio(robot, values)


@pytest.mark.parametrize("method", ["newton-euler", "lagrange", "kane"])
def test_direct_dynamics_and_derivatives_equal_pinocchio(robot_case, method):
    robot, values, pmodel = robot_case
    fn = kr.derive(robot, method).numeric(values, backend="numpy")
    data = pmodel.createData()
    actuated = fn.nv - fn.n  # a floating base's six speeds are not actuated
    rng = np.random.default_rng(22)
    q, qd, qdd = random_state(robot, rng)
    pq = pinocchio_q(robot, q)
    tau = rng.normal(size=fn.n)
    full_tau = np.concatenate([np.zeros(actuated), tau])
    np.testing.assert_allclose(fn.direct_dynamics(q, qd, tau), pin.aba(pmodel, data, pq, qd, full_tau), rtol=0, atol=1e-10)
    dq, dv = fn.inverse_dynamics_derivatives(q, qd, qdd)
    pin.computeRNEADerivatives(pmodel, data, pq, qd, qdd)
    np.testing.assert_allclose(dq, data.dtau_dq, rtol=0, atol=1e-10)
    np.testing.assert_allclose(dv, data.dtau_dv, rtol=0, atol=1e-10)
    ddq, ddv, ddtau = fn.direct_dynamics_derivatives(q, qd, tau)
    pin.computeABADerivatives(pmodel, data, pq, qd, full_tau)
    np.testing.assert_allclose(ddq, data.ddq_dq, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ddv, data.ddq_dv, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ddtau, data.Minv[:, actuated:], rtol=0, atol=1e-9)
