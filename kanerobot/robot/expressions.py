"""Safe parsing and printing of parameter expressions.

Robot files hold expressions such as ``pi/2``, ``-d8``, ``d12*cos(g12)`` or
``g12 + pi/2``.  They are parsed here with :mod:`ast` into a syntax tree and
translated node by node into sympy, accepting only numbers, names, the
arithmetic operators and a short list of functions.  Nothing in a file ever
reaches :func:`eval`, :func:`sympy.sympify` or a Python builtin, so a file
holding ``__import__('os').system(...)`` is refused with a message, not run.
"""

import ast
import math
import re

import sympy

from kanerobot.errors import ExpressionError

#: Functions an expression may call, by the name written in files.
FUNCTIONS = {
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "atan": sympy.atan,
    "atan2": sympy.atan2,
    "sqrt": sympy.sqrt,
    "exp": sympy.exp,
    "log": sympy.log,
    "abs": sympy.Abs,
    "sign": sympy.sign,
}

#: Names that stand for constants rather than symbols.
CONSTANTS = {"pi": sympy.pi, "Pi": sympy.pi}
#: Names that spell a value that is not a finite number (case ignored for the
#: first three); a parameter called ``inf`` would read as infinity to anyone,
#: and sympy prints an infinite value ``oo``, so none of them is a symbol.
NOT_FINITE = ("nan", "inf", "infinity", "oo", "zoo")

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MAX_LENGTH = 2000
_MAX_EXPONENT = 64
#: Nesting of the syntax tree (parentheses, unary signs, chains of operators):
#: far more than any parameter needs, far less than Python's recursion limit.
_MAX_DEPTH = 200
#: Largest magnitude of a number: a double's.  Checking every intermediate
#: result against it also keeps ``10**10**10`` or ``((10**60)**60)**60`` from
#: building numbers of billions of digits.
_MAX_MAGNITUDE = sympy.Float(1.7976931348623157e308)

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def exact_number(x):
    """A float as a sympy number, whole numbers exact, so that a bound 0 or 1 vanishes from the programs.

    >>> exact_number(2.0), exact_number(0.5)
    (2, 0.500000000000000)
    """
    return sympy.Integer(int(x)) if float(x).is_integer() and abs(x) < 2**53 else sympy.Float(float(x))


#: Entries of rotations and axes read from a file this close to 0 or +-1 are made exact.
EXACT = 1e-14


def snapped_entry(x):
    """A sympy number: 0 and +-1 (within :data:`EXACT`) exact, else the float, for the entries of the
    rotations and axes the file readers build (so that an axis ``0 0 1`` read as floats keeps its zeros).

    >>> snapped_entry(1 - 1e-16), snapped_entry(0.25)
    (1, 0.250000000000000)
    """
    for whole in (0, 1, -1):
        if abs(x - whole) <= EXACT:
            return sympy.Integer(whole)
    return sympy.Float(float(x))


def symbol(name):
    """Return the sympy symbol that robot files call ``name``.

    All robot symbols are plain symbols (no assumptions), so that a user's
    ``sympy.Symbol('th1')`` is the same object as the robot's ``th1``.
    """
    return sympy.Symbol(name)


def is_valid_name(name):
    """True when ``name`` can be a symbol in a robot file."""
    return bool(_NAME.match(name)) and name not in FUNCTIONS and name not in CONSTANTS and not _not_finite_name(name)


def _not_finite_name(name):
    return name.lower() in NOT_FINITE[:3] or name in NOT_FINITE[3:]


def parse_expression(text):
    """Parse one parameter expression into sympy.

    Parameters
    ----------
    text : str or int or float or sympy.Expr
        Expression text such as ``"-pi/2"`` or ``"d12*cos(g12)"``; numbers and
        sympy expressions are returned as sympy objects unchanged.

    Returns
    -------
    sympy.Expr

    Raises
    ------
    ExpressionError
        For anything outside the grammar: attribute access, strings, calls of
        functions not in :data:`FUNCTIONS`, names starting with ``_``, ...;
        for a value that is not a finite real number (``nan``, ``inf``,
        ``1e999``, ``log(0)``, ``sqrt(-1)``, a number beyond a double's
        range such as ``10**400``) and for nesting deeper than 200 levels.

    Examples
    --------
    >>> parse_expression("d12*cos(g12) + pi/2")
    d12*cos(g12) + pi/2
    >>> parse_expression("__import__('os')")
    Traceback (most recent call last):
    ...
    kanerobot.errors.ExpressionError: '__import__' is not an allowed name (names are letters, digits and '_', starting with a letter)
    >>> parse_expression("10**10**10")
    Traceback (most recent call last):
    ...
    kanerobot.errors.ExpressionError: exponent '10000000000' is too large (at most 64)
    >>> parse_expression("1e999")
    Traceback (most recent call last):
    ...
    kanerobot.errors.ExpressionError: 1e999 is not a finite number (it reads as inf)
    """
    if isinstance(text, sympy.Basic):
        return text
    if isinstance(text, bool):
        raise ExpressionError(f"expected a number or an expression, got {text!r}")
    if isinstance(text, (int, float)):
        return _number(text, repr(text), None)
    if not isinstance(text, str):
        raise ExpressionError(f"expected a number or an expression, got {text!r}")
    source = text.strip()
    if not source:
        raise ExpressionError("empty value: write 0 for a zero parameter")
    if len(source) > _MAX_LENGTH:
        raise ExpressionError(f"expression longer than {_MAX_LENGTH} characters")
    # Mathematica-style powers appear in old SYMORO files.
    source = source.replace("^", "**")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {_shown(source)}: {exc.msg}", exc.offset) from None
    except (RecursionError, MemoryError, ValueError):
        # CPython's parser gives up on very deep nesting (RecursionError or
        # MemoryError) and on integer literals of more than 4300 digits.
        raise ExpressionError(f"cannot parse {_shown(source)}: nested too deeply or a number too long") from None
    _check_depth(tree.body)
    return _translate(tree.body, source)


def _shown(source, limit=80):
    """``source`` quoted for a message, shortened when long."""
    return repr(source) if len(source) <= limit else repr(source[:limit]) + f"... ({len(source)} characters)"


def _check_depth(root):
    """Refuse trees nested deeper than :data:`_MAX_DEPTH` (walked without recursion)."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ExpressionError(
                f"expression nested more than {_MAX_DEPTH} levels deep: simplify it", getattr(node, "col_offset", -1) + 1
            )
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _number(value, written, column):
    """A number of the file (or of Python) as sympy, refused when not finite."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ExpressionError(f"{written} is not a finite number (it reads as {value})", column)
    if isinstance(value, int) and abs(value) > _MAX_MAGNITUDE:
        raise ExpressionError(f"{_shown(written)} is too large: numbers must be within a double's range (1.8e308)", column)
    return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)


def _written(node, source):
    """The text of ``node`` as the file writes it."""
    return ast.get_source_segment(source, node) or ast.unparse(node)


def _finite(result, node, source):
    """``result`` of ``node``, refused if it is not a finite real value.

    Numbers are evaluated (a few digits suffice to see nan, infinity, an
    imaginary part or an overflow of a double); other expressions have
    their number atoms checked.
    """
    column = node.col_offset + 1
    written = _shown(_written(node, source), 60)
    if result.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        raise ExpressionError(f"{written} is {result}, not a finite number", column)
    if result.has(sympy.I):
        raise ExpressionError(f"{written} is {result}, not a real number", column)
    try:
        if result.is_number:
            value = result.evalf(15)
            real, imag = value.as_real_imag()
            if imag != 0:
                raise ExpressionError(f"{written} is {value}, not a real number", column)
            if not real.is_finite or abs(real) > _MAX_MAGNITUDE:
                raise ExpressionError(f"{written} is {value}, beyond a double's range (1.8e308)", column)
            return result
        for atom in result.atoms(sympy.Number):
            if abs(atom) > _MAX_MAGNITUDE:
                raise ExpressionError(
                    f"{written} holds the number {sympy.Float(atom, 4)}, beyond a double's range (1.8e308)", column
                )
    except ExpressionError:
        raise
    except Exception:  # mpmath or sympy giving up on an absurd value (exp(exp(exp(100))))
        raise ExpressionError(f"{written} cannot be evaluated to a finite number", column) from None
    return result


def _translate(node, source):
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ExpressionError(f"{value!r} is not a number", node.col_offset + 1)
        return _number(value, _written(node, source), node.col_offset + 1)
    if isinstance(node, ast.Name):
        return _name(node.id, node.col_offset + 1)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _translate(node.operand, source)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _translate(node.left, source), _translate(node.right, source)
        if isinstance(node.op, ast.Pow) and right.is_number and abs(right) > _MAX_EXPONENT:
            raise ExpressionError(f"exponent {_shown(str(right), 40)} is too large (at most {_MAX_EXPONENT})", node.col_offset + 1)
        if isinstance(node.op, ast.Div) and right.is_zero:
            raise ExpressionError("division by zero", node.col_offset + 1)
        return _finite(_BINARY[type(node.op)](left, right), node, source)
    if isinstance(node, ast.Call):
        return _finite(_call(node, source), node, source)
    raise ExpressionError(
        f"{ast.unparse(node)!r} is not allowed: use numbers, names, + - * / ** and "
        f"the functions {', '.join(sorted(FUNCTIONS))}",
        getattr(node, "col_offset", -1) + 1,
    )


def _name(name, column):
    if name in CONSTANTS:
        return CONSTANTS[name]
    if _not_finite_name(name):
        raise ExpressionError(f"{name!r} is not a finite number: parameters take finite values", column)
    if not _NAME.match(name):
        raise ExpressionError(
            f"{name!r} is not an allowed name (names are letters, digits and '_', starting with a letter)",
            column,
        )
    if name in FUNCTIONS:
        raise ExpressionError(f"{name!r} is a function: call it as {name}(...)", column)
    return symbol(name)


def _call(node, source):
    column = node.col_offset + 1
    if not isinstance(node.func, ast.Name):
        raise ExpressionError(f"{ast.unparse(node.func)!r} is not an allowed function", column)
    name = node.func.id
    if name not in FUNCTIONS:
        if not _NAME.match(name):
            raise ExpressionError(
                f"{name!r} is not an allowed name (names are letters, digits and '_', starting with a letter)",
                column,
            )
        raise ExpressionError(
            f"unknown function {name!r}: allowed are {', '.join(sorted(FUNCTIONS))}", column
        )
    if node.keywords:
        raise ExpressionError(f"{name}() takes no keyword arguments", column)
    args = [_translate(arg, source) for arg in node.args]
    expected = 2 if name == "atan2" else 1
    if len(args) != expected:
        raise ExpressionError(f"{name}() takes {expected} argument(s), got {len(args)}", column)
    return FUNCTIONS[name](*args)


def format_expression(expr):
    """Print an expression so that :func:`parse_expression` reads it back.

    >>> format_expression(parse_expression("g12 + pi/2"))
    'g12 + pi/2'
    >>> format_expression(parse_expression("0.25"))
    '0.25'
    """
    expr = sympy.sympify(expr)
    if isinstance(expr, sympy.Float):
        return repr(float(expr))
    return sympy.sstr(expr, full_prec=False, order="none")


def expression_symbols(expr):
    """Names of the free symbols of ``expr``, sorted."""
    return sorted(str(s) for s in sympy.sympify(expr).free_symbols)


def format_joint(variable, offset):
    """A joint's theta, r or q as users write it: the variable first.

    >>> import sympy
    >>> th2, L0 = sympy.symbols("th2 L0")
    >>> format_joint(th2, -sympy.pi / 2), format_joint(th2, 0.3), format_joint(th2, L0), format_joint(th2, 0)
    ('th2 - pi/2', 'th2 + 0.3', 'th2 + L0', 'th2')
    """
    if sympy.sympify(offset) == 0:
        return format_expression(variable)
    text = format_expression(offset)
    if text.startswith("-"):
        return f"{format_expression(variable)} - {text[1:]}"
    return f"{format_expression(variable)} + {text}"


def latex_expression(expr):
    """An expression in LaTeX, symbols printed as their names (``QP1``, ``th2``).

    sympy would print ``th2`` as ``th_{2}`` and ``QP1`` as ``QP_{1}``; SYMORO's
    names read better whole, upright for the multi-letter ones.

    >>> latex_expression(parse_expression("QP1*cos(th2) - RL4/2"))
    '\\\\mathrm{QP1} \\\\cos{\\\\left(\\\\mathrm{th2} \\\\right)} - \\\\frac{\\\\mathrm{RL4}}{2}'
    """
    expr = sympy.sympify(expr)
    names = {s: _latex_name(s.name) for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
    return sympy.latex(expr, symbol_names=names)


def _latex_name(name):
    text = name.replace("_", r"\_")
    return text if len(name) == 1 else rf"\mathrm{{{text}}}"
