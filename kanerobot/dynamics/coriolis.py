"""Coriolis matrix in Christoffel form, from the inertia matrix program.

With ``A(q)`` the inertia matrix, the Christoffel symbols of the first kind

    c_ijk = 1/2 (dA_ij/dq_k + dA_ik/dq_j - dA_jk/dq_i)

give the Coriolis matrix ``C_ij = sum_k c_ijk qd_k``, for which ``C qd`` is
the centrifugal and Coriolis torque vector (``H - Q`` of the inverse dynamic
model without friction) and ``A' - 2 C`` is skew-symmetric (passivity).

It is computed here from the program of ``A`` by forward-mode
differentiation (:mod:`kanerobot.symbolic.derivative`), never expanding it,
as a symmetric part ``CA = A'/2`` and a skew-symmetric part
``CN = (A' - 2C)/2`` (so ``A' - 2C`` is skew exactly, by construction).
The program's names: ``dA13_dth2`` the partial derivatives, ``HQP<k>`` the
half velocities, ``CA<i><j>``, ``CN<i><j>`` and the outputs ``C<i><j>``.

A floating robot's root is a free flyer whose six speeds ``VX0 .. WZ0`` come
before the joint rates; it adds its Boltzmann-Hamel terms
(:func:`hamel_terms`), so that ``C = C_Christoffel(A; joints) + 1/2 (-S^T A
+ A S + E (p xbar*) E^T)`` (H) keeps ``A' - 2C`` skew; :func:`half_a_s` is
the part Kane's ``getAC`` rule lacks.

Every joint whose speeds are not its coordinates' rates is treated alike
(:func:`hamel_blocks`, :func:`joint_hamel_terms`): a spherical joint (a
quaternion, the angular velocity in its frame) and a planar joint (the
velocity in its frame).  Its derivatives ``dA/dq_k`` are taken along its
tangent directions ``q (+) e_k``
(:func:`~kanerobot.dynamics.derivatives.tangent_directions`: ``dA13_dRX2``),
which do not commute, and (H) holds with ``S`` block-diagonal, a block
``ad_J(nu_J) = S_J^T ad_{S_J nu_J} S_J`` per such joint J (its motion
subspace ``S_J``, orthonormal columns spanning a subalgebra of se(3)), and
``E (p xbar*) E^T`` the same per block; the free flyer is the case ``S_J =
I``.  The result is pinocchio's ``computeCoriolisMatrix`` (tests/test_derivatives_multi_speed.py).

The derivation (the split into CA and CN, its cost, the root joint's Hamel
terms and equation (H), the ``getAC`` rule) is in ``docs/theory/coriolis.md``.
"""

import sympy

from kanerobot.dynamics.derivatives import tangent_directions
from kanerobot.dynamics.free_flyer import BASE_VELOCITY
from kanerobot.dynamics.root import root_joint_model
from kanerobot.errors import KaneRobotError
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import collection_paused
from kanerobot.symbolic.vectors import minus, product, summed

__all__ = ["coriolis_matrix", "half_a_s", "hamel_blocks", "hamel_terms", "joint_hamel_terms"]


@collection_paused()
def coriolis_matrix(robot, mass_matrix_program=None, *, q=None, qd=None, adot="partials", extra=None, absent_zero=False):
    """Coriolis matrix ``C(q, qd)`` of a robot as a program (Christoffel form).

    Parameters
    ----------
    robot : Robot or None
        Gives the joint variables ``robot.q`` and velocities ``robot.qd``
        (the ``QP`` symbols; a customised 0 makes a joint's velocity vanish).
        May be None when ``mass_matrix_program``, ``q`` and ``qd`` are given.
        A floating robot's root joint adds its six speeds ``VX0 .. WZ0``
        before the joints' and its Hamel terms (docs/theory/coriolis.md, (H));
        so does every spherical or planar joint (its speeds, its Hamel terms).
    mass_matrix_program : Program, optional
        The inertia matrix, outputs ``A<i><j>`` (1-based, ``A<i>_<j>`` beyond
        9 joints) for ``i <= j`` (or ``j <= i``: ``A`` is symmetric), the
        root's speeds first for a floating robot.  By default
        :func:`kanerobot.dynamics.composite.mass_matrix` of ``robot``; a
        floating robot's must be given (any engine's).
    q, qd : sequence of sympy.Symbol, optional
        Override ``robot.q`` and ``robot.qd`` (the joints'; a floating
        root's speeds still come first); each ``q`` is a coordinate whose
        rate is its speed.
    adot : {"partials", "time"}, optional
        How the symmetric part ``A'/2`` is formed: from the partial
        derivatives (default, cheaper) or by one time-derivative pass
        (:func:`~kanerobot.symbolic.derivative.time_derivative`'s pass).
    extra : callable, optional
        ``extra(A, target)`` is given the (n, n) inertia matrix in the
        symbols of the result program ``target`` and returns an (n, n)
        matrix added to ``C``; it may assign variables in ``target``.
    absent_zero : bool, optional
        Take an entry of ``A`` the program does not give as 0 (programs
        that leave out structural zeros) rather than raise.  Always so for
        a floating robot, whose Newton-Euler ``A`` leaves them out.

    Returns
    -------
    Program
        Inputs: those of ``mass_matrix_program`` then the velocities.
        Outputs ``C<i><j>`` for all i, j, row by row (``C<i>_<j>`` beyond
        9 joints).  Intermediate variables: the lines of ``A`` needed, the
        partial derivatives ``d<var>_d<q_j>`` of its variables (named after
        the variable and the joint variable: ``dA13_dth2``, ``dAJ332_dth3``),
        the half velocities ``H<QP_k>``, ``CA<i><j>`` (``A'/2``, i < j) and
        ``CN<i><j>`` (``(A' - 2C)/2``, i < j); with ``adot="time"`` also the
        time derivatives ``d<var>_dt``; for a floating root, its momentum
        ``PB<r>`` (:func:`hamel_terms`).  Derivatives that are identically
        zero have no line.

    Raises
    ------
    ValueError
        When an entry of ``A`` is missing or ``q`` and ``qd`` differ in length.
    KaneRobotError
        A floating robot without ``mass_matrix_program``.

    Examples
    --------
    A planar 2R arm, ``A11 = a + 2 b C2``, ``A12 = c + b C2``, ``A22 = c``
    (``b = m2 l1 lc2``):

    >>> from kanerobot.symbolic import Program
    >>> th1, th2, a, b, c, QP1, QP2 = sympy.symbols("th1 th2 a b c QP1 QP2")
    >>> A = Program(inputs=[th1, th2, a, b, c])
    >>> C2, S2 = A.sin_cos(th2, "2")
    >>> A.set_output("A11", A.assign("A11", a + 2*b*C2))
    'A11'
    >>> A.set_output("A12", A.assign("A12", c + b*C2))
    'A12'
    >>> A.set_output("A22", c)
    'A22'
    >>> C = coriolis_matrix(None, A, q=[th1, th2], qd=[QP1, QP2])
    >>> print(C)
    S2 = sin(th2)
    HQP1 = QP1/2
    HQP2 = QP2/2
    dA11_dth2 = -2*S2*b
    dA12_dth2 = -S2*b
    CA12 = HQP2*dA12_dth2
    CN12 = -HQP1*dA11_dth2 - HQP2*dA12_dth2
    C11 = HQP2*dA11_dth2
    C12 = CA12 - CN12
    C21 = CA12 + CN12
    C22 = 0
    >>> C.op_count()
    {'add': 3, 'mul': 9, 'fn': 1}
    >>> sympy.factor(C.substitute_back()["C12"])
    -b*(QP1 + QP2)*sin(th2)
    """
    labels, directions, qd = _directions(robot, q, qd)
    free_flyer = robot is not None and robot.floating
    absent_zero = absent_zero or free_flyer  # Newton-Euler's A of a floating robot leaves out its structural zeros
    n = len(qd)
    if adot not in ("partials", "time"):
        raise ValueError(f"adot must be 'partials' or 'time', got {adot!r}")
    if mass_matrix_program is None:
        if free_flyer:
            raise KaneRobotError(
                f"the Coriolis matrix of {robot.name}: a floating robot's inertia matrix program must be given "
                f"(kanerobot.derive(robot).program('mass_matrix'), or kanerobot.dynamics.lagrange.coriolis_matrix(robot))"
            )
        from kanerobot.dynamics.composite import mass_matrix

        mass_matrix_program = mass_matrix(robot)

    names = {prefix: matrix_entry_names(prefix, (n, n)) for prefix in ("A", "C", "CA", "CN")}

    def matrix_name(prefix, i, j):
        return names[prefix][i - 1][j - 1]

    A = _inertia_entries(mass_matrix_program.outputs, n, matrix_name, absent_zero)

    fm = ForwardMode(mass_matrix_program, reserved=[name for row in names["C"] for name in row])
    target = fm.target
    directions = _add_directions(fm, labels, directions, qd, adot)

    derivatives = {}

    def derivative(i, j, key):
        """dA_ij along a direction, named when it is not a trivial value (each once);
        0 along a direction A does not depend on."""
        if key != "t" and not directions[key[1]]:
            return sympy.S.Zero
        if (i, j, key) not in derivatives:
            name, expr = A[i, j]
            d = fm.derivative(expr, key)
            derivatives[i, j, key] = derivatives[j, i, key] = d if d == 0 else target.assign(fm.name_for(name, key), d)
        return derivatives[i, j, key]

    half = _half_velocities(target, qd)
    sym = _symmetric_part(target, n, half, derivative, matrix_name, adot)
    skew = _skew_part(target, n, half, derivative, matrix_name)
    plus = sympy.zeros(n, n)
    blocks = hamel_blocks(robot) if robot is not None else []
    if blocks or extra is not None:
        inertia = sympy.Matrix(n, n, lambda i, j: fm.value(A[i + 1, j + 1][1]))
        if blocks:
            plus += joint_hamel_terms(inertia, qd, blocks, target)
        if extra is not None:
            plus += extra(inertia, target)
    _set_outputs(target, n, sym, skew, plus, matrix_name)
    target.prune()
    return target


# ------------------------------------------------------ the free-flyer root
def hamel_terms(A, nu, program):
    """The free-flyer root's contribution ``1/2 (-S^T A + A S + E (p xbar*) E^T)`` of (H).

    Parameters
    ----------
    A : sympy.Matrix, shape (6+n, 6+n)
        The inertia matrix, entries in ``program``'s symbols.
    nu : sequence, length 6+n
        ``(VX0 .. WZ0, QP ...)``: the root's speeds first.
    program : Program
        Where the root's momentum ``p = A[:6] nu`` is assigned (``PB1 .. PB6``).

    Returns
    -------
    sympy.Matrix, shape (6+n, 6+n)

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
    return joint_hamel_terms(A, nu, [_ROOT], program)


def half_a_s(A, nu, blocks=None):
    """``1/2 A S`` of (H): column k < 6 is ``1/2 A[:, :6] (V x e_k)``, the others zero.

    What the ``getAC`` rule lacks with a free-flyer root (docs/theory/coriolis.md);
    :meth:`kanerobot.dynamics.kane.KaneSystem.coriolis_matrix` adds it.
    ``blocks`` (:func:`hamel_blocks`) gives every joint's part, a block
    ``1/2 A[:, J] S_J^T (V_J x S_J e_k)`` per joint J; by default the root's.
    """
    A = sympy.Matrix(A)
    out = sympy.zeros(*A.shape)
    for start, S, _ in [_ROOT] if blocks is None else blocks:
        J = slice(start, start + S.cols)
        V = S * sympy.Matrix(nu[J])
        for k in range(S.cols):
            out[:, start + k] = A[:, J] * (S.T * _motion_cross(V, S[:, k])) / 2
    return out


def joint_hamel_terms(A, nu, blocks, program):
    """Every quasi-velocity joint's ``1/2 (-S^T A + A S + E (p xbar*) E^T)`` of (H).

    Parameters
    ----------
    A : sympy.Matrix, shape (N, N)
        The inertia matrix, entries in ``program``'s symbols.
    nu : sequence, length N
        The speeds.
    blocks : list of tuple
        ``(start, S_J, name)`` per joint J whose speeds do not commute
        (:func:`hamel_blocks`): its first speed's index, its motion subspace
        (6 x nv_J, orthonormal columns spanning a subalgebra of se(3), so
        that ``ad_J(u) = S_J^T ad_{S_J u} S_J``) and the names of its
        momentum ``p_J = A[J, :] nu`` (``name.format(r=...)``, 1-based).
    program : Program
        Where each ``p_J`` is assigned.

    Returns
    -------
    sympy.Matrix, shape (N, N)
        On joint J's rows, ``S_J^T (V_J x* S_J A[J, k])`` column by column,
        plus ``S_J^T (S_J e_k x* S_J p_J)`` on its own columns, halved, plus
        :func:`half_a_s`; the free flyer's ``S = I`` gives :func:`hamel_terms`.
    """
    A = sympy.Matrix(A)
    N = A.shape[0]
    H = sympy.zeros(N, N)
    for start, S, name in blocks:
        J = slice(start, start + S.cols)
        V = S * sympy.Matrix(nu[J])
        p = S * program.assign_matrix(lambda r, c, name=name: name.format(r=r), A[J, :] * sympy.Matrix(nu))
        for k in range(N):  # -S^T A: on the joint's rows of column k, V x* A[J, k]
            H[J, k] = S.T * _force_cross(V, S * A[J, k])
        for k in range(S.cols):  # p xbar*: column k is e_k x* p
            H[J, start + k] += S.T * _force_cross(S[:, k], p)
    return H / 2 + half_a_s(A, nu, blocks)


def hamel_blocks(robot):
    """``[(start, S, name)]`` of :func:`joint_hamel_terms`: the root joint (a free flyer, momentum ``PB<r>``)
    and every joint whose speeds do not commute (a spherical or planar joint, ``PB<r>_<stem>``).

    Examples
    --------
    >>> import kanerobot as kr
    >>> [(start, S.shape, name) for start, S, name in hamel_blocks(kr.load(kr.frames_path("satellite")))]
    [(0, (6, 6), 'PB{r}')]
    >>> hamel_blocks(kr.load(kr.frames_path("rx90")))
    []
    """
    joints = [(root_joint_model(robot).motion_subspace(None), "PB{r}")]
    for label in robot.joint_labels:
        frame = robot.frame(label)
        joints.append((frame.motion_subspace(), "PB{r}_" + robot.stems[label]))
    blocks, start = [], 0
    for S, name in joints:
        columns = [S[:, k] for k in range(S.cols)]
        if any(_motion_cross(a, b) != sympy.zeros(6, 1) for a in columns for b in columns):
            blocks.append((start, S, name))
        start += S.cols
    return blocks


def _motion_cross(V, U):
    """``V x U`` of two motions (linear part first): ``[w x u_v + v x u_w; w x u_w]``."""
    v, w, u_v, u_w = V[:3, 0], V[3:, 0], U[:3, 0], U[3:, 0]
    return sympy.Matrix.vstack(w.cross(u_v) + v.cross(u_w), w.cross(u_w))


def _force_cross(V, F):
    """``V x* F`` of a motion and a force (linear part first): ``[w x f; w x n + v x f]``."""
    v, w, f, n = V[:3, 0], V[3:, 0], F[:3, 0], F[3:, 0]
    return sympy.Matrix.vstack(w.cross(f), w.cross(n) + v.cross(f))


#: The free-flyer root's block of :func:`joint_hamel_terms`.
_ROOT = (0, sympy.eye(6), "PB{r}")


# ------------------------------------------------------------------ helpers
def _directions(robot, q, qd):
    """``(labels, seeds, speeds)``: one configuration direction per speed, the root's first.

    The robot's tangent directions (:func:`~kanerobot.dynamics.derivatives.tangent_directions`:
    the partial derivative for a joint of one speed, the joint model's
    tangent for a quaternion or a planar joint), or the plain coordinates
    ``q`` when given (after the root's, on a floating robot).
    """
    if robot is None and (q is None or qd is None):
        raise ValueError("give a robot, or q and qd")
    tangent = [] if robot is None else tangent_directions(robot)
    root = tangent[:root_joint_model(robot).nv] if robot is not None else []
    joints = tangent[len(root):] if q is None else [(str(x), {x: 1}) for x in q]
    qd = [sympy.sympify(v) for v in (robot.qd if qd is None else qd)]
    if len(joints) != len(qd):
        raise ValueError(f"q has {len(joints) if q is None else len(q)} entries and qd {len(qd)}")
    speeds = (list(BASE_VELOCITY) if robot is not None and robot.floating else []) + qd
    directions = root + joints
    return [label for label, _ in directions], [seeds for _, seeds in directions], speeds


def _add_directions(fm, labels, directions, qd, adot):
    """Declare the passes of ``fm``: one per direction whose coordinates A takes (none for a
    free flyer's: A is in frame 0), and the time derivative for ``adot="time"``; the seeds kept."""
    inputs = set(fm.source.inputs)
    directions = [{x: seed for x, seed in seeds.items() if x in inputs} for seeds in directions]
    for k, (label, seeds) in enumerate(zip(labels, directions)):
        if seeds:
            fm.add_direction(("q", k), seeds, label=label)
    if adot == "time":
        rates: dict[sympy.Symbol, sympy.Expr] = {}
        for seeds, v in zip(directions, qd):
            for x, seed in seeds.items():
                rates[x] = rates.get(x, 0) + seed * v
        fm.add_direction("t", rates, label="t")
    return directions


def _inertia_entries(outputs, n, matrix_name, absent_zero):
    """Map (i, j) (both orders) to the (name, value) of the output giving A_ij."""
    A = {}
    missing = []
    for i in range(1, n + 1):
        for j in range(i, n + 1):
            for key in (matrix_name("A", i, j), matrix_name("A", j, i)):
                if key in outputs:
                    A[i, j] = A[j, i] = (key, outputs[key])
                    break
            else:
                if absent_zero:
                    A[i, j] = A[j, i] = (matrix_name("A", i, j), sympy.S.Zero)
                else:
                    missing.append(matrix_name("A", i, j))
    if missing:
        raise ValueError(f"the inertia matrix program has no output {', '.join(missing)}")
    return A


def _half_velocities(target, qd):
    """Assign ``H<QP_k> = qd_k / 2`` for each non-zero velocity (zeros stay 0)."""
    # Half velocities carry the 1/2 of the Christoffel symbols: n products
    # instead of one per entry of C.
    half = []
    for k, v in enumerate(qd):
        label = v.name if isinstance(v, sympy.Symbol) else f"QP{k + 1}"
        half.append(target.assign(f"H{label}", v / 2) if v != 0 else v)
    return half


def _symmetric_part(target, n, half, derivative, matrix_name, adot):
    """The upper triangle of ``A'/2``, named ``CA<i><j>`` off the diagonal."""
    sym = {}
    for i in range(1, n + 1):
        for j in range(i, n + 1):
            if adot == "time":
                value = derivative(i, j, "t") / 2
            else:
                value = summed([product(half[k], derivative(i, j, ("q", k))) for k in range(n) if half[k] != 0])
            # The diagonal is an output as it stands (C_ii = A'_ii / 2).
            sym[i, j] = value if i == j else target.assign(matrix_name("CA", i, j), value)
    return sym


def _skew_part(target, n, half, derivative, matrix_name):
    """The strict upper triangle of ``(A' - 2C)/2``, named ``CN<i><j>``."""
    skew = {}
    for i in range(1, n + 1):
        for j in range(i + 1, n + 1):
            terms = []
            for k in range(1, n + 1):
                if half[k - 1] == 0:
                    continue
                diff = minus(derivative(j, k, ("q", i - 1)), derivative(i, k, ("q", j - 1)))
                if diff != 0:
                    terms.append(product(half[k - 1], diff))
            skew[i, j] = target.assign(matrix_name("CN", i, j), summed(terms))
    return skew


def _set_outputs(target, n, sym, skew, plus, matrix_name):
    """Output ``C<i><j>`` row by row: ``CA - CN`` above the diagonal, ``CA + CN`` (transposed) below, plus ``plus``."""
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            if i == j:
                value = sym[i, i]
            elif i < j:
                value = sym[i, j] - skew[i, j]
            else:
                value = sym[j, i] + skew[j, i]
            target.set_output(matrix_name("C", i, j), value + plus[i - 1, j - 1])
