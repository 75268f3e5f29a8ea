"""The printer pipeline shared by every language.

:class:`Backend` turns a :class:`~kanerobot.symbolic.Program` into the text of
one function.  It does everything that does not depend on the language:

- checks the argument groups (``[("q", [th1, ...]), ("p", [D3, ...])]``) and
  that they hold every input the chosen outputs need;
- lays the outputs out as a vector or a matrix (see :func:`output_layout`);
- keeps only the assignments the chosen outputs need, in program order;
- picks the name of every variable (see :meth:`Backend.variable_names`);
- walks the program: header, argument unpacking, one line per assignment,
  allocation of the result, one line per output entry, copies of the mirrored
  entries of a symmetric matrix, footer.

A language is a subclass that supplies a sympy printer (:meth:`make_printer`)
and the syntax of each of those pieces.  The subclasses live in
:mod:`kanerobot.codegen.python`, :mod:`~kanerobot.codegen.c`,
:mod:`~kanerobot.codegen.matlab` and :mod:`~kanerobot.codegen.julia`.
"""

import re
import textwrap

import sympy

from kanerobot.errors import KaneRobotError, ParameterError

__all__ = ["Backend", "CodegenError", "output_layout"]

_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class CodegenError(KaneRobotError, ValueError):
    """A program cannot be written in the requested language as asked."""


# --------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------


class Entry:
    """One entry of the result: where it goes, what it is called, its value.

    ``position`` is ``(k,)`` for a vector and ``(i, j)`` for a matrix
    (0-based); ``source`` is the position of the entry it copies (symmetric
    fill) or ``None``.
    """

    __slots__ = ("expr", "label", "position", "source")

    def __init__(self, position, label, expr, source=None):
        self.position, self.label, self.expr, self.source = position, label, expr, source

    def __repr__(self):
        if self.source is not None:
            return f"Entry({self.position}, {self.label!r}, copy of {self.source})"
        return f"Entry({self.position}, {self.label!r}, {self.expr})"


def _is_shape(outputs):
    return (
        isinstance(outputs, tuple)
        and len(outputs) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in outputs)
    )


def output_layout(program, outputs=None):
    """Shape and entries of the result of a generated function.

    Parameters
    ----------
    program : kanerobot.symbolic.Program
    outputs : None, list, tuple (rows, cols), nested list or sympy.Matrix
        What the function returns:

        - ``None``: every output of the program, in program order, as a
          vector;
        - a list of items: a vector of those items.  An item is the name of
          an output (or of an assignment), or any sympy expression of the
          program's inputs, assignments and outputs (output names used as
          symbols stand for the output);
        - a tuple ``(rows, cols)``: every output of the program as a
          matrix.  When the output names end with their 1-based row and
          column (``A12``, ``T0T6_34``, ``A1_12`` past 9; one common prefix,
          as :func:`~kanerobot.symbolic.printing.matrix_entry_names` makes
          them) each goes where its name says, whatever the program order,
          and names covering only the upper (or lower) triangle of a square
          matrix give a symmetric matrix (an inertia matrix).  Otherwise the
          outputs fill the matrix row by row, or, for a square ``(n, n)``
          and ``n*(n+1)/2`` outputs, its upper triangle row by row
          (``A11 A12 ... A1n A22 ... Ann``), the lower triangle being filled
          by symmetry;
        - a nested list (rows of items) or a ``sympy.Matrix`` of items: that
          matrix.  In a nested list ``None`` is the symmetric entry: it
          copies the entry at the transposed position, or is 0 when that one
          is ``None`` too or missing.

    Returns
    -------
    shape : tuple
        ``(m,)`` or ``(rows, cols)``.
    entries : list of Entry
        In row-major order; the copies come last.

    Raises
    ------
    CodegenError
        For an unknown output name, a shape that does not match the number
        of outputs, ragged rows or an empty result.

    Examples
    --------
    >>> from kanerobot.symbolic import Program
    >>> a, b = sympy.symbols("a b")
    >>> p = Program(inputs=[a, b])
    >>> for name, value in [("A11", a), ("A12", a * b), ("A22", b)]:
    ...     _ = p.set_output(name, value)
    >>> shape, entries = output_layout(p, (2, 2))  # placed by the names
    >>> shape
    (2, 2)
    >>> entries
    [Entry((0, 0), 'A11', a), Entry((0, 1), 'A12', a*b), Entry((1, 1), 'A22', b), Entry((1, 0), 'A12', copy of (0, 1))]
    >>> output_layout(p, ["A22", sympy.Symbol("A11") + 1])[1]
    [Entry((0,), 'A22', b), Entry((1,), 'A11 + 1', a + 1)]
    """
    defined = program.outputs
    if outputs is None:
        if not defined:
            raise CodegenError("the program has no outputs: set some, or pass outputs=")
        items = list(defined)
        return (len(items),), [Entry((k,), *_item(program, defined, item)) for k, item in enumerate(items)]
    if _is_shape(outputs):
        rows, cols = outputs
        names = list(defined)
        grid = _grid_by_indices(names, rows, cols)
        if grid is not None:
            pass
        elif len(names) == rows * cols:
            grid = [names[i * cols:(i + 1) * cols] for i in range(rows)]
        elif rows == cols and len(names) == rows * (rows + 1) // 2:
            grid, it = [], iter(names)
            for i in range(rows):
                grid.append([None] * i + [next(it) for _ in range(i, cols)])
        else:
            raise CodegenError(
                f"the program has {len(names)} outputs: a {rows}x{cols} matrix needs {rows * cols}"
                + (f" (or {rows * (rows + 1) // 2} for an upper triangle)" if rows == cols else "")
            )
        return _matrix(program, defined, grid)
    if isinstance(outputs, sympy.MatrixBase):
        return _matrix(program, defined, outputs.tolist())
    if isinstance(outputs, str):
        raise CodegenError("outputs must be a list of names, not one string")
    items = list(outputs)
    if not items:
        raise CodegenError("outputs is empty")
    if all(isinstance(item, (list, tuple)) for item in items):
        return _matrix(program, defined, [list(row) for row in items])
    return (len(items),), [Entry((k,), *_item(program, defined, item)) for k, item in enumerate(items)]


def _grid_by_indices(names, rows, cols):
    """Grid of output names placed by the indices their names end with, or None.

    Names follow :func:`kanerobot.symbolic.printing.matrix_entry_names`:
    one prefix, then the 1-based row and column (``A12``, ``T0T6_34``; with
    ``_`` between them, ``A1_12``, when a dimension exceeds 9).  They must
    name every entry, or exactly the upper or the lower triangle of a square
    matrix (the other triangle is then mirrored).
    """
    pattern = re.compile(r"^(.*?)(\d+)_(\d+)$" if max(rows, cols) > 9 else r"^(.*)(\d)(\d)$")
    placed, prefixes = {}, set()
    for name in names:
        match = pattern.match(name)
        if not match:
            return None
        i, j = int(match.group(2)) - 1, int(match.group(3)) - 1
        if not (0 <= i < rows and 0 <= j < cols) or (i, j) in placed:
            return None
        placed[i, j] = name
        prefixes.add(match.group(1))
    if len(prefixes) != 1:
        return None
    cells = {(i, j) for i in range(rows) for j in range(cols)}
    if set(placed) == cells:
        pass
    elif rows != cols or set(placed) not in (
        {(i, j) for i, j in cells if i <= j},
        {(i, j) for i, j in cells if i >= j},
    ):
        return None
    return [[placed.get((i, j)) for j in range(cols)] for i in range(rows)]


def _matrix(program, defined, grid):
    rows = len(grid)
    cols = len(grid[0]) if rows else 0
    if not rows or not cols:
        raise CodegenError("the output matrix is empty")
    if any(len(row) != cols for row in grid):
        raise CodegenError("the rows of the output matrix have different lengths")
    entries, copies = [], []
    for i in range(rows):
        for j in range(cols):
            item = grid[i][j]
            if item is None:
                mirror = grid[j][i] if j < rows and i < cols else None
                if mirror is not None:
                    copies.append((i, j))
                    continue
                item = 0
            entries.append(Entry((i, j), *_item(program, defined, item)))
    label = {entry.position: entry.label for entry in entries}
    entries += [Entry((i, j), label[(j, i)], None, source=(j, i)) for i, j in copies]
    return (rows, cols), entries


def _item(program, defined, item):
    """(label, expr) of one output item."""
    if isinstance(item, str):
        if item in defined:
            return item, defined[item]
        symbol = sympy.Symbol(item)
        if program.definition(symbol) is not None:
            return item, symbol
        raise CodegenError(f"{item!r} is neither an output nor an assignment of the program")
    try:
        expr = sympy.sympify(item, strict=True)
    except (sympy.SympifyError, TypeError):
        raise CodegenError(f"cannot use {item!r} as an output") from None
    mapping = {
        s: defined[s.name]
        for s in expr.free_symbols
        if isinstance(s, sympy.Symbol) and s.name in defined and program.definition(s) is None
    }
    label = expr.name if isinstance(expr, sympy.Symbol) else sympy.sstr(expr)
    return label, expr.xreplace(mapping)


# --------------------------------------------------------------------------
# The pipeline
# --------------------------------------------------------------------------


class Backend:
    """Write one function evaluating a program's outputs; base of every language.

    Parameters
    ----------
    program : kanerobot.symbolic.Program
    name : str
        Name of the generated function (letters, digits and ``_``, starting
        with a letter, and not reserved in the language).
    args : list of (str, list of sympy.Symbol)
        Argument groups, in order: ``[("q", robot.q), ("p", [D3, RL4])]``.
        Each group is one argument of the function, an array whose entries
        are those symbols in that order.  A group may hold symbols the
        program does not use; it must hold every input it does use.
    outputs : optional
        What the function returns; see :func:`output_layout`.
    doc : str, optional
        Text put at the top of the function's documentation.

    Notes
    -----
    A subclass sets :attr:`language`, :attr:`extension`, :attr:`reserved`,
    :attr:`internal` (names its own code uses) and :attr:`max_name_length`,
    and supplies :meth:`make_printer` and the pieces :meth:`header`,
    :meth:`unpack`, :meth:`unused`, :meth:`assignment`, :meth:`allocate`,
    :meth:`store`, :meth:`copy` and :meth:`footer`; :meth:`generate` puts
    them together.

    Variable names follow the program's symbols (``th1``, ``QP1``, ``C1``,
    ``XX2`` ...).  A symbol keeps its name when the name is letters, digits
    and ``_`` starting with a letter, is not reserved in the language
    (keywords, builtins and the functions the generated code calls, the
    function's name, the argument names, the generated code's own names
    such as ``out``) and is not longer than the language allows.  Otherwise
    it is renamed: every character other than a letter, a digit or ``_``
    becomes ``_``, a name that does not start with a letter gets the prefix
    ``v``, and if that name is still reserved or taken, ``_`` is appended
    (then ``_1``, ``_2``, ... until it is free).  Symbols that keep their
    names are served first, so a rename never takes a name the program
    uses.  The header of the generated code lists the renames; see
    :attr:`renamed`.
    """

    #: Key of the language in :data:`kanerobot.codegen.LANGUAGES`.
    language = ""
    #: Usual file extension of the generated text.
    extension = ""
    #: Names no variable may take in this language.
    reserved: frozenset[str] = frozenset()
    #: Names the generated code itself uses (result, helpers).
    internal: frozenset[str] = frozenset()
    #: Longest identifier the language accepts (None: no limit).
    max_name_length: int | None = None
    #: Index of the first entry of an array.
    index_base = 0

    def __init__(self, program, name, args, outputs=None, doc=""):
        self.program = program
        self.doc = str(doc or "")
        self.printer = self.make_printer()
        self.name = self._check_name(name, "function name")
        self.groups = self._groups(args)
        self.shape, self.entries = output_layout(program, outputs)
        self.lines = self._needed([e.expr for e in self.entries if e.source is None])
        assigned = {sym for sym, _ in self.lines}
        used = set()
        for expr in [e for _, e in self.lines] + [e.expr for e in self.entries if e.source is None]:
            used |= expr.free_symbols
        used -= assigned
        given = {sym for _, symbols in self.groups for sym in symbols}
        missing = sorted(used - given, key=lambda s: s.name)
        if missing:
            raise ParameterError(
                f"the outputs need {', '.join(s.name for s in missing)}: add them to an argument group"
            )
        self.used_inputs = used
        order = [sym for _, symbols in self.groups for sym in symbols if sym in used]
        order += [sym for sym, _ in self.lines]
        #: Variable name of every symbol the code uses.
        self.names = self.variable_names(order)
        #: Original name -> new name, for the symbols that were renamed.
        self.renamed = {sym.name: new for sym, new in self.names.items() if new != sym.name}
        self._rename = {sym: sympy.Symbol(new) for sym, new in self.names.items() if new != sym.name}

    # ------------------------------------------------------------ checking

    def _check_name(self, name, what):
        if not isinstance(name, str) or not self.is_identifier(name):
            raise CodegenError(
                f"{what} {name!r} is not a valid {self.language} identifier "
                "(letters, digits and '_', starting with a letter)"
            )
        if name in self.reserved or name in self.internal:
            raise CodegenError(f"{what} {name!r} is reserved in {self.language}")
        return name

    def _groups(self, args):
        if args is None or isinstance(args, (str, sympy.Basic)):
            raise CodegenError("args must be a list of (name, [symbols]) groups")
        groups, names = [], set()
        seen: dict[sympy.Symbol, str] = {}  # symbol -> its argument group
        for group in args:
            try:
                argname, symbols = group
            except (TypeError, ValueError):
                raise CodegenError(f"argument group {group!r} is not a pair (name, [symbols])") from None
            self._check_name(argname, "argument name")
            if argname == self.name or argname in names:
                raise CodegenError(f"argument name {argname!r} is used twice (or is the function's name)")
            names.add(argname)
            if isinstance(symbols, (str, sympy.Symbol)):
                symbols = [symbols]
            elements = []
            for item in symbols:
                sym = sympy.Symbol(item) if isinstance(item, str) else item
                if not isinstance(sym, sympy.Symbol):
                    raise CodegenError(f"argument {argname!r}: {item!r} is not a symbol")
                if sym in seen:
                    raise CodegenError(f"{sym.name} is in argument {seen[sym]!r} and in {argname!r}")
                seen[sym] = argname
                elements.append(sym)
            groups.append((argname, tuple(elements)))
        return groups

    def _needed(self, exprs):
        lines = self.program.assignments(include_dead=True)
        defined = {sym for sym, _ in lines}
        needed = set()
        for expr in exprs:
            needed |= expr.free_symbols & defined
        for sym, expr in reversed(lines):
            if sym in needed:
                needed |= expr.free_symbols & defined
        return [(sym, expr) for sym, expr in lines if sym in needed]

    # -------------------------------------------------------------- naming

    def is_identifier(self, name):
        """True when ``name`` is an identifier this backend writes as is."""
        if not _IDENTIFIER.match(name):
            return False
        return self.max_name_length is None or len(name) <= self.max_name_length

    def variable_names(self, symbols):
        """Name of each symbol in the generated code (see the class notes).

        Examples
        --------
        >>> from kanerobot.codegen import CBackend
        >>> from kanerobot.symbolic import Program
        >>> x, y = sympy.Symbol("x y"), sympy.Symbol("int")
        >>> p = Program(inputs=[x, y])
        >>> _ = p.set_output("F", x * y)
        >>> backend = CBackend(p, "f", [("v", [x, y])])
        >>> backend.renamed
        {'x y': 'x_y', 'int': 'int_'}
        """
        taken = set(self.reserved) | set(self.internal) | {self.name} | {g for g, _ in self.groups}
        names = {}
        for sym in symbols:
            if sym not in names and self._writes_as_is(sym.name) and sym.name not in taken:
                names[sym] = sym.name
                taken.add(sym.name)
        for sym in symbols:
            if sym in names:
                continue
            base = re.sub(r"[^A-Za-z0-9_]", "_", sym.name)
            if not base[:1].isalpha() or not base[:1].isascii():
                base = "v" + base
            for suffix in _suffixes():
                candidate = base + suffix
                if self.max_name_length is not None and len(candidate) > self.max_name_length:
                    candidate = base[: self.max_name_length - len(suffix)] + suffix
                if candidate not in taken and self._writes_as_is(candidate):
                    break
            names[sym] = candidate
            taken.add(candidate)
        return names

    def _writes_as_is(self, name):
        return self.is_identifier(name) and self.printer.doprint(sympy.Symbol(name)) == name

    # ------------------------------------------------------------ printing

    def make_printer(self):
        """The sympy printer of the language's expressions."""
        raise NotImplementedError

    def code(self, expr):
        """Source text of ``expr`` with the variable names of this function."""
        expr = sympy.sympify(expr).xreplace(self._rename)
        try:
            return self.printer.doprint(expr)
        except Exception as exc:  # the printers raise various types for unsupported nodes
            raise CodegenError(f"{self.language} cannot print {expr}: {exc}") from None

    def var(self, sym):
        """Variable name of an input or assigned symbol."""
        return self.names[sym]

    def index(self, position):
        """Position in the language's numbering (``index_base``)."""
        return tuple(k + self.index_base for k in position)

    # --------------------------------------------------- pieces to supply

    def header(self):
        """Lines before the unpacking: file comments, signature, checks."""
        raise NotImplementedError

    def unpack(self, argname, k, variable):
        """Line reading entry ``k`` (0-based) of argument ``argname`` into ``variable``."""
        raise NotImplementedError

    def unused(self, argname):
        """Lines for an argument none of whose entries is used."""
        return []

    def assignment(self, variable, code):
        """Line of one assignment."""
        raise NotImplementedError

    def allocate(self):
        """Lines creating the result."""
        return []

    def store(self, position, code, label):
        """Line writing one entry of the result."""
        raise NotImplementedError

    def copy(self, position, source, label):
        """Line copying entry ``source`` of the result to ``position``."""
        raise NotImplementedError

    def footer(self):
        """Lines after the outputs."""
        raise NotImplementedError

    def prelude(self):
        """Lines before :meth:`header`, known once the body is printed (helpers)."""
        return []

    # ----------------------------------------------------------- the walk

    def generate(self):
        """Source text of the function.

        Returns
        -------
        str
            Ends with a newline.
        """
        body, unused = [], []
        for argname, symbols in self.groups:
            used = [(k, sym) for k, sym in enumerate(symbols) if sym in self.used_inputs]
            if not used:
                unused += self.unused(argname)
            body += [self.unpack(argname, k, self.var(sym)) for k, sym in used]
        body += [self.assignment(self.var(sym), self.code(expr)) for sym, expr in self.lines]
        body += unused
        body += self.allocate()
        for entry in self.entries:
            if entry.source is None:
                body.append(self.store(entry.position, self.code(entry.expr), entry.label))
            else:
                body.append(self.copy(entry.position, entry.source, entry.label))
        head = self.prelude() + self.header()
        return "\n".join(head + body + self.footer()) + "\n"

    # ------------------------------------------------------ documentation

    def output_names(self):
        """Labels of the result's entries in row-major order."""
        labels = {entry.position: entry.label for entry in self.entries}
        return [labels[position] for position in sorted(labels)]

    def doc_lines(self):
        """Lines of ``doc``, dedented, without leading or trailing blank lines."""
        first, _, rest = self.doc.strip().partition("\n")
        text = (first.strip() + "\n" + textwrap.dedent(rest)).strip()
        return [line.rstrip() for line in text.splitlines()]

    def describe(self, width=76):
        """Documentation of the function as plain lines (no comment marks)."""
        doc = self.doc_lines()
        lines = [f"{self.name}: {doc[0]}" if doc else self.name] + doc[1:]
        lines += [
            "",
            f"Generated by kanerobot.codegen ({self.language}) from a program of "
            f"{len(self.lines)} assignments.",
            "",
            "Arguments:",
        ]
        for argname, symbols in self.groups:
            lines += _wrapped(f"  {argname} ({len(symbols)}): ", ", ".join(s.name for s in symbols) or "-", width)
        lines.append("")
        if len(self.shape) == 1:
            lines.append(f"Returns {self.shape[0]} values:")
        else:
            symmetric = any(entry.source is not None for entry in self.entries)
            lines.append(
                f"Returns a {self.shape[0]}x{self.shape[1]} matrix"
                + (" (entries below the diagonal copied from above it)" if symmetric else "")
                + ", row by row:"
            )
        lines += _wrapped("  ", ", ".join(self.output_names()), width)
        if self.renamed:
            lines += ["", "Renamed symbols (name in the program -> name in this code):"]
            lines += _wrapped("  ", ", ".join(f"{old} -> {new}" for old, new in self.renamed.items()), width)
        return lines


def _suffixes():
    yield ""
    yield "_"
    k = 1
    while True:
        yield f"_{k}"
        k += 1


def _wrapped(prefix, text, width):
    return textwrap.wrap(
        text, width=width, initial_indent=prefix, subsequent_indent=" " * len(prefix), break_on_hyphens=False
    ) or [prefix.rstrip()]
