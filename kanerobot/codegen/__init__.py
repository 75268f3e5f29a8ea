"""Export a :class:`~kanerobot.symbolic.Program` as source code.

One pipeline, :class:`~kanerobot.codegen.backend.Backend`, walks the program
(header, argument unpacking, one line per needed assignment, the outputs,
footer); each language is a small subclass that brings a sympy printer and
its syntax (the design of pydy's code generators):

========  ========================  ==============================================================
``lang``  class                     generated function
========  ========================  ==============================================================
python    :class:`PythonBackend`    ``def name(q, qd, ...)``, numpy only, vectorized over a batch
c         :class:`CBackend`         ``void name(const double *q, ..., double *out)``, math.h only
matlab    :class:`MatlabBackend`    ``function out = name(q, qd, ...)`` (MATLAB and Octave)
julia     :class:`JuliaBackend`     ``function name(q, qd, ...)`` returning a Vector or a Matrix
jax       :class:`JaxBackend`       ``def name(q, qd, ...)``, pure ``jax.numpy``: jit, vmap, grad
========  ========================  ==============================================================

Arguments are groups of symbols: ``args=[("q", robot.q), ("qd", robot.qd),
("p", [D3, RL4])]`` makes a function of three arrays whose entries are those
symbols in that order.  The result is every output of the program, in
program order, as a vector; ``outputs=`` picks other outputs or a matrix (an
inertia matrix from its upper triangle, for instance): see
:func:`~kanerobot.codegen.backend.output_layout`.  Variable names are the
program's (``th1``, ``QP1``, ``C1``, ``XX2`` ...), except those a language
cannot take, which are renamed as :class:`~kanerobot.codegen.backend.Backend`
describes and listed in the generated header.

Examples
--------
>>> import numpy, sympy
>>> import kanerobot as kr
>>> from kanerobot.geometry import fast_geometric_model
>>> robot = kr.load(kr.frames_path("planar2"))
>>> program = fast_geometric_model(robot, "0", "2")
>>> args = [("q", robot.q), ("p", [sympy.Symbol(n) for n in robot.geometric_parameters])]
>>> args
[('q', Matrix([
[th1],
[th2]])), ('p', [L1])]
>>> text = generate(program, "python", "fgm_planar2", args, outputs=(3, 4))
>>> namespace = {}
>>> exec(text, namespace)
>>> namespace["fgm_planar2"]([0.0, numpy.pi / 2], [2.0]).round(12)
array([[ 0., -1.,  0.,  2.],
       [ 1.,  0.,  0.,  0.],
       [ 0.,  0.,  1.,  0.]])
>>> namespace["fgm_planar2"](numpy.zeros((1000, 2)), [2.0]).shape
(1000, 3, 4)
>>> for line in generate(program, "c", "fgm_planar2", args).splitlines()[-4:-1]:  # each entry stored once computed
...     print(line)
    const double S12 = C1*S2 + C2*S1;
    out[1] = -S12;  /* T0T2_12 */
    out[4] = S12;  /* T0T2_21 */
"""

from kanerobot.codegen.backend import Backend, CodegenError, output_layout
from kanerobot.codegen.c import CBackend
from kanerobot.codegen.jax import JaxBackend
from kanerobot.codegen.julia import JuliaBackend
from kanerobot.codegen.matlab import MatlabBackend
from kanerobot.codegen.python import PythonBackend
from kanerobot.robot.io import atomic_write_text

__all__ = [
    "LANGUAGES",
    "Backend",
    "CBackend",
    "CodegenError",
    "JaxBackend",
    "JuliaBackend",
    "MatlabBackend",
    "PythonBackend",
    "generate",
    "output_layout",
    "write",
]

#: Backend class of each language name accepted by :func:`generate`.
LANGUAGES = {
    "python": PythonBackend,
    "c": CBackend,
    "matlab": MatlabBackend,
    "julia": JuliaBackend,
    "jax": JaxBackend,  # needs JAX to run, not to write
}


def generate(program, lang, name, args, outputs=None, doc=""):
    """Source code of a function evaluating ``program``'s outputs.

    Parameters
    ----------
    program : kanerobot.symbolic.Program
    lang : {"python", "c", "matlab", "julia", "jax"}
    name : str
        Function name: letters, digits and ``_``, starting with a letter,
        not reserved in ``lang``.
    args : list of (str, sequence of sympy.Symbol)
        Argument groups in order, e.g. ``[("q", robot.q), ("qd", robot.qd),
        ("qdd", robot.qdd), ("p", parameters)]``; each is one array
        argument whose entries are those symbols.  Together they must hold
        every input the chosen outputs need.
    outputs : None, list, (rows, cols), nested list or sympy.Matrix, optional
        What the function returns.  By default all the program's outputs in
        program order as a vector ``(m,)``; a list of output names (or
        expressions) for a vector of those; ``(rows, cols)`` for the outputs
        as a matrix, placed by their names (``A12`` is row 1, column 2) or
        else row by row; outputs naming one triangle of a square matrix
        (``A11 A12 A22 ...``, an inertia matrix) give a symmetric matrix;
        a nested list or ``sympy.Matrix`` of names
        or expressions for any matrix (``None`` entries of a nested list
        copy the transposed entry).  See
        :func:`~kanerobot.codegen.backend.output_layout`.
    doc : str, optional
        Description put first in the generated documentation.

    Returns
    -------
    str
        The text of a complete file (module, ``.c`` file, ``.m`` function
        file, ``.jl`` file), ending with a newline.

    Raises
    ------
    CodegenError
        Unknown language, invalid or reserved function or argument name,
        unknown output, impossible shape, an expression the language cannot
        print.
    kanerobot.errors.ParameterError
        When the outputs need an input that no argument group holds.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.symbolic import Program
    >>> a, b = sympy.symbols("a b")
    >>> p = Program(inputs=[a, b])
    >>> _ = p.set_output("Y", p.assign("U", a * b) + a)
    >>> text = generate(p, "julia", "f", [("x", [a, b])])
    >>> print(text[text.index("function f"):])
    function f(x)
        length(x) == 2 || throw(ArgumentError("f: x must have 2 entries"))
        a = x[1]
        b = x[2]
        U = a .* b
        out = zeros(promote_type(Float64, eltype(x)), 1)
        out[1] = U + a  # Y
        return out
    end
    <BLANKLINE>
    >>> generate(p, "fortran", "f", [("x", [a, b])])
    Traceback (most recent call last):
    ...
    kanerobot.codegen.backend.CodegenError: unknown language 'fortran': choose among c, jax, julia, matlab, python
    """
    try:
        backend = LANGUAGES[lang]
    except (KeyError, TypeError):
        raise CodegenError(f"unknown language {lang!r}: choose among {', '.join(sorted(LANGUAGES))}") from None
    return backend(program, name, args, outputs=outputs, doc=doc).generate()


def write(path, text):
    """Write generated ``text`` to ``path`` atomically (temporary file, then rename).

    Parameters
    ----------
    path : str or pathlib.Path
        The folder must exist.  For MATLAB, name the file after the
        function (``name.m``).
    text : str

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write(pathlib.Path(folder) / "f.py", "x = 1\\n").read_text()
    'x = 1\\n'
    """
    from pathlib import Path

    atomic_write_text(path, text)
    return Path(path)
