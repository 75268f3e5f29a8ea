"""General 6R inverse geometric model (Raghavan and Roth; Manocha and Canny).

For a 6R chain ``T = X1 Z1 X2 Z2 ... X6 Z6`` (``X_j`` the fixed part of a
Khalil-Kleinfinger transform, ``Z_j = Rot(z, th_j) Trans(z, r_j)``), the line
of axis 6 (a point p on it and its direction l) does not depend on th6.
Written in the frame of axis 3 before its rotation::

    Z3 X4 Z4 X5 Z5 X6 (o, z)  =  (X1 Z1 X2 Z2 X3)^-1 (p, l)

the left side is linear in (s3, c3, 1) times the 9 power products of
(s4, c4, 1) x (s5, c5, 1); the right side a combination of the 9 products of
(s1, c1, 1) x (s2, c2, 1).  Raghavan and Roth add p.p, p.l, p x l and
(p.p) l - 2 (p.l) p, which keep those forms: 14 equations.  Eliminating the 8
non-constant products of th1, th2 leaves 6 equations in th3, th4, th5; with
half-angle tangents and one multiplication by x4 they form a 12 x 12 matrix
quadratic in x3 whose singular values are the roots of the degree-16
polynomial: a 24 x 24 generalised eigenvalue problem (Manocha and Canny),
numerically robust.  Each real root gives th4, th5 from the null vector,
th1, th2 from the linear system, th6 from the orientation; every candidate
is polished and checked with the direct geometric model.

Here the coefficients of the 14 equations are obtained numerically, for the
given geometry and pose, by fitting those exact forms on random samples
(the fit residual is checked: the forms are identities, so it is at round-off).
"""

import numpy
import scipy.linalg
import sympy

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.geometry import terminal_frame
from kanerobot.igm import numeric as num
from kanerobot.igm.solutions import Solutions
from kanerobot.robot import joints


def _number(expr, values):
    expr = sympy.sympify(expr)
    missing = sorted(str(s) for s in expr.free_symbols if str(s) not in values)
    if missing:
        raise ParameterError(f"no value for {', '.join(missing)}; give them in values")
    return float(expr.xreplace({s: sympy.Float(values[str(s)]) for s in expr.free_symbols}))


def _kk_parts(frame, values):
    """Numeric (X, r, c) of a KK revolute frame: X = Rot(z, gamma) Trans(z, b)
    Rot(x, alpha) Trans(x, d), the offset r and the constant c of
    ``theta = q + c``."""
    p = frame.placement
    g, b, a, d, r = (_number(e, values) for e in (p.gamma, p.b, p.alpha, p.d, p.r))
    cg, sg, ca, sa = numpy.cos(g), numpy.sin(g), numpy.cos(a), numpy.sin(a)
    Rz = numpy.array([[cg, -sg, 0, 0], [sg, cg, 0, 0], [0, 0, 1, b], [0, 0, 0, 1]])
    Rx = numpy.array([[1, 0, 0, d], [0, ca, -sa, 0], [0, sa, ca, 0], [0, 0, 0, 1]])
    return Rz @ Rx, r, _number(frame.offset, values)


def _Z(theta, r):
    c, s = numpy.cos(theta), numpy.sin(theta)
    return numpy.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, r], [0, 0, 0, 1]])


def _features(p, l):
    """The 14 Raghavan-Roth quantities of a point p and a direction l."""
    pp, pl = p @ p, p @ l
    return numpy.concatenate([p, l, [pp, pl], numpy.cross(p, l), pp * l - 2 * pl * p])


def _monomials(a, b):
    """The 9 products of (s_a, c_a, 1) x (s_b, c_b, 1), shape (..., 9)."""
    A = numpy.stack([numpy.sin(a), numpy.cos(a), numpy.ones_like(a)], -1)
    B = numpy.stack([numpy.sin(b), numpy.cos(b), numpy.ones_like(b)], -1)
    return (A[..., :, None] * B[..., None, :]).reshape(A.shape[:-1] + (9,))


class General6R:
    """The general 6R solver of one robot and geometry.

    Parameters
    ----------
    robot : Robot
        A serial chain whose path to the terminal frame has 6 revolute
        Khalil-Kleinfinger frames (fixed frames are not handled).
    values : dict str -> float
        Geometric parameters.
    seed : int
        Seed of the random samples and half-angle offsets.
    end : str, optional
        The end frame, default :func:`kanerobot.geometry.terminal_frame`.

    Notes
    -----
    The elimination assumes a general geometry: for special ones (a
    spherical wrist, parallel axes) the 12 x 12 matrix is singular at every
    root and solutions are lost; such robots have a closed form (Paul,
    Pieper), which ``method='auto'`` uses.

    Examples
    --------
    >>> import numpy, sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> rows = [(0.3, 0.5, 0.1), (1.1, 0.7, -0.2), (-0.6, 0.4, 0.3), (2.0, 0.9, 0.0), (0.8, 0.3, 0.2), (-1.4, 0.6, -0.1)]
    >>> robot = Robot.create("general", [Frame(str(j + 1), str(j), 0, 1, KKPlacement(
    ...     alpha=a, d=d, r=r, theta=sympy.Symbol(f"th{j + 1}"))) for j, (a, d, r) in enumerate(rows)])
    >>> solver = General6R(robot, {})
    >>> T = solver.model.pose([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    >>> sols = solver(T)
    >>> any(numpy.allclose(q, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]) for q in sols)
    True
    """

    def __init__(self, robot, values, seed=0, end=None):
        self.robot = robot
        end = terminal_frame(robot) if end is None else robot.frame(end).label
        frames = [robot.frame(label) for label in robot.root_path(end)]
        if len(frames) != 6 or not all(isinstance(f.joint, joints.Revolute) and f.is_kk for f in frames):
            raise KaneRobotError(
                f"the general 6R method needs 6 revolute Khalil-Kleinfinger frames from the base to the "
                f"terminal frame; robot {robot.name} has {len(frames)} frames there: use method='numeric'"
            )
        names = {str(k): float(v) for k, v in (values or {}).items()}
        self.X, self.r, self.offset = zip(*(_kk_parts(f, names) for f in frames))
        self.model = num.ChainModel(robot, end, values)
        self.columns = self.model.columns
        rng = numpy.random.default_rng(seed)
        # random offsets of the half-angle parameters: no root at infinity
        self.delta = rng.uniform(-numpy.pi, numpy.pi, 6)
        self._fit_left(rng)
        self._right_samples = rng.uniform(-numpy.pi, numpy.pi, (40, 2))

    # th = delta + phi; the fits are in phi
    def _left(self, phi3, phi4, phi5):
        X, r, d = self.X, self.r, self.delta
        M = _Z(d[2] + phi3, r[2]) @ X[3] @ _Z(d[3] + phi4, r[3]) @ X[4] @ _Z(d[4] + phi5, r[4]) @ X[5]
        return _features(M[:3, 3], M[:3, 2])

    def _fit_left(self, rng):
        """P(phi3): 14 x 9 matrices for s3, c3 and 1 (the left side is
        ``(s3 P_s + c3 P_c + P_1) m45``)."""
        samples = rng.uniform(-numpy.pi, numpy.pi, (80, 3))
        F = numpy.array([self._left(*s) for s in samples])
        m45 = _monomials(samples[:, 1], samples[:, 2])
        basis = numpy.concatenate([numpy.sin(samples[:, :1]) * m45, numpy.cos(samples[:, :1]) * m45, m45], 1)
        coef, *_ = numpy.linalg.lstsq(basis, F, rcond=None)
        residual = numpy.max(numpy.abs(basis @ coef - F))
        if residual > 1e-8 * max(1.0, numpy.max(numpy.abs(F))):
            raise KaneRobotError(f"general 6R: the left side does not have the Raghavan-Roth form (fit {residual:.2g})")
        self.P = [coef[k * 9:(k + 1) * 9].T for k in range(3)]  # P_s, P_c, P_1: (14, 9)

    def _fit_right(self, T):
        """Q: 14 x 9 with the right side = Q m12."""
        X, r, d = self.X, self.r, self.delta
        p = T @ numpy.array([0.0, 0.0, -r[5], 1.0])
        l = T[:3, 2]
        features = []
        for phi1, phi2 in self._right_samples:
            M = X[0] @ _Z(d[0] + phi1, r[0]) @ X[1] @ _Z(d[1] + phi2, r[1]) @ X[2]
            Mi = numpy.linalg.inv(M)
            features.append(_features((Mi @ p)[:3], Mi[:3, :3] @ l))
        F = numpy.array(features)
        basis = _monomials(self._right_samples[:, 0], self._right_samples[:, 1])
        Q, *_ = numpy.linalg.lstsq(basis, F, rcond=None)
        return Q.T

    def candidates(self, T):
        """Candidate joint vectors before the pose check (list of (6,))."""
        self.degenerate = False
        Q = self._fit_right(numpy.asarray(T, dtype=float))
        # left null space of the 8 non-constant columns of Q: 6 equations without th1, th2
        U, _, _ = numpy.linalg.svd(Q[:, :8])
        N = U[:, 8:].T  # (6, 14)
        q0 = Q[:, 8]
        Ps, Pc, P1 = (N @ P for P in self.P)
        P1 = P1.copy()
        P1[:, 8] -= N @ q0  # the constant product of th4, th5 carries the right side's 1
        A2, A1, A0 = (self._halfangle(S) for S in self._x3_quadratic(Ps, Pc, P1))
        # det(A2 x^2 + A1 x + A0) = 0 as a generalised eigenvalue problem
        n = A0.shape[0]
        L = numpy.block([[numpy.zeros((n, n)), numpy.eye(n)], [-A0, -A1]])
        R = numpy.block([[numpy.eye(n), numpy.zeros((n, n))], [numpy.zeros((n, n)), A2]])
        w = scipy.linalg.eig(L, R, right=False)
        finite = w[numpy.isfinite(w)]
        if len(finite) < 16:  # the degree-16 polynomial has lost its degree
            self.degenerate = True
        out = []
        for x3 in w[numpy.isfinite(w)]:
            if abs(x3.imag) > 1e-6 * max(1.0, abs(x3)):
                continue
            phi3 = 2 * numpy.arctan(x3.real)
            out += self._back_substitute(phi3, Ps, Pc, P1, Q, q0)
        return out

    @staticmethod
    def _x3_quadratic(Ps, Pc, P1):
        """(1 + x^2)(s P_s + c P_c + P_1) with s = 2x/(1+x^2), c = (1-x^2)/(1+x^2):
        coefficients of x^2, x, 1."""
        return P1 - Pc, 2 * Ps, P1 + Pc

    @staticmethod
    def _halfangle(S):
        """6 x 9 in (s4, c4, 1) x (s5, c5, 1) -> 12 x 12 in x4^i x5^j
        (i < 4, j < 3): half-angle tangents, then the rows again times x4."""
        # (s, c, 1) * (1 + x^2) as polynomials in x: coefficient of x^0, x^1, x^2
        conv = numpy.array([[0.0, 2.0, 0.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0]])
        rows = []
        for row in S:
            C = row.reshape(3, 3)  # [which of s4 c4 1, which of s5 c5 1]
            poly = conv.T @ C @ conv  # [power of x4, power of x5]
            rows.append(poly)
        out = numpy.zeros((12, 12))
        for k, poly in enumerate(rows):
            big = numpy.zeros((4, 3))
            big[:3] = poly
            out[k] = big.reshape(-1)
            shifted = numpy.zeros((4, 3))
            shifted[1:] = poly
            out[6 + k] = shifted.reshape(-1)
        return out

    def _back_substitute(self, phi3, Ps, Pc, P1, Q, q0):
        S = numpy.sin(phi3) * Ps + numpy.cos(phi3) * Pc + P1
        _, sv, Vt = numpy.linalg.svd(self._halfangle(S))
        if sv[-2] < 1e-8 * sv[0]:
            self.degenerate = True  # a null space of dimension > 1: special geometry
        v = Vt[-1].reshape(4, 3)  # x4^i x5^j
        if abs(v[0, 0]) < 1e-12 * numpy.max(numpy.abs(v)):
            return []
        x4, x5 = v[1, 0] / v[0, 0], v[0, 1] / v[0, 0]
        phi4, phi5 = 2 * numpy.arctan(x4), 2 * numpy.arctan(x5)
        # th1, th2 from the 14 equations, linear in their 8 products
        P = numpy.sin(phi3) * self.P[0] + numpy.cos(phi3) * self.P[1] + self.P[2]
        rhs = P @ _monomials(numpy.array(phi4), numpy.array(phi5)) - q0
        m, *_ = numpy.linalg.lstsq(Q[:, :8], rhs, rcond=None)
        # m = [s1 s2, s1 c2, s1, c1 s2, c1 c2, c1, s2, c2]
        phi1 = numpy.arctan2(m[2], m[5])
        phi2 = numpy.arctan2(m[6], m[7])
        d = self.delta
        return [numpy.array([d[0] + phi1, d[1] + phi2, d[2] + phi3, d[3] + phi4, d[4] + phi5, 0.0])]

    def __call__(self, T, tol=1e-10):
        """Distinct solutions of the pose T (list of numpy arrays (6,))."""
        T = numpy.asarray(T, dtype=float)
        found = []
        for th in self.candidates(T):
            M = numpy.eye(4)
            for k in range(5):
                M = M @ self.X[k] @ _Z(th[k], self.r[k])
            M = M @ self.X[5]
            R = numpy.linalg.solve(M, T)
            th[5] = numpy.arctan2(R[1, 0], R[0, 0])
            q = numpy.zeros(len(self.robot.joint_labels))
            q[self.columns] = th - numpy.array(self.offset)
            err = num.pose_distance(self.model.pose(q), T)
            if 1e-12 < err < 1e-3:
                q, err = num.damped_least_squares(self.model, T, q, tol=1e-14, max_iter=10)
            if err <= tol:
                found.append(q)
        return num.unique_solutions(found, self.model.revolute_mask())


def general_6r_inverse(robot, T, values, tol=1e-10, end=None):
    """Every solution of a general 6R robot for the pose T (:class:`General6R`).

    Returns
    -------
    kanerobot.igm.Solutions
        Its attribute ``degenerate`` is True when the geometry is special
        for the elimination (solutions may be missing).
    """
    solver = General6R(robot, values, end=end)
    sols = solver(T, tol=tol)
    out = Solutions(sols, [()] * len(sols), "general")
    out.degenerate = solver.degenerate
    return out
