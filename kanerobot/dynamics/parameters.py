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
:func:`is_physically_consistent` checks the converse: that given parameters
are those of a real body.
"""

import numpy as np
import sympy

from kanerobot.robot.description import INERTIAL_NAMES, WRENCH_NAMES

__all__ = ["INERTIA_NAMES", "is_physically_consistent", "random_link", "random_parameters", "random_rotation"]

#: The parameters of a rigid body, as :func:`random_link` returns them.
INERTIA_NAMES = tuple(name for name in INERTIAL_NAMES if name != "IA")


def random_rotation(rng):
    """A uniformly distributed rotation matrix (QR of a Gaussian matrix)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def random_link(rng, mass_range=(0.5, 5.0), size=0.3):
    """SYMORO parameters of one random rigid body.

    Parameters
    ----------
    rng : numpy.random.Generator
    mass_range : tuple of float, optional
        Bounds of the uniform mass.
    size : float, optional
        The centre of mass is uniform in the cube ``[-size, size]^3`` and
        the mass spreads about it over a few ``size``.

    Returns
    -------
    dict
        ``{"XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M": float}``,
        the inertia about the frame origin, the first moments and the mass;
        :func:`is_physically_consistent` holds.

    Examples
    --------
    >>> link = random_link(np.random.default_rng(0))
    >>> sorted(link) == sorted(INERTIA_NAMES), is_physically_consistent(link)
    (True, True)
    """
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


def is_physically_consistent(link, tol=1e-12):
    """Whether SYMORO parameters are those of a real rigid body.

    Parameters
    ----------
    link : mapping
        ``"XX" .. "ZZ"`` (inertia about the frame origin), ``"MX", "MY",
        "MZ"`` and ``"M"``, numbers.
    tol : float, optional
        Margin on the eigenvalue tests.

    Returns
    -------
    bool
        True when the mass is positive and the inertia about the centre of
        mass, ``J_G = J_O - M (c.c I - c c^T)`` with ``c = MS / M``, is
        positive definite with eigenvalues that satisfy the triangle
        inequalities (a positive mass distribution).

    Examples
    --------
    >>> rod = {"XX": 0.0, "XY": 0.0, "XZ": 0.0, "YY": 1 / 3, "YZ": 0.0, "ZZ": 1 / 3, "MX": 0.5, "MY": 0.0, "MZ": 0.0, "M": 1.0}
    >>> is_physically_consistent(rod)  # a thin rod along x: no inertia about its axis
    False
    >>> is_physically_consistent(dict(rod, XX=0.01, YY=0.34, ZZ=0.34))
    True
    """
    M = link["M"]
    if M <= 0:
        return False
    J_O = np.array([[link["XX"], link["XY"], link["XZ"]], [link["XY"], link["YY"], link["YZ"]], [link["XZ"], link["YZ"], link["ZZ"]]])
    c = np.array([link["MX"], link["MY"], link["MZ"]]) / M
    J_G = J_O - M * (c @ c * np.eye(3) - np.outer(c, c))
    e = np.linalg.eigvalsh(J_G)
    return bool(e[0] > tol and e[0] + e[1] >= e[2] - tol)


def random_parameters(robot, rng=None, friction=True, rotor=True, wrench=True, gravity=9.81):
    """Random values for every parameter symbol of ``robot``.

    Geometric symbols get lengths in [0.1, 0.6]; gravity symbols get the
    components of a random direction scaled to ``gravity``; base velocity and
    acceleration symbols (``W0, WP0, V0, VP0``) small random values in
    [-0.5, 0.5]; each link's inertial symbols come from :func:`random_link`;
    IA, FV, FS and the external wrench ``FX .. CZ`` random when enabled,
    else 0; joint stiffnesses ``k`` in [10, 100].  Only plain symbols get a
    value (a customised 0 stays 0), the first time they are met.

    Parameters
    ----------
    robot : Robot
    rng : numpy.random.Generator, optional
    friction, rotor, wrench : bool, optional
        Random ``FV, FS``, ``IA``, ``FX .. CZ``, else 0.
    gravity : float, optional
        Norm of the gravity vector.

    Returns
    -------
    dict
        ``{symbol name: float}``: every symbol of the robot but its joint
        variables, velocities, accelerations and torques.

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
