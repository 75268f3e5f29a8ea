"""PUMA 560 and UR5 from their published standard-DH tables, with joint offsets (issue 13).

tests/data/dh/ holds each robot twice: a SYMORO ``.par`` (Khalil-Kleinfinger
table, ``theta = th2 + pi/2``) and a ``.toml`` (KK frames for the PUMA,
general frames ``q = "q2 - pi/2"`` for the UR5), converted by hand from the
published tables written again below.  Each model of each file, in each
engine, must equal an independent reference built from these tables alone:

* :class:`reference_dynamics.StandardDHArm`, numpy RNEA and CRBA written in
  the standard-DH link frames with the published link inertias (always);
* pinocchio, built from the same DH numbers (when ``pin`` is installed).

A slip in the DH-to-KK conversion, in the inertia transform, or in how any
engine honours an offset shows as a mismatch here, since neither reference
reads a robot file.
"""

import functools
from pathlib import Path

import numpy as np
import pytest
from reference_dynamics import StandardDHArm, rot_x_matrix, rot_z_matrix

import kanerobot as kr

DATA = Path(__file__).resolve().parent / "data" / "dh"
HALF_PI = np.pi / 2


def diagonal(*moments):
    return np.diag(np.array(moments, dtype=float))


def cylinder(mass, radius, length, axis):
    """Inertia about the centre of a solid cylinder along ``axis`` ('x', 'y' or 'z'),
    rounded to 1e-10 kg m^2 as in ur5_dh.par."""
    along = round(mass * radius**2 / 2, 10)
    across = round(mass * (3 * radius**2 + length**2) / 12, 10)
    moments = [across] * 3
    moments["xyz".index(axis)] = along
    return diagonal(*moments)


#: Corke & Armstrong-Helouvry (ICRA 1994), Robotics Toolbox for Python
#: models.DH.Puma560; offsets +pi/2, -pi/2 on joints 2, 3 (zero = READY).
PUMA560 = {
    "d": [0.672, 0.0, 0.15005, 0.4318, 0.0, 0.0],
    "a": [0.0, 0.4318, 0.0203, 0.0, 0.0, 0.0],
    "alpha": [HALF_PI, 0.0, -HALF_PI, HALF_PI, -HALF_PI, 0.0],
    "offset": [0.0, HALF_PI, -HALF_PI, 0.0, 0.0, 0.0],
    "mass": [0.0, 17.4, 4.8, 0.82, 0.34, 0.09],
    "com": [[0, 0, 0], [-0.3638, 0.006, 0.2275], [-0.0203, -0.0141, 0.070], [0, 0.019, 0], [0, 0, 0], [0, 0, 0.032]],
    "inertia": [
        diagonal(0, 0.35, 0),
        diagonal(0.13, 0.524, 0.539),
        diagonal(0.066, 0.086, 0.0125),
        diagonal(1.8e-3, 1.3e-3, 1.8e-3),
        diagonal(0.3e-3, 0.4e-3, 0.3e-3),
        diagonal(0.15e-3, 0.15e-3, 0.04e-3),
    ],
    # Jm G^2: motor inertia seen from the link.
    "armature": [
        200e-6 * 62.6111**2,
        200e-6 * 107.815**2,
        200e-6 * 53.7063**2,
        33e-6 * 76.0364**2,
        33e-6 * 71.923**2,
        33e-6 * 76.686**2,
    ],
    "gravity": [0.0, 0.0, -9.81],
}

#: Universal Robots' UR5 table, masses and centres of mass; offsets -pi/2 on
#: joints 2 and 4 (zero = upright); cylinder inertias (see ur5_dh.par).
UR5_MASS = [3.7, 8.393, 2.33, 1.219, 1.219, 0.1879]
UR5 = {
    "d": [0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823],
    "a": [0.0, -0.425, -0.39225, 0.0, 0.0, 0.0],
    "alpha": [HALF_PI, 0.0, 0.0, HALF_PI, -HALF_PI, 0.0],
    "offset": [0.0, -HALF_PI, 0.0, -HALF_PI, 0.0, 0.0],
    "mass": UR5_MASS,
    "com": [
        [0, -0.02561, 0.00193],
        [0.2125, 0, 0.11336],
        [0.15, 0, 0.0265],
        [0, -0.0018, 0.01634],
        [0, 0.0018, 0.01634],
        [0, 0, -0.001159],
    ],
    "inertia": [
        cylinder(m, 0.06, length, axis)
        for m, length, axis in zip(UR5_MASS, [0.15, 0.56, 0.5, 0.12, 0.12, 0.12], "yxxyyz")
    ],
    "gravity": [0.0, 0.0, -9.81],
}

TABLES = {"puma560_dh": PUMA560, "ur5_dh": UR5}
FILES = [(name, suffix) for name in TABLES for suffix in (".par", ".toml")]
ENGINES = ["newton-euler", "kane", "lagrange"]


@functools.cache
def robot_of(name, suffix):
    return kr.load(DATA / f"{name}{suffix}")


@functools.cache
def numeric_model(name, suffix, method):
    """(model, numeric functions): derived once per session (a 6R Kane or
    Lagrange model takes seconds)."""
    model = kr.derive(robot_of(name, suffix), method)
    return model, model.numeric({}, backend="numpy")


def random_states(seed, count=4, n=6):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)


def assert_relative(actual, expected, what, tol=1e-9):
    """``actual`` equals ``expected`` to ``tol`` relative to the largest entry of ``expected``."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = np.max(np.abs(expected))
    assert scale > 0, what
    error = np.max(np.abs(actual - expected)) / scale
    assert error <= tol, f"{what}: relative error {error:.3g}\n{actual}\n{expected}"


# ------------------------------------------------------ the reference itself
def test_the_offsets_give_the_published_zero_poses():
    """q = 0 is the PUMA's READY pose (arm vertical) and the UR5 standing upright."""
    puma, ur5 = StandardDHArm(PUMA560), StandardDHArm(UR5)
    # READY: the wrist centre straight above the shoulder, 0.672 + 0.4318 + 0.4318 m up
    # (a3 = 0.0203 sideways); the toolbox's qr = (0, pi/2, -pi/2, 0, 0, 0) with no offsets.
    p = puma.forward_kinematics(np.zeros(6))[:3, 3]
    np.testing.assert_allclose(p, [0.0203, -0.15005, 0.672 + 0.4318 + 0.4318], atol=1e-12)
    no_offsets = StandardDHArm(dict(PUMA560, offset=[0.0] * 6))
    np.testing.assert_allclose(no_offsets.forward_kinematics([0, HALF_PI, -HALF_PI, 0, 0, 0]), puma.forward_kinematics(np.zeros(6)), atol=1e-12)
    # Upright UR5: the flange at d1 + 0.425 + 0.39225 + d5 high, d4 + d6 sideways.
    p = ur5.forward_kinematics(np.zeros(6))[:3, 3]
    np.testing.assert_allclose(p, [0.0, -(0.10915 + 0.0823), 0.089159 + 0.425 + 0.39225 + 0.09465], atol=1e-12)


def test_reference_mass_matrix_is_the_kinetic_energy_hessian():
    """The CRBA of the reference against a finite-difference path of its RNEA:
    A(q) column j = (tau(q, 0, h e_j) - tau(q, 0, 0)) / h without gravity (exact, linear)."""
    for table in TABLES.values():
        arm = StandardDHArm(table)
        for q, _, _ in random_states(3, count=2):
            zero = np.zeros(6)
            columns = [arm.inverse_dynamics(q, zero, e, gravity=False) for e in np.eye(6)]
            assert_relative(arm.mass_matrix(q), np.array(columns).T, "CRBA vs RNEA", tol=1e-13)


def test_reference_gravity_is_the_potential_energy_gradient():
    """g(q) = dU/dq with U = -sum m_i gravity . c_i(q), by central differences."""
    for table in TABLES.values():
        arm = StandardDHArm(table)
        gravity = np.asarray(table["gravity"])

        def potential(q, arm=arm, table=table, gravity=gravity):
            U, T = 0.0, np.eye(4)
            for step, m, c in zip(arm.transforms(q), table["mass"], table["com"]):
                T = T @ step
                U -= m * gravity @ (T[:3, :3] @ np.asarray(c, dtype=float) + T[:3, 3])
            return U

        for q, _, _ in random_states(4, count=2):
            h = 1e-6
            gradient = [(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(6)]
            assert_relative(arm.gravity(q), gradient, "gravity vs dU/dq", tol=1e-7)


def test_rotations_of_the_reference():
    """Rz and Rx of the reference are right-handed rotations."""
    np.testing.assert_allclose(rot_z_matrix(HALF_PI) @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(rot_x_matrix(HALF_PI) @ [0, 1, 0], [0, 0, 1], atol=1e-15)


# ----------------------------------------------------- every file and engine
@pytest.mark.parametrize("method", ENGINES)
@pytest.mark.parametrize("name,suffix", FILES)
@pytest.mark.long
def test_models_equal_the_standard_dh_reference(name, suffix, method):
    robot = robot_of(name, suffix)
    assert [robot.frame(label).offset != 0 for label in robot.joint_labels].count(True) == 2
    model, fn = numeric_model(name, suffix, method)
    state = {str(s) for s in robot.q} | {f"{p}{label}" for p in ("QP", "QDP") for label in robot.joint_labels}
    assert not state & set(model.parameters), model.parameters
    reference = StandardDHArm(TABLES[name])
    for q, qd, qdd in random_states(sum(map(ord, name + suffix + method))):
        tau = reference.inverse_dynamics(q, qd, qdd)
        assert_relative(fn.inverse_dynamics(q, qd, qdd), tau, "inverse dynamics")
        assert_relative(fn.mass_matrix(q), reference.mass_matrix(q), "A")
        assert_relative(fn.coriolis_matrix(q, qd) @ qd, reference.coriolis_times_qd(q, qd), "C qd")
        assert_relative(fn.gravity(q), reference.gravity(q), "gravity")
        assert_relative(fn.direct_dynamics(q, qd, tau), qdd, "direct dynamics")
        assert_relative(fn.direct_dynamics(q, qd, tau), reference.direct_dynamics(q, qd, tau), "direct dynamics")


@pytest.mark.parametrize("name,suffix", FILES)
def test_geometry_equals_the_standard_dh_table(name, suffix):
    """Frame 6 of the file sits where the DH table puts frame 6 (a6 = alpha6 = 0)."""
    robot = robot_of(name, suffix)
    reference = StandardDHArm(TABLES[name])
    transform = kr.geometry.numeric_transform(robot, "0", "6", {})
    for q, _, _ in random_states(5):
        np.testing.assert_allclose(transform(q), reference.forward_kinematics(q), atol=1e-12)


# --------------------------------------------------------------- pinocchio
def pinocchio_model(table):
    """pinocchio's model of the DH table: joint i turns about z of DH frame
    i-1, placed by the previous link's Tz(d) Tx(a) Rx(alpha) and, folded in,
    Rz(offset_i) (which commutes with the joint's own rotation)."""
    pin = pytest.importorskip("pinocchio", reason="install pin: pip install pin")
    model = pin.Model()
    model.gravity = pin.Motion(np.array(table["gravity"], dtype=float), np.zeros(3))
    parent, fixed = 0, pin.SE3.Identity()
    armature = []
    for i in range(len(table["d"])):
        offset = pin.SE3(rot_z_matrix(table["offset"][i]), np.zeros(3))
        joint = model.addJoint(parent, pin.JointModelRZ(), fixed * offset, f"joint{i + 1}")
        # Tz(d) Tx(a) Rx(alpha): DH frame i in the joint frame.
        link = pin.SE3(rot_x_matrix(table["alpha"][i]), np.array([table["a"][i], 0.0, table["d"][i]]))
        inertia = pin.Inertia(table["mass"][i], np.array(table["com"][i], dtype=float), np.asarray(table["inertia"][i], dtype=float))
        model.appendBodyToJoint(joint, link.act(inertia), pin.SE3.Identity())
        armature.append(table.get("armature", [0.0] * 6)[i])
        parent, fixed = joint, link
    model.armature = np.array(armature)
    # Frame n of the table: the last joint's frame moved by the last link.
    model.addFrame(pin.Frame("dh_end", parent, fixed, pin.FrameType.OP_FRAME))
    return pin, model


@pytest.mark.parametrize("name", list(TABLES))
def test_reference_equals_pinocchio(name):
    pin, model = pinocchio_model(TABLES[name])
    data = model.createData()
    reference = StandardDHArm(TABLES[name])
    for q, qd, qdd in random_states(11):
        assert_relative(reference.inverse_dynamics(q, qd, qdd), pin.rnea(model, data, q, qd, qdd), "rnea")
        assert_relative(reference.mass_matrix(q), symmetric(pin.crba(model, data, q)), "crba")
        assert_relative(reference.gravity(q), pin.computeGeneralizedGravity(model, data, q), "gravity")
        C = pin.computeCoriolisMatrix(model, data, q, qd)
        assert_relative(reference.coriolis_times_qd(q, qd), C @ qd, "C qd")
        pin.framesForwardKinematics(model, data, q)
        end = data.oMf[model.getFrameId("dh_end")].homogeneous
        np.testing.assert_allclose(end, reference.forward_kinematics(q), atol=1e-12)


def symmetric(upper):
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.mark.parametrize("method", ENGINES)
@pytest.mark.parametrize("name,suffix", FILES)
def test_models_equal_pinocchio(name, suffix, method):
    pin, pmodel = pinocchio_model(TABLES[name])
    data = pmodel.createData()
    _, fn = numeric_model(name, suffix, method)
    for q, qd, qdd in random_states(sum(map(ord, name + suffix + method)) + 1, count=3):
        tau = pin.rnea(pmodel, data, q, qd, qdd)
        assert_relative(fn.inverse_dynamics(q, qd, qdd), tau, "rnea")
        assert_relative(fn.mass_matrix(q), symmetric(pin.crba(pmodel, data, q)), "crba")
        assert_relative(fn.coriolis_matrix(q, qd) @ qd, pin.computeCoriolisMatrix(pmodel, data, q, qd) @ qd, "C qd")
        assert_relative(fn.gravity(q), pin.computeGeneralizedGravity(pmodel, data, q), "gravity")
        assert_relative(fn.direct_dynamics(q, qd, tau), pin.aba(pmodel, data, q, qd, tau), "aba")


# --------------------------------------------------------------------- IGM
def wrapped(angles):
    return (np.asarray(angles) + np.pi) % (2 * np.pi) - np.pi


# Deriving Paul's solver takes seconds per robot: the default run keeps one
# file of each robot (KK frames for the PUMA, general frames for the UR5).
IGM_FILES = [
    ("puma560_dh", ".par"),
    ("ur5_dh", ".toml"),
    pytest.param("puma560_dh", ".toml", marks=pytest.mark.slow),
    pytest.param("ur5_dh", ".par", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name,suffix", IGM_FILES)
@pytest.mark.long
def test_inverse_geometric_returns_the_generating_configuration(name, suffix):
    robot = robot_of(name, suffix)
    reference = StandardDHArm(TABLES[name])
    for q, _, _ in random_states(17, count=3):
        T = reference.forward_kinematics(q)
        solutions = kr.inverse_geometric(robot, T, {})
        assert solutions, (name, suffix, q, getattr(solutions, "message", ""))
        distances = [np.max(np.abs(wrapped(np.asarray(s) - q))) for s in solutions]
        assert min(distances) < 1e-7, (name, suffix, q, solutions)
        transform = kr.geometry.numeric_transform(robot, "0", "6", {})
        for s in solutions:
            np.testing.assert_allclose(transform(np.asarray(s)), T, atol=1e-8)
