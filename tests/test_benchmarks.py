"""The benchmarks' requirement checks, in an environment that misses what they need.

A benchmark run in a clone without pinocchio (the `pin` package), without the
OpenSYMORO corpus (tests/data/opensymoro), or without kanerobot installed must
say in one line what is missing and how to get it, and exit with status 2
(``benchmarks/needs.py``), never stop on a raw traceback.  These tests run
the checks, not the benchmarks (op_counts.py excepted: it takes a second and
shows the partial results).
"""

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import CORPUS

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
#: Every benchmark script and what its check() reports when neither pinocchio nor the corpus is there.
REQUIREMENTS = {
    "op_counts.py": ["OpenSYMORO's reference files RX90_idm.txt, RX90_inm.txt, RX90_ccg.txt, RX90_ddm.txt are missing"],
    "simulate_vs_pinocchio.py": ["pinocchio (the `pin` package) is not installed, so every comparison with pinocchio's ABA is skipped"],
    "numeric_vs_pinocchio.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio's rnea and crba is skipped"],
    "one_state_vs_pinocchio.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio's rnea, crba and aba is skipped"],
    "kinematics_vs_pinocchio.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio's frame placements and frame Jacobians is skipped"],
    "derivatives_vs_pinocchio.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio's computeRNEADerivatives and computeABADerivatives is skipped"],
    "urdf_vs_pinocchio.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio on example-robot-data's URDFs is skipped"],
    "c_vs_pinocchio_cpp.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio's C++ rnea, crba and aba is skipped"],
    "scaling.py": ["pinocchio (the `pin` package) is not installed, so the check of Talos's programs against pinocchio's rnea, crba and aba is skipped"],
    "optimal_vs_pinocchio_casadi.py": ["pinocchio (the `pin` package) is not installed, so the comparison with pinocchio.casadi's rnea and aba is skipped"],
    "mjcf_writer_vs_mujoco.py": ["mujoco is not installed, so the comparison with MuJoCo is skipped"],
    # no requirement beyond kanerobot: their baselines are sympy's KanesMethod and kanerobot's own engines
    "derivation_vs_kane.py": None,
    "kane_vs_naive.py": None,
    "kane_vs_newton_euler.py": None,
    "identify_long_recording.py": None,  # NPZ files: kanerobot's own readers
    "identify_recordings.py": None,  # arm7 logs simulated by kanerobot.identification.synthetic, one NPZ file
    "numeric_engines.py": None,
    "friction_simulation.py": None,
    "excitation_gradient.py": None,
    "op_counts_every_robot.py": None,
    "program_snapshots.py": None,  # the URDF snapshots are skipped with a line when example-robot-data is missing
    # kr.campaign in-process against local processes; the cluster extra it needs is in the test extra
    # (without it: one line naming pip install 'kanerobot[cluster]', exit status 2)
    "campaign_processes.py": None,
    # MuJoCo (test extra): main() says in one line that it is missing and exits 2
    "mjcf_vs_mujoco.py": None,
    # sympy's own bicycle (KanesMethod + linearize) is the baseline: kanerobot's dependencies only
    "whipple_vs_sympy.py": None,
    # CasADi (test extra): main() says in one line that it is missing and exits 2
    "casadi_backend.py": None,
    # JAX (test extra): main() says in one line that it is missing and exits 2
    "jax_batch.py": None,
    # kr.campaign on JAX against local processes: pandas or JAX missing is one line and exit status 2 in main()
    "campaign_jax.py": None,
}


def load(name):
    """The module of ``benchmarks/name`` (imported, not run), with ``needs`` importable as the script sees it."""
    path = BENCHMARKS / name
    spec = importlib.util.spec_from_file_location(f"benchmark_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bare(monkeypatch, tmp_path):
    """No pinocchio (an import of it fails as if uninstalled) and an empty corpus folder."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.setitem(sys.modules, "pinocchio", None)
    monkeypatch.setitem(sys.modules, "mujoco", None)
    needs = load("needs.py")
    monkeypatch.setitem(sys.modules, "needs", needs)
    monkeypatch.setattr(needs, "OPENSYMORO", tmp_path / "opensymoro")
    return needs


def test_every_script_is_listed():
    """A new benchmark gets its line here."""
    scripts = {p.name for p in BENCHMARKS.glob("*.py")} - {"needs.py"}
    assert scripts == set(REQUIREMENTS)


@pytest.mark.parametrize("name", sorted(REQUIREMENTS))
def test_check_names_what_is_missing(bare, name):
    module = load(name)
    expected = REQUIREMENTS[name]
    if expected is None:
        assert not hasattr(module, "check") and "needs" in module.__dict__  # kanerobot's check only
        return
    if name == "op_counts.py":
        assert module.REFERENCE == bare.OPENSYMORO  # the folder the fixture emptied
    lines = module.check()
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected):
        assert line.startswith(start), line
        assert "\n" not in line
    if "pinocchio" in expected[0]:
        assert lines[0].endswith("pip install -e '.[bench]' (the bench extra) to get it")
    elif "mujoco" in expected[0]:
        assert lines[0].endswith("pip install -e '.[test]' (the test extra) to get it")
    else:
        assert f"({bare.OPENSYMORO} does not exist)" in lines[0]
        assert lines[0].endswith("the corpus ships with the repository in tests/data/opensymoro (git checkout -- tests/data/opensymoro restores it)")


def test_checks_pass_when_requirements_are_there(monkeypatch, tmp_path):
    """The same checks are silent when pinocchio imports and the corpus holds the files."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    stand_in = importlib.util.module_from_spec(importlib.util.spec_from_loader("pinocchio", loader=None))
    monkeypatch.setitem(sys.modules, "pinocchio", stand_in)  # find_spec sees a loaded module
    monkeypatch.setitem(sys.modules, "mujoco", importlib.util.module_from_spec(importlib.util.spec_from_loader("mujoco", loader=None)))
    needs = load("needs.py")
    monkeypatch.setitem(sys.modules, "needs", needs)
    for key in ("idm", "inm", "ccg", "ddm"):
        (tmp_path / f"RX90_{key}.txt").write_text("")
    monkeypatch.setattr(needs, "OPENSYMORO", tmp_path)
    monkeypatch.setenv("KANEROBOT_URDF_CORPUS", str(tmp_path))  # urdf_vs_pinocchio.py's URDFs (example-robot-data's otherwise)
    for name, expected in REQUIREMENTS.items():
        if expected is not None:
            assert load(name).check() == [], name


def test_benchmarks_read_the_tests_corpus():
    """needs.py's folder is the one the tests read, and the repository holds what op_counts.py needs there."""
    needs = load("needs.py")
    assert needs.OPENSYMORO == CORPUS
    assert needs.opensymoro([f"RX90_{key}.txt" for key in ("idm", "inm", "ccg", "ddm")]) is None


def test_missing_corpus_files_are_named(tmp_path):
    """Some of the files there, some not: the line names the missing ones and the folder."""
    needs = load("needs.py")
    (tmp_path / "RX90_idm.txt").write_text("")
    line = needs.opensymoro(["RX90_idm.txt", "RX90_ddm.txt"], tmp_path)
    assert line.startswith(f"OpenSYMORO's reference files RX90_ddm.txt are missing (not in {tmp_path})")


def test_op_counts_gives_partial_results_and_status_2(bare, capsys):
    """Without the corpus: our counts, the one line on standard error, exit status 2."""
    module = load("op_counts.py")
    assert module.main() == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("op_counts.py: missing requirement: OpenSYMORO's reference files")
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:5]}
    assert rows == {"idm": "349/306/16", "inm": "140/131/10", "ccg": "332/281/16", "ddm": "747/591/16"}
    assert out.count("(no reference file)") == 4 and "-> met" in out


def test_announce_prints_one_line_per_requirement_and_returns_2(bare, capsys):
    assert bare.announce("benchmarks/x.py", [None, "a", None, "b"]) == bare.MISSING == 2
    assert capsys.readouterr().err == "x.py: missing requirement: a\nx.py: missing requirement: b\n"
    assert bare.announce("benchmarks/x.py", [None]) == 0
    assert capsys.readouterr().err == ""


def test_without_kanerobot_a_script_exits_2_with_how_to_install(monkeypatch, capsys):
    """`python benchmarks/X.py` in a clone never installed: importing needs stops it with one line."""
    monkeypatch.setitem(sys.modules, "kanerobot", None)  # find_spec reports it missing
    monkeypatch.setattr(sys, "argv", ["benchmarks/op_counts.py"])
    with pytest.raises(SystemExit) as stop:
        load("needs.py")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("op_counts.py: missing requirement: kanerobot is not installed in this Python")
    assert err.rstrip().endswith("run 'pip install -e .' in the repository (or activate its .venv) first")
