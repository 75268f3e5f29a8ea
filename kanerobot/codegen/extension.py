"""One state of a compiled model from Python, without ctypes.

A call through ctypes (:meth:`CompiledFunction.batch
<kanerobot.codegen.compiled.CompiledFunction.batch>`) and the numpy checks
around it cost 10-20 us per state, where the RX-90's inverse dynamic model
runs in 0.2 us.  This module compiles, once per Python and numpy version, a
small CPython extension, ``kanerobot_fastcall``, whose ``FastFunction``
calls a model's one-state entry point (``name_state``, see
:mod:`kanerobot.codegen.compiled`) through its address, with the arguments
parsed in C (vectorcall): a call costs 0.3-0.5 us more than the model.

It is built with the compiler and into the cache folder of the compiled
models (:func:`~kanerobot.codegen.compiled.library_path`,
:func:`~kanerobot.codegen.compiled.build_library`), against Python's headers
(``sysconfig.get_paths()["include"]``) and numpy's
(:func:`numpy.get_include`); both versions are in the source, hence in the
cache key.

``f(x1, ..., xm, out, check)`` takes the groups the model reads at each
call (1-D float64 arrays, used in place when C-contiguous, or lists and
tuples of numbers), ``out`` (None or a C-contiguous float64 array of the
result's shape) and ``check`` (refuse non-finite entries), and returns the
result, or None for anything else: a batch, a wrong length, a value that is
no number, a non-finite entry, an unsuitable ``out``.  None means "take the
general path", which handles batches and words the errors: the extension
never raises for the caller's input.  The other groups (the parameters,
zero torques or wrenches) are fixed when the function is made.

Without Python's headers, without a compiler, or on Windows,
:func:`load_extension` raises :class:`~kanerobot.codegen.compiled.CompileError`
saying why, and callers keep the ctypes path
(:attr:`kanerobot.dynamics.model.NumericDynamics.fast_call_fallback`).
"""

import importlib.util
import os
import sys
import sysconfig
import threading
import types
from pathlib import Path

import numpy as np

from kanerobot.codegen.compiled import CompileError, build_library, find_compiler, library_path

__all__ = ["MAX_GROUPS", "MODULE", "SOURCE", "fast_function", "load_extension"]

#: Name of the extension module (its ``PyInit_`` function).
MODULE = "kanerobot_fastcall"
#: Argument groups a ``FastFunction`` takes at most (``MAX_GROUPS`` in its C source).
MAX_GROUPS = 64
_FLAGS = ("-O2", "-shared", "-fPIC", "-fno-strict-aliasing")
_LOADED: dict[str, types.ModuleType | CompileError] = {}  # library path -> the module, or the CompileError of a failed build, in this process
_LOCK = threading.Lock()

#: The extension's C source (the versions it is built for are prepended).
SOURCE = r"""
/* kanerobot_fastcall: one state of a compiled model, called from Python
 * without ctypes.
 *
 * A FastFunction holds the address of a model's one-state entry point,
 *
 *     void name_state(const double *const *groups, double *out);
 *
 * (kanerobot.codegen.compiled appends it to every model's C file), and the
 * layout of its argument groups: each group is either a run of entries of
 * one of the call's positional arguments (all of it, or a slice: the joints
 * q[7:] of a floating base; normalised for its quaternion q[3:7]), or fixed
 * when the object is made (the bound parameters, zeros for the torques or
 * wrenches a model does not read).
 *
 *     f(x1, ..., xm, out, check) -> numpy array, or None
 *
 * Each xi is a 1-D float64 numpy array of the right length (used in place
 * when C-contiguous and aligned, converted once otherwise) or a list or
 * tuple of numbers.  `out` is None (a new array is made) or a C-contiguous,
 * writeable float64 array of the result's shape, distinct from the inputs.
 * With `check` true, every entry must be finite.  Anything else (a batch, a
 * wrong length, a value that is no number, a non-finite entry, a zero
 * quaternion, an unsuitable out, or a non-finite result when the object was
 * made to refuse one) returns None without raising: the caller then takes
 * its general path, which handles batches and words every error.  The GIL
 * is held throughout: the model's code runs for a microsecond or so.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stddef.h>

#define MAX_GROUPS 64
#define SCRATCH 512 /* doubles converted on the stack: list arguments, normalised slices */

typedef void (*state_function)(const double *const *groups, double *out);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    state_function function;
    Py_ssize_t nargs;                 /* positional state arguments */
    Py_ssize_t size[MAX_GROUPS];      /* argument -> its length */
    Py_ssize_t ngroups;               /* groups of the C function */
    Py_ssize_t arg[MAX_GROUPS];       /* group -> the argument it reads, -1 when fixed */
    Py_ssize_t offset[MAX_GROUPS];    /* group -> its first entry in that argument */
    Py_ssize_t length[MAX_GROUPS];    /* group -> its number of entries */
    int normalise[MAX_GROUPS];        /* group -> divided by its norm (a quaternion) */
    const double *fixed[MAX_GROUPS];  /* group -> its fixed data, or NULL */
    int finite_result;                /* a non-finite result returns None */
    int ndim;
    npy_intp dims[2];
    Py_ssize_t out_size;
    PyObject *keep; /* the fixed arrays and the library's handle, kept alive */
} FastFunction;

static void
FastFunction_dealloc(FastFunction *self)
{
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
all_finite(const double *x, Py_ssize_t n)
{
    Py_ssize_t i;
    for (i = 0; i < n; ++i)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static int
overlaps(const double *a, Py_ssize_t na, const double *b, Py_ssize_t nb)
{
    return a < b + nb && b < a + na;
}

/* The doubles of argument x (k of them): in place, converted into
 * *converted (a new reference to release), or read into row (scratch).
 * NULL (no exception set) when x is not one state of k numbers. */
static const double *
state_data(PyObject *x, Py_ssize_t k, double *row, PyObject **converted)
{
    Py_ssize_t j;
    if (PyArray_Check(x)) {
        PyArrayObject *a = (PyArrayObject *)x;
        PyObject *c;
        if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != k)
            return NULL;
        if (PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISCARRAY_RO(a) && PyArray_ISNOTSWAPPED(a))
            return (const double *)PyArray_DATA(a);
        c = PyArray_FROMANY(x, NPY_DOUBLE, 1, 1, NPY_ARRAY_IN_ARRAY);
        if (c == NULL) {
            PyErr_Clear();
            return NULL;
        }
        *converted = c;
        return (const double *)PyArray_DATA((PyArrayObject *)c);
    }
    if (PyList_CheckExact(x) || PyTuple_CheckExact(x)) {
        PyObject *const *items;
        if (PySequence_Fast_GET_SIZE(x) != k || row == NULL)
            return NULL;
        items = PySequence_Fast_ITEMS(x);
        for (j = 0; j < k; ++j) {
            PyObject *item = items[j];
            if (PyFloat_CheckExact(item))
                row[j] = PyFloat_AS_DOUBLE(item);
            else if (PyList_Check(item) || PyTuple_Check(item))
                return NULL; /* a batch given as nested lists */
            else {
                row[j] = PyFloat_AsDouble(item);
                if (row[j] == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    return NULL;
                }
            }
        }
        return row;
    }
    return NULL;
}

static PyObject *
FastFunction_vectorcall(FastFunction *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const double *data[MAX_GROUPS];
    const double *groups[MAX_GROUPS];
    double scratch[SCRATCH];
    Py_ssize_t used = 0, i, j;
    PyObject *converted[MAX_GROUPS];
    Py_ssize_t nconverted = 0;
    PyObject *result = Py_None;
    PyArrayObject *out = NULL;
    int check, made = 0;

    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
        PyErr_SetString(PyExc_TypeError, "FastFunction takes no keyword arguments");
        return NULL;
    }
    if (nargs != self->nargs + 2) {
        PyErr_Format(PyExc_TypeError, "FastFunction takes %zd arguments (the states, out, check), got %zd",
                     self->nargs + 2, nargs);
        return NULL;
    }
    check = PyObject_IsTrue(args[nargs - 1]);
    if (check < 0)
        return NULL;
    for (i = 0; i < self->nargs; ++i) {
        Py_ssize_t k = self->size[i];
        PyObject *c = NULL;
        double *row = used + k <= SCRATCH ? scratch + used : NULL;
        data[i] = state_data(args[i], k, row, &c);
        if (c != NULL)
            converted[nconverted++] = c;
        if (data[i] == NULL || (check && !all_finite(data[i], k)))
            goto general;
        if (data[i] == row)
            used += k;
    }
    for (i = 0; i < self->ngroups; ++i) {
        const double *g;
        if (self->arg[i] < 0) {
            groups[i] = self->fixed[i];
            continue;
        }
        g = data[self->arg[i]] + self->offset[i];
        if (self->normalise[i]) {
            Py_ssize_t k = self->length[i];
            double norm = 0.0, *unit;
            if (used + k > SCRATCH)
                goto general;
            for (j = 0; j < k; ++j)
                norm += g[j] * g[j];
            norm = sqrt(norm);
            if (norm == 0.0 || !isfinite(norm))
                goto general; /* the general path says what is wrong */
            unit = scratch + used;
            for (j = 0; j < k; ++j)
                unit[j] = g[j] / norm;
            used += k;
            g = unit;
        }
        groups[i] = g;
    }
    if (args[nargs - 2] == Py_None) {
        out = (PyArrayObject *)PyArray_SimpleNew(self->ndim, self->dims, NPY_DOUBLE);
        if (out == NULL) {
            result = NULL;
            goto done;
        }
        made = 1;
    }
    else {
        PyObject *o = args[nargs - 2];
        double *target;
        if (!PyArray_Check(o))
            goto general;
        out = (PyArrayObject *)o;
        if (PyArray_TYPE(out) != NPY_DOUBLE || !PyArray_ISCARRAY(out) || !PyArray_ISNOTSWAPPED(out)
            || PyArray_NDIM(out) != self->ndim || PyArray_DIM(out, 0) != self->dims[0]
            || (self->ndim == 2 && PyArray_DIM(out, 1) != self->dims[1]))
            goto general;
        target = (double *)PyArray_DATA(out);
        for (i = 0; i < self->nargs; ++i) /* the generated code reads its inputs after writing */
            if (overlaps(data[i], self->size[i], target, self->out_size))
                goto general;
    }
    self->function(groups, (double *)PyArray_DATA(out));
    if (self->finite_result && !all_finite((const double *)PyArray_DATA(out), self->out_size)) {
        if (made)
            Py_DECREF(out);
        goto general;
    }
    if (!made)
        Py_INCREF(out);
    result = (PyObject *)out;
    goto done;
general:
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (i = 0; i < nconverted; ++i)
        Py_DECREF(converted[i]);
    return result;
}

static int
shape_of(FastFunction *self, PyObject *shape)
{
    Py_ssize_t i;
    if (PyTuple_GET_SIZE(shape) < 1 || PyTuple_GET_SIZE(shape) > 2) {
        PyErr_SetString(PyExc_ValueError, "the result's shape has 1 or 2 dimensions");
        return -1;
    }
    self->ndim = (int)PyTuple_GET_SIZE(shape);
    self->out_size = 1;
    for (i = 0; i < self->ndim; ++i) {
        Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (d < 1) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "the result's dimensions must be positive");
            return -1;
        }
        self->dims[i] = d;
        self->out_size *= d;
    }
    return 0;
}

static int
layout_of(FastFunction *self, PyObject *sizes, PyObject *layout)
{
    Py_ssize_t i;
    self->nargs = PyTuple_GET_SIZE(sizes);
    self->ngroups = PyTuple_GET_SIZE(layout);
    if (self->nargs > MAX_GROUPS || self->ngroups > MAX_GROUPS) {
        PyErr_Format(PyExc_ValueError, "at most %d arguments and groups", MAX_GROUPS);
        return -1;
    }
    for (i = 0; i < self->nargs; ++i) {
        self->size[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
        if (self->size[i] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "an argument's length is a size");
            return -1;
        }
    }
    for (i = 0; i < self->ngroups; ++i) {
        PyObject *g = PyTuple_GET_ITEM(layout, i);
        self->fixed[i] = NULL;
        self->arg[i] = -1;
        if (PyTuple_Check(g)) {
            Py_ssize_t arg, offset, length;
            int normalise;
            if (!PyArg_ParseTuple(g, "nnnp", &arg, &offset, &length, &normalise))
                return -1;
            if (arg < 0 || arg >= self->nargs || offset < 0 || length < 0 || offset + length > self->size[arg]) {
                PyErr_Format(PyExc_ValueError, "group %zd: entries %zd to %zd of argument %zd are out of range", i, offset,
                             offset + length, arg);
                return -1;
            }
            self->arg[i] = arg;
            self->offset[i] = offset;
            self->length[i] = length;
            self->normalise[i] = normalise;
        }
        else if (PyArray_Check(g) && PyArray_TYPE((PyArrayObject *)g) == NPY_DOUBLE
                 && PyArray_ISCARRAY_RO((PyArrayObject *)g) && PyArray_NDIM((PyArrayObject *)g) == 1) {
            self->fixed[i] = (const double *)PyArray_DATA((PyArrayObject *)g);
        }
        else {
            PyErr_Format(PyExc_TypeError, "group %zd: (argument, offset, length, normalise) or a 1-D C-contiguous float64 array", i);
            return -1;
        }
    }
    return 0;
}

static PyObject *
FastFunction_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    /* FastFunction(address, sizes, layout, shape, finite_result, keep):
     * sizes holds the length of each positional argument; layout, per group
     * of the C function, (argument, offset, length, normalise) or a 1-D
     * C-contiguous float64 array (fixed); keep is any object to hold. */
    unsigned long long address;
    PyObject *sizes, *layout, *shape, *keep;
    int finite_result;
    FastFunction *self;

    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyErr_SetString(PyExc_TypeError, "FastFunction takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "KO!O!O!pO", &address, &PyTuple_Type, &sizes, &PyTuple_Type, &layout, &PyTuple_Type, &shape,
                          &finite_result, &keep))
        return NULL;
    if (address == 0) {
        PyErr_SetString(PyExc_ValueError, "null function address");
        return NULL;
    }
    self = (FastFunction *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)FastFunction_vectorcall;
    self->function = (state_function)(uintptr_t)address;
    self->finite_result = finite_result;
    if (shape_of(self, shape) < 0 || layout_of(self, sizes, layout) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    /* the fixed arrays must outlive the object: keep the layout too */
    self->keep = Py_BuildValue("(OO)", layout, keep);
    if (self->keep == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyTypeObject FastFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kanerobot_fastcall.FastFunction",
    .tp_basicsize = sizeof(FastFunction),
    .tp_dealloc = (destructor)FastFunction_dealloc,
    .tp_vectorcall_offset = offsetof(FastFunction, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One state of a compiled model: f(x1, ..., xm, out, check) -> array or None.",
    .tp_new = FastFunction_new,
};

static struct PyModuleDef fastcall_module = {
    PyModuleDef_HEAD_INIT, "kanerobot_fastcall", "One-state calls of kanerobot's compiled models.", -1, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_kanerobot_fastcall(void)
{
    PyObject *m;
    import_array();
    if (PyType_Ready(&FastFunctionType) < 0)
        return NULL;
    m = PyModule_Create(&fastcall_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&FastFunctionType);
    if (PyModule_AddObject(m, "FastFunction", (PyObject *)&FastFunctionType) < 0) {
        Py_DECREF(&FastFunctionType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
"""


def load_extension(cache=None):
    """The ``kanerobot_fastcall`` module, built on first use and cached.

    Parameters
    ----------
    cache : str or pathlib.Path, optional
        Folder of the libraries; by default
        :func:`~kanerobot.codegen.compiled.cache_dir`.

    Raises
    ------
    CompileError
        On Windows, without Python's or numpy's headers, without a compiler,
        when compiling or loading fails; the message says which.  A failure
        is remembered for the process: it is not tried again.
    """
    if os.name == "nt":
        raise CompileError("the one-state extension is not built on Windows (ctypes is used)")
    include = sysconfig.get_paths()["include"]
    if not include or not (Path(include) / "Python.h").is_file():
        raise CompileError(f"Python's headers are not installed (no Python.h in {include}; on Debian or Ubuntu: apt install python3-dev)")
    numpy_include = np.get_include()
    if not (Path(numpy_include) / "numpy" / "arrayobject.h").is_file():
        raise CompileError(f"numpy's headers are not installed (no numpy/arrayobject.h in {numpy_include})")
    flags = _FLAGS + ("-I", include, "-I", numpy_include)
    if sys.platform == "darwin":
        flags += ("-undefined", "dynamic_lookup")  # Python's symbols come from the running interpreter
    source = f"/* built for Python {sys.version.split()[0]} ({sys.implementation.cache_tag}), numpy {np.__version__} */\n" + SOURCE
    compiler = find_compiler()
    library = library_path(MODULE, source, compiler, flags, cache, suffix=sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    with _LOCK:
        loaded = _LOADED.get(str(library))
        if loaded is None:
            try:
                loaded = _import(library) if library.is_file() else None
            except CompileError:
                loaded = None  # unreadable: built again
            if loaded is None:
                try:
                    build_library(source, library, compiler, flags)
                    loaded = _import(library)
                except CompileError as exc:
                    loaded = exc
            _LOADED[str(library)] = loaded
    if isinstance(loaded, CompileError):
        raise loaded
    return loaded


def _import(library):
    try:
        spec = importlib.util.spec_from_file_location(MODULE, library)
        if spec is None or spec.loader is None:
            raise ImportError("not a module file")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as exc:
        raise CompileError(f"cannot load the one-state extension {library}: {exc}") from None
    return module


def fast_function(function, layout, sizes=None, finite_result=False, cache=None):
    """A ``FastFunction`` calling one state of ``function``.

    Parameters
    ----------
    function : kanerobot.codegen.compiled.CompiledFunction
    layout : sequence
        One entry per argument group of ``function``, in order: ``None``
        for a group that is the whole of the next positional argument (the
        arguments taken in the order of these entries), ``(i, start,
        normalise)`` for a group read from entries ``start`` on of argument
        ``i`` (divided by its norm when ``normalise``: a quaternion), else
        the group's fixed values (its length).
    sizes : sequence of int, optional
        Lengths of the positional arguments, needed by (and only by) the
        ``(i, start, normalise)`` entries, which cannot be mixed with
        ``None``.
    finite_result : bool, optional
        Give None (the general path) when the result has a non-finite
        entry: for models whose general path raises then (singular inertia).
    cache : str or pathlib.Path, optional
        As for :func:`load_extension`.

    Returns
    -------
    FastFunction
        ``f(x1, ..., xm, out, check)``, as the module's notes say.

    Raises
    ------
    CompileError
        As :func:`load_extension`, for a ``function`` whose library has no
        one-state entry point, and for one of more than :data:`MAX_GROUPS`
        argument groups (a robot with some sixty external wrenches).
    ValueError
        A layout that does not match the function's groups.
    """
    if function.state_address is None:
        raise CompileError(f"{function.name} has no one-state entry point")
    if len(function.args) > MAX_GROUPS:
        raise CompileError(f"{function.name} has {len(function.args)} argument groups, the one-state extension takes {MAX_GROUPS}")
    if len(layout) != len(function.args):
        raise ValueError(f"{function.name} has {len(function.args)} argument groups, the layout {len(layout)}")
    groups: list[tuple[int, int, int, bool] | np.ndarray] = []  # (argument, start, size, normalise) or constant values
    whole: list[int] = []
    for argname, k, entry in zip(function.args, function.sizes, layout):
        if entry is None:
            groups.append((len(whole), 0, k, False))
            whole.append(k)
        elif isinstance(entry, tuple):
            index, start, normalise = entry
            if sizes is None or not 0 <= index < len(sizes) or not 0 <= start <= sizes[index] - k:
                raise ValueError(f"{function.name}: {argname} ({k} values) from entry {start} of argument {index}: out of range")
            groups.append((index, start, k, bool(normalise)))
        else:
            values = np.array(entry, dtype=np.float64)  # a copy of its own, read-only: the C code keeps its address
            if values.shape != (k,):
                raise ValueError(f"{function.name}: {argname} has {k} values, the layout gives {values.shape}")
            values.flags.writeable = False
            groups.append(values)
    if whole and sizes is not None:
        raise ValueError(f"{function.name}: a layout takes whole arguments (None) or slices of given sizes, not both")
    sizes = tuple(whole) if sizes is None else tuple(sizes)
    module = load_extension(cache)
    return module.FastFunction(function.state_address, sizes, tuple(groups), function.shape, finite_result, function.handle)
