"""Every dynamic model against pinocchio (optional: runs when `pin` is installed).

pinocchio is an independent implementation (spatial algebra, C++): the robot
is translated by kanerobot.interop.to_pinocchio with random physically
consistent parameters, without friction and rotor inertia, which pinocchio
does not model.
"""

import numpy as np
import pytest
from conftest import library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.interop import to_pinocchio

pin = pytest.importorskip("pinocchio", reason="pinocchio is not installed: pip install -e '.[bench]' (the pin package) to compare with it")

ROBOTS = ["rx90", "stanford", "puma560", "krang"]


@pytest.fixture(scope="module", params=ROBOTS)
def case(request):
    robot = library(request.param)
    rng = np.random.default_rng(ROBOTS.index(request.param))
    model = kr.derive(robot)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    return model.numeric(values), to_pinocchio(robot, values), rng


@pytest.mark.long
def test_against_pinocchio(case):
    fn, pmodel, rng = case
    data = pmodel.createData()
    n = pmodel.nq
    for _ in range(5):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)
        tau = pin.rnea(pmodel, data, q, qd, qdd)
        scale = 1 + np.abs(tau).max()
        assert np.allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=1e-9, atol=1e-9 * scale)
        A = pin.crba(pmodel, data, q)
        A = np.triu(A) + np.triu(A, 1).T
        assert np.allclose(fn.mass_matrix(q), A, rtol=1e-9, atol=1e-9 * (1 + np.abs(A).max()))
        g = pin.computeGeneralizedGravity(pmodel, data, q)
        assert np.allclose(fn.gravity(q), g, rtol=1e-9, atol=1e-9 * scale)
        h = pin.rnea(pmodel, data, q, qd, np.zeros(n))
        assert np.allclose(fn.h(q, qd), h, rtol=1e-9, atol=1e-9 * scale)
        assert np.allclose(fn.coriolis_matrix(q, qd) @ qd, h - g, rtol=1e-9, atol=1e-9 * scale)
        assert np.allclose(fn.direct_dynamics(q, qd, tau), pin.aba(pmodel, data, q, qd, tau), rtol=1e-8, atol=1e-8 * (1 + np.abs(qdd).max()))
