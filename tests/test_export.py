"""Exported models (`kanerobot model ROBOT MODEL --lang ...`) give the numbers
of the in-process models: Python with numpy only, C compiled with warnings as
errors and called through ctypes; the pose and Jacobian in every language.
Their parameter vector is the model's own, in the robot's order."""

import ctypes
import importlib.util
import re
import runpy
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import assert_close, derived, library

from kanerobot.cli import main
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.geometry import numeric_function, numeric_transform
from kanerobot.kinematics import jacobian

CASES = [("rx90", "idm"), ("rx90", "inm"), ("rx90", "ddm"), ("krang", "idm"), ("stanford", "cor"), ("planar2", "didm"), ("planar2", "dddm")]


def _states(model, rng, N):
    n = len(model.q)
    return {name: rng.uniform(-1, 1, (N, n)) for name in ("q", "qd", "qdd", "tau")}


def _reference(fn, key, s):
    if key == "idm":
        return fn.inverse_dynamics(s["q"], s["qd"], s["qdd"])
    if key == "inm":
        return fn.mass_matrix(s["q"])
    if key == "ddm":
        return fn.direct_dynamics(s["q"], s["qd"], s["tau"])
    if key == "didm":  # the blocks side by side, one row per speed
        return np.concatenate(fn.inverse_dynamics_derivatives(s["q"], s["qd"], s["qdd"]), axis=-1)
    if key == "dddm":
        return np.concatenate(fn.direct_dynamics_derivatives(s["q"], s["qd"], s["tau"]), axis=-1)
    return fn.coriolis_matrix(s["q"], s["qd"])


def _arguments(model, key, s, p, wrench):
    args = [s["q"]]
    if key in ("idm", "ddm", "cor", "didm", "dddm"):
        args.append(s["qd"])
    if key in ("idm", "didm"):
        args.append(s["qdd"])
    if key in ("ddm", "dddm"):
        args.append(s["tau"])
    if key in ("idm", "ddm", "didm", "dddm"):
        args += [wrench] * len(model.wrench)
    return args + [p]


@pytest.mark.parametrize("name, key", CASES)
@pytest.mark.long
def test_python_and_c_exports_match_the_model(name, key, tmp_path, capsys):
    robot, model = library(name), derived(name)
    rng = np.random.default_rng(len(name) + len(key))
    values = random_parameters(robot, rng)
    fn = model.numeric(values)
    N = 5
    s = _states(model, rng, N)
    expected = _reference(fn, key, s)
    zero_wrench = np.zeros((N, 6))

    py = tmp_path / f"{name}_{key}.py"
    assert main(["model", name, key, "--lang", "python", "-o", str(py)]) == 0
    # p: the parameters the generated file names (the model's own, in robot order), not model.parameters
    p = np.array([values[k] for k in runpy.run_path(str(py))["ARGUMENTS"]["p"]])
    # The exported module runs in a fresh interpreter with numpy only.
    check = subprocess.run(
        [sys.executable, "-c", f"import runpy; m = runpy.run_path({str(py)!r}); assert 'kanerobot' not in __import__('sys').modules"],
        capture_output=True, text=True,
    )
    assert check.returncode == 0, check.stderr
    spec = importlib.util.spec_from_file_location("exported", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function = getattr(module, f"{name}_{key}")
    got = function(*_arguments(model, key, s, np.broadcast_to(p, (N, len(p))), zero_wrench))
    assert_close(got, expected, rtol=1e-10, what=f"{name} {key} in Python")

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    c_file = tmp_path / f"{name}_{key}.c"
    assert main(["model", name, key, "--lang", "c", "-o", str(c_file)]) == 0
    shared = tmp_path / f"lib{name}{key}.so"
    build = subprocess.run(
        [compiler, "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", str(c_file), "-o", str(shared)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0 and build.stderr == "", build.stderr
    c_function = getattr(ctypes.CDLL(str(shared)), f"{name}_{key}")
    size = expected[0].size
    for k in range(N):
        args = _arguments(model, key, {a: v[k] for a, v in s.items()}, p, np.zeros(6))
        buffers = [np.ascontiguousarray(a, dtype=float) for a in args]
        out = np.zeros(size)
        c_function(*[b.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for b in buffers], out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        assert_close(out.reshape(expected[k].shape), expected[k], rtol=1e-10, what=f"{name} {key} in C, state {k}")
    capsys.readouterr()


#: SYMORO's order of a frame's parameters: its geometry (table columns), then its link's (issue 25, defect 9).
LINK_ORDER = ("gamma", "b", "alpha", "d", "theta", "r", "XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA", "FV", "FS")


def _rx90_rank(name):
    """Where an RX-90 parameter goes: by frame, then by LINK_ORDER; gravity after the frames."""
    if name == "G3":
        return (7, 0)
    prefix, label = re.fullmatch(r"([A-Z]+)(\d)", name).groups()
    return (int(label), LINK_ORDER.index({"D": "d", "RL": "r"}.get(prefix, prefix)))


@pytest.mark.parametrize("key, model_name", [("grav", "gravity"), ("inm", "mass_matrix"), ("idm", "inverse_dynamics")])
def test_exported_parameters_are_the_models_own_in_robot_order(key, model_name, tmp_path):
    """p lists exactly the symbols of the exported expressions besides the state, frame by frame (not FS1, FS2, ..., D3 ...)."""
    py = tmp_path / f"rx90_{key}.py"
    assert main(["model", "rx90", key, "--lang", "python", "-o", str(py)]) == 0
    module = runpy.run_path(str(py))
    p = list(module["ARGUMENTS"]["p"])
    model = derived("rx90")
    exprs = model.program(model_name).substitute_back().values()
    state = {str(s) for s in model.state_symbols}
    assert set(p) == {str(s) for e in exprs for s in e.free_symbols} - state
    assert p == sorted(p, key=_rx90_rank)
    # the file says so: its docstring lists the same order
    assert f"p ({len(p)}): {', '.join(p[:3])}" in module["__doc__"]


#: The kinematic models --lang exports (issue 25, defect 9): options, and the numbers of an independent path.
KINEMATICS = {
    "fgm": (["--start", "0", "--frame", "6"], lambda robot, values: lambda q: numeric_transform(robot, "0", "6", values)(q)[:3]),
    "jac": (["--frame", "6", "--projection", "3"], lambda robot, values: numeric_function(robot, jacobian(robot, "6", projection="3"), values)),
}


@pytest.mark.parametrize("key", sorted(KINEMATICS))
def test_fgm_and_jac_exported_in_every_language(key, tmp_path):
    """The pose and the Jacobian through the dynamic models' pipeline: each language gives the numbers of
    the symbolic product of the frames' transforms (fgm) or of Renaud's symbolic Jacobian (jac), lambdified."""
    from test_codegen import CC, JULIA, OCTAVE, call_c, compile_c, read_back, run_julia, run_octave

    robot = library("rx90")
    rng = np.random.default_rng(25)
    values = {"D3": rng.uniform(0.2, 0.6), "RL4": rng.uniform(0.2, 0.6)}
    q = rng.uniform(-np.pi, np.pi, 6)
    options, reference = KINEMATICS[key]
    expected = reference(robot, values)(q)
    name = f"rx90_{key}"
    paths = {lang: tmp_path / f"{name}.{ext}" for lang, ext in (("python", "py"), ("c", "c"), ("matlab", "m"), ("julia", "jl"))}
    for lang, path in paths.items():
        assert main(["model", "rx90", key, "--lang", lang, *options, "-o", str(path)]) == 0
    module = runpy.run_path(str(paths["python"]))
    assert list(module["ARGUMENTS"]) == ["q", "p"] and list(module["ARGUMENTS"]["p"]) == ["D3", "RL4"]  # the parameters it uses
    p = np.array([values[k] for k in module["ARGUMENTS"]["p"]])
    got = {"python": module[name](q, p)}
    if CC:
        got["c"] = call_c(compile_c(paths["c"].read_text(), tmp_path, name), [q, p], expected.size).reshape(expected.shape)
    for lang, runner, installed in (("matlab", run_octave, OCTAVE), ("julia", run_julia, JULIA)):
        text = paths[lang].read_text()
        assert "p (2): D3, RL4" in text
        # run where installed, else read back line by line (each assignment parsed and evaluated)
        numbers = runner(text, tmp_path, name, [q, p]) if installed else read_back(text, lang, name, [("q", q), ("p", p)], [q, p])[0]
        got[lang] = np.asarray(numbers).reshape(expected.shape)
    for lang, numbers in got.items():
        assert_close(numbers, expected, rtol=1e-12, what=f"{key} in {lang}")
