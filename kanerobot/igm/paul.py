"""Paul's method: the closed-form solution of a chain equation, step by step.

A chain equation ``M_1(q_1) M_2(q_2) ... M_m(q_m) = T`` (T the pose ``U0``
of the terminal frame, or the identity for a closed loop) gives, by moving
factors to the left and to the right (Paul's pre- and post-multiplications,
SYMORO+ section 3.3)::

    M_j^-1 ... M_1^-1  T  M_m^-1 ... M_k+1^-1  =  M_j+1 ... M_k      (0 <= j <= k <= m)

twelve scalar equations per (j, k).  With ``points`` (Pieper's decoupling) the
origins of frames that are fixed in the terminal frame (a spherical wrist's
centre) or in the base add three position equations per level; ``centres``
(:func:`kanerobot.igm.pieper.centres`) adds those of the centre C of a
spherical joint in the middle of the chain (joints k, k+1, k+2)::

    M_j^-1 ... M_1^-1  T  M_m^-1 ... M_l+1^-1  lP_C  =  M_j+1 ... M_k-1  k-1P_C

for every j < k and l > k+2 (and the same seen from the terminal frame, with
``T^-1``), both sides free of the joints of the spherical joint.

:func:`solve_chain` picks, again and again, the equation (or pair) of a
standard type (:mod:`kanerobot.igm.equations`) in the fewest unknowns, and
records a :class:`Step`: the unknown(s), the type and the coefficient
expressions of each candidate equation.  The steps are evaluated numerically
by :class:`kanerobot.igm.program.SolutionProgram`.
"""

import itertools
from dataclasses import dataclass, field

import numpy
import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.geometry import inverse_transform
from kanerobot.igm import equations as eq

#: Pose symbols of SYMORO: ``U0 = [[sx, nx, ax, Px], [sy, ny, ay, Py], [sz, nz, az, Pz]]``.
POSE_NAMES = ("sx", "nx", "ax", "Px", "sy", "ny", "ay", "Py", "sz", "nz", "az", "Pz")


class NoClosedForm(KaneRobotError):
    """Paul's method found no equation of a standard type for some unknowns."""


def pose_matrix(names=POSE_NAMES):
    """The symbolic pose ``U0`` (4x4) with the SYMORO names."""
    syms = [sympy.Symbol(n) for n in names]
    return sympy.Matrix(3, 4, syms).col_join(sympy.Matrix([[0, 0, 0, 1]]))


@dataclass
class Step:
    """One step of the solution: ``kind`` (``'type1'`` ... ``'type8'``),
    ``unknowns`` (one symbol, or (r, theta) for types 4 and 5), ``candidates``
    (tuples of coefficient expressions of equivalent equations; the numeric
    evaluation uses the best conditioned), ``offset`` (for type 8: the solved
    angle is ``unknown + offset``) and ``equation`` (text of the first
    candidate, for printing)."""

    kind: str
    unknowns: tuple
    candidates: list
    offset: object = None
    equation: str = ""
    note: str = field(default="")


# ------------------------------------------------------------ the equations
def chain_equations(factors, target, joints, points=True, centres=()):
    """All scalar equations of a chain ``M_1 ... M_m = target``.

    Parameters
    ----------
    factors : list of sympy.Matrix (4, 4)
        Each a function of at most one joint variable.
    target : sympy.Matrix (4, 4)
    joints : set of sympy.Symbol
        The joint variables (what a fixed point must not depend on).
    points : bool
        Add the position equations of the frame origins that are fixed in the
        terminal frame or in the base (Pieper's decoupling).
    centres : sequence of (int, int, sympy.Matrix, sympy.Matrix)
        The centre of a spherical joint in the middle of the chain
        (:func:`kanerobot.igm.pieper.centres`): ``(first, last, left,
        right)``, ``first`` and ``last`` the indices (from 0) of the factors
        of its first and last joints, ``left`` its homogeneous coordinates
        in the frame after the factors ``0 ... first-1`` and ``right`` in
        the frame after the factors ``0 ... last`` (both constant); its
        position equations are added.

    Returns
    -------
    list of sympy.Expr
        Expressions equal to 0, expanded, without repetitions (up to sign).
    """
    m = len(factors)
    inverses = [inverse_transform(M) for M in factors]
    found = []
    for j in range(m + 1):
        left = target
        for i in range(j):
            left = inverses[i] * left
        for k in range(m, j - 1, -1):
            lhs = left
            for i in range(m - 1, k - 1, -1):
                lhs = lhs * inverses[i]
            rhs = sympy.eye(4)
            for i in range(j, k):
                rhs = rhs * factors[i]
            found += [lhs[r, c] - rhs[r, c] for r in range(3) for c in range(4)]
    if points:
        joints = set(joints)
        found += _point_equations(factors, inverses, target, joints)
        found += _point_equations(inverses[::-1], factors[::-1], inverse_transform(target), joints)
    for first, last, left, right in centres:
        found += _centre_equations(factors, inverses, target, first, last, left, right)
        # and seen from the terminal frame: the chain reversed, T^-1
        m = len(factors)
        found += _centre_equations(inverses[::-1], factors[::-1], inverse_transform(target),
                                   m - 1 - last, m - 1 - first, right, left)
    return _unique(found)


def _centre_equations(factors, inverses, target, first, last, left, right):
    """Position equations of a point fixed in the frames after the factors
    ``0 ... first-1`` up to ``0 ... last`` (a middle spherical joint's
    centre): C in the frame after ``j`` factors (j <= first), computed from
    the base side and from the terminal side through ``T``, the terminal side
    written with the point in the frame after ``l`` factors (l > last)."""
    m = len(factors)
    out = []
    for l in range(last + 1, m + 1):
        p = sympy.Matrix(right)  # the point in the frame after l factors
        for i in range(last + 1, l):
            p = inverses[i] * p
        seen = sympy.Matrix(target)
        for i in range(m - 1, l - 1, -1):
            seen = seen * inverses[i]
        seen = seen * p
        for j in range(first + 1):
            lhs = seen
            for i in range(j):
                lhs = inverses[i] * lhs
            rhs = sympy.Matrix(left)
            for i in range(first - 1, j - 1, -1):
                rhs = factors[i] * rhs
            out += [lhs[r] - rhs[r] for r in range(3)]
    return out


def _point_equations(factors, inverses, target, joints):
    """Position equations of the frame origins fixed in the last frame: for
    such an origin p (constant in the last frame), ``M_j^-1 ... M_1^-1 T p =
    M_j+1 ... M_k o`` for j < k."""
    m = len(factors)
    out = []
    origin = sympy.Matrix([0, 0, 0, 1])
    for k in range(1, m):
        # origin of frame k in the last frame: M_m^-1 ... M_k+1^-1 o
        p_end = _reverse_product(inverses[k:]) * origin
        if sympy.Matrix(p_end).free_symbols & joints:
            continue
        seen = sympy.Matrix(target) * p_end
        for j in range(k):
            lhs = seen
            for i in range(j):
                lhs = inverses[i] * lhs
            rhs = origin
            for i in range(k - 1, j - 1, -1):
                rhs = factors[i] * rhs
            out += [lhs[r] - rhs[r] for r in range(3)]
    return out


def _reverse_product(mats):
    """``mats[-1] * ... * mats[0]``."""
    out = sympy.eye(4)
    for M in reversed(mats):
        out = out * M
    return out


def _unique(exprs):
    out, seen = [], set()
    for e in exprs:
        e = sympy.expand(e)
        if e == 0 or e in seen or -e in seen:
            continue
        seen.add(e)
        out.append(e)
    return out


# ------------------------------------------------------------------ solving
def consistent_samples(factors, target_symbols, count=3, seed=5):
    """Random points ``{symbol: value}`` where the chain equation holds:
    random joints and parameters, and the pose their product gives.

    The pose symbols are not free (the rotation is orthonormal): an
    expression can vanish at every reachable pose without being 0 as a
    polynomial; these points detect it (:func:`solve_chain`).
    """
    rng = numpy.random.default_rng(seed)
    symbols = sorted(set().union(*(M.free_symbols for M in factors)), key=str)
    out = []
    for _ in range(count):
        point = {s: float(rng.uniform(-numpy.pi, numpy.pi)) for s in symbols}
        T = numpy.eye(4)
        for M in factors:
            T = T @ numpy.array(M.xreplace({s: sympy.Float(v) for s, v in point.items()}).evalf(), dtype=float)
        point.update({sym: T[k // 4, k % 4] for k, sym in enumerate(target_symbols)})
        out.append(point)
    return out


def _vanishes(exprs, samples):
    """True when every expression is ~0 at every sample (an identity on the
    set of reachable poses)."""
    for point in samples:
        for e in exprs:
            e = sympy.sympify(e)
            value = complex(e.xreplace({s: sympy.Float(point[s]) for s in e.free_symbols if s in point}).evalf())
            if e.free_symbols - set(point) or abs(value) > 1e-9:
                return False
    return True


def solve_chain(equations, unknowns, prismatic=(), max_pairs=40, samples=()):
    """Solve ``equations`` for ``unknowns`` step by step (Paul's method).

    Parameters
    ----------
    equations : list of sympy.Expr
        From :func:`chain_equations`.
    unknowns : sequence of sympy.Symbol
    prismatic : set of sympy.Symbol
        The unknowns that are lengths (the others are angles).
    max_pairs : int
        Most equation pairs tried per pair of unknowns.
    samples : list of dict, optional
        :func:`consistent_samples`: equations whose coefficients vanish at
        all of them, and type-3 pairs whose determinant does, are not used.

    Returns
    -------
    list of Step

    Raises
    ------
    NoClosedForm
        When no equation of types 1 to 8 is left for the remaining unknowns.
    """
    remaining = list(unknowns)
    prismatic = set(prismatic)
    steps = []
    info = [(e, e.free_symbols) for e in equations]
    cache = {"samples": list(samples)}  # and (equation, unknown) -> coefficients of type 1 or 2, or None
    while remaining:
        rset = set(remaining)
        by_set: dict[frozenset, list[sympy.Expr]] = {}  # unknowns -> the equations in them alone
        for e, syms in info:
            key = frozenset(syms & rset)
            if 0 < len(key) <= 2:
                by_set.setdefault(key, []).append(e)
        found = _single_steps(by_set, remaining, prismatic, cache)
        if not found:
            found = _pair_steps(by_set, remaining, prismatic, max_pairs)
        if not found:
            names = ", ".join(map(str, remaining))
            raise NoClosedForm(f"Paul's method: no equation of types 1 to 8 in the unknowns {names}")
        for step in found:
            steps.append(step)
            for u in step.unknowns:
                remaining.remove(u)
    return steps


def _linear_in(e, u, prismatic, cache):
    """Type 1 ``(X, Y)`` or type 2 ``(X, Y, Z)`` coefficients of ``e`` in
    ``u``, or None."""
    key = (e, u)
    if key not in cache:
        out: tuple | None = None
        if u in prismatic:
            lin = eq.linear_coefficients(e, [u])
            if lin and lin[0][0] != 0:
                out = (lin[0][0], -lin[1])
        else:
            S, C = eq.trig_symbols(u)
            lin = eq.linear_coefficients(eq.to_polynomial_form(e, [u]), [S, C])
            if lin and not (lin[0][0] == 0 and lin[0][1] == 0):
                out = (lin[0][0], lin[0][1], -lin[1])
        if out is not None and cache["samples"] and _vanishes(out[:2], cache["samples"]):
            out = None  # 0 = 0 at every reachable pose
        cache[key] = out
    return cache[key]


def _single_steps(by_set, remaining, prismatic, cache):
    """Best one-unknown step: type 1 or 3 (one solution) before type 2,
    and a type 2 with Z = 0 (an atan2) before one needing an acos."""
    best: dict[int, Step] = {}  # rank (0 first) -> the step
    for u in remaining:
        # the smallest equations only: they give the simplest formulas
        eqs = sorted(by_set.get(frozenset([u]), []), key=_size)[:16]
        if not eqs:
            continue
        found = [c for c in (_linear_in(e, u, prismatic, cache) for e in eqs) if c is not None]
        if u in prismatic:
            cands = found
            if cands:
                cands.sort(key=lambda c: sympy.count_ops(c[0]))
                best.setdefault(0, Step("type1", (u,), cands[:4], equation=_text1(u, cands[0])))
            continue
        lins = found
        lins.sort(key=lambda c: sum(sympy.count_ops(x) for x in c))
        pair = None
        for a, b in itertools.combinations(lins[:12], 2):
            det = sympy.expand(a[0] * b[1] - a[1] * b[0])
            # two homogeneous equations (Z1 = Z2 = 0) are dependent at every
            # reachable pose: a type 2, not a type 3
            if (a[2] != 0 or b[2] != 0) and det != 0 and not eq.is_zero(det) and not (
                cache["samples"] and _vanishes([det], cache["samples"])
            ):
                pair = [a, b]
                break
        if pair:
            rows = pair + [c for c in lins[:8] if c not in pair]
            best.setdefault(0, Step("type3", (u,), rows, equation=_text3(u, pair[0] + pair[1])))
        elif lins:
            zero_z = [c for c in lins if c[2] == 0]
            rank = 1 if zero_z else 2
            best.setdefault(rank, Step("type2", (u,), (zero_z or lins)[:4], equation=_text2(u, (zero_z or lins)[0])))
    return [best[min(best)]] if best else []


def _pair_steps(by_set, remaining, prismatic, max_pairs):
    for u, v in itertools.combinations(remaining, 2):
        eqs = by_set.get(frozenset([u, v]), [])
        if len(eqs) < 2:
            continue
        eqs = sorted(eqs, key=_size)[:12]
        pairs = list(itertools.combinations(eqs, 2))[:max_pairs]
        if (u in prismatic) != (v in prismatic):
            r, th = (u, v) if u in prismatic else (v, u)
            for e1, e2 in pairs:
                step = _type45(e1, e2, r, th)
                if step:
                    return [step]
        elif not (u in prismatic or v in prismatic):
            for e1, e2 in pairs:
                steps = _type678(e1, e2, u, v)
                if steps:
                    return steps
    return []


def _type45(e1, e2, r, th):
    S, C = eq.trig_symbols(th)
    p1, p2 = (eq.to_polynomial_form(e, [th]) for e in (e1, e2))
    rows = []
    for p in (p1, p2):
        poly = sympy.Poly(p, S, C, r)
        allowed4 = {(1, 0, 1), (0, 1, 1), (0, 0, 0)}
        if set(poly.monoms()) <= allowed4:
            rows.append(("4", poly.coeff_monomial(S * r), poly.coeff_monomial(C * r), -poly.coeff_monomial(1), 0))
        elif set(poly.monoms()) <= {(1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 0)}:
            rows.append(("5", poly.coeff_monomial(S), poly.coeff_monomial(C), -poly.coeff_monomial(1), -poly.coeff_monomial(r)))
        else:
            return None
    if rows[0][0] != rows[1][0] or not eq.is_rotation_like(rows[0][1], rows[0][2], rows[1][1], rows[1][2]):
        return None
    (k, X1, Y1, Z1, W1), (_, X2, Y2, Z2, W2) = rows
    if k == "4":
        return Step("type4", (r, th), [(X1, Y1, Z1, X2, Y2, Z2)],
                    equation=f"{r}*({X1}*S + {Y1}*C) = {Z1};  {r}*({X2}*S + {Y2}*C) = {Z2}   (S, C of {th})")
    if W1 == 0 and W2 == 0:
        return None
    return Step("type5", (r, th), [(X1, Y1, Z1, W1, X2, Y2, Z2, W2)],
                equation=f"{X1}*S + {Y1}*C = {Z1} + {W1}*{r};  {X2}*S + {Y2}*C = {Z2} + {W2}*{r}   (S, C of {th})")


def _type678(e1, e2, u, v):
    """Types 6, 7, 8: square and add to eliminate one angle (or the sum of
    both), then a type 2 in the other and a type 3 for the eliminated one."""
    phi = sympy.Symbol(f"phi__{u}_{v}")
    for first, other in ((u, v), (v, u)):
        for use_sum in (False, True):
            if use_sum:
                exprs = [e.xreplace({other: phi - first}) for e in (e1, e2)]
                second = phi
            else:
                exprs, second = [e1, e2], other
            steps = _square_and_add(exprs, first, second, other if use_sum else None)
            if steps:
                return steps
    return None


def _square_and_add(exprs, x, y, summed):
    Sx, Cx = eq.trig_symbols(x)
    Sy, Cy = eq.trig_symbols(y)
    rows = []
    for e in exprs:
        lin = eq.linear_coefficients(eq.to_polynomial_form(e, [x, y]), [Sx, Cx, Sy, Cy])
        if lin is None:
            return None
        rows.append((lin[0], lin[1]))
    (a1, b1, c1, d1), k1 = rows[0]
    (a2, b2, c2, d2), k2 = rows[1]
    if not eq.is_rotation_like(c1, d1, c2, d2):
        return None
    if all(t == 0 for t in (a1, b1, a2, b2)):
        return None
    if not eq.is_rotation_like(a1, b1, a2, b2):
        return None
    X = sympy.expand(2 * (k1 * a1 + k2 * a2))
    Y = sympy.expand(2 * (k1 * b1 + k2 * b2))
    Z = sympy.expand((c1**2 + d1**2) - (a1**2 + b1**2) - k1**2 - k2**2)
    if eq.is_zero(X) and eq.is_zero(Y):
        return None
    back = {Sx: sympy.sin(x), Cx: sympy.cos(x)}
    Z1 = -(a1 * Sx + b1 * Cx + k1).xreplace(back)
    Z2 = -(a2 * Sx + b2 * Cx + k2).xreplace(back)
    kind = "type8" if summed is not None else ("type7" if all(t != 0 for t in (c1, d1)) else "type6")
    first = Step(kind, (x,), [(X, Y, Z)], equation=_text2(x, (X, Y, Z)),
                 note=f"squaring and adding eliminates {y}")
    target = summed if summed is not None else y
    second = Step("type3", (target,), [(c1, d1, Z1), (c2, d2, Z2)], offset=x if summed is not None else None,
                  equation=_text3(y, (c1, d1, Z1, c2, d2, Z2)),
                  note=f"{y} = {x} + {summed}" if summed is not None else "")
    return [first, second]


def _size(e):
    return len(sympy.Add.make_args(e)), len(str(e))


# ---------------------------------------------------------------- printing
def _text1(u, c):
    return f"({c[0]})*{u} = {c[1]}"


def _text2(u, c):
    return f"({c[0]})*sin({u}) + ({c[1]})*cos({u}) = {c[2]}"


def _text3(u, c):
    return f"{_text2(u, c[:3])};  {_text2(u, c[3:])}"
