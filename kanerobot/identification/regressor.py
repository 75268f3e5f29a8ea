"""Dynamic identification model: the regressor ``D`` of ``Gamma = D(q, qd, qdd) K``.

SYMORO+ section 6 (Khalil and Dombre, ch. 14).  The inverse dynamic model
is linear in the standard parameters of each link,

    K_j = [XX_j XY_j XZ_j YY_j YZ_j ZZ_j MX_j MY_j MZ_j M_j IA_j FV_j FS_j],

so ``Gamma = D K`` with one column of D per parameter.  The program is the
customized Newton-Euler algorithm of :mod:`kanerobot.dynamics.newton_euler`
split by parameter, as SYMORO+ builds it:

- the forward recursion (``W``, ``WP``, ``DV``, ``U``, ``VP``) is computed
  once and shared by every column;
- each parameter of link j gives the wrench it alone puts on link j (eq.
  15-16 with that parameter 1 and the others 0), in frame j, about O_j::

      XX .. ZZ (unit inertia E):   f = 0,         m = E WP + W x (E W)
      MX, MY, MZ (unit e_k):       f = U e_k,     m = e_k x VP
      M:                           f = VP,        m = 0

- the wrench is carried back to the base (``FDI = jA_i f``, ``N = jA_i m +
  iP_j x FDI``) and projected on each joint axis it meets: ``DG<joint>_<K> =
  (sigma f + sigmabar m) . a``;
- ``IA_j``, ``FV_j``, ``FS_j`` give ``QDP_j``, ``QP_j``, ``sign(QP_j)`` in row j.

The external wrenches ``FX .. CZ`` are not parameters: ``D K`` is the
inverse dynamic model with no wrench (gravity and the known base motion
included).  Zeros and ones are kept in place, so the columns a customized description
cancels cost nothing; entries of D that are identically zero are not
outputs.  A closed-loop robot's regressor is ``D_a = G^T D_tree(q, G qd_a,
G qdd_a + g)`` (SYMORO+ 5.2), computed like
:func:`kanerobot.dynamics.closed_loop.closed_loop_program`.
"""

from __future__ import annotations

import numpy as np
import sympy

from kanerobot.dynamics.closed_loop import ClosedLoopModel, dependent_symbols, equivalent_tree, loop_kinematics
from kanerobot.dynamics.common import angle_labels, check_structure, frame_placement, motion_parts, subtree_wrench
from kanerobot.dynamics.constrained import label_name, splice
from kanerobot.dynamics.dynamic_model import as_states, parameters_without_state
from kanerobot.dynamics.newton_euler import recorder
from kanerobot.dynamics.root import root_motion
from kanerobot.errors import ParameterError
from kanerobot.kinematics import forward_step, root_link_motion
from kanerobot.robot.description import BASE, Robot
from kanerobot.symbolic.program import Program

__all__ = ["STANDARD_NAMES", "IdentificationModel", "NumericRegressor", "identification_model"]

#: Standard parameters of a link, in column order.
STANDARD_NAMES = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA", "FV", "FS")
_INERTIA = {"XX": (0, 0), "XY": (0, 1), "XZ": (0, 2), "YY": (1, 1), "YZ": (1, 2), "ZZ": (2, 2)}
_PAIRS = {(0, 0): 0, (0, 1): 1, (0, 2): 2, (1, 1): 3, (1, 2): 4, (2, 2): 5}


def identification_model(robot: Robot, friction: bool = True, rotor: bool = True) -> IdentificationModel:
    """The dynamic identification model ``Gamma = D(q, qd, qdd) K`` of ``robot``.

    Parameters
    ----------
    robot : Robot
        Serial, tree or closed-loop robot with a fixed base (or a base moving
        with the known motion ``W0, WP0, VP0``).
    friction : bool, optional
        Columns for ``FV`` and ``FS`` of every joint.
    rotor : bool, optional
        Columns for the rotor inertias ``IA``.

    Returns
    -------
    IdentificationModel
        Built once per robot (robots are immutable): asking again for the
        same robot object and options returns the same model.

    Raises
    ------
    KaneRobotError
        For floating or wheeled bases and flexible joints.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = identification_model(kr.load(kr.frames_path("planar2")))
    >>> model.parameters[:6], len(model.parameters)
    (['XX1', 'XY1', 'XZ1', 'YY1', 'YZ1', 'ZZ1'], 26)
    >>> print(model.program)  # the forward recursion once, then the columns
    DV61 = QP1**2
    C2 = cos(th2)
    S2 = sin(th2)
    W32 = QP1 + QP2
    WP32 = QDP1 + QDP2
    DV62 = W32**2
    VSP12 = -DV61*L1
    VSP22 = L1*QDP1
    VP12 = C2*VSP12 + S2*VSP22
    VP22 = C2*VSP22 - S2*VSP12
    N11XZ2 = C2*WP32 - DV62*S2
    N21XZ2 = C2*DV62 + S2*WP32
    N31MX2 = L1*N11XZ2 + VP22
    N31MY2 = -L1*N21XZ2 - VP12
    N11MZ2 = -C2*VP22 - S2*VP12
    N31M2 = -L1*N11MZ2
    DG1_ZZ1 = QDP1
    DG1_IA1 = QDP1
    DG1_FV1 = QP1
    DG1_FS1 = sign(QP1)
    DG1_ZZ2 = WP32
    DG1_MX2 = N31MX2
    DG1_MY2 = N31MY2
    DG1_M2 = N31M2
    DG2_ZZ2 = WP32
    DG2_MX2 = VP22
    DG2_MY2 = -VP12
    DG2_IA2 = QDP2
    DG2_FV2 = QP2
    DG2_FS2 = sign(QP2)
    >>> model.op_count()
    {'add': 9, 'mul': 17, 'fn': 4}
    >>> fn = model.numeric({"L1": 1.0})
    >>> fn.regressor([0.0, 0.0], [0.0, 0.0], [1.0, 0.0])[:, model.parameters.index("M2")]
    array([1., 0.])
    """
    key = (id(robot), bool(friction), bool(rotor))
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is robot:
        return cached[1]
    model = IdentificationModel(robot, friction=friction, rotor=rotor)
    _CACHE[key] = (robot, model)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    return model


#: Models of the last robots asked for (robots are immutable): {(id, friction, rotor): (robot, model)}.
_CACHE: dict[tuple[int, bool, bool], tuple[Robot, IdentificationModel]] = {}
_CACHE_SIZE = 8


class IdentificationModel:
    """The regressor of one robot as a program, and its numeric evaluation.

    Attributes
    ----------
    robot : Robot
    parameters : list of str
        The standard parameters K, one column of D each: per link, in
        ``robot.links`` order, ``XX XY XZ YY YZ ZZ MX MY MZ M`` then ``IA FV
        FS`` (of links carried by a joint), only those given as plain symbols
        in the description (a parameter customised to 0 has no column; a
        parameter given as another number or an expression is not identified
        and its contribution is left out of D).
    program : Program
        Outputs ``DG<joint>_<parameter>``, the entries of D that are not
        identically zero.
    entries : dict
        ``{output name: (row, column)}`` of D; rows are ``robot.joint_labels``
        (the active joints for a closed loop), columns :attr:`parameters`.
    joints : list of str
        The labels of D's rows.
    """

    def __init__(self, robot, friction=True, rotor=True):
        self.robot = robot
        self.friction, self.rotor = bool(friction), bool(rotor)
        self.closed = bool(robot.loops)
        tree = robot
        if self.closed:
            tree = equivalent_tree(robot)
        check_structure(tree, "the dynamic identification model", flexible=False)
        self.parameters, self._symbols, self._owners = _standard_parameters(tree, friction, rotor)
        program, entries = _tree_regressor(tree, self._symbols, self._owners)
        if self.closed:
            program, entries, self.joints = _closed_loop_regressor(robot, program, entries, self.parameters)
        else:
            self.joints = list(robot.joint_labels)
        self.program = program
        self.entries = entries

    def __repr__(self):
        return f"<IdentificationModel of {self.robot.name}: D {len(self.joints)} x {len(self.parameters)}>"

    @property
    def shape(self):
        """(rows, columns) of D."""
        return len(self.joints), len(self.parameters)

    @property
    def state_symbols(self):
        """q (every joint), then QP, QDP of the rows' joints; an entry customised
        to a number gets a placeholder symbol the program does not use."""
        jp = self.robot.joint_parameters
        groups = [list(self.robot.q), [jp[j]["QP"] for j in self.joints], [jp[j]["QDP"] for j in self.joints]]
        flat = [s for group in groups for s in group]
        return [s if isinstance(s, sympy.Symbol) else sympy.Symbol(f"kr_unused_state_{k}") for k, s in enumerate(flat)]

    @property
    def values_needed(self):
        """Names of the symbols besides the state that D needs (geometry, gravity, base motion), in the robot's order."""
        return parameters_without_state(self.robot, self.program.used_inputs() - set(self.state_symbols))

    def op_count(self):
        """Operations of the program: ``{"add", "mul", "fn"}``."""
        return dict(self.program.op_count())

    def matrix(self):
        """D as a sympy Matrix of the program's symbols (entries are the outputs' expressions)."""
        D = sympy.zeros(*self.shape)
        for name, (r, c) in self.entries.items():
            D[r, c] = self.program.outputs[name]
        return D

    def _compiled(self):
        """The program as a numpy function of the state then :attr:`values_needed`, compiled once."""
        if getattr(self, "_function", None) is None:
            args = self.state_symbols + [sympy.Symbol(name) for name in self.values_needed]
            self._function = self.program.to_function(args=args)
        return self._function

    def export(self, lang, name=None):
        """The regressor as a function file in ``lang`` (:func:`kanerobot.codegen.generate`).

        The function takes ``q`` (every joint), ``qd``, ``qdd`` (the rows'
        joints) and ``p`` (the symbols of :attr:`values_needed`, in that
        order) and returns D, shape (rows, columns of :attr:`parameters`).

        Parameters
        ----------
        lang : {"python", "c", "matlab", "julia"}
        name : str, optional
            Function name; by default ``<robot>_dim``.

        Returns
        -------
        str
        """
        from kanerobot.codegen import generate

        grid = [[sympy.S.Zero] * self.shape[1] for _ in range(self.shape[0])]
        for output, (r, c) in self.entries.items():
            grid[r][c] = output
        n = len(self.joints)
        state = self.state_symbols
        args = [("q", state[: len(state) - 2 * n]), ("qd", state[-2 * n : -n]), ("qdd", state[-n:])]
        args.append(("p", [sympy.Symbol(v) for v in self.values_needed]))
        name = name or f"{''.join(ch if ch.isalnum() else '_' for ch in self.robot.name.lower())}_dim"
        doc = (
            f"Dynamic identification model of {self.robot.name}: D(q, qd, qdd), GAM = D K with K = "
            f"[{', '.join(self.parameters)}]; p = [{', '.join(self.values_needed)}]."
        )
        return generate(self.program, lang, name, args, outputs=grid, doc=doc)

    def numeric(self, values):
        """The regressor with the non-inertial symbols bound to ``values``.

        Parameters
        ----------
        values : dict
            ``{name: float}`` for every name of :attr:`values_needed`
            (geometry, gravity ``G3``...); other keys are ignored.

        Returns
        -------
        NumericRegressor

        Raises
        ------
        ParameterError
            Naming the symbols without a value.
        """
        return NumericRegressor(self, values)


class NumericRegressor:
    """D(q, qd, qdd) evaluated by generated numpy code, for one state or a batch.

    Attributes
    ----------
    model : IdentificationModel
    values : dict
        ``{name: float}`` of the bound symbols.
    """

    def __init__(self, model, values):
        given = {str(k): v for k, v in values.items()}
        needed = model.values_needed
        missing = [name for name in needed if name not in given]
        if missing:
            raise ParameterError(
                f"robot {model.robot.name}: the regressor needs a value for {', '.join(missing)} "
                f"(it needs {', '.join(needed) or 'nothing'} besides the state)"
            )
        self.model = model
        self.values = {name: float(given[name]) for name in needed}
        self._names = list(model.program.outputs)
        self._cells = np.array([model.entries[name] for name in self._names], dtype=int).reshape(-1, 2)
        self._function = model._compiled() if self._names else None

    def regressor(self, q, qd, qdd):
        """D at one state, shape (rows, p), or a batch, shape (N, rows, p).

        Parameters
        ----------
        q : array_like, shape (nj,) or (N, nj)
            Every joint variable (for a closed loop, a closed configuration).
        qd, qdd : array_like, shape (m,) or (N, m)
            Rates and accelerations of the rows' joints (the active joints of
            a closed loop, else every joint).
        """
        model = self.model
        rows, p = model.shape
        q, single = as_states(q, len(model.robot.q), "q")
        qd, _ = as_states(qd, rows, "qd")
        qdd, _ = as_states(qdd, rows, "qdd")
        N = max(q.shape[0], qd.shape[0], qdd.shape[0])
        q, qd, qdd = (np.broadcast_to(x, (N, x.shape[1])) for x in (q, qd, qdd))
        D = np.zeros((N, rows, p))
        if self._function is not None:
            columns = [q[:, k] for k in range(q.shape[1])] + [qd[:, k] for k in range(rows)] + [qdd[:, k] for k in range(rows)]
            out = np.broadcast_to(self._function(*columns, *self.values.values()).reshape(len(self._names), -1), (len(self._names), N))
            D[:, self._cells[:, 0], self._cells[:, 1]] = out.T
        return D[0] if single else D


# ------------------------------------------------------------ construction
def _standard_parameters(robot, friction, rotor):
    """(names, symbols, owners): the standard parameters and, per symbol, the
    ``(link label, parameter name)`` occurrences it stands for."""
    names = [n for n in STANDARD_NAMES if (n != "IA" or rotor) and (n not in ("FV", "FS") or friction)]
    symbols: list[sympy.Symbol] = []
    owners: dict[sympy.Symbol, list[tuple[str, str]]] = {}
    for label in robot.links:
        if label == BASE:
            continue
        joint = robot.frame(label).is_joint
        for name in names:
            if name in ("IA", "FV", "FS") and not joint:
                continue
            value = sympy.sympify(robot.dynamics[label][name])
            if not isinstance(value, sympy.Symbol):
                continue
            if value not in owners:
                symbols.append(value)
                owners[value] = []
            owners[value].append((label, name))
    return [str(s) for s in symbols], symbols, owners


def _inertia_moment(E, w, wdot, DV):
    """``E wdot + w x (E w)`` with the products of w's components read from DV."""
    x = sympy.symbols("kr_x0:3")
    X = sympy.Matrix(x)
    gyro = X.cross(E * X)
    out = E * wdot
    for r in range(3):
        poly = sympy.Poly(sympy.expand(gyro[r]), *x)
        term = 0
        for powers, coeff in poly.terms():
            idx = tuple(sorted(k for k, e in enumerate(powers) for _ in range(e)))
            if len(idx) == 2:
                term += coeff * DV[_PAIRS[idx]]
        out[r] += term
    return out


def _tree_regressor(robot, symbols, owners):
    """The regressor program of a serial or tree robot and its entries {name: (row, col)}."""
    jp = robot.joint_parameters
    joint_labels = list(robot.joint_labels)
    QP = {label: sympy.sympify(jp[label]["QP"]) for label in joint_labels}
    QDP = {label: sympy.sympify(jp[label]["QDP"]) for label in joint_labels}
    base = robot.base
    inputs = list(robot.q) + [QP[j] for j in joint_labels] + [QDP[j] for j in joint_labels]
    inputs += [sympy.Symbol(name) for name in robot.geometric_parameters]
    inputs += sorted(sympy.Matrix.vstack(base.W0, base.WP0, base.VP0, base.G).free_symbols, key=str)
    inputs = [s for s in inputs if isinstance(s, sympy.Symbol)]
    program = Program(inputs=inputs, trig=True)

    def vec(name, j, v):
        return program.assign_matrix(lambda r, c: f"{name}{r}{j}", v)

    stem = robot.stems
    labels = angle_labels(robot)
    w0, wdot0, Vdot0 = root_motion(program, robot)
    motion = {BASE: root_link_motion(w0, wdot0, Vdot0, recorder(program, BASE))}
    A, P = {}, {}
    frames = {frame.label: frame for frame in robot.frames}
    # Forward recursion (SYMORO+ eqs 6-10), shared by every column.
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        qd_j, qdd_j = ((QP[j],), (QDP[j],)) if frame.is_joint else ((), ())
        A[j], P[j] = frame_placement(program, frame, labels, rotation="A", translation="P")
        motion[j] = forward_step(motion[i], A[j].T, P[j], motion_parts(frame), qd_j, qdd_j, recorder(program, stem[j]))
    w, wdot, Vdot = ({j: getattr(m, key) for j, m in motion.items()} for key in ("w", "wdot", "Vdot"))
    U, DV = ({j: getattr(m, key) for j, m in motion.items()} for key in ("U", "DV"))

    # Per parameter: the wrench on its link, carried back to the base.
    columns: dict[tuple[int, int], sympy.Expr] = {}  # (row, col) -> expr
    zero = sympy.zeros(3, 1)
    rows = {label: k for k, label in enumerate(joint_labels)}
    for col, symbol in enumerate(symbols):
        for label, name in owners[symbol]:
            tag = f"{name}{stem[label]}" if len(stem[label]) == 1 else f"{name}_{stem[label]}"
            if name in ("IA", "FV", "FS"):
                value = {"IA": QDP[label], "FV": QP[label], "FS": sympy.sign(QP[label])}[name]
                columns[rows[label], col] = columns.get((rows[label], col), 0) + value
                continue
            if name in _INERTIA:
                E = sympy.zeros(3, 3)
                r, c = _INERTIA[name]
                E[r, c] = E[c, r] = 1
                f, m = sympy.zeros(3, 1), _inertia_moment(E, w[label], wdot[label], DV[label])
            elif name == "M":
                f, m = Vdot[label], sympy.zeros(3, 1)
            else:
                e = sympy.zeros(3, 1)
                e[["MX", "MY", "MZ"].index(name)] = 1
                f, m = U[label] * e, e.cross(Vdot[label])
            at = label
            while True:
                frame = frames[at]
                if frame.is_joint:
                    S_lin, S_ang = motion_parts(frame)
                    value = S_lin[:, 0].dot(f) + S_ang[:, 0].dot(m)
                    if value != 0:
                        columns[rows[at], col] = columns.get((rows[at], col), 0) + value
                i = frame.antecedent
                if i == BASE or (f == zero and m == zero):
                    break
                suffix = f"{stem[i]}{tag}" if len(stem[i]) == 1 else f"{stem[i]}_{tag}"
                fi = vec("FDI", suffix, A[at] * f)                                              # (18)
                # Link i carries this parameter's wrench only: Newton-Euler's step with no wrench of its own.
                _, m_i = subtree_wrench(zero, zero, [(A[at], P[at], fi, m)])                   # (17, 19)
                m = vec("N", suffix, sympy.Matrix(m_i))
                f, at = fi, i
    entries = {}
    for (r, c), expr in sorted(columns.items()):
        expr = sympy.sympify(expr)
        if expr == 0:
            continue
        joint = joint_labels[r]
        name = program.set_output(f"DG{stem[joint]}_{symbols[c]}", expr)
        entries[name] = (r, c)
    program.prune()
    return program, entries


def _closed_loop_regressor(robot, tree_program, tree_entries, parameters):
    """``D_a = G^T D_tree`` as one program: the loop kinematics of
    :func:`kanerobot.dynamics.closed_loop.loop_kinematics`, the tree's
    regressor spliced in, each column projected as ``GAM_a = GT_a + W^T GT_p``."""
    model = ClosedLoopModel(robot, "newton-euler")
    c = model.constraints
    labels = list(robot.joint_labels)
    active, passive = list(c.active), list(c.passive)
    target = Program(inputs=[x for x in tree_program.inputs if x not in dependent_symbols(robot, c)], trig=True)
    W, mapping = loop_kinematics(model, target)
    outputs = splice(target, tree_program, mapping)
    tree = {}
    for name, (r, col) in tree_entries.items():
        tree[labels[r], col] = target.assign(label_name("DT", robot.stems[labels[r]]) + f"_{parameters[col]}", outputs[name])
    entries = {}
    for col, pname in enumerate(parameters):
        for k, a in enumerate(active):
            expr = tree.get((a, col), 0) + sympy.Add(*(W[r, k] * tree.get((p, col), 0) for r, p in enumerate(passive)))
            if expr != 0:
                entries[target.set_output(f"DG{robot.stems[a]}_{pname}", expr)] = (k, col)
    target.prune()
    return target, entries, active
