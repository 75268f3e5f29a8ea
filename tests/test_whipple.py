"""Rolling discs and the Whipple bicycle benchmark (Meijaard, Papadopoulos, Ruina and Schwab 2007).

The bicycle is derived by kanerobot from its 27 parameters
(``examples/bicycle/whipple.py``); the references here are independent of
it: the eigenvalues of the paper's table 2 and its weave and capsize speeds,
and the paper's closed-form M, C1, K0, K2 (its appendix, written out below
from the parameters).  The rolling-disc rows are checked against the
velocity of the disc's lowest point differentiated from its numeric pose,
and the steady rolling of a coin against its closed-form lean dynamics.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import sympy

import kanerobot as kr
from kanerobot.control import linearize
from kanerobot.dynamics.constrained import ConstrainedModel
from kanerobot.dynamics.rolling_disc import RollingDisc, rolling_disc_model
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Base, GeneralPlacement

ROOT = Path(__file__).resolve().parents[1]

#: Meijaard et al. 2007, table 2: the eigenvalues at v = 0, 1, ..., 10 m/s.
TABLE_2 = {
    0: [-5.53094371765393, -3.13164324790656, 3.13164324790656, 5.53094371765393],
    1: [-7.11008014637442, -3.13423125066578, 3.52696170990070 - 0.80774027519930j, 3.52696170990070 + 0.80774027519930j],
    2: [-8.67387984831735, -3.07158645641514, 2.68234517512745 - 1.68066296590675j, 2.68234517512745 + 1.68066296590675j],
    3: [-10.35101467245920, -2.63366137253667, 1.70675605663975 - 2.31582447384325j, 1.70675605663975 + 2.31582447384325j],
    4: [-12.15861426576450, -1.42944427361326, 0.41325331521125 - 3.07910818603206j, 0.41325331521125 + 3.07910818603206j],
    5: [-14.07838969279820, -0.77534188219585 - 4.46486771378823j, -0.77534188219585 + 4.46486771378823j, -0.32286642900409],
    6: [-16.08537123098030, -1.52644486584142 - 5.87673060598709j, -1.52644486584142 + 5.87673060598709j, -0.00406690076970],
    7: [-18.15788466125262, -2.13875644258362 - 7.19525913329805j, -2.13875644258362 + 7.19525913329805j, 0.10268170574766],
    8: [-20.27940894394569, -2.69348683581097 - 8.46037971396931j, -2.69348683581097 + 8.46037971396931j, 0.14327879765713],
    9: [-22.43788559040858, -3.21675402252485 - 9.69377351531791j, -3.21675402252485 + 9.69377351531791j, 0.15790184030917],
    10: [-24.62459635017404, -3.72016840437287 - 10.90681139476287j, -3.72016840437287 + 10.90681139476287j, 0.16105338653172],
}
WEAVE_SPEED, CAPSIZE_SPEED = 4.29238253634111, 6.02426201538837


def _load_example():
    spec = importlib.util.spec_from_file_location("whipple_example", ROOT / "examples" / "bicycle" / "whipple.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def whipple():
    return _load_example()


@pytest.fixture(scope="module")
def bike(whipple):
    """The numeric models of the bicycle by Kane's method (derived once for the module)."""
    return whipple.numeric("kane")


def _sorted(values):
    return np.array(sorted(np.asarray(values, dtype=complex), key=lambda z: (round(z.real, 6), z.imag)))


# --------------------------------------------------- the benchmark's closed form
def benchmark_matrices(p):
    """M, C1, K0, K2 of the linearised bicycle from the 27 parameters: Meijaard et al. 2007, appendix A."""
    w, c, lam = p["w"], p["c"], p["lam"]
    rR, mR, IRxx, IRyy = p["rR"], p["mR"], p["IRxx"], p["IRyy"]
    xB, zB, mB, IBxx, IBzz, IBxz = p["xB"], p["zB"], p["mB"], p["IBxx"], p["IBzz"], p["IBxz"]
    xH, zH, mH, IHxx, IHzz, IHxz = p["xH"], p["zH"], p["mH"], p["IHxx"], p["IHzz"], p["IHxz"]
    rF, mF, IFxx, IFyy = p["rF"], p["mF"], p["IFxx"], p["IFyy"]
    sl, cl = np.sin(lam), np.cos(lam)
    mT = mR + mB + mH + mF
    xT = (xB * mB + xH * mH + w * mF) / mT
    zT = (-rR * mR + zB * mB + zH * mH - rF * mF) / mT
    ITxx = IRxx + IBxx + IHxx + IFxx + mR * rR**2 + mB * zB**2 + mH * zH**2 + mF * rF**2
    ITxz = IBxz + IHxz - mB * xB * zB - mH * xH * zH + mF * w * rF
    ITzz = IRxx + IBzz + IHzz + IFxx + mB * xB**2 + mH * xH**2 + mF * w**2
    mA = mH + mF
    xA, zA = (xH * mH + w * mF) / mA, (zH * mH - rF * mF) / mA
    IAxx = IHxx + IFxx + mH * (zH - zA) ** 2 + mF * (rF + zA) ** 2
    IAxz = IHxz - mH * (xH - xA) * (zH - zA) + mF * (w - xA) * (rF + zA)
    IAzz = IHzz + IFxx + mH * (xH - xA) ** 2 + mF * (w - xA) ** 2
    uA = (xA - w - c) * cl - zA * sl
    IAll = mA * uA**2 + IAxx * sl**2 + 2 * IAxz * sl * cl + IAzz * cl**2
    IAlx = -mA * uA * zA + IAxx * sl + IAxz * cl
    IAlz = mA * uA * xA + IAxz * sl + IAzz * cl
    mu = c / w * cl
    SR, SF = IRyy / rR, IFyy / rF
    ST, SA = SR + SF, mA * uA + mu * mT * xT
    M = np.array([[ITxx, IAlx + mu * ITxz], [IAlx + mu * ITxz, IAll + 2 * mu * IAlz + mu**2 * ITzz]])
    K0 = np.array([[mT * zT, -SA], [-SA, -SA * sl]])
    K2 = np.array([[0.0, (ST - mT * zT) * cl / w], [0.0, (SA + SF * sl) * cl / w]])
    C1 = np.array([
        [0.0, mu * ST + SF * cl + ITxz * cl / w - mu * mT * zT],
        [-(mu * ST + SF * cl), IAlz * cl / w + mu * (SA + ITzz * cl / w)],
    ])  # fmt: skip
    return M, C1, K0, K2


# ----------------------------------------------------------------- the bicycle
def test_eigenvalues_at_5_m_s_equal_table_2(whipple, bike):
    """The heart of the benchmark, at one speed of the table (all of them: below)."""
    got = _sorted(whipple.eigenvalues(5.0, bike))
    assert np.abs(got - _sorted(TABLE_2[5])).max() < 1e-10


def test_mass_matrix_and_linearised_terms_equal_the_closed_form(whipple, bike):
    """M from the constrained mass matrix at the upright configuration; g K0 + v^2 K2 and v C1
    from the state matrix (``-M^-1 (g K0 + v^2 K2)``, ``-M^-1 v C1``) at v = 0, 1 and 3."""
    M, C1, K0, K2 = benchmark_matrices(whipple.BENCHMARK)
    q0 = whipple.configuration(bike)
    assert np.abs(q0).max() < 1e-15  # the reference configuration touches the ground
    keep = [whipple.INDEPENDENT.index("roll"), whipple.INDEPENDENT.index("steer")]
    A_a = bike.mass_matrix(q0)
    assert np.abs(A_a[np.ix_(keep, keep)] - M).max() < 1e-12
    g = whipple.BENCHMARK["g"]
    for v in (0.0, 1.0, 3.0):
        A = whipple.state_matrix(v, bike)
        np.testing.assert_allclose(-M @ A[2:, :2], g * K0 + v**2 * K2, rtol=0, atol=1e-10)
        np.testing.assert_allclose(-M @ A[2:, 2:], v * C1, rtol=0, atol=1e-10)


def test_pitch_is_solved_for_any_configuration(whipple, bike):
    """The front wheel touches the ground at the pitch found (its rim's lowest point at z = 0, sampled from the pose)."""
    rng = np.random.default_rng(3)
    for _ in range(3):
        roll, steer = rng.uniform(-0.4, 0.4, 2)
        q = whipple.configuration(bike, roll, steer)
        up = np.array([0.0, 0.0, -1.0])
        assert abs(up @ _lowest_rim_point(bike.pose("front", q), whipple.BENCHMARK["rF"], up)) < 1e-12


# Once the bicycle is derived (the module's fixture) the whole table and the speeds take a fraction of a second.
def test_eigenvalues_at_every_speed_of_table_2(whipple, bike):
    for v, expected in TABLE_2.items():
        got = _sorted(whipple.eigenvalues(float(v), bike))
        assert np.abs(got - _sorted(expected)).max() < 1e-10, v


def test_weave_and_capsize_speeds(whipple, bike):
    """The speeds where the weave pair's and the capsize mode's real parts cross zero."""
    from scipy.optimize import brentq

    def weave(v):
        z = np.linalg.eigvals(whipple.state_matrix(v, bike))
        return z[np.abs(z.imag) > 1e-6].real.max()

    def capsize(v):
        z = np.linalg.eigvals(whipple.state_matrix(v, bike))
        real = z[np.abs(z.imag) <= 1e-6].real
        return real[np.argmin(np.abs(real))]

    assert abs(brentq(weave, 4.0, 5.0, xtol=1e-13) - WEAVE_SPEED) < 1e-10
    assert abs(brentq(capsize, 5.5, 6.5, xtol=1e-13) - CAPSIZE_SPEED) < 1e-10


@pytest.mark.long
@pytest.mark.parametrize("method", ["newton-euler", "lagrange"])
def test_every_engine_gives_the_same_bicycle(whipple, bike, method):
    """The rolling discs compose with the tree's models of any engine: the same state matrix as Kane's."""
    other = whipple.numeric(method)
    for v in (0.0, 4.0):
        np.testing.assert_allclose(whipple.state_matrix(v, other), whipple.state_matrix(v, bike), rtol=0, atol=1e-10)


# ------------------------------------------------------------ a rolling coin
def coin(normal_tilt=0.0):
    """A disc on x, y, yaw, lean (about the contact line) and spin; its centre at height r above the contact."""
    I3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

    def frame(label, parent, sigma, P, axis):
        return kr.Frame(label, parent, sigma, 1, GeneralPlacement(R0=I3, P=P, axis=axis, q=label))

    frames = [
        frame("x", "0", 1, [0, 0, 0], [1, 0, 0]),
        frame("y", "x", 1, [0, 0, 0], [0, 1, 0]),
        frame("yaw", "y", 0, [0, 0, 0], [0, 0, 1]),
        frame("lean", "yaw", 0, [0, 0, 0], [1, 0, 0]),
        frame("spin", "lean", 0, [0, 0, "r"], [0, 1, 0]),
    ]
    m, Ia, Id = sympy.symbols("m Ia Id")
    disc = {"XX": Id, "YY": Ia, "ZZ": Id, "XY": 0, "XZ": 0, "YZ": 0, "MX": 0, "MY": 0, "MZ": 0, "M": m, "IA": 0, "FV": 0, "FS": 0}
    return kr.Robot.create("coin", frames, links=["spin"], dynamics={"spin": disc}, base=Base(G=sympy.ImmutableMatrix([0, 0, "-g"])))


def _lowest_rim_point(T, radius, normal, samples=2001):
    """The point of the disc's rim (its axle y of the pose T) lowest along ``normal``: sampled, then the
    zero of the height's derivative along the rim (brentq), so no formula is shared with the model."""
    from scipy.optimize import brentq

    C, e1, e2 = T[:3, 3], T[:3, 0], T[:3, 2]

    def point(s):
        return C + radius * (np.multiply.outer(np.cos(s), e1) + np.multiply.outer(np.sin(s), e2))

    def slope(s):
        return normal @ (radius * (-np.sin(s) * e1 + np.cos(s) * e2))

    s = np.linspace(-np.pi, np.pi, samples)
    k = int(np.argmin(point(s) @ normal))
    return point(brentq(slope, s[k] - 2e-2, s[k] + 2e-2, xtol=1e-15))


@pytest.mark.parametrize("tyre", [0.0, 0.05])
def test_rolling_disc_rows_are_the_velocity_of_the_lowest_point_on_a_slope(tyre):
    """J qd = (t, l, n) . v_P, with v_P the velocity of the disc's material point at its lowest point, differentiated
    from the numeric pose; the disc tilted (random lean) on a plane tilted by 0.3 rad (the contact row is kept);
    a disc and a torus wheel (its tyre's lowest point: ``tyre`` below the rim's)."""
    robot = coin()
    alpha = 0.3
    normal = np.array([np.sin(alpha), 0.0, np.cos(alpha)])
    radius = "r" if tyre == 0.0 else ("r", tyre)
    c = RollingDisc(robot, {"spin": radius}, normal=[sympy.sin(sympy.Symbol("alpha")), 0, sympy.cos(sympy.Symbol("alpha"))])
    assert [kind for _, kind in c.rows] == ["rolling", "lateral", "contact"]
    values = {"r": 0.4, "m": 1.0, "Ia": 0.08, "Id": 0.04, "g": 9.81, "alpha": alpha}
    numeric = c.numeric({sympy.Symbol(k): v for k, v in values.items()})
    fn = ConstrainedModel(robot, "newton-euler", c).numeric(values, backend="numpy")
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd = rng.uniform(-0.6, 0.6, 5), rng.normal(size=5)
        T = fn.pose("spin", q)
        a = T[:3, 1]
        P = _lowest_rim_point(T, values["r"], normal) - tyre * normal
        body = np.linalg.solve(T, np.append(P, 1.0))
        eps = 1e-6
        v = (fn.pose("spin", q + eps * qd) @ body - fn.pose("spin", q - eps * qd) @ body)[:3] / (2 * eps)
        t = np.cross(a, normal)
        expected = [t @ v, np.cross(normal, t) @ v, normal @ v]
        got = numeric.J(q[None, :])[0] @ qd
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_rolling_disc_rate_is_the_derivative_of_its_rows():
    """``Jdot(q, qd) v`` (differentiated along the common subexpressions) equals the central difference of ``J(q) v``."""
    c = RollingDisc(coin(), {"spin": "r"}, normal=[0, sympy.Rational(3, 5), sympy.Rational(4, 5)])
    numeric = c.numeric({sympy.Symbol("r"): 0.4})
    rng = np.random.default_rng(11)
    q, qd, v = rng.uniform(-0.6, 0.6, 5), rng.normal(size=5), rng.normal(size=5)
    eps = 1e-6
    expected = (numeric.J((q + eps * qd)[None]) - numeric.J((q - eps * qd)[None]))[0] @ v / (2 * eps)
    np.testing.assert_allclose(numeric.rate(q[None], v[None], qd[None])[0], expected, rtol=0, atol=1e-8)


@pytest.mark.parametrize("seed", [0, 1])
def test_steady_rolling_coin_lean_equals_the_closed_form(seed):
    """A coin rolling upright at spin rate W: the lean and the yaw rate obey
    ``(Id + m r^2) lean'' = (m g r - (Ia + m r^2) (Ia / Id) W^2) lean`` (the yaw
    rate ``(Ia W / Id) lean``), so two eigenvalues are ``+-sqrt(K)`` with K that
    bracket; the others are 0 (yaw and spin angles, spin rate).  Random body,
    one speed below and one above the critical one."""
    rng = np.random.default_rng(seed)
    m, r, g = rng.uniform(0.5, 2.0), rng.uniform(0.2, 0.6), 9.81
    Ia = m * r**2 * rng.uniform(0.3, 0.7)
    Id = Ia * rng.uniform(0.55, 1.0)
    model = rolling_disc_model(coin(), {"spin": "r"}, "kane")
    assert model.independent == ("yaw", "lean", "spin")  # x and y follow (the default choice)
    fn = model.numeric({"m": m, "r": r, "Ia": Ia, "Id": Id, "g": g}, backend="numpy")
    critical = np.sqrt(m * g * r * Id / ((Ia + m * r**2) * Ia))
    for W in (0.5 * critical, 2.0 * critical):
        A, _ = linearize(fn, np.zeros(5), qd_eq=[0.0, 0.0, W], order=8, step=1e-2)
        K = (m * g * r - (Ia + m * r**2) * Ia / Id * W**2) / (Id + m * r**2)
        z = np.linalg.eigvals(A)
        z = z[np.argsort(-np.abs(z))][:2]
        np.testing.assert_allclose(sorted(z, key=lambda x: (x.real, x.imag)), sorted(np.sqrt(complex(K)) * np.array([1, -1]),
                                   key=lambda x: (x.real, x.imag)), rtol=0, atol=1e-9)


def test_rolling_disc_refusals():
    robot = coin()
    with pytest.raises(KaneRobotError, match="must be revolute"):
        RollingDisc(robot, {"x": "r"})
    with pytest.raises(KaneRobotError, match="not a unit vector"):
        RollingDisc(robot, {"spin": "r"}, normal=(0, 1, 1))
    with pytest.raises(KaneRobotError, match="not determined"):
        RollingDisc(robot, {"spin": "r"}, independent=["x", "y", "spin"])  # yaw and lean turn about lines through the contact
    with pytest.raises(KaneRobotError, match="as many coordinates"):
        RollingDisc(robot, {"spin": "r"}, normal=(0, 0.6, 0.8)).solve_contact({"r": 0.3}, np.zeros(5), [])


# diffdrive's own rows (its castor wheel's) take 4 s to build: long
@pytest.mark.parametrize("name", ["krang_wheeled", pytest.param("diffdrive", marks=pytest.mark.long)])
def test_upright_wheels_of_a_planar_chassis_give_the_planar_rolling_constraints(name):
    """The planar chassis's wheels (OpenSYMORO's rows, :class:`~kanerobot.dynamics.wheeled.Rolling`) as rolling
    discs on its ground: the contact rows vanish (dropped) and the rows span the same constraints at random
    configurations and lengths (the ranks of J, W and [J; W] equal)."""
    from kanerobot.dynamics.wheeled import Rolling, tree_robot
    from kanerobot.rolling import ground

    robot = kr.load(kr.frames_path(name))
    normal, height = ground(robot)
    c = RollingDisc(tree_robot(robot), {w.joint: w.radius for w in robot.wheels}, normal=list(normal), height=height)
    assert [kind for _, kind in c.rows] == ["rolling", "lateral"] * len(robot.wheels)
    W = Rolling(robot).J
    rng = np.random.default_rng(5)
    symbols = sorted(set().union(*(sympy.sympify(e).free_symbols for e in list(W) + list(c.J))), key=str)
    for _ in range(2):
        values = {s: sympy.Float(rng.uniform(0.2, 0.7)) for s in symbols}
        Jn, Wn = (np.array(M.xreplace(values).evalf(), dtype=float) for M in (c.J, W))
        ranks = [np.linalg.matrix_rank(M, tol=1e-9) for M in (Jn, Wn, np.vstack([Jn, Wn]))]
        assert ranks[0] == ranks[1] == ranks[2] > 0


def test_rolling_disc_refuses_a_ball_joint_on_its_way_to_the_ground():
    from kanerobot.robot import joints

    I3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    robot = kr.Robot.create("ball_wheel", [
        kr.Frame("b", "0", joints.Spherical(), 1, GeneralPlacement(R0=I3, P=[0, 0, 1], axis=[0, 0, 1])),
        kr.Frame("w", "b", 0, 1, GeneralPlacement(R0=I3, P=[0, 0, 0], axis=[0, 1, 0], q="w")),
    ])  # fmt: skip
    with pytest.raises(KaneRobotError, match="joint 'b' on its way to the ground is spherical"):
        RollingDisc(robot, {"w": 0.1})


def test_linearize_about_a_moving_state_equals_the_analytic_derivatives():
    """A two-link arm moving at random rates (``qd_eq``): the central differences of order 8 equal the
    derivative programs' A and B to 1e-9 relative, order 2 to 1e-6 only; an unknown order is refused."""
    from kanerobot.dynamics.parameters import random_parameters

    robot = kr.load(kr.frames_path("planar2"))
    rng = np.random.default_rng(2)
    fn = kr.derive(robot).numeric(random_parameters(robot, rng, friction=False), backend="numpy")
    q_eq, qd_eq, u_eq = rng.uniform(-1, 1, 2), rng.uniform(-2, 2, 2), rng.uniform(-1, 1, 2)
    A, B = linearize(fn, q_eq, u_eq, qd_eq=qd_eq)
    dq, dqd, _ = fn.direct_dynamics_derivatives(q_eq, qd_eq, u_eq)
    np.testing.assert_array_equal(A[2:], np.hstack([dq, dqd]))
    for order, step, tol in ((8, 1e-2, 1e-9), (2, 1e-6, 1e-6)):
        A_fd, B_fd = linearize(fn, q_eq, u_eq, qd_eq=qd_eq, analytic=False, order=order, step=step)
        assert np.abs(A_fd - A).max() < tol * np.abs(A).max() and np.abs(B_fd - B).max() < tol * np.abs(B).max()
    with pytest.raises(KaneRobotError, match=r"linearize\(order=3\)"):
        linearize(fn, q_eq, order=3)
