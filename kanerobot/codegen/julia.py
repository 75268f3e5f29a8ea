"""Julia backend: one function in a ``.jl`` file.

``function name(q, qd, ...)`` reads ``q[1]``, ``q[2]``, ..., evaluates one
state and returns a ``Vector`` of the outputs, or a ``Matrix``.  The element
type of the result is ``promote_type(Float64, eltype(q), ...)``, so the
function also runs on dual numbers (ForwardDiff) or ``BigFloat``.  A
docstring above the function lists the arguments and the outputs.
"""

from sympy.printing.julia import JuliaCodePrinter

from kanerobot.codegen.backend import Backend

__all__ = ["JuliaBackend", "JuliaPrinter", "docstring_line"]

_JULIA_RESERVED = """
baremodule begin break catch const continue do else elseif end export false finally for function
global if import let local macro module quote return struct true try using while abstract mutable
primitive type where in isa outer public
sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sec csc cot sqrt cbrt exp log log10 log2
log1p expm1 abs sign hypot min max mod rem div floor ceil round gamma zeros ones length eltype
promote_type throw ArgumentError Float64 Int pi im e Inf NaN nothing missing
"""


class JuliaPrinter(JuliaCodePrinter):
    """sympy's Julia printer, with ``atan(y, x)`` and ``exp(1)`` for E."""

    def _print_atan2(self, expr):
        return f"atan({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_Exp1(self, expr):
        return "exp(1)"


def docstring_line(line):
    """``line`` as text of a Julia docstring: backslashes, ``$`` (which interpolates) and triple quotes escaped.

    >>> print(docstring_line("costs $5"))
    costs \\$5
    """
    return line.replace("\\", "\\\\").replace("$", "\\$").replace('"""', '\\"\\"\\"')


class JuliaBackend(Backend):
    """Write a Julia function.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.symbolic import Program
    >>> x, y = sympy.symbols("x y")
    >>> p = Program(inputs=[x, y])
    >>> _ = p.set_output("r", sympy.sqrt(p.assign("R2", x**2 + y**2)))
    >>> _ = p.set_output("s", sympy.atan2(y, x) / 2)
    >>> print(JuliaBackend(p, "polar", [("xy", [x, y])]).generate())  # doctest: +ELLIPSIS
    \"\"\"
        polar(xy)
    ...
    \"\"\"
    function polar(xy)
        length(xy) == 2 || throw(ArgumentError("polar: xy must have 2 entries"))
        x = xy[1]
        y = xy[2]
        R2 = x .^ 2 + y .^ 2
        out = zeros(promote_type(Float64, eltype(xy)), 2)
        out[1] = sqrt(R2)  # r
        out[2] = atan(y, x) / 2  # s
        return out
    end
    <BLANKLINE>
    """

    language = "julia"
    extension = ".jl"
    reserved = frozenset(_JULIA_RESERVED.split())
    internal = frozenset({"out"})
    index_base = 1

    def make_printer(self):
        return JuliaPrinter()

    def header(self):
        params = ", ".join(argname for argname, _ in self.groups)
        lines = ['"""', f"    {self.name}({params})", ""]
        lines += [docstring_line(line) for line in self.describe()]
        lines += ['"""', f"function {self.name}({params})"]
        for argname, symbols in self.groups:
            lines.append(
                f"    length({argname}) == {len(symbols)} || "
                f'throw(ArgumentError("{self.name}: {argname} must have {len(symbols)} entries"))'
            )
        return lines

    def unpack(self, argname, k, variable):
        return f"    {variable} = {argname}[{k + 1}]"

    def assignment(self, variable, code):
        return f"    {variable} = {code}"

    def allocate(self):
        element = ", ".join(["Float64"] + [f"eltype({argname})" for argname, _ in self.groups])
        return [f"    out = zeros(promote_type({element}), {', '.join(map(str, self.shape))})"]

    def store(self, position, code, label):
        return f"    out[{', '.join(map(str, self.index(position)))}] = {code}  # {label}"

    def copy(self, position, source, label):
        return f"    out[{', '.join(map(str, self.index(position)))}] = out[{', '.join(map(str, self.index(source)))}]  # {label}"

    def footer(self):
        return ["    return out", "end"]
