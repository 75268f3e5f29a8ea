"""CasADi backend: a program as a ``casadi.Function`` built on an SX graph.

:class:`CasadiBackend` is the Python printer of the shared pipeline
(:class:`~kanerobot.codegen.backend.Backend`) emitting CasADi calls: the
generated module holds one function, ``name()``, that builds the graph and
returns a ``casadi.Function`` of the argument groups::

    def name():
        q = casadi.SX.sym("q", 6)
        p = casadi.SX.sym("p", 2)
        th1 = q[0]
        ...
        C1 = casadi.cos(th1)          # one SX assignment per line of the program
        ...
        _out = casadi.SX(6, 1)
        _out[0, 0] = ...
        return casadi.Function("name", [q, p], [casadi.densify(_out)], ["q", "p"], ["out"])

Each assignment of the program is one SX variable, so a subexpression the
program shares is one node of the graph, shared by every expression that
reads it (nothing is expanded): CasADi's derivatives (``casadi.jacobian``,
``casadi.gradient``, the Hessians IPOPT asks for) and its own C code
generation work on the program's structure.  The output is the layout of
:func:`~kanerobot.codegen.backend.output_layout`: a column ``(m, 1)`` for a
vector, the matrix for a matrix, dense (a mirrored entry is the same node
as its transpose; an entry the layout leaves at 0 is a constant 0, on which
nothing depends).

:func:`casadi_program` builds that function and wraps it in a
:class:`CasadiFunction`, which numpy arrays call as the C backend's
:class:`~kanerobot.codegen.compiled.CompiledFunction` (one state or a batch,
constant groups passed once): the models of ``model.numeric(values,
backend="casadi")`` run it.

CasADi is optional (``pip install 'kanerobot[casadi]'``); it is imported
when a function is built, not with this module, and :func:`require_casadi`
says in one line how to install it when it is missing.

Examples
--------
>>> import numpy, sympy
>>> from kanerobot.symbolic import Program
>>> x, y, k = sympy.symbols("x y k")
>>> p = Program(inputs=[x, y, k])
>>> R2 = p.assign("R2", x**2 + y**2)
>>> _ = p.set_output("r", k * sympy.sqrt(R2))
>>> _ = p.set_output("s", sympy.sign(y) * R2)
>>> print(CasadiBackend(p, "scaled", [("xy", [x, y]), ("p", [k])]).generate().split("def scaled():")[1])  # doctest: +ELLIPSIS
<BLANKLINE>
    \"\"\"The casadi.Function scaled(xy[2], p[1]) -> out[2x1] (see the module's notes).\"\"\"
    xy = casadi.SX.sym("xy", 2)
    p = casadi.SX.sym("p", 1)
    x = xy[0]
    y = xy[1]
    k = p[0]
    R2 = x**2 + y**2
    _out = casadi.SX(2, 1)
    _out[0, 0] = casadi.sqrt(R2)*k  # r
    _out[1, 0] = R2*casadi.sign(y)  # s
    return casadi.Function("scaled", [xy, p], [casadi.densify(_out)], ["xy", "p"], ["out"])
<BLANKLINE>
>>> f = casadi_program(p, "scaled", [("xy", [x, y]), ("p", [k])], constant=["p"])
>>> f([3.0, -4.0], [2.0])
array([ 10., -25.])
>>> f(numpy.array([[3.0, 4.0], [6.0, 8.0]]), [0.5])
array([[  2.5,  25. ],
       [  5. , 100. ]])
"""

import builtins
import keyword
from typing import Any

import numpy as np
from sympy.printing.codeprinter import PrintMethodNotImplementedError
from sympy.printing.pycode import PythonCodePrinter

from kanerobot.codegen.backend import Backend, CodegenError
from kanerobot.codegen.compiled import BatchedFunction
from kanerobot.errors import KaneRobotError

__all__ = ["INSTALL", "CasadiBackend", "CasadiFunction", "casadi_program", "require_casadi"]

#: What to run when CasADi is missing.
INSTALL = "pip install 'kanerobot[casadi]'"

#: The functions and constants of the ``casadi`` module the printer may call
#: (those of Python's ``math`` that sympy's printer uses and CasADi has).
_CASADI_NAMES = frozenset((
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "exp", "expm1", "log", "log1p", "log10", "sqrt", "fabs", "floor", "ceil", "erf", "hypot", "sign", "fmin",
    "fmax", "if_else", "pi", "inf",
))  # fmt: skip


def require_casadi():
    """The ``casadi`` module, or one :class:`KaneRobotError` saying how to install it.

    Examples
    --------
    >>> require_casadi().SX.sym("x").is_symbolic()
    True
    """
    try:
        import casadi
    except ImportError:
        raise KaneRobotError(f"backend 'casadi' needs CasADi, which is not installed: {INSTALL}") from None
    return casadi


class _Printer(PythonCodePrinter):
    """sympy's Python printer with CasADi's functions: ``casadi.cos``, ``casadi.sign``,
    ``casadi.fabs``, ``casadi.if_else`` for a Piecewise; a function CasADi lacks
    raises (the pipeline turns it into a :class:`CodegenError`)."""

    def __init__(self):
        super().__init__({"strict": True, "fully_qualified_modules": True})

    def _module_format(self, fqn, register=True):
        module, _, name = fqn.rpartition(".")
        if module != "math":
            return super()._module_format(fqn, register)
        if name not in _CASADI_NAMES:
            raise PrintMethodNotImplementedError(f"CasADi has no {name}")
        return f"casadi.{name}"

    def _call(self, function, *args):
        return f"casadi.{function}({', '.join(self._print(a) for a in args)})"

    def _print_Abs(self, expr):
        return self._call("fabs", expr.args[0])

    def _print_sign(self, expr):
        return self._call("sign", expr.args[0])  # -1, 0 or 1, as numpy.sign and the C backend's kr_sign

    def _print_Exp1(self, expr):
        return "casadi.exp(1)"

    def _print_Min(self, expr):
        return self._nested("fmin", expr.args)

    def _print_Max(self, expr):
        return self._nested("fmax", expr.args)

    def _nested(self, function, args):
        text = self._print(args[0])
        for arg in args[1:]:
            text = f"casadi.{function}({text}, {self._print(arg)})"
        return text

    def _print_Piecewise(self, expr):
        *pieces, (last, condition) = expr.args
        if condition != True:  # noqa: E712 (sympy's true)
            raise PrintMethodNotImplementedError("a Piecewise without an otherwise branch")
        text = self._print(last)
        for value, condition in reversed(pieces):
            text = f"casadi.if_else({self._print(condition)}, {self._print(value)}, {text})"
        return text


class CasadiBackend(Backend):
    """Write a Python module whose function ``name()`` builds a ``casadi.Function`` (SX).

    The function takes one array per argument group (a column of the
    group's size) and returns ``out``, the layout of
    :func:`~kanerobot.codegen.backend.output_layout` (``(m, 1)`` or
    ``(rows, cols)``).  See the module's notes and its example.
    """

    language = "casadi"
    extension = ".py"
    reserved = (
        frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
        | {"casadi", "ARGUMENTS", "OUTPUTS", "SHAPE"}
    )  # fmt: skip
    # Generated names start with "_", which no renamed symbol does.
    internal = frozenset({"_out"})

    def make_printer(self):
        return _Printer()

    def _matrix_shape(self):
        return tuple(self.shape) if len(self.shape) == 2 else (self.shape[0], 1)

    def signature(self):
        """``name(q[6], p[2]) -> out[6x1]``: the function's inputs and output."""
        rows, cols = self._matrix_shape()
        groups = ", ".join(f"{argname}[{len(symbols)}]" for argname, symbols in self.groups)
        return f"{self.name}({groups}) -> out[{rows}x{cols}]"

    def header(self):
        describe = [_docstring_safe(line) for line in self.describe()]
        lines = ['"""' + describe[0]] + describe[1:] + ['"""', "", "import casadi", "", f'__all__ = ["{self.name}"]', ""]
        lines.append("#: Argument names and the names of their entries, in order.")
        lines.append("ARGUMENTS = {")
        for argname, symbols in self.groups:
            lines.append(f"    {argname!r}: {tuple(s.name for s in symbols)!r},")
        lines.append("}")
        lines.append("#: Names of the entries of the result, row by row.")
        lines.append("OUTPUTS = (")
        lines += [f"    {label!r}," for label in self.output_names()]
        lines.append(")")
        lines.append("#: Shape of the result.")
        lines.append(f"SHAPE = {self._matrix_shape()!r}")
        lines += ["", "", f"def {self.name}():"]
        lines.append(f'    """The casadi.Function {_docstring_safe(self.signature())} (see the module\'s notes)."""')
        lines += [f'    {argname} = casadi.SX.sym("{argname}", {len(symbols)})' for argname, symbols in self.groups]
        return lines

    def unpack(self, argname, k, variable):
        return f"    {variable} = {argname}[{k}]"

    def assignment(self, variable, code):
        return f"    {variable} = {code}"

    def allocate(self):
        rows, cols = self._matrix_shape()
        return [f"    _out = casadi.SX({rows}, {cols})"]

    def _cell(self, position):
        return f"{position[0]}, {position[1] if len(position) == 2 else 0}"

    def store(self, position, code, label):
        return f"    _out[{self._cell(position)}] = {code}  # {_comment_safe(label)}"

    def copy(self, position, source, label):
        return f"    _out[{self._cell(position)}] = _out[{self._cell(source)}]  # {_comment_safe(label)}"

    def footer(self):
        names = ", ".join(argname for argname, _ in self.groups)
        quoted = ", ".join(f'"{argname}"' for argname, _ in self.groups)
        # dense: numeric buffers hold every entry (an explicit 0 still has no dependency, for derivatives)
        return [f'    return casadi.Function("{self.name}", [{names}], [casadi.densify(_out)], [{quoted}], ["out"])']


def _docstring_safe(line):
    return line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _comment_safe(label):
    return " ".join(str(label).split())  # a comment ends at the line's end: no newline in it


class CasadiFunction(BatchedFunction):
    """A program as a ``casadi.Function``: call it with numpy arrays.

    The same calls as :class:`~kanerobot.codegen.compiled.CompiledFunction`:
    ``f(*groups)`` takes one array per argument group, constant groups
    ``(k,)`` and the others one state ``(k,)`` or a batch ``(N, k)``, and
    returns the layout's shape (or ``(N,) + shape``); :meth:`batch` is the
    unchecked path.  A batch runs the function's ``map`` over ``N`` states
    (one call into CasADi's virtual machine).

    Attributes
    ----------
    function : casadi.Function
        Of the argument groups, in order (each a column), returning ``out``.
    name : str
    args : tuple of str
        Names of the argument groups.
    sizes : tuple of int
    constant : frozenset of str
    shape : tuple
        ``(m,)`` or ``(rows, cols)``: one state's result as numpy gives it.
    size : int
    source : str
        The generated module that built :attr:`function`.
    """

    #: Batch sizes whose mapped function is kept (a simulation calls the same few).
    MAPS = 8

    def __init__(self, backend, source, function, constant):
        super().__init__(backend, source, constant)
        self.function = function
        self._maps: dict[int, Any] = {}

    def __repr__(self):
        return f"<CasadiFunction {self.name}({self.signature()}) -> {self.shape}>"

    def batch(self, N, arrays, out=None):
        """Evaluate ``N`` states: ``arrays`` are ``(N, k)`` (``(k,)`` for constant
        groups); returns ``out``, ``(N,) + shape`` (allocated when None).

        CasADi's numeric buffers (``Function.buffer``) read the arrays and
        write the result in place, without a conversion to ``casadi.DM``: a
        C-contiguous ``(N, k)`` array is the column-major ``(k, N)`` matrix of
        the mapped function's input, and its ``(m, N)`` output the ``(N, m)``
        result (a matrix result comes out transposed, state by state, and is
        copied once).
        """
        if len(arrays) != len(self.args):
            raise KaneRobotError(f"{self.name} takes {len(self.args)} arrays ({', '.join(self.args)}), got {len(arrays)}")
        keep = []  # the buffers point into these until the evaluation returns
        for argname, k, constant, array in zip(self.args, self.sizes, self._is_constant, arrays):
            array = np.ascontiguousarray(array, dtype=np.float64)
            if array.shape != ((k,) if constant else (N, k)):
                raise KaneRobotError(f"{self.name}: {argname} must have shape {(k,) if constant else (N, k)}, got {array.shape}")
            keep.append(array)
        if out is None:
            out = np.empty((N,) + self.shape)
        elif out.shape != (N,) + self.shape or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise KaneRobotError(f"{self.name}: out must be a C-contiguous float array of shape {(N,) + self.shape}")
        if not N:
            return out
        matrix = len(self.shape) == 2
        result = np.empty((N, self.shape[1], self.shape[0])) if matrix else out  # column-major blocks
        buffer, evaluate = self._mapped(N).buffer()
        for k, array in enumerate(keep):
            buffer.set_arg(k, array.data)
        buffer.set_res(0, result.data)
        evaluate()
        if matrix:
            out[...] = result.swapaxes(1, 2)
        return out

    def _mapped(self, N):
        """The function of ``N`` states: itself for one, else its ``map`` (the constant groups passed once)."""
        if N == 1:
            return self.function
        if N not in self._maps:
            if len(self._maps) >= self.MAPS:
                self._maps.pop(next(iter(self._maps)))
            constant = [k for k, c in enumerate(self._is_constant) if c]
            self._maps[N] = self.function.map(f"{self.name}_{N}", "serial", N, constant, [])
        return self._maps[N]


def build_function(backend):
    """``(source, casadi.Function)``: the module of ``backend`` (a :class:`CasadiBackend`), run.

    The text is the pipeline's own (symbols renamed to identifiers, names
    checked), executed in a namespace of its own: what it runs is what
    :meth:`CasadiBackend.generate` shows.
    """
    require_casadi()
    source = backend.generate()
    namespace: dict[str, Any] = {"__name__": f"kanerobot_casadi_{backend.name}"}
    exec(compile(source, f"<casadi {backend.name}>", "exec"), namespace)
    return source, namespace[backend.name]()


def casadi_program(program, name, args, outputs=None, constant=(), doc=""):
    """Build ``program`` as a ``casadi.Function`` and wrap it for numpy calls.

    Parameters
    ----------
    program : kanerobot.symbolic.Program
    name : str
        Name of the function (an identifier).
    args : list of (str, sequence of sympy.Symbol)
        Argument groups, as for :func:`kanerobot.codegen.generate`.
    outputs : optional
        What the result holds; see :func:`~kanerobot.codegen.backend.output_layout`.
    constant : iterable of str, optional
        Groups passed once for a whole batch (the parameters).
    doc : str, optional
        Description put first in the generated module.

    Returns
    -------
    CasadiFunction
        Its ``function`` is the ``casadi.Function`` of the groups.

    Raises
    ------
    KaneRobotError
        When CasADi is not installed (:func:`require_casadi`).
    kanerobot.codegen.CodegenError, kanerobot.errors.ParameterError
        As :func:`kanerobot.codegen.generate`, for an expression CasADi has no
        function for, and for a constant group that is not an argument.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.symbolic import Program
    >>> x, k = sympy.symbols("x k")
    >>> p = Program(inputs=[x, k])
    >>> _ = p.set_output("y", k * sympy.cos(x))
    >>> f = casadi_program(p, "kcos", [("x", [x]), ("p", [k])], constant=["p"])
    >>> f.function
    Function(kcos:(x,p)->(out) SXFunction)
    >>> f([0.0], [2.0])
    array([2.])
    """
    require_casadi()  # before printing the program
    backend = CasadiBackend(program, name, args, outputs=outputs, doc=doc)
    constant = frozenset(constant)
    unknown = constant - {a for a, _ in backend.groups}
    if unknown:
        raise CodegenError(f"constant group(s) {', '.join(sorted(unknown))} are not arguments")
    source, function = build_function(backend)
    return CasadiFunction(backend, source, function, constant)
