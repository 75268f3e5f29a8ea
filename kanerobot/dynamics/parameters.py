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
are those of a real body; :func:`physical_violations` says why not, also
for a link of which only some parameters are known, and
:func:`check_physical` applies it to the values bound by ``numeric``.
Gravity symbols get their physical value (:func:`gravity_values`).
"""

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot.description import INERTIAL_NAMES, WRENCH_NAMES

__all__ = [
    "INERTIA_NAMES",
    "check_physical",
    "gravity_values",
    "is_physically_consistent",
    "physical_violations",
    "random_link",
    "random_parameters",
    "random_rotation",
]

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


def physical_violations(link, tol=1e-9):
    """Why a link's known SYMORO parameters cannot be those of a rigid body.

    Parameters that are unknown (left out of ``link``) may take any value:
    only what the known ones already exclude is reported.  With all of
    ``XX .. ZZ, MX, MY, MZ, M`` known the test is complete (mass >= 0, the
    inertia about the centre of mass positive semi-definite with its
    eigenvalues satisfying the triangle inequality); with some unknown,
    the necessary conditions on the diagonal (unknown first moments taken
    as 0, which can only help).  A mass of 0 is accepted for a massless
    link (no first moments; the inertia about the origin is then tested).

    Parameters
    ----------
    link : mapping
        ``{"XX": float, ..., "M": float, "IA", "FV", "FS": float}``, any subset.
    tol : float, optional
        Relative margin on the inertia tests (rounding of values written
        with few digits).

    Returns
    -------
    list of str
        One reason per violated condition; empty when consistent.

    Examples
    --------
    >>> physical_violations({"M": -1.0})
    ['mass M = -1 < 0']
    >>> physical_violations({"ZZ": 1.0, "MX": 1.0, "MY": 1.0, "M": 1.0})  # planar: ZZ about G = 1 - 2
    ['the inertia about the centre of mass has ZZ_G = -1 < 0']
    >>> physical_violations({"ZZ": 3.0, "MX": 1.0, "MY": 1.0, "M": 1.0, "FV": 0.1, "FS": 0.2})
    []
    """
    reasons = [f"{name} = {link[name]:g} < 0" for name in ("IA", "FV", "FS") if name in link and link[name] < 0]
    M = link.get("M")
    if M is not None and M < 0:
        return [f"mass M = {M:g} < 0"] + reasons
    ms = np.array([link.get(name, 0.0) for name in ("MX", "MY", "MZ")])
    if M == 0 and np.any(ms != 0):
        return ["mass M = 0 with first moments MX, MY, MZ not 0 (a massless link has none)"] + reasons
    names = ((0, 0, "XX"), (0, 1, "XY"), (0, 2, "XZ"), (1, 1, "YY"), (1, 2, "YZ"), (2, 2, "ZZ"))
    J = np.full((3, 3), np.nan)
    for i, j, name in names:
        if name in link:
            J[i, j] = J[j, i] = link[name]
    # J_G = J_O - M (c.c I - c c^T) with c = MS / M; unknown first moments as
    # 0 make the diagonal of J_G and its triangle sums larger: tests on them
    # stay necessary conditions.
    shift = (ms @ ms * np.eye(3) - np.outer(ms, ms)) / M if M else np.zeros((3, 3))
    J_G = J - shift
    scale = tol * max(1.0, float(np.nanmax(np.abs(J))) if not np.all(np.isnan(J)) else 1.0)
    complete = M is not None and all(name in link for name in ("MX", "MY", "MZ")) and not np.any(np.isnan(J))
    if complete:
        e = np.linalg.eigvalsh(J_G)
        if e[0] < -scale:
            reasons.append(f"the inertia about the centre of mass is not positive semi-definite (eigenvalues {_numbers(e)})")
        elif e[0] + e[1] < e[2] - scale:
            reasons.append(f"the principal moments about the centre of mass {_numbers(e)} break the triangle inequality")
        return reasons
    diagonal = np.diag(J_G)
    for k, axis in enumerate("XYZ"):
        if diagonal[k] < -scale:
            reasons.append(f"the inertia about the centre of mass has {axis * 2}_G = {diagonal[k]:g} < 0")
    for k, axis in enumerate("XYZ"):
        others = [diagonal[m] for m in range(3) if m != k]
        if not np.isnan(diagonal).any() and sum(others) < diagonal[k] - scale:
            reasons.append(f"{axis * 2}_G = {diagonal[k]:g} exceeds the sum of the other two moments (triangle inequality)")
    return reasons


def _numbers(array):
    return "(" + ", ".join(f"{x:.4g}" for x in array) + ")"


def check_physical(robot, values):
    """Raise unless ``values`` make every link of ``robot`` a rigid body.

    Each link's inertial and friction parameters (as the robot file writes
    them: symbols, expressions or numbers) are evaluated with ``values``;
    those that become numbers are tested by :func:`physical_violations`,
    for every link that ``values`` gives something to.  A link the file
    writes with numbers only is the file's: published tables load and run
    as published (the PUMA 560's of Armstrong et al., used by Corke, give
    link 3 principal moments 0.0125, 0.066, 0.086, which break the triangle
    inequality).

    Parameters
    ----------
    robot : Robot
    values : mapping
        ``{symbol name: float}``.

    Raises
    ------
    ParameterError
        Naming each link at fault, the parameters and what is wrong, and the
        way out for values that need not be physical (identified base
        parameters): ``physical=False``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> check_physical(robot, {"M2": 1.0, "MX2": 0.5, "MY2": 0.0, "ZZ2": 0.3})
    >>> check_physical(robot, {"M2": -1.0})
    Traceback (most recent call last):
      ...
    kanerobot.errors.ParameterError: robot planar2: link 2 (M2 = -1): mass M = -1 < 0; give physical values, or numeric(..., physical=False) for values that need not be (base parameters)
    """
    numbers = {sympy.Symbol(str(k)): sympy.Float(float(v)) for k, v in values.items()}
    faults = []
    for label in robot.links:
        table = robot.dynamics[label]
        known, written, given = {}, [], False
        for name in INERTIA_NAMES + ("IA", "FV", "FS"):
            expr = sympy.sympify(table[name])
            value = expr.xreplace(numbers)
            if value.is_number:
                known[name] = float(value)
                given = given or not expr.is_number
                if name in INERTIA_NAMES:
                    written.append(f"{expr} = {known[name]:g}" if not expr.is_number else f"{name} = {known[name]:g}")
        if not given:
            continue
        reasons = physical_violations(known)
        if reasons:
            faults.append(f"link {label} ({', '.join(written)}): {'; '.join(reasons)}")
    if faults:
        raise ParameterError(
            f"robot {robot.name}: " + "; ".join(faults)
            + "; give physical values, or numeric(..., physical=False) for values that need not be (base parameters)"
        )


def gravity_values(G, gravity=9.81, floating=False):
    """Values of the gravity symbols of a base's ``G`` (the gravity acceleration
    vector in frame 0, SYMORO's convention).

    - A component that is a number stays as written (0 in orbit stays 0).
    - Exactly one symbolic component: the file names gravity's axis.  On z0
      it gets ``-gravity`` (z0 up, SYMORO's convention: ``G = {0,0,G3}``,
      ``G3 = -g``); on x0 or y0 ``+gravity`` (a planar arm in a vertical
      plane whose x0 or y0 points down, as ``flexarm1.par`` and
      ``planar2flex.par`` say).
    - Several symbolic components (``G = {G1,G2,G3}``): the file leaves the
      direction open.  A fixed or moving base gets SYMORO's z0 up,
      ``(0, 0, -gravity)``; a floating base, whose ``G`` is in the world
      frame, 0: a free flyer in orbit (``satellite.par``).  Give the vector
      explicitly for anything else.

    Parameters
    ----------
    G : sequence of 3 sympy expressions
    gravity : float or sequence of 3 floats, optional
        The norm of gravity for the rules above, or the gravity vector
        itself (its components go to the symbolic ones).
    floating : bool, optional
        Whether the base is floating (``robot.floating``).

    Returns
    -------
    dict
        ``{symbol name: float}`` for the components that are plain symbols.

    Examples
    --------
    >>> gravity_values([0, 0, sympy.Symbol("G3")])  # the RX-90, the PUMA, Krang
    {'G3': -9.81}
    >>> gravity_values([sympy.Symbol("G1"), 0, 0])  # flexarm1: x0 points down
    {'G1': 9.81}
    >>> gravity_values(sympy.symbols("G1 G2 G3"))  # a fixed base: z0 up
    {'G1': 0.0, 'G2': 0.0, 'G3': -9.81}
    >>> gravity_values(sympy.symbols("G1 G2 G3"), floating=True)  # the satellite, in orbit
    {'G1': 0.0, 'G2': 0.0, 'G3': 0.0}
    >>> gravity_values(sympy.symbols("G1 G2 G3"), gravity=(0, 0, -1.62))  # on the Moon
    {'G1': 0.0, 'G2': 0.0, 'G3': -1.62}
    """
    G = [sympy.sympify(g) for g in G]
    symbolic = [k for k, g in enumerate(G) if not g.is_number]
    if np.ndim(gravity) == 1:
        if len(gravity) != 3:
            raise KaneRobotError(f"gravity must be a number (its norm) or a vector of 3 numbers, got {list(gravity)}")
        vector = np.asarray(gravity, dtype=float)
    else:
        vector = np.zeros(3)
        if len(symbolic) == 1:
            k = symbolic[0]
            vector[k] = -float(gravity) if k == 2 else float(gravity)
        elif symbolic and not floating:
            vector[2] = -float(gravity)
    return {str(G[k]): float(vector[k]) for k in symbolic if isinstance(G[k], sympy.Symbol)}


def random_parameters(robot, rng=None, friction=True, rotor=True, wrench=True, gravity=9.81):
    """Random values for every parameter symbol of ``robot``.

    Geometric symbols get lengths in [0.1, 0.6]; gravity symbols their
    physical value (:func:`gravity_values`: ``G3 = -9.81`` for ``G = {0,0,G3}``
    or ``{G1,G2,G3}``, 0 for a floating base's ``{G1,G2,G3}``); base velocity and
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
    gravity : float or sequence of 3 floats, optional
        Norm of gravity, or the gravity vector (see :func:`gravity_values`).

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
    # Gravity used to be a random direction: the three draws are kept so that
    # a seed gives the other parameters it gave before.
    rng.normal(size=3)
    for name, value in gravity_values(robot.base.G, gravity, floating=robot.floating).items():
        put(sympy.Symbol(name), value)
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
