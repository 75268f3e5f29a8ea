"""Derivation time against operation count, from a 6-link chain to a floating humanoid.

For serial chains of 6, 12, 24 and 48 links, a tree (frames/krang.toml) and
the floating humanoid Talos (example-robot-data's ``talos_reduced.urdf``: 32
joints and a free flyer, mimic joints read as joints of their own, as
pinocchio reads them), the table gives, per engine and per set of models
asked for (the inverse dynamics; the inverse dynamics, the inertia matrix
and the direct dynamics; the Coriolis matrix):

- the DOF (nv: 6 for a floating base, then one per joint);
- the derivation time of a fresh ``kr.derive(robot, method)`` asked for those
  programs (sympy's cache cleared first, so that nothing of an earlier row is
  reused; the best of a few runs when a run takes under a second), in CPU
  seconds of this process (``time.process_time``: the derivation is single
  threaded, and the machine may be shared);
- the multiplications and additions of each program asked for
  (``model.op_count(name)``, as ``mul/add``) and their total;
- the derivation time per 1000 operations, so that growth faster than the
  operation count is visible down the column.

The chains are a generated Khalil-Kleinfinger table as a user's table would
be: revolute joints, alpha cycling through +pi/2, -pi/2 and 0, a symbolic
offset d and length r on every frame (``D2``, ``RL2`` ...) and SYMORO's
general symbolic inertial parameters on every link (``XX1 ... M1``, rotor
inertia and friction).  The Coriolis matrix (Christoffel form) is built on the
inertia matrix, so its time includes the inertia matrix's derivation; its
count is that of the Coriolis program alone (n^3 in the chain's length).
Kane's engine has no direct dynamic program (it is solved from A and H), so
its second set is the inverse dynamics, A and H.  With pinocchio installed,
Talos's three programs are checked against pinocchio's rnea, crba and aba at
random states (``urdf_vs_pinocchio.compare``).

Baseline: the issue's figures (issue 16, point 4) for the 48-link chain by
Newton-Euler, idm + A + ddm in 7.5 s and the Coriolis matrix in 42 s; the
targets are 2 s and a quarter of 42 s.  The script prints the ratio of each
time to the issue's figure and to its target.

Run:  python benchmarks/scaling.py [--links 6 12 24 48] [--kane-links 6 12 24] [--no-coriolis] [--no-talos]
"""

import argparse
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import sympy
import urdf_vs_pinocchio
from sympy.core.cache import clear_cache

import kanerobot as kr
from kanerobot.robot.description import Frame, KKPlacement, Robot

#: Sets of models asked for, by name in the table.
IDM = ("inverse_dynamics",)
IDM_A_DDM = ("inverse_dynamics", "mass_matrix", "direct_dynamics")
IDM_A_H = ("inverse_dynamics", "mass_matrix", "h")  # Kane's: its direct dynamics is solved from A and H
CORIOLIS = ("coriolis_matrix",)
SHORT = {"inverse_dynamics": "idm", "mass_matrix": "A", "direct_dynamics": "ddm", "h": "H", "coriolis_matrix": "C"}
#: The issue's figures for the 48-link chain by Newton-Euler (s) and the targets.
ISSUE = {IDM_A_DDM: 7.5, CORIOLIS: 42.0}
#: The multiplications the issue gives for its 48-link chain (in A; in C), which was not this one.
ISSUE_MUL = {IDM_A_DDM: ("mass_matrix", 10_500), CORIOLIS: ("coriolis_matrix", 311_000)}
TARGET = {IDM_A_DDM: 2.0, CORIOLIS: 42.0 / 4}
#: The floating humanoid of example-robot-data, under the corpus folder of urdf_vs_pinocchio.py.
TALOS = "talos_data/robots/talos_reduced.urdf"
#: Runs under this many seconds are repeated (best of :data:`REPEATS`).
CHEAP = 1.0
REPEATS = 3


def chain(n):
    """A serial chain of ``n`` revolute links, as a user's Khalil-Kleinfinger table would give it."""
    alphas = (sympy.pi / 2, -sympy.pi / 2, sympy.S.Zero)
    frames = []
    for j in range(1, n + 1):
        placement = KKPlacement(
            alpha=alphas[(j - 1) % 3] if j > 1 else sympy.S.Zero,
            d=sympy.Symbol(f"D{j}") if j > 1 else sympy.S.Zero,
            theta=sympy.Symbol(f"th{j}"),
            r=sympy.Symbol(f"RL{j}"),
        )
        frames.append(Frame(str(j), str(j - 1), 0, 1, placement))
    return Robot.create(f"chain{n}", frames)


def talos_path():
    """Talos's URDF in the corpus of urdf_vs_pinocchio.py (example-robot-data's), or None."""
    folder = urdf_vs_pinocchio.corpus_folder()
    path = folder / TALOS if folder is not None else None
    return path if path is not None and path.is_file() else None


def check():
    """Lines naming the missing requirements: pinocchio (Talos's check), then example-robot-data (Talos's rows).

    The same bench extra installs both: without pinocchio, that line says
    what to install; the Talos rows then say themselves whether they ran.
    """
    line = needs.pinocchio("the check of Talos's programs against pinocchio's rnea, crba and aba")
    if line is None and urdf_vs_pinocchio.corpus_folder() is None:
        line = (
            f"example-robot-data (Talos's URDF) is not installed, so the floating humanoid's rows are skipped: "
            f"{needs.BENCH_EXTRA} (the bench extra) to get it"
        )
    return needs.missing(line)


def derivation(robot, method, names):
    """``(seconds, model)`` of one fresh derivation of the programs ``names``."""
    clear_cache()  # sympy's: nothing an earlier derivation computed is reused
    start = time.process_time()
    model = kr.derive(robot, method)
    for name in names:
        model.program(name)
    return time.process_time() - start, model


def best(robot, method, names):
    """The best of a few fresh derivations when one is cheap, else the one."""
    elapsed, model = derivation(robot, method, names)
    if elapsed < CHEAP:
        for _ in range(REPEATS - 1):
            elapsed = min(elapsed, derivation(robot, method, names)[0])
    return elapsed, model


def row(label, robot, method, names):
    """Print one line of the table; return the derivation time and the model."""
    elapsed, model = best(robot, method, names)
    counts = [model.op_count(name) for name in names]
    detail = " ".join(f"{SHORT[name]} {c['mul']}/{c['add']}" for name, c in zip(names, counts))
    total = sum(c["mul"] + c["add"] for c in counts)
    asked = "+".join(SHORT[name] for name in names)
    print(
        f"{label:12s} {method:13s} {model.nv:4d} {asked:10s} {elapsed:9.2f} {total:9d} {1000 * elapsed / total:10.4f}   {detail}",
        flush=True,
    )
    return elapsed, model


def talos_rows():
    """Talos's rows (floating base, Newton-Euler), then its check against pinocchio; the exit status."""
    path = talos_path()
    if path is None:
        print(f"talos: no {TALOS} in the URDF corpus (example-robot-data's, or ${urdf_vs_pinocchio.FOLDER_VARIABLE}): rows skipped")
        return needs.MISSING
    talos = kr.load(path, floating=True, mimic="independent")
    for names in (IDM, IDM_A_DDM):
        row("talos", talos, "newton-euler", names)
    if not needs.installed("pinocchio"):
        return needs.MISSING
    result = urdf_vs_pinocchio.compare(path, floating=True, states=2)
    agree = result["error"] < 1e-9
    print(f"talos: idm, A and ddm against pinocchio's rnea, crba and aba at 2 random states: worst relative error {result['error']:.1e}"
          f" ({'agree' if agree else 'DISAGREE'})")  # fmt: skip
    return 0 if agree else 1


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, nargs="*", default=[6, 12, 24, 48], help="chains by Newton-Euler")
    parser.add_argument("--kane-links", type=int, nargs="*", default=[6, 12, 24], help="chains by Kane's engine")
    parser.add_argument("--no-coriolis", action="store_true", help="skip the Coriolis matrices")
    parser.add_argument("--no-talos", action="store_true", help="skip the floating humanoid")
    return parser.parse_args(argv)


def main(argv=None):
    options = arguments(argv)
    status = needs.announce(__file__, check())
    print(f"{'robot':12s} {'engine':13s} {'DOF':>4s} {'asked':10s} {'time s':>9s} {'ops':>9s} {'ms/1000op':>10s}   mul/add of each")
    sets = (IDM, IDM_A_DDM) + (() if options.no_coriolis else (CORIOLIS,))
    measured = {}
    for n in options.links:
        robot = chain(n)
        for names in sets:
            measured[n, names] = row(f"chain {n}", robot, "newton-euler", names)
    for n in options.kane_links:
        robot = chain(n)
        for names in (IDM, IDM_A_H):
            row(f"chain {n}", robot, "kane", names)
    krang = kr.load(kr.frames_path("krang"))
    for names in sets:
        row("krang", krang, "newton-euler", names)
    if not options.no_talos:
        status = max(status, talos_rows())
    for names, target in TARGET.items():
        if (48, names) in measured:
            elapsed, model = measured[48, names]
            asked = "+".join(SHORT[name] for name in names)
            met = elapsed <= target
            counted, issue_mul = ISSUE_MUL[names]
            print(
                f"chain 48 {asked}: {elapsed:.2f} s, {elapsed / ISSUE[names]:.2f} of the issue's {ISSUE[names]:.1f} s, "
                f"{elapsed / target:.2f} of the target {target:.1f} s: {'met' if met else 'NOT met'} "
                f"(the issue's chain had {issue_mul} multiplications in {SHORT[counted]}, this one {model.op_count(counted)['mul']})"
            )  # a ratio to read, not a failure: the exit status is for missing requirements and disagreements
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
