"""Kane's method kept small (kanerobot.dynamics.kane) against naive KanesMethod.

Baseline: :func:`kanerobot.dynamics.kane.naive_kanes_method` on the RX-90,
sympy.physics.mechanics used the textbook way on the same bodies and loads
(frames oriented link by link, ``v2pt_theory``, rigid bodies with XX..ZZ
about the frame origins, gravity, joint torques and their reactions,
friction, the wrench of link 6, ``KanesMethod.kanes_equations``), then
KanesMethod's ``mass_matrix`` and ``forcing``.

Ours, in the same process, each from a fresh :class:`KaneSystem`:

1. like for like: the RX-90 system, i.e. ``KanesMethod.kanes_equations``
   on its bodies and loads and KanesMethod's ``mass_matrix`` and
   ``forcing`` -- what the baseline computes, and no more;
2. full: the RX-90 system and its A, C, Q and inverse dynamics programs,
   the ones the engine emits (KanesMethod is not built for them: the
   system builds it only when asked for, as in 1): Kane's equations
   summed from the leaves to the root (``kanerobot.dynamics.kane``,
   ``NestedKane``), C by forward-mode differentiation of h_vel, pruned;
3. Krang (17-DOF tree): the system and its A, C, Q programs.

Targets, each a ratio to the same naive RX-90 time: (1) and (2) at most 0.3,
(3) at most 3.

Times are CPU times of this process (``time.process_time``), so that other
work on the machine weighs less; each is the best of ``--repeat`` runs.  The
runs are interleaved (one of each measurement per round), and before every
run sympy's cache is cleared, the previous result dropped and the garbage
collector run, so that no measurement inherits another's objects.  The
operation counts of the generated programs are printed, with Newton-Euler's
(``kanerobot.dynamics.newton_euler``, ``composite``, ``coriolis``) for
reference.

Run:  python benchmarks/kane_vs_naive.py [--repeat N]
"""

import argparse
import gc
import sys
import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
from sympy.core.cache import clear_cache

import kanerobot as kr
from kanerobot.dynamics import composite, coriolis, newton_euler
from kanerobot.dynamics.kane import KaneSystem, naive_kanes_method

RX90_TARGET = 0.3
KRANG_TARGET = 3.0


def run_once(function):
    """(CPU time, result) of one run, from a cleared sympy cache and a collected heap."""
    clear_cache()
    gc.collect()
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def naive(robot):
    """What the baseline computes: Kane's equations, KanesMethod's mass matrix and forcing."""
    km = naive_kanes_method(robot).kanes_method
    return km.mass_matrix, km.forcing


def system(robot):
    """Like for like: KaneSystem forms Kane's equations and reads KanesMethod's mass matrix and forcing."""
    s = KaneSystem(robot)
    return s.mass_matrix_kane, s.forcing


def full(robot, models):
    s = KaneSystem(robot)
    return {name: s.program(name) for name in models}


def total(counts):
    return counts["add"] + counts["mul"] + counts["fn"]


def print_counts(title, programs, reference):
    print(title)
    for name, program in programs.items():
        ours = program.op_count()
        line = f"  {name:18s} kane {ours['mul']:6d} mul {ours['add']:6d} add {ours['fn']:4d} fn"
        if name in reference:
            ne = reference[name].op_count()
            line += f"   (newton-euler {ne['mul']:6d} mul {ne['add']:6d} add {ne['fn']:4d} fn)"
        print(line)


def verdict(ratio, target):
    return f"{ratio:.3f} (target <= {target}): {'met' if ratio <= target else 'NOT met'}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of measurements, best kept (default 3)")
    args = parser.parse_args(argv)
    rx90 = kr.load(kr.frames_path("rx90"))
    krang = kr.load(kr.frames_path("krang"))
    rx90_models = ("mass_matrix", "coriolis_matrix", "gravity", "inverse_dynamics")
    krang_models = ("mass_matrix", "coriolis_matrix", "gravity")
    measurements = {
        "naive": lambda: naive(rx90),
        "system": lambda: system(rx90),
        "full": lambda: full(rx90, rx90_models),
        "krang": lambda: full(krang, krang_models),
    }
    best, results = {}, {}
    for round_ in range(max(1, args.repeat)):
        times = {}
        for key, function in measurements.items():
            results[key] = None  # the previous run's objects are not kept alive during this one
            times[key], result = run_once(function)
            best[key] = min(best.get(key, times[key]), times[key])
            if key in ("full", "krang"):
                results[key] = result
            del result
        print(f"round {round_ + 1} (CPU s): " + ", ".join(f"{key} {t:.2f}" for key, t in times.items()), flush=True)

    print()
    print(f"naive KanesMethod, RX-90 (Kane's equations, mass matrix, forcing): {best['naive']:8.2f} s")
    print(f"kane, RX-90 system (Kane's equations, mass matrix, forcing):       {best['system']:8.2f} s")
    print(f"kane, RX-90 (system, A, C, Q, inverse dynamics programs):          {best['full']:8.2f} s")
    print(f"kane, Krang (system, A, C, Q programs):                            {best['krang']:8.2f} s")

    def reference(robot):
        A = composite.mass_matrix(robot)
        return {
            "mass_matrix": A,
            "coriolis_matrix": coriolis.coriolis_matrix(robot, A),
            "gravity": newton_euler.gravity_torques(robot),
            "inverse_dynamics": newton_euler.inverse_dynamics(robot),
        }

    print()
    print_counts("RX-90 generated programs:", results["full"], reference(rx90))
    print_counts("Krang generated programs:", results["krang"], reference(krang))
    print()
    r1, r2, r3 = (best[key] / best["naive"] for key in ("system", "full", "krang"))
    print(f"RX-90 like for like, kane system / naive RX-90 = {verdict(r1, RX90_TARGET)}")
    print(f"RX-90 full, kane with A, C, Q, ID / naive RX-90 = {verdict(r2, RX90_TARGET)}")
    print(f"Krang, kane with A, C, Q / naive RX-90          = {verdict(r3, KRANG_TARGET)}")
    return 0 if r1 <= RX90_TARGET and r2 <= RX90_TARGET and r3 <= KRANG_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
