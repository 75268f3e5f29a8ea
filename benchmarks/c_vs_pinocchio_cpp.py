"""kanerobot's generated C against pinocchio's C++, per call, in one run.

For the RX-90 (6 joints) and Krang (17 joints, a tree), with random
parameters (no friction, no rotor inertia, no external wrench: what
pinocchio models), the script compares per call on one state:

- the inverse dynamic model: kanerobot's ``inverse_dynamics`` against
  ``pinocchio::rnea``;
- the inertia matrix: kanerobot's ``mass_matrix`` (every entry: the
  entries below the diagonal are copies of those above) against
  ``pinocchio::crba``, which fills the upper triangle only; the check
  compares the upper triangles;
- the direct dynamic model: kanerobot's ``direct_dynamics`` (recursive)
  against ``pinocchio::aba``.

How it is measured
------------------
The script writes into a temporary folder, for each robot, N random states
(q, qd in [-pi, pi] and [-2, 2], qdd and tau in [-3, 3]; 1000 by default)
as binary doubles, and compiles two programs with the same compiler family
(gcc for C, g++ for C++, same version, printed: gcc 12.2 when measured)
and the same flags (:data:`FLAGS`: ``-O3 -DNDEBUG -fno-math-errno
-ffp-contract=off``, no ``-march``, as in issue 16's measurement; printed):

- a C harness linking the one-state C functions that
  ``model.compiled(name).source`` holds (each in its own translation unit,
  as a user links an exported ``.c``), called with the parameters in
  ``model.parameters``'s order.  On x86-64 with glibc and gcc, that C
  declares each function with ``target_clones("avx2", "default")``
  (:mod:`kanerobot.codegen.c`): the AVX2 build runs when the processor has
  AVX2, with no ``-march`` flag;
- one C++ harness for both robots, built on the headers of the ``pin``
  wheel (pinocchio, Boost from cmeel-boost, Eigen from cmeel-eigen, which
  the bench extra adds), header-only (not through the wheel's precompiled
  template instances, so that both sides get the same flags).  It
  constructs pinocchio models with ``addJoint`` / ``appendBodyToJoint``
  from :func:`kanerobot.interop.to_pinocchio`'s model: its joint types,
  placements, inertias and gravity (no URDF parser needed).  It times two
  variants of each robot: "unaligned", exactly to_pinocchio's model
  (``JointModelRevoluteUnaligned``), and "aligned", the same robot with
  each joint frame turned so that its axis is +x, +y or +z
  (``JointModelRX/RY/RZ``, what pinocchio's URDF parser makes of axes
  along x, y or z, and pinocchio's faster joints).  The ratios are taken
  against the faster variant.

``--flags=-march=x86-64-v3`` adds that flag to both compilations, so that
pinocchio is built for AVX2 too: measured, it gains nothing from it (Eigen's
3- and 6-vectors), so the ratios stay within a few percent.

Each harness calls every function on the N states in a loop, 50 times
(:data:`REPEATS`), and keeps the fastest pass: ns/call is that pass's time
over N.  Both harnesses are run 7 times (:data:`RUNS`), alternately, and
the fastest run is kept (the machine is shared: a busy minute doubled a
whole run once).  pinocchio's results are read from its ``data`` after the
timed passes (a copy of ``data.tau``, ``data.M`` or ``data.ddq`` is not
timed); kanerobot's functions write their ``out`` array, the inertia
matrix whole.  Both write the results of every state to binary files,
which the script compares: the largest difference over the batch,
relative to the largest entry of pinocchio's result, must be below 1e-10
(and the two pinocchio variants must agree as closely), else the script
says so and exits with status 1.

It prints the compilers and flags, then one line per robot and model:
ns/call of kanerobot, of pinocchio unaligned and aligned, the ratio
(faster pinocchio) / kanerobot, the largest relative difference, and
whether the ratio reaches issue 16's target of 5.

Without pinocchio (the `pin` package), the script says so in one line,
times kanerobot's C alone, and exits with status 2 (``needs``); without a
C++ compiler or the Eigen, Boost or pinocchio headers, likewise (one line
per missing piece, saying what to install).

Run:  pip install -e '.[bench]' && python benchmarks/c_vs_pinocchio_cpp.py [N] [--flags=-march=x86-64-v3]
"""

import argparse
import importlib.util
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.interop import to_pinocchio

ROBOTS = ("rx90", "krang")
#: (kanerobot's model, pinocchio's algorithm, what pinocchio's data holds after it)
MODELS = (
    ("inverse_dynamics", "rnea", "tau"),
    ("mass_matrix", "crba", "M"),
    ("direct_dynamics", "aba", "ddq"),
)
#: Flags of both harnesses (no -march=native: the code runs on any x86-64 / aarch64 of its kind).
FLAGS = ("-O3", "-DNDEBUG", "-fno-math-errno", "-ffp-contract=off")
#: Passes over the N states in one harness run; the fastest counts.
REPEATS = 50
#: Harness runs (alternately kanerobot's, pinocchio's); the fastest counts.
RUNS = 7
TOLERANCE = 1e-10
TARGET = 5.0
#: Macros pinocchio's CMake targets give their users (its joint variant needs the larger Boost MPL lists).
PINOCCHIO_DEFINES = (
    "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
    "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "-DBOOST_FUSION_INVOKE_MAX_ARITY=12",
)
#: For an axis along -x, -y or -z: a half turn that maps it to +x, +y or +z (its own inverse).
_FLIP = {0: np.diag([-1.0, -1.0, 1.0]), 1: np.diag([-1.0, -1.0, 1.0]), 2: np.diag([1.0, -1.0, -1.0])}


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio's C++ rnea, crba and aba"))


def cmeel_prefix():
    """The ``cmeel.prefix`` folder of the installed ``pin`` wheel, or None."""
    try:
        spec = importlib.util.find_spec("pinocchio")
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None)
    if not origin:
        return None
    for parent in Path(origin).resolve().parents:
        if parent.name == "cmeel.prefix":
            return parent
    return None


def toolchain(prefix):
    """(lines naming what is missing, {"cc", "cxx", "include": [folders]}) to build both harnesses.

    ``prefix`` is the pin wheel's ``cmeel.prefix`` (None without it: the C++
    side is then not looked for, :func:`check` says why).
    """
    lines, found = [], {"cc": shutil.which("gcc"), "cxx": shutil.which("g++"), "include": []}
    if found["cc"] is None:
        lines.append("gcc is not on the PATH, so nothing can be compiled: install gcc (Debian: apt-get install gcc)")
    if prefix is None:
        return lines, found
    if found["cxx"] is None:
        lines.append("g++ is not on the PATH, so pinocchio's C++ harness is skipped: install g++ (Debian: apt-get install g++)")
    include = prefix / "include"
    headers = [
        ("pinocchio", include, include / "pinocchio" / "algorithm" / "aba.hpp", "pip install --force-reinstall pin"),
        ("Boost", include, include / "boost" / "version.hpp", "pip install cmeel-boost"),
        ("Eigen", include / "eigen3", include / "eigen3" / "Eigen" / "Dense", "pip install cmeel-eigen"),
    ]
    for label, folder, marker, fix in headers:
        if marker.is_file():
            found["include"].append(folder)
        else:
            lines.append(f"the {label} C++ headers are not in {folder} (no {marker.name}), so pinocchio's C++ harness is skipped: {fix}")
    return lines, found


def version(compiler):
    """First line of ``compiler --version``."""
    result = subprocess.run([compiler, "--version"], capture_output=True, text=True)
    return (result.stdout or result.stderr).splitlines()[0].strip()


def run(command, what):
    """Run ``command``; its standard output, or SystemExit naming ``what`` failed."""
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
        raise SystemExit(f"c_vs_pinocchio_cpp.py: {what} failed (exit status {result.returncode}):\n{tail}")
    return result.stdout


# ---------------------------------------------------------------- the states


def states(robot, N, rng):
    """{"q", "qd", "qdd", "tau": (N, n) arrays}: N random states."""
    n = robot.nj
    return {
        "q": rng.uniform(-np.pi, np.pi, (N, n)),
        "qd": rng.uniform(-2, 2, (N, n)),
        "qdd": rng.uniform(-3, 3, (N, n)),
        "tau": rng.uniform(-3, 3, (N, n)),
    }


# ------------------------------------------------------------ kanerobot's C


C_TIMING = """
static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static double *load(const char *folder, const char *name, long count)
{
    char path[4096];
    double *data = malloc(count * sizeof(double));
    FILE *file;
    snprintf(path, sizeof path, "%s/%s.bin", folder, name);
    file = fopen(path, "rb");
    if (!file || !data || fread(data, sizeof(double), count, file) != (size_t)count) {
        fprintf(stderr, "cannot read %ld doubles from %s\\n", count, path);
        exit(1);
    }
    fclose(file);
    return data;
}

static void save(const char *folder, const char *name, const double *data, long count)
{
    char path[4096];
    FILE *file;
    snprintf(path, sizeof path, "%s/%s.bin", folder, name);
    file = fopen(path, "wb");
    if (!file || fwrite(data, sizeof(double), count, file) != (size_t)count) {
        fprintf(stderr, "cannot write %s\\n", path);
        exit(1);
    }
    fclose(file);
}
"""


def c_harness(robot_name, model, N, n):
    """C source of the harness timing kanerobot's models of one robot (reads the states from argv[1])."""
    lines = [
        "#define _POSIX_C_SOURCE 199309L",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <time.h>",
        "",
    ]
    calls = []
    for name, _, _ in MODELS:
        f = model.compiled(name)
        lines.append(f"void {f.name}({', '.join([f'const double *{a}' for a in f.args] + ['double *out'])});")
        arguments = []
        for a in f.args:
            if a in ("q", "qd", "qdd", "tau"):
                arguments.append(f"{a} + i*{n}L")
            elif a == "p":
                arguments.append("p")
            else:  # an external wrench: zero, as pinocchio's (no external forces)
                arguments.append("zero")
        calls.append((name, f.name, f.size, ", ".join(arguments + [f"out + i*{f.size}L"])))
    lines.append(C_TIMING)
    lines += [
        "int main(int argc, char **argv)",
        "{",
        f"    const long N = {N}L;",
        "    const char *folder = argv[1];",
        "    const double zero[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};",
        f'    double *q = load(folder, "q", N*{n}L), *qd = load(folder, "qd", N*{n}L);',
        f'    double *qdd = load(folder, "qdd", N*{n}L), *tau = load(folder, "tau", N*{n}L);',
        f'    double *p = load(folder, "p_{robot_name}", {len(model.parameters)}L);',
        "    long i, r;",
        "    (void)argc; (void)zero;",
    ]
    for name, function, size, arguments in calls:
        lines += [
            "    {",
            f"        double *out = malloc(N*{size}L*sizeof(double)), best = 1e300;",
            f"        for (r = 0; r < {REPEATS}; ++r) {{",
            "            double start = now_ns(), elapsed;",
            "            for (i = 0; i < N; ++i)",
            f"                {function}({arguments});",
            "            elapsed = now_ns() - start;",
            "            if (elapsed < best) best = elapsed;",
            "        }",
            f'        printf("{name} %.3f\\n", best / N);',
            f'        save(folder, "kr_{robot_name}_{name}", out, N*{size}L);',
            "        free(out);",
            "    }",
        ]
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------ pinocchio's C++


def _vector(v):
    return "Eigen::Vector3d(" + ", ".join(repr(float(x)) for x in np.ravel(v)) + ")"


def _matrix(m):
    return "(Eigen::Matrix3d() << " + ", ".join(repr(float(x)) for x in np.ravel(m)) + ").finished()"


def aligned(pin, pmodel):
    """The same robot as ``pmodel`` with every joint frame turned so that its axis is +x, +y or +z.

    A joint about ``-e_k`` whose frame is placed by ``X`` is, in the frame
    ``X R`` (``R`` a half turn mapping ``-e_k`` to ``e_k``), a joint about
    ``e_k`` with the same q; what hangs on it (its inertia, its children's
    placements) is expressed in that frame by ``R^T``.  Joints about axes
    that are not along x, y or z are kept as they are.
    """
    out = pin.Model()
    out.gravity = pmodel.gravity
    turn = [np.eye(3)] * pmodel.njoints  # frame of joint j in `out` = frame in pmodel @ turn[j]
    kinds = []
    for j in range(1, pmodel.njoints):
        joint = pmodel.joints[j].extract()
        axis = np.asarray(joint.axis, dtype=float)
        k = int(np.argmax(np.abs(axis)))
        along = np.allclose(np.abs(axis), np.eye(3)[k], rtol=0, atol=1e-15)
        R = _FLIP[k] if along and axis[k] < 0 else np.eye(3)
        turn[j] = R
        parent = pmodel.parents[j]
        X = pmodel.jointPlacements[j]
        placement = pin.SE3(turn[parent].T @ X.rotation @ R, turn[parent].T @ X.translation)
        revolute = joint.shortname().startswith("JointModelRevolute")
        letter = "XYZ"[k]
        if along:
            model = getattr(pin, f"JointModel{'R' if revolute else 'P'}{letter}")()
            kinds.append(f"JointModel{'R' if revolute else 'P'}{letter}")
        else:
            model = joint
            kinds.append(joint.shortname())
        out.addJoint(parent, model, placement, pmodel.names[j])
        inertia = pin.SE3(R.T, np.zeros(3)).act(pmodel.inertias[j])
        out.appendBodyToJoint(j, inertia, pin.SE3.Identity())
    return out, kinds


def cpp_model(function, pmodel):
    """C++ function ``function`` building ``pmodel`` joint by joint."""
    lines = [
        f"static pinocchio::Model {function}()",
        "{",
        "    pinocchio::Model model;",
        "    pinocchio::JointIndex j;",
        f"    model.gravity.linear({_vector(pmodel.gravity.linear)});",
    ]
    for j in range(1, pmodel.njoints):
        joint = pmodel.joints[j].extract()
        kind = joint.shortname()
        if kind.endswith("Unaligned"):
            made = f"pinocchio::{kind}({', '.join(repr(float(x)) for x in joint.axis)})"
        else:
            made = f"pinocchio::{kind}()"
        X, inertia = pmodel.jointPlacements[j], pmodel.inertias[j]
        lines += [
            f"    j = model.addJoint({pmodel.parents[j]}, {made},",
            f'        pinocchio::SE3({_matrix(X.rotation)}, {_vector(X.translation)}), "{pmodel.names[j]}");',
            f"    model.appendBodyToJoint(j, pinocchio::Inertia({float(inertia.mass)!r}, {_vector(inertia.lever)},",
            f"        {_matrix(inertia.inertia)}), pinocchio::SE3::Identity());",
        ]
    lines += ["    return model;", "}", ""]
    return "\n".join(lines)


CPP_MAIN = """
static double now_ns()
{
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static std::vector<double> load(const std::string &folder, const std::string &name, long count)
{
    std::vector<double> data(count);
    std::FILE *file = std::fopen((folder + "/" + name + ".bin").c_str(), "rb");
    if (!file || std::fread(data.data(), sizeof(double), count, file) != (size_t)count) {
        std::fprintf(stderr, "cannot read %ld doubles from %s/%s.bin\\n", count, folder.c_str(), name.c_str());
        std::exit(1);
    }
    std::fclose(file);
    return data;
}

static void save(const std::string &folder, const std::string &name, const std::vector<double> &data)
{
    std::FILE *file = std::fopen((folder + "/" + name + ".bin").c_str(), "wb");
    if (!file || std::fwrite(data.data(), sizeof(double), data.size(), file) != data.size()) {
        std::fprintf(stderr, "cannot write %s/%s.bin\\n", folder.c_str(), name.c_str());
        std::exit(1);
    }
    std::fclose(file);
}

template <class Call>
static double best_ns(long N, Call call)
{
    double best = 1e300;
    for (int r = 0; r < REPEATS; ++r) {
        const double start = now_ns();
        for (long i = 0; i < N; ++i)
            call(i);
        best = std::min(best, now_ns() - start);
    }
    return best / N;
}

static void time_model(const pinocchio::Model &model, const std::string &folder, const std::string &label, long N)
{
    typedef Eigen::Map<const Eigen::VectorXd> Vector;
    const long n = model.nv;
    pinocchio::Data data(model);
    const std::vector<double> q = load(folder, "q", N*n), qd = load(folder, "qd", N*n);
    const std::vector<double> qdd = load(folder, "qdd", N*n), tau = load(folder, "tau", N*n);
    std::vector<double> out;
    double ns;

    ns = best_ns(N, [&](long i) { pinocchio::rnea(model, data, Vector(&q[i*n], n), Vector(&qd[i*n], n), Vector(&qdd[i*n], n)); });
    std::printf("rnea %.3f\\n", ns);
    out.clear();
    for (long i = 0; i < N; ++i) {
        pinocchio::rnea(model, data, Vector(&q[i*n], n), Vector(&qd[i*n], n), Vector(&qdd[i*n], n));
        out.insert(out.end(), data.tau.data(), data.tau.data() + n);
    }
    save(folder, "pin_" + label + "_rnea", out);

    ns = best_ns(N, [&](long i) { pinocchio::crba(model, data, Vector(&q[i*n], n)); });
    std::printf("crba %.3f\\n", ns);
    out.clear();
    for (long i = 0; i < N; ++i) {
        pinocchio::crba(model, data, Vector(&q[i*n], n));
        for (long r = 0; r < n; ++r)  // row by row, as kanerobot's; only the upper triangle is filled
            for (long c = 0; c < n; ++c)
                out.push_back(c >= r ? data.M(r, c) : 0.0);
    }
    save(folder, "pin_" + label + "_crba", out);

    ns = best_ns(N, [&](long i) { pinocchio::aba(model, data, Vector(&q[i*n], n), Vector(&qd[i*n], n), Vector(&tau[i*n], n)); });
    std::printf("aba %.3f\\n", ns);
    out.clear();
    for (long i = 0; i < N; ++i) {
        pinocchio::aba(model, data, Vector(&q[i*n], n), Vector(&qd[i*n], n), Vector(&tau[i*n], n));
        out.insert(out.end(), data.ddq.data(), data.ddq.data() + n);
    }
    save(folder, "pin_" + label + "_aba", out);
}
"""


def cpp_harness(models, N):
    """C++ source timing pinocchio on ``models`` ({label: pinocchio.Model}); argv[1]: label, argv[2]: folder."""
    lines = [
        "#include <pinocchio/multibody.hpp>",
        "#include <pinocchio/algorithm/rnea.hpp>",
        "#include <pinocchio/algorithm/crba.hpp>",
        "#include <pinocchio/algorithm/aba.hpp>",
        "#include <algorithm>",
        "#include <chrono>",
        "#include <cstdio>",
        "#include <cstdlib>",
        "#include <string>",
        "#include <vector>",
        "",
        f"static const int REPEATS = {REPEATS};",
        "",
    ]
    for label, pmodel in models.items():
        lines.append(cpp_model(f"build_{label}", pmodel))
    lines.append(CPP_MAIN)
    lines += ["int main(int argc, char **argv)", "{", "    if (argc != 3) return 2;", "    const std::string label = argv[1];"]
    for label in models:
        lines.append(f'    if (label == "{label}") {{ time_model(build_{label}(), argv[2], label, {N}L); return 0; }}')
    lines += ["    return 2;", "}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ the run


def timings(stdout):
    """{name: ns per call} from a harness's output lines ``name ns``."""
    return {name: float(ns) for name, ns in (line.split() for line in stdout.splitlines() if line.strip())}


def relative_difference(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def main(N=1000, extra=()):
    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")
    lines, tools = toolchain(cmeel_prefix() if pin is not None else None)
    if needs.announce(__file__, lines):
        status = needs.MISSING
    if tools["cc"] is None:
        return status
    with_cpp = pin is not None and tools["cxx"] is not None and len(tools["include"]) == 3
    print(f"C compiler:   {version(tools['cc'])}")
    if with_cpp:
        print(f"C++ compiler: {version(tools['cxx'])}, pinocchio {pin.__version__} headers from {tools['include'][0]}")
    flags = FLAGS + tuple(extra)
    print(f"flags (both): {' '.join(flags)}; {N} random states, best of {REPEATS} passes x {RUNS} runs")
    folder = Path(tempfile.mkdtemp(prefix="kr-c-vs-pinocchio-"))
    try:
        rows, failed = run_all(pin if with_cpp else None, dict(tools, flags=flags), folder, N)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    header = (
        f"{'robot':6s} {'model':16s} {'ours ns':>9s} {'pin unal. ns':>13s} {'pin al. ns':>11s}"
        f" {'pin/ours':>9s} {'max rel diff':>13s}  target {TARGET:g}x"
    )
    print(header)
    for row in rows:
        print(
            f"{row['robot']:6s} {row['model']:16s} {row['ours']:9.1f} {row['unaligned']:13.1f} {row['aligned']:11.1f}"
            f" {row['ratio']:9.2f} {row['diff']:13.1e}  {'met' if row['ratio'] >= TARGET else 'NOT met' if row['ratio'] == row['ratio'] else '-'}"
        )
    if failed:
        print(f"results differ by more than {TOLERANCE:g}: " + "; ".join(failed), file=sys.stderr)
        return 1
    return status


def run_all(pin, tools, folder, N):
    """Build and run the harnesses; (table rows, list of disagreements)."""
    robots = build_c(tools, folder, N)
    pmodels = build_cpp(pin, tools, folder, robots, N) if pin is not None else {}
    times = run_harnesses(folder, pmodels)
    return compare(folder, robots, pmodels, times, N)


def build_c(tools, folder, N):
    """Write each robot's states and parameters, compile its C harness; {name: (robot, values, model)}."""
    rng = np.random.default_rng(0)
    cc = [tools["cc"], *tools["flags"]]
    robots = {}
    for name in ROBOTS:
        robot = kr.load(kr.frames_path(name))
        values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
        model = kr.derive(robot)
        for key, array in states(robot, N, rng).items():
            array.tofile(folder / f"{key}_{name}.bin")
        np.array([values[p] for p in model.parameters], dtype=float).tofile(folder / f"p_{name}.bin")
        robots[name] = (robot, values, model)
        objects = []  # one object per model, as an exported .c is linked
        for model_name, _, _ in MODELS:
            source = folder / f"{name}_{model_name}.c"
            source.write_text(model.compiled(model_name).source)
            objects.append(source.with_suffix(".o"))
            run(cc + ["-c", source, "-o", objects[-1]], f"compiling kanerobot's {model_name} of {name}")
        harness = folder / f"kr_{name}.c"
        harness.write_text(c_harness(name, model, N, robot.nj))
        run(cc + [harness, *objects, "-lm", "-o", folder / f"kr_{name}"], f"compiling the C harness of {name}")
    return robots


def build_cpp(pin, tools, folder, robots, N):
    """Compile the C++ harness of every robot's two pinocchio models; {label: pinocchio.Model}."""
    pmodels = {}
    for name, (robot, values, _) in robots.items():
        pmodels[f"{name}_unaligned"] = to_pinocchio(robot, values)
        pmodels[f"{name}_aligned"], _ = aligned(pin, pmodels[f"{name}_unaligned"])
    source = folder / "pinocchio_harness.cpp"
    source.write_text(cpp_harness(pmodels, N))
    includes = [f"-I{path}" for path in tools["include"]]
    print("compiling pinocchio's C++ harness (a minute or two) ...", file=sys.stderr, flush=True)
    command = [tools["cxx"], *tools["flags"], "-std=c++17", *PINOCCHIO_DEFINES, *includes, source, "-o", folder / "pinocchio_harness"]
    run(command, "compiling pinocchio's C++ harness")
    return pmodels


def run_harnesses(folder, pmodels):
    """{(label, model or algorithm): fastest ns/call}; leaves result_<label>_<model>.bin in ``folder``."""
    times = {}
    for _ in range(RUNS):  # alternately, so that a busy moment of the machine hits both
        for name in ROBOTS:
            for key in ("q", "qd", "qdd", "tau"):  # the harnesses read q.bin ...: this robot's states
                target = folder / f"{key}.bin"
                target.unlink(missing_ok=True)
                target.symlink_to(folder / f"{key}_{name}.bin")
            runs = {name: [folder / f"kr_{name}", folder]}
            runs.update({label: [folder / "pinocchio_harness", label, folder] for label in pmodels if label.startswith(f"{name}_")})
            for label, command in runs.items():
                for key, ns in timings(run(command, f"running the harness {label}")).items():
                    times[label, key] = min(times.get((label, key), np.inf), ns)
                for model_name, algorithm, _ in MODELS:  # the same numbers in every run
                    prefix = f"kr_{name}_{model_name}" if label == name else f"pin_{label}_{algorithm}"
                    shutil.copyfile(folder / f"{prefix}.bin", folder / f"result_{label}_{model_name}.bin")
    return times


def compare(folder, robots, pmodels, times, N):
    """(table rows, list of disagreements) from the times and the results in ``folder``."""
    rows, failed = [], []
    for name, (robot, _, _) in robots.items():
        upper = np.triu(np.ones((robot.nj, robot.nj), dtype=bool)).ravel()
        for model_name, algorithm, _ in MODELS:
            row = {"robot": name, "model": model_name, "ours": times[name, model_name], "diff": np.nan}
            row["unaligned"] = times.get((f"{name}_unaligned", algorithm), np.nan)
            row["aligned"] = times.get((f"{name}_aligned", algorithm), np.nan)
            row["ratio"] = min(row["unaligned"], row["aligned"]) / row["ours"]
            if pmodels:
                ours = np.fromfile(folder / f"result_{name}_{model_name}.bin").reshape(N, -1)
                theirs = [np.fromfile(folder / f"result_{name}_{v}_{model_name}.bin").reshape(N, -1) for v in ("unaligned", "aligned")]
                if model_name == "mass_matrix":  # pinocchio's upper triangle against ours
                    ours, theirs = ours[:, upper], [r[:, upper] for r in theirs]
                row["diff"] = max(relative_difference(ours, theirs[0]), relative_difference(theirs[1], theirs[0]))
                if not row["diff"] < TOLERANCE:
                    failed.append(f"{name} {model_name}: {row['diff']:.1e}")
            rows.append(row)
    return rows, failed


def arguments(argv):
    parser = argparse.ArgumentParser(description="kanerobot's generated C against pinocchio's C++, per call.")
    parser.add_argument("N", nargs="?", type=int, default=1000, help="random states (default 1000)")
    parser.add_argument("--flags", default="", help="flags added to both compilations' (say '-march=x86-64-v3'; the default has no -march)")
    args = parser.parse_args(argv)
    return args.N, shlex.split(args.flags)


if __name__ == "__main__":
    sys.exit(main(*arguments(sys.argv[1:])))
