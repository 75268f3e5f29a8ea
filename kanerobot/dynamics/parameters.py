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
for a link of which only some parameters are known, :func:`physical_faults`
tells the links that matter from those too small to change the dynamics
(:data:`NEGLIGIBLE`), and :func:`check_physical` applies it to the values
bound by ``numeric``.
Gravity symbols get their physical value (:func:`gravity_values`).
"""

import math
from dataclasses import dataclass

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot.description import BASE, INERTIAL_NAMES, WRENCH_NAMES

__all__ = [
    "INERTIA_NAMES",
    "NEGLIGIBLE",
    "PhysicalFault",
    "check_physical",
    "gravity_values",
    "is_physically_consistent",
    "link_faults",
    "physical_faults",
    "physical_violations",
    "random_link",
    "random_parameters",
    "random_rotation",
    "rigid_sum",
]

#: The parameters of a rigid body, as :func:`random_link` returns them.
INERTIA_NAMES = tuple(name for name in INERTIAL_NAMES if name != "IA")
#: A link that is no rigid body is accepted when the smallest correction that
#: makes it one is at most this fraction of the robot's scale: its mass raised
#: by at most NEGLIGIBLE times the robot's total mass, each principal moment
#: about its centre of mass by at most NEGLIGIBLE times the largest principal
#: moment of the robot's links.  The correction then changes the masses and
#: inertias the joints move by that fraction of the robot's at most: it cannot
#: change the dynamics (the 1e-6 kg dummy links of published URDFs).
NEGLIGIBLE = 1e-6


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


@dataclass(frozen=True)
class PhysicalFault:
    """A link whose parameters are no rigid body's (:func:`physical_faults`).

    ``size`` is the smallest correction making it one, relative to the
    robot (inf where none does: a negative friction, a link of which some
    parameters are unknown); ``correction`` says it in words.
    """

    label: str
    reasons: tuple[str, ...]
    size: float
    correction: str

    @property
    def negligible(self) -> bool:
        """Whether the correction is at most :data:`NEGLIGIBLE` of the robot: it cannot change the dynamics."""
        return bool(self.size <= NEGLIGIBLE)


def physical_faults(links, rigid=(), tol=1e-9):
    """The links of ``links`` that are no rigid body, with how much it takes to make each one.

    The smallest correction of a link (known completely: ``XX .. ZZ``,
    ``MX MY MZ``, ``M``) is a mass ``dm`` (its mass raised to 0) and a
    moment ``dI`` added to each principal moment about its centre of mass:
    ``dI = max(0, -e1, e3 - e1 - e2)`` for eigenvalues ``e1 <= e2 <= e3``
    makes them positive and satisfy the triangle inequality.  Its size is
    ``max(dm / total mass, dI / largest principal moment)`` over the
    complete links given (:data:`NEGLIGIBLE` says what is negligible).

    Parameters
    ----------
    links : mapping
        ``{label: {"XX": float, ..., "M": float, "IA", "FV", "FS": float}}``,
        each a subset (:func:`physical_violations`).
    rigid : sequence of sequences of (label, R, p), optional
        Links fixed together (a link and the links on fixed frames under
        it), each with its frame's rotation R (3, 3) and origin p (3,) in
        the first one's: the dynamics see only their sum
        (:func:`rigid_sum`), so their faults count only where the sum is
        no rigid body's.
    tol : float, optional
        As in :func:`physical_violations`.

    Returns
    -------
    list of PhysicalFault
        In the order of ``links``; empty when every link is a rigid body's.

    Examples
    --------
    >>> body = {"XX": 1.0, "XY": 0.0, "XZ": 0.0, "YY": 1.0, "YZ": 0.0, "ZZ": 1.0, "MX": 0.0, "MY": 0.0, "MZ": 0.0, "M": 10.0}
    >>> dummy = dict(body, XX=0.0, YY=0.0, ZZ=3e-9, M=1e-6)  # moments (0, 0, 3e-9) break the triangle inequality
    >>> [(f.label, f.size, f.negligible) for f in physical_faults({"1": body, "2": dummy})]
    [('2', 3e-09, True)]
    >>> [(f.label, f.negligible) for f in physical_faults({"1": body, "2": dict(body, ZZ=3.0)})]
    [('2', False)]
    """
    bodies = {label: _centre_of_mass_inertia(link) for label, link in links.items()}
    mass = sum(max(link["M"], 0.0) for label, link in links.items() if bodies[label] is not None)
    moment = max((float(np.linalg.eigvalsh(J_G)[-1]) for J_G in bodies.values() if J_G is not None), default=0.0)
    faults = {}
    for label, link in links.items():
        reasons = physical_violations(link, tol)
        if reasons:
            faults[label] = _fault(label, reasons, link, bodies[label], mass, moment)
    for group in rigid:
        if any(label in faults for label, _, _ in group) and _is_rigid_body(rigid_sum(_body(links[label], R, p) for label, R, p in group), tol):
            for label, _, _ in group:  # the body is a rigid body's; a negative friction or rotor inertia is still a fault
                if not any(links[label].get(name, 0.0) < 0 for name in ("IA", "FV", "FS")):
                    faults.pop(label, None)
    return list(faults.values())


def rigid_sum(parts):
    """``(m, J_O, MS)`` of bodies fixed together, each ``(R, p, body)``: its
    frame's rotation and origin in the common frame and its ``(m, J, MS)``
    (about its own origin; None if massless), added about the common origin.

    Moving a body's inertia from its origin to one at ``-p`` adds
    ``m (|p|^2 1 - p p^T) + 2 (p . MS) 1 - p MS^T - MS p^T`` (MS in the common axes).

    >>> one = (2.0, np.diag([1.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.4]))
    >>> m, J, MS = rigid_sum([(np.eye(3), np.zeros(3), one), (np.eye(3), np.array([1.0, 0, 0]), one)])
    >>> m, np.round(np.diag(J), 12).tolist(), MS.tolist()
    (4.0, [2.0, 4.0, 4.0], [2.0, 0.0, 0.8])
    """
    J, MS, mass = np.zeros((3, 3)), np.zeros(3), 0.0
    for R, p, body in parts:
        if body is None:
            continue
        m, J_l, MS_l = body
        J_r, MS_r = R @ J_l @ R.T, R @ MS_l
        J += J_r + m * (p @ p * np.eye(3) - np.outer(p, p)) + 2 * (p @ MS_r) * np.eye(3) - np.outer(p, MS_r) - np.outer(MS_r, p)
        MS += MS_r + m * p
        mass += m
    return mass, J, MS


def _body(link, R, p):
    """``(R, p, (m, J_O, MS))`` of a complete link, for :func:`rigid_sum`."""
    return R, p, (link["M"], _inertia_matrix(link), np.array([link["MX"], link["MY"], link["MZ"]]))


def _is_rigid_body(body, tol):
    mass, J, MS = body
    link = dict(zip(("XX", "XY", "XZ", "YY", "YZ", "ZZ"), J[np.triu_indices(3)]), MX=MS[0], MY=MS[1], MZ=MS[2], M=mass)
    return not physical_violations(link, tol)


def _centre_of_mass_inertia(link):
    """The 3x3 inertia about the centre of mass of a complete link of non-negative mass, else None."""
    if any(name not in link for name in INERTIA_NAMES) or link["M"] < 0:
        return None
    ms = np.array([link["MX"], link["MY"], link["MZ"]])
    if link["M"] == 0:
        return None if np.any(ms != 0) else _inertia_matrix(link)
    return _inertia_matrix(link) - (ms @ ms * np.eye(3) - np.outer(ms, ms)) / link["M"]


def _inertia_matrix(link):
    return np.array([[link["XX"], link["XY"], link["XZ"]], [link["XY"], link["YY"], link["YZ"]], [link["XZ"], link["YZ"], link["ZZ"]]])


def _fault(label, reasons, link, J_G, mass, moment):
    """The :class:`PhysicalFault` of a link: its correction relative to the robot's ``mass`` and largest ``moment``."""
    negative = [name for name in ("IA", "FV", "FS") if link.get(name, 0.0) < 0]
    complete = all(name in link for name in INERTIA_NAMES)
    if negative or not complete or (link["M"] <= 0 and any(link[name] != 0 for name in ("MX", "MY", "MZ"))):
        return PhysicalFault(label, tuple(reasons), math.inf, "no correction of its mass and moments makes it a rigid body")
    if J_G is None:  # a negative mass without first moments: raised to 0, its inertia is about its origin
        J_G = _inertia_matrix(link)
    e = np.linalg.eigvalsh(J_G)
    dm, dI = max(0.0, -link["M"]), max(0.0, -e[0], e[2] - e[0] - e[1])
    sizes = (_ratio(dm, mass), _ratio(dI, moment))
    words = []
    if dm:
        words.append(f"its mass raised by {dm:.3g} kg ({sizes[0]:.2g} of the robot's {mass:.3g} kg)")
    if dI:
        words.append(f"each principal moment raised by {dI:.3g} kg m^2 ({sizes[1]:.2g} of the robot's largest, {moment:.3g} kg m^2)")
    return PhysicalFault(label, tuple(reasons), float(max(sizes)), " and ".join(words))


def _ratio(part, whole):
    return 0.0 if part == 0 else (part / whole if whole > 0 else math.inf)


def check_physical(robot, values, used=None):
    """Raise unless ``values`` make every link of ``robot`` a rigid body.

    Each link's inertial and friction parameters (as the robot file writes
    them: symbols, expressions or numbers) are evaluated with ``values``;
    those that become numbers are tested by :func:`physical_violations`,
    for every link that ``values`` gives something to.  A link the file
    writes with numbers only is the file's: published tables load and run
    as published (the PUMA 560's of Armstrong et al., used by Corke, give
    link 3 principal moments 0.0125, 0.066, 0.086, which break the triangle
    inequality).  A link whose correction is negligible
    (:func:`physical_faults`, :data:`NEGLIGIBLE`) is accepted, and so is a
    link none of whose symbols is ``used``: it cannot change the dynamics.

    Parameters
    ----------
    robot : Robot
    values : mapping
        ``{symbol name: float}``.
    used : collection of str, optional
        The parameters the model needs (``model.parameters``): a link with
        none of them (a link fixed to a fixed base never moves) is not
        tested.  Default: every link is.

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
    faults, written_of = _link_faults(robot, values, used)
    faults = [f"link {f.label} ({', '.join(written_of[f.label])}): {'; '.join(f.reasons)}" for f in faults if not f.negligible]
    if faults:
        raise ParameterError(
            f"robot {robot.name}: " + "; ".join(faults)
            + "; give physical values, or numeric(..., physical=False) for values that need not be (base parameters)"
        )


def link_faults(robot, values, used=None):
    """The :class:`PhysicalFault` of each link of ``robot`` that ``values`` make no rigid body's.

    What :func:`check_physical` tests (its ``used``; links fixed together
    as one body), negligible faults included: a file reader names them.

    Parameters
    ----------
    robot : Robot
    values : mapping
        ``{symbol name: float}``.
    used : collection of str, optional
        As in :func:`check_physical`.

    Returns
    -------
    list of PhysicalFault

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> [(f.label, f.reasons) for f in link_faults(robot, {"M2": -1.0})]
    [('2', ('mass M = -1 < 0',))]
    """
    return _link_faults(robot, values, used)[0]


def _link_faults(robot, values, used):
    """``(faults, {label: ["M2 = -1", ...]})`` of :func:`link_faults` (what the faulty links' values are);
    the rigid bodies are made only where a link is at fault."""
    values = {str(k): float(v) for k, v in values.items()}
    links = _known_links(robot, values, used)
    faults = physical_faults(links)
    if faults:
        faults = physical_faults(links, _rigid_groups(robot, links, values, [f.label for f in faults]))
    written = {f.label: [_written(robot.dynamics[f.label][name], name, links[f.label][name]) for name in INERTIA_NAMES if name in links[f.label]]
               for f in faults}  # fmt: skip
    return faults, written


def _written(expr, name, value):
    return f"{name} = {value:g}" if sympy.sympify(expr).is_number else f"{expr} = {value:g}"


def _known_links(robot, values, used):
    """``{label: {name: float}}`` of the links ``values`` give values to (and ``used`` has)."""
    numbers = None
    links = {}
    for label in robot.links:
        table = robot.dynamics[label]
        known, given = {}, False
        for name in INERTIA_NAMES + ("IA", "FV", "FS"):
            expr = sympy.sympify(table[name])
            if expr.is_Symbol:  # a file's parameter (every URDF's): no substitution to make
                value = values.get(expr.name, expr)
            elif expr.is_number:
                value = expr
            else:
                numbers = numbers if numbers is not None else {sympy.Symbol(k): sympy.Float(v) for k, v in values.items()}
                value = expr.xreplace(numbers)
            if isinstance(value, float) or value.is_number:
                known[name] = float(value)
                given = given or not expr.is_number
        if given and (used is None or _uses(table, used)):
            links[label] = known
    return links


def _rigid_groups(robot, links, values, labels):
    """The rigid bodies (:func:`physical_faults`'s ``rigid``) that the links ``labels`` are part of: the
    complete ``links`` on a frame and on the fixed frames under it, whose placements ``values`` give."""
    numbers = {sympy.Symbol(k): sympy.Float(v) for k, v in values.items()}

    def placement(label):  # a(j)T_j of a fixed frame j, or None where a symbol has no value
        T = sympy.Matrix(robot.frame(label).transform()).xreplace(numbers)
        return np.array(T, dtype=float) if all(x.is_number for x in T) else None

    def root(label):
        while label != BASE and not robot.frame(label).is_joint and placement(label) is not None:
            label = robot.frame(label).antecedent
        return label

    groups = []
    for top in dict.fromkeys(root(label) for label in labels):
        group, stack = [], [(top, np.eye(4))]
        while stack:  # down the fixed frames from the top
            label, T = stack.pop()
            if label in links:
                group.append((label, T[:3, :3], T[:3, 3]))
            for child in robot.children(label):
                T_child = placement(child) if not robot.frame(child).is_joint else None
                if T_child is not None:
                    stack.append((child, T @ T_child))
        if len(group) > 1 and all(all(n in links[label] for n in INERTIA_NAMES) for label, _, _ in group):
            groups.append(group)
    return groups


def _uses(table, used):
    """Whether a link's parameters (its table's entries) hold a symbol of ``used``."""
    return any(str(s) in used for expr in table.values() for s in sympy.sympify(expr).free_symbols)


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
