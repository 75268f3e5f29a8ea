"""Derivatives and the Coriolis matrix with joints whose configuration is not their speeds' integral.

The ball-and-plane tree of tests/ball_robots.py (a spherical joint: a
quaternion and three speeds; a planar joint: x, y, theta and three speeds in
its own frame), on a fixed and a free-flying base, random physically
consistent parameters.  The derivatives with respect to the configuration
are taken in the tangent space (``q (+) dv``, each joint model's
``integrate``), as pinocchio's: the programs of Newton-Euler's engine
against ``computeRNEADerivatives``, ``computeCoriolisMatrix`` and
``computeABADerivatives``, and against central finite differences of our
own inverse dynamic program moved by the joint models.
"""

import numpy as np
import pytest
import sympy
from ball_robots import ball_tree, joint_models, pinocchio_q, random_state, random_values, state_symbols, symmetric_matrix

import kanerobot as kr
from kanerobot.dynamics import derivatives

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare the derivatives with pinocchio's")
from kanerobot.interop import to_pinocchio  # noqa: E402

#: Central differences: the step, and the agreement they reach.
STEP, FD_ATOL = 1e-6, 1e-6


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    """(robot, values, pinocchio model, Newton-Euler model) of the ball-and-plane tree, derived once."""
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 7)
    return robot, values, to_pinocchio(robot, values), kr.derive(robot)


def states(robot, seed, count=3):
    rng = np.random.default_rng(seed)
    return [random_state(robot, rng) for _ in range(count)]


def moved(robot, q, dv):
    """``q (+) dv``: each joint's configuration moved by its own model's ``integrate``."""
    out, i, k = [], 0, 0
    for model in joint_models(robot):
        out.append(model.integrate(q[i:i + model.nq], dv[k:k + model.nv]))
        i, k = i + model.nq, k + model.nv
    return np.concatenate(out)


_FUNCTIONS = {}


def evaluate(program, values, robot, q, qd=(), qdd=(), extra=None):
    """ball_robots.evaluate with the program made a numpy function once (the differences call it often)."""
    if id(program) not in _FUNCTIONS:
        f = program.to_function()
        _FUNCTIONS[id(program)] = (program, f, [str(a) for a in f.args])
    _, f, names = _FUNCTIONS[id(program)]
    point = dict(values, **(extra or {}))
    for symbols, numbers in zip(state_symbols(robot), (q, qd, qdd)):
        point.update(zip(symbols, numbers))
    return np.asarray(f(*[point[name] for name in names]), dtype=float)


def matrix(program, values, robot, q, qd=(), qdd=(), extra=None):
    """The outputs of a derivative program as rows of ``robot.dof``."""
    return evaluate(program, values, robot, q, qd, qdd, extra).reshape(robot.dof, -1)


def central(f, n):
    """Central differences of ``f(dv)`` (a vector) along each of the ``n`` unit ``dv``, as columns."""
    columns = []
    for k in range(n):
        e = np.zeros(n)
        e[k] = STEP
        columns.append((f(e) - f(-e)) / (2 * STEP))
    return np.array(columns).T


def test_tangent_is_the_configuration_derivative():
    """Each joint model's symbolic tangent is its numeric ``configuration_derivative`` along ``e_k``."""
    rng = np.random.default_rng(1)
    for model in joint_models(ball_tree(floating=True)):
        symbols = sympy.symbols(f"x0:{model.nq}")
        q = model.random_configuration(rng)
        G = np.array(model.tangent(symbols).subs(dict(zip(symbols, q))), dtype=float)
        expected = np.array([model.configuration_derivative(q, e) for e in np.eye(model.nv)]).T
        np.testing.assert_allclose(G, expected, rtol=0, atol=1e-15)


def test_tangent_directions_one_per_speed(case):
    robot, _, _, _ = case
    labels = [label for label, _ in derivatives.tangent_directions(robot)]
    base = ["X0", "Y0", "Z0", "RX0", "RY0", "RZ0"] if robot.floating else []
    assert labels == base + ["q1", "RX2", "RY2", "RZ2", "X3", "Y3", "TH3", "q4"]


def test_inverse_dynamics_derivatives_equal_rnea_derivatives(case):
    """[dtau/dq, dtau/dqd] equal computeRNEADerivatives' dtau_dq, dtau_dv; the inertia matrix its dtau_da."""
    robot, values, pmodel, model = case
    program, A = model.program("inverse_dynamics_derivatives"), model.program("mass_matrix")
    nv = robot.dof
    assert len(program.outputs) == nv * 2 * nv
    for q, qd, qdd in states(robot, 2):
        data = pmodel.createData()  # the results are views of its arrays: kept alive
        dtau_dq, dtau_dv, dtau_da = (np.array(d) for d in pin.computeRNEADerivatives(pmodel, data, pinocchio_q(robot, q), qd, qdd))
        got = matrix(program, values, robot, q, qd, qdd)
        np.testing.assert_allclose(got[:, :nv], dtau_dq, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got[:, nv:], dtau_dv, rtol=0, atol=1e-10)
        inertia = symmetric_matrix(A, evaluate(A, values, robot, q), nv)
        np.testing.assert_allclose(inertia, np.triu(dtau_da) + np.triu(dtau_da, 1).T, rtol=0, atol=1e-10)


def test_inverse_dynamics_derivatives_equal_finite_differences(case):
    """The same columns as central differences of our Newton-Euler program, q moved by the joint models."""
    robot, values, _, model = case
    program, idm = model.program("inverse_dynamics_derivatives"), model.program("inverse_dynamics")
    for q, qd, qdd in states(robot, 3, count=2):
        got = matrix(program, values, robot, q, qd, qdd)
        np.testing.assert_allclose(got, inverse_dynamics_differences(idm, values, robot, q, qd, qdd), rtol=0, atol=FD_ATOL)


def inverse_dynamics_differences(idm, values, robot, q, qd, qdd):
    """``[dtau/dq, dtau/dqd]`` by central differences of the inverse dynamic program."""
    nv = robot.dof
    dq = central(lambda dv: evaluate(idm, values, robot, moved(robot, q, dv), qd, qdd), nv)
    dqd = central(lambda dv: evaluate(idm, values, robot, q, qd + dv, qdd), nv)
    return np.hstack([dq, dqd])


def coriolis(model, values, robot, q, qd):
    return matrix(model.program("coriolis_matrix"), values, robot, q, qd)


def test_coriolis_matrix_equals_pinocchio(case):
    """C equals computeCoriolisMatrix (the project's convention: the free flyer's C already did)."""
    robot, values, pmodel, model = case
    for q, qd, _ in states(robot, 4):
        expected = pin.computeCoriolisMatrix(pmodel, pmodel.createData(), pinocchio_q(robot, q), qd)
        np.testing.assert_allclose(coriolis(model, values, robot, q, qd), expected, rtol=0, atol=1e-12)


def test_coriolis_matrix_gives_h_and_keeps_passivity(case):
    """``C qd = H(q, qd) - Q(q)`` of our Newton-Euler program, and ``A' - 2 C`` is skew with ``A'``
    the central difference of the composite inertia matrix along ``q (+) t qd``."""
    robot, values, _, model = case
    A, idm = model.program("mass_matrix"), model.program("inverse_dynamics")
    zero = np.zeros(robot.dof)
    for q, qd, _ in states(robot, 5, count=2):
        C = coriolis(model, values, robot, q, qd)
        h = evaluate(idm, values, robot, q, qd, zero) - evaluate(idm, values, robot, q, zero, zero)
        np.testing.assert_allclose(C @ qd, h, rtol=0, atol=1e-11)
        N = inertia_rate(A, values, robot, q, qd) - 2 * C
        np.testing.assert_allclose(N + N.T, 0, rtol=0, atol=FD_ATOL)


def inertia_rate(A, values, robot, q, qd):
    """``A'`` by central differences of the inertia matrix program along ``q (+) t qd``."""

    def inertia(t):
        return symmetric_matrix(A, evaluate(A, values, robot, moved(robot, q, t * qd)), robot.dof)

    return (inertia(STEP) - inertia(-STEP)) / (2 * STEP)


def torque_names(model):
    return [label for label, _ in derivatives.torque_directions(model)]


def test_direct_dynamics_derivatives_equal_aba_derivatives(case):
    """[dqdd/dq, dqdd/dqd, dqdd/dtau] equal computeABADerivatives (``dqdd/dtau``: the joints' columns of
    A^-1, a free flyer being unactuated), and central differences of our articulated-body program."""
    robot, values, pmodel, model = case
    program, ddm = model.program("direct_dynamics_derivatives"), model.program("direct_dynamics")
    nv, names = robot.dof, torque_names(model)
    assert len(names) == nv - (6 if robot.floating else 0)
    for q, qd, _ in states(robot, 6, count=2):
        tau = np.random.default_rng(7).normal(size=len(names))
        extra = dict(zip(names, tau))
        data = pmodel.createData()
        full = np.concatenate([np.zeros(nv - len(tau)), tau])
        ddq_dq, ddq_dv, ddq_dtau = (np.array(d) for d in pin.computeABADerivatives(pmodel, data, pinocchio_q(robot, q), qd, full))
        got = evaluate(program, values, robot, q, qd, extra=extra).reshape(nv, -1)
        np.testing.assert_allclose(got, np.hstack([ddq_dq, ddq_dv, ddq_dtau[:, nv - len(tau):]]), rtol=0, atol=1e-10)
        dq = central(lambda dv, q=q, qd=qd, extra=extra: evaluate(ddm, values, robot, moved(robot, q, dv), qd, extra=extra), nv)
        np.testing.assert_allclose(got[:, :nv], dq, rtol=0, atol=FD_ATOL)
