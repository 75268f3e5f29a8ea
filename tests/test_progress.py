"""Progress lines on standard error for derivations and compilations that last (kanerobot.progress)."""

import time

import pytest

import kanerobot as kr
from kanerobot import progress
from kanerobot.codegen.compiled import compile_program
from kanerobot.symbolic import Program


@pytest.fixture
def shown(monkeypatch):
    """Progress on, announced at once (DELAY 0): every step prints its two lines."""
    monkeypatch.setenv("KANEROBOT_PROGRESS", "1")
    monkeypatch.setattr(progress, "DELAY", 0.0)


def lines(capsys):
    return capsys.readouterr().err.strip().splitlines()


def test_a_quick_step_prints_nothing(monkeypatch, capsys):
    monkeypatch.setenv("KANEROBOT_PROGRESS", "1")
    with progress.slow_step("quick"):
        pass
    assert capsys.readouterr().err == ""


def test_a_long_step_is_announced_while_it_runs_then_timed(monkeypatch, capsys):
    monkeypatch.setenv("KANEROBOT_PROGRESS", "1")
    monkeypatch.setattr(progress, "DELAY", 0.05)
    seen = ""
    with progress.slow_step("waiting"):
        deadline = time.monotonic() + 30
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
            seen = capsys.readouterr().err
    assert seen == "kanerobot: waiting ...\n"  # from the timer, while the step still runs
    err = lines(capsys)
    assert len(err) == 1
    assert err[0].startswith("kanerobot: waiting: done in ") and err[0].endswith(" s")


def test_a_failed_step_says_so(shown, capsys):
    with pytest.raises(ValueError), progress.slow_step("failing"):
        raise ValueError("boom")
    err = lines(capsys)
    assert err[0] == "kanerobot: failing ..." and err[1].startswith("kanerobot: failing: failed after ")


@pytest.mark.parametrize("setting", ["0", "off", "No", "false"])
def test_the_environment_silences_it(setting, monkeypatch, capsys):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setenv("KANEROBOT_PROGRESS", setting)
    with progress.slow_step("silent"):
        pass
    assert capsys.readouterr().err == ""


def test_derivation_and_compilation_report_their_steps(shown, capsys, tmp_path):
    model = kr.derive(kr.load(kr.frames_path("planar2")))
    model.program("mass_matrix")
    model.program("mass_matrix")  # derived once: no second pair of lines
    err = lines(capsys)
    assert err == ["kanerobot: deriving mass_matrix of planar2 (newton-euler) ...", err[1]]
    assert err[1].startswith("kanerobot: deriving mass_matrix of planar2 (newton-euler): done in ")

    import sympy

    x = sympy.Symbol("x")
    program = Program(inputs=[x])
    program.set_output("y", 2 * x)
    try:
        compile_program(program, "progress_probe", [("x", [x])], cache=tmp_path)
    except kr.KaneRobotError as exc:  # no compiler: nothing to announce
        pytest.skip(f"no C compiler: {exc}")
    err = lines(capsys)
    assert err[0].startswith("kanerobot: compiling progress_probe (") and err[0].endswith(" lines of C) ...")
    assert "lines of C): done in " in err[1]
    compile_program(program, "progress_probe", [("x", [x])], cache=tmp_path)  # from the cache: no compiler run
    assert capsys.readouterr().err == ""
