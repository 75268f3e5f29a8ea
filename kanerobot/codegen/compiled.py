"""Programs compiled to C with the system compiler, loaded with ctypes.

:func:`compile_program` writes a program with the C backend
(:class:`~kanerobot.codegen.c.CBackend`), appends a batch wrapper, compiles
the file into a shared library and returns a :class:`CompiledFunction`, a
Python callable taking numpy arrays.

The batch wrapper
-----------------
For ``args=[("q", q), ("qd", qd), ("p", params)]`` and ``constant=("p",)``
the C file holds, after the one-state function of the C backend::

    void name(const double *q, const double *qd, const double *p, double *out);

    void name_batch(long N, const double *q, const double *qd, const double *p, double *out)
    {
        long i;
        for (i = 0; i < N; ++i)
            name(q + i*6L, qd + i*6L, p, out + i*mL);
    }

Each argument group that is not constant is an ``(N, k)`` C-contiguous array
(state ``i`` is row ``i``: stride ``k``), ``out`` an ``(N, m)`` array (``m``
entries of the result, a matrix row by row).  Groups marked constant (the
parameters) are broadcast: they are passed once, as ``(k,)``, and every
state reads the same ``k`` values (stride 0).

A third function takes one state with its groups as an array of pointers,
one signature for every model, which
:mod:`kanerobot.codegen.extension` calls without ctypes
(:attr:`CompiledFunction.state_address`)::

    void name_state(const double *const *groups, double *out)
    {
        name(groups[0], groups[1], groups[2], out);
    }

The Python callable broadcasts the same way: constant groups are ``(k,)``;
every other group is one state ``(k,)`` or a batch ``(N, k)``.  When every
non-constant group is 1-D the result is one state, of the layout's shape
(``(m,)`` or ``(rows, cols)``); otherwise it is ``(N,) + shape``, the 1-D
groups being repeated for every state.

Compiling and the cache
-----------------------
The compiler is ``$CC`` when set, else the first of ``cc``, ``gcc``,
``clang`` that :func:`shutil.which` finds.  Flags are ``-O3 -shared -fPIC``
plus ``-fno-math-errno`` (``sqrt`` inlined: nobody reads ``errno`` from
Python) and ``-ffp-contract=off`` (no fused multiply-add, so that the
arithmetic matches numpy's to the last bits on every architecture; the
sines and cosines of the C backend's ``kr_sincos`` are within 1 ulp of
libm's, so results agree with numpy to about 1e-15).  Functions of more
than :data:`LARGE_FUNCTION` assignments get ``-Os`` instead of ``-O3``
(``flags=`` overrides this choice): on such long straight-line code gcc
spends its time in register allocation, and ``-Os`` halves it for the same
speed, where ``-O1`` gains nothing.  Measured with gcc 12 on the 17-DOF
Krang, its largest model, the Coriolis matrix (3,300 assignments), builds
in 5.5 s at ``-O2`` and 3.1 s at ``-Os`` (both about 2.8 us per state);
its direct dynamics (2,100 assignments) in 0.7 to 1 s, its inverse dynamics
and inertia matrix in 0.5 to 1 s, the RX-90's models in 0.1 to 0.3 s.

Libraries go to a cache folder: ``$KANEROBOT_CACHE`` when set, else
``$XDG_CACHE_HOME/kanerobot``, else ``~/.cache/kanerobot`` (subfolder
``c``), named ``<name>-<key>.so`` where the key hashes the C source, the
flags, the compiler (resolved path, size and date) and the machine.  A
library is built in a private temporary folder and renamed into place, so
processes compiling the same function at once never see a partial file;
a library already in the cache is loaded without running the compiler.
Within a process, loaded libraries are also kept in memory.  A compilation
that lasts over a second says so on standard error
(:func:`kanerobot.progress.slow_step`), as does the derivation of a model.

Errors
------
No compiler, a compiler failure or an unwritable cache raise
:class:`~kanerobot.errors.KaneRobotError` (:class:`CompileError`), whose
message says why; callers fall back to numpy
(:meth:`kanerobot.dynamics.model.DynamicModel.numeric` does with
``backend="auto"``).

Examples
--------
>>> import numpy, sympy
>>> from kanerobot.symbolic import Program
>>> x, y, k = sympy.symbols("x y k")
>>> p = Program(inputs=[x, y, k])
>>> _ = p.set_output("r", k * sympy.sqrt(x**2 + y**2))
>>> f = compile_program(p, "scaled_norm", [("xy", [x, y]), ("p", [k])], constant=["p"])  # doctest: +SKIP
>>> f([3.0, 4.0], [2.0])  # doctest: +SKIP
array([10.])
>>> f(numpy.array([[3.0, 4.0], [6.0, 8.0]]), [0.5])  # doctest: +SKIP
array([[2.5],
       [5. ]])
"""

import abc
import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from kanerobot.codegen.c import CBackend
from kanerobot.errors import KaneRobotError
from kanerobot.progress import slow_step

__all__ = [
    "COMPILERS",
    "LARGE_FUNCTION",
    "CompileError",
    "BatchedFunction",
    "CompiledFunction",
    "cache_dir",
    "build_library",
    "compile_program",
    "find_compiler",
    "library_path",
]

#: Compilers looked for, in order, when ``$CC`` is not set.
COMPILERS = ("cc", "gcc", "clang")
#: Functions with more assignments than this are compiled with ``-Os`` (see above).
LARGE_FUNCTION = 3_000
#: Seconds a compilation may take.
TIMEOUT = 900
_BASE_FLAGS = ("-shared", "-fPIC", "-fno-math-errno", "-ffp-contract=off")
_FORMAT = "kanerobot-compiled-2"  # part of the cache key: change when the wrapper changes
_SUFFIX = ".dll" if os.name == "nt" else ".so"

_LIBRARIES: dict[str, tuple] = {}  # library path -> (ctypes.CDLL, its batch function, address of its one-state function), in this process
_LOCK = threading.Lock()


class CompileError(KaneRobotError):
    """No C compiler, or the program could not be compiled or loaded."""


def find_compiler():
    """Command of the C compiler: a list, the program's absolute path first.

    ``$CC`` (which may hold flags, ``"gcc -m64"``) when set, else the first of
    :data:`COMPILERS` on the ``PATH``.

    Raises
    ------
    CompileError
        When none is found.
    """
    env = os.environ.get("CC", "").strip()
    if env:
        words = shlex.split(env)
        path = shutil.which(words[0])
        if path is None:
            raise CompileError(f"the C compiler $CC={env!r} is not found")
        return [path] + words[1:]
    for name in COMPILERS:
        path = shutil.which(name)
        if path is not None:
            return [path]
    raise CompileError(f"no C compiler found ({', '.join(COMPILERS)} are not on the PATH, and $CC is not set)")


def cache_dir():
    """Folder of the compiled libraries (not created here)."""
    root = os.environ.get("KANEROBOT_CACHE")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = os.path.join(xdg, "kanerobot") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "kanerobot")
    return Path(root) / "c"


class BatchedFunction(abc.ABC):
    """What every generated function of batches of states shares: its argument groups, its result's shape and the
    checked call ``f(*groups)`` (:class:`CompiledFunction`, the CasADi backend's
    :class:`~kanerobot.codegen.casadi.CasadiFunction`); a subclass gives :meth:`batch`, the unchecked path.

    ``f(*groups)`` takes one array per group, of one state ``(k,)`` or of N ``(N, k)``, the groups marked
    constant (the parameters) passed once ``(k,)``; it raises :class:`~kanerobot.errors.KaneRobotError` naming the
    function and the argument whose shape is wrong, or the number of arrays.
    """

    def __init__(self, backend, source, constant):
        self.name = backend.name
        self.args = tuple(argname for argname, _ in backend.groups)
        self.sizes = tuple(len(symbols) for _, symbols in backend.groups)
        self.constant = frozenset(constant)
        self.shape = tuple(backend.shape)
        self.size = int(np.prod(self.shape))
        self.source = source
        self._is_constant = tuple(argname in self.constant for argname in self.args)

    def signature(self):
        """``q[6], qd[6], p[60] (constant)``: the groups, for ``repr``."""
        return ", ".join(f"{a}[{k}]" + (" (constant)" if a in self.constant else "") for a, k in zip(self.args, self.sizes))

    @abc.abstractmethod
    def batch(self, N, arrays, out=None):
        """``N`` states evaluated without the checks of ``f(...)``: ``arrays`` ``(N, k)`` (``(k,)`` for constant groups)."""

    def __call__(self, *groups):
        if len(groups) != len(self.args):
            raise KaneRobotError(f"{self.name} takes {len(self.args)} arrays ({', '.join(self.args)}), got {len(groups)}")
        arrays, batch = [], None
        for argname, k, constant, value in zip(self.args, self.sizes, self._is_constant, groups):
            array = np.asarray(value, dtype=float)
            if constant:
                if array.shape != (k,):
                    raise KaneRobotError(f"{self.name}: {argname} is passed once for all states, shape ({k},); got {array.shape}")
            elif array.ndim not in (1, 2) or array.shape[-1] != k:
                raise KaneRobotError(f"{self.name}: {argname} must have shape ({k},) or (N, {k}), got {array.shape}")
            elif array.ndim == 2:
                if batch is not None and array.shape[0] != batch:
                    raise KaneRobotError(f"{self.name}: {argname} has {array.shape[0]} states, other arguments {batch}")
                batch = array.shape[0]
            arrays.append(array)
        if batch is None:
            return self.batch(1, [a if c else a[np.newaxis] for a, c in zip(arrays, self._is_constant)])[0]
        arrays = [a if c or a.ndim == 2 else np.broadcast_to(a, (batch, a.shape[0])) for a, c in zip(arrays, self._is_constant)]
        return self.batch(batch, arrays)


class CompiledFunction(BatchedFunction):
    """A program compiled to C: call it with numpy arrays.

    ``f(*groups)`` takes one array per argument group, in order (see the
    module's notes on broadcasting), and returns a float array.

    Attributes
    ----------
    name : str
        Name of the one-state C function; the batch one is ``name + "_batch"``.
    args : tuple of str
        Names of the argument groups.
    sizes : tuple of int
        Number of entries of each group.
    constant : frozenset of str
        Groups passed once for the whole batch.
    shape : tuple
        Shape of one state's result: ``(m,)`` or ``(rows, cols)``.
    size : int
        Number of doubles of one state's result.
    source : str
        The C file.
    library : pathlib.Path
        The shared library.
    compiler : list of str
        The compiler command.
    flags : tuple of str
        The flags it was given.
    build_seconds : float
        Time the compiler took, 0.0 when the library came from the cache.
    state_address : int or None
        Address of ``name_state``, the one-state entry point (see the
        module's notes); None when the library was not loaded by
        :func:`compile_program`.
    handle : ctypes.CDLL or None
        The loaded library: holding it keeps ``state_address`` valid.
    """

    def __init__(self, backend, source, library, compiler, flags, constant, function, build_seconds, state_address=None, handle=None):
        super().__init__(backend, source, constant)
        self.library = library
        self.compiler = compiler
        self.flags = tuple(flags)
        self.build_seconds = build_seconds
        self._function = function
        self.state_address = state_address
        self.handle = handle

    def __repr__(self):
        return f"<CompiledFunction {self.name}({self.signature()}) -> {self.shape}, {self.library}>"

    def batch(self, N, arrays, out=None):
        """Evaluate ``N`` states without the checks of ``f(...)``.

        ``arrays`` holds ``(N, k)`` arrays (``(k,)`` for constant groups) of
        floats; they are made C-contiguous (copied) when they are not.
        Returns ``out``, an ``(N,) + shape`` float array (allocated when
        ``None``, else C-contiguous and of that shape).
        """
        if out is None:
            out = np.empty((N,) + self.shape)
        elif out.shape != (N,) + self.shape or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise KaneRobotError(f"{self.name}: out must be a C-contiguous float array of shape {(N,) + self.shape}")
        if len(arrays) != len(self.args):
            raise KaneRobotError(f"{self.name} takes {len(self.args)} arrays ({', '.join(self.args)}), got {len(arrays)}")
        pointers = []
        keep = []  # the arrays the pointers point into stay alive until the call returns
        for argname, k, constant, array in zip(self.args, self.sizes, self._is_constant, arrays):
            if array.shape != ((k,) if constant else (N, k)):
                raise KaneRobotError(f"{self.name}: {argname} must have shape {(k,) if constant else (N, k)}, got {array.shape}")
            if not (array.flags.c_contiguous and array.dtype == np.float64):
                array = np.ascontiguousarray(array, dtype=np.float64)
            keep.append(array)
            pointers.append(array.ctypes.data)
        if N:
            self._function(N, *pointers, out.ctypes.data)
        return out


def batch_wrapper(backend, constant):
    """C text of ``void name_batch(long N, ...)`` for a :class:`CBackend`."""
    size = 1
    for n in backend.shape:
        size *= n
    params = ", ".join(["long N"] + [f"const double *{a}" for a, _ in backend.groups] + ["double *out"])
    calls = [a if a in constant else f"{a} + i*{len(symbols)}L" for a, symbols in backend.groups]
    strides = ", ".join(f"{a}: {0 if a in constant else len(symbols)}" for a, symbols in backend.groups)
    return "\n".join(
        [
            "",
            f"/* {backend.name}_batch: {backend.name} on N states, state i at row i of every argument",
            f" * (strides in doubles: {strides}, out: {size}); constant arguments are read once. */",
            f"void {backend.name}_batch({params});",
            "",
            f"void {backend.name}_batch({params})",
            "{",
            "    long i;",
            "    for (i = 0; i < N; ++i)",
            f"        {backend.name}({', '.join(calls + [f'out + i*{size}L'])});",
            "}",
            "",
        ]
    )


def state_wrapper(backend):
    """C text of ``void name_state(const double *const *groups, double *out)``
    for a :class:`CBackend`: the one-state function with its groups passed as
    an array of pointers, one signature for every model."""
    groups = ", ".join([f"groups[{i}]" for i in range(len(backend.groups))] + ["out"])
    return "\n".join(
        [
            "",
            f"/* {backend.name}_state: {backend.name} on one state, groups[i] pointing to argument group i. */",
            f"void {backend.name}_state(const double *const *groups, double *out);",
            "",
            f"void {backend.name}_state(const double *const *groups, double *out)",
            "{",
            f"    {backend.name}({groups});",
            "}",
            "",
        ]
    )


def compile_program(program, name, args, outputs=None, constant=(), doc="", cache=None, flags=None):
    """Compile ``program`` to C and load it.

    Parameters
    ----------
    program : kanerobot.symbolic.Program
    name : str
        Name of the C function (a C identifier).
    args : list of (str, sequence of sympy.Symbol)
        Argument groups, as for :func:`kanerobot.codegen.generate`.
    outputs : optional
        What one state's result holds; see
        :func:`~kanerobot.codegen.backend.output_layout`.
    constant : iterable of str, optional
        Names of the groups that are the same for every state (parameters):
        passed once, not per state.
    doc : str, optional
        Description put first in the C file.
    cache : str or pathlib.Path, optional
        Folder of the libraries; by default :func:`cache_dir`.
    flags : sequence of str, optional
        Optimisation flags replacing the default ``-O3`` (``-Os`` for very
        large functions); ``-shared -fPIC -fno-math-errno
        -ffp-contract=off`` are always given.

    Returns
    -------
    CompiledFunction

    Raises
    ------
    CompileError
        No compiler, compilation failure (with the compiler's message),
        cache folder not writable, library not loadable.
    kanerobot.codegen.CodegenError, kanerobot.errors.ParameterError
        As :func:`kanerobot.codegen.generate`, and for a constant group
        that is not an argument.
    """
    from kanerobot.codegen.backend import CodegenError

    backend = CBackend(program, name, args, outputs=outputs, doc=doc)
    constant = frozenset(constant)
    unknown = constant - {a for a, _ in backend.groups}
    if unknown:
        raise CodegenError(f"constant group(s) {', '.join(sorted(unknown))} are not arguments")
    source = backend.generate() + batch_wrapper(backend, constant) + state_wrapper(backend)
    if flags is None:
        flags = ("-Os",) if len(backend.lines) > LARGE_FUNCTION else ("-O3",)  # -O3: 20-30 % faster than -O2, builds 5-25 % longer
    flags = tuple(flags) + _BASE_FLAGS
    compiler = find_compiler()
    library = library_path(name, source, compiler, flags, cache)
    with _LOCK:
        loaded = _LIBRARIES.get(str(library))
    build_seconds = 0.0
    if loaded is None:
        function = None
        if library.is_file():
            try:
                function = _load(library, backend)
            except CompileError:
                function = None  # unreadable: build it again
        if function is None:
            build_seconds = _build(source, library, compiler, flags)
            function = _load(library, backend)
        with _LOCK:
            loaded = _LIBRARIES.setdefault(str(library), function)
    handle, batch, state = loaded
    return CompiledFunction(backend, source, library, compiler, flags, constant, batch, build_seconds, state, handle)


def library_path(name, source, compiler, flags, cache=None, suffix=_SUFFIX):
    """Where the library of C ``source`` built by ``compiler`` with ``flags`` is cached.

    ``<cache>/<name>-<key><suffix>``, the key hashing the source, the flags,
    the compiler (path, size, date) and the machine (see the module's notes);
    ``cache`` defaults to :func:`cache_dir`.
    """
    folder = Path(cache) if cache is not None else cache_dir()
    return folder / f"{name}-{_key(source, compiler, flags)}{suffix}"


def build_library(source, library, compiler, flags):
    """Compile ``source`` into the file ``library`` (from :func:`library_path`) atomically.

    The compiler runs in a private temporary folder beside ``library`` and
    the result is renamed into place, so that concurrent builds never see a
    partial file; the C file is kept beside the library.  Returns the
    seconds the compiler took.

    Raises
    ------
    CompileError
        The cache folder is not writable, the compiler cannot run or fails
        (with its last lines of output).
    """
    return _build(source, library, compiler, flags)


def _key(source, compiler, flags):
    digest = hashlib.sha256()
    for part in (_FORMAT, source, " ".join(compiler), " ".join(flags), platform.machine(), sys.platform):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    try:
        stat = os.stat(compiler[0])
        digest.update(f"{os.path.realpath(compiler[0])}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    except OSError:
        pass
    return digest.hexdigest()[:24]


def _build(source, library, compiler, flags):
    """Compile ``source`` into ``library`` atomically; seconds the compiler took."""
    folder = library.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=folder))
    except OSError as exc:
        raise CompileError(f"cannot write the compiled-code cache {folder}: {exc} (set $KANEROBOT_CACHE)") from None
    try:
        c_file = work / (library.stem + ".c")
        c_file.write_text(source, encoding="utf-8")
        target = work / library.name
        command = compiler + list(flags) + ["-o", str(target), str(c_file), "-lm"]
        start = time.perf_counter()
        lines = source.count("\n")
        try:
            with slow_step(f"compiling {library.stem.rsplit('-', 1)[0]} ({lines:,} lines of C)"):
                result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CompileError(f"cannot run the C compiler {compiler[0]}: {exc}") from None
        seconds = time.perf_counter() - start
        if result.returncode != 0 or not target.is_file():
            message = (result.stderr or result.stdout or "").strip().splitlines()
            tail = "\n".join(message[-15:]) or f"exit status {result.returncode}"
            raise CompileError(f"{compiler[0]} failed to compile {library.stem}.c:\n{tail}")
        try:
            os.replace(c_file, library.with_suffix(".c"))  # kept beside the library, to read
            os.replace(target, library)
        except OSError as exc:
            raise CompileError(f"cannot write the compiled-code cache {folder}: {exc} (set $KANEROBOT_CACHE)") from None
        return seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _load(library, backend):
    try:
        handle = ctypes.CDLL(str(library))
        function = getattr(handle, f"{backend.name}_batch")
        state = ctypes.cast(getattr(handle, f"{backend.name}_state"), ctypes.c_void_p).value
    except (OSError, AttributeError) as exc:
        raise CompileError(f"cannot load {library}: {exc}") from None
    function.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * (len(backend.groups) + 1)
    function.restype = None
    return handle, function, state  # the handle keeps the library loaded
