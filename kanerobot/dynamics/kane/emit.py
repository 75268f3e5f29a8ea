"""KanesMethod's expressions written as programs: every repeated subexpression named once.

:func:`emit` rebuilds sympy expressions as the values of a
:class:`~kanerobot.symbolic.Program`; :class:`KanesMethodWriter` makes a
program of KanesMethod's expressions with the kinematic definitions they use
(the KanesMethod path of :class:`~kanerobot.dynamics.kane.KaneSystem` and its
right-hand side terms).
"""

import sympy

from kanerobot.symbolic.program import Program, is_trivial


def emit(program, exprs, leaves, prefix, chunk=None, prepare=None):
    """``exprs`` rebuilt as program values, every repeated subexpression named.

    One pass over the expression DAG: leaves are mapped by ``leaves`` (real
    twins, dynamicsymbols), every distinct node is rebuilt once (so a
    substituted zero cancels what it multiplies), and a node met more than
    once is assigned to ``program`` as ``<prefix><k>``.  Linear in the size
    of the DAG (neither ``xreplace`` nor ``sympy.cse`` are: they rebuild or
    compare every occurrence).  With ``chunk``, sums of more terms are
    split into named partial sums of ``chunk`` terms (same operations,
    shorter lines; the Coriolis matrix no longer asks for them, since
    forward-mode differentiation takes sums and products apart node by
    node and remembers every node's derivative).  With ``prepare``, the
    leaves met are passed to ``prepare(found)`` once the DAG is walked, and
    the mapping it returns (the keys of ``leaves`` at least) replaces
    ``leaves``: the caller can then define in ``program`` only what they need.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.symbolic.program import Program
    >>> x, y, a = sympy.symbols("x y a")
    >>> p = Program(inputs=[a])
    >>> emit(p, [sympy.sin(x + y) ** 2, sympy.sin(x + y) * x], {x: a, y: 1}, "K")
    [K1**2, K1*a]
    >>> print(p)
    K1 = sin(a + 1)
    """
    exprs = [sympy.sympify(e) for e in exprs]
    counts, found = _count(exprs, leaves)
    if prepare is not None:
        leaves = prepare(found)
    memo: dict[sympy.Expr, sympy.Expr] = {}
    number = [0]

    def build(e):
        if e in leaves:
            return leaves[e]
        if e.is_Atom:
            return e
        done = memo.get(e)
        if done is not None:
            return done
        args = [build(a) for a in e.args]
        value = e.func(*args)
        while chunk and value.is_Add and len(value.args) > chunk:
            terms = value.args
            parts = []
            for start in range(0, len(terms), chunk):
                group = sympy.Add(*terms[start:start + chunk])
                if len(terms) - start > 1:
                    number[0] += 1
                    group = program.assign(f"{prefix}{number[0]}", group)
                parts.append(group)
            value = sympy.Add(*parts)
        if counts.get(e, 0) > 1 and not is_trivial(value):
            number[0] += 1
            value = program.assign(f"{prefix}{number[0]}", value)
        memo[e] = value
        return value

    return [build(e) for e in exprs]


def _count(exprs, leaves):
    """How often each node of the DAG of ``exprs`` is met, and the leaves found."""
    counts: dict[sympy.Expr, int] = {}
    found = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if e in leaves:
            found.add(e)
            continue
        if e.is_Atom:
            continue
        seen = counts.get(e, 0)
        counts[e] = seen + 1
        if not seen:
            stack.extend(e.args)
    return counts, found


class KanesMethodWriter:
    """Programs of KanesMethod's expressions, with the kinematic definitions they use.

    Parameters
    ----------
    system : KaneSystem
        Its :attr:`~kanerobot.dynamics.kane.KaneSystem.recursion` (the
        kinematic program) and :attr:`~kanerobot.dynamics.kane.KaneSystem.mechanics`
        (the angular velocities KanesMethod carries) are built on first use.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.kane import KaneSystem
    >>> system = KaneSystem(kr.load(kr.frames_path("planar2")))
    >>> print(KanesMethodWriter(system).program([("M11", system.mass_matrix_kane[0, 0])]))  # doctest: +ELLIPSIS
    C2 = cos(th2)
    ...
    M11 = ...
    """

    def __init__(self, system):
        self.system = system
        self._kinematic_deps = None

    def _leaves(self, values, speeds=True, accelerations=True):
        """How the leaves of KanesMethod's expressions become program values:
        real twins -> the robot's or the kinematic program's symbols (through
        ``values``), ``u`` -> QP, ``u'`` -> QDP (or 0)."""
        system = self.system
        out = {twin: values.get(plain, plain) for twin, plain in system.twins.plain.items()}
        # The angular velocities KanesMethod carries (sum_k JW_jk u_k + WB_j)
        # are the program's W_j: one name for both.
        W = system.recursion.W
        for j, omega in system.mechanics.omega.items():
            for r in range(3):
                if not omega[r].is_Atom and speeds:
                    w = W[j][r]
                    out[omega[r]] = values.get(w, w)
        for k in range(system.n):
            out[system.udot[k]] = system.acceleration_symbols[k] if accelerations else sympy.S.Zero
            out[system.u[k]] = system.speed_symbols[k] if speeds else sympy.S.Zero
        return out

    def _kinematics_needed(self, leaves):
        """The kinematic symbols the KanesMethod leaves ``leaves`` (real twins,
        angular velocity components) stand for, and every symbol their
        definitions use."""
        deps = self._kinematic_deps
        if deps is None:
            defs = dict(self.system.kinematics.assignments(include_dead=True))
            deps = self._kinematic_deps = {s: [x for x in e.free_symbols if x in defs] for s, e in defs.items()}
        plain, omega_symbols = self.system.twins.plain, self.system.mechanics.omega_symbols
        stack = []
        for leaf in leaves:
            symbol = plain.get(leaf)
            if symbol is None:
                symbol = omega_symbols.get(leaf)
            if symbol is not None and symbol in deps:
                stack.append(symbol)
        needed = set()
        while stack:
            sym = stack.pop()
            if sym not in needed:
                needed.add(sym)
                stack.extend(x for x in deps[sym] if x not in needed)
        return needed

    def program(self, outputs, *, speeds=True, finish=None, prefix="K", extra_inputs=(), chunk=None):
        """A program made of the kinematic definitions (with ``QP = 0`` when
        not ``speeds``) and of ``outputs``, a list of (name, expression of
        KanesMethod's symbols); ``finish(program, values)`` may turn the
        emitted values into the final list of (name, expression).  Pruned.

        Only the kinematic definitions the outputs use are copied (the
        leaves met by :func:`emit` and what their definitions need)."""
        system = self.system
        program = Program(inputs=list(system.inputs) + list(extra_inputs))
        keys = self._leaves({}, speeds=speeds, accelerations=False)

        def prepare(found):
            needed = self._kinematics_needed(found)
            # Values that are not the symbol itself (QP = 0, or a line the copy names otherwise).
            changed = {} if speeds else {v: sympy.S.Zero for v in system.speed_symbols if isinstance(v, sympy.Symbol)}
            values = {}
            for sym, expr in system.kinematics.assignments(include_dead=True):
                if sym in needed:
                    value = values[sym] = program.assign(sym.name, expr.xreplace(changed) if changed else expr)
                    if value != sym:
                        changed[sym] = value
            return self._leaves(values, speeds=speeds, accelerations=False)

        emitted = emit(program, [expr for _, expr in outputs], keys, prefix, chunk, prepare=prepare)
        lines = list(zip([name for name, _ in outputs], emitted))
        if finish is not None:
            lines = finish(program, lines)
        for name, expr in lines:
            program.set_output(name, expr)
        program.prune()
        return program
