"""kr.identify on recordings read chunk by chunk (kanerobot.identification.chunked):
the same estimates, standard deviations and weights as the in-memory path to
1e-10, whatever the chunk size (smaller than the filters' reach too), file
format or split into files; one clear error per mistake; memory bounded by
the chunk, not the recording.

The in-memory path is the reference, itself checked against the textbook
least squares (normal equations on an observation matrix built by the
unit-parameter rule, as tests/test_identify.py does); one test checks the
chunked path against that textbook solution directly.
"""

import dataclasses
import itertools
import sys
import tracemalloc

import numpy as np
import pytest
from conftest import library
from reference_dynamics import unit_regressor

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.identification.chunked import recording_files
from kanerobot.identification.data import DataError, RecordedData, save_data
from kanerobot.identification.excitation import FourierTrajectory
from kanerobot.identification.filtering import derivatives, lowpass_reach
from kanerobot.identification.identify import identify
from kanerobot.identification.numeric_regressor import Regressors

DT = 1e-3
GEOMETRY = "G1 = -9.81\n"


@pytest.fixture(scope="module")
def planar():
    """planar2 with gravity in its plane, random physical parameters, and its Regressors."""
    robot = dataclasses.replace(library("planar2"), base=kr.Base.from_values(G=["G1", 0, 0]))
    values = random_parameters(robot, np.random.default_rng(11), wrench=False)
    values["G1"] = -9.81
    model = kr.derive(robot)
    fn = model.numeric({k: values[k] for k in model.parameters})
    return robot, values, fn, Regressors(robot, values)


@pytest.fixture(scope="module")
def recording(planar):
    """6 s of a Fourier motion at 1 kHz, noisy positions and torques (joint 2 ten times quieter)."""
    robot, _values, fn, _regs = planar
    rng = np.random.default_rng(4)
    tr = FourierTrajectory([0.2, -0.3], rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), 0.25)
    t = np.arange(6000) * DT
    q, qd, qdd = tr.sample(t)
    tau = fn.inverse_dynamics(q, qd, qdd) + 0.02 * rng.normal(size=q.shape) * [1.0, 0.1]
    return RecordedData(t, q + 1e-4 * rng.normal(size=q.shape), tau, qd=qd + 1e-3 * rng.normal(size=q.shape), joints=robot.joint_labels)


def without_rates(data):
    return RecordedData(data.t, data.q, data.tau, joints=data.joints)


def assert_same(chunked, memory, rtol=1e-10):
    """Estimates, standard deviations, covariance, weights and fit of two results, to ``rtol``."""
    assert chunked.names == memory.names and chunked.rows == memory.rows
    np.testing.assert_allclose(chunked.values, memory.values, rtol=rtol, atol=0)
    np.testing.assert_allclose([chunked.std[n] for n in chunked.names], [memory.std[n] for n in memory.names], rtol=rtol, atol=0)
    np.testing.assert_allclose(chunked.covariance, memory.covariance, rtol=rtol, atol=rtol * np.abs(memory.covariance).max())
    np.testing.assert_allclose(chunked.weights, memory.weights, rtol=rtol, atol=0)
    assert chunked.sigma2 == pytest.approx(memory.sigma2, rel=rtol)
    assert chunked.condition_number == pytest.approx(memory.condition_number, rel=rtol)
    assert chunked.relative_residual == pytest.approx(memory.relative_residual, rel=rtol)


OPTIONS = [
    dict(),
    dict(cutoff=20.0),
    dict(decimation=5),
    dict(method="wls", cutoff=15.0, decimation=3),
]


@pytest.mark.parametrize("options", OPTIONS, ids=["ls", "cutoff", "decimation", "wls-cutoff-decimation"])
@pytest.mark.parametrize("chunk_size", [97, 1000, 2345])
def test_chunks_give_the_in_memory_estimates(planar, recording, options, chunk_size):
    _robot, _values, _fn, regs = planar
    data = without_rates(recording)
    if "cutoff" in options:  # 97 samples split the low-pass's reach: chunks overlap by more than they hold
        assert lowpass_reach(DT, options["cutoff"]) > 97
    memory = identify(regs, data, **options)
    chunked = identify(regs, data, chunk_size=chunk_size, **options)
    assert chunked.residual is None and len(memory.residual) == memory.rows
    assert_same(chunked, memory)


def test_measured_rates_are_used_in_chunks_as_in_memory(planar, recording):
    _robot, _values, _fn, regs = planar
    for method in ("ls", "wls"):
        assert_same(identify(regs, recording, method=method, chunk_size=333), identify(regs, recording, method=method))


def test_the_period_does_not_depend_on_where_the_chunks_fall(planar, recording):
    """Steps of 0.03 s rounded in t: the median of the first 1000 steps (0.03) is not that of all
    (0.030000000000001); the period is the mean step, from the ends, in both paths."""
    _robot, _values, _fn, regs = planar
    t = np.arange(len(recording)) * 0.03
    assert round(float(np.median(np.diff(t[:1000]))), 15) != round(float(np.median(np.diff(t))), 15)
    slow = RecordedData(t, recording.q, recording.tau, joints=recording.joints)
    assert_same(identify(regs, slow, chunk_size=1000), identify(regs, slow))


def test_chunks_give_the_textbook_least_squares(planar, recording):
    """Normal equations on the observation matrix of the unit-parameter rule (no shared code but the differences)."""
    robot, values, _fn, regs = planar
    data = without_rates(recording)
    result = identify(regs, data, chunk_size=700)
    q, qd, qdd = derivatives(data.q, DT)
    W = unit_regressor(robot, values, regs.parameters)(q, qd, qdd)[2:-2][:, :, result.columns]
    A, b = W.transpose(1, 0, 2).reshape(-1, len(result.names)), data.tau[2:-2].T.reshape(-1)
    x = np.linalg.solve(A.T @ A, A.T @ b)
    C = np.sum((b - A @ x) ** 2) / (len(b) - len(x)) * np.linalg.inv(A.T @ A)
    np.testing.assert_allclose(result.values, x, rtol=1e-8)
    np.testing.assert_allclose(result.covariance, C, rtol=1e-6, atol=1e-12 * np.abs(C).max())
    assert result.condition_number == pytest.approx(np.linalg.cond(A), rel=1e-9)
    assert result.relative_residual == pytest.approx(np.linalg.norm(b - A @ x) / np.linalg.norm(b), rel=1e-9)


def write(data, path, part):
    """Samples ``part`` of ``data`` to ``path`` (.csv, .npz or .parquet)."""
    piece = RecordedData(data.t[part], data.q[part], data.tau[part], joints=data.joints)
    if path.suffix != ".parquet":
        return save_data(piece, path)
    parquet = pytest.importorskip("pyarrow.parquet", reason="Parquet recordings need pyarrow: pip install pyarrow")
    columns = {"t": piece.t}
    for prefix in ("q", "tau"):
        columns.update({f"{prefix}_{label}": getattr(piece, prefix)[:, k] for k, label in enumerate(piece.joints)})
    import pyarrow

    parquet.write_table(pyarrow.table(columns), path)
    return path


def split(data, folder, suffixes, bounds=(0, 1700, 1702, 4000, 6000)):
    """``data`` cut at ``bounds`` into files of the given types, in a new folder (names sort in time order)."""
    folder.mkdir()
    for k, (a, b) in enumerate(itertools.pairwise(bounds)):
        write(data, folder / f"part{k:02d}{suffixes[k % len(suffixes)]}", slice(a, b))
    return folder


@pytest.mark.parametrize("suffixes", [[".csv"], [".npz"], [".parquet"], [".npz", ".csv", ".parquet"]], ids=["csv", "npz", "parquet", "mixed"])
def test_a_folder_of_files_gives_the_in_memory_estimates(planar, recording, tmp_path, suffixes):
    _robot, _values, _fn, regs = planar
    data = without_rates(recording)
    folder = split(data, tmp_path / "run", suffixes)  # a file of two samples, chunks across file ends
    memory = identify(regs, data, method="wls", cutoff=20.0)
    assert_same(identify(regs, folder, method="wls", cutoff=20.0, chunk_size=1000), memory)
    # the default chunk holds it all: one chunk, the same equations
    assert_same(identify(regs, sorted(folder.iterdir()), method="wls", cutoff=20.0), memory)


def test_one_large_file_read_in_chunks(planar, recording, tmp_path):
    _robot, _values, _fn, regs = planar
    data = without_rates(recording)
    memory = identify(regs, data, decimation=4)
    for suffix in (".csv", ".npz"):
        path = save_data(data, tmp_path / f"run{suffix}")
        assert_same(identify(regs, path, decimation=4, chunk_size=512), memory)


def test_the_folder_from_a_robot_and_values_as_in_memory(planar, recording, tmp_path):
    robot, values, _fn, _regs = planar
    data = without_rates(recording)
    folder = split(data, tmp_path / "run", [".npz"])
    geometry = {"L1": values["L1"], "G1": -9.81}
    assert_same(identify(robot, folder, values=geometry, physical=True), identify(robot, data, values=geometry, physical=True))


def test_the_command_line_identifies_a_folder_and_a_list_of_files(planar, recording, tmp_path, capsys):
    robot, values, _fn, regs = planar
    data = without_rates(recording)
    folder = split(data, tmp_path / "run", [".csv", ".npz"])
    robot_file = tmp_path / "planar_g.toml"
    kr.save(robot, robot_file)
    (tmp_path / "g.toml").write_text(f"L1 = {values['L1']!r}\n{GEOMETRY}")
    memory = identify(regs, data, method="wls")
    for arguments in ([str(folder)], [str(p) for p in sorted(folder.iterdir())]):
        out = tmp_path / "estimates.csv"
        assert main(["identify", str(robot_file), *arguments, "--values", str(tmp_path / "g.toml"), "--method", "wls",
                     "--chunk-size", "800", "-o", str(out)]) == 0  # fmt: skip
        assert f"{memory.rows} equations" in capsys.readouterr().out
        saved = {line.split(",")[0]: float(line.split(",")[1]) for line in out.read_text().splitlines()[1:]}
        for name in memory.names:
            assert saved[name] == pytest.approx(memory.estimates[name], rel=1e-10)


# ------------------------------------------------------------------ mistakes
def test_mistakes_in_the_files_get_one_clear_error_each(planar, recording, tmp_path):
    _robot, _values, _fn, regs = planar
    data = without_rates(recording)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=r"empty: no recording in this folder: put the recording's .csv, .npz, .parquet files there"):
        identify(regs, empty)
    with pytest.raises(DataError, match="nowhere: no such file or folder"):
        identify(regs, [tmp_path / "nowhere"])
    # different columns: the second file has its rates too
    folder = split(data, tmp_path / "columns", [".csv"], bounds=(0, 3000, 6000))
    save_data(RecordedData(data.t[3000:], data.q[3000:], data.tau[3000:], qd=data.q[3000:]), folder / "part01.csv")
    with pytest.raises(DataError, match=r"part01.csv:1: columns t, q_1, q_2, tau_1, tau_2, qd_1, qd_2 differ from those of .*part00.csv "
                                        r"\(t, q_1, q_2, tau_1, tau_2\): every file of a recording has the same columns"):  # fmt: skip
        identify(regs, folder)
    # a missing column
    folder = split(data, tmp_path / "missing", [".csv"], bounds=(0, 3000, 6000))
    text = (folder / "part01.csv").read_text().splitlines()
    (folder / "part01.csv").write_text("\n".join(",".join(line.split(",")[:-1]) for line in text) + "\n")
    with pytest.raises(DataError, match=r"part01.csv:1: tau_<joint> columns \(1\) do not match the q_<joint> columns \(1, 2\)"):
        identify(regs, folder)
    # a value that is not finite: its file and line
    folder = split(data, tmp_path / "nan", [".csv"], bounds=(0, 3000, 6000))
    text = (folder / "part01.csv").read_text().splitlines()
    cells = text[1234].split(",")
    cells[2] = "nan"
    text[1234] = ",".join(cells)
    (folder / "part01.csv").write_text("\n".join(text) + "\n")
    with pytest.raises(DataError, match=r"part01.csv:1235: q_2 is not finite \(nan\): remove or fill the sample"):
        identify(regs, folder, chunk_size=500)
    # the same in an NPZ file: its sample
    q = data.q[3000:].copy()
    q[77, 0] = np.inf
    folder = split(data, tmp_path / "inf", [".npz"], bounds=(0, 3000, 6000))
    save_data(RecordedData(data.t[3000:], np.where(np.isfinite(q), q, 0.0), data.tau[3000:]), folder / "part01.npz")
    np.savez(folder / "part01.npz", t=data.t[3000:], q=q, tau=data.tau[3000:])
    with pytest.raises(DataError, match=r"part01.npz: sample 77: q_1 is not finite \(inf\)"):
        identify(regs, folder)
    # an NPZ member cut short (a file still being written): the sample where it ends
    import io
    import zipfile

    folder = split(data, tmp_path / "short", [".npz"], bounds=(0, 3000, 6000))
    members = {}
    with zipfile.ZipFile(folder / "part01.npz") as archive:
        for name in archive.namelist():
            members[name] = archive.read(name)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(np.ascontiguousarray(data.q[3000:])))
    members["q.npy"] = header.getvalue() + np.ascontiguousarray(data.q[3000:4000]).tobytes()  # 1000 of its 3000 samples
    with zipfile.ZipFile(folder / "part01.npz", "w") as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)
    with pytest.raises(DataError, match=r"part01.npz: sample 1000: the file ends before its 3000 samples: write it whole"):
        identify(regs, folder, chunk_size=700)
    # a gap between two files
    folder = split(data, tmp_path / "gap", [".csv"], bounds=(0, 3000, 3010, 6000))
    (folder / "part01.csv").unlink()
    with pytest.raises(DataError, match=r"part02.csv:2: a step of 0.011 s from the end of .*part00.csv \(t = 2.999\) to this file "
                                        r"\(t = 3.01\), the period being 0.001 s: the files must continue one another without a gap"):  # fmt: skip
        identify(regs, folder)
    # files out of time order
    folder = split(data, tmp_path / "order", [".npz"], bounds=(0, 3000, 6000))
    (folder / "part00.npz").rename(folder / "part99.npz")
    with pytest.raises(DataError, match=r"part99.npz: sample 0: time does not increase from .*part01.npz"):
        identify(regs, folder)
    assert [p.name for p in recording_files(folder)] == ["part01.npz", "part99.npz"]


def test_parquet_without_pyarrow_says_what_to_install(planar, tmp_path, monkeypatch):
    _robot, _values, _fn, regs = planar
    (tmp_path / "run.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow then fails as when it is not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DataError, match=r"run.parquet: reading Parquet files needs pyarrow: pip install pyarrow$"):
        identify(regs, tmp_path / "run.parquet")


def test_mistakes_in_the_call_get_one_clear_error_each(planar, recording, tmp_path, capsys):
    _robot, _values, _fn, regs = planar
    folder = split(without_rates(recording), tmp_path / "run", [".npz"])
    with pytest.raises(KaneRobotError, match="form='energy' needs the whole recording in memory"):
        identify(regs, folder, form="energy")
    with pytest.raises(KaneRobotError, match="chunk size must be a positive whole number of samples, got 0"):
        identify(regs, folder, chunk_size=0)
    with pytest.raises(DataError, match="3 joint column"):
        identify(regs, {"t": [0.0, 1.0], "q": np.zeros((2, 3)), "tau": np.zeros((2, 3))}, chunk_size=10)
    assert main(["identify", "planar2", str(folder), str(tmp_path / "nowhere.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere.csv: no such file (the recording" in err and "Traceback" not in err


# ------------------------------------------------------------------ memory
def test_memory_is_bounded_by_the_chunk_not_the_recording(planar, tmp_path):
    """tracemalloc's peak while identifying 20 chunks' worth of files is about that of 1 chunk."""
    _robot, _values, fn, regs = planar
    size = 2000
    rng = np.random.default_rng(7)
    tr = FourierTrajectory([0.0, 0.0], rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), 0.5)
    peaks = {}
    for chunks in (1, 20):
        folder = tmp_path / f"chunks{chunks}"
        folder.mkdir()
        for k in range(chunks):
            t = (k * size + np.arange(size)) * DT
            q, qd, qdd = tr.sample(t)
            save_data(RecordedData(t, q, fn.inverse_dynamics(q, qd, qdd) + 0.01 * rng.normal(size=q.shape)), folder / f"part{k:03d}.npz")
        identify(regs, folder, cutoff=20.0, chunk_size=size)  # compiled models and caches before measuring
        tracemalloc.start()
        result = identify(regs, folder, cutoff=20.0, chunk_size=size)
        peaks[chunks] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert result.rows == 2 * (chunks * size - 2 * result.options["trim"])  # filtfilt's ends: 3 / cutoff seconds each
    # 20 times the samples: the whole recording's regressor alone would be 20 times one chunk's
    assert peaks[20] < 1.5 * peaks[1], peaks
