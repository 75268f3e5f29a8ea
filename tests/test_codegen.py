"""Code export of programs: every backend gives the numbers of the program.

The Python module is imported from a file and compared with
``Program.to_function`` and with ``substitute_back`` + ``lambdify`` (one state
and a vectorized batch of 1000); the C file is compiled into a shared library
with ``-Wall -Wextra -Werror`` and called through ctypes; MATLAB and Julia
files are run by ``octave``/``julia`` when installed, and are always read back
line by line (every assignment parsed with ``parse_expression`` after mapping
the syntax, and evaluated), so their numbers are checked either way.
"""

import ast
import ctypes
import importlib.util
import re
import shutil
import subprocess

import numpy
import pytest
import sympy

import kanerobot
from kanerobot.codegen import LANGUAGES, CBackend, CodegenError, PythonBackend, generate, output_layout, write
from kanerobot.codegen import c as c_backend
from kanerobot.dynamics.kinematic_programs import jacobian_program
from kanerobot.errors import ParameterError, RobotFileError
from kanerobot.geometry import fast_geometric_model
from kanerobot.robot.expressions import parse_expression
from kanerobot.symbolic import Program

CC = next((shutil.which(c) for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
OCTAVE = shutil.which("octave")
JULIA = shutil.which("julia")
TOL = 1e-12


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------


class Case:
    """A program, its argument groups, and random values for them."""

    def __init__(self, name, program, args, outputs=None):
        self.name, self.program, self.args, self.outputs = name, program, args, outputs
        self.symbols = [s for _, group in args for s in group]

    def flat(self, values):
        """Values of every argument symbol, in order, from per-group arrays."""
        return [v for array in values for v in numpy.moveaxis(numpy.asarray(array), -1, 0)]

    def reference(self, values):
        """(batch..., m) from Program.to_function on the flat values."""
        out = self.program.to_function(self.symbols)(*self.flat(values))
        return numpy.moveaxis(out, 0, -1)


def rx90_case():
    robot = kanerobot.load(kanerobot.frames_path("rx90"))
    program = fast_geometric_model(robot)
    params = [sympy.Symbol(n) for n in robot.geometric_parameters]
    return Case("fgm", program, [("q", list(robot.q)), ("qd", list(robot.qd)), ("p", params)])


def rx90_jacobian_case():
    """The Jacobian `kanerobot model rx90 jac --projection 3 --lang ...` exports (issue 25): 6x6, placed by its names."""
    robot = kanerobot.load(kanerobot.frames_path("rx90"))
    program = jacobian_program(robot, "6", "3")
    grid = [[f"J{r + 1}_{c + 1}" for c in range(6)] for r in range(6)]
    params = robot.parameter_order(program.used_inputs() - set(robot.q))
    return Case("jac", program, [("q", list(robot.q)), ("p", params)], outputs=grid)


# Inputs whose names some language cannot take.
X, Y, L = sympy.symbols("x y L")
LAM, END, OUT, INT, SPACE = (sympy.Symbol(n) for n in ("lambda", "end", "out", "int", "x y"))


def mixed_case():
    """sign, powers, division, sqrt, atan2, abs, constants, awkward names."""
    p = Program(inputs=[X, Y, L, LAM, END, OUT, INT, SPACE])
    r2 = p.assign("R2", X**2 + Y**2)
    r = p.assign("R", sympy.sqrt(r2))
    a = p.assign("A", sympy.atan2(Y, X))
    b = p.assign("B", sympy.sign(LAM) * r / L)
    p.set_output("F1", b + END**3)
    p.set_output("F2", a**2 - 1 / (r2 + OUT**2))
    p.set_output("F3", sympy.Abs(LAM) * sympy.sqrt(2) + sympy.pi * X / 3 + sympy.Rational(1, 3) / L**2)
    p.set_output("F4", 1 / sympy.sqrt(r) + INT * r**sympy.Rational(3, 2))
    p.set_output("F5", sympy.sign(X * Y) * SPACE - sympy.Float("2.5") * sympy.exp(-L) * sympy.cos(a))
    p.set_output("F6", sympy.log(L) + sympy.E * sympy.tan(Y) ** 2)
    p.set_output("F7", 1)
    return Case("mixed", p, [("xy", [X, Y]), ("k", [L, LAM, END, OUT, INT, SPACE])])


Q3 = sympy.symbols("q1:4")
M1, M2 = sympy.symbols("M1 M2")


def inertia_plain():
    c, s = [sympy.cos(q) for q in Q3], [sympy.sin(q) for q in Q3]
    A = sympy.Matrix([[c[0], s[1], M1 * c[2]], [s[0] * c[1], M2, c[1] * s[2]], [1, c[0] * s[2], s[1]]])
    return A.T * sympy.diag(M1, M2, 1) * A + sympy.eye(3)


def inertia_case():
    """A symmetric 3x3 matrix whose outputs are its upper triangle, column by
    column as SYMORO and the composite links print it (A11 A12 A22 A13 ...)."""
    p = Program(inputs=list(Q3) + [M1, M2])
    M = p.replace_sin_cos(inertia_plain())
    for j in range(3):
        for i in range(j + 1):
            p.set_output(f"A{i + 1}{j + 1}", p.assign(f"U{i + 1}{j + 1}", M[i, j]))
    return Case("inertia", p, [("q", list(Q3)), ("m", [M1, M2])], outputs=(3, 3))


CASES = {"fgm": rx90_case, "jac": rx90_jacobian_case, "mixed": mixed_case, "inertia": inertia_case}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    return CASES[request.param]()


def random_values(case, rng, batch=()):
    values = []
    for argname, group in case.args:
        array = rng.uniform(0.3, 2.0, size=batch + (len(group),))
        if case.name == "mixed" and argname == "xy":
            array = rng.uniform(-2.0, 2.0, size=batch + (len(group),))
        if case.name == "mixed" and argname == "k":
            array[..., 1] *= rng.choice([-1.0, 1.0], size=batch)  # sign(lambda) both ways
        values.append(array)
    return values


def reference_shape(case, flat):
    """Reference numbers laid out as the generated function returns them."""
    if case.outputs is None:
        return flat
    if isinstance(case.outputs, list):  # a grid of the outputs' names, in program order row by row
        return flat.reshape(flat.shape[:-1] + (len(case.outputs), len(case.outputs[0])))
    n = case.outputs[0]
    full = numpy.empty(flat.shape[:-1] + (n, n))
    for k, name in enumerate(case.program.outputs):  # A{i}{j}, i <= j
        i, j = int(name[1]) - 1, int(name[2]) - 1
        full[..., i, j] = full[..., j, i] = flat[..., k]
    return full


# --------------------------------------------------------------------------
# Runners: each returns the numbers of one backend for one state
# --------------------------------------------------------------------------


def import_python(text, path, name):
    write(path, text)
    spec = importlib.util.spec_from_file_location(f"generated_{name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def compile_c(text, folder, name, level="-O2"):
    source = write(folder / f"{name}.c", text)
    library = folder / f"lib{name}.so"
    result = subprocess.run(
        [CC, level, "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", str(library), str(source), "-lm"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and not result.stderr, result.stderr
    lib = ctypes.CDLL(str(library))
    function = getattr(lib, name)
    function.restype = None
    return function


def call_c(function, values, size):
    pointer = ctypes.POINTER(ctypes.c_double)
    arrays = [numpy.ascontiguousarray(v, dtype=float) for v in values]
    out = numpy.full(size, numpy.nan)
    function.argtypes = [pointer] * (len(arrays) + 1)
    function(*[a.ctypes.data_as(pointer) for a in arrays], out.ctypes.data_as(pointer))
    return out


def run_octave(text, folder, name, values):
    write(folder / f"{name}.m", text)
    call = ", ".join("[" + ", ".join(repr(float(v)) for v in array) + "]" for array in values)
    script = f"cd('{folder}'); out = {name}({call}); printf('%.17g\\n', out.');"
    result = subprocess.run(
        [OCTAVE, "--no-gui", "--no-window-system", "--quiet", "--eval", script],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return numpy.array([float(v) for v in result.stdout.split()])


def run_julia(text, folder, name, values):
    path = write(folder / f"{name}.jl", text)
    call = ", ".join("Float64[" + ", ".join(repr(float(v)) for v in array) + "]" for array in values)
    script = (
        f'include({str(path)!r}); out = {name}({call}); '
        'for v in vec(permutedims(out)); println(repr(v)); end'
    ).replace("'", '"')
    result = subprocess.run([JULIA, "--startup-file=no", "-e", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return numpy.array([float(v) for v in result.stdout.split()])


# Reading MATLAB and Julia back: one regular expression per kind of line.
_SYNTAX = {
    "matlab": {
        "signature": r"^function out = (\w+)\((.*)\)$",
        "unpack": r"^\s+(\w+) = (\w+)\((\d+)\);$",
        "allocate": r"^\s+out = zeros\((\d+), (\d+)\);$",
        "store": r"^\s+out\(([\d, ]+)\) = (.+);  % (.+)$",
        "assign": r"^\s+(\w+) = (.+);$",
        "skip": r"^(%.*|\s+if numel\(\w+\) ~= \d+|\s+error\('.*'\);|\s+end|end)$",
    },
    "julia": {
        "signature": r"^function (\w+)\((.*)\)$",
        "unpack": r"^\s+(\w+) = (\w+)\[(\d+)\]$",
        "allocate": r"^\s+out = zeros\(promote_type\(Float64(?:, eltype\(\w+\))*\), ([\d, ]+)\)$",
        "store": r"^\s+out\[([\d, ]+)\] = (.+)  # (.+)$",
        "assign": r"^\s+(\w+) = (.+)$",
        "skip": r"^(\s+length\(\w+\) == \d+ \|\| throw\(ArgumentError\(\".*\"\)\)|\s+return out|end)$",
    },
}


class _Atan2(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "atan" and len(node.args) == 2:
            node.func.id = "atan2"
        return node


def to_python_syntax(code, lang):
    """Expression of the generated text in the grammar of parse_expression."""
    code = code.replace(".^", "**").replace("^", "**").replace(".*", "*").replace("./", "/")
    if lang == "julia":
        code = code.replace("//", "/")
    # Variables may be Python keywords (lambda): prefix every name not called.
    code = re.sub(r"(?<![\w.])([A-Za-z_]\w*)\b(?!\s*\()", lambda m: m.group(1) if m.group(1) == "pi" else "V_" + m.group(1), code)
    code = ast.unparse(_Atan2().visit(ast.parse(code, mode="eval")))
    return code


def read_back(text, lang, name, args, values):
    """Check the structure of a MATLAB/Julia function and evaluate it.

    Returns (numbers in row-major order, assigned names in order, shape).
    """
    syntax = {key: re.compile(rx) for key, rx in _SYNTAX[lang].items()}
    lines = text.splitlines()
    if lang == "julia":
        # The docstring: from the first line to the closing quotes.
        assert lines[0] == '"""'
        close = lines.index('"""', 1)
        assert lines[1] == f"    {name}({', '.join(argname for argname, _ in args)})"
        lines = lines[close + 1:]
    signature = syntax["signature"].match(lines[0])
    assert signature, lines[0]
    assert signature.group(1) == name
    assert signature.group(2) == ", ".join(argname for argname, _ in args)
    assert lines[-1] == "end"
    groups = {argname: array for (argname, _), array in zip(args, values)}
    env, assigned, stored, shape = {}, [], {}, None
    for line in lines[1:]:
        if syntax["skip"].match(line):
            continue
        if m := syntax["unpack"].match(line):
            assert m.group(2) in groups, line
            env[sympy.Symbol("V_" + m.group(1))] = sympy.Float(float(groups[m.group(2)][int(m.group(3)) - 1]), 30)
        elif m := syntax["allocate"].match(line):
            assert shape is None and not stored
            shape = tuple(int(n) for n in (m.groups() if lang == "matlab" else m.group(1).split(", ")))
        elif m := syntax["store"].match(line):
            assert shape is not None, "out is written before it is created"
            position = tuple(int(k) - 1 for k in m.group(1).split(", "))
            assert position not in stored, f"{position} assigned twice"
            rhs = m.group(2)
            copy = re.fullmatch(r"out[\(\[]([\d, ]+)[\)\]]", rhs)
            if copy:
                stored[position] = stored[tuple(int(k) - 1 for k in copy.group(1).split(", "))]
            else:
                value = parse_expression(to_python_syntax(rhs, lang)).xreplace(env)
                stored[position] = complex(sympy.N(value, 30))
        elif m := syntax["assign"].match(line):
            assert shape is None, "assignment after the result is created"
            value = parse_expression(to_python_syntax(m.group(2), lang)).xreplace(env)
            env[sympy.Symbol("V_" + m.group(1))] = sympy.N(value, 30)
            assigned.append(m.group(1))
        else:
            raise AssertionError(f"unexpected line {line!r}")
    assert shape is not None
    if lang == "julia" and len(shape) == 1:
        shape = shape + (1,)
    positions = {(i, j) for i in range(shape[0]) for j in range(shape[1])}
    keys = {p if len(p) == 2 else (p[0], 0) for p in stored}
    assert keys == positions, "every entry of the result is assigned once"
    full = {(p if len(p) == 2 else (p[0], 0)): v for p, v in stored.items()}
    numbers = numpy.array([full[p] for p in sorted(positions)])
    assert numpy.all(numbers.imag == 0)
    return numbers.real, assigned, shape


def evaluate(lang, text, folder, name, case, values):
    """Numbers of one backend at one state, row-major."""
    if lang == "python":
        return numpy.ravel(import_python(text, folder / f"{name}_{case.name}.py", name)(*values))
    if lang == "jax":  # the module imports jax: run only where it is installed (the test extra)
        return numpy.ravel(import_python(text, folder / f"{name}_{case.name}_jax.py", name)(*values))
    if lang == "c":
        size = int(numpy.prod(output_layout(case.program, case.outputs)[0]))
        return call_c(compile_c(text, folder, name), values, size)
    if lang == "matlab" and OCTAVE:
        return run_octave(text, folder, name, values)
    if lang == "julia" and JULIA:
        return run_julia(text, folder, name, values)
    return read_back(text, lang, name, case.args, values)[0]


# --------------------------------------------------------------------------
# Python
# --------------------------------------------------------------------------


def test_python_module_matches_program(case, tmp_path):
    rng = numpy.random.default_rng(7)
    text = generate(case.program, "python", "model", case.args, outputs=case.outputs, doc="Test model.")
    function = import_python(text, tmp_path / "model.py", "model")
    shape = output_layout(case.program, case.outputs)[0]
    one = random_values(case, rng)
    got = function(*one)
    assert got.shape == shape
    assert numpy.max(numpy.abs(got - reference_shape(case, case.reference(one)))) < TOL
    # Independent path: outputs substituted back, lambdified.
    exprs = list(case.program.substitute_back().values())
    plain = sympy.lambdify(case.symbols, exprs, "numpy")(*case.flat(one))
    assert numpy.max(numpy.abs(numpy.ravel(got) - numpy.ravel(reference_shape(case, numpy.array(plain, dtype=float))))) < TOL
    batch = random_values(case, rng, (1000,))
    got = function(*batch)
    assert got.shape == (1000,) + shape
    assert numpy.max(numpy.abs(got - reference_shape(case, case.reference(batch)))) < TOL
    # Each row of the batch is the single-state result.
    assert numpy.max(numpy.abs(got[17] - function(*[v[17] for v in batch]))) < TOL


def test_python_batch_broadcasts_and_checks_sizes(tmp_path):
    case = rx90_case()
    function = import_python(generate(case.program, "python", "fgm", case.args, outputs=(3, 4)), tmp_path / "f.py", "fgm")
    rng = numpy.random.default_rng(3)
    q = rng.uniform(-3, 3, size=(1000, 6))
    p = numpy.array([0.45, 0.45])
    got = function(q, numpy.zeros(6), p)  # one qd, one p for the whole batch
    assert got.shape == (1000, 3, 4)
    flat = case.reference([q, numpy.zeros((1000, 6)), numpy.tile(p, (1000, 1))])
    assert numpy.max(numpy.abs(got - flat.reshape(1000, 3, 4))) < TOL
    assert function(q[:5].tolist(), [0] * 6, p).shape == (5, 3, 4)  # lists are fine
    assert function(q.reshape(10, 100, 6), numpy.zeros(6), p).shape == (10, 100, 3, 4)
    with pytest.raises(ValueError, match="q must have 6 entries"):
        function(q[:, :5], numpy.zeros(6), p)
    with pytest.raises(ValueError, match="p must have 2 entries"):
        function(q, numpy.zeros(6), 0.45)


def test_python_module_is_self_contained(tmp_path):
    case = mixed_case()
    text = generate(case.program, "python", "mixed", case.args)
    imports = [line for line in text.splitlines() if re.match(r"^\s*(import|from)\s", line)]
    assert imports == ["import numpy"]
    assert "numpy.sign(" in text and "numpy.arctan2(" in text
    module_path = write(tmp_path / "mixed.py", text)
    spec = importlib.util.spec_from_file_location("mixed_module", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.OUTPUTS == ("F1", "F2", "F3", "F4", "F5", "F6", "F7")
    assert module.SHAPE == (7,)
    assert module.ARGUMENTS["k"] == ("L", "lambda", "end", "out", "int", "x y")
    assert module.mixed.__doc__.startswith("mixed")


# --------------------------------------------------------------------------
# C
# --------------------------------------------------------------------------

needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc, gcc, clang) found")


@needs_cc
def test_c_library_matches_program(case, tmp_path):
    text = generate(case.program, "c", "model", case.args, outputs=case.outputs)
    function = compile_c(text, tmp_path, "model")
    shape = output_layout(case.program, case.outputs)[0]
    rng = numpy.random.default_rng(11)
    for _ in range(20):
        values = random_values(case, rng)
        got = call_c(function, values, int(numpy.prod(shape)))
        want = numpy.ravel(reference_shape(case, case.reference(values)))
        assert numpy.max(numpy.abs(got - want)) < TOL


@needs_cc
@pytest.mark.parametrize("std", ["c99", "c11"])
def test_c_is_strict_standard_c(case, tmp_path, std):
    text = generate(case.program, "c", "model", case.args, outputs=case.outputs)
    source = write(tmp_path / "model.c", text)
    result = subprocess.run(
        [CC, f"-std={std}", "-pedantic", "-O2", "-Wall", "-Wextra", "-Werror", "-c", "-o", str(tmp_path / "m.o"), str(source)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and not result.stderr, result.stderr


def test_c_text():
    case = mixed_case()
    backend = CBackend(case.program, "mixed", case.args)
    text = backend.generate()
    prototype = "void mixed(const double *xy, const double *k, double *out)"
    assert backend.prototype() == prototype
    assert f" *   {prototype};" in text and f"{prototype};\n\n{prototype}\n{{" in text
    assert "#include <math.h>" in text and "M_PI" not in text and "M_SQRT2" not in text
    assert "static inline double kr_sign(double x)" in text
    # Without sign() there is no helper; an unused argument is cast to void.
    fgm = rx90_case()
    text = generate(fgm.program, "c", "fgm", fgm.args)
    assert "kr_sign" not in text
    assert "    (void)qd;" in text
    declarations = [line for line in text.splitlines() if line.startswith("    const double ")]
    assert len(declarations) == 6 + 2 + len(fgm.program.assignments())  # q and p entries, then one per assignment


@needs_cc
def test_c_sines_and_cosines_within_one_ulp(tmp_path):
    """kr_sincos (inline, for angles of the inputs) against numpy over the whole range.

    Angles in [-10, 10], near multiples of pi/2 (where the reduction cancels),
    up to 823549 (the inline path's limit) and beyond it, tiny, signed zeros,
    infinities and NaN: within one unit in the last place of numpy's value,
    the sign of zero kept, NaN where numpy gives NaN.
    """
    x, y, _r = sympy.symbols("x y r")
    p = Program(inputs=[x, y])
    assigned = p.assign("r", x - y)
    p.set_output("s", sympy.sin(x))
    p.set_output("c", sympy.cos(x))
    p.set_output("s2", sympy.sin(2 * x + y))  # an expression of the inputs: in the table too
    p.set_output("c2", sympy.cos(assigned))  # an assigned symbol's: the C library's cos
    p.set_output("cy", sympy.cos(y))
    text = generate(p, "c", "trig", [("v", [x, y])])
    assert "kr_x[1] = 2*x + y;" in text and "kr_x[2] = y;" in text
    assert "kr_x[3] = 0.0;" in text and "kr_sincos(4, kr_x, kr_s, kr_c);" in text  # three angles and a pad: an even count
    assert "cos(r)" in text and " sin(x)" not in text and " cos(x)" not in text
    function = compile_c(text, tmp_path, "trig")
    rng = numpy.random.default_rng(5)
    half_pi = numpy.pi / 2
    angles = numpy.concatenate(
        [
            rng.uniform(-10, 10, 2000),
            numpy.arange(-400, 400) * half_pi + rng.uniform(-1e-9, 1e-9, 800),
            numpy.arange(-400, 400) * half_pi,
            rng.uniform(-823549.0, 823549.0, 2000),
            [823548.9, -823548.9, 823549.0, 1e6, -3e7, 1e300],
            rng.uniform(-1e-6, 1e-6, 100),
            [0.0, -0.0, 1e-300, -5e-324, numpy.inf, -numpy.inf, numpy.nan],
        ]
    )
    others = rng.uniform(-10, 10, len(angles))
    got = numpy.array([call_c(function, [[a, b]], 5) for a, b in zip(angles, others)])
    with numpy.errstate(invalid="ignore"):
        want = [numpy.sin(angles), numpy.cos(angles), numpy.sin(2 * angles + others), numpy.cos(angles - others), numpy.cos(others)]
    want = numpy.stack(want, axis=1)
    finite = numpy.isfinite(want)
    assert numpy.array_equal(numpy.isnan(got), numpy.isnan(want))
    assert numpy.all(numpy.abs(got - want)[finite] <= numpy.spacing(numpy.abs(want))[finite])
    assert numpy.array_equal(numpy.signbit(got[:, 0][angles == 0]), numpy.signbit(angles[angles == 0]))


@needs_cc
def test_c_sign_is_numpys(tmp_path):
    """kr_sign (branch-free) gives numpy.sign's values: zeros, the smallest and
    largest doubles, infinities and NaN included."""
    x = sympy.Symbol("x")
    p = Program(inputs=[x])
    p.set_output("s", sympy.sign(x))
    function = compile_c(generate(p, "c", "sgn", [("v", [x])]), tmp_path, "sgn")
    values = numpy.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 0.5, -1.0, 1.0, -7.5, 1.7e308, -1.7e308, numpy.inf, -numpy.inf, numpy.nan])
    values = numpy.concatenate([values, numpy.random.default_rng(8).normal(0, 3, 50)])
    got = numpy.array([call_c(function, [[v]], 1)[0] for v in values])
    assert numpy.array_equal(got, numpy.sign(values), equal_nan=True)


def test_c_reads_arguments_just_before_their_first_use():
    """Every entry of an argument is read just before the first statement that
    uses it (only other such reads between them; the sine and cosine table is
    one statement of several lines), never all at the top."""
    case = rx90_case()
    backend = CBackend(case.program, "fgm", case.args)
    lines = backend.generate().split(backend.prototype() + "\n{\n")[1].splitlines()
    reads = [k for k, line in enumerate(lines) if re.match(r"    const double \w+ = (q|p)\[\d+\];$", line)]
    assert len(reads) == 6 + 2  # th1 .. th6, D3, RL4
    for k in reads:
        name = lines[k].split()[2]
        first_use = next(j for j in range(k + 1, len(lines)) if re.search(rf"\b{name}\b", lines[j]))
        between = [lines[j] for j in range(k + 1, first_use) if j not in reads]
        assert all(line.startswith(("    double kr_x[", "    kr_x[")) for line in between), (lines[k], lines[first_use])
    assert lines[reads[-1] + 1].strip() and reads[-1] > len(lines) // 2  # the last parameters are read late


def test_c_writes_results_just_after_what_they_need():
    """Each entry of the result is written on the line after the last statement
    it reads (or after other such writes), a copied entry after its source."""
    case = inertia_case()
    backend = CBackend(case.program, "inertia", case.args, outputs=case.outputs)
    lines = backend.generate().split(backend.prototype() + "\n{\n")[1].splitlines()[:-1]
    defined = {}  # name -> line
    for k, line in enumerate(lines):
        if line.startswith("    const double "):
            defined[line.split()[2]] = k
    stored = {}
    for k, line in enumerate(lines):
        if not line.startswith("    out["):
            continue
        target, value = re.match(r"    out\[(\d+)\] = (.*);  /\*", line).groups()
        source = re.fullmatch(r"out\[(\d+)\]", value)
        if source:
            last = stored[source.group(1)]
        else:
            last = max((defined[name] for name in re.findall(r"[A-Za-z_]\w*", value) if name in defined), default=-1)
        assert all(lines[j].startswith("    out[") for j in range(last + 1, k)), line
        stored[target] = k
    assert len(stored) == 9 and "    out[3] = out[1];  /* (1, 0) = (0, 1) A12 */" in lines


CLONES = '__attribute__((target_clones("avx2", "default")))'


def test_c_avx2_clone_up_to_the_limit(monkeypatch):
    """Functions of up to CLONE_LIMIT assignments get the AVX2 clone, behind an #if; larger ones do not."""
    case = rx90_case()
    text = generate(case.program, "c", "fgm", case.args)
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith(CLONES))
    assert lines[at - 1].startswith("#if defined(__x86_64__) && defined(__GLIBC__)") and lines[at + 1] == "#endif"
    assert lines[at + 2] == CBackend(case.program, "fgm", case.args).prototype() + ";"  # the declaration, before the definition
    monkeypatch.setattr(c_backend, "CLONE_LIMIT", len(case.program.assignments()) - 1)
    assert "target_clones" not in generate(case.program, "c", "fgm", case.args)


def _has_avx2():
    try:
        with open("/proc/cpuinfo") as info:
            return " avx2" in info.read()
    except OSError:
        return False


@needs_cc
@pytest.mark.skipif(not _has_avx2(), reason="the processor has no AVX2 (or no /proc/cpuinfo to say so)")
def test_c_avx2_and_plain_builds_give_the_same_bits(tmp_path):
    """The RX-90's inverse dynamic model built for AVX2 alone and for plain
    x86-64 alone: equal to the last bit, at -O3 as at -O2."""
    model = kanerobot.derive(kanerobot.load(kanerobot.frames_path("rx90")))
    groups = [("x", model.state_symbols), ("p", [sympy.Symbol(n) for n in model.parameters])]  # q, qd, qdd, tau, wrench
    text = generate(model.program("inverse_dynamics"), "c", "idm", groups)
    assert CLONES in text
    rng = numpy.random.default_rng(3)
    values = [rng.uniform(-3, 3, len(model.state_symbols)), rng.uniform(0.1, 1, len(model.parameters))]
    n = len(model.q)
    results = []
    for target in ('__attribute__((target("avx2")))', ""):
        for level in ("-O2", "-O3"):
            name = f"idm{len(results)}"
            source = text.replace(CLONES, target).replace("idm(", f"{name}(")
            folder = tmp_path / name
            folder.mkdir()
            results.append(call_c(compile_c(source, folder, name, level), values, n))
    assert all(numpy.array_equal(r, results[0]) for r in results[1:])
    assert numpy.all(numpy.isfinite(results[0])) and numpy.any(results[0] != 0)


# --------------------------------------------------------------------------
# MATLAB / Octave and Julia
# --------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["matlab", "julia"])
def test_text_backends_read_back(case, lang, tmp_path):
    rng = numpy.random.default_rng(5)
    text = generate(case.program, lang, "model", case.args, outputs=case.outputs, doc="Test model.")
    values = random_values(case, rng)
    numbers, assigned, shape = read_back(text, lang, "model", case.args, values)
    # One line per needed assignment, in program order, named as in the program.
    assert assigned == [s.name for s, _ in case.program.assignments()]
    want = reference_shape(case, case.reference(values))
    assert shape == (want.shape + (1,))[:2]
    assert numpy.max(numpy.abs(numbers - numpy.ravel(want))) < TOL


@pytest.mark.skipif(OCTAVE is None, reason="octave is not installed")
def test_octave_runs(case, tmp_path):
    values = random_values(case, numpy.random.default_rng(8))
    text = generate(case.program, "matlab", "model", case.args, outputs=case.outputs)
    got = run_octave(text, tmp_path, "model", values)
    assert numpy.max(numpy.abs(got - numpy.ravel(reference_shape(case, case.reference(values))))) < TOL


@pytest.mark.skipif(JULIA is None, reason="julia is not installed")
def test_julia_runs(case, tmp_path):
    values = random_values(case, numpy.random.default_rng(9))
    text = generate(case.program, "julia", "model", case.args, outputs=case.outputs)
    got = run_julia(text, tmp_path, "model", values)
    assert numpy.max(numpy.abs(got - numpy.ravel(reference_shape(case, case.reference(values))))) < TOL


def test_matlab_and_julia_syntax():
    case = mixed_case()
    matlab = generate(case.program, "matlab", "mixed", case.args, doc="Mixed functions.")
    assert matlab.startswith("function out = mixed(xy, k)\n% MIXED  Mixed functions.\n")
    assert "  out = zeros(7, 1);" in matlab and "atan2(y, x)" in matlab
    julia = generate(case.program, "julia", "mixed", case.args)
    assert "\nfunction mixed(xy, k)\n" in julia and julia.endswith("    return out\nend\n")
    assert "atan(y, x)" in julia and "atan2" not in julia.split('"""')[-1]
    assert "exp(1)" in julia  # E, which Julia does not call e


# --------------------------------------------------------------------------
# All backends agree (pydy-style)
# --------------------------------------------------------------------------


def test_every_backend_gives_the_same_numbers(case, tmp_path):
    values = random_values(case, numpy.random.default_rng(2024))
    results = {}
    for lang in LANGUAGES:
        if (lang == "c" and CC is None) or (lang == "jax" and importlib.util.find_spec("jax") is None):
            continue
        text = generate(case.program, lang, "model", case.args, outputs=case.outputs)
        results[lang] = evaluate(lang, text, tmp_path, "model", case, values)
    assert {"python", "matlab", "julia"} <= set(results)
    reference = numpy.ravel(reference_shape(case, case.reference(values)))
    for lang, numbers in results.items():
        assert numbers.shape == reference.shape, lang
        assert numpy.max(numpy.abs(numbers - results["python"])) < TOL, lang
        assert numpy.max(numpy.abs(numbers - reference)) < TOL, lang


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lang, renamed",
    [
        ("python", {"lambda": "lambda_", "int": "int_", "x y": "x_y"}),  # keyword, builtin
        ("c", {"out": "out_", "int": "int_", "x y": "x_y"}),
        ("matlab", {"end": "end_", "out": "out_", "x y": "x_y"}),
        ("julia", {"end": "end_", "out": "out_", "x y": "x_y"}),
        ("jax", {"lambda": "lambda_", "int": "int_", "x y": "x_y"}),
    ],
)
def test_renaming(lang, renamed):
    case = mixed_case()
    backend = LANGUAGES[lang](case.program, "mixed", case.args)
    assert backend.renamed == renamed
    text = backend.generate()
    assert "Renamed symbols" in text
    assert ", ".join(f"{old} -> {new}" for old, new in renamed.items()) in text
    # Robot names are kept.
    fgm = rx90_case()
    backend = LANGUAGES[lang](fgm.program, "fgm", fgm.args)
    assert backend.renamed == {}
    assert "Renamed" not in backend.generate()


def test_rename_avoids_names_in_use():
    a, b, c = sympy.Symbol("lambda"), sympy.Symbol("lambda_"), sympy.Symbol("q")
    p = Program(inputs=[a, b, c])
    p.set_output("F", a + 2 * b + 3 * c)
    backend = PythonBackend(p, "f", [("q", [a, b, c])])
    # lambda_ keeps its name; lambda takes the next free one; q yields to the argument q.
    assert backend.renamed == {"lambda": "lambda_1", "q": "q_"}
    namespace = {}
    exec(backend.generate(), namespace)
    assert namespace["f"]([1.0, 10.0, 100.0])[0] == 321.0


def test_matlab_name_length():
    long = sympy.Symbol("a" * 70)
    p = Program(inputs=[long])
    p.set_output("F", 2 * long)
    backend = LANGUAGES["matlab"](p, "f", [("x", [long])])
    assert len(backend.renamed["a" * 70]) <= 63


# --------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------


def test_chosen_outputs_keep_only_what_they_need(tmp_path):
    case = rx90_case()
    names = ["T0T6_14", "T0T6_24", "T0T6_34"]
    text = generate(case.program, "python", "position", case.args, outputs=names)
    function = import_python(text, tmp_path / "position.py", "position")
    values = random_values(case, numpy.random.default_rng(1), (50,))
    full = case.reference(values)
    keys = list(case.program.outputs)
    want = full[:, [keys.index(n) for n in names]]
    assert numpy.max(numpy.abs(function(*values) - want)) < TOL
    backend = PythonBackend(case.program, "position", case.args, outputs=names)
    assert len(backend.lines) < len(case.program.assignments())
    assert not any(s.name.startswith("C6") or s.name.startswith("S6") for s, _ in backend.lines)


def test_matrix_of_names_and_expressions(tmp_path):
    case = inertia_case()
    A = sympy.Symbol
    grid = [["A11", "A12", None], [None, "A22", A("A23") * 2], [A("A13") + 1, None, 0]]
    shape, entries = output_layout(case.program, grid)
    assert shape == (3, 3)
    copies = {e.position: e.source for e in entries if e.source is not None}
    assert copies == {(0, 2): (2, 0), (1, 0): (0, 1), (2, 1): (1, 2)}
    function = import_python(generate(case.program, "python", "grid", case.args, outputs=grid), tmp_path / "g.py", "grid")
    values = random_values(case, numpy.random.default_rng(4))
    M = reference_shape(case, case.reference(values))
    want = numpy.array([[M[0, 0], M[0, 1], M[0, 2] + 1], [M[0, 1], M[1, 1], 2 * M[1, 2]], [M[0, 2] + 1, 2 * M[1, 2], 0]])
    assert numpy.max(numpy.abs(function(*values) - want)) < TOL
    # A sympy Matrix of output names (what set_output_matrix returns) works too.
    names = sympy.Matrix(2, 2, [A("A11"), A("A12"), A("A12"), A("A22")])
    text = generate(case.program, "python", "sub", case.args, outputs=names)
    got = import_python(text, tmp_path / "s.py", "sub")(*values)
    assert numpy.max(numpy.abs(got - M[:2, :2])) < TOL


def test_shape_without_indexed_names_fills_row_by_row():
    a, b, c = sympy.symbols("a b c")
    p = Program(inputs=[a, b, c])
    for name, value in [("first", a), ("second", b), ("third", c)]:
        p.set_output(name, value)
    shape, entries = output_layout(p, (2, 2))  # upper triangle, row by row
    assert shape == (2, 2)
    assert {e.position: (e.label, e.source) for e in entries} == {
        (0, 0): ("first", None), (0, 1): ("second", None), (1, 1): ("third", None), (1, 0): ("second", (0, 1)),
    }
    namespace = {}
    exec(generate(p, "python", "f", [("x", [a, b, c])], outputs=(2, 2)), namespace)
    assert namespace["f"]([1.0, 2.0, 3.0]).tolist() == [[1.0, 2.0], [2.0, 3.0]]
    shape, entries = output_layout(p, (1, 3))
    assert [e.label for e in entries] == ["first", "second", "third"]


def test_indexed_names_beyond_nine():
    x = sympy.Symbol("x")
    p = Program(inputs=[x])
    n = 11
    for j in range(n):  # column by column, upper triangle, J1_1 J1_2 J2_2 ...
        for i in range(j + 1):
            p.set_output(f"J{i + 1}_{j + 1}", x * (100 * (i + 1) + j + 1))
    namespace = {}
    exec(generate(p, "python", "f", [("x", [x])], outputs=(n, n)), namespace)
    M = namespace["f"]([1.0])
    assert M.shape == (n, n) and M[0, 10] == M[10, 0] == 111.0 and M[9, 10] == 1011.0


def test_full_matrix_from_shape():
    case = rx90_case()
    shape, entries = output_layout(case.program, (3, 4))
    assert shape == (3, 4) and [e.label for e in entries][:2] == ["T0T6_11", "T0T6_12"]
    assert all(e.source is None for e in entries)
    with pytest.raises(CodegenError, match="12 outputs"):
        output_layout(case.program, (4, 4))


# --------------------------------------------------------------------------
# Errors and files
# --------------------------------------------------------------------------


def test_errors():
    case = rx90_case()
    with pytest.raises(CodegenError, match="unknown language"):
        generate(case.program, "cobol", "f", case.args)
    with pytest.raises(ParameterError, match="D3, RL4"):
        generate(case.program, "python", "f", case.args[:2])
    with pytest.raises(CodegenError, match="reserved"):
        generate(case.program, "c", "sin", case.args)
    with pytest.raises(CodegenError, match="reserved"):
        generate(case.program, "julia", "f", [("end", case.args[0][1]), case.args[2]])
    with pytest.raises(CodegenError, match="not a valid"):
        generate(case.program, "python", "2f", case.args)
    with pytest.raises(CodegenError, match="neither an output"):
        generate(case.program, "python", "f", case.args, outputs=["T0T6_99"])
    with pytest.raises(CodegenError, match="in argument"):
        generate(case.program, "python", "f", case.args + [("again", case.args[0][1])])
    with pytest.raises(CodegenError, match="no outputs"):
        generate(Program(inputs=[X]), "python", "f", [("x", [X])])


def test_write_is_atomic(tmp_path):
    case = mixed_case()
    text = generate(case.program, "julia", "mixed", case.args)
    path = write(tmp_path / "mixed.jl", text)
    assert path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["mixed.jl"]
    with pytest.raises(RobotFileError, match="does not exist"):
        write(tmp_path / "missing" / "mixed.jl", text)
