"""Base inertial parameters: the identifiable combinations of the standard ones.

The columns of the regressor D (:mod:`kanerobot.identification.regressor`)
are not independent: some parameters have no effect on the joint torques,
others act only in fixed linear combinations.  The base parameters ``K_b =
T K`` are a minimal set with ``D K = D_b K_b`` for every K, ``D_b`` a subset
of D's columns (Gautier and Khalil 1990; Khalil and Bennis 1995; Khalil and
Dombre, Modeling, Identification and Control of Robots, ch. 14).

Two methods:

``"symbolic"`` (serial and tree robots; closed loops with numeric geometry)
    The grouping rules, from the leaves to the base.  For a revolute joint j
    (axis z_j), the part of link j that is symmetric about the axis (inertia
    ``diag(YY_j, YY_j, 0)``, first moment ``MZ_j z_j``, mass ``M_j``) moves
    with link i = a(j), so it is carried to link i::

        XXR_j = XX_j - YY_j,      YY_j, MZ_j, M_j removed
        MS_i += iA_j [0 0 MZ_j]^T + M_j iP_j
        J_i  += iA_j diag(YY_j, YY_j, 0) jA_i + M_j (|P|^2 I - P P^T)
                + 2 (P.s) I - P s^T - s P^T       (P = iP_j, s = iA_j [0 0 MZ_j]^T)
        M_i  += M_j

    (with ``theta_j = 0``: these terms do not depend on q_j).  For a
    prismatic joint the inertia tensor of link j is carried to link i
    (``J_i += iA_j J_j jA_i``); a fixed frame's link is carried whole.
    What reaches the base has no effect.  General frames whose joint axis is
    a coordinate axis (Krang) are handled by relabelling the axes; for an
    oblique axis a, the body ``c (I - a a^T)``, ``lam a``, ``M`` is carried,
    ``c`` and ``lam`` zeroing the inertia entry and the first moment with
    the largest coefficients.  Then the
    remaining parameters with no effect, and those with the same effect as
    another (``IA_j`` with ``ZZ_j`` for the first revolute joint and for a
    joint perpendicular to it, the inertia of links whose joints are
    parallel to the first...), are found on the regrouped columns of the
    regressor evaluated on random states with two random geometries: only
    vanishing columns and relations with the same rational coefficients in
    both are accepted (the cases of Khalil and Dombre 14.5.3 give such
    relations), else the method says to use ``"numeric"``.  Relations keep
    the geometric symbols (``XXR2 = XX2 - YY2 - D3**2*M3 - ...``).  A
    closed loop's relations depend on its geometry (a parallelogram's links
    regroup into each other with length ratios): the rules run on its
    equivalent tree (valid since ``D_a = G^T D_tree``) only when every
    geometric symbol is bound by ``values``, and the loop's relations are
    then found numerically as in ``"numeric"``.

``"numeric"`` (any structure, closed loops included)
    D on random states (enough for four equations per parameter, at least
    40 states; for a closed loop, configurations around one closed
    configuration ``q0`` reached by continuation, so that they stay on its
    assembly mode: without ``q0`` the modes found at a generic configuration
    are all tried, and an error asks for ``q0`` when their base parameters
    differ, as for the SR400's parallelogram, 57 with friction, and
    anti-parallelogram, 65), the columns scaled to unit norm, QR (by blocks of rows)
    without pivoting in the order of the standard parameters: the columns
    with a non-zero diagonal are the base columns (so, as with the rules,
    the parameters of the links near the base are kept and those of the
    outer links regrouped into them), the others are expressed on them by
    least squares, coefficients cleaned (tiny ones dropped, near-rationals
    snapped).  Geometric symbols must be given numbers (``values``).

A base parameter is named after its column, with an ``R`` when it groups
others: ``ZZR1``, ``XXR2``, ``MR3``, ``XY2`` (as OpenSYMORO's
``RX90_regp.txt``).  Friction parameters come after the inertial ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import sympy
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from kanerobot.dynamics.model import derive
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.identification.regressor import identification_model
from kanerobot.robot.description import BASE, Robot
from kanerobot.robot.joints import Prismatic, Revolute

__all__ = ["BaseParameterSet", "base_parameter_set", "base_parameters"]

METHODS = ("symbolic", "numeric")
#: ``|R_ii|`` below this (columns of unit norm) marks a dependent column.
RANK_TOL = 1e-7
_INERTIA = ("XX", "XY", "XZ", "YY", "YZ", "ZZ")
_MOMENTS = ("MX", "MY", "MZ")
_FRICTION = ("FV", "FS")


def base_parameters(
    robot: Robot,
    method: str = "symbolic",
    values: Mapping[str, float] | None = None,
    friction: bool = True,
    q0: ArrayLike | None = None,
    rotor: bool = True,
) -> dict[str, sympy.Expr]:
    """The base parameters of ``robot`` as ``{name: expression of the standard parameters}``.

    Parameters
    ----------
    robot : Robot
    method : {"symbolic", "numeric"}
        Grouping rules (serial and tree robots) or QR of the regressor on
        random samples (any structure); see the module notes.
    values : dict, optional
        ``{name: float}`` binding geometric symbols (needed by ``"numeric"``
        for every geometric symbol of the model; gravity defaults to a
        random non-zero value).  With ``"symbolic"``, the symbols given are
        substituted into the robot first (a special value such as ``D3 = 0``
        changes the grouping).
    friction : bool, optional
        Include ``FV``, ``FS`` (listed after the inertial parameters).
    q0 : array_like, optional
        Closed loops: a closed configuration choosing the assembly mode
        (see :func:`base_parameter_set`).
    rotor : bool, optional
        Include the rotor inertias ``IA`` (False: taken as 0, as for a
        robot without gear).

    Returns
    -------
    dict
        Ordered ``{base parameter name: sympy expression}``.

    Raises
    ------
    KaneRobotError, ParameterError
        As :func:`base_parameter_set`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> base = base_parameters(kr.load(kr.frames_path("planar2")), friction=False)
    >>> for name, expr in base.items():
    ...     print(name, "=", expr)
    ZZR1 = IA1 + L1**2*M2 + ZZ1
    ZZ2 = ZZ2
    MX2 = MX2
    MY2 = MY2
    IA2 = IA2
    """
    return base_parameter_set(robot, method=method, values=values, friction=friction, q0=q0, rotor=rotor).expressions


def base_parameter_set(
    robot: Robot,
    method: str = "symbolic",
    values: Mapping[str, float] | None = None,
    friction: bool = True,
    samples: int | None = None,
    seed: int = 0,
    q0: ArrayLike | None = None,
    rotor: bool = True,
) -> BaseParameterSet:
    """The base parameters of ``robot`` with their columns and the matrix T.

    Parameters
    ----------
    robot : Robot
    method : {"symbolic", "numeric"}
    values : dict, optional
    friction, rotor : bool, optional
        As in :func:`base_parameters`.
    samples : int, optional
        Random states of the numeric method (default: enough for four times
        as many equations as parameters, at least 40).
    seed : int, optional
        Seed of the random states and of the random geometry the symbolic
        method's last step uses.
    q0 : array_like, optional
        Closed loops: a closed configuration (every joint) the samples are
        taken around; the base parameters are those of its assembly mode
        (a parallelogram has more relations than the anti-parallelogram it
        can also close as).  By default, the modes found at a generic
        configuration are tried: the same base parameters in all, or an
        error asking for q0.

    Returns
    -------
    BaseParameterSet

    Raises
    ------
    KaneRobotError
        ``"symbolic"`` on a closed loop whose geometry is not bound to
        numbers, or when relations depending on the geometry remain after
        the rules; an unknown method; samples too ill-conditioned to decide
        the rank; loops that cannot be closed around ``q0``.
    ParameterError
        ``"numeric"`` without values for the geometric symbols.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> s = base_parameter_set(arm, friction=False)
    >>> s.names, [s.model.parameters[c] for c in s.columns]
    (['ZZR1', 'ZZ2', 'MX2', 'MY2', 'IA2'], ['ZZ1', 'ZZ2', 'MX2', 'MY2', 'IA2'])
    >>> n = base_parameter_set(arm, "numeric", values={"L1": 0.5}, friction=False)
    >>> n.names, n.expressions["ZZR1"]
    (['ZZR1', 'ZZ2', 'MX2', 'MY2', 'IA2'], IA1 + M2/4 + ZZ1)
    """
    if method not in METHODS:
        raise KaneRobotError(f"unknown method {method!r}: choose among {', '.join(METHODS)}")
    values = {str(k): v for k, v in (values or {}).items()}
    rng = np.random.default_rng(seed)
    if method == "symbolic":
        return _symbolic(robot, values, friction, rotor, rng, samples, q0)
    return _numeric(robot, values, friction, rotor, rng, samples, q0)


class BaseParameterSet:
    """A base parameter set: names, relations K_b = f(K), base columns.

    Attributes
    ----------
    robot : Robot
    method : str
    model : IdentificationModel
        The regressor whose columns :attr:`columns` index.
    names : list of str
        Base parameters, inertial then friction.
    expressions : dict
        ``{name: sympy expression}`` of the standard parameter symbols (and
        of geometric symbols for the symbolic method).
    columns : list of int
        Columns of ``model.parameters`` making D_b: ``D K = D[..., columns] K_b``.
    """

    def __init__(self, robot, method, model, names, expressions, columns):
        self.robot = robot
        self.method = method
        self.model = model
        self.names = list(names)
        self.expressions = dict(expressions)
        self.columns = list(columns)

    def __len__(self):
        return len(self.names)

    def __repr__(self):
        return f"<BaseParameterSet of {self.robot.name} ({self.method}): {len(self.names)} base parameters>"

    @property
    def parameters(self):
        """The standard parameters, columns of :meth:`matrix`."""
        return self.model.parameters

    def matrix(self, values=None):
        """T, shape (nb, p): ``K_b = T K`` with K in the order of :attr:`parameters`.

        Parameters
        ----------
        values : dict, optional
            Numbers for the geometric symbols the relations contain.

        Raises
        ------
        ParameterError
            Naming the symbols of the relations without a value.
        """
        symbols = [sympy.Symbol(p) for p in self.parameters]
        column = {s: k for k, s in enumerate(symbols)}
        given = {sympy.Symbol(str(k)): sympy.Float(float(v)) for k, v in (values or {}).items()}
        T = np.zeros((len(self.names), len(symbols)))
        missing = set()
        for b, name in enumerate(self.names):
            for term in sympy.Add.make_args(sympy.expand(self.expressions[name])):
                factors = sympy.Mul.make_args(term)
                standard = [f for f in factors if f in column]
                if len(standard) != 1:
                    raise KaneRobotError(f"base parameter {name}: {term} is not linear in the standard parameters")
                coeff = sympy.sympify(sympy.Mul(*[f for f in factors if f not in column]).xreplace(given))
                if coeff.free_symbols:
                    missing |= {str(x) for x in coeff.free_symbols}
                    continue
                T[b, column[standard[0]]] += float(coeff)
        if missing:
            raise ParameterError(f"robot {self.robot.name}: the base parameter relations need a value for {', '.join(sorted(missing))}")
        return T

    def regressor(self, D):
        """The base regressor D_b from D (..., rows, p): ``D[..., columns]``."""
        return np.asarray(D)[..., self.columns]


# ------------------------------------------------------------------ naming
def _names(model, keep, grouped):
    """Base names of the kept columns (``keep``, indices), ``R`` for those in ``grouped``, friction last."""
    owners = model._owners
    inertial: list[tuple[str, int]] = []  # (name, column)
    friction: list[tuple[str, int]] = []
    for c in keep:
        symbol = model._symbols[c]
        label, kind = owners[symbol][0]
        name = f"{kind}R{label}" if c in grouped else str(symbol)
        (friction if kind in _FRICTION else inertial).append((name, c))
    return inertial + friction


def _clean(c, tiny=1e-9):
    """A float coefficient as a sympy number: 0 below ``tiny``, a small rational when close, else rounded."""
    if abs(c) < tiny:
        return sympy.S.Zero
    frac = Fraction(c).limit_denominator(12)
    if abs(float(frac) - c) < 1e-9 * max(1.0, abs(c)):
        return sympy.Rational(frac.numerator, frac.denominator)
    return sympy.Float(float(f"{c:.12g}"))


# ----------------------------------------------------------------- sampling
def _bound_values(robot, model, values, rng, require):
    """Numbers for every symbol the regressor needs: ``values`` first, then
    random (gravity, base motion; geometry only when not ``require``)."""
    from kanerobot.dynamics.parameters import random_parameters

    out = dict(random_parameters(robot, rng))
    for g in robot.base.G:
        if isinstance(g, sympy.Symbol):
            out[str(g)] = float(rng.choice([-1.0, 1.0]) * rng.uniform(5.0, 10.0))
    if require:
        geometric = set(robot.geometric_parameters)
        missing = [name for name in model.values_needed if name in geometric and name not in values]
        if missing:
            raise ParameterError(
                f"robot {robot.name}: the numeric base parameters need values for the geometric symbols "
                f"{', '.join(missing)} (values={{...}}; --set NAME=VALUE on the command line)"
            )
    out.update({k: float(v) for k, v in values.items()})
    return out


def _states(robot, model, numbers, rng, samples, q0=None):
    """Random states for the regressor: q (N, nj), qd and qdd (N, m), and the
    configuration the samples of a closed loop are taken around.

    For a closed loop without ``q0``, the loops are closed at generic active
    joint values from several guesses of the passive joints; each distinct
    regular solution is an assembly mode, the samples are drawn around each,
    and if the regressor has different ranks in different modes the caller
    must choose with ``q0`` (else the first mode, from the guess 0, is used).
    Prismatic passive joints are compared like angles (modulo 2 pi), which
    at worst merges two modes.
    """
    rows, p = model.shape
    n = samples or max(40, int(np.ceil(4 * p / rows)) + 10)
    if not robot.loops:
        return rng.uniform(-np.pi, np.pi, (n, robot.nj)), rng.normal(size=(n, rows)), rng.normal(size=(n, rows)), None
    # Only the loop closure is used: the inertial values need not be a body's.
    dyn = derive(robot).numeric(numbers, backend="numpy", physical=False)
    active = [robot.joint_labels.index(label) for label in model.joints]
    others = [k for k in range(robot.nj) if k not in active]
    if q0 is not None:
        start = np.asarray(q0, dtype=float)
        if start.shape != (robot.nj,) or dyn.closure_residual(start) > 1e-8:
            raise KaneRobotError(f"{robot.name}: q0 must be a closed configuration of the {robot.nj} joints")
        q = _around(dyn, start, active, others, n, rng)
        return q, rng.normal(size=(n, rows)), rng.normal(size=(n, rows)), start
    # The assembly modes at generic active joint values: the distinct closed
    # configurations reached from several guesses of the passive joints.
    starts: list[np.ndarray] = []
    generic = np.sin(np.arange(1, len(active) + 1))
    for scale in (0.5, -0.75, 1.0, 0.25):
        guesses = [np.zeros(len(others))] + [rng.uniform(-np.pi, np.pi, len(others)) for _ in range(8)]
        for guess in guesses:
            try:
                start = dyn.configuration(scale * generic, guess=guess)
                dyn.G(start)
            except Exception:
                continue
            if _conditioning(dyn, start) < 1e-3:
                continue
            wrapped = [np.abs(np.angle(np.exp(1j * (start - other)))).max() for other in starts]
            if all(w > 1e-6 for w in wrapped):
                starts.append(start)
        if starts:
            break
    if not starts:
        raise KaneRobotError(f"{robot.name}: could not close the loops at a regular configuration: give q0")
    found = []
    for start in starts:
        q = _around(dyn, start, active, others, n, rng)
        qd, qdd = rng.normal(size=(n, rows)), rng.normal(size=(n, rows))
        W = _stacked(model, numbers, q, qd, qdd)
        found.append((len(_dependencies(W)[0]), q, qd, qdd, start))
    if len({f[0] for f in found}) > 1:
        described = "; ".join(f"{f[0]} around q = {np.round(f[4], 3).tolist()}" for f in found)
        raise KaneRobotError(
            f"{robot.name}: the loops close in assembly modes with different base parameters ({described}): "
            f"choose one with q0 (a closed configuration of every joint)"
        )
    return found[0][1], found[0][2], found[0][3], found[0][4]


def _around(dyn, start, active, others, n, rng):
    """n closed configurations around ``start``, the active joints within
    0.5 rad, each reached by continuation from start and kept only when the
    path stays away from singular configurations (where another assembly
    mode could be entered)."""
    floor = 0.2 * _conditioning(dyn, start)
    q: list[np.ndarray] = []
    tries = 0
    while len(q) < n:
        tries += 1
        if tries > 50 * n:
            raise KaneRobotError(f"{dyn.robot.name}: could not close the loops around {np.round(start, 3).tolist()}")
        target = start[active] + rng.uniform(-0.5, 0.5, len(active))
        value = start
        try:
            for t in np.linspace(0.125, 1.0, 8):
                previous = value
                value = dyn.configuration(start[active] + t * (target - start[active]), guess=previous[others])
                if np.abs(value[others] - previous[others]).max() > 0.5 or _conditioning(dyn, value) < floor:
                    raise KaneRobotError("a jump or a singular configuration on the way")
            dyn.G(value)
        except Exception:
            continue
        q.append(value)
    return np.array(q)


def _conditioning(dyn, q):
    """Smallest over largest singular value of the passive and cut joints'
    block of the loop constraints at q (0 at a bifurcation of the loops)."""
    J = dyn._constraint_matrix(np.atleast_2d(q))[0][:, dyn.dep]
    s = np.linalg.svd(J, compute_uv=False)
    return float(s[-1] / s[0]) if s.size and s[0] > 0 else 0.0


def _stacked(model, numbers, q, qd, qdd):
    """The regressor on the samples, stacked: (N * rows, p)."""
    D = model.numeric(numbers).regressor(q, qd, qdd)
    return D.reshape(-1, D.shape[-1])


def _triangular(W, block=128):
    """R (at most p x p, upper triangular) of W = Q R, by blocks of rows (small
    LAPACK calls: a tall QR is needlessly slow with a threaded BLAS on a busy machine)."""
    import scipy.linalg

    p = W.shape[1]
    R = np.zeros((0, p))
    for start in range(0, W.shape[0], block):
        R = scipy.linalg.qr(np.vstack([R, W[start:start + block]]), mode="r", check_finite=False)[0]
        R = R[: min(R.shape[0], p)]
    return R


def _dependencies(W):
    """Independent columns of W (in order) and the others on them.

    Unpivoted QR of W with its columns scaled to unit norm: column k is
    independent of the earlier ones when ``|R_kk| > RANK_TOL``; the count is
    checked against the singular values of R (those of the scaled W).

    Returns
    -------
    keep : list of int
    relations : dict
        ``{dependent column: array of coefficients on the kept columns}``
        (zero columns have all-zero coefficients).
    """
    p = W.shape[1]
    norms = np.linalg.norm(W, axis=0)
    top = norms.max() if p else 0.0
    nonzero = [k for k in range(p) if norms[k] > 1e-10 * max(top, 1e-300)]
    # The matrices are small: a multi-threaded BLAS only adds its start-up
    # and, on a busy machine, waits for cores (krang: 0.14 s on one thread,
    # 7.7 s with two on a loaded 2-core machine).
    with threadpool_limits(limits=1, user_api="blas"):
        return _dependencies_in(W, p, norms, nonzero)


def _dependencies_in(W, p, norms, nonzero):
    """:func:`_dependencies` on the non-zero columns ``nonzero`` of norms ``norms``."""
    keep, relations = [], {}
    if nonzero:
        R = _triangular(W[:, nonzero] / norms[nonzero])
        diag = np.abs(np.diag(R))
        local = [k for k in range(len(diag)) if diag[k] > RANK_TOL]
        keep = [nonzero[k] for k in local]
        rank = int((np.linalg.svd(R, compute_uv=False) > RANK_TOL * 1e-2).sum())
        if rank != len(keep):
            raise KaneRobotError(
                f"numeric base parameters: QR finds {len(keep)} independent columns, the SVD {rank}: "
                f"ill-conditioned samples (try more samples or another seed)"
            )
    dependent = [k for k in range(p) if k not in keep]
    if dependent:
        beta = np.zeros((len(keep), len(dependent)))
        inner = [nonzero.index(d) for d in dependent if d in nonzero]
        if keep and inner:
            local = [nonzero.index(k) for k in keep]
            scaled = np.linalg.lstsq(R[:, local], R[:, inner], rcond=None)[0]
            columns = [c for c, d in enumerate(dependent) if d in nonzero]
            beta[:, columns] = scaled * norms[[nonzero[i] for i in inner]][None, :] / norms[keep][:, None]
        for col, d in enumerate(dependent):
            relations[d] = beta[:, col]
    return keep, relations


# ----------------------------------------------------------------- numeric
def _numeric(robot, values, friction, rotor, rng, samples, q0):
    model = identification_model(robot, friction=friction, rotor=rotor)
    numbers = _bound_values(robot, model, values, rng, require=True)
    q, qd, qdd, _ = _states(robot, model, numbers, rng, samples, q0)
    W = _stacked(model, numbers, q, qd, qdd)
    keep, relations = _dependencies(W)
    scale = np.linalg.norm(W, axis=0)
    symbols = model._symbols
    exprs = {c: symbols[c] for c in keep}
    for d, beta in relations.items():
        for k, c in enumerate(keep):
            coeff = _clean(beta[k], tiny=1e-8 * scale[d] / scale[c])
            if coeff != 0:
                exprs[c] = exprs[c] + coeff * symbols[d]
    grouped = {c for c in keep if exprs[c] != symbols[c]}
    named = _names(model, keep, grouped)
    return BaseParameterSet(robot, "numeric", model, [n for n, _ in named], {n: exprs[c] for n, c in named}, [c for _, c in named])


# ---------------------------------------------------------------- symbolic
def _axis_index(frame):
    """k when the joint axis is ``+-e_k``, else None (an oblique axis)."""
    a = [sympy.sympify(x) for x in frame.axis]
    nonzero = [k for k in range(3) if a[k] != 0]
    if len(nonzero) == 1 and abs(a[nonzero[0]]) == 1:
        return nonzero[0]
    return None


def _revolute_split(k, a):
    """Take from link parameters ``k`` the body symmetric about the unit axis ``a``.

    The first moment along the axis, ``lam a``, and an inertia ``c (I - a a^T)``
    (both unchanged by rotations about a), with ``lam`` and ``c`` chosen to
    zero one parameter each: the first moment on the largest component of a,
    the inertia entry with the largest coefficient in ``I - a a^T``.  For a
    z axis this is Khalil's rule (``c = YY``, ``lam = MZ``).  Returns the
    moved body (J, MS, M); ``k`` keeps the rest.
    """
    a = sympy.Matrix(a)
    try:
        numeric = [abs(float(x)) for x in a]
    except TypeError:
        raise KaneRobotError(f"symbolic base parameters: joint axis {list(a)} is not numeric: use method='numeric' (--base-method numeric on the command line)") from None
    m = max(range(3), key=lambda r: (numeric[r], -r))
    lam = k["MS"][m] / a[m]
    k["MS"] = k["MS"] - lam * a
    k["MS"][m] = sympy.S.Zero
    E = sympy.eye(3) - a * a.T
    pairs = [(1, 1), (0, 0), (2, 2), (0, 1), (0, 2), (1, 2)]  # ties: YY first (Khalil's choice for z)
    r, c = max(pairs, key=lambda rc: abs(float(E[rc])))
    coeff = k["J"][r, c] / E[r, c]
    k["J"] = k["J"] - coeff * E
    k["J"][r, c] = k["J"][c, r] = sympy.S.Zero
    moved = (coeff * E, lam * a, k["M"])
    k["M"] = sympy.S.Zero
    return moved


def _carry(K, i, R, P, J, MS, M):
    """Add a body (J about O_j, MS, M in frame j) fixed to link i to i's parameters (frame i)."""
    s = R * MS
    PP = (P.T * P)[0]
    Ji = R * J * R.T + M * (PP * sympy.eye(3) - P * P.T) + 2 * (P.T * s)[0] * sympy.eye(3) - P * s.T - s * P.T
    K[i]["J"] = K[i]["J"] + Ji
    K[i]["MS"] = K[i]["MS"] + s + M * P
    K[i]["M"] = K[i]["M"] + M


def _symbolic(robot, values, friction, rotor, rng, samples, q0):
    """Base parameters by Khalil's grouping rules, checked on two random geometries."""
    robot, model = _symbolic_model(robot, values, friction, rotor)
    symbols = model._symbols
    index = {s: k for k, s in enumerate(symbols)}
    slot = {}  # (label, name) -> column
    for s, owners in model._owners.items():
        for owner in owners:
            slot[owner] = index[s]
    K = _link_parameters(robot, slot)
    for frame in reversed(robot.frames):
        _group_link(K, frame)
    exprs = _grouped_expressions(robot, model, K, slot)
    for s in symbols:  # IA, FV, FS stay as they are
        _label, name = model._owners[s][0]
        if name in ("IA",) + _FRICTION:
            exprs[index[s]] = s
    kept = sorted(exprs)
    keep0, rel0, order0 = _remaining_relations(robot, model, kept, rng, samples, q0)
    final = {c: exprs[c] for c in sorted(keep0)}
    for d, beta in rel0.items():
        for k, c in enumerate(order0):
            if beta[k] != 0:
                final[kept[c]] = final[kept[c]] + beta[k] * exprs[d]
    final = {c: sympy.expand(e) for c, e in final.items()}
    grouped = {c for c, e in final.items() if e != symbols[c]}
    named = _names(model, sorted(final), grouped)
    return BaseParameterSet(robot, "symbolic", model, [n for n, _ in named], {n: final[c] for n, c in named}, [c for _, c in named])


def _symbolic_model(robot, values, friction, rotor):
    """The robot with the given geometric values and its identification model; loops need numbers."""
    if values:
        geometric = set(robot.geometric_parameters)
        robot = robot.subs({k: v for k, v in values.items() if k in geometric})
    model = identification_model(robot, friction=friction, rotor=rotor)
    if robot.loops and any(name in robot.geometric_parameters for name in model.values_needed):
        raise KaneRobotError(
            f"symbolic base parameters of {robot.name}: with closed loops the grouping rules leave relations "
            f"that depend on the geometry: give numbers for it (values=..., --set NAME=VALUE on the command line) or use method='numeric' (--base-method numeric on the command line)"
        )
    return robot, model


def _link_parameters(robot, slot):
    """Per frame label, its J, MS, M: the standard parameter symbols that have a column, else 0."""

    def value(label, name):
        v = sympy.sympify(robot.dynamics[label][name]) if label in robot.dynamics else sympy.S.Zero
        return v if isinstance(v, sympy.Symbol) and (label, name) in slot else sympy.S.Zero

    K = {}
    for frame in robot.frames:  # for a closed loop, its equivalent tree (closing frames are fixed, massless)
        j = frame.label
        K[j] = {
            "J": sympy.Matrix(3, 3, lambda r, c, j=j: value(j, _INERTIA[_pair(r, c)])),
            "MS": sympy.Matrix([value(j, n) for n in _MOMENTS]),
            "M": value(j, "M"),
        }
    return K


def _group_link(K, frame):
    """Khalil's grouping rule for one frame: move what its joint cannot excite to its antecedent."""
    j, i = frame.label, frame.antecedent
    T = sympy.Matrix(frame.transform())
    if frame.is_joint:
        T = T.xreplace({frame.q: 0})
    R, P = T[:3, :3], T[:3, 3]
    k = K[j]
    if isinstance(frame.joint, Revolute):
        moved = _revolute_rule(k, frame)
    elif isinstance(frame.joint, Prismatic):
        moved = (k["J"], sympy.zeros(3, 1), sympy.S.Zero)
        k["J"] = sympy.zeros(3, 3)
    else:  # fixed: the whole link moves with its antecedent
        moved = (k["J"], k["MS"], k["M"])
        K[j] = {"J": sympy.zeros(3, 3), "MS": sympy.zeros(3, 1), "M": sympy.S.Zero}
    if i != BASE:
        _carry(K, i, R, P, *moved)


def _revolute_rule(k, frame):
    """The part of link parameters ``k`` a revolute joint moves to its antecedent (``k`` is reduced)."""
    z = _axis_index(frame)
    if z is None:  # an oblique axis (general frames)
        return _revolute_split(k, frame.axis)
    # The axis +-e_z: Khalil's rule with the axes relabelled.
    u, v = (z + 1) % 3, (z + 2) % 3
    Jvv = k["J"][v, v]
    moved = (Jvv * (sympy.eye(3) - _unit(z) * _unit(z).T), k["MS"][z] * _unit(z), k["M"])
    k["J"][u, u] = k["J"][u, u] - Jvv
    k["J"][v, v] = sympy.S.Zero
    k["MS"][z] = sympy.S.Zero
    k["M"] = sympy.S.Zero
    return moved


def _grouped_expressions(robot, model, K, slot):
    """Column -> expression of each non-zero grouped parameter, on the column of its own slot."""
    symbols = model._symbols
    exprs = {}
    for frame in robot.frames:
        j = frame.label
        grouped = {n: K[j]["J"][r, c] for n, (r, c) in zip(_INERTIA, _PAIRS)}
        grouped.update({n: K[j]["MS"][r] for r, n in enumerate(_MOMENTS)})
        grouped["M"] = K[j]["M"]
        for name, expr in grouped.items():
            expr = sympy.expand(expr)
            if expr == 0:
                continue
            if (j, name) not in slot or len(model._owners[symbols[slot[j, name]]]) != 1:
                raise KaneRobotError(
                    f"symbolic base parameters of {robot.name}: parameters are grouped into {name} of link {j}, "
                    f"which is not a parameter of its own in the description: use method='numeric' (--base-method numeric on the command line)"
                )
            exprs[slot[j, name]] = expr
    return exprs


def _remaining_relations(robot, model, kept, rng, samples, q0):
    """Parameters with no effect and equal effects among the ``kept`` columns; they must not depend on the geometry."""
    # On the regrouped columns, two random geometries.
    found = []
    for _ in range(2):
        numbers = _bound_values(robot, model, {}, rng, require=False)
        q, qd, qdd, q0 = _states(robot, model, numbers, rng, samples, q0)
        W = _stacked(model, numbers, q, qd, qdd)[:, kept]
        keep, relations = _dependencies(W)
        found.append(({kept[c] for c in keep}, {kept[d]: tuple(_clean(x) for x in beta) for d, beta in relations.items()}, keep))
    (keep0, rel0, order0), (keep1, rel1, _) = found
    numeric_geometry = not any(name in robot.geometric_parameters for name in model.values_needed)
    same = keep0 == keep1 and rel0.keys() == rel1.keys() and all(
        abs(float(x) - float(y)) <= 1e-8 * max(1.0, abs(float(x))) for d in rel0 for x, y in zip(rel0[d], rel1[d])
    )
    floats = any(isinstance(x, sympy.Float) for beta in rel0.values() for x in beta)
    if not same or (floats and not numeric_geometry):
        raise KaneRobotError(
            f"symbolic base parameters of {robot.name}: after the grouping rules, relations depending on the "
            f"geometry remain (a case the rules here do not cover{', e.g. closed loops' if robot.loops else ''}): "
            f"give numbers for the geometry (values=...) or use method='numeric' (--base-method numeric on the command line)"
        )
    return keep0, rel0, order0

_PAIRS = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def _pair(r, c):
    return _PAIRS.index((min(r, c), max(r, c)))


def _unit(k):
    e = sympy.zeros(3, 1)
    e[k] = 1
    return e
