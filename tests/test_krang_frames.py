"""frames/krang.toml against the seed's MATLAB listing getKrangFrames().

The listing (M. Zafar, "Equations Of Motion of Krang on Fixed Wheels",
section 7.2) is re-typed below, independently of the TOML file: for every
frame the unit vectors x, y, z of the frame in its antecedent and its origin
P, as functions of q and of the lengths L1..L9.  The transforms of the loaded
robot must equal ``[x y z P; 0 0 0 1]`` at random configurations.
"""

from pathlib import Path

import numpy as np
import pytest
import sympy

from kanerobot.robot import frames_toml

KRANG = Path(__file__).resolve().parents[1] / "frames" / "krang.toml"

JOINTS = ("1", "2", "3", "4l", "5l", "6l", "7l", "8l", "9l", "10l", "4r", "5r", "6r", "7r", "8r", "9r", "10r")
Q_NAMES = (
    "q_imu", "q_w", "q_torso",
    "q_1l", "q_2l", "q_3l", "q_4l", "q_5l", "q_6l", "q_7l",
    "q_1r", "q_2r", "q_3r", "q_4r", "q_5r", "q_6r", "q_7r",
)
L_NAMES = tuple(f"L{i}" for i in range(1, 10))


def load(path):
    """kanerobot.robot.io.load, or the TOML reader itself if io cannot import."""
    try:
        from kanerobot.robot.io import load as io_load

        return io_load(path)
    except ImportError:
        return frames_toml.read_frames(path)


# ------------------------------------------------------------------ the seed
def c(a):
    return np.cos(a)


def s(a):
    return np.sin(a)


def listing(q, L):
    """getKrangFrames(): label -> (antecedent, x, y, z, P, e), line by line.

    ``q`` maps the joint variable names to values, ``L`` the lengths.
    """
    L1, L2, L3, L4, L5, L6, L7, L8, L9 = (L[n] for n in L_NAMES)
    f = {}
    # f('1')
    qi = q["q_imu"]
    f["1"] = ("0", [0, -1, 0], [s(qi), 0, c(qi)], [-c(qi), 0, s(qi)], [0, 0, 0], [-1, 0, 0])
    # f('2')
    qw = q["q_w"]
    f["2"] = ("1", [1, 0, 0], [0, c(qw), -s(qw)], [0, s(qw), c(qw)], [0, L1, -L2], [-1, 0, 0])
    # f('3')
    qt = q["q_torso"]
    f["3"] = ("2", [-c(qt), 0, -s(qt)], [0, 1, 0], [s(qt), 0, -c(qt)], [0, L3, L4], [0, -1, 0])
    # f('4l')
    a = q["q_1l"]
    f["4l"] = ("3", [0, c(a), -s(a)], [1, 0, 0], [0, -s(a), -c(a)], [L6, L5, 0], [0, -1, 0])
    # f('5l')
    a = q["q_2l"]
    f["5l"] = ("4l", [-1, 0, 0], [0, -c(a), -s(a)], [0, -s(a), c(a)], [0, 0, 0], [-1, 0, 0])
    # f('6l')
    a = q["q_3l"]
    f["6l"] = ("5l", [-c(a), 0, s(a)], [0, -1, 0], [s(a), 0, c(a)], [0, -L7, 0], [0, -1, 0])
    # f('7l')
    a = q["q_4l"]
    f["7l"] = ("6l", [-1, 0, 0], [0, -c(a), -s(a)], [0, -s(a), c(a)], [0, 0, 0], [-1, 0, 0])
    # f('8l')
    a = q["q_5l"]
    f["8l"] = ("7l", [-c(a), 0, s(a)], [0, -1, 0], [s(a), 0, c(a)], [0, -L8, 0], [0, -1, 0])
    # f('9l')
    a = q["q_6l"]
    f["9l"] = ("8l", [-1, 0, 0], [0, -c(a), -s(a)], [0, -s(a), c(a)], [0, 0, 0], [-1, 0, 0])
    # f('10l')
    a = q["q_7l"]
    f["10l"] = ("9l", [-c(a), 0, s(a)], [-s(a), 0, -c(a)], [0, -1, 0], [0, -L9, 0], [0, 0, -1])
    # f('4r')
    a = q["q_1r"]
    f["4r"] = ("3", [0, c(a), s(a)], [-1, 0, 0], [0, -s(a), c(a)], [-L6, L5, 0], [0, -1, 0])
    # f('5r')
    a = q["q_2r"]
    f["5r"] = ("4r", [-1, 0, 0], [0, -c(a), -s(a)], [0, -s(a), c(a)], [0, 0, 0], [-1, 0, 0])
    # f('6r')
    a = q["q_3r"]
    f["6r"] = ("5r", [-c(a), 0, s(a)], [0, -1, 0], [s(a), 0, c(a)], [0, -L7, 0], [0, -1, 0])
    # f('7r')
    a = q["q_4r"]
    f["7r"] = ("6r", [-1, 0, 0], [0, -c(a), -s(a)], [0, -s(a), c(a)], [0, 0, 0], [-1, 0, 0])
    # f('8r')
    a = q["q_5r"]
    f["8r"] = ("7r", [-c(a), 0, s(a)], [0, -1, 0], [s(a), 0, c(a)], [0, -L8, 0], [0, -1, 0])
    # f('9r')
    a = q["q_6r"]
    f["9r"] = ("8r", [-1, 0, 0], [0, -c(a), -s(a)], [0, -s(a), c(a)], [0, 0, 0], [-1, 0, 0])
    # f('10r')
    a = q["q_7r"]
    f["10r"] = ("9r", [-c(a), 0, s(a)], [-s(a), 0, -c(a)], [0, -1, 0], [0, -L9, 0], [0, 0, -1])
    return f


def listing_T(frame):
    """[x y z P; 0 0 0 1] of one listed frame."""
    _, x, y, z, P, _ = frame
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, y, z, P
    return T


def is_before(f, key1, key2):
    """isBefore(f, key1, key2): frame key1 is on the path from 0 to key2."""
    key = key2
    while key != "0":
        key = f[key][0]
        if key == key1:
            return True
    return False


def Tf(f, key1, key2):
    """The listing's Tf(): frame key1 represented in frame key2."""

    def inverse(frame):
        _, x, y, z, P, _ = frame
        x, y, z, P = (np.array(v, dtype=float) for v in (x, y, z, P))
        return np.array([[*x, -x @ P], [*y, -y @ P], [*z, -z @ P], [0, 0, 0, 1]])

    if is_before(f, key2, key1):  # frame2 is before frame1 in the chain
        T = listing_T(f[key1])
        key = f[key1][0]
        while key != key2:
            T = listing_T(f[key]) @ T
            key = f[key][0]
        return T
    if is_before(f, key1, key2):  # frame1 is before frame2 in the chain
        T = inverse(f[key2])
        key = f[key2][0]
        while key != key1:
            T = T @ inverse(f[key])
            key = f[key][0]
        return T
    raise ValueError(f"{key1} and {key2} are not on one branch")


# ------------------------------------------------------------------ the file
@pytest.fixture(scope="module")
def krang():
    return load(KRANG)


@pytest.fixture(scope="module")
def numeric(krang):
    """label -> function (q, L) -> 4x4 numpy transform of the loaded robot."""
    symbols = [sympy.Symbol(n) for n in Q_NAMES + L_NAMES]
    out = {}
    for frame in krang.frames:
        fn = sympy.lambdify(symbols, frame.transform(), "numpy")
        out[frame.label] = lambda q, L, fn=fn: np.array(fn(*[q[n] for n in Q_NAMES], *[L[n] for n in L_NAMES]), dtype=float)
    return out


def samples(count=6, seed=20150330):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = {n: rng.uniform(-np.pi, np.pi) for n in Q_NAMES}
        L = {n: rng.uniform(0.05, 1.5) for n in L_NAMES}
        yield q, L
    yield {n: 0.0 for n in Q_NAMES}, {n: 1.0 for n in L_NAMES}


def test_structure(krang):
    assert krang.name == "Krang"
    assert krang.dof == 17
    assert krang.nl == krang.nj == krang.nf == 17
    assert krang.structure == "tree"
    assert krang.joint_labels == JOINTS
    assert [str(v) for v in krang.q] == list(Q_NAMES)
    assert all(isinstance(v, sympy.Symbol) for v in krang.q)
    f = listing({n: 0.0 for n in Q_NAMES}, {n: 1.0 for n in L_NAMES})
    assert {fr.label: fr.antecedent for fr in krang.frames} == {label: f[label][0] for label in JOINTS}
    assert krang.children("3") == ("4l", "4r")
    assert krang.geometric_parameters == sorted(L_NAMES)
    assert not krang.floating and not krang.wheeled and krang.loops == ()


def test_axes_and_joint_types(krang):
    f = listing({n: 0.0 for n in Q_NAMES}, {n: 1.0 for n in L_NAMES})
    for frame in krang.frames:
        assert frame.sigma == 0 and frame.mu == 1
        assert list(frame.axis) == f[frame.label][5], frame.label


def test_gravity_and_default_symbols(krang):
    # the seed's gravity [0 0 -g] in frame 0 is G = [0, 0, G3] with G3 = -g
    assert list(krang.base.G) == [0, 0, sympy.Symbol("G3")]
    assert krang.base.Z == sympy.eye(4)
    assert krang.links == JOINTS
    for label in JOINTS:
        for name in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA", "FV", "FS"):
            assert krang.dynamics[label][name] == sympy.Symbol(name + label)
        assert krang.joint_parameters[label]["QP"] == sympy.Symbol("QP" + label)


def test_frame_transforms_equal_the_listing(krang, numeric):
    for q, L in samples():
        f = listing(q, L)
        for label in JOINTS:
            T = numeric[label](q, L)
            assert np.allclose(T, listing_T(f[label]), rtol=0, atol=1e-12), label
            R = T[:3, :3]
            assert np.allclose(R.T @ R, np.eye(3), rtol=0, atol=1e-12), label
            assert abs(np.linalg.det(R) - 1) < 1e-12, label


def test_listing_is_right_handed():
    """The listing's x, y, z are a right-handed frame (z = x cross y)."""
    for q, L in samples(3):
        for label, (_, x, y, z, _, _) in listing(q, L).items():
            assert np.allclose(np.cross(x, y), z, atol=1e-12), label


def test_composed_transforms_to_the_hands(krang, numeric):
    for q, L in samples():
        f = listing(q, L)
        for hand in ("10l", "10r"):
            T = np.eye(4)
            for label in krang.root_path(hand):
                T = T @ numeric[label](q, L)
            assert np.allclose(T, Tf(f, hand, "0"), rtol=0, atol=1e-12), hand
            assert np.allclose(np.linalg.inv(T), Tf(f, "0", hand), rtol=0, atol=1e-12), hand
            R = T[:3, :3]
            assert abs(np.linalg.det(R) - 1) < 1e-12


def test_symbolic_transform_at_q_zero(krang):
    """R0 in the file is [x y z] at q = 0, symbolically (no rounding)."""
    zero = {sympy.Symbol(n): 0 for n in Q_NAMES}
    T = krang.frame("10l").transform().subs(zero)
    assert T[:3, :3] == sympy.Matrix([[-1, 0, 0], [0, 0, -1], [0, -1, 0]])
    assert list(T[:3, 3]) == [0, -sympy.Symbol("L9"), 0]
