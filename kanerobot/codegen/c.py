"""C backend: one self-contained C99 file that needs only the C standard library.

The function is ``void name(const double *q, const double *qd, ...,
double *out)``: one pointer per argument group, read by index, and ``out``,
which the caller allocates with room for every entry (``rows*cols`` doubles,
row by row, for a matrix).  It evaluates one state; loop over a batch in the
caller.  The file compiles without warnings under ``cc -O2 -Wall -Wextra``
(and ``-std=c99 -pedantic``):

- only the entries the program uses are read, and an argument none of whose
  entries is used is cast to ``void``;
- ``sign`` is the static inline helper ``kr_sign`` (``numpy.sign``'s
  values: -1, 0 or 1, NaN for NaN; -0.0 for -0.0), written only when used,
  without a branch: the sign of a velocity is as likely to change from one
  state to the next as not, and a mispredicted branch costs some fifteen
  cycles (7 % of the Krang's direct dynamic model, with 17 friction terms);
- constants are printed as numbers (``3.1415926535897932``), not as the
  POSIX macros ``M_PI``, ``M_SQRT2`` that strict C99 lacks;
- sines and cosines of the inputs (``sin(th2)``, ``cos(th2)``: of
  expressions of the arguments alone) are evaluated together, right after
  the arguments are read, by the static inline helper ``kr_sincos``, one
  loop over every such angle (gcc vectorises it at ``-O2`` and ``-O3``; an
  odd number of angles gets a pad) instead of one libm call per sine and
  per cosine; the assignments read
  them from the arrays ``kr_s`` and ``kr_c``.  The helper is fdlibm's
  (FreeBSD's ``__kernel_sin``, ``__kernel_cos`` and two-round Cody-Waite
  reduction), branch-free, within one unit in the last place of the
  correctly rounded value for ``|x| < 823549`` (2^19 pi / 2); other
  arguments (larger, infinite, NaN) go to libm's ``sin`` and ``cos``.  It
  needs ``<stdint.h>`` and ``<string.h>`` (``uint64_t``, ``memcpy``), C99
  headers, included only when used.  Measured with gcc 12 at ``-O3``, it
  takes 15 to 20 % off the inverse and direct dynamic models of the
  17-joint Krang (``benchmarks/c_vs_pinocchio_cpp.py``): a libm call
  costs about as many instructions as the inline code, but every call
  also forces the caller to save its live floating-point registers;
- each entry of an argument is read just before the first statement that
  uses it, not all at the top, and each entry of the result is written
  just after the last statement it needs, not all at the end (see
  :func:`_schedule`).

On x86-64 with glibc, built by gcc 6 or later, a function of up to
:data:`CLONE_LIMIT` assignments is declared with
``__attribute__((target_clones("avx2", "default")))`` (behind an ``#if``,
so that other compilers and systems see plain C; clang is left out: its
releases before a fix of November 2025, llvm-project issue 165517, crash on
the attribute on a declaration alone): the compiler builds it
twice, for AVX2 and for any x86-64, and the dynamic loader picks the one
the processor runs, once (glibc's ifunc).  No ``-march`` flag is needed,
and the code runs everywhere.  AVX2's three-operand instructions spare the
register copies that SSE2's two-operand ones need at every operation
whose operand stays live, a quarter to a half of the instructions of this
straight-line code; measured with gcc 12 at ``-O3``
(``benchmarks/c_vs_pinocchio_cpp.py``, on a shared AMD EPYC), the clone
takes 20 % off the 17-joint Krang's inverse dynamic model and inertia
matrix (280 to 225 ns, 245 to 200 ns), 5 to 25 % off its direct dynamic
model (from run to run), 7 to 10 % off the RX-90's.  The numbers are the same: the ``avx2`` target has no
fused multiply-add, and vector instructions round each lane as the scalar
ones.  Larger functions (compiled with ``-Os`` for build time by
:mod:`kanerobot.codegen.compiled`) have one version: the clone would add
half of their build time.

The top comment gives the prototype, and the file declares it before
defining the function, so that a header holding that line is all a caller
needs.
"""

import sympy
from sympy import Rational
from sympy.printing.c import C99CodePrinter

from kanerobot.codegen.backend import Backend

__all__ = ["CLONE_LIMIT", "CBackend"]

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


#: Functions of up to this many assignments get an AVX2 clone (see the module's notes).
CLONE_LIMIT = 3_000
_CLONES = """#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))  /* AVX2 and plain x86-64 builds, one picked at load time */
#endif"""
#: Key of the sine and cosine table among the symbols statements read.
_TABLE = "kr_sincos"
#: Below this |angle|, kr_sincos's reduction (x - n pi/2, pi/2 in 33 + 33 + 53 bits) stays exact: 2^19 pi/2.
_SINCOS_LIMIT = "823549.0"

_SINCOS = """static inline void kr_sincos(int n, const double *x, double *s, double *c)
{
    int k;
    for (k = 0; k < n; ++k) {
        /* x = j pi/2 + (y0 + y1), |y0 + y1| <= pi/4: FreeBSD's e_rem_pio2.c (two rounds) */
        double t = x[k] * 6.36619772367581382433e-01 + 6755399441055744.0;  /* 1.5 * 2^52: j in the low bits */
        const double j = t - 6755399441055744.0;
        double r = x[k] - j * 1.57079632673412561417e+00, w = j * 6.07710050630396597660e-11;
        double y0, y1, z, v, sine, cosine, half;
        uint64_t jbits, sbits, cbits, swap;
        memcpy(&jbits, &t, sizeof jbits);
        t = r;
        r = t - w;
        w = j * 2.02226624879595063154e-21 - ((t - r) - w);
        y0 = r - w;
        y1 = (r - y0) - w;
        /* FreeBSD's k_sin.c and k_cos.c on [-pi/4, pi/4] */
        z = y0 * y0;
        w = z * z;
        v = z * y0;
        r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * 2.75573137070700676789e-06)
            + z * w * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10);
        sine = y0 - ((z * (0.5 * y1 - v * r) - y1) - v * -1.66666666666666324348e-01);
        r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05))
            + w * w * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
        half = 0.5 * z;
        w = 1.0 - half;
        cosine = w + (((1.0 - w) - half) + (z * r - y0 * y1));
        /* quadrant j mod 4 without branches: swap for odd j, then the signs */
        memcpy(&sbits, &sine, sizeof sbits);
        memcpy(&cbits, &cosine, sizeof cbits);
        swap = ((uint64_t)0 - (jbits & 1)) & (sbits ^ cbits);
        sbits ^= swap ^ (((jbits >> 1) & 1) << 63);
        cbits ^= swap ^ ((((jbits + 1) >> 1) & 1) << 63);
        memcpy(&s[k], &sbits, sizeof sbits);
        memcpy(&c[k], &cbits, sizeof cbits);
    }
    for (k = 0; k < n; ++k)
        if (!(fabs(x[k]) < LIMIT)) {  /* large, infinite or NaN: the C library */
            s[k] = sin(x[k]);
            c[k] = cos(x[k]);
        }
}
""".replace("LIMIT", _SINCOS_LIMIT)


class _Printer(C99CodePrinter):
    """sympy's C99 printer: ``kr_sign``, ``1.0/sqrt(x)``, numeric constants,
    and the sines and cosines of :attr:`angles` read from ``kr_s``, ``kr_c``."""

    def __init__(self):
        super().__init__({"math_macros": {}, "inline": True})
        self.uses_sign = False
        #: {angle expression: its index in kr_x, kr_s, kr_c}, set by CBackend.
        self.angles = {}

    def _print_sin(self, expr):
        if expr.args[0] in self.angles:
            return f"kr_s[{self.angles[expr.args[0]]}]"
        return super()._print_sin(expr)

    def _print_cos(self, expr):
        if expr.args[0] in self.angles:
            return f"kr_c[{self.angles[expr.args[0]]}]"
        return super()._print_cos(expr)

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
        const double t = fabs(x) * 4.149515568880993e+180 * 4.149515568880993e+180;  /* times 2^1200: 1 or more unless x is 0 or NaN */
        return copysign(t > 1.0 ? 1.0 : t, x);  /* minsd: no branch */
    }
    <BLANKLINE>
    #if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__)
    __attribute__((target_clones("avx2", "default")))  /* AVX2 and plain x86-64 builds, one picked at load time */
    #endif
    void polar(const double *xy, const double *p, double *out);
    <BLANKLINE>
    void polar(const double *xy, const double *p, double *out)
    {
        (void)p;
        const double y = xy[1];
        out[1] = kr_sign(y);  /* s */
        const double x = xy[0];
        const double R2 = pow(x, 2) + pow(y, 2);
        out[0] = sqrt(R2);  /* r */
    }
    <BLANKLINE>
    """

    language = "c"
    extension = ".c"
    reserved = frozenset(_C_KEYWORDS.split()) | frozenset(_MATH_H.split())
    internal = frozenset({"out", "kr_sign", "kr_sincos", "kr_x", "kr_s", "kr_c", "uint64_t", "memcpy"})

    def __init__(self, program, name, args, outputs=None, doc=""):
        super().__init__(program, name, args, outputs=outputs, doc=doc)
        # sines and cosines of expressions of the inputs alone: computed together after the unpacking
        exprs = [expr for _, expr in self.lines] + [e.expr for e in self.entries if e.source is None]
        angles: dict[sympy.Expr, int] = {}  # angle -> its index in kr_x
        for expr in exprs:
            for node in sympy.preorder_traversal(expr):
                if isinstance(node, (sympy.sin, sympy.cos)) and node.args[0].free_symbols <= self.used_inputs:
                    angles.setdefault(node.args[0], len(angles))
        self.printer.angles = angles

    def make_printer(self):
        return _Printer()

    def generate(self):
        """Source text of the function, its statements in the order of :func:`_schedule`.

        Returns
        -------
        str
            Ends with a newline.
        """
        texts, reads = [], []  # one statement each: its text, the statements it reads
        defined: dict[sympy.Symbol | str, int] = {}  # symbol (or _TABLE) -> the statement defining it
        leaves = []  # the statements reading the arguments

        def add(text, symbols=()):
            texts.append(text)
            reads.append(sorted({defined[key] for key in symbols if key in defined}))
            return len(texts) - 1

        unused = []
        for argname, symbols in self.groups:
            used = [(k, sym) for k, sym in enumerate(symbols) if sym in self.used_inputs]
            if not used:
                unused += self.unused(argname)
            for k, sym in used:
                defined[sym] = add(self.unpack(argname, k, self.var(sym)))
                leaves.append(defined[sym])
        if self.printer.angles:
            defined[_TABLE] = add("\n".join(self._table()), set().union(*(a.free_symbols for a in self.printer.angles)))
        for sym, expr in self.lines:
            defined[sym] = add(self.assignment(self.var(sym), self.code(expr)), self._reads(expr))
        stores, stored = [], {}
        for entry in self.entries:
            if entry.source is None:
                stores.append(add(self.store(entry.position, self.code(entry.expr), entry.label), self._reads(entry.expr)))
                stored[entry.position] = stores[-1]
            else:  # reads the entry it copies
                stores.append(add(self.copy(entry.position, entry.source, entry.label)))
                reads[-1] = [stored[entry.source]]
        body = unused + [texts[k] for k in _schedule(reads, leaves, stores)]
        head = self.prelude() + self.header()
        return "\n".join(head + body + self.footer()) + "\n"

    def _reads(self, expr):
        """What ``expr`` reads: its symbols, and the table when it takes a sine or cosine from it."""
        reads = set(expr.free_symbols)
        if any(node.args[0] in self.printer.angles for node in expr.atoms(sympy.sin, sympy.cos)):
            reads.add(_TABLE)
        return reads

    def _table(self):
        """Lines filling kr_s and kr_c with the sines and cosines of every angle.

        An odd number of angles gets a last angle 0.0: gcc's cheap
        vectorisation at ``-O2`` (two doubles at a time in SSE2) skips a
        loop that would need a scalar remainder.
        """
        n = len(self.printer.angles)
        size = n + n % 2
        lines = [f"    double kr_x[{size}], kr_s[{size}], kr_c[{size}];"]
        lines += [f"    kr_x[{k}] = {self.code(angle)};" for angle, k in self.printer.angles.items()]
        lines += [f"    kr_x[{n}] = 0.0;  /* a pair more: vectorised at -O2 */"] if size > n else []
        return lines + [f"    kr_sincos({size}, kr_x, kr_s, kr_c);"]

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
        ]
        if self.printer.angles:
            lines += ["#include <stdint.h>", "#include <string.h>", "", *_SINCOS.splitlines()]
        lines.append("")
        if self.printer.uses_sign:
            lines += [
                "static inline double kr_sign(double x)",
                "{",
                "    const double t = fabs(x) * 4.149515568880993e+180 * 4.149515568880993e+180;  /* times 2^1200: 1 or more unless x is 0 or NaN */",
                "    return copysign(t > 1.0 ? 1.0 : t, x);  /* minsd: no branch */",
                "}",
                "",
            ]
        return lines

    def header(self):
        clones = _CLONES.splitlines() if len(self.lines) <= CLONE_LIMIT else []
        return [*clones, f"{self.prototype()};", "", self.prototype(), "{"]

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


def _schedule(reads, leaves, stores):
    """Order of the statements: the program's, each leaf just before its
    first reader, each store just after the last statement it reads.

    ``reads[k]`` lists the statements that statement ``k`` reads (each
    before ``k``); ``leaves`` the statements reading the entries of the
    arguments, which the program has at its top; ``stores`` those writing
    the result (a copy of an entry reads the store of that entry), which it
    has at its end.  A leaf no statement reads is dropped.

    gcc keeps the order of straight-line code, and a value is live, taking
    one of the 16 registers of x86-64 or spilled to the stack, from where it
    is computed to where it is last used.  Read at the top, the parameters
    (up to 200 of Krang's) would all be live from the start; stored at the
    end, every entry of an inertia matrix would be live until then.
    Measured with gcc 12 at ``-O3`` (``benchmarks/c_vs_pinocchio_cpp.py``),
    reading late takes 10 to 25 % off the inverse and direct dynamic models
    and the inertia matrix of the RX-90 and Krang, storing early 7 to 10 %
    more off the inertia matrices.
    """
    leaves, stores = set(leaves), set(stores)
    after: dict[int, list[int]] = {k: [] for k in range(len(reads))}  # statement -> the stores written just after it
    first: list[int] = []  # stores that read arguments or nothing
    for k in sorted(stores):
        computed = [j for j in reads[k] if j not in leaves]
        (after[max(computed)] if computed else first).append(k)
    order, done = [], set()

    def place(k):
        for j in reads[k]:
            if j in leaves and j not in done:
                done.add(j)
                order.append(j)
        order.append(k)
        for store in after[k]:  # a copy after the store it copies: two deep at most
            place(store)

    for k in first:
        place(k)
    for k in range(len(reads)):
        if k not in leaves and k not in stores:
            place(k)
    return order


def _comment(text):
    """Text safe inside a C block comment."""
    return text.replace("/*", "/ *").replace("*/", "* /")
