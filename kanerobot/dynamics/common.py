"""Pieces shared by the dynamic algorithms.

Newton-Euler (:mod:`~kanerobot.dynamics.newton_euler`), composite links
(:mod:`~kanerobot.dynamics.composite`) and the recursive direct model
(:mod:`~kanerobot.dynamics.direct`) all need the same steps around their
recursions; each is written once here:

- :func:`check_structure`: the robots the recursive algorithms handle;
- :func:`program_inputs`: the input symbols of a dynamic program, declared
  before any assignment so that no intermediate variable takes their names;
- :func:`angle_labels`, :func:`frame_placement`, :func:`frame_placements`:
  each frame's ``iA_j`` and ``iP_j`` with its cosines and sines named
  (``C2``, ``S2``, ``C4l``); :class:`BasePlacements`: each frame's ``0A_j``
  and ``0P_j``, the products along the path named (the forward pass of the
  numeric kinematics and of the centroidal quantities);
- :func:`link_inertia`, :func:`link_parameter`: a link's parameters, zero
  for a frame that carries no link;
- :class:`ModelOptions`: what a model's program includes;
- :func:`motion_parts`: the two halves ``(S_lin, S_ang)`` of a joint's motion subspace;
- :func:`subtree_wrench`: the wrench of a subtree at its origin from its
  link's own and its successors' (SYMORO+ eqs 17 and 19), shared by
  Newton-Euler's backward recursion and Kane's sums S1-S2;
- :func:`assign_symmetric`, :func:`rotate_inertia`: named symmetric
  matrices, and an inertia rotated to the antecedent frame at the least
  cost.
"""

import itertools
import re
from dataclasses import dataclass

import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, DYNAMIC_NAMES
from kanerobot.robot.joints import Revolute
from kanerobot.symbolic.program import count_ops, is_trivial
from kanerobot.symbolic.vectors import cross, plus, product, summed, times

__all__ = [
    "MODEL_INPUTS",
    "BasePlacements",
    "angle_labels",
    "assign_symmetric",
    "check_structure",
    "frame_placement",
    "frame_placements",
    "joint_torques",
    "link_inertia",
    "link_parameter",
    "ModelOptions",
    "motion_parts",
    "program_inputs",
    "rotate_inertia",
    "subtree_wrench",
]

#: The state groups of each dynamic model's numeric function, in order (an external wrench and the parameters come
#: after them): what its C, CasADi and JAX functions of one state take.
MODEL_INPUTS = {
    "inverse_dynamics": ("q", "qd", "qdd"),
    "mass_matrix": ("q",),
    "h": ("q", "qd"),
    "coriolis_matrix": ("q", "qd"),
    "gravity": ("q",),
    "direct_dynamics": ("q", "qd", "tau"),
    "base_acceleration": ("q", "qd", "qdd"),
    "inverse_dynamics_derivatives": ("q", "qd", "qdd"),
    "direct_dynamics_derivatives": ("q", "qd", "tau"),
}

#: Where each structure the tree algorithms do not handle is modelled.
_UNSUPPORTED = {
    "loops": "closed-loop dynamics (GAM = G^T GAM_tr, kanerobot.dynamics.closed_loop)",
    "floating": "the floating-base algorithm (kanerobot.dynamics.floating)",
    "wheeled": "the wheel constraints (kanerobot.dynamics.wheeled)",
    "flexible": "the three-step flexible-joint algorithm (kanerobot.dynamics.flexible)",
}


def check_structure(robot, what, flexible=True):
    """Raise unless ``robot`` is a serial or tree robot whose base motion is known.

    Parameters
    ----------
    robot : Robot
    what : str
        The model asked for, for the message (``"the inertia matrix"``).
    flexible : bool, optional
        Whether the model accepts flexible joints (``eta = 1``).

    Raises
    ------
    KaneRobotError
        For closed loops, a floating base, a wheeled base and, unless
        ``flexible``, flexible joints; the message says which and what it
        would need.

    Examples
    --------
    >>> import kanerobot as kr
    >>> check_structure(kr.load(kr.frames_path("planar2")), "the inertia matrix")
    >>> check_structure(kr.load(kr.frames_path("sr400")), "the inertia matrix")
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: the inertia matrix of SR400: SR400 has closed loops (cut at joint 9), which need closed-loop dynamics (GAM = G^T GAM_tr, kanerobot.dynamics.closed_loop): kr.derive(robot) gives its models
    """
    flexible_joints = robot.flexible_joints
    if robot.loops:
        kind, need = f"closed loops (cut at joint {', '.join(robot.cut_joints)})", "loops"
    elif robot.floating:
        kind, need = "a floating base", "floating"
    elif robot.wheeled:
        kind, need = "a wheeled mobile base", "wheeled"
    elif flexible_joints and not flexible:
        kind, need = f"flexible joints ({', '.join(flexible_joints)})", "flexible"
    else:
        return
    verb = "need" if need in ("loops", "flexible") else "needs"
    hint = ": kr.derive(robot) gives its models"
    raise KaneRobotError(f"{what} of {robot.name}: {robot.name} has {kind}, which {verb} {_UNSUPPORTED[need]}{hint}")


def program_inputs(robot, state, names=DYNAMIC_NAMES, base=False):
    """Input symbols of a dynamic program, in argument order.

    Parameters
    ----------
    robot : Robot
    state : sequence of sequences of sympy.Expr
        The state groups in order (``[robot.q, robot.qd, GAM]``); entries
        that are not symbols (a customised 0) are left out.
    names : sequence of str, optional
        The dynamic parameters of every link to include (``"XX"`` ..
        ``"M"``, ``"IA"``, ...); default all of
        :data:`~kanerobot.robot.description.DYNAMIC_NAMES`.
    base : bool or sequence of str, optional
        Also the symbols of the base motion and gravity (``W0, WP0, V0,
        VP0, G``); a sequence names which of them (``("G",)`` for a
        floating base, whose motion is the state).

    Returns
    -------
    list of sympy.Symbol
        The state symbols, then every parameter symbol (geometric, of the
        links' ``names``, of the base) sorted by name, each once.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program_inputs(arm, [arm.q], names=("M", "ZZ"))
    [th1, th2, L1, M1, M2, ZZ1, ZZ2]
    """
    out, seen = [], set()
    for group in state:
        for s in group:
            if isinstance(s, sympy.Symbol) and s not in seen:
                seen.add(s)
                out.append(s)
    parameters = {sympy.Symbol(name) for name in robot.geometric_parameters}
    for label in robot.links:
        for name in names:
            parameters |= sympy.sympify(robot.dynamics[label][name]).free_symbols
    keys = ("W0", "WP0", "V0", "VP0", "G") if base is True else (base or ())
    for key in keys:
        for entry in getattr(robot.base, key):
            parameters |= sympy.sympify(entry).free_symbols
    return out + sorted(parameters - set(out), key=str)


def angle_labels(robot):
    """The label of the C/S names of each angle of ``robot``'s transforms.

    Parameters
    ----------
    robot : Robot

    Returns
    -------
    callable
        ``label(angle) -> str``: the frame's stem (``robot.stems``) for a revolute joint's
        variable, also shifted by a constant or negated (``4l`` for Krang's
        ``q_1l`` of frame 4l, giving ``C4l``), else the name of a symbol
        (``alpha3``), else the letters and digits of the expression.  Pass
        it as the ``labels`` of :meth:`~kanerobot.symbolic.Program.replace_sin_cos`.

    Examples
    --------
    >>> import sympy
    >>> import kanerobot as kr
    >>> label = angle_labels(kr.load(kr.frames_path("krang")))
    >>> q = sympy.Symbol("q_1l")
    >>> label(q), label(q + sympy.pi / 2), label(sympy.Symbol("alpha3"))
    ('4l', '4l', 'alpha3')
    """
    joint_of = {f.q: f.stem for f in robot.frames if isinstance(f.joint, Revolute)}

    def label(angle):
        variable = angle
        if angle.free_symbols:
            variable = angle.as_independent(*angle.free_symbols, as_Add=True)[1]
        for candidate in (variable, -variable):
            if candidate in joint_of:
                return joint_of[candidate]
        if isinstance(variable, sympy.Symbol):
            return variable.name
        return re.sub(r"[^A-Za-z0-9]", "", str(angle)) or "a"

    return label


def frame_placement(program, frame, labels, rotation="RA", translation="PA"):
    """``(iA_j, iP_j)`` of ``frame`` on its antecedent, its cosines and sines named.

    Parameters
    ----------
    program : Program
        Receives ``C<label>``, ``S<label>`` and the entries that are not
        trivial (a general frame's constant rotation, a KK frame with
        gamma != 0, a prismatic joint's ``-r*S(alpha)``), named
        ``{rotation}{r}{c}{j}`` and ``{translation}{r}{j}``, since the
        recursions read them many times.
    frame : Frame
    labels : callable
        Label of each angle, from :func:`angle_labels`.
    rotation, translation : str, optional
        Prefixes of the entry names.

    Returns
    -------
    tuple of sympy.Matrix
        ``iA_j`` (3x3) and ``iP_j`` (3x1), of program symbols and trivial values.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.symbolic import Program
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = Program(inputs=arm.q)
    >>> frame_placement(program, arm.frame("2"), angle_labels(arm))
    (Matrix([
    [C2, -S2, 0],
    [S2,  C2, 0],
    [ 0,   0, 1]]), Matrix([
    [L1],
    [ 0],
    [ 0]]))
    """
    T = program.replace_sin_cos(sympy.Matrix(frame.transform()), labels=labels)
    j = frame.stem
    iA_j = program.assign_matrix(lambda r, c: f"{rotation}{r}{c}{j}", T[:3, :3])
    iP_j = program.assign_matrix(lambda r, c: f"{translation}{r}{j}", T[:3, 3])
    return iA_j, iP_j


def frame_placements(robot, program):
    """:func:`frame_placement` of every frame of ``robot``, in frame order.

    Returns
    -------
    dict
        ``label -> (iA_j, iP_j)``, 3x3 and 3x1 matrices, entries named
        ``RA{r}{c}{j}`` and ``PA{r}{j}`` when not trivial.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.symbolic import Program
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> placements = frame_placements(arm, Program(inputs=arm.q))
    >>> list(placements), placements["1"][1].T
    (['1', '2'], Matrix([[0, 0, 0]]))
    """
    labels = angle_labels(robot)
    return {frame.label: frame_placement(program, frame, labels) for frame in robot.frames}


class BasePlacements:
    """``(0A_j, 0P_j)`` of the frames of one program, each product named once (the forward pass).

    ``0A_j = 0A_a(j) a(j)A_j`` and ``0P_j = 0A_a(j) a(j)P_j + 0P_a(j)``, the
    entries named ``TA{r}{c}_{j}`` and ``TP{r}_{j}`` (a frame on the base
    is its own placement: nothing to multiply); ``a(j)A_j``, ``a(j)P_j`` are
    :func:`frame_placement`'s, so a program that also holds
    :func:`frame_placements` shares them.  Built on demand: only the frames
    asked for, and their antecedents, are placed.

    Parameters
    ----------
    robot : Robot
    program : Program

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.symbolic import Program
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = Program(inputs=arm.q, trig=True)
    >>> A, P = BasePlacements(arm, program)("2")
    >>> A[0, :], P.T
    (Matrix([[C12, -S12, 0]]), Matrix([[TP1_2, TP2_2, 0]]))
    """

    def __init__(self, robot, program):
        self.robot = robot
        self.program = program
        self.labels = angle_labels(robot)
        self.placements = {BASE: (sympy.eye(3), sympy.zeros(3, 1))}

    def __call__(self, label):
        """``(0A_label, 0P_label)`` as matrices of program symbols and trivial values."""
        if label not in self.placements:
            frame = self.robot.frame(label)
            A_a, P_a = self(frame.antecedent)
            A, P = frame_placement(self.program, frame, self.labels)
            if frame.antecedent == BASE:  # 0T_k = a(k)T_k: nothing to multiply
                self.placements[label] = (A, P)
            else:
                k = frame.stem
                A_k = self.program.assign_matrix(lambda r, c: f"TA{r}{c}_{k}", A_a * A)
                P_k = self.program.assign_matrix(lambda r, c: f"TP{r}_{k}", A_a * P + P_a)
                self.placements[label] = (A_k, P_k)
        return self.placements[label]


def link_inertia(robot, label):
    """Inertial parameters of link ``label`` in its own frame.

    Returns
    -------
    tuple
        ``(jJ_j, jMS_j, M_j)``: the 3x3 inertia about the frame origin
        (``XX XY XZ; XY YY YZ; XZ YZ ZZ``), the 3x1 first moments ``[MX MY
        MZ]`` and the mass; zeros for a frame that carries no link.

    Examples
    --------
    >>> import kanerobot as kr
    >>> J, MS, M = link_inertia(kr.load(kr.frames_path("planar2")), "2")
    >>> J[2, 2], MS.T, M
    (ZZ2, Matrix([[MX2, MY2, MZ2]]), M2)
    """
    if label not in robot.dynamics:
        return sympy.zeros(3, 3), sympy.zeros(3, 1), sympy.S.Zero
    p = robot.dynamics[label]
    J = sympy.Matrix(
        [
            [p["XX"], p["XY"], p["XZ"]],
            [p["XY"], p["YY"], p["YZ"]],
            [p["XZ"], p["YZ"], p["ZZ"]],
        ]
    )
    return J, sympy.Matrix([p["MX"], p["MY"], p["MZ"]]), p["M"]


def link_parameter(robot, label, name):
    """Dynamic parameter ``name`` (``"IA"``, ``"FV"``, ``"FX"``, ...) of link
    ``label``, 0 for a frame that carries no link.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> link_parameter(arm, "2", "IA"), link_parameter(arm, "2", "FX")
    (IA2, 0)
    """
    return robot.dynamics[label][name] if label in robot.dynamics else sympy.S.Zero


@dataclass(frozen=True)
class ModelOptions:
    """What a dynamic model's program includes (SYMORO+'s customisations, section 7).

    ``qd``, ``qdd``: the speeds and accelerations (False: set to zero);
    ``gravity``; ``friction`` (``FV qd + FS sign(qd)``); ``rotor`` (``IA qdd``);
    ``wrench`` (the links' ``FX .. CZ`` on the environment); ``trig`` (the
    program's trigonometric rules).

    Examples
    --------
    >>> ModelOptions.at_rest()
    ModelOptions(qd=False, qdd=False, gravity=True, friction=False, rotor=False, wrench=False, trig=True)
    """

    qd: bool = True
    qdd: bool = True
    gravity: bool = True
    friction: bool = True
    rotor: bool = True
    wrench: bool = True
    trig: bool = True

    @classmethod
    def at_rest(cls, trig=True):
        """The robot at rest under gravity alone: the options of the gravity torques."""
        return cls(qd=False, qdd=False, friction=False, rotor=False, wrench=False, trig=trig)


def motion_parts(frame):
    """``(S_lin, S_ang)``: the linear and angular halves of the joint's motion subspace, in frame j.

    Returns
    -------
    tuple of sympy.Matrix
        Two 3 x nv blocks (:meth:`~kanerobot.robot.joints.JointModel.subspace`):
        for one speed, the unit axis ``e_j`` in the first for a prismatic
        joint, in the second for a revolute one (Khalil's ``sigma_j e_j``,
        ``sigmabar_j e_j``); 3 x 0 for a fixed frame.

    Examples
    --------
    >>> import kanerobot as kr
    >>> linear, angular = motion_parts(kr.load(kr.frames_path("planar2")).frame("1"))
    >>> linear.T, angular.T
    (Matrix([[0, 0, 0]]), Matrix([[0, 0, 1]]))
    """
    return frame.joint.subspace(frame.axis)


def subtree_wrench(force, moment, successors):
    """``(f_j, m_j)``: the wrench at O_j of link j and everything it carries (SYMORO+ eqs 17, 19).

    ::

        f_j = force + sum_k jf_k                                    (17)
        m_j = moment + sum_k (jA_k km_k + jP_k x jf_k)              (19)

    with ``jf_k = jA_k kf_k`` the successor's force already in frame j
    (eq. 18).  Newton-Euler's backward recursion gives it link j's inertia
    wrench and the environment's; Kane's sums S1-S2 the same with the weight
    as an active force (docs/theory/kane.md): one recursion.

    Parameters
    ----------
    force, moment : sequence of 3 sympy.Expr
        Link j's own wrench at O_j, in frame j.
    successors : iterable of tuple
        ``(jA_k, jP_k, jf_k, km_k)`` per successor k: 3x3 (indexed
        ``[r, c]``), then 3-vectors.

    Returns
    -------
    tuple of list
        ``f_j`` and ``m_j``, 3 expressions each.

    Examples
    --------
    >>> import sympy
    >>> f, L = sympy.symbols("f L")
    >>> subtree_wrench([0, 0, 0], [0, 0, 0], [(sympy.eye(3), [L, 0, 0], [0, f, 0], [0, 0, 0])])
    ([0, f, 0], [0, 0, L*f])
    """
    successors = list(successors)
    f = plus(force, *[f_k for _, _, f_k, _ in successors])                                      # (17)
    m = plus(moment, *[plus(times(A_k, m_k), cross(P_k, f_k)) for A_k, P_k, f_k, m_k in successors])  # (19)
    return f, m


def assign_symmetric(program, names, M):
    """Assign the upper triangle of the symmetric matrix ``M`` and mirror it.

    Parameters
    ----------
    program : Program
    names : callable
        ``names(r, c)`` for 1-based ``r <= c``.
    M : sympy.Matrix, shape (n, n)

    Returns
    -------
    sympy.Matrix, shape (n, n)
        Symmetric, of program symbols and trivial values.

    Examples
    --------
    >>> from kanerobot.symbolic import Program
    >>> a, b = sympy.symbols("a b")
    >>> assign_symmetric(Program(inputs=[a, b]), lambda r, c: f"K{r}{c}", sympy.Matrix([[a * b, a + b], [a + b, 2]]))
    Matrix([
    [K11, K12],
    [K12,   2]])
    """
    n = M.rows
    out = sympy.zeros(n, n)
    for r in range(n):
        for c in range(r, n):
            out[r, c] = out[c, r] = program.assign(names(r + 1, c + 1), M[r, c])
    return out


def rotate_inertia(program, label, iA_j, J, prefix="A"):
    """``iA_j J jA_i``: a symmetric 3x3 ``J`` given in frame j, expressed in frame i.

    Computed in two named steps as SYMORO does: entries of ``AJ = iA_j J``
    (``{prefix}J{r}{c}{label}``), then the upper triangle of ``AJA = AJ
    jA_i`` (``{prefix}JA{r}{c}{label}``); the lower triangle is its mirror.
    Two freedoms make it cheaper, and the cheapest choice is taken:

    - an off-diagonal entry is ``AJ[r,:] . iA_j[c,:]`` or, by symmetry,
      ``AJ[c,:] . iA_j[r,:]``: either row of AJ will do;
    - a rotation keeps the trace, so one diagonal entry may be ``trace(J)``
      minus the other two.

    For a rotation about z (every Khalil-Kleinfinger frame with gamma = 0)
    only one row of the 2x2 block of AJ is then needed: 20 operations
    instead of 27.

    Parameters
    ----------
    program : Program
    label : str
        Frame label j, the suffix of the names.
    iA_j : sympy.Matrix, shape (3, 3)
        Rotation of frame j in frame i, of program symbols.
    J : sympy.Matrix, shape (3, 3)
        Symmetric.
    prefix : str, optional

    Returns
    -------
    sympy.Matrix, shape (3, 3)
        Symmetric, of program symbols.

    Examples
    --------
    >>> from kanerobot.symbolic import Program
    >>> th, XX, XY, YY, ZZ = sympy.symbols("th XX XY YY ZZ")
    >>> program = Program(inputs=[th, XX, XY, YY, ZZ])
    >>> C, S = program.sin_cos(th, "2")
    >>> J = sympy.Matrix([[XX, XY, 0], [XY, YY, 0], [0, 0, ZZ]])
    >>> rotate_inertia(program, "2", sympy.Matrix([[C, -S, 0], [S, C, 0], [0, 0, 1]]), J)
    Matrix([
    [AJA112, AJA122,  0],
    [AJA122, AJA222,  0],
    [     0,      0, ZZ]])
    >>> print(program)
    C2 = cos(th)
    S2 = sin(th)
    AJ212 = C2*XY + S2*XX
    AJ222 = C2*YY + S2*XY
    AJA222 = AJ212*S2 + AJ222*C2
    AJA112 = -AJA222 + XX + YY
    AJA122 = AJ212*C2 - AJ222*S2
    """
    A = tuple(tuple(iA_j[r, c] for c in range(3)) for r in range(3))
    Jr = tuple(tuple(J[r, c] for c in range(3)) for r in range(3))
    by_trace, rows, used, order = _rotation_choice(A, Jr)
    named = {}  # (r, c) -> the AJ entry as the program names it (or a trivial value)
    for r, c in used:
        named[r, c] = program.assign(f"{prefix}J{r + 1}{c + 1}{label}", _aj_entry(A, Jr, r, c))
    x = [[named[r, c] if (r, c) in named else _aj_entry(A, Jr, r, c) for c in range(3)] for r in range(3)]

    def dot(row, other):
        return _total(product(a, b) for a, b in zip(x[row], A[other]) if a != 0 and b != 0)

    pairs = ((0, 1), (0, 2), (1, 2))
    out = sympy.zeros(3, 3)
    for r, c in order:
        if r == c and r == by_trace:
            terms = [out[m, m] if not is_trivial_dot else dot(m, m) for m, is_trivial_dot in _others(by_trace, rows)]
            value = J.trace() - sympy.Add(*terms)
        elif r == c:
            value = dot(r, r)
        else:
            row = rows[pairs.index((r, c))]
            value = dot(row, c if row == r else r)
        out[r, c] = out[c, r] = program.assign(f"{prefix}JA{r + 1}{c + 1}{label}", value)
    return out


def _aj_entry(A, Jr, r, c):
    """Entry (r, c) of ``iA_j J``, products by zeros not formed."""
    return _total(product(A[r][k], Jr[k][c]) for k in range(3) if A[r][k] != 0 and Jr[k][c] != 0)


def _others(by_trace, rows):
    """The diagonal entries the trace entry ``by_trace`` subtracts: (m, whether its dot product is trivial)."""
    return rows[3]


#: The options :func:`rotate_inertia` chose, by the pattern of its rotation and inertia (their entries with
#: the symbols renamed in order of appearance): the costs, hence the choice, depend on that pattern only,
#: and a robot's frames share a few patterns.
_CHOICES: dict[tuple, tuple] = {}


def _rotation_choice(A, Jr):
    """``(by_trace, rows, used, order)`` of the cheapest option of :func:`rotate_inertia` for ``iA_j`` and ``J``.

    ``by_trace``: the diagonal entry taken as the trace less the other two
    (or None); ``rows``: for each off-diagonal entry (0,1), (0,2), (1,2), the
    row of AJ it is the dot product of, then ``(m, trivial)`` of the
    diagonal entries the trace entry subtracts; ``used``: the AJ entries
    named; ``order``: the order the entries are assigned in.  Found on the
    pattern of ``A`` and ``J`` (symbols renamed ``_p0, _p1, ...`` in order
    of appearance: operation counts do not depend on names) and remembered.
    """
    renamed: dict[sympy.Symbol, sympy.Symbol] = {}
    for entry in itertools.chain.from_iterable(A + Jr):
        for symbol in sorted(entry.free_symbols, key=sympy.default_sort_key):
            if symbol not in renamed:
                renamed[symbol] = sympy.Symbol(f"_p{len(renamed)}")
    pattern = tuple(tuple(entry.xreplace(renamed) for entry in row) for row in A + Jr)
    found = _CHOICES.get(pattern)
    if found is None:
        if len(_CHOICES) > 1000:  # patterns of unusual robots: keep the memory bounded
            _CHOICES.clear()
        found = _CHOICES[pattern] = _cheapest_rotation(pattern[:3], pattern[3:])
    return found


def _cheapest_rotation(A, Jr):
    """The choice of :func:`_rotation_choice`, by costing every option on ``A`` and ``J`` (3x3 tuples)."""
    J = sympy.Matrix(Jr)
    AJ = tuple(tuple(_aj_entry(A, Jr, r, c) for c in range(3)) for r in range(3))
    # Non-trivial AJ entries are stand-ins while the options are costed; each
    # option's dot products are formed once, not per option.
    x = [[AJ[r][c] if is_trivial(AJ[r][c]) else sympy.Dummy(f"x{r}{c}") for c in range(3)] for r in range(3)]
    entry_cost = {x[r][c]: _ops(AJ[r][c]) for r in range(3) for c in range(3) if not is_trivial(AJ[r][c])}
    d = [sympy.Dummy(f"d{k}") for k in range(3)]
    pairs = ((0, 1), (0, 2), (1, 2))
    dots = {(row, other): _total(a * b for a, b in zip(x[row], A[other]) if a != 0 and b != 0) for row in range(3) for other in range(3)}
    free = {key: e.free_symbols for key, e in dots.items()}
    trace = J.trace()
    by_traces = {}  # k -> (the diagonal entry k by the trace, its free symbols): the same in every option
    for k in range(3):
        others = [m for m in range(3) if m != k]
        entry = trace - sympy.Add(*(d[m] if not is_trivial(dots[m, m]) else dots[m, m] for m in others))
        by_traces[k] = (entry, entry.free_symbols)
    ops: dict[sympy.Expr, int] = {}  # expression -> operations: the options share their entries

    def cost(e):
        found = ops.get(e)
        if found is None:
            found = ops[e] = _ops(e)
        return found

    def option(by_trace, rows):
        out = {(m, m): dots[m, m] for m in range(3)}
        symbols = [free[m, m] for m in range(3)]
        if by_trace is not None:
            out[by_trace, by_trace], symbols[by_trace] = by_traces[by_trace]
        for (r, c), row in zip(pairs, rows):
            other = c if row == r else r
            out[r, c] = dots[row, other]
            symbols.append(free[row, other])
        used = set().union(*symbols) & entry_cost.keys()
        return sum(entry_cost[s] for s in used) + sum(cost(e) for e in out.values()), out, (by_trace, rows)

    choices = [option(k, rows) for k in (None, 0, 1, 2) for rows in itertools.product(*pairs)]
    _, best, (by_trace, rows) = min(choices, key=lambda choice: choice[0])
    used = tuple((r, c) for r in range(3) for c in range(3) if x[r][c] in entry_cost and any(x[r][c] in e.free_symbols for e in best.values()))
    order = tuple(sorted(best, key=lambda rc: (rc[0] != rc[1], any(s in d for s in best[rc].free_symbols), rc)))
    subtracted = tuple((m, is_trivial(dots[m, m])) for m in range(3) if m != by_trace) if by_trace is not None else ()
    return by_trace, tuple(rows) + (subtracted,), used, order


def _total(terms):
    """The sum of the non-zero ``terms``, made at once."""
    terms = [t for t in terms if t != 0]
    return summed(terms) if terms else sympy.S.Zero

def _ops(expr):
    return sum(count_ops(expr).values())


def joint_torques(robot, label):
    """The generalized forces applied at joint ``label``, one per speed: its ``GAM`` parameter for one
    speed (possibly customised to a number), ``GAM`` and the joint's force names for several
    (the names of Newton-Euler's outputs, ``GAMCX2``).  Every engine and model takes them from here.

    Examples
    --------
    >>> import kanerobot as kr
    >>> joint_torques(kr.load(kr.frames_path("planar2")), "2")
    (GAM2,)
    """
    joint = robot.frame(label).joint
    if joint.nv == 1:
        return (robot.joint_parameters[label]["GAM"],)
    return tuple(sympy.Symbol(f"GAM{name}") for name in joint.force_names(robot.stems[label]))
