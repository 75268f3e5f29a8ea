"""Python backend: a self-contained module that needs only numpy.

The function takes one state (1-D arrays) or a batch of states (arrays whose
last axis holds the entries and whose leading axes are the batch, e.g.
``(N, 6)``) and returns ``(m,)`` or ``(N, m)`` (``(r, c)`` or ``(N, r, c)``
for a matrix).  Every assignment is one numpy expression on the arrays of the
whole batch (``numpy.cos``, ``numpy.sign``, ``numpy.arctan2``, ...), so a
batch costs one pass of the program, not one call per state.  Batch axes of
the arguments broadcast: a ``(N, 6)`` ``q`` with a ``(2,)`` ``p`` gives
``N`` results with the same parameters.
"""

import builtins
import keyword
import textwrap

from sympy.printing.numpy import NumPyPrinter

from kanerobot.codegen.backend import Backend

__all__ = ["PythonBackend"]


class _Printer(NumPyPrinter):
    """sympy's numpy printer, with ``numpy.abs`` for ``Abs``."""

    def _print_Abs(self, expr):
        return f"numpy.abs({self._print(expr.args[0])})"


class PythonBackend(Backend):
    """Write a Python module with one vectorized numpy function.

    Examples
    --------
    >>> import numpy, sympy
    >>> from kanerobot.symbolic import Program
    >>> x, y = sympy.symbols("x y")
    >>> p = Program(inputs=[x, y])
    >>> _ = p.set_output("r", sympy.sqrt(p.assign("R2", x**2 + y**2)))
    >>> _ = p.set_output("s", sympy.sign(y))
    >>> source = PythonBackend(p, "polar", [("xy", [x, y])]).generate()
    >>> print(source[source.index("def polar"):])  # doctest: +ELLIPSIS
    def polar(xy):
        \"\"\"polar
    ...
        xy = _vector(xy, "xy", 2)
        _batch = numpy.broadcast_shapes(xy.shape[:-1])
        x = xy[..., 0]
        y = xy[..., 1]
        R2 = x**2 + y**2
        _out = numpy.empty(_batch + (2,))
        _out[..., 0] = numpy.sqrt(R2)  # r
        _out[..., 1] = numpy.sign(y)  # s
        return _out
    <BLANKLINE>
    >>> namespace = {}
    >>> exec(source, namespace)
    >>> namespace["polar"]([3.0, -4.0])
    array([ 5., -1.])
    >>> namespace["polar"](numpy.ones((1000, 2))).shape
    (1000, 2)
    """

    language = "python"
    extension = ".py"
    reserved = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {
        "numpy",
        "ARGUMENTS",
        "OUTPUTS",
        "SHAPE",
    }
    # Generated names start with "_", which no renamed symbol does.
    internal = frozenset({"_vector", "_batch", "_out"})

    def make_printer(self):
        return _Printer({"fully_qualified_modules": True})

    def _shape_text(self):
        return "(" + ", ".join(str(n) for n in self.shape) + ("," if len(self.shape) == 1 else "") + ")"

    def header(self):
        describe = [line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') for line in self.describe()]
        shape = self._shape_text()
        lines = ['"""' + describe[0]] + describe[1:] + ['"""', "", "import numpy", "", f'__all__ = ["{self.name}"]', ""]
        lines.append("#: Argument names and the names of their entries, in order.")
        lines.append("ARGUMENTS = {")
        for argname, symbols in self.groups:
            lines.append(f"    {argname!r}: {tuple(s.name for s in symbols)!r},")
        lines.append("}")
        lines.append("#: Names of the entries of one result, row by row.")
        lines.append("OUTPUTS = (")
        lines += [f"    {label!r}," for label in self.output_names()]
        lines.append(")")
        lines.append("#: Shape of one result; a batch of states puts its axes in front.")
        lines.append(f"SHAPE = {shape}")
        lines += [
            "",
            "",
            "def _vector(value, name, size):",
            "    value = numpy.asarray(value, dtype=float)",
            "    if value.ndim == 0 or value.shape[-1] != size:",
            '        raise ValueError(f"{name} must have {size} entries along its last axis, got shape {value.shape}")',
            "    return value",
            "",
            "",
            f"def {self.name}({', '.join(argname for argname, _ in self.groups)}):",
        ]
        doc = [line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') for line in self.doc_lines()] or [""]
        lines.append(f'    """{self.name}' + (f": {doc[0]}" if doc[0] else ""))
        lines += [f"    {line}".rstrip() for line in doc[1:]]
        lines += ["", "    Parameters", "    ----------"]
        for argname, symbols in self.groups:
            lines.append(f"    {argname} : array_like, shape ({len(symbols)},) or (N, {len(symbols)})")
            lines += _indent(", ".join(s.name for s in symbols) or "(no entries)", 8)
        rest = ", ".join(str(n) for n in self.shape)
        lines += [
            "",
            "    Returns",
            "    -------",
            f"    numpy.ndarray, shape {shape} or (N, {rest})",
        ]
        lines += _indent("Entries " + ", ".join(self.output_names()) + (" (row by row)." if len(self.shape) == 2 else "."), 8)
        lines.append('    """')
        lines += [f'    {argname} = _vector({argname}, "{argname}", {len(symbols)})' for argname, symbols in self.groups]
        batch = ", ".join(f"{argname}.shape[:-1]" for argname, _ in self.groups)
        lines.append(f"    _batch = numpy.broadcast_shapes({batch})")
        return lines

    def unpack(self, argname, k, variable):
        return f"    {variable} = {argname}[..., {k}]"

    def assignment(self, variable, code):
        return f"    {variable} = {code}"

    def allocate(self):
        return [f"    _out = numpy.empty(_batch + {self._shape_text()})"]

    def store(self, position, code, label):
        return f"    _out[..., {', '.join(map(str, position))}] = {code}  # {label}"

    def copy(self, position, source, label):
        return f"    _out[..., {', '.join(map(str, position))}] = _out[..., {', '.join(map(str, source))}]  # {label}"

    def footer(self):
        return ["    return _out"]


def _indent(text, spaces):
    pad = " " * spaces
    return textwrap.wrap(text, width=88, initial_indent=pad, subsequent_indent=pad, break_on_hyphens=False)
