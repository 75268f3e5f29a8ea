"""3-vectors as lists of sympy expressions, with no product by a structural zero formed.

The recursions build many small vectors; sympy's ``Matrix`` arithmetic
creates an object per operation and multiplies zeros before dropping them.
These functions give the same expressions (sympy's canonical sums and
products) from plain sequences, and the algorithms make a ``Matrix`` only
of what they name in a program.

Examples
--------
>>> import sympy
>>> a, b, c = sympy.symbols("a b c")
>>> times(sympy.Matrix([[1, 0, 0], [0, c, 0], [0, 0, 0]]), [a, b, 0])
[a, b*c, 0]
>>> plus([a, 0, 0], [b, c, 0]), cross([1, 0, 0], [0, 1, 0]), scaled(2, [a, b, c])
([a + b, c, 0], [0, 0, 1], [2*a, 2*b, 2*c])
>>> matmul(sympy.Matrix([[a, 0], [0, 1]]), sympy.Matrix([[b], [c]]))
Matrix([
[a*b],
[  c]])
"""

import functools

import sympy

__all__ = ["cross", "matmul", "minus", "negated", "plus", "product", "scaled", "sum_of_products", "summed", "times"]


def times(A, v):
    """``A v`` for a 3x3 ``A`` (indexed ``A[r, c]``) and a 3-vector ``v``."""
    A = A.tolist() if isinstance(A, sympy.MatrixBase) else [[A[r, c] for c in range(3)] for r in range(3)]
    v = [v[c] for c in range(3)]
    return [summed([product(a, x) for a, x in zip(row, v) if a != 0 and x != 0]) for row in A]


def plus(*vectors):
    """The sum of 3-vectors."""
    return [summed([v[r] for v in vectors]) for r in range(3)]


def scaled(s, v):
    """``s v``."""
    return [product(s, x) for x in v] if s != 0 else [sympy.S.Zero] * 3


def cross(a, b):
    """``a x b``."""
    return [_difference(a[1], b[2], a[2], b[1]), _difference(a[2], b[0], a[0], b[2]), _difference(a[0], b[1], a[1], b[0])]


def product(a, b):
    """``a*b``, sympy's product, made faster for the products of a recursion.

    A factor 1 (of a rotation, a motion subspace) is not multiplied, and the
    product of two plain products (symbols times a rational coefficient, no
    symbol in both) is sympy's own ``Mul``, coefficient first and the symbols
    in sympy's canonical order, made without its general flattening (which
    takes most of the time of such a product).
    """
    if a is sympy.S.One:
        return b
    if b is sympy.S.One:
        return a
    return _product(a, b)[0]


def _product(a, b):
    """:func:`product` and, when it is a plain product, its ``(coefficient, symbols)`` (else None)."""
    if a is sympy.S.One:
        return b, _plain(b)
    if b is sympy.S.One:
        return a, _plain(a)
    plain_a, plain_b = _plain(a), _plain(b)
    if plain_a is None or plain_b is None:
        if plain_a is not None and plain_a[1] and type(b) is _ADD and b.is_commutative:
            return _times_sum(plain_a, b), None
        if plain_b is not None and plain_b[1] and type(a) is _ADD and a.is_commutative:
            return _times_sum(plain_b, a), None
        return a * b, None
    if set(plain_a[1]) & set(plain_b[1]):
        return a * b, None  # a symbol in both is a power: sympy's flattening
    # Most coefficients are 1 or -1: the product of rationals only when both are other than 1.
    coefficient = plain_b[0] if plain_a[0] is sympy.S.One else plain_a[0] if plain_b[0] is sympy.S.One else plain_a[0] * plain_b[0]
    if coefficient is sympy.S.Zero:
        return coefficient, (coefficient, ())
    factors = tuple(sorted(plain_a[1] + plain_b[1], key=_symbol_order)) if plain_a[1] and plain_b[1] else plain_a[1] or plain_b[1]
    if not factors:
        return coefficient, (coefficient, ())
    if coefficient is sympy.S.One:
        return (factors[0] if len(factors) == 1 else _MUL._from_args(factors, True)), (coefficient, factors)
    return _MUL._from_args((coefficient,) + factors, True), (coefficient, factors)


def _times_sum(plain, total):
    """``c*x*y*(u + v)``: the plain product ``(c, (x, y))`` times the sum ``total``, sympy's ``Mul``.

    With at least one symbol beside it, sympy neither distributes the
    coefficient over the sum nor changes the sum: its product is the
    coefficient first, then the symbols and the sum in sympy's order.
    """
    coefficient, symbols = plain
    factors = sorted(symbols + (total,), key=_CANONICAL)
    return _MUL._from_args(factors if coefficient is sympy.S.One else [coefficient] + factors, True)


def _plain(term):
    """``(coefficient, symbols)`` of a plain product: commutative symbols times a rational coefficient; else None."""
    if type(term) is _SYMBOL:
        return (sympy.S.One, (term,)) if term.is_commutative else None
    if isinstance(term, sympy.Rational):
        return term, ()
    if type(term) is _MUL:
        args = term.args
        coefficient, factors = (args[0], args[1:]) if args[0].is_Rational else (sympy.S.One, args)
        for f in factors:  # a loop, not all(...): it runs for every term of every sum
            if type(f) is not _SYMBOL or not f.is_commutative:
                return None
        return coefficient, factors
    return None


_SYMBOL, _MUL, _ADD = sympy.Symbol, sympy.Mul, sympy.Add
#: sympy's order of the arguments of a sum or a product (``Basic.compare``).
_CANONICAL = functools.cmp_to_key(sympy.Basic.compare)


def _symbol_order(symbol):
    """Sort key of a ``Symbol`` in sympy's order (``Basic.compare`` of two symbols: the length of their
    ``_hashable_content``, the name then the assumptions, then these in turn), without its comparisons."""
    content = symbol._hashable_content()
    return len(content), content


def _difference(a, b, c, d):
    """``a*b - c*d``, a product by a zero not formed (it costs as much as any other)."""
    if a == 0 or b == 0:
        return negated(product(c, d)) if c != 0 and d != 0 else sympy.S.Zero
    if c == 0 or d == 0:
        return product(a, b)
    return summed([product(a, b), negated(product(c, d))])


def summed(terms):
    """``sympy.Add(*terms)``; terms that are products of plain symbols (with rational coefficients), none
    alike, are put in sympy's canonical order without its general flattening (there is nothing to collect)."""
    return _summed(terms, [_plain(term) for term in terms] if len(terms) > 1 else None)


def _summed(terms, plain):
    """:func:`summed` of ``terms`` whose :func:`_plain` forms are ``plain`` (unused for fewer than two terms)."""
    if len(terms) == 1 and isinstance(terms[0], sympy.Basic):
        return terms[0]  # what sympy.Add of one expression returns
    if len(terms) > 1:
        factors = [p[1] if p is not None else _opaque_factors(term) for term, p in zip(terms, plain)]
        if None not in factors and () not in factors and len(set(factors)) == len(factors):
            return _ADD._from_args(sorted(terms, key=_CANONICAL), True)
        if any(term is sympy.S.Zero for term in terms):  # sympy.Add drops an exact 0 (a zero product of a chain rule)
            kept = [k for k, term in enumerate(terms) if term is not sympy.S.Zero]
            return _summed([terms[k] for k in kept], [plain[k] for k in kept])
    return sympy.Add(*terms)


def _opaque_factors(term):
    """The factors other than the coefficient of a product sympy's ``Add`` would take as it stands, else None.

    ``Add`` collects the terms of a sum by these factors (``as_coeff_Mul``) and, when no two terms have the
    same, rebuilds each term as it was: for a commutative product with a rational or no coefficient (a sum
    among its factors is not expanded), the sum is the terms in sympy's order.  Numbers (a Float coefficient,
    infinities) and sums as terms are left to ``Add``.
    """
    if type(term) is not _MUL or not term.is_commutative:
        return None
    args = term.args
    if args[0].is_Number:
        return args[1:] if args[0].is_Rational else None
    return args


def sum_of_products(pairs):
    """``summed([product(a, b) for a, b in pairs])``, the same expression, each product analysed once.

    The chain rule's sums (``df/du1 * du1/dx + df/du2 * du2/dx``) are made of
    such products; :func:`summed` would take apart again what :func:`product`
    has just built.
    """
    terms, plain = [], []
    for a, b in pairs:
        term, form = _product(a, b)
        terms.append(term)
        plain.append(form)
    return _summed(terms, plain)


def negated(term):
    """``-term``, as :func:`product` makes ``-1*term``."""
    return product(sympy.S.NegativeOne, term)


def minus(a, b):
    """``a - b``, as sympy makes it (:func:`summed` and :func:`negated`)."""
    if b == 0:
        return a
    return negated(b) if a == 0 else summed([a, negated(b)])


def matmul(A, B):
    """``A B`` for two sympy matrices, the expressions of sympy's ``A * B``.

    Each entry is the sum (``sympy.Add`` at once) of the products of the
    non-zero entries, as sympy's sparse product forms it, without the
    conversion of both matrices to and from its domain representation,
    which costs more than the product of the small matrices of a recursion.
    """
    if A.cols != B.rows:
        raise ValueError(f"cannot multiply a {A.rows}x{A.cols} matrix by a {B.rows}x{B.cols} one")
    rows, columns = A.tolist(), B.tolist()
    columns = [[(k, row[c]) for k, row in enumerate(columns) if row[c] != 0] for c in range(B.cols)]
    entries = []
    for row in rows:
        for column in columns:
            entry = summed([product(row[k], b) for k, b in column if row[k] != 0])
            entries.append(entry if entry else sympy.S.Zero)  # a float 0 is dropped as sympy drops it
    return sympy.Matrix(A.rows, B.cols, entries)
