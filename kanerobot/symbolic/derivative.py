"""Derivatives of a program, kept as a program (forward mode).

A model such as the inertia matrix ``A(q)`` is a :class:`Program` of
intermediate variables; its derivatives (``dA/dq_j``, ``dA/dt``) are wanted in
the same form, not as the derivative of one large expanded expression.  The
functions here run the program forward once per direction: for every
assignment ``v = f(u1, ..., x1, ...)`` (``u`` earlier assignments, ``x``
inputs) they record

    dv/dx = df/dx + sum over u of  df/du * du/dx

as a new assignment, so the derivative program is the original program
followed by one line per variable that depends on the direction.

Naming
    The derivative of variable ``V`` with respect to input ``x`` is named
    ``d{V}_d{x}`` (``dA11_dth2``, ``dC23_dth3``), its time derivative
    ``d{V}_dt`` (``dA11_dt``); outputs are named the same way from the
    output names.  The pattern is the ``name`` argument (fields ``{var}``
    and ``{wrt}``).  Characters of an input name that cannot appear in a
    program name are dropped (``q[1]`` gives ``q1``); a name already taken
    gets the program's ``_1``, ``_2``, ... suffix.

Zero propagation
    A derivative is recorded only where it is not identically zero: each
    direction keeps the derivatives of the variables that depend on it, a
    variable none of whose operands depends on the direction gets no line,
    and a derivative that comes out trivial (``-S1``, ``QP2``, a number) is
    used in place without a name, as :meth:`Program.assign` does.  Identical
    derivative expressions share one name.

Trigonometric variables
    ``C = cos(a)`` and ``S = sin(a)`` made by :meth:`Program.sin_cos` (and
    the compound angles ``C23``, ``S23`` of the trig rules) are differentiated
    as ``dC = -S da`` and ``dS = C da``: ``dC23_dt = -S23*(QP2 + QP3)``
    rather than the derivative of ``C2*C3 - S2*S3``.  A ``sin`` or ``cos``
    appearing in a derivative of any other expression is named with
    :meth:`Program.replace_sin_cos`, so it reuses the program's ``C``/``S``.

Cost
    One direction costs at most the operations of the assignments that
    depend on it plus, for each of them, one product and one sum per
    operand that depends on the direction (and the partial derivatives
    ``df/du``, which are products of the other operands for the sums of
    products that make up robot models).  ``n`` partial derivatives cost
    ``n`` such passes, each limited to the variables that depend on its
    input; :func:`time_derivative` is a single pass whose seeds are the
    velocities, cheaper than ``n`` partial passes combined afterwards.
    Nothing is expanded or simplified, so the cost grows with the length of
    the program, not with the size of its expanded outputs.

Partial derivatives ``df/du`` of a line
    Sums, products and powers with a constant exponent are taken apart node
    by node with the rules, and the constructors, of sympy's own
    ``_eval_derivative`` (the result is the expression :func:`sympy.diff`
    gives), and the derivative of every node is remembered: a subexpression
    met in several lines, or again for another operand, is differentiated
    once.  ``sign(x)`` (Coulomb friction) has the derivative 0, its value
    everywhere but at ``x = 0``.  Only other nodes (``cos``, ``atan2``, ...)
    go to :func:`sympy.diff`, whose generic machinery costs far more per call.

Examples
--------
>>> th1, L = sympy.symbols("th1 L")
>>> p = Program(inputs=[th1, L])
>>> C1, S1 = p.sin_cos(th1, "1")
>>> p.set_output("PX", p.assign("PX", L * C1))
'PX'
>>> print(differentiate(p, [th1]))
S1 = sin(th1)
dPX_dth1 = -L*S1
"""

import re

import sympy

from kanerobot.symbolic.program import Program
from kanerobot.symbolic.vectors import sum_of_products, summed

__all__ = ["ForwardMode", "differentiate", "time_derivative"]

#: Default name pattern: ``d{var}_d{wrt}`` (``dA11_dth2``, ``dA11_dt``).
DEFAULT_NAME = "d{var}_d{wrt}"


def _label(name):
    """An input name reduced to the characters a program name may hold."""
    label = re.sub(r"[^A-Za-z0-9_]", "", name)
    return label or "x"


class ForwardMode:
    """Forward-mode derivatives of a program's variables, recorded in a new program.

    The new program (:attr:`target`) starts as a copy of every assignment of
    ``program`` (same names, same trigonometric records); derivatives are
    added to it on demand, direction by direction, and each variable is
    differentiated at most once per direction.  This is the engine of
    :func:`differentiate` and :func:`time_derivative`; use it directly to
    build more on the derivatives (the Coriolis matrix does).

    Parameters
    ----------
    program : Program
        Not modified.
    trig : bool, optional
        Apply the trig rules (:func:`simplify_trig_products`) to every
        recorded derivative; default: the program's ``trig``.
    name : str, optional
        Pattern of the derivative names, fields ``{var}`` (the variable)
        and ``{wrt}`` (the direction's label).
    reserved : iterable of str, optional
        Names the target keeps free for outputs (copies of assignments that
        bear them are renamed: a compound angle ``C23`` must not take the
        Coriolis entry's name).

    Attributes
    ----------
    target : Program
        The program receiving copies and derivatives.  It has no outputs:
        set them, then :meth:`Program.prune` drops what they do not need.

    Examples
    --------
    >>> a, x = sympy.symbols("a x")
    >>> p = Program(inputs=[a, x])
    >>> u = p.assign("U", a * x**2)
    >>> p.set_output("Y", p.assign("Y", u * a + x))
    'Y'
    >>> fm = ForwardMode(p)
    >>> fm.add_direction("x", {x: 1})
    >>> fm.derivative(sympy.Symbol("Y"), "x")
    dY_dx
    >>> [(s.name, e) for s, e in fm.target.assignments()][2:]
    [('dU_dx', 2*a*x), ('dY_dx', a*dU_dx + 1)]
    """

    def __init__(self, program, trig=None, name=DEFAULT_NAME, reserved=()):
        self.source = program
        self.name = name
        self.trig = program.trig if trig is None else bool(trig)
        self.target = Program(inputs=program.inputs, reserved=reserved, compound=program.compound, on_collision="rename")
        self._defs = dict(program.assignments(include_dead=True))
        self._order = {sym: k for k, sym in enumerate(self._defs)}
        self._value = {}  # original symbol -> expression in target
        self._renamed: dict[sympy.Symbol, sympy.Expr] = {}  # the entries of _value that are not the symbol itself
        for sym, expr in self._defs.items():
            if self._renamed:
                expr = expr.xreplace(self._renamed)
            value = self._value[sym] = self.target.assign(sym.name, expr, trig=False)
            if value != sym:
                self._renamed[sym] = value
        # Trigonometric records: v = cos(a) or sin(a), differentiated through a,
        # and recorded in the target so that its trig rules know the pairs.
        self._trig = {}
        records = {}
        for sym, (kind, record) in program._trig_of.items():
            if sym in self._defs and record.cos in self._defs and record.sin in self._defs:
                self._trig[sym] = (kind, record)
                records[id(record)] = record
        known = self.target._trig_of
        for record in sorted(records.values(), key=lambda r: r.index):
            c, s = self._value[record.cos], self._value[record.sin]
            if isinstance(c, sympy.Symbol) and isinstance(s, sympy.Symbol) and c not in known and s not in known:
                self.target._angle_record(record.angle.xreplace(self._value), record.label, c, s)
        self._directions = {}  # key -> (label, {input: seed})
        self._tangent = {}  # key -> {original symbol: derivative in target (nonzero)}
        self._done = {}  # key -> set of original symbols processed
        self._partials = {}  # (original symbol, operand) -> df/du in target
        self._free = {}  # expression -> frozenset of its free symbols
        self._diffs = {}  # (expression, symbol) -> partial derivative (original symbols)
        self._functions = {}  # expression -> whether a function (cos, sign, ...) appears in it
        self._sorted = {}  # expression -> its free symbols sorted by name (the order of _sum's terms)
        # Which inputs each assignment depends on, as a bit mask (one bit per input): a direction
        # visits only the assignments that depend on one of its seeds, not the whole cone of what
        # it is asked for (the derivatives of an entry of A along q_k need the variables of links
        # from k on; the others are skipped without being looked at).
        self._bits = {}  # input symbol -> its bit
        self._reach = {}  # assignment (original symbol) -> mask of the inputs it depends on
        for sym in self._defs:
            self._reach_of(sym)
        self._masks = {}  # key -> mask of the direction's seeds

    # ------------------------------------------------------------ public

    def value(self, expr):
        """``expr`` (of the original program's symbols) in the target's symbols."""
        expr = sympy.sympify(expr)
        return expr.xreplace(self._renamed) if self._renamed else expr

    def add_direction(self, key, seeds, label=None):
        """Declare a direction: the derivative of each input ``x`` is ``seeds[x]``.

        Parameters
        ----------
        key : hashable
            How :meth:`derivative` refers to the direction.
        seeds : dict
            ``{input symbol: derivative}``; inputs not listed are constant.
            ``{x: 1}`` gives the partial derivative with respect to ``x``;
            ``{q1: QP1, q2: QP2}`` the time derivative along ``q' = QP``.
        label : str, optional
            The ``{wrt}`` of the derivative names; default ``str(key)``.
        """
        if key in self._directions:
            raise ValueError(f"direction {key!r} is already declared")
        clean = {}
        for x, seed in seeds.items():
            x = self._input(x)
            seed = sympy.sympify(seed)
            if seed != 0:
                clean[x] = seed
        self._directions[key] = (_label(str(key) if label is None else label), clean)
        mask = 0
        for x in clean:
            mask |= self._bit(x)
        self._masks[key] = mask
        self._tangent[key] = {}
        self._done[key] = set()

    def name_for(self, var, key):
        """Name of the derivative of variable (or output) ``var`` along ``key``: ``dA11_dth2``."""
        return self.name.format(var=var, wrt=self._directions[key][0])

    def derivative(self, expr, key):
        """Derivative of ``expr`` (of the original symbols) along direction ``key``.

        Returns an expression of the target's symbols (0 when ``expr`` does
        not depend on the direction); the derivatives of the variables it
        uses are recorded in :attr:`target` as needed.  ``expr`` itself is
        not assigned.
        """
        expr = sympy.sympify(expr)
        self._ensure(self._symbols(expr), key)
        return self._expr_tangent(expr, key)

    # ----------------------------------------------------------- internals

    def _input(self, x):
        if isinstance(x, str):
            found = [s for s in self.source.inputs if s.name == x]
            x = found[0] if found else sympy.Symbol(x)
        if not isinstance(x, sympy.Symbol):
            raise TypeError(f"derivatives are taken with respect to input symbols, got {x!r}")
        if x in self._defs:
            raise ValueError(f"{x} is an assignment of the program, not an input")
        return x

    def _operands(self, sym):
        """Symbols whose derivatives the derivative of ``sym`` is built from."""
        if sym in self._trig:
            return self._symbols(self._trig[sym][1].angle)
        return self._symbols(self._defs[sym])

    def _bit(self, x):
        """The bit of input ``x`` in the masks of :attr:`_reach`."""
        bit = self._bits.get(x)
        if bit is None:
            bit = self._bits[x] = 1 << len(self._bits)
        return bit

    def _reach_of(self, sym):
        """Mask of the inputs assignment ``sym`` depends on, through its operands (remembered)."""
        mask = self._reach.get(sym)
        if mask is None:
            mask = 0
            for s in self._operands(sym):
                mask |= self._reach_of(s) if s in self._defs else self._bit(s)
            self._reach[sym] = mask
        return mask

    def _ensure(self, symbols, key):
        """Differentiate, in program order, the assignments ``symbols`` need.

        Only the assignments that depend on the direction's seeds are visited
        (:attr:`_reach`): the others have a zero derivative.
        """
        done, reach, mask = self._done[key], self._reach, self._masks[key]
        todo, stack = set(), [s for s in symbols if s in reach and reach[s] & mask and s not in done]
        while stack:
            sym = stack.pop()
            if sym in todo:
                continue
            todo.add(sym)
            stack.extend(s for s in self._operands(sym) if s in reach and reach[s] & mask and s not in done and s not in todo)
        tangents = self._tangent[key]
        for sym in sorted(todo, key=self._order.__getitem__):
            done.add(sym)
            if sym in self._trig:
                kind, record = self._trig[sym]
                rate = self._expr_tangent(record.angle, key)
                if _is_zero(rate):
                    continue
                d = (-self._value[record.sin] if kind == "C" else self._value[record.cos]) * rate
            else:
                d = self._sum(sym, self._defs[sym], key)
            if _is_zero(d):
                continue
            d = self.target.assign(self.name_for(sym.name, key), d, trig=self.trig)
            if not _is_zero(d):
                tangents[sym] = d

    def _rate(self, sym, key):
        """Derivative of one symbol along ``key`` (0 if none), in target symbols."""
        if sym in self._defs:
            return self._tangent[key].get(sym, sympy.S.Zero)
        return self._directions[key][1].get(sym, sympy.S.Zero)

    def _symbols(self, expr):
        """Free symbols of ``expr``, remembered for every node of it."""
        found = self._free.get(expr)
        if found is None:
            if expr.is_Symbol:
                found = frozenset((expr,))
            elif expr.is_Add or expr.is_Mul or expr.is_Pow or expr.is_Function:
                found = frozenset().union(*(self._symbols(a) for a in expr.args))
            else:
                found = frozenset(expr.free_symbols)
            self._free[expr] = found
        return found

    def _has_function(self, expr):
        """Whether a function (``cos``, ``sign``, ``atan2``, ...) appears in ``expr``."""
        found = self._functions.get(expr)
        if found is None:
            if expr.is_Function:
                found = True
            elif expr.is_Add or expr.is_Mul or expr.is_Pow:
                found = any(self._has_function(a) for a in expr.args)
            else:
                found = not expr.is_Atom
            self._functions[expr] = found
        return found

    def _diff(self, expr, sym):
        """``sympy.diff(expr, sym)``, built node by node.

        Sums, products and powers with a constant exponent are differentiated
        structurally, with the rules (and the constructors) sympy's own
        ``_eval_derivative`` uses, so the result is the expression
        ``sympy.diff`` gives; the derivative of every node is remembered, so
        a subexpression shared by several lines, or met again for another
        operand, is differentiated once.  Other nodes (functions) go to
        :func:`sympy.diff`.
        """
        if expr is sym:
            return sympy.S.One
        if expr.is_Number:
            # Before ==: a number's == sympifies the symbol, which costs more than all the rest here.
            return sympy.S.Zero
        if expr == sym:
            return sympy.S.One
        if sym not in self._symbols(expr):
            return sympy.S.Zero
        memo_key = (expr, sym)
        done = self._diffs.get(memo_key)
        if done is not None:
            return done
        if expr.is_Add:
            out = summed([d for d in (self._diff(a, sym) for a in expr.args) if not _is_zero(d)])
        elif expr.is_Mul:
            args = expr.args
            terms = []
            for k, a in enumerate(args):
                d = self._diff(a, sym)
                if not _is_zero(d):
                    terms.append(_mul_replacing(args, k, d))
            out = summed(terms)
        elif expr.is_Pow and sym not in self._symbols(expr.exp):
            out = expr * (self._diff(expr.base, sym) * expr.exp / expr.base)
        elif isinstance(expr, sympy.sign):
            # Coulomb friction FS*sign(QP): the derivative everywhere but at 0, where
            # there is none (sympy's 2*DiracDelta is no number a program can compute).
            out = sympy.S.Zero
        else:
            out = sympy.diff(expr, sym)
            if out.has(sympy.Derivative, sympy.Subs):
                raise ValueError(f"cannot differentiate {expr} with respect to {sym}: sympy leaves {out}")
        self._diffs[memo_key] = out
        return out

    def _partial(self, owner, expr, sym):
        cache_key = (owner, sym)
        if owner is not None and cache_key in self._partials:
            return self._partials[cache_key]
        partial = self._diff(expr, sym)
        if self._renamed:
            partial = partial.xreplace(self._renamed)
        if self._has_function(expr):
            partial = self.target.replace_sin_cos(partial)
        if owner is not None:
            self._partials[cache_key] = partial
        return partial

    def _sum(self, owner, expr, key):
        """``sum over u of df/du * du/dx``: sympy's sum of sympy's products (:func:`sum_of_products`)."""
        # The rates are S.Zero (absent) or a non-zero value (only those are stored), so an identity test
        # stands for sympy's comparison with 0; the operands are sorted once per expression.
        order = self._sorted.get(expr)
        if order is None:
            order = self._sorted[expr] = sorted(self._symbols(expr), key=_by_name)
        tangents, seeds = self._tangent[key], self._directions[key][1]
        defs, zero = self._defs, sympy.S.Zero
        pairs = []
        for sym in order:
            rate = tangents.get(sym, zero) if sym in defs else seeds.get(sym, zero)
            if rate is not zero:
                pairs.append((self._partial(owner, expr, sym), rate))
        return sum_of_products(pairs)

    def _expr_tangent(self, expr, key):
        if isinstance(expr, sympy.Symbol):
            return self._rate(expr, key)
        return self._sum(None, expr, key)


def _is_zero(expr):
    return expr is sympy.S.Zero or (expr.is_Number and expr == 0)


def _by_name(sym):
    return sym.name


def _mul_replacing(args, k, d):
    """``sympy.Mul(*args[:k], d, *args[k + 1:])``: the product ``args`` (a product's arguments) with its
    ``k``-th factor replaced by ``d``.  For ``d = 1`` in a product of plain symbols (and a rational
    coefficient) the other factors are already sympy's product in its order, so they are kept as such."""
    if d is sympy.S.One:
        rest = args[:k] + args[k + 1:]
        if len(rest) == 1:
            return rest[0]
        if all(type(f) is sympy.Symbol and f.is_commutative for f in (rest[1:] if rest[0].is_Rational else rest)):
            return sympy.Mul._from_args(rest, True)
    return sympy.Mul(*args[:k], d, *args[k + 1:])


def _outputs_of(program, outputs):
    table = program.outputs
    if outputs is None:
        return list(table.items())
    missing = [name for name in outputs if name not in table]
    if missing:
        raise ValueError(f"not outputs of the program: {', '.join(missing)}")
    return [(name, table[name]) for name in outputs]


def _row(fm, out_name, expr, key):
    """(output name, derivative) of one output along one direction."""
    d = fm.derivative(expr, key)
    name = fm.name_for(out_name, key)
    # An output that is its own assignment (A11 = A11) gives the derivative
    # line of that assignment, under the name it got (dA11_dth2, or
    # dA11_dth2_1 when the name was taken).
    if (isinstance(expr, sympy.Symbol) and expr.name == out_name and isinstance(d, sympy.Symbol)
            and fm.target.definition(d) is not None and d.name.startswith(name)):
        name = d.name
    return name, d


def _finish(fm, rows, keep_outputs, zeros, source):
    target = fm.target
    if keep_outputs:
        for name, expr in source:
            target.set_output(name, fm.value(expr))
    for name, d in rows:
        if d != 0 or zeros:
            target.set_output(name, d)
    target.prune()
    return target


def differentiate(program, wrt, name=DEFAULT_NAME, outputs=None, zeros=True, keep_outputs=False, trig=None):
    """Partial derivatives of a program's outputs, as a program.

    Parameters
    ----------
    program : Program
        Not modified.
    wrt : sequence of sympy.Symbol or str
        Inputs to differentiate with respect to (a single symbol is
        accepted).  A symbol the program does not read gives zero
        derivatives; an assigned symbol is an error.
    name : str, optional
        Pattern of the names, fields ``{var}`` and ``{wrt}``: the
        derivative of variable or output ``A11`` with respect to ``th2`` is
        ``dA11_dth2`` by default.
    outputs : sequence of str, optional
        Names of the outputs to differentiate; default all.
    zeros : bool, optional
        Keep the outputs that are identically zero (as ``dA11_dth1 = 0``),
        so that every requested derivative is an output; False leaves them
        out.
    keep_outputs : bool, optional
        Also keep the outputs differentiated (first, under their names).
    trig : bool, optional
        Apply the trig rules to the derivatives; default: the program's.

    Returns
    -------
    Program
        The original assignments the derivatives need, one assignment per
        non-zero derivative of a variable (see the module notes on naming,
        zero propagation and cost), and the outputs ``d{output}_d{x}``,
        output by output, in the order of ``wrt``.  An output that is an
        assignment of the same name is output as that assignment's
        derivative line, under its name (so ``dA11_dth2`` is printed once).

    Examples
    --------
    >>> th1, th2, L = sympy.symbols("th1 th2 L")
    >>> p = Program(inputs=[th1, th2, L])
    >>> C2, S2 = p.sin_cos(th2, "2")
    >>> p.set_output("A11", p.assign("A11", L**2 * C2 + L))
    'A11'
    >>> d = differentiate(p, [th1, th2])
    >>> print(d)
    S2 = sin(th2)
    dA11_dth2 = -L**2*S2
    dA11_dth1 = 0
    >>> d.op_count()
    {'add': 0, 'mul': 2, 'fn': 1}
    """
    if isinstance(wrt, (str, sympy.Symbol)):
        wrt = [wrt]
    fm = ForwardMode(program, trig=trig, name=name)
    keys = []
    for x in wrt:
        x = fm._input(x)
        if ("d", x) not in fm._directions:
            fm.add_direction(("d", x), {x: 1}, label=x.name)
            keys.append(x)
    source = _outputs_of(program, outputs)
    rows = [_row(fm, out_name, expr, ("d", x)) for out_name, expr in source for x in keys]
    return _finish(fm, rows, keep_outputs, zeros, source)


def time_derivative(program, q, qd, name="d{var}_dt", outputs=None, zeros=True, keep_outputs=False, trig=None):
    """Time derivative of a program's outputs along ``q' = qd``, as a program.

    One forward pass whose seeds are the velocities: the directional
    derivative ``sum_k d(output)/dq_k * qd_k`` without recording the partial
    derivatives.

    Parameters
    ----------
    program : Program
    q : sequence of sympy.Symbol or str
        Time-varying inputs (joint variables); every other input is constant.
    qd : sequence of sympy.Expr
        Their derivatives (the robot's ``QP``), same length; a 0 (a
        customized joint) makes its ``q`` constant.  They need not be inputs
        of ``program``: they become inputs of the result.
    name : str, optional
        Pattern of the names, field ``{var}`` (and ``{wrt}``, which is
        ``t``): ``dA11_dt`` by default.
    outputs, zeros, keep_outputs, trig
        As in :func:`differentiate`.

    Returns
    -------
    Program

    Examples
    --------
    >>> th2, th3, QP2, QP3, L = sympy.symbols("th2 th3 QP2 QP3 L")
    >>> p = Program(inputs=[th2, th3, L], trig=True)
    >>> C2, S2 = p.sin_cos(th2, "2")
    >>> C3, S3 = p.sin_cos(th3, "3")
    >>> p.set_output("PX", p.assign("PX", L * (C2*C3 - S2*S3)))
    'PX'
    >>> print(time_derivative(p, [th2, th3], [QP2, QP3]))
    C2 = cos(th2)
    S2 = sin(th2)
    C3 = cos(th3)
    S3 = sin(th3)
    S23 = C2*S3 + C3*S2
    dC23_dt = -S23*(QP2 + QP3)
    dPX_dt = L*dC23_dt
    """
    q, qd = list(q), list(qd)
    if len(q) != len(qd):
        raise ValueError(f"q has {len(q)} entries and qd {len(qd)}")
    fm = ForwardMode(program, trig=trig, name=name)
    seeds = {}
    for x, v in zip(q, qd):
        x = fm._input(x)
        if x in seeds:
            raise ValueError(f"{x} appears twice in q")
        seeds[x] = v
    fm.add_direction("t", seeds)
    source = _outputs_of(program, outputs)
    rows = [_row(fm, out_name, expr, "t") for out_name, expr in source]
    return _finish(fm, rows, keep_outputs, zeros, source)
