"""JAX backend: a module whose function is pure ``jax.numpy``, jittable, vmappable, differentiable.

:class:`JaxBackend` is the Python backend (:class:`~kanerobot.codegen.python.PythonBackend`)
with ``jax.numpy`` in place of numpy and its result assembled without writing
into an array (jax arrays are immutable): every entry is a variable
``_out_<k>``, the mirrored entries of a symmetric matrix name the same
variable, and the function returns ``jax.numpy.stack`` of them.  Batches
broadcast as in the Python backend (leading axes of the arguments), so the
function works on one state, on a batch, under ``jax.jit``, ``jax.vmap``
(over states or parameters alike) and ``jax.grad`` / ``jax.jacfwd``.

Numbers are float64: :func:`load_jax` (which every kanerobot path through
JAX calls first) turns on ``jax_enable_x64`` in JAX's configuration, as the
generated module does when it is imported, a process-wide setting of JAX
(float32 stays available by asking for it).

JAX is an optional dependency (``pip install 'kanerobot[jax]'``), imported
only here and only when asked for: ``import kanerobot`` does not import it.
"""

import textwrap

from kanerobot.codegen.python import PythonBackend
from kanerobot.errors import KaneRobotError

__all__ = ["CPU_COMPILER_OPTIONS", "INSTALL", "JaxBackend", "jax_program", "jit", "load_jax"]

#: What to install for ``backend="jax"``.
INSTALL = "pip install 'kanerobot[jax]'"


def load_jax():
    """The ``jax`` module with float64 turned on (``jax_enable_x64``).

    Returns
    -------
    module

    Raises
    ------
    KaneRobotError
        When JAX is not installed, saying what to install.

    Examples
    --------
    >>> jax = load_jax()
    >>> jax.numpy.ones(2).dtype
    dtype('float64')
    """
    try:
        import jax
    except ImportError:
        raise KaneRobotError(f"backend 'jax' needs JAX, which is not installed: {INSTALL}") from None
    jax.config.update("jax_enable_x64", True)  # the models are float64, as the C and numpy backends
    return jax


#: XLA options of :func:`jit` on the CPU: the generated programs are long straight-line code, which
#: XLA's CPU fusion emitters compile three to four times slower than its older path, for the same
#: speed of the result (measured on the RX-90: direct dynamics derivatives 14 s against 25-39 s,
#: a batched RK4 of its direct dynamics 6 s against 18 s).
CPU_COMPILER_OPTIONS = {"xla_cpu_use_fusion_emitters": False}


def jit(function):
    """``jax.jit(function)``, with :data:`CPU_COMPILER_OPTIONS` on the CPU where XLA knows them.

    An XLA that does not know an option refuses it when compiling: the
    first call then compiles without them, and so do the later ones.
    """
    jax = load_jax()
    plain = jax.jit(function)
    if jax.default_backend() != "cpu":
        return plain
    chosen = [jax.jit(function, compiler_options=CPU_COMPILER_OPTIONS)]

    def call(*args):
        try:
            return chosen[0](*args)
        except Exception as exc:  # XLA raises its own error types: only an unknown option is caught
            if chosen[0] is plain or not any(option in str(exc) for option in CPU_COMPILER_OPTIONS):
                raise
            chosen[0] = plain
            return plain(*args)

    return call


def _printer_class():
    """sympy's JAX printer with ``jax.numpy.abs`` for ``Abs`` (made on first use: sympy's printer module is large)."""
    from sympy.printing.numpy import JaxPrinter

    class _Printer(JaxPrinter):
        def _print_Abs(self, expr):
            return f"jax.numpy.abs({self._print(expr.args[0])})"

    return _Printer


class JaxBackend(PythonBackend):
    """Write a Python module with one pure ``jax.numpy`` function.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.symbolic import Program
    >>> x, y = sympy.symbols("x y")
    >>> p = Program(inputs=[x, y])
    >>> for name, value in [("A11", x), ("A12", x * y), ("A22", y)]:
    ...     _ = p.set_output(name, value)
    >>> source = JaxBackend(p, "f", [("xy", [x, y])], outputs=(2, 2)).generate()
    >>> print(source[source.index('    xy = _vector'):])
        xy = _vector(xy, "xy", 2)
        _batch = jax.numpy.broadcast_shapes(xy.shape[:-1])
        x = xy[..., 0]
        y = xy[..., 1]
        _out_0 = x  # A11
        _out_1 = x*y  # A12
        _out_3 = y  # A22
        _out_2 = _out_1  # A12
        return _stack([_out_0, _out_1, _out_2, _out_3], _batch, (2, 2))
    <BLANKLINE>
    >>> f = jax_program(p, "f", [("xy", [x, y])], outputs=(2, 2))
    >>> f([2.0, 3.0]).tolist()
    [[2.0, 6.0], [6.0, 3.0]]
    >>> jax = load_jax()
    >>> jax.jacfwd(lambda v: f(v)[0, 1])(jax.numpy.array([2.0, 3.0])).tolist()
    [3.0, 2.0]
    """

    language = "jax"
    reserved = PythonBackend.reserved | {"jax", "functools"}
    internal = PythonBackend.internal | {"_stack"}

    def make_printer(self):
        return _printer_class()({"fully_qualified_modules": True})

    def header(self):
        lines = []
        for line in super().header():  # the numpy module's, with jax.numpy and float64 switched on
            if line == "import numpy":
                lines += [
                    "import functools  # sympy prints Min and Max with functools.reduce",
                    "",
                    "import jax",
                    "import jax.numpy",
                    "",
                    'jax.config.update("jax_enable_x64", True)  # float64, as the C and numpy code',
                ]
            else:
                lines.append(line.replace("numpy.", "jax.numpy.").replace("numpy.ndarray", "jax.Array"))
        at = lines.index("def _vector(value, name, size):")
        stack = [
            "def _stack(entries, batch, shape):",
            "    # every entry (a number, or an array of part of the batch's axes) spread over the batch",
            "    columns = [jax.numpy.broadcast_to(jax.numpy.asarray(e, dtype=jax.numpy.float64), batch) for e in entries]",
            "    return jax.numpy.stack(columns, axis=-1).reshape(batch + shape)",
            "",
            "",
        ]
        return lines[:at] + stack + lines[at:]

    def _flat(self, position):
        cols = self.shape[1] if len(self.shape) == 2 else 1
        return position[0] * cols + (position[1] if len(position) == 2 else 0)

    def allocate(self):
        return []

    def store(self, position, code, label):
        return f"    _out_{self._flat(position)} = {code}  # {label}"

    def copy(self, position, source, label):
        return f"    _out_{self._flat(position)} = _out_{self._flat(source)}  # {label}"

    def footer(self):
        size = 1
        for n in self.shape:
            size *= n
        entries = ", ".join(f"_out_{k}" for k in range(size))
        text = f"return _stack([{entries}], _batch, {self._shape_text()})"
        return textwrap.wrap(text, width=120, initial_indent="    ", subsequent_indent="        ", break_on_hyphens=False)


def jax_program(program, name, args, outputs=None, doc=""):
    """``program`` as a pure JAX function of its argument groups.

    Parameters
    ----------
    program : kanerobot.symbolic.Program
    name : str
        Name of the function (a Python identifier).
    args : list of (str, sequence of sympy.Symbol)
        Argument groups, as for :func:`kanerobot.codegen.generate`.
    outputs : optional
        What the function returns; see
        :func:`~kanerobot.codegen.backend.output_layout`.
    doc : str, optional
        Description put first in the generated documentation.

    Returns
    -------
    callable
        ``f(*groups)``: each group an array whose last axis holds its
        entries (leading axes, broadcast together, are a batch); returns a
        float64 ``jax.Array`` of shape ``batch + shape``.  Not jitted:
        wrap it in ``jax.jit`` (it is pure).  Attributes ``source`` (the
        module's text), ``shape`` and ``args`` (the group names).

    Raises
    ------
    KaneRobotError
        When JAX is not installed; as :func:`kanerobot.codegen.generate`
        for bad names, outputs or groups.
    """
    load_jax()
    backend = JaxBackend(program, name, args, outputs=outputs, doc=doc)
    source = backend.generate()
    namespace: dict = {"__name__": f"kanerobot_jax_{name}"}
    exec(compile(source, f"<kanerobot jax {name}>", "exec"), namespace)  # our own generated text, never a file's
    function = namespace[name]
    function.source = source
    function.shape = tuple(backend.shape)
    function.args = tuple(argname for argname, _ in backend.groups)
    return function
