"""No model of a robot in frames/ costs more operations than the recorded baseline.

The baseline (``benchmarks/op_counts_baseline.json``) holds the counts before
the floating base became a root joint (issue 14); a change that makes a
program longer fails here with the models named.  Newton-Euler (the default
engine) in the default run, Kane and Lagrange with ``-m slow``.  The same
table, with ratios, is ``python benchmarks/op_counts_every_robot.py``.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

import kanerobot as kr

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _table():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("op_counts_every_robot", BENCHMARKS / "op_counts_every_robot.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


TABLE = _table()
BASELINE = json.loads(TABLE.BASELINE.read_text())
CASES = [pytest.param(name, "newton-euler", id=f"{name}-newton-euler") for name in kr.robot_names()]
CASES += [pytest.param(name, engine, id=f"{name}-{engine}", marks=pytest.mark.slow)
          for name in kr.robot_names() for engine in ("kane", "lagrange")]


@pytest.mark.parametrize("name, engine", CASES)
@pytest.mark.long
def test_no_model_costs_more_than_its_baseline(name, engine):
    today = TABLE.counts([name], (engine,))
    assert today, f"{name} {engine}: no model counted"
    assert set(k for k in BASELINE if k.startswith(f"{name}/{engine}/")) <= set(today), "a model lost its program"
    _, worse = TABLE.compare(BASELINE, today)
    assert not worse, "more operations than the baseline: " + ", ".join(
        f"{key} {BASELINE[key]['mul']}/{BASELINE[key]['add']} -> {today[key]['mul']}/{today[key]['add']}" for key in worse
    )


def test_a_longer_program_is_reported():
    """The comparison names a model whose multiplications or additions rose."""
    baseline = {"r/e/h": {"mul": 10, "add": 10, "fn": 0}, "r/e/gravity": {"mul": 5, "add": 5, "fn": 0}}
    today = {"r/e/h": {"mul": 10, "add": 11, "fn": 0}, "r/e/gravity": {"mul": 4, "add": 5, "fn": 0}}
    lines, worse = TABLE.compare(baseline, today)
    assert worse == ["r/e/h"] and len(lines) == 2
