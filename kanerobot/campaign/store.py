"""A campaign's table on disk: small Parquet files written as runs arrive.

The folder holds ``campaign.json`` (what the campaign is: robot, engine,
seed, time span, what is drawn, the controller) and ``part-<first
run>-<count>.parquet`` files of rows.  Each file is written whole to a
temporary name and renamed into place (:func:`kanerobot.robot.io.atomic_write`,
with an fsync), so a campaign stopped at any moment (Ctrl-C, a killed
process, a lost machine) leaves only complete files: a reader never sees
half a file, and a restarted campaign reads the runs done and runs only the
others (and the runs recorded as ``"lost"``, whose workers died).  Since run ``i`` depends only on ``(seed, i)``, a campaign may also
be extended: the same folder with more ``runs`` keeps the first ones.

A folder written by another campaign (different robot, seed, draws ...)
is refused rather than mixed.
"""

from __future__ import annotations

import json
from pathlib import Path

from kanerobot.errors import KaneRobotError
from kanerobot.robot.files import folder_problem

__all__ = ["Store"]

_RECORD = "campaign.json"


class Store:
    """The Parquet folder of a campaign.

    Parameters
    ----------
    path : str or path-like
        A folder, created with its parents if missing.
    description : dict
        What the campaign is (JSON-serialisable); must equal the one the
        folder was started with.
    """

    def __init__(self, path, description):
        from kanerobot.campaign.dependencies import require

        require("pyarrow", "writing a campaign's store")
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise KaneRobotError(f"store {path} is a file: give a folder (it is created if missing)")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KaneRobotError(f"cannot create the store folder {path}: {folder_problem(path, created=True) or exc.strerror}") from None
        record = self.path / _RECORD
        text = json.dumps(description, indent=1, sort_keys=True) + "\n"
        if record.is_file():
            try:
                before = json.loads(record.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise KaneRobotError(f"store {path}: {_RECORD} is not the record of a campaign ({exc}): give another folder") from None
            changed = sorted(k for k in set(before) | set(description) if before.get(k) != description.get(k))
            if changed:
                key = changed[0]
                raise KaneRobotError(
                    f"store {path} holds another campaign ({key}: {before.get(key)!r} there, {description.get(key)!r} now): "
                    "give another folder, or the same settings to resume it"
                )
        elif any(self.path.iterdir()):
            raise KaneRobotError(f"store {path} is a folder that holds other files: give an empty or new folder")
        else:
            from kanerobot.robot.io import atomic_write_text

            atomic_write_text(record, text)

    def parts(self):
        return sorted(self.path.glob("part-*.parquet"))

    def read(self):
        """The rows written so far, as a DataFrame (empty when none), one per run, sorted by run."""
        import pandas as pd

        frames = [pd.read_parquet(part) for part in self.parts()]
        frames = [frame for frame in frames if len(frame)]
        if not frames:
            return pd.DataFrame()
        frame = pd.concat(frames, ignore_index=True)
        # one row per run: a lost run run again later has two, the one that ran is kept
        frame = frame.sort_values("status", key=lambda status: status == "lost", kind="stable")
        return frame.drop_duplicates("run", keep="first").sort_values("run").reset_index(drop=True)

    def done(self):
        """The run indices already in the store (lost runs, whose workers died, are not done)."""
        frame = self.read()
        return set() if frame.empty else set(int(i) for i in frame.loc[frame["status"] != "lost", "run"])

    def write(self, frame):
        """Write ``frame`` (rows of new runs) as one more file, atomically."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from kanerobot.robot.io import atomic_write

        if frame.empty:
            return None
        first = int(frame["run"].min())
        name = f"part-{first:09d}-{len(frame)}.parquet"
        path = self.path / name
        k = 1
        while path.exists():  # the same first run again (a run redone after a failure to write)
            path = self.path / f"part-{first:09d}-{len(frame)}-{k}.parquet"
            k += 1
        table = pa.Table.from_pandas(frame, preserve_index=False)
        atomic_write(path, lambda handle: pq.write_table(table, handle))
        return path
