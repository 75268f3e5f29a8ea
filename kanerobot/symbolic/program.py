"""Models as programs of intermediate variables ("customized symbolic" form).

SYMORO+ does not hand out a model as one large expression: it writes a short
program, one assignment per line, where every non-trivial subexpression gets a
name (``C1 = cos(th1)``, ``WI12 = QP1*S2``, ...) and only what the outputs need
is kept (SYMORO+ section 7; the ``Equations:`` of the OpenSYMORO RX90_*.txt
files).  A :class:`Program` records such a program while a model is built:

- :meth:`Program.assign` names an expression, returns a symbol standing for it
  and hands back trivial values (numbers, symbols, minus a symbol) unchanged,
  so that zeros and ones of a customized robot (alpha = pi/2, r = 0, ...)
  make terms vanish while the model is generated rather than afterwards;
- the same expression assigned twice gives the same symbol;
- :meth:`Program.sin_cos` names ``C1 = cos(th1)``, ``S1 = sin(th1)`` once;
- :func:`simplify_trig_products` applies the trigonometric rules (compound
  angles, ``C**2 + S**2 = 1``) described there;
- :meth:`Program.prune` drops the assignments no output needs;
- :func:`count_ops` and :meth:`Program.op_count` count operations the way
  SYMORO reports them.

Nothing here calls :func:`sympy.simplify`, :func:`sympy.expand` or
:func:`sympy.trigsimp`: every rule is a local rewrite whose cost does not grow
with the size of the model, so long recursions (Newton-Euler) stay fast.
"""

import builtins
import contextlib
import gc
import itertools
import keyword
import re
from collections import Counter
from typing import Any

import numpy
import sympy
from sympy.printing.numpy import NumPyPrinter

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot.expressions import CONSTANTS, FUNCTIONS
from kanerobot.symbolic.printing import latex_lines, program_rows

__all__ = ["NameCollisionError", "Program", "collection_paused", "count_ops", "is_trivial", "simplify_trig_products"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

#: Names no assignment may take: they would read as a function or a constant
#: in the printed program (``pi``, ``cos``, ...).
DEFAULT_RESERVED = frozenset(FUNCTIONS) | frozenset(CONSTANTS) | {"E", "I", "oo", "nan", "zoo"}

#: Ways of defining a compound angle found by the trig rules.
COMPOUND_MODES = ("products", "angle")


class NameCollisionError(KaneRobotError, ValueError):
    """An assignment or output name is already taken (input, reserved, assigned)."""


def is_trivial(expr):
    """True when ``expr`` is a number, a symbol or minus one of these.

    Trivial values are never given a name: they cost nothing to use, and
    keeping them in place is what makes zeros and ones propagate.

    Examples
    --------
    >>> x, y = sympy.symbols("x y")
    >>> is_trivial(-x), is_trivial(sympy.pi), is_trivial(2 * x), is_trivial(x + y)
    (True, True, False, False)
    """
    if expr.is_Atom:
        return True
    return expr.is_Mul and len(expr.args) == 2 and expr.args[0] is sympy.S.NegativeOne and expr.args[1].is_Atom


# --------------------------------------------------------------------------
# Operation counts
# --------------------------------------------------------------------------


def count_ops(expr):
    """Count the operations of one expression the way SYMORO reports them.

    Conventions:

    - ``a + b + c`` is 2 additions; a subtraction is an addition and a
      negation is free (``-a - b`` is 1 addition);
    - ``a*b*c`` is 2 multiplications; a division is a multiplication
      (``a/b`` is 1, ``1/(a*b)`` is 2); a numeric factor other than -1 is a
      multiplication (``2*a`` is 1, ``-a`` is 0, ``a/2`` is 1);
    - an integer power ``x**n`` is n - 1 multiplications (``x**2`` is 1), and
      ``x**-n`` adds one division to that;
    - any other power (``sqrt(x)``, ``x**y``, ``exp(x)``) and every function
      call (``sin``, ``cos``, ``atan2``, ``sign``, ...) is one function.

    Parameters
    ----------
    expr : sympy.Expr

    Returns
    -------
    dict
        ``{"add": int, "mul": int, "fn": int}``.

    Examples
    --------
    >>> a, b, c, d, e, f = sympy.symbols("a b c d e f")
    >>> count_ops(a*b*c + d/e - f**2)
    {'add': 2, 'mul': 4, 'fn': 0}
    >>> count_ops(-2*sympy.cos(a) + sympy.sqrt(b))
    {'add': 1, 'mul': 1, 'fn': 2}
    """
    counts = {"add": 0, "mul": 0, "fn": 0}
    _count(sympy.sympify(expr), counts)
    return counts


def _count(expr, counts):
    if expr.is_Atom:
        return
    if expr.is_Add:
        counts["add"] += len(expr.args) - 1
        for term in expr.args:
            _count(term, counts)
        return
    if expr.is_Mul:
        numerators, denominators = 0, 0
        for factor in expr.args:
            if factor.is_Number:
                # -1 becomes a subtraction or a free negation; 1/2 or 3 is a product.
                numerators += factor not in (sympy.S.One, sympy.S.NegativeOne)
            elif factor.is_Pow and factor.exp.is_Integer and factor.exp < 0:
                denominators += 1
                _count_power(factor.base, -factor.exp, counts)
            else:
                numerators += 1
                _count(factor, counts)
        counts["mul"] += denominators + max(numerators - 1, 0)
        return
    if expr.is_Pow:
        if expr.exp.is_Integer:
            _count_power(expr.base, abs(expr.exp), counts)
            counts["mul"] += int(bool(expr.exp.is_negative))
            return
        counts["fn"] += 1
        for arg in expr.args:
            _count(arg, counts)
        return
    # Function calls and anything else that is not arithmetic.
    counts["fn"] += 1
    for arg in expr.args:
        _count(arg, counts)


def _count_power(base, n, counts):
    counts["mul"] += int(n) - 1
    _count(base, counts)


def _total(expr):
    counts = count_ops(expr)
    return counts["add"] + counts["mul"] + counts["fn"]


# --------------------------------------------------------------------------
# The program
# --------------------------------------------------------------------------


class _Angle:
    """An angle the program has C and S symbols for."""

    __slots__ = ("angle", "cos", "index", "label", "sin")

    def __init__(self, index, angle, label, cos, sin):
        self.index, self.angle, self.label, self.cos, self.sin = index, angle, label, cos, sin



@contextlib.contextmanager
def collection_paused():
    """Python's cyclic garbage collector off while a model is derived (back as it was after).

    A derivation makes millions of sympy objects that all live until it
    ends, and no cycles among them: each full collection the allocations
    trigger walks them all and frees nothing (a third of the time of a
    24-link chain's Coriolis matrix).  The garbage a derivation leaves is
    collected by the next collection after it.  Nested uses leave the
    collector to the outermost.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Program:
    """An ordered list of assignments ``name = expr`` and named outputs.

    Parameters
    ----------
    inputs : iterable of sympy.Symbol or str, optional
        Symbols the program reads (joint variables, geometric and inertial
        parameters).  Their order is the argument order of
        :meth:`to_function`.  Free symbols met later in assigned expressions
        are added as inputs too, but declaring them first is what protects
        their names: a name assigned before the symbol is first seen cannot
        be told apart from it.
    reserved : iterable of str, optional
        More names no assignment may take, besides the inputs and
        :data:`DEFAULT_RESERVED`: the names of outputs to come (an output
        may take a reserved name).
    trig : bool, optional
        Default of the ``trig`` argument of :meth:`assign`: apply
        :func:`simplify_trig_products` to every assigned expression.
    compound : {"products", "angle"}, optional
        How a compound angle found by the trig rules is defined:
        ``C23 = C2*C3 - S2*S3`` (``"products"``, the convention of the
        OpenSYMORO RX90_jac.txt equations, no function call) or
        ``C23 = cos(th2 + th3)`` (``"angle"``).
    on_collision : {"rename", "raise"}, optional
        What :meth:`assign` does with a name that is taken: use the first
        free ``name_1``, ``name_2``, ... (the returned symbol carries the new
        name) or raise :class:`NameCollisionError`.

    Examples
    --------
    >>> th1, L = sympy.symbols("th1 L")
    >>> p = Program(inputs=[th1, L])
    >>> C1, S1 = p.sin_cos(th1, "1")
    >>> x = p.assign("PX", L * C1)
    >>> p.set_output("X", x + 1)
    'X'
    >>> print(p)  # only what the output needs: S1 is dead code
    C1 = cos(th1)
    PX = C1*L
    X = PX + 1
    >>> p.prune()
    1
    >>> p.op_count()
    {'add': 1, 'mul': 1, 'fn': 1}
    >>> float(p.to_function()(0.0, 2.0)[0])
    3.0
    """

    def __init__(self, inputs=(), reserved=(), trig=False, compound="products", on_collision="rename"):
        if compound not in COMPOUND_MODES:
            raise ValueError(f"compound must be one of {COMPOUND_MODES}, got {compound!r}")
        if on_collision not in ("rename", "raise"):
            raise ValueError(f"on_collision must be 'rename' or 'raise', got {on_collision!r}")
        self.trig = bool(trig)
        self.compound = compound
        self.on_collision = on_collision
        self._reserved = set(DEFAULT_RESERVED) | {str(name) for name in reserved}
        self._inputs: dict[str, sympy.Symbol] = {}  # name -> Symbol, in order of declaration then discovery
        for item in inputs:
            sym = sympy.Symbol(item) if isinstance(item, str) else item
            if not isinstance(sym, sympy.Symbol):
                raise TypeError(f"inputs must be symbols or names, got {item!r}")
            self._inputs.setdefault(sym.name, sym)
        self._declared = len(self._inputs)
        self._defs = {}  # Symbol -> expr, in program order
        self._cache = {}  # expr -> Symbol (common subexpressions)
        # _terms_key(expr) -> expr, for the expressions of _cache: finds the negation of an expression
        # without forming it (-(a + b + ...) builds a product per term and sorts a new sum).
        self._keyed = {}
        self._outputs = {}  # name -> expr
        self._pruned = set()  # names dropped by prune(): using them again is an error
        self._angles = {}  # angle expr -> _Angle
        self._trig_of = {}  # C or S symbol -> ("C" | "S", _Angle)
        self._compounds = []  # C23, S23, ... made by the trig rules, in program order
        self._before_trig = {}  # assigned symbol -> its expression before the trig rules rewrote it
        self._flat = {}  # Symbol -> (coefficient, Counter) for monomial definitions
        # Symbol -> the assigned symbols its definition reads, kept with _defs: needed() and the
        # pruning walk the program many times, and free_symbols of a large expression is a tree walk.
        self._reads = {}
        self._def_names = set()  # the names of _defs, for _taken (no Symbol made per name tried)

    # ----------------------------------------------------------------- names

    def _taken(self, name, output=False):
        # Reserved names are kept for outputs: only assignments avoid them.
        reserved = DEFAULT_RESERVED if output else self._reserved
        return (
            name in reserved
            or name in self._inputs
            or name in self._outputs
            or name in self._pruned
            or name in self._def_names
        )

    def _fresh(self, name):
        for k in itertools.count(1):
            candidate = f"{name}_{k}"
            if not self._taken(candidate):
                return candidate

    def _claim(self, name, what, force_rename=False):
        if not isinstance(name, str) or not _NAME.match(name):
            raise NameCollisionError(f"{name!r} is not a valid {what} name (letters, digits and '_', starting with a letter)")
        if not self._taken(name, output=what == "output"):
            return name
        if self.on_collision == "raise" and not force_rename:
            raise NameCollisionError(f"{what} name {name!r} is already taken by an input, a reserved name or an assignment")
        return self._fresh(name)

    def _see_inputs(self, expr, free=None):
        """Record the unknown free symbols of ``expr`` (``free``, when known) as inputs; return its free symbols."""
        free = _free_symbols(expr) if free is None else free
        names = []
        for sym in free:
            if sym in self._defs:
                continue
            if sym.name in self._pruned:
                raise ValueError(f"{sym.name} was removed by prune(): it cannot be used again")
            if sym.name not in self._inputs:
                names.append(sym)
        for sym in sorted(names, key=lambda s: s.name):
            self._inputs[sym.name] = sym
        return free

    def _define(self, sym, expr, free=None):
        """Set ``sym = expr`` in :attr:`_defs` with what it reads (``free``: its free symbols, when known)."""
        self._reads[sym] = frozenset((expr.free_symbols if free is None else free) & self._defs.keys())
        self._defs[sym] = expr
        self._def_names.add(sym.name)

    # ----------------------------------------------------------- recording

    def splice(self, program, mapping=None):
        """Copy ``program``'s assignments into this program, renamed where a name is taken.

        Parameters
        ----------
        program : Program
            Whose inputs are symbols of this program (or keys of ``mapping``).
        mapping : dict, optional
            ``{symbol of program: expression here}``, extended with the renamed
            assignments.

        Returns
        -------
        dict
            ``program``'s outputs, ``{name: expression}`` in this program's symbols.
        """
        mapping = {} if mapping is None else mapping
        for sym, expr in program.assignments():
            value = self.assign(sym.name, expr.xreplace(mapping), trig=False)
            if value != sym:
                mapping[sym] = value
        return {name: expr.xreplace(mapping) for name, expr in program.outputs.items()}

    def assign(self, name, expr, trig=None):
        """Record ``name = expr`` unless ``expr`` is trivial or already named.

        Parameters
        ----------
        name : str
            Wanted name; see ``on_collision`` for what happens when it is taken.
        expr : sympy.Expr or number
            Expression of inputs and of symbols returned by this program.
        trig : bool, optional
            Apply :func:`simplify_trig_products` first (default: the
            program's ``trig``).

        Returns
        -------
        sympy.Expr
            ``expr`` itself when trivial (see :func:`is_trivial`), the symbol
            of an earlier identical assignment (or minus it, for the negated
            expression), else the new ``Symbol(name)``.

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> p = Program(inputs=[a, b])
        >>> p.assign("U", a * b), p.assign("V", -a * b), p.assign("W", 0 * a + b)
        (U, -U, b)
        >>> len(p)
        1
        """
        expr = sympy.sympify(expr)
        if not (self.trig if trig is None else trig):
            return self._record(name, expr)
        free = _free_symbols(expr)
        if not self._rewritable(free):  # what simplify_trig_products would find at once
            return self._record(name, expr, free=free)
        rewritten = simplify_trig_products(expr, self)
        count = len(self._defs)
        result = self._record(name, rewritten, free=free if rewritten is expr else None)
        if rewritten != expr and len(self._defs) > count:
            # Kept so that prune() can undo a compound angle that does not pay for itself.
            self._before_trig[result] = expr
        return result

    def _rewritable(self, free):
        """Whether the trig rules may change an expression of the symbols ``free``: a C/S symbol or one
        defined by a product is among them (:func:`_may_merge` of every sum of the expression fails otherwise)."""
        trig_of, flat = self._trig_of, self._flat
        if not trig_of:
            return False
        for sym in free:
            if sym in trig_of:
                return True
            monomial = flat[sym] if sym in flat else self._monomial_of(sym)
            if monomial is not None:
                return True
        return False

    def _record(self, name, expr, force_rename=False, free=None):
        if is_trivial(expr):
            self._see_inputs(expr, free)
            return expr
        known = self._cache.get(expr)
        if known is not None:
            return known
        key = _terms_key(expr)
        if key is None:
            known = self._cache.get(-expr)
        else:
            known = self._cache.get(self._keyed.get(_negated_key(key)))
        if known is not None:
            return -known
        free = self._see_inputs(expr, free)
        sym = sympy.Symbol(self._claim(name, "assignment", force_rename))
        self._define(sym, expr, free)
        self._remember(expr, sym, key)
        return sym

    def _remember(self, expr, sym, key=False):
        """Name ``expr`` by ``sym`` in the common subexpressions (``key``: its :func:`_terms_key`, when known)."""
        self._cache[expr] = sym
        key = _terms_key(expr) if key is False else key
        if key is not None:
            self._keyed[key] = expr

    def assign_matrix(self, names, M, trig=None):
        """Assign every element of a matrix; see :meth:`assign`.

        Parameters
        ----------
        names : str or callable or nested sequence
            A format string with fields ``{i}`` and ``{j}`` (1-based row and
            column, SYMORO's numbering, e.g. ``"T{i}{j}"``), a plain prefix
            (gives ``prefix{i}{j}``, or ``prefix{i}`` for a column), a
            callable ``names(i, j)`` taking the 1-based indices, or a nested
            sequence of names shaped like ``M``.
        M : sympy.Matrix
        trig : bool, optional

        Returns
        -------
        sympy.Matrix
            The returned symbols and trivial values, shaped like ``M``.

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> Program().assign_matrix("R{i}{j}", sympy.Matrix([[a * b, 0], [1, a + b]]))
        Matrix([
        [R11,   0],
        [  1, R22]])
        """
        rows = _rows(M)
        shape = (len(rows), len(rows[0]) if rows else 0)
        name_of = _namer(names, shape)
        # The entries as a list, then one Matrix of them (they are sympy objects: no conversion): making a
        # Matrix costs more than assigning a short entry, and setting entries one by one more still.
        return sympy.Matrix._new(*shape, [self.assign(name_of(i, j), x, trig) for i, row in enumerate(rows) for j, x in enumerate(row)], copy=False)

    def sin_cos(self, angle, label):
        """Return ``(C, S)`` for ``cos(angle)`` and ``sin(angle)``, named once.

        Parameters
        ----------
        angle : sympy.Expr or number
        label : str
            Suffix of the names: ``C{label} = cos(angle)``,
            ``S{label} = sin(angle)``.

        Returns
        -------
        tuple of sympy.Expr
            Exact values for a numeric angle (``0``, ``1``, ``-1`` for
            multiples of pi/2, ``sqrt(2)/2`` named like any constant, a float
            for a float angle).  An angle ``q + k*pi/2`` is reduced to the
            symbols of ``q`` (``cos(q + pi/2) = -S``), which then carry
            ``label``.  A second call with the same angle returns the same
            pair whatever its label.

        Examples
        --------
        >>> th2 = sympy.Symbol("th2")
        >>> p = Program(inputs=[th2])
        >>> p.sin_cos(sympy.pi / 2, "a2")
        (0, 1)
        >>> p.sin_cos(th2, "2"), p.sin_cos(th2 + sympy.pi / 2, "x")
        ((C2, S2), (-S2, C2))
        >>> print(p)
        C2 = cos(th2)
        S2 = sin(th2)
        """
        angle = sympy.sympify(angle)
        known = self._angles.get(angle)
        if known is not None:
            return known.cos, known.sin
        if angle.could_extract_minus_sign():
            # cos(-q) = cos(q), sin(-q) = -sin(q): one pair of symbols for both.
            c, s = self.sin_cos(-angle, label)
            return c, -s
        if not angle.free_symbols:
            turns = angle / (sympy.pi / 2)
            if turns.is_Integer:
                return _QUARTER_TURNS[int(turns) % 4]
            return (self._record(f"C{label}", sympy.cos(angle)), self._record(f"S{label}", sympy.sin(angle)))
        # Split off a multiple of pi/2: cos(q + pi/2) = -sin(q), and so on.
        constant, variable = angle.as_independent(*angle.free_symbols, as_Add=True)
        turns = constant / (sympy.pi / 2)
        if constant != 0 and turns.is_Integer:
            c, s = self.sin_cos(variable, label)
            cq, sq = _QUARTER_TURNS[int(turns) % 4]
            return c * cq - s * sq, s * cq + c * sq
        c = self._record(f"C{label}", sympy.cos(angle))
        s = self._record(f"S{label}", sympy.sin(angle))
        self._angle_record(angle, label, c, s)
        return c, s

    def _angle_record(self, angle, label, c, s):
        record = _Angle(len(self._angles), angle, label, c, s)
        self._angles[angle] = record
        self._trig_of[c] = ("C", record)
        self._trig_of[s] = ("S", record)
        return record

    def _compound(self, first, second):
        """C and S of the sum of two recorded angles (used by the trig rules)."""
        angle = first.angle + second.angle
        known = self._angles.get(angle)
        if known is not None:
            return known
        label = first.label + second.label
        if self.compound == "products":
            c_expr = first.cos * second.cos - first.sin * second.sin
            s_expr = first.sin * second.cos + first.cos * second.sin
        else:
            c_expr, s_expr = sympy.cos(angle), sympy.sin(angle)
        # Compound names are ours, not the caller's: always pick a free one.
        c = self._record(f"C{label}", c_expr, force_rename=True)
        s = self._record(f"S{label}", s_expr, force_rename=True)
        if not (isinstance(c, sympy.Symbol) and isinstance(s, sympy.Symbol)) or c in self._trig_of or s in self._trig_of:
            return None
        self._compounds += [c, s]
        return self._angle_record(angle, label, c, s)

    def replace_sin_cos(self, expr, labels=None):
        """Replace every ``cos(a)`` and ``sin(a)`` in ``expr`` by program symbols.

        Parameters
        ----------
        expr : sympy.Expr or sympy.Matrix
        labels : dict or callable, optional
            Label of each angle (``labels[a]`` or ``labels(a)``); by default
            the trailing digits of a symbol's name (``th3`` gives ``3``), else
            its whole name.

        Examples
        --------
        >>> th3, alpha = sympy.symbols("th3 alpha")
        >>> p = Program(inputs=[th3])
        >>> p.replace_sin_cos(sympy.cos(th3) * sympy.sin(alpha) + sympy.cos(sympy.pi / 2))
        C3*Salpha
        """
        expr = sympy.sympify(expr)
        found = sorted(expr.atoms(sympy.sin, sympy.cos), key=sympy.default_sort_key)
        mapping = {}
        for fn in found:
            angle = fn.args[0]
            if labels is None:
                label = _default_label(angle)
            elif callable(labels):
                label = labels(angle)
            else:
                label = labels[angle]
            c, s = self.sin_cos(angle, label)
            mapping[fn] = c if fn.func is sympy.cos else s
        return expr.xreplace(mapping)

    def set_output(self, name, expr, trig=None):
        """Declare an output ``name = expr``; returns the name used.

        An output that is the symbol of an assignment with the same name makes
        that assignment the output (it is printed once).  Outputs are
        printed and evaluated in the order they are set.

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> p = Program(inputs=[a, b])
        >>> p.set_output("GAM1", p.assign("U", a * b) + a)
        'GAM1'
        >>> p.outputs
        {'GAM1': U + a}
        """
        expr = sympy.sympify(expr)
        if self.trig if trig is None else trig:
            expr = simplify_trig_products(expr, self)
        self._see_inputs(expr)
        if isinstance(expr, sympy.Symbol) and expr.name == name and expr in self._defs:
            self._outputs[name] = expr
            return name
        if name in self._outputs:
            raise NameCollisionError(f"output {name!r} is already set")
        name = self._claim(name, "output")
        self._outputs[name] = expr
        return name

    def set_output_matrix(self, names, M, trig=None):
        """Declare every element of ``M`` an output; ``names`` as in :meth:`assign_matrix`.

        Returns the matrix of the names used.

        Examples
        --------
        >>> a = sympy.Symbol("a")
        >>> Program(inputs=[a]).set_output_matrix("J{i}{j}", sympy.Matrix([[a, 0]]))
        Matrix([[J11, J12]])
        """
        M = sympy.Matrix(M)
        name_of = _namer(names, M.shape)
        out = sympy.zeros(*M.shape)
        for i in range(M.rows):
            for j in range(M.cols):
                out[i, j] = sympy.Symbol(self.set_output(name_of(i, j), M[i, j], trig))
        return out

    # -------------------------------------------------------------- queries

    def __len__(self):
        return len(self._defs)

    def __str__(self):
        lines = [f"{sym.name} = {sympy.sstr(expr)}" for sym, expr in self.assignments()]
        lines += [f"{name} = {sympy.sstr(expr)}" for name, expr in self.output_lines()]
        return "\n".join(lines)

    def __repr__(self):
        return f"<Program: {len(self._defs)} assignments, {len(self._outputs)} outputs>"

    #: Lines a notebook shows of a program (:meth:`_repr_latex_`); the rest is counted.
    LATEX_LINES = 200

    def _repr_latex_(self):
        """The program as LaTeX, one aligned equation per line: how Jupyter displays it.

        Assignments, then outputs (as :meth:`__str__`), each ``name &=
        expression`` in LaTeX (SYMORO's names kept whole, ``\\mathrm{WI12}``); after :attr:`LATEX_LINES` lines, one
        line says how many are left out (a notebook renders a few hundred
        equations, not the thousands of a large model's program).

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> p = Program(inputs=[a, b])
        >>> p.set_output("Y", p.assign("U", a * b) + 1)
        'Y'
        >>> print(p._repr_latex_())
        $\\begin{aligned}U &= a b \\\\
        Y &= U + 1\\end{aligned}$
        """
        lines = program_rows(self)
        shown = latex_lines(lines[: self.LATEX_LINES])
        if len(lines) > self.LATEX_LINES:
            shown.append(f"&\\text{{... {len(lines) - self.LATEX_LINES} more lines (print the program for all)}}")
        return "$\\begin{aligned}" + " \\\\\n".join(shown) + "\\end{aligned}$"

    @property
    def inputs(self):
        """Input symbols: declared ones first, then the others as met."""
        return tuple(self._inputs.values())

    @property
    def outputs(self):
        """Outputs as a dict ``name -> expr`` (a copy)."""
        return dict(self._outputs)

    def definition(self, symbol):
        """Right-hand side of an assignment, or ``None`` for other symbols."""
        return self._defs.get(symbol)

    def needed(self):
        """Set of the assigned symbols the outputs need (all of them if no outputs)."""
        if not self._outputs:
            return set(self._defs)
        needed = set()
        for expr in self._outputs.values():
            needed |= expr.free_symbols & self._defs.keys()
        # Definitions come before their uses, so one backward pass suffices.
        reads = self._reads
        for sym in reversed(self._defs):
            if sym in needed:
                needed |= reads[sym]
        return needed

    def assignments(self, include_dead=False):
        """``[(symbol, expr), ...]`` in program order, only the needed ones unless ``include_dead``."""
        if include_dead:
            return list(self._defs.items())
        needed = self.needed()
        return [(sym, expr) for sym, expr in self._defs.items() if sym in needed]

    def used_inputs(self):
        """The symbols the outputs read that no assignment defines, through the needed assignments.

        Examples
        --------
        >>> a, b, c = sympy.symbols("a b c")
        >>> p = Program(inputs=[a, b, c])
        >>> p.set_output("Y", p.assign("U", a * b) + 1)
        'Y'
        >>> sorted(p.used_inputs(), key=str)
        [a, b]
        """
        used = set()
        for _, expr in list(self.assignments()) + list(self._outputs.items()):
            used |= expr.free_symbols
        return used - set(self._defs)

    def output_lines(self):
        """``[(name, expr), ...]`` of the outputs that are not an assignment printed already."""
        return [
            (name, expr)
            for name, expr in self._outputs.items()
            if not (isinstance(expr, sympy.Symbol) and expr.name == name and expr in self._defs)
        ]

    def prune(self):
        """Drop the assignments no output needs; returns how many were dropped.

        A program without outputs keeps everything.  The names dropped stay
        taken, and using their symbols again raises ``ValueError``.

        First, a compound angle of the trig rules (``C23 = C2*C3 - S2*S3``)
        that does not pay for its definition is undone: the assignments
        that use it get back the expressions they were given, when that
        makes the needed lines cheaper.  The rules merge terms one
        assignment at a time, so only here is it known whether ``C23`` saved
        more than the operations of its own line.

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> p = Program(inputs=[a, b])
        >>> u, v = p.assign("U", a * b), p.assign("V", a + b)
        >>> p.set_output("Y", 2 * u)
        'Y'
        >>> p.prune(), [s.name for s, _ in p.assignments(include_dead=True)]
        (1, ['U'])

        ``Y`` below was merged into ``S23*q`` (2 operations less), but
        ``S23`` costs 3 and nothing else uses it:

        >>> th2, th3, q = sympy.symbols("th2 th3 q")
        >>> p = Program(inputs=[th2, th3, q], trig=True)
        >>> (C2, S2), (C3, S3) = p.sin_cos(th2, "2"), p.sin_cos(th3, "3")
        >>> U, V = p.assign("U", q * S2), p.assign("V", q * C2)
        >>> p.set_output("Y", p.assign("Y", C3 * U + S3 * V)), p.set_output("Z", U * V)
        ('Y', 'Z')
        >>> p.definition(sympy.Symbol("Y"))
        S23*q
        >>> p.prune(), p.definition(sympy.Symbol("Y"))
        (2, C3*U + S3*V)
        """
        if self._outputs:
            self._undo_unprofitable_compounds()
        needed = self.needed()
        dropped = [sym for sym in self._defs if sym not in needed]
        for sym in dropped:
            expr = self._defs.pop(sym)
            del self._reads[sym]
            self._def_names.discard(sym.name)
            if self._cache.get(expr) == sym:
                del self._cache[expr]
            self._pruned.add(sym.name)
        if dropped:
            gone = set(dropped)
            self._compounds = [sym for sym in self._compounds if sym not in gone]
            # An expression before the trig rules may read a dropped symbol: it cannot come back.
            self._before_trig = {
                sym: expr for sym, expr in self._before_trig.items() if sym not in gone and not expr.free_symbols & gone
            }
            for angle, record in list(self._angles.items()):
                if record.cos in gone or record.sin in gone:
                    # Half a C/S pair cannot be reused: forget the angle.
                    del self._angles[angle]
                    self._trig_of.pop(record.cos, None)
                    self._trig_of.pop(record.sin, None)
            self._flat.clear()
        return len(dropped)

    def _undo_unprofitable_compounds(self):
        """Undo the compound angles that cost more than they save.

        For each compound symbol, newest first (``C234`` before the ``C23``
        its definition reads): when every needed line that uses it is an
        assignment the trig rules rewrote (not an output, not a value handed
        back to the caller), those lines are set back to their expressions
        before the rules, and kept so only if the needed lines then cost
        fewer operations, or as many and fewer multiplications (the symbol
        and what only it needed are dropped by the pruning that follows).

        The needed lines and their cost are kept up to date by counting, for
        each line, the needed lines and outputs that read it (a line whose
        count falls to 0 is no longer needed, and neither are the lines only
        it read): each trial costs the lines it changes, not a pass over the
        program.
        """
        if not self._before_trig:
            return
        needed = _Needed(self, self._compounds)
        outputs = set().union(*(expr.free_symbols for expr in self._outputs.values()))
        for compound in reversed(self._compounds):
            if compound not in needed.lines or compound in outputs:
                continue
            users = needed.readers(compound)
            if not all(sym in self._before_trig and compound not in self._before_trig[sym].free_symbols for sym in users):
                continue
            before = needed.total
            rewritten = {sym: self._defs[sym] for sym in users}
            for sym in users:
                needed.redefine(sym, self._before_trig[sym])
            if needed.total < before:
                for sym in users:
                    del self._before_trig[sym]
                    if self._cache.get(rewritten[sym]) == sym:
                        del self._cache[rewritten[sym]]
                    if self._defs[sym] not in self._cache:
                        self._remember(self._defs[sym], sym)
                    self._flat.pop(sym, None)
            else:
                for sym in users:
                    needed.redefine(sym, rewritten[sym])

    def op_count(self):
        """Operations of the needed assignments and the outputs; see :func:`count_ops`.

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> p = Program(inputs=[a, b])
        >>> u = p.assign("U", a * b)
        >>> p.set_output("Y", u**2 - u)
        'Y'
        >>> p.op_count()
        {'add': 1, 'mul': 2, 'fn': 0}
        """
        total = {"add": 0, "mul": 0, "fn": 0}
        lines = [expr for _, expr in self.assignments()] + [expr for _, expr in self.output_lines()]
        for expr in lines:
            for key, value in count_ops(expr).items():
                total[key] += value
        return total

    def substitute_back(self):
        """Outputs as plain expressions of the inputs (for checking, not for speed).

        Examples
        --------
        >>> a, b = sympy.symbols("a b")
        >>> p = Program(inputs=[a, b])
        >>> p.set_output("Y", p.assign("U", a * b) + 1)
        'Y'
        >>> p.substitute_back()
        {'Y': a*b + 1}
        """
        values: dict[sympy.Symbol, sympy.Expr] = {}
        for sym, expr in self.assignments():
            values[sym] = expr.xreplace(values)
        return {name: expr.xreplace(values) for name, expr in self._outputs.items()}

    def to_function(self, args=None):
        """Numeric function evaluating the outputs with numpy.

        The program is printed as Python source (one line per needed
        assignment, sympy's numpy printer) and compiled once.

        Parameters
        ----------
        args : sequence of sympy.Symbol or str, optional
            Argument order; by default :attr:`inputs`.

        Returns
        -------
        callable
            ``f(*values)`` returning a float array of shape
            ``(number of outputs,) + broadcast shape of the values``.
            Attributes ``args``, ``outputs`` and ``source`` describe it.

        Raises
        ------
        ParameterError
            When the outputs need an input missing from ``args``.

        Examples
        --------
        >>> x = sympy.Symbol("x")
        >>> p = Program(inputs=[x])
        >>> C, S = p.sin_cos(x, "x")
        >>> p.set_output_matrix("Y{i}", sympy.Matrix([C**2 + S**2, 1]))
        Matrix([
        [Y1],
        [Y2]])
        >>> p.to_function()(numpy.array([0.1, 0.2]))
        array([[1., 1.],
               [1., 1.]])
        """
        if args is None:
            args = self.inputs
        args = [sympy.Symbol(a) if isinstance(a, str) else a for a in args]
        lines = self.assignments()
        outputs = list(self._outputs.items())
        used = set()
        for expr in [e for _, e in lines] + [e for _, e in outputs]:
            used |= expr.free_symbols
        missing = sorted((used - self._defs.keys()) - set(args), key=lambda s: s.name)
        if missing:
            raise ParameterError(f"the program needs {', '.join(s.name for s in missing)}: add them to args")
        # Program names are identifiers, but inputs may be anything sympy accepts.
        rename = {}
        for k, sym in enumerate(list(args) + [s for s, _ in lines]):
            if not _safe_identifier(sym.name):
                rename[sym] = sympy.Symbol(f"_v{k}")
        printer = NumPyPrinter({"fully_qualified_modules": True})
        arg_names = [rename.get(a, a).name for a in args]
        source = [f"def _program({', '.join(arg_names)}):"]
        for sym, expr in lines:
            source.append(f"    {rename.get(sym, sym).name} = {printer.doprint(expr.xreplace(rename))}")
        values = ", ".join(printer.doprint(expr.xreplace(rename)) for _, expr in outputs)
        source.append(f"    return ({values}{',' if len(outputs) == 1 else ''})")
        text = "\n".join(source) + "\n"
        namespace: dict[str, Any] = {"numpy": numpy}
        exec(compile(text, "<kanerobot.symbolic.Program>", "exec"), namespace)
        raw = namespace["_program"]

        def function(*values):
            results = raw(*values)
            if not results:
                return numpy.zeros((0,))
            return numpy.array(numpy.broadcast_arrays(*results), dtype=float)

        # the returned function carries its arguments, outputs and source (a function's own attributes, which mypy does not type)
        function.__dict__.update(args=tuple(args), outputs=tuple(name for name, _ in outputs), source=text)
        return function

    # ------------------------------------------------------ trig internals

    def _monomial_of(self, sym):
        """(coefficient, Counter of factors) when ``sym`` is defined by a monomial."""
        if sym in self._flat:
            return self._flat[sym]
        expr = self._defs.get(sym)
        flat = None
        if expr is not None and expr.is_Mul and all(_is_monomial_factor(f) for f in expr.args):
            flat = self._flatten(expr)
        self._flat[sym] = flat
        return flat

    def _flatten(self, term):
        """Term as (coefficient, Counter) with monomial assignments inlined."""
        coefficient, factors = sympy.S.One, Counter[sympy.Symbol]()
        for factor in sympy.Mul.make_args(term):
            if factor.is_Number:
                coefficient *= factor
                continue
            if factor.is_Pow and factor.exp.is_Integer and factor.exp > 0:
                base, power = factor.base, int(factor.exp)
            else:
                base, power = factor, 1
            inner = self._monomial_of(base) if base.is_Symbol else None
            if inner is None:
                factors[base] += power
            else:
                coefficient *= inner[0] if power == 1 else inner[0] ** power
                for b, p in inner[1].items():
                    factors[b] += p * power
        return coefficient, factors


class _Needed:
    """The needed lines of a program and their cost, kept up to date while definitions change.

    ``count[sym]`` is the number of needed lines and outputs that read
    ``sym``; a line is needed while its count is positive.  :meth:`redefine`
    changes one definition and follows the counts (the lines it now reads
    become needed, those no longer read by anything needed are not), so that
    :attr:`total`, ``(operations, multiplications)`` of the needed lines
    (:func:`count_ops`) less those they had at the start, is kept by the
    lines that change only.  :meth:`readers` answers for the symbols of
    ``watched`` (the compound angles).
    """

    def __init__(self, program, watched):
        self.program = program
        self.lines = program.needed()
        self.count: Counter[sympy.Symbol] = Counter()
        for expr in program._outputs.values():
            self.count.update(expr.free_symbols & program._defs.keys())
        self._watched = frozenset(watched)
        self._readers: dict[sympy.Symbol, list[sympy.Symbol]] = {}  # watched symbol -> the lines (needed or not) whose definition reads it
        for sym, reads in program._reads.items():
            if sym in self.lines:
                self.count.update(reads)
            for used in reads & self._watched:
                self._readers.setdefault(used, []).append(sym)
        self._costs = {}  # expression -> (operations, multiplications)
        self._order = None  # symbol -> position in the program, made when first needed
        self.total = (0, 0)

    def _cost(self, expr):
        found = self._costs.get(expr)
        if found is None:
            counts = count_ops(expr)
            found = self._costs[expr] = (counts["add"] + counts["mul"] + counts["fn"], counts["mul"])
        return found

    def _add(self, cost, sign=1):
        self.total = (self.total[0] + sign * cost[0], self.total[1] + sign * cost[1])

    def readers(self, sym):
        """The needed lines whose definition reads ``sym``, in program order."""
        found = {user for user in self._readers.get(sym, ()) if user in self.lines and sym in self.program._reads[user]}
        if len(found) < 2:
            return list(found)
        if self._order is None:  # no line is added while this is in use
            self._order = {line: k for k, line in enumerate(self.program._defs)}
        return sorted(found, key=self._order.__getitem__)

    def redefine(self, sym, expr):
        """Set the needed line ``sym`` to ``expr`` and follow what is needed."""
        program = self.program
        old_expr, old_reads = program._defs[sym], program._reads[sym]
        program._define(sym, expr)
        new_reads = program._reads[sym]
        for used in (new_reads - old_reads) & self._watched:
            self._readers.setdefault(used, []).append(sym)
        self._add(self._cost(old_expr), -1)
        self._add(self._cost(expr))
        self._follow(new_reads, 1)  # first what it reads now, so that nothing both read is dropped and taken back
        self._follow(old_reads, -1)

    def _follow(self, symbols, step):
        """Add ``step`` (+1 or -1) to the counts of ``symbols``, and follow the lines that become (un)needed."""
        program = self.program
        stack = list(symbols)
        while stack:
            sym = stack.pop()
            self.count[sym] += step
            if self.count[sym] == (1 if step > 0 else 0):
                if step > 0:
                    self.lines.add(sym)
                else:
                    self.lines.discard(sym)
                self._add(self._cost(program._defs[sym]), step)
                stack.extend(program._reads[sym])


def _free_symbols(expr):
    """``expr.free_symbols``, walking sums, products, powers and functions without sympy's property per node."""
    if expr.is_Symbol:
        return {expr}
    found, stack = set(), [expr]
    while stack:
        node = stack.pop()
        if not (node.is_Add or node.is_Mul or node.is_Pow or node.is_Function):
            found |= node.free_symbols  # anything else (an Atom, a Derivative ...) as sympy says
            continue
        for arg in node.args:
            if arg.is_Symbol:
                found.add(arg)
            elif not arg.is_Number:
                stack.append(arg)
    return found


def _terms_key(expr):
    """``expr`` as the frozenset of its terms ``(coefficient, other factors)``, or None when a coefficient is a float.

    Two expressions have the same key exactly when they are equal (a sum's
    terms have different other factors, and sympy writes a product's numeric
    coefficient first), and the key of ``-expr`` is that of ``expr`` with
    every coefficient negated (:func:`_negated_key`): the negation of an
    expression is looked up without being built.  Floats are left out: ``1.0*x``
    is not ``x``, yet the keys would not tell them apart.
    """
    terms = expr.args if expr.is_Add else (expr,)
    key = []
    rest: tuple[sympy.Basic, ...]
    for term in terms:
        if term.is_Number:
            coefficient, rest = term, ()
        elif term.is_Mul and term.args[0].is_Number:
            coefficient, rest = term.args[0], term.args[1:]
        else:
            coefficient, rest = sympy.S.One, term.args if term.is_Mul else (term,)
        if coefficient.is_Float:
            return None
        key.append((coefficient, rest))
    return frozenset(key)


def _negated_key(key):
    """The :func:`_terms_key` of ``-expr`` from that of ``expr``."""
    return frozenset((_OPPOSITE.get(coefficient) or -coefficient, rest) for coefficient, rest in key)


#: The coefficients of most terms, negated without sympy's arithmetic.
_OPPOSITE = {sympy.S.One: sympy.S.NegativeOne, sympy.S.NegativeOne: sympy.S.One}


_QUARTER_TURNS = (
    (sympy.S.One, sympy.S.Zero),
    (sympy.S.Zero, sympy.S.One),
    (sympy.S.NegativeOne, sympy.S.Zero),
    (sympy.S.Zero, sympy.S.NegativeOne),
)


def _is_monomial_factor(factor):
    if factor.is_Number or factor.is_Symbol:
        return True
    return factor.is_Pow and factor.base.is_Symbol and factor.exp.is_Integer and factor.exp > 0


def _safe_identifier(name):
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
        and name != "numpy"
        and not hasattr(builtins, name)
    )


def _default_label(angle):
    if isinstance(angle, sympy.Symbol):
        match = re.search(r"(\d+)$", angle.name)
        return match.group(1) if match else angle.name
    return re.sub(r"[^A-Za-z0-9]", "", str(angle)) or "a"


def _rows(M):
    """The rows of a matrix given as a sympy Matrix, a list of rows or a list of a column's entries."""
    if isinstance(M, sympy.MatrixBase):
        return M.tolist()
    if isinstance(M, (list, tuple)) and M and not any(isinstance(x, (list, tuple)) for x in M):
        return [[x] for x in M]
    return sympy.Matrix(M).tolist()


def _namer(names, shape):
    rows, cols = shape
    if callable(names):
        return lambda i, j: names(i + 1, j + 1)
    if isinstance(names, str):
        if "{" in names:
            return lambda i, j: names.format(i=i + 1, j=j + 1)
        if cols == 1:
            return lambda i, j: f"{names}{i + 1}"
        return lambda i, j: f"{names}{i + 1}{j + 1}"
    table = [list(row) if cols > 1 or not isinstance(row, str) else [row] for row in names]
    if len(table) != rows or any(len(row) != cols for row in table):
        raise ValueError(f"names must be shaped {rows}x{cols}")
    return lambda i, j: table[i][j]


# --------------------------------------------------------------------------
# Trigonometric rules
# --------------------------------------------------------------------------


def simplify_trig_products(expr, program):
    """Apply the compound-angle and ``C**2 + S**2 = 1`` rules of ``program``.

    Only the C/S symbols made by ``program`` (:meth:`Program.sin_cos` and the
    compound angles made here) take part.  In every sum (at any depth of
    ``expr``) two terms ``k*M*X`` and ``k'*M*Y``, with the same numeric
    coefficient up to sign and the same remaining factors ``M``, are merged
    when they read, for two different recorded angles a and b (Ca = cos(a),
    Sa = sin(a)):

    ===========================  ===================  ============
    terms                        becomes              angle
    ===========================  ===================  ============
    ``k*M*Ca*Cb - k*M*Sa*Sb``    ``k*M*C(a+b)``       a + b
    ``k*M*Sa*Cb + k*M*Ca*Sb``    ``k*M*S(a+b)``       a + b
    ``k*M*Ca**2 + k*M*Sa**2``    ``k*M``              (a = b)
    ===========================  ===================  ============

    so negated pairs (``-Ca*Cb + Sa*Sb`` gives ``-C(a+b)``) and any common
    factor are covered.  Factors that are program symbols defined by a pure
    product (``U = C1*C2``) are looked through, which is what finds
    ``C1*C23`` in ``U*C3 + V*S3`` with ``U = C1*C2`` and ``V = -C1*S2``.
    Terms that become alike when looked through are collected, and cancel
    (``R11*S1 - C1*R21`` is 0 with ``R11 = C1*C2``, ``R21 = C2*S1``).  A
    merge is kept only when the merged term costs fewer operations than the
    terms it replaces (a cancellation always is); whether a new compound
    angle pays for its own definition is only known once the program is
    complete, and :meth:`Program.prune` undoes those that do not.  The
    result is searched again, so ``C23*C4 - S23*S4`` gives ``C234``.
    Compound angles are named ``C{label_a}{label_b}`` (``C23``, ``S23``) and
    defined as the program's ``compound`` option says.

    Not recognised: differences of angles (``Ca*Cb + Sa*Sb``), double angles
    (``Ca**2 - Sa**2``), terms whose coefficients differ in size, and
    anything that needs expanding a product of sums first (nothing here
    expands).

    Parameters
    ----------
    expr : sympy.Expr
    program : Program

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> th2, th3, L = sympy.symbols("th2 th3 L")
    >>> p = Program(inputs=[th2, th3, L])
    >>> C2, S2 = p.sin_cos(th2, "2")
    >>> C3, S3 = p.sin_cos(th3, "3")
    >>> simplify_trig_products(L*C2*C3 - L*S2*S3 + S2**2 + C2**2, p)
    C23*L + 1
    >>> print(p)
    C2 = cos(th2)
    S2 = sin(th2)
    C3 = cos(th3)
    S3 = sin(th3)
    C23 = C2*C3 - S2*S3
    S23 = C2*S3 + C3*S2
    """
    if not program._trig_of:
        return expr
    return _rewrite(sympy.sympify(expr), program)


def _rewrite(expr, program):
    if expr.is_Atom:
        return expr
    # Atoms (most factors of a product) are left without a call; the expression is rebuilt only when an argument changed.
    old = expr.args
    args = None
    for k, arg in enumerate(old):
        if arg.is_Atom:
            continue
        new = _rewrite(arg, program)
        if new is not arg:
            if args is None:
                args = list(old)
            args[k] = new
    if args is not None:
        expr = expr.func(*args)
    if expr.is_Add:
        return _merge_terms(expr, program)
    return expr


def _signatures(flat, program):
    """Yield (key, partner key, coefficient ratio, rule, angles) of one term."""
    _coefficient, factors = flat
    trig = [(sym, program._trig_of[sym]) for sym in factors if sym in program._trig_of]
    for sym, (kind, record) in trig:
        if factors[sym] >= 2:
            rest = factors.copy()
            rest[sym] -= 2
            rest = frozenset((b, p) for b, p in rest.items() if p)
            role, partner = (kind + "2", "S2" if kind == "C" else "C2")
            yield ("one", record.index, role, rest), ("one", record.index, partner, rest), 1, "one", (record, record)
    for (u, (ku, ru)), (v, (kv, rv)) in itertools.combinations(trig, 2):
        if ru is rv or factors[u] != 1 or factors[v] != 1:
            continue
        if ru.index > rv.index:
            (u, ku, ru), (v, kv, rv) = (v, kv, rv), (u, ku, ru)
        rest = factors.copy()
        del rest[u], rest[v]
        rest = frozenset(rest.items())
        pair = (ru.index, rv.index)
        role = ku + kv
        if role in ("CC", "SS"):
            partner = "SS" if role == "CC" else "CC"
            yield ("cos",) + pair + (role, rest), ("cos",) + pair + (partner, rest), -1, "cos", (ru, rv)
        else:
            partner = "CS" if role == "SC" else "SC"
            yield ("sin",) + pair + (role, rest), ("sin",) + pair + (partner, rest), 1, "sin", (ru, rv)


def _merge_terms(expr, program):
    """Rewrite the sum ``expr`` with fewer operations: like terms collected, then pairs merged by a rule, until none applies."""
    terms = list(expr.args)
    if not _may_merge(terms, program):
        return expr
    placeholder = _PLACEHOLDER
    changed, rewritten = True, False
    while changed:
        changed = False
        flats = [program._flatten(term) for term in terms]
        used, merged = _merge_alike(terms, flats)
        if not used:
            used, merged = _merge_pairs(terms, flats, program, placeholder)
        if used:
            terms = [term for k, term in enumerate(terms) if k not in used] + merged
            changed = rewritten = True
    return sympy.Add(*terms) if rewritten else expr


#: Stands for the C or S of a compound angle while a merge is costed (replaced before anything is kept).
_PLACEHOLDER = sympy.Dummy("X")


def _may_merge(terms, program):
    """False when no rule can apply to the sum of ``terms``: the test :func:`_merge_terms` runs first.

    A pair rule needs a term with two C/S factors (counted with their powers)
    and collecting needs two terms alike once assignments are looked
    through, which takes a factor defined by a product (sympy has already
    collected the terms alike as they stand).  Telling so costs a fraction
    of building the flattened terms, and most sums of a model meet neither.
    """
    trig_of = program._trig_of
    for term in terms:
        trig = 0
        for factor in term.args if term.is_Mul else (term,):
            if factor.is_Number:
                continue
            if factor.is_Pow and factor.exp.is_Integer and factor.exp > 0:
                base, power = factor.base, int(factor.exp)
            else:
                base, power = factor, 1
            if not base.is_Symbol:
                continue
            if base in trig_of:
                trig += power
                if trig >= 2:
                    return True
            elif program._monomial_of(base) is not None:
                return True
    return False


def _merge_alike(terms, flats):
    """Terms alike once assignments are looked through, collected (or cancelled) where cheaper: (indices used, new terms)."""
    alike: dict[frozenset, list[int]] = {}  # the factors -> the terms that have them
    for k, (_, factors) in enumerate(flats):
        alike.setdefault(frozenset(factors.items()), []).append(k)
    used, merged = set(), []
    for factors, group in alike.items():
        if len(group) < 2:
            continue
        coefficient = sympy.Add(*(flats[k][0] for k in group))
        candidate = coefficient * sympy.Mul(*(b**p for b, p in factors))
        if coefficient == 0 or _total(candidate) < sum(_total(terms[k]) + 1 for k in group) - 1:
            used |= set(group)
            merged.append(candidate)
    return used, merged


def _merge_pairs(terms, flats, program, placeholder):
    """Pairs of terms one rule (sin^2 + cos^2, angle sums) merges into one cheaper term: (indices used, new terms)."""
    index: dict[tuple, list[int]] = {}  # signature key -> the terms that have it
    signatures = []
    for k, flat in enumerate(flats):
        own = list(_signatures(flat, program))
        signatures.append(own)
        for key, *_ in own:
            index.setdefault(key, []).append(k)
    used, merged = set(), []
    for k, own in enumerate(signatures):
        if k in used:
            continue
        for key, partner_key, ratio, rule, pair in own:
            for m in index.get(partner_key, ()):
                if m in used or m == k or flats[m][0] != ratio * flats[k][0]:
                    continue
                candidate = _pair_candidate(terms, flats, k, m, key, rule, pair, program, placeholder)
                if candidate is None:
                    continue
                used |= {k, m}
                merged.append(candidate)
                break
            if k in used:
                break
    return used, merged


def _pair_candidate(terms, flats, k, m, key, rule, pair, program, placeholder):
    """The term merging terms k and m by ``rule``, or None when it is not cheaper or the compound angle is unknown."""
    rest = sympy.Mul(*(b**p for b, p in key[-1]))
    # The cos rule keeps the coefficient of the C*C term.
    coefficient = flats[k][0]
    if rule == "cos" and key[3] == "SS":
        coefficient = flats[m][0]
    if rule == "one":
        candidate = coefficient * rest
    else:
        candidate = coefficient * rest * placeholder
    if _total(candidate) >= _total(terms[k]) + _total(terms[m]) + 1:
        return None
    if rule != "one":
        record = program._compound(*pair)
        if record is None:
            return None
        candidate = candidate.xreplace({placeholder: record.cos if rule == "cos" else record.sin})
    return candidate
