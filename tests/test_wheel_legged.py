"""A wheel-legged quadruped on a floating base: rolling discs (:class:`~kanerobot.dynamics.rolling_disc.RollingDisc`) on a floating tree.

The robot is ``examples/wheel_legged/wheel_legged.py``'s (four legs of
abduction, flexion and knee, a wheel on each foot, random physically
consistent inertias).  The reference is pinocchio's free-flyer tree
(:func:`~kanerobot.interop.to_pinocchio`) with the contact rows written
here from pinocchio's joint Jacobians and classical accelerations (the
material point of each wheel at its contact point), projected on the
independent speeds by ``G``: ``J_d X = -J_a``.
"""

import importlib.util
import pathlib

import numpy as np
import pytest
import sympy

import kanerobot as kr
from kanerobot.dynamics.constrained import batched_function, configuration, velocity_columns
from kanerobot.dynamics.rolling_disc import RollingDisc
from kanerobot.errors import KaneRobotError
from kanerobot.interop import to_pinocchio
from kanerobot.robot.description import GeneralPlacement

PIN_REASON = "pip install -e '.[test]' (pinocchio): the reference is pinocchio's floating tree with the contact rows by hand"
EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "wheel_legged" / "wheel_legged.py"
N = np.array([0.0, 0.0, 1.0])  # the ground's normal in the world


def _example():
    spec = importlib.util.spec_from_file_location("wheel_legged", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quadruped():
    """The example's model, its numeric functions and pinocchio's tree, with the same random inertias."""
    pin = pytest.importorskip("pinocchio", reason=PIN_REASON)
    wl = _example()
    tree = wl.robot()
    model = wl.model(tree)
    values = wl.values(tree, seed=3)
    fn = model.numeric(values, backend="numpy")
    pmodel = to_pinocchio(tree, values)
    return wl, tree, model, values, fn, pin, pmodel


def _skew(x):
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def contact_rows(pin, pmodel, tree, q, v, radius):
    """The rows (t, l, n) of each wheel's contact point's material velocity, and ``Jdot v``, from pinocchio.

    The contact point ``P = C - r u``, ``u = (n - (n.a) a) / |.|`` (``a`` the
    axle: the wheel joint's column of the angular Jacobian, in the world).
    ``d/dt (d . v_P)`` along ``v`` with ``v_P = v_C + w x (P - C)``: ``d .
    (a_C + alpha x (P - C) + w x (Pdot - v_C))`` where ``v_P = 0``, ``a_C``,
    ``alpha`` pinocchio's classical accelerations at zero joint
    accelerations and ``Pdot - v_C = -r udot`` (``adot = w x a``).
    """
    data = pmodel.createData()
    pin.forwardKinematics(pmodel, data, q, v, np.zeros(pmodel.nv))
    pin.computeJointJacobians(pmodel, data, q)
    frame = pin.LOCAL_WORLD_ALIGNED
    rows, rates, heights = [], [], []
    for label in [label for label in tree.joint_labels if label.startswith("wh")]:
        j = pmodel.getJointId(f"joint{label}")
        Jj = pin.getJointJacobian(pmodel, data, j, frame)
        a = Jj[3:, pmodel.joints[j].idx_v]
        C = data.oMi[j].translation
        w_ = N - N.dot(a) * a
        u = w_ / np.linalg.norm(w_)
        P = C - radius * u
        JP = Jj[:3] - _skew(P - C) @ Jj[3:]
        t = np.cross(a, N)
        directions = (t, np.cross(N, t), N)
        rows += [d @ JP for d in directions]
        omega = pin.getVelocity(pmodel, data, j, frame).angular
        aC = pin.getClassicalAcceleration(pmodel, data, j, frame).linear
        alpha = pin.getAcceleration(pmodel, data, j, frame).angular
        adot = np.cross(omega, a)
        wdot = -N.dot(adot) * a - N.dot(a) * adot
        udot = wdot / np.linalg.norm(w_) - w_ * w_.dot(wdot) / np.linalg.norm(w_) ** 3
        acc = aC + np.cross(alpha, P - C) - radius * np.cross(omega, udot)
        rates += [d @ acc for d in directions]
        heights.append(N @ P)
    return np.array(rows), np.array(rates), np.array(heights)


def random_stance(wl, c, values, rng):
    """A random configuration on the ground: random base pose and legs about the stance, the knees solved."""
    yaw, roll, pitch = rng.uniform(-np.pi, np.pi), rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1)
    joints = {label: rng.uniform(-0.15, 0.15) for label in c.robot.joint_labels if label.startswith("ha")}
    joints |= {label: 0.7 + rng.uniform(-0.2, 0.2) for label in c.robot.joint_labels if label.startswith("hf")}
    joints |= {label: rng.uniform(-3, 3) for label in c.robot.joint_labels if label.startswith("wh")}
    q = wl.standing(c, values, height=0.33 + rng.uniform(-0.03, 0.03), yaw=0.0, base=rng.uniform(-1, 1, 2), joints=joints)
    quat = pin_quaternion(roll, pitch, yaw)
    q[3:7] = quat
    return c.solve_contact(values, q, wl.KNEES)


def pin_quaternion(roll, pitch, yaw):
    """(x, y, z, w) of Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = np.cos(roll / 2), np.sin(roll / 2), np.cos(pitch / 2), np.sin(pitch / 2), np.cos(yaw / 2), np.sin(yaw / 2)
    return np.array([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy])


def reference(pin, pmodel, tree, model, q, qd_a, qdd_a, radius):
    """``(A_a, h_a, Gamma_a, G)``: pinocchio's crba, nle and rnea projected by G from the hand-written rows."""
    data = pmodel.createData()
    dep = velocity_columns(tree, model.constraint.dependent)
    ind = velocity_columns(tree, model.independent)
    J, _, _ = contact_rows(pin, pmodel, tree, q, np.zeros(pmodel.nv), radius)
    G = np.zeros((pmodel.nv, len(ind)))
    G[ind, :] = np.eye(len(ind))
    G[dep, :] = -np.linalg.solve(J[:, dep], J[:, ind])
    v = G @ qd_a
    _, rate, _ = contact_rows(pin, pmodel, tree, q, v, radius)
    g = np.zeros(pmodel.nv)
    g[dep] = -np.linalg.solve(J[:, dep], rate)
    A = pin.crba(pmodel, data, q)
    A = np.triu(A) + np.triu(A, 1).T
    h = G.T @ (A @ g + pin.nonLinearEffects(pmodel, data, q, v))
    tau = G.T @ pin.rnea(pmodel, data, q, v, G @ qdd_a + g)
    return G.T @ A @ G, h, tau, G


def test_a_wheeled_leg_on_a_floating_body_has_pinocchios_contact_rows():
    """One leg (abduction, flexion, knee) and its wheel on a floating body: J's base columns (the free flyer's
    twist in frame 0 moving the contact point) and ``Jdot v`` (the free flyer's rates) equal the rows written
    from pinocchio's joint Jacobians and classical accelerations, on the ground and off it, any speeds."""
    pin = pytest.importorskip("pinocchio", reason=PIN_REASON)
    wl = _example()
    tree = wl.robot("one_leg", wl.LEGS[:1])
    c = RollingDisc(tree, {"wh_fl": "r"})
    assert c.J.shape == (3, 10) and c.dependent == ("ha_fl", "hf_fl", "kn_fl") and c.coordinates == ("kn_fl",)
    values = wl.values(tree, seed=1)
    pmodel = to_pinocchio(tree, values)
    constraint = c.numeric({sympy.Symbol(k): v for k, v in values.items()})
    rng = np.random.default_rng(2)
    for touching in (True, False):
        q = np.concatenate([rng.uniform(-1, 1, 2), [0.33], pin_quaternion(*rng.uniform(-0.2, 0.2, 3)),
                            [rng.uniform(-0.2, 0.2), 0.7, -1.3, rng.uniform(-3, 3)]])
        if touching:
            q = c.solve_contact(values, q, ["kn_fl"])
        v = rng.normal(size=10)
        J, rate, heights = contact_rows(pin, pmodel, tree, q, v, values["r"])
        assert (abs(heights[0]) < 1e-12) == touching  # the contact point's height in the world, by pinocchio
        np.testing.assert_allclose(constraint.J(q[None])[0], J, rtol=0, atol=1e-12)
        if touching:  # Jdot v by hand assumes v_P = 0: take v in J's null space
            v = v - np.linalg.pinv(J) @ (J @ v)
            _, rate, _ = contact_rows(pin, pmodel, tree, q, v, values["r"])
            np.testing.assert_allclose(constraint.rate(q[None], v[None], v[None])[0], rate, rtol=0, atol=1e-10 * max(1, np.abs(rate).max()))


@pytest.mark.long
def test_rolling_discs_on_a_floating_tree_are_pinocchios_contact_rows(quadruped):
    """J (base columns from the free flyer's twist in frame 0) and ``Jdot v`` (through the dependent
    accelerations at ``qdd_a = 0``: ``J_d qdd_d = -Jdot v``) equal the rows written from pinocchio's joint
    Jacobians and classical accelerations, at random configurations on the ground."""
    wl, tree, model, values, fn, pin, pmodel = quadruped
    c = model.constraint
    assert c.J.shape == (12, 22) and c.redundant == () and len(c.contact) == 4 and model.dof == 10
    assert c.dependent == ("0", "kn_fl", "ha_fr", "hf_fr", "hf_rl", "ha_rr", "kn_rr") and c.coordinates == ("kn_fl", "hf_fr", "hf_rl", "kn_rr")
    J_of = batched_function(list(c.J), [configuration(tree)], {sympy.Symbol(k): v for k, v in values.items()})
    dep = velocity_columns(tree, c.dependent)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = random_stance(wl, c, values, rng)
        qd_a = rng.normal(size=10)
        v = fn.velocities(q, qd_a)
        J, rate, heights = contact_rows(pin, pmodel, tree, q, v, values["r"])
        np.testing.assert_allclose(heights, 0.0, atol=1e-12)  # on the ground, by pinocchio's kinematics
        np.testing.assert_allclose(J_of(q[None])[0].reshape(12, 22), J, rtol=0, atol=1e-12)
        np.testing.assert_allclose(J @ v, 0.0, atol=1e-12)
        qdd = fn.accelerations(q, qd_a, np.zeros(10))
        np.testing.assert_allclose(-J[:, dep] @ qdd[dep], rate, rtol=0, atol=1e-10 * max(1, np.abs(rate).max()))


@pytest.mark.long
def test_wheel_legged_constrained_dynamics_equal_pinocchios_projected(quadruped):
    """Mass matrix, h and inverse dynamics in the 10 independent speeds equal pinocchio's floating tree
    projected by G (the hand-written rows) at random configurations on the ground and random speeds, to 1e-9."""
    wl, tree, model, values, fn, pin, pmodel = quadruped
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = random_stance(wl, model.constraint, values, rng)
        qd, qdd = rng.normal(size=10), rng.normal(size=10)
        A, h, tau, G = reference(pin, pmodel, tree, model, q, qd, qdd, values["r"])
        scale = max(1.0, np.abs(tau).max(), np.abs(h).max())
        np.testing.assert_allclose(fn.G(q), G, rtol=0, atol=1e-10 * max(1.0, np.abs(G).max()))
        np.testing.assert_allclose(fn.mass_matrix(q), A, rtol=0, atol=1e-9 * max(1.0, np.abs(A).max()))
        np.testing.assert_allclose(fn.h(q, qd), h, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * scale)


def axle(floating):
    """Two coaxial wheels ``l``, ``r`` (radius R, axle along y at height R): on a planar chassis (x, y, heading) or a floating body."""
    I3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    frames = [] if floating else [
        kr.Frame("x", "0", 1, 1, GeneralPlacement(R0=I3, P=[0, 0, 0], axis=[1, 0, 0], q="x")),
        kr.Frame("y", "x", 1, 1, GeneralPlacement(R0=I3, P=[0, 0, 0], axis=[0, 1, 0], q="y")),
        kr.Frame("th", "y", 0, 1, GeneralPlacement(R0=I3, P=[0, 0, "R"], axis=[0, 0, 1], q="th")),
    ]
    base = "0" if floating else "th"
    frames += [kr.Frame("l", base, 0, 1, GeneralPlacement(R0=I3, P=[0, "D", 0], axis=[0, 1, 0], q="ql")),
               kr.Frame("r", base, 0, 1, GeneralPlacement(R0=I3, P=[0, "-D", 0], axis=[0, 1, 0], q="qr"))]  # fmt: skip
    return kr.Robot.create("floating_axle" if floating else "axle", frames, floating=floating)


def test_coaxial_wheels_lateral_rows_are_redundant_and_dropped():
    """Two coaxial wheels on level ground: their lateral rows are equal there (a level axle; on a floating
    body not off the ground, so the rank is taken on the ground): 3 of 4 rows kept, the dependent block
    square (x, y, heading from the spins).  A fixed tree keeps every row unless asked (main's models unchanged)."""
    c = RollingDisc(axle(False), {"l": "R", "r": "R"}, independent=["l", "r"], independent_rows=True)
    assert c.redundant == (("r", "lateral"),) and c.J.shape == (3, 5) and c.dependent == ("x", "y", "th")
    assert RollingDisc(axle(False), {"l": "R", "r": "R"}, independent=["l", "r"]).J.rows == 4
    # on a floating body: 5 independent rows of 6 (two contact rows), but the base's six speeds go together
    # (a label per base speed is not offered): no choice of whole labels determines them, one clear line
    with pytest.raises(KaneRobotError, match="not determined by any choice of whole joints"):
        RollingDisc(axle(True), {"l": "R", "r": "R"})


@pytest.mark.long
def test_independent_speeds_that_do_not_determine_the_others_are_one_clear_error(quadruped):
    """All four knees and the base dependent with the hips independent: with the wheels and hips held the
    base still moves (the knees together): one line naming the choice and how many to pick."""
    wl, tree = quadruped[0], quadruped[1]
    bad = tuple(label for label in tree.joint_labels if not label.startswith("kn"))[:10]
    with pytest.raises(KaneRobotError, match=r"not determined.*choose 10 independent speeds") as error:
        wl.constraint(tree, independent=bad)
    assert "\n" not in str(error.value)


@pytest.mark.long
def test_standing_then_rolling_keeps_the_rolling_constraints_over_5_s():
    """The example's run (``examples/wheel_legged/roll.py``: standing 1 s, then a constant wheel torque): at every
    output the contact heights and the rolling rows ``J qd`` (written here from pinocchio) stay below 1e-8, and the
    integrated configuration (before the projection on the contact) drifts less than 1e-8; the robot rolled forward
    on its legs."""
    pin = pytest.importorskip("pinocchio", reason=PIN_REASON)
    spec = importlib.util.spec_from_file_location("wheel_legged_roll", EXAMPLE.parent / "roll.py")
    roll = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roll)
    wl = roll.wl
    _, drift = roll.run(seconds=5.0)
    tree = wl.robot()
    values = wl.values(tree, 0)
    pmodel = to_pinocchio(tree, values)
    q, t = drift["q"], drift["t"]
    fn_velocities = wl.model(tree).numeric(values, backend="numpy").velocities(q, drift["qd"])
    worst = [0.0, 0.0]
    for qk, vk in zip(q, fn_velocities):
        J, _, heights = contact_rows(pin, pmodel, tree, qk, vk, values["r"])
        worst = [max(worst[0], np.abs(heights).max()), max(worst[1], np.abs(J @ vk).max())]
    assert t[-1] == 5.0 and worst[0] < 1e-8 and worst[1] < 1e-8 and drift["raw height"] < 1e-8
    assert q[-1, 0] > 0.2 and abs(q[-1, 2] - q[0, 2]) < 0.02  # rolled forward, still standing


@pytest.mark.long
def test_symbolic_programs_of_twelve_dependent_speeds_are_refused_in_one_line(quadruped):
    """The 12 x 12 dependent block has no symbolic inverse within reach: one line pointing at numeric(), not a stall."""
    model = quadruped[2]
    with pytest.raises(KaneRobotError, match=r"has 12 dependent speeds; its symbolic solution .* use model.numeric\(values\)") as error:
        model.program("mass_matrix")
    assert "\n" not in str(error.value)
