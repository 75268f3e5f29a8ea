"""C backend: one self-contained C99 file that needs only ``<math.h>``.

The function is ``void name(const double *q, const double *qd, ...,
double *out)``: one pointer per argument group, read by index, and ``out``,
which the caller allocates with room for every entry (``rows*cols`` doubles,
row by row, for a matrix).  It evaluates one state; loop over a batch in the
caller.  The file compiles without warnings under ``cc -O2 -Wall -Wextra``
(and ``-std=c99 -pedantic``):

- only the entries the program uses are read, and an argument none of whose
  entries is used is cast to ``void``;
- ``sign`` is the static inline helper ``kr_sign`` (``numpy.sign``'s
  values: -1, 0 or 1, NaN for NaN), written only when used;
- constants are printed as numbers (``3.1415926535897932``), not as the
  POSIX macros ``M_PI``, ``M_SQRT2`` that strict C99 lacks.

The top comment gives the prototype, and the file declares it before
defining the function, so that a header holding that line is all a caller
needs.
"""

from sympy import Rational
from sympy.printing.c import C99CodePrinter

from kanerobot.codegen.backend import Backend

__all__ = ["CBackend"]

_C_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while bool true false alignas alignof constexpr nullptr static_assert thread_local typeof
typeof_unqual asm fortran entry
and and_eq bitand bitor catch class compl const_cast decltype delete dynamic_cast explicit export
friend mutable namespace new noexcept not not_eq operator or or_eq private protected public
reinterpret_cast static_cast template this throw try typeid typename using virtual xor xor_eq
"""

_MATH_H = """
acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ldexp log
log10 log1p log2 logb modf scalbn scalbln ilogb cbrt fabs abs hypot pow sqrt erf erfc lgamma tgamma
gamma ceil floor nearbyint rint lrint llrint round lround llround trunc fmod remainder remquo
copysign nan nextafter nexttoward fdim fmax fmin fma j0 j1 jn y0 y1 yn drem significand finite
signbit isnan isinf isfinite isnormal fpclassify isgreater isgreaterequal isless islessequal
islessgreater isunordered float_t double_t HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN FP_NAN
FP_INFINITE FP_ZERO FP_SUBNORMAL FP_NORMAL FP_ILOGB0 FP_ILOGBNAN MATH_ERRNO MATH_ERREXCEPT
math_errhandling M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI
M_SQRT2 M_SQRT1_2 NULL main errno
"""


class _Printer(C99CodePrinter):
    """sympy's C99 printer: ``kr_sign``, ``1.0/sqrt(x)``, numeric constants."""

    def __init__(self):
        super().__init__({"math_macros": {}, "inline": True})
        self.uses_sign = False

    def _print_sign(self, expr):
        self.uses_sign = True
        return f"kr_sign({self._print(expr.args[0])})"

    def _print_Pow(self, expr):
        if expr.exp == Rational(-1, 2):
            return f"1.0/sqrt({self._print(expr.base)})"
        return super()._print_Pow(expr)


class CBackend(Backend):
    """Write a C99 file with one function of ``const double *`` arguments.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.symbolic import Program
    >>> x, y, k = sympy.symbols("x y k")
    >>> p = Program(inputs=[x, y, k])
    >>> _ = p.set_output("r", sympy.sqrt(p.assign("R2", x**2 + y**2)))
    >>> _ = p.set_output("s", sympy.sign(y))
    >>> backend = CBackend(p, "polar", [("xy", [x, y]), ("p", [k])])
    >>> backend.prototype()
    'void polar(const double *xy, const double *p, double *out)'
    >>> print(backend.generate())  # doctest: +ELLIPSIS
    /*
     * polar
    ...
    #include <math.h>
    <BLANKLINE>
    static inline double kr_sign(double x)
    {
        return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x);
    }
    <BLANKLINE>
    void polar(const double *xy, const double *p, double *out);
    <BLANKLINE>
    void polar(const double *xy, const double *p, double *out)
    {
        const double x = xy[0];
        const double y = xy[1];
        const double R2 = pow(x, 2) + pow(y, 2);
        (void)p;
        out[0] = sqrt(R2);  /* r */
        out[1] = kr_sign(y);  /* s */
    }
    <BLANKLINE>
    """

    language = "c"
    extension = ".c"
    reserved = frozenset(_C_KEYWORDS.split()) | frozenset(_MATH_H.split())
    internal = frozenset({"out", "kr_sign"})

    def make_printer(self):
        return _Printer()

    def prototype(self):
        """The function's prototype, without the final ``;``."""
        params = [f"const double *{argname}" for argname, _ in self.groups] + ["double *out"]
        return f"void {self.name}({', '.join(params)})"

    def prelude(self):
        lines = ["/*"]
        lines += [f" * {_comment(line)}".rstrip() for line in self.describe()]
        size = 1
        for n in self.shape:
            size *= n
        lines += [
            " *",
            f" * out must have room for {size} doubles" + (", row by row." if len(self.shape) == 2 else "."),
            " *",
            " * Prototype:",
            f" *   {self.prototype()};",
            " */",
            "",
            "#include <math.h>",
            "",
        ]
        if self.printer.uses_sign:
            lines += [
                "static inline double kr_sign(double x)",
                "{",
                "    return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x);",
                "}",
                "",
            ]
        return lines

    def header(self):
        return [f"{self.prototype()};", "", self.prototype(), "{"]

    def unpack(self, argname, k, variable):
        return f"    const double {variable} = {argname}[{k}];"

    def unused(self, argname):
        return [f"    (void){argname};"]

    def assignment(self, variable, code):
        return f"    const double {variable} = {code};"

    def _flat(self, position):
        if len(position) == 1:
            return position[0]
        return position[0] * self.shape[1] + position[1]

    def store(self, position, code, label):
        where = f"({position[0]}, {position[1]}) " if len(position) == 2 else ""
        return f"    out[{self._flat(position)}] = {code};  /* {where}{_comment(label)} */"

    def copy(self, position, source, label):
        return (
            f"    out[{self._flat(position)}] = out[{self._flat(source)}];"
            f"  /* ({position[0]}, {position[1]}) = ({source[0]}, {source[1]}) {_comment(label)} */"
        )

    def footer(self):
        return ["}"]


def _comment(text):
    """Text safe inside a C block comment."""
    return text.replace("/*", "/ *").replace("*/", "* /")
