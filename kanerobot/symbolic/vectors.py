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
"""

import sympy

__all__ = ["cross", "plus", "scaled", "times"]


def times(A, v):
    """``A v`` for a 3x3 ``A`` (indexed ``A[r, c]``) and a 3-vector ``v``."""
    return [sympy.Add(*[A[r, c] * v[c] for c in range(3) if A[r, c] != 0 and v[c] != 0]) for r in range(3)]


def plus(*vectors):
    """The sum of 3-vectors."""
    return [sympy.Add(*[v[r] for v in vectors]) for r in range(3)]


def scaled(s, v):
    """``s v``."""
    return [s * x for x in v] if s != 0 else [sympy.S.Zero] * 3


def cross(a, b):
    """``a x b``."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
