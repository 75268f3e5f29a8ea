"""Random physically consistent parameter values, for tests, benchmarks and demos.

A link's SYMORO parameters are its inertia about the frame origin J_O, its
first moments MS = M c and its mass M.  Drawing them independently gives
bodies that cannot exist; here each link is drawn as a body first:

- mass M > 0 and centre of mass c;
- principal moments from a positive mass distribution along three axes,
  ``I1 = b + c``, ``I2 = a + c``, ``I3 = a + b`` with a, b, c > 0, which
  satisfies the triangle inequalities strictly;
- a random orientation R of the principal axes, I_G = R diag(I) R^T;

then J_O = I_G + M (c.c I - c c^T) and MS = M c (parallel-axis theorem).
"""

import numpy as np
import sympy

from kanerobot.robot.description import WRENCH_NAMES


def random_rotation(rng):
    """A uniformly distributed rotation matrix (QR of a Gaussian matrix)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def random_link(rng, mass_range=(0.5, 5.0), size=0.3):
    """SYMORO parameters of one random rigid body: {XX, XY, ..., MX, MY, MZ, M}."""
    mass = rng.uniform(*mass_range)
    c = rng.uniform(-size, size, 3)
    a, b, d = mass * rng.uniform(0.01, 1.0, 3) * size**2
    principal = np.array([b + d, a + d, a + b])
    R = random_rotation(rng)
    I_G = R @ np.diag(principal) @ R.T
    J = I_G + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return {
        "XX": J[0, 0], "XY": J[0, 1], "XZ": J[0, 2], "YY": J[1, 1], "YZ": J[1, 2], "ZZ": J[2, 2],
        "MX": mass * c[0], "MY": mass * c[1], "MZ": mass * c[2], "M": mass,
    }  # fmt: skip


def random_parameters(robot, rng=None, friction=True, rotor=True, wrench=True, gravity=9.81):
    """Values for every parameter symbol of ``robot`` ({name: float}).

    Geometric symbols get lengths in [0.1, 0.6]; gravity symbols get the
    components of a random direction scaled to ``gravity``; base velocity and
    acceleration symbols get small random values; each link's inertial
    symbols come from :func:`random_link`; IA, FV, FS (and external wrench
    symbols) random when enabled, else 0.

    Examples
    --------
    >>> import kanerobot as kr
    >>> values = random_parameters(kr.load(kr.frames_path("rx90")), np.random.default_rng(1))
    >>> values["M1"] > 0, sorted(k for k in values if k.startswith("RL") or k.startswith("D"))
    (True, ['D3', 'RL4'])
    """
    rng = np.random.default_rng() if rng is None else rng
    values = {}

    def put(expr, value):
        if isinstance(expr, sympy.Symbol) and str(expr) not in values:
            values[str(expr)] = float(value)

    for name in robot.geometric_parameters:
        values[name] = rng.uniform(0.1, 0.6)
    direction = rng.normal(size=3)
    direction *= gravity / np.linalg.norm(direction)
    for k, g in enumerate(robot.base.G):
        put(g, direction[k])
    for key in ("W0", "WP0", "V0", "VP0"):
        for g in getattr(robot.base, key):
            put(g, rng.uniform(-0.5, 0.5))
    for label in robot.links:
        link = robot.dynamics[label]
        for name, value in random_link(rng).items():
            put(link[name], value)
        put(link["IA"], rng.uniform(0.01, 0.5) if rotor else 0.0)
        put(link["FV"], rng.uniform(0.0, 1.0) if friction else 0.0)
        put(link["FS"], rng.uniform(0.0, 1.0) if friction else 0.0)
        for name in WRENCH_NAMES:
            put(link[name], rng.uniform(-2, 2) if wrench else 0.0)
    for label in robot.joint_labels:
        put(robot.joint_parameters[label]["k"], rng.uniform(10, 100))
    return values
