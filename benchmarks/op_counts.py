"""Operation counts of the RX-90 dynamic models against OpenSYMORO's own.

Baseline: the equations of OpenSYMORO's RX90_idm.txt, RX90_inm.txt,
RX90_ccg.txt and RX90_ddm.txt (tests/data/opensymoro), counted with
the same rules as ours (kanerobot.symbolic.count_ops: a*b*c is 2 '*', a
subtraction is a '+', x**2 is one '*', each function call one 'fn').  Ratios
below 1 mean fewer operations than OpenSYMORO.  Note that RX90_idm.txt leaves
gravity out, while our inverse dynamic model includes G3.

Without the corpus the script prints our counts alone, one line saying where
the reference files are expected, and exits with status 2 (``needs``).

Run:  python benchmarks/op_counts.py
"""

import sys

import needs  # first: one line and exit status 2 when kanerobot is not installed

import kanerobot as kr
from kanerobot.robot.expressions import parse_expression
from kanerobot.symbolic import count_ops

REFERENCE = needs.OPENSYMORO
MODELS = [("idm", "inverse_dynamics"), ("inm", "mass_matrix"), ("ccg", "h"), ("ddm", "direct_dynamics")]
#: The issue's target for the inverse dynamic model (OpenSYMORO's RX90_idm.txt).
IDM_TARGET = {"mul": 378, "add": 329}


def opensymoro_count(path):
    """Sum of the operations of every ``name = expr`` line under ``Equations:``."""
    text = path.read_text().split("Equations:", 1)[1].split("*=*", 1)[0]
    total = {"add": 0, "mul": 0, "fn": 0}
    for line in text.strip().splitlines():
        _, expr = line.split("=", 1)
        counts = count_ops(parse_expression(expr))
        for key in total:
            total[key] += counts[key]
    return total


def check():
    """Lines naming the missing requirements (the OpenSYMORO files of :data:`REFERENCE`)."""
    return needs.missing(needs.opensymoro([f"RX90_{key}.txt" for key, _ in MODELS], REFERENCE))


def main():
    status = needs.announce(__file__, check())
    model = kr.derive(kr.load(kr.frames_path("rx90")))
    print(f"{'model':6s} {'ours mul/add/fn':>18s} {'OpenSYMORO mul/add/fn':>24s} {'ratio mul':>10s} {'ratio add':>10s}")
    for key, name in MODELS:
        ours = model.op_count(name)
        reference_file = REFERENCE / f"RX90_{key}.txt"
        if reference_file.is_file():
            theirs = opensymoro_count(reference_file)
            ratios = f"{ours['mul'] / theirs['mul']:10.2f} {ours['add'] / theirs['add']:10.2f}"
            baseline = f"{theirs['mul']}/{theirs['add']}/{theirs['fn']}"
        else:
            ratios, baseline = "", "(no reference file)"
        print(f"{key:6s} {ours['mul']:>8d}/{ours['add']}/{ours['fn']:<6d} {baseline:>24s} {ratios}")
    idm = model.op_count("inverse_dynamics")
    ok = idm["mul"] <= IDM_TARGET["mul"] and idm["add"] <= IDM_TARGET["add"]
    print(
        f"\nTarget for idm: at most {IDM_TARGET['mul']} '*' and {IDM_TARGET['add']} '+': "
        f"{idm['mul']} and {idm['add']} -> {'met' if ok else 'NOT met'}"
    )
    return status or (0 if ok else 1)


if __name__ == "__main__":
    sys.exit(main())
