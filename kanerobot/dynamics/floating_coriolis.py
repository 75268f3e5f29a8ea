"""Coriolis matrix of a floating robot, in quasi-velocities.

With the base speeds ``V = (v, w)`` in frame 0 (pinocchio's free flyer, see
:mod:`~kanerobot.dynamics.floating`) and ``nu = (V, qd)``, the velocity terms
of the dynamic model are (Boltzmann-Hamel; ``A`` depends on the joints only)::

    h_vel(q, nu) = A' nu - [0; dT/dq] + E ad*_V p,     p = (A nu)[:6]

where ``E`` puts a 6-vector on the base rows and ``ad*_V`` is the spatial
cross product of forces, ``V x* [f; n] = [w x f; w x n + v x f]``.  The
matrix ``C`` wanted satisfies ``C nu = h_vel`` and ``A' - 2 C`` skew
(passivity: ``nu^T (A' - 2C) nu = 0`` is the energy balance).  The
Christoffel form over the joints (the base speeds have no coordinate, so
``dA/d(base) = 0``) gives the first two terms; the Hamel term needs its own
split.  With ``S = E ad_V E^T`` (``ad_V``: the motion cross product,
``V x [u_v; u_w] = [w x u_v + v x u_w; w x u_w]``, so ``S nu = 0``) and
``p xbar*`` the 6x6 matrix with ``(p xbar*) u = u x* p``::

    C = C_Christoffel(A; joints) + 1/2 (-S^T A + A S + E (p xbar*) E^T)           (H)

``-S^T A = E ad*_V E^T A`` on the base rows; ``-S^T A + A S`` is skew (its
transpose is ``-A S + S^T A``) and so is ``p xbar*``, so ``A' - 2 C`` is
the Christoffel part's skew matrix plus a skew matrix; and ``C nu`` gives
``h_vel`` since ``S nu = 0`` and ``(p xbar*) V = V x* p``.  This is the
single rigid body's ``1/2 (v x* I + I v x + (I v) xbar*)`` (Echeandia and
Wensing, 2021) carried to a tree.

The seed's ``getAC`` rule ``C' = 1/2 dh_vel/dnu`` (what Kane's
:meth:`~kanerobot.dynamics.kane.KaneSystem.coriolis_matrix` forms) equals
the Christoffel form over generalized coordinates, but here it gives
``C_Christoffel + 1/2 (-S^T A + E (p xbar*) E^T)``: it lacks ``1/2 A S``,
whose product with ``nu`` vanishes but which is not skew.
:func:`half_a_s` is that term: the Kane engine adds it, so that every
engine returns (H).
"""

import sympy

from kanerobot.dynamics.coriolis import coriolis_matrix as christoffel
from kanerobot.dynamics.free_flyer import BASE_VELOCITY

__all__ = ["coriolis_matrix", "half_a_s", "hamel_terms"]


def hamel_terms(A, nu, program):
    """``1/2 (-S^T A + A S + E (p xbar*) E^T)`` of (H), as an (N, N) sympy matrix.

    Parameters
    ----------
    A : sympy.Matrix, shape (6+n, 6+n)
        The inertia matrix, entries in ``program``'s symbols.
    nu : sequence, length 6+n
        ``(VX0 .. WZ0, QP ...)``.
    program : Program
        Where the base momentum ``p = A[:6] nu`` is assigned (``PB1 .. PB6``).

    Examples
    --------
    One free body (spatial inertia ``I`` about its origin): ``A`` is
    constant, so ``C`` must be skew, and ``C V = V x* I V``.

    >>> import numpy as np
    >>> from kanerobot.symbolic import Program
    >>> I = sympy.Matrix(6, 6, lambda i, j: sympy.Symbol(f"I{min(i, j)}{max(i, j)}"))
    >>> V = sympy.Matrix(BASE_VELOCITY)
    >>> C = hamel_terms(I, list(V), Program(inputs=sorted(I.free_symbols, key=str) + list(V)))
    >>> rng = np.random.default_rng(0)
    >>> values = {s: rng.normal() for s in I.free_symbols | V.free_symbols}
    >>> PB = {sympy.Symbol(f"PB{k + 1}"): (I * V)[k] for k in range(6)}
    >>> C = C.xreplace(PB).xreplace(values)
    >>> v, w = V[:3, 0].xreplace(values), V[3:, 0].xreplace(values)
    >>> p = (I * V).xreplace(values)
    >>> expected = sympy.Matrix.vstack(w.cross(p[:3, 0]), w.cross(p[3:, 0]) + v.cross(p[:3, 0]))
    >>> max(map(abs, C + C.T)) < 1e-12, max(map(abs, C * V.xreplace(values) - expected)) < 1e-12
    (True, True)
    """
    A = sympy.Matrix(A)
    N = A.shape[0]
    v, w = sympy.Matrix(nu[:3]), sympy.Matrix(nu[3:6])
    p = program.assign_matrix(lambda r, c: f"PB{r}", A[:6, :] * sympy.Matrix(nu))
    p_v, p_w = p[:3, 0], p[3:, 0]
    H = sympy.zeros(N, N)
    for k in range(N):  # -S^T A: on the base rows of column k, V x* A[:6, k]
        f, n = A[:3, k], A[3:6, k]
        H[:6, k] = sympy.Matrix.vstack(w.cross(f), w.cross(n) + v.cross(f))
    for k, (e_v, e_w) in enumerate(_units()):  # p xbar*: column k is e_k x* p
        H[:6, k] += sympy.Matrix.vstack(e_w.cross(p_v), e_w.cross(p_w) + e_v.cross(p_v))
    return H / 2 + half_a_s(A, nu)


def half_a_s(A, nu):
    """``1/2 A S``: column k < 6 is ``1/2 A[:, :6] (V x e_k)``, the others zero."""
    A = sympy.Matrix(A)
    v, w = sympy.Matrix(nu[:3]), sympy.Matrix(nu[3:6])
    out = sympy.zeros(*A.shape)
    for k, (e_v, e_w) in enumerate(_units()):
        motion = sympy.Matrix.vstack(w.cross(e_v) + v.cross(e_w), w.cross(e_w))
        out[:, k] = A[:, :6] * motion / 2
    return out


def _units():
    """The six unit base speeds ``e_k`` as (linear, angular) parts."""
    zero, unit = sympy.zeros(3, 1), sympy.eye(3)
    return [(unit[:, k], zero) for k in range(3)] + [(zero, unit[:, k]) for k in range(3)]


def coriolis_matrix(robot, mass_matrix_program):
    """``C(q, nu)`` of a floating robot by (H): Christoffel over the joints plus the Hamel split.

    Parameters
    ----------
    robot : Robot
        Floating serial or tree robot.
    mass_matrix_program : Program
        Its (6+n) x (6+n) inertia matrix (outputs ``A<i><j>``, base speeds
        first; an entry left out is 0), from any engine.

    Returns
    -------
    Program
        Outputs ``C<i><j>`` for all i, j, row by row (``C<i>_<j>`` beyond 9
        speeds).  Inputs: those of ``mass_matrix_program``, then ``VX0 ..
        WZ0`` and the joint rates.
    """
    # The base has no coordinate A depends on: six placeholders that appear
    # nowhere give it zero partial derivatives.
    placeholders = sympy.symbols("XB1:7")
    nu = list(BASE_VELOCITY) + list(robot.qd)
    return christoffel(None, mass_matrix_program, q=list(placeholders) + list(robot.q), qd=nu,
                       extra=lambda A, target: hamel_terms(A, nu, target), absent_zero=True)
