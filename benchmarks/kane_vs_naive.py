"""Kane's method kept small (kanerobot.dynamics.kane) against naive KanesMethod.

Baseline: :func:`kanerobot.dynamics.kane.naive_kanes_method` on the RX-90,
sympy.physics.mechanics used the textbook way on the same bodies and loads
(frames oriented link by link, ``v2pt_theory``, rigid bodies with XX..ZZ
about the frame origins, gravity, joint torques and their reactions,
friction, the wrench of link 6, ``KanesMethod.kanes_equations``).

Ours, in the same process, each from a fresh :class:`KaneSystem`:

1. RX-90: the system and its A, C, Q and inverse dynamics programs;
   target ratio ours / naive <= 0.3;
2. Krang (17-DOF tree): the system and its A, C, Q programs, against the
   same naive RX-90 time; target ratio <= 3.

Times are CPU times of this process (``time.process_time``), so that other
work on the machine weighs less; each is the best of ``--repeat`` runs (the
naive baseline too).  The operation counts of the generated programs are
printed, with Newton-Euler's (``kanerobot.dynamics.newton_euler``,
``composite``, ``coriolis``) for reference.

Run:  python benchmarks/kane_vs_naive.py [--repeat N]
"""

import argparse
import sys
import time

from sympy.core.cache import clear_cache

import kanerobot as kr
from kanerobot.dynamics import composite, coriolis, newton_euler
from kanerobot.dynamics.kane import KaneSystem, naive_kanes_method

RX90_TARGET = 0.3
KRANG_TARGET = 3.0


def timed(function, repeat):
    """(best CPU time, result of the last run); sympy's cache is cleared before each run."""
    best, result = None, None
    for _ in range(repeat):
        clear_cache()
        start = time.process_time()
        result = function()
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def fast(robot, models):
    system = KaneSystem(robot)
    return {name: system.program(name) for name in models}


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each measurement, best kept (default 2)")
    args = parser.parse_args(argv)
    rx90 = kr.load(kr.frames_path("rx90"))
    krang = kr.load(kr.frames_path("krang"))

    t_naive, naive = timed(lambda: naive_kanes_method(rx90), args.repeat)
    print(f"naive KanesMethod, RX-90 (mass matrix and forcing): {t_naive:8.2f} s", flush=True)

    rx90_models = ("mass_matrix", "coriolis_matrix", "gravity", "inverse_dynamics")
    t_rx90, rx90_programs = timed(lambda: fast(rx90, rx90_models), args.repeat)
    print(f"kane, RX-90 (system, A, C, Q, inverse dynamics):     {t_rx90:8.2f} s", flush=True)

    krang_models = ("mass_matrix", "coriolis_matrix", "gravity")
    t_krang, krang_programs = timed(lambda: fast(krang, krang_models), args.repeat)
    print(f"kane, Krang (system, A, C, Q):                        {t_krang:8.2f} s", flush=True)

    def reference(robot):
        A = composite.mass_matrix(robot)
        return {
            "mass_matrix": A,
            "coriolis_matrix": coriolis.coriolis_matrix(robot, A),
            "gravity": newton_euler.gravity_torques(robot),
            "inverse_dynamics": newton_euler.inverse_dynamics(robot),
        }

    print()
    print_counts("RX-90 generated programs:", rx90_programs, reference(rx90))
    print_counts("Krang generated programs:", krang_programs, reference(krang))
    print()
    r1, r2 = t_rx90 / t_naive, t_krang / t_naive
    ok1, ok2 = r1 <= RX90_TARGET, r2 <= KRANG_TARGET
    print(f"RX-90 kane / naive RX-90 = {r1:.3f} (target <= {RX90_TARGET}): {'met' if ok1 else 'NOT met'}")
    print(f"Krang kane / naive RX-90 = {r2:.3f} (target <= {KRANG_TARGET}): {'met' if ok2 else 'NOT met'}")
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
