"""Equation types of Paul's method (Khalil and Dombre, SYMORO+ section 3.3).

An equation is a sympy expression ``e = 0`` polynomial in the sines and
cosines of the revolute unknowns and in the prismatic unknowns.  The
recognisers below say whether one equation (or a pair) is of a standard
type and return its coefficients, functions of the known symbols only::

    type 1   X r = Y                                   (r prismatic)
    type 2   X S + Y C = Z                             (S = sin th, C = cos th)
    type 3   X1 S + Y1 C = Z1,  X2 S + Y2 C = Z2
    type 4   r (X1 S + Y1 C) = Z1,  r (X2 S + Y2 C) = Z2     (rows orthogonal)
    type 5   X1 S + Y1 C = Z1 + W1 r,  X2 S + Y2 C = Z2 + W2 r
    type 6/7 W1 Cj + W2 Sj = X Ci + Y Si + Z1,  W1 Sj - W2 Cj = X Si - Y Ci + Z2
    type 8   type 6 in (th_i, th_i + th_j):  X Ci + Y C(i+j) = Z1,  X Si + Y S(i+j) = Z2

Types 4 to 8 are solved by squaring and adding, which needs the 2x2 matrix of
the eliminated unknown to be a multiple of a rotation; :func:`is_rotation_like`
checks it.  The numeric solvers (``solve_type*``) take numbers and return the
list of real solutions, ``None`` standing for "any value" (a singular case).
"""

import math
import random

import numpy
import sympy

#: Random points of the zero tests (fixed seed: the same answer every run).
_RNG = random.Random(8)

#: Relative threshold below which a coefficient is taken as zero.
EPS = 1e-10


def trig_symbols(q):
    """The symbols standing for ``sin(q)`` and ``cos(q)`` in polynomials."""
    return sympy.Symbol(f"S__{q}"), sympy.Symbol(f"C__{q}")


def to_polynomial_form(expr, revolute):
    """``expr`` with ``sin(q)``, ``cos(q)`` of the revolute unknowns replaced
    by :func:`trig_symbols`, expanded, with ``S**2`` reduced to ``1 - C**2``.

    Examples
    --------
    >>> t = sympy.Symbol("t")
    >>> to_polynomial_form(sympy.sin(t)**2 + 2*sympy.cos(t), [t])
    -C__t**2 + 2*C__t + 1
    """
    if any(f.args[0].is_Add for f in expr.atoms(sympy.sin, sympy.cos)):
        expr = sympy.expand_trig(expr)
    mapping = {}
    for q in revolute:
        S, C = trig_symbols(q)
        mapping[sympy.sin(q)] = S
        mapping[sympy.cos(q)] = C
    out = sympy.expand(expr.xreplace(mapping))
    for q in revolute:
        S, C = trig_symbols(q)
        if out.has(S):
            poly = sympy.Poly(out, S)
            if poly.degree() >= 2:
                out = sympy.expand(sum(
                    c * S ** (k[0] % 2) * (1 - C**2) ** (k[0] // 2) for k, c in poly.terms()
                ))
    return out


def linear_coefficients(poly, variables):
    """Coefficients of ``poly`` = sum c_k v_k + c_0 when it is affine in
    ``variables`` (no products, no powers), else None.  Returns
    ``([c_1, ...], c_0)``."""
    try:
        p = sympy.Poly(poly, *variables)
    except sympy.PolynomialError:
        return None
    if p.total_degree() > 1:
        return None
    coeffs = [p.coeff_monomial(v) for v in variables]
    const = p.coeff_monomial(1)
    return coeffs, const


def is_zero(expr, trials=3):
    """True when ``expr`` is identically 0 (tested at random values of its
    symbols, then exactly when every trial gives 0)."""
    expr = sympy.expand(expr)
    if expr == 0:
        return True
    symbols = sorted(expr.free_symbols, key=str)
    f = sympy.lambdify(symbols, expr, "math")
    for _ in range(trials):
        point = [_RNG.uniform(-2.0, 2.0) for _ in symbols]
        if abs(f(*point)) > 1e-9:
            return False
    return sympy.simplify(sympy.trigsimp(expr)) == 0


def is_rotation_like(a1, b1, a2, b2):
    """True when ``[[a1, b1], [a2, b2]]`` is ``k`` times an orthogonal matrix
    (k not identically 0): the condition for squaring and adding."""
    if is_zero(a1**2 + b1**2):
        return False
    return is_zero(a1**2 + b1**2 - a2**2 - b2**2) and is_zero(a1 * a2 + b1 * b2)


# ------------------------------------------------------------ numeric solvers
def solve_type1(X, Y):
    """X r = Y.  Returns [r], [None] (any r) or []."""
    scale = max(abs(X), abs(Y), 1.0)
    if abs(X) <= EPS * scale:
        return [None] if abs(Y) <= 1e-8 * scale else []
    return [Y / X]


def solve_type2(X, Y, Z):
    """X sin + Y cos = Z.  Returns up to two angles, [None] or []."""
    rho = math.hypot(X, Y)
    scale = max(rho, abs(Z), 1.0)
    if rho <= EPS * scale:
        return [None] if abs(Z) <= 1e-8 * scale else []
    c = Z / rho
    if abs(c) > 1.0 + 1e-9:
        return []
    c = max(-1.0, min(1.0, c))
    phi = math.atan2(X, Y)
    delta = math.acos(c)
    if delta < 1e-12:
        return [phi]
    return [phi + delta, phi - delta]


def solve_type3(rows):
    """Equations ``X sin + Y cos = Z`` (rows ``(X, Y, Z)``) in one angle:
    one solution when two are independent (least squares on all of them),
    else the type-2 solutions of the best conditioned one (the final pose
    check keeps the right ones).

    Examples
    --------
    >>> round(solve_type3([(1.0, 0.0, 0.5), (0.0, 1.0, 3**0.5 / 2)])[0], 12)
    0.523598775598
    """
    scale = max([1.0] + [abs(x) for r in rows for x in r])
    # rows that vanish (an identity at this pose) say nothing
    rows = [r for r in rows if max(abs(x) for x in r) > 1e-10 * scale] or [(0.0, 0.0, 0.0)]
    A = numpy.array([r[:2] for r in rows], dtype=float)
    b = numpy.array([r[2] for r in rows], dtype=float)
    sv = numpy.linalg.svd(A, compute_uv=False)
    if sv[0] > 0 and sv[-1] > 1e-7 * sv[0]:
        (S, C), *_ = numpy.linalg.lstsq(A, b, rcond=None)
        return [math.atan2(S, C)]
    best = max(rows, key=lambda r: math.hypot(r[0], r[1]))
    return solve_type2(*best)


def solve_type4(X1, Y1, Z1, X2, Y2, Z2):
    """r (X1 S + Y1 C) = Z1, r (X2 S + Y2 C) = Z2 with orthogonal rows.
    Returns pairs (r, theta); theta None when r = 0 (any angle)."""
    k = X1**2 + Y1**2
    rr = (Z1**2 + Z2**2) / k
    r = math.sqrt(rr)
    if r <= 1e-12 * max(1.0, abs(Z1) + abs(Z2)):
        return [(0.0, None)]
    out = []
    for rs in (r, -r):
        out += [(rs, th) for th in solve_type3([(X1 * rs, Y1 * rs, Z1), (X2 * rs, Y2 * rs, Z2)])]
    return out


def solve_type5(X1, Y1, Z1, W1, X2, Y2, Z2, W2):
    """X S + Y C = Z + W r (two rows, orthogonal [[X, Y]]): quadratic in r.
    Returns pairs (r, theta)."""
    k = X1**2 + Y1**2
    a = W1**2 + W2**2
    b = 2 * (Z1 * W1 + Z2 * W2)
    c = Z1**2 + Z2**2 - k
    if abs(a) <= EPS * max(abs(b), abs(c), 1.0):
        roots = solve_type1(b, -c)
    else:
        disc = b * b - 4 * a * c
        if disc < -1e-9 * max(b * b, abs(4 * a * c), 1.0):
            return []
        disc = math.sqrt(max(disc, 0.0))
        roots = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    out = []
    for r in roots:
        if r is None:
            continue
        out += [(r, th) for th in solve_type3([(X1, Y1, Z1 + W1 * r), (X2, Y2, Z2 + W2 * r)])]
    return out
