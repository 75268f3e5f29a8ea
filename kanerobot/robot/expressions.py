"""Safe parsing and printing of parameter expressions.

Robot files hold expressions such as ``pi/2``, ``-d8``, ``d12*cos(g12)`` or
``g12 + pi/2``.  They are parsed here with :mod:`ast` into a syntax tree and
translated node by node into sympy, accepting only numbers, names, the
arithmetic operators and a short list of functions.  Nothing in a file ever
reaches :func:`eval`, :func:`sympy.sympify` or a Python builtin, so a file
holding ``__import__('os').system(...)`` is refused with a message, not run.
"""

import ast
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

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MAX_LENGTH = 2000
_MAX_EXPONENT = 64

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def symbol(name):
    """Return the sympy symbol that robot files call ``name``.

    All robot symbols are plain symbols (no assumptions), so that a user's
    ``sympy.Symbol('th1')`` is the same object as the robot's ``th1``.
    """
    return sympy.Symbol(name)


def is_valid_name(name):
    """True when ``name`` can be a symbol in a robot file."""
    return bool(_NAME.match(name)) and name not in FUNCTIONS and name not in CONSTANTS


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
        functions not in :data:`FUNCTIONS`, names starting with ``_``, ...

    Examples
    --------
    >>> parse_expression("d12*cos(g12) + pi/2")
    d12*cos(g12) + pi/2
    >>> parse_expression("__import__('os')")
    Traceback (most recent call last):
    ...
    kanerobot.errors.ExpressionError: '__import__' is not an allowed name (names are letters, digits and '_', starting with a letter)
    """
    if isinstance(text, sympy.Basic):
        return text
    if isinstance(text, bool):
        raise ExpressionError(f"expected a number or an expression, got {text!r}")
    if isinstance(text, int):
        return sympy.Integer(text)
    if isinstance(text, float):
        return sympy.Float(text)
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
        raise ExpressionError(f"cannot parse {text.strip()!r}: {exc.msg}", exc.offset) from None
    return _translate(tree.body)


def _translate(node):
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ExpressionError(f"{value!r} is not a number", node.col_offset + 1)
        return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)
    if isinstance(node, ast.Name):
        return _name(node.id, node.col_offset + 1)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _translate(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _translate(node.left), _translate(node.right)
        if isinstance(node.op, ast.Pow) and right.is_number and abs(right) > _MAX_EXPONENT:
            raise ExpressionError(f"exponent {right} is too large (at most {_MAX_EXPONENT})", node.col_offset + 1)
        if isinstance(node.op, ast.Div) and right.is_zero:
            raise ExpressionError("division by zero", node.col_offset + 1)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        return _call(node)
    raise ExpressionError(
        f"{ast.unparse(node)!r} is not allowed: use numbers, names, + - * / ** and "
        f"the functions {', '.join(sorted(FUNCTIONS))}",
        getattr(node, "col_offset", -1) + 1,
    )


def _name(name, column):
    if name in CONSTANTS:
        return CONSTANTS[name]
    if not _NAME.match(name):
        raise ExpressionError(
            f"{name!r} is not an allowed name (names are letters, digits and '_', starting with a letter)",
            column,
        )
    if name in FUNCTIONS:
        raise ExpressionError(f"{name!r} is a function: call it as {name}(...)", column)
    return symbol(name)


def _call(node):
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
    args = [_translate(arg) for arg in node.args]
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
