"""The figures of a simulation and of a cross-validation, made to be read.

:func:`plot_simulation` (``SimulationResult.plot``) and
:func:`plot_cross_validation` (``CrossValidation.plot``) write PNG files.
A robot with many joints is drawn as small multiples: one panel per chain
of the tree (:func:`joint_groups`: a serial robot is one chain; Krang is
its base-waist-torso chain and each arm), and within a chain one panel per
unit, so that every axis says its unit (rad or m for positions, rad/s or
m/s for rates, N·m or N for torques, by joint type; a floating base's
position, orientation and speeds apart).  Every panel has a legend and
distinct colours, and the values the run used (the parameters, the
controller and its gains when known) are written beside the figure.

Figures are built on matplotlib's Agg canvas without pyplot (no global
state, no window) and written through a temporary file renamed once
complete.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kanerobot.errors import FileError, KaneRobotError
from kanerobot.robot.files import folder_problem
from kanerobot.robot.joints import Prismatic
from kanerobot.robot.names import natural_key

__all__ = [
    "FORMATS",
    "Series",
    "cross_validation_figures",
    "cross_validation_panels",
    "figure_canvas",
    "figure_grid",
    "joint_groups",
    "panels",
    "plot_cross_validation",
    "plot_energy",
    "plot_simulation",
    "require_matplotlib",
    "save",
    "series",
    "simulation_figures",
    "values_lines",
]

#: Base coordinates of a floating robot's q and qd, and what they are.
BASE_QUANTITIES = {
    **dict.fromkeys(("x", "y", "z"), "base position"),
    **dict.fromkeys(("qx", "qy", "qz", "qw"), "base orientation"),
    **dict.fromkeys(("vx", "vy", "vz"), "base velocity"),
    **dict.fromkeys(("wx", "wy", "wz"), "base angular velocity"),
}
BASE_UNITS = {"base position": "m", "base orientation": "quaternion, no unit", "base velocity": "m/s", "base angular velocity": "rad/s"}
#: Units of a joint's position, rate and generalised force, by joint kind.
UNITS = {
    "q": {"revolute": "rad", "prismatic": "m"},
    "qd": {"revolute": "rad/s", "prismatic": "m/s"},
    "qdd": {"revolute": "rad/s²", "prismatic": "m/s²"},
    "tau": {"revolute": "N·m", "prismatic": "N"},
}
#: Font size (points) of the values written beside a figure.
VALUES_FONT = 6.5


def require_matplotlib(what):
    """A KaneRobotError saying how to install matplotlib, unless it is installed.

    Parameters
    ----------
    what : str
        What needs it, for the message ("plotting a simulation").
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise KaneRobotError(
            f"{what} needs matplotlib, which is not installed: pip install 'kanerobot[plot]' (or pip install "
            f"matplotlib), or leave the plots out (plot=None); the numbers need no plotting"
        ) from None


def figure_canvas(width, height):
    """A matplotlib Figure of ``width`` x ``height`` inches on the Agg canvas (no pyplot, no global state), constrained layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def figure_grid(rows, cols=1, height=2.2, width=8.0):
    """A figure and its ``rows`` x ``cols`` axes sharing x (a 1-d array of axes for one column)."""
    figure = figure_canvas(width, max(3.0, height * rows))
    axes = figure.subplots(rows, cols, sharex=True, squeeze=False)
    return figure, axes[:, 0] if cols == 1 else axes


#: File suffixes a figure can be written as (matplotlib's Agg, SVG and PDF backends).
FORMATS = (".png", ".svg", ".pdf")


def save(figure, path, dpi=100):
    """Write ``figure`` to ``path`` (.png, .svg or .pdf) through a temporary file and a rename.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    KaneRobotError
        Another suffix; a folder that does not exist or cannot be written.
    """
    from kanerobot.robot.io import atomic_write

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise KaneRobotError(f"cannot write a figure as {path.name!r}: use a {', '.join(FORMATS)} file")
    atomic_write(path, lambda handle: figure.savefig(handle, format=suffix[1:], dpi=dpi))
    return path


# ----------------------------------------------------------------- grouping
def joint_groups(robot, labels=None):
    """The joints of ``robot`` in chains: one per branch of the tree, from the root.

    A joint continues the chain of the nearest joint above it when that
    joint has no other joint below it; otherwise (a branching point, or
    several roots on the base) it starts a chain.  Chains of a single joint
    without children hanging from one point (the wheels on a chassis) are
    merged into one group.

    Parameters
    ----------
    robot : Robot
    labels : sequence of str, optional
        Keep only these joints (the columns a figure shows); default all.

    Returns
    -------
    list of (str, list of str)
        ``(title, joint labels)`` in the robot's joint order; the title
        names the joints (``"joints 4l-10l"``).

    Examples
    --------
    >>> import kanerobot as kr
    >>> [title for title, _ in joint_groups(kr.load(kr.frames_path("krang")))]
    ['joints 1-3', 'joints 4l-10l', 'joints 4r-10r']
    >>> joint_groups(kr.load(kr.frames_path("diffdrive")))
    [('joints x-th', ['x', 'y', 'th']), ('joints wr, wl', ['wr', 'wl']), ('joints cs, cw', ['cs', 'cw'])]
    >>> joint_groups(kr.load(kr.frames_path("rx90")))
    [('joints 1-6', ['1', '2', '3', '4', '5', '6'])]
    """
    joints = list(robot.joint_labels)
    parent = {label: _joint_above(robot, label) for label in joints}
    below = {label: [j for j in joints if parent[j] == label] for label in [None, *joints]}
    chain_of: dict[str, int] = {}  # joint -> its chain in chains
    chains: list[tuple[str | None, list[str]]] = []  # (the joint above, the chain's joints)
    for label in joints:
        above = parent[label]
        if above is not None and len(below[above]) == 1:
            chain_of[label] = chain_of[above]
            chains[chain_of[label]][1].append(label)
        else:
            chain_of[label] = len(chains)
            chains.append((above, [label]))
    merged: list[tuple[tuple, list[str]]] = []
    for above, chain in chains:  # lone leaves on one point (wheels) make one group
        lone = len(chain) == 1 and not below[chain[0]]
        if lone and merged and merged[-1][0] == ("lone", above):
            merged[-1][1].extend(chain)
        else:
            merged.append((("lone", above) if lone else ("chain", len(merged)), list(chain)))
    keep = set(joints if labels is None else labels)
    out = []
    for _, chain in merged:
        chain = [label for label in chain if label in keep]
        if chain:
            out.append((_group_title(chain), chain))
    return out


def _joint_above(robot, label):
    """The nearest joint above frame ``label`` (through fixed frames), or None at the base."""
    frame = robot.antecedent(label)
    while frame != "0":
        if robot.frame(frame).is_joint:
            return frame
        frame = robot.antecedent(frame)
    return None


def _group_title(chain):
    if len(chain) == 1:
        return f"joint {chain[0]}"
    if len(chain) == 2:
        return f"joints {chain[0]}, {chain[1]}"
    return f"joints {chain[0]}-{chain[-1]}"


@dataclass(frozen=True)
class Series:
    """One column of an array of a run, as a figure shows it.

    Attributes
    ----------
    column : int
        The column of ``q``, ``qd`` or ``tau``.
    name : str
        The legend's name: the joint variable (``th1``) for a joint's
        position, rate and torque alike; ``qr1 (motor)`` for a flexible
        joint's motor; ``x`` ... ``wz`` of a floating base.
    joint : str or None
        The joint label, None for a floating base's coordinate.
    group : str
        The panel's group: :func:`joint_groups`' title, or the base quantity.
    unit : str
    """

    column: int
    name: str
    joint: str | None
    group: str
    unit: str


def _name_table(robot):
    """``{name: (joint label, motor?)}`` of every way a column names a joint: its label,
    variable, QP/QDP/GAM symbols, and for a flexible joint's motor ``qr<j>``, ``r<j>``, ``QPr<j>``."""
    table = {}
    for label in robot.joint_labels:
        names = [label, str(robot.frame(label).q)]
        names += [str(robot.joint_parameters[label][key]) for key in ("QP", "QDP", "GAM")]
        table.update(dict.fromkeys(names, (label, False)))
        table.update(dict.fromkeys((f"qr{label}", f"r{label}", f"QPr{label}", f"QDPr{label}"), (label, True)))
        stem = robot.stems[label]  # the motor's symbols are named after the stem: qr<stem>
        table.update(dict.fromkeys((f"qr{stem}", f"QPr{stem}", f"QDPr{stem}"), (label, True)))
    return table


def series(robot, names, quantity, aliases=None):
    """The :class:`Series` of the columns ``names`` of a run's ``quantity``, grouped for panels.

    Parameters
    ----------
    robot : Robot
    names : sequence of str
        The columns' names (``result.coordinates``, ``state_space.qd_names``,
        ``state_space.torques``, controlled coordinates).
    quantity : {"q", "qd", "qdd", "tau"}
        Picks the units.
    aliases : dict, optional
        ``state_space.aliases``: more names of columns (a flexible joint's label for its link side).

    Returns
    -------
    list of Series
        In column order.

    Examples
    --------
    >>> import kanerobot as kr
    >>> stanford = kr.load(kr.frames_path("stanford"))
    >>> [(s.name, s.unit) for s in series(stanford, stanford.joint_labels, "q")][:4]
    [('th1', 'rad'), ('th2', 'rad'), ('r3', 'm'), ('th4', 'rad')]
    >>> [(s.name, s.unit) for s in series(stanford, ["GAM2", "GAM3"], "tau")]
    [('th2', 'N·m'), ('r3', 'N')]
    """
    table = _name_table(robot)
    by_column: dict[int, tuple[str, bool]] = {}  # column -> (joint label, motor?)
    for alias, column in (aliases or {}).items():
        if alias in table:
            by_column.setdefault(column, table[alias])
    groups = {label: title for title, chain in joint_groups(robot) for label in chain}
    out = []
    for column, name in enumerate(names):
        joint, motor = table.get(name) or by_column.get(column) or (None, False)
        if joint is None:
            base = BASE_QUANTITIES.get(name)
            if base is None:
                raise KaneRobotError(f"cannot tell which joint column {name!r} of {quantity} belongs to (robot {robot.name})")
            out.append(Series(column, name, None, base, BASE_UNITS[base]))
            continue
        kind = "prismatic" if isinstance(robot.frame(joint).joint, Prismatic) else "revolute"
        # the joint variable names a joint in every figure (q, qd, tau alike: one colour, one name)
        legend = f"qr{joint} (motor)" if motor else str(robot.frame(joint).q)
        out.append(Series(column, legend, joint, groups[joint], UNITS[quantity][kind]))
    return out


def panels(items):
    """``[(title, unit, [Series])]``: the series by group, then by unit, in order of appearance."""
    out: dict[tuple[str, str], list[Series]] = {}
    for item in items:
        out.setdefault((item.group, item.unit), []).append(item)
    return [(group, unit, chosen) for (group, unit), chosen in out.items()]


def _colours(n):
    """``n`` distinct colours: tab10 up to 10, tab20 up to 20, then a continuous map."""
    from matplotlib import colormaps

    if n <= 10:
        return [colormaps["tab10"](k) for k in range(n)]
    if n <= 20:
        return [colormaps["tab20"](k) for k in range(n)]
    return [colormaps["viridis"](k / (n - 1)) for k in range(n)]


def _draw_panels(figure, cell, t, array, chosen, symbol, styles=None):
    """One axes per panel in the grid cell ``cell``, stacked, sharing x; returns the axes."""
    grid = cell.subgridspec(len(chosen), 1)
    axes: list[Any] = []  # matplotlib's (an optional dependency)
    for row, (group, unit, items) in enumerate(chosen):
        ax = figure.add_subplot(grid[row, 0], sharex=axes[0] if axes else None)
        for item, colour in zip(items, _colours(len(items))):
            for array_k, style in zip(array if isinstance(array, tuple) else (array,), styles or ({},)):
                ax.plot(t, array_k[:, item.column], **{"color": colour, "lw": 1, "label": None if style else item.name, **style})
        ax.set_ylabel(f"{symbol} [{unit}]")
        ax.set_title(group, fontsize="small", loc="left")
        ax.legend(loc="best", fontsize="x-small", ncol=2 if len(items) > 4 else 1)
        ax.grid(True, lw=0.3)
        axes.append(ax)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel("t [s]")
    return axes


# --------------------------------------------------------------- the values
def _number(value):
    return f"{float(value):.6g}"


def _gain_text(name, gain):
    gain = np.asarray(gain, dtype=float)
    if gain.ndim == 2 and np.allclose(gain, np.diag(np.diag(gain))):
        diagonal = np.diag(gain)
        if np.allclose(diagonal, diagonal[0]):
            return f"{name} = {_number(diagonal[0])} I"
        return f"{name} = diag({', '.join(_number(v) for v in diagonal)})"
    if gain.ndim == 0:
        return f"{name} = {_number(gain)}"
    return f"{name}: a full {gain.shape[0]}x{gain.shape[1]} matrix"


def values_lines(result, controller=None, controller_name=None):
    """The lines written beside a figure: the run, the controller and its gains, every parameter value.

    Parameters
    ----------
    result : SimulationResult
    controller : object, optional
        The controller; its ``kp`` and ``kd`` are written when it has them.
    controller_name : str, optional

    Returns
    -------
    list of str
    """
    lines = [f"{result.name} ({result.kind})", f"solver {result.method}, {len(result.t)} samples"]
    if controller_name or controller is not None:
        lines.append(f"controller {controller_name or type(controller).__name__}")
        for gain in ("kp", "kd"):
            if getattr(controller, gain, None) is not None:
                lines.append("  " + _gain_text(gain, getattr(controller, gain)))
    values = {str(k): v for k, v in (result.numeric.state_space.values or {}).items()}
    robot = _robot(result)
    geometric = set(robot.geometric_parameters)
    gravity = {str(g) for g in robot.base.G}

    def order(name):  # the geometry first, then gravity, then the dynamic parameters in natural order
        rank = 0 if name in geometric else 1 if name in gravity else 2
        return rank, natural_key(name)

    lines.append(f"parameters ({len(values)})")
    lines += [f"  {name} = {_number(values[name])}" for name in sorted(values, key=order)]
    return lines


#: The most columns of values beside a figure: more values make the figure taller.
VALUES_COLUMNS = 3


def _line_height():
    """Inches per line of the values' text."""
    return VALUES_FONT * 1.3 / 72


def _values_columns(lines, height):
    """``lines`` cut into columns that fit a figure ``height`` inches tall."""
    per_column = max(10, int(height * 0.92 / _line_height()), -(-len(lines) // VALUES_COLUMNS))
    return [lines[k : k + per_column] for k in range(0, len(lines), per_column)]


def _layout(panel_columns, lines, rows, row_height=2.1, panel_width=5.0):
    """A figure with ``panel_columns`` columns of panels and the values beside; returns (figure, cells).

    The figure is tall enough for the values to fit in :data:`VALUES_COLUMNS` columns.
    """
    height = max(3.5, row_height * rows, len(lines) / VALUES_COLUMNS * _line_height() / 0.92)
    columns = _values_columns(lines, height)
    # a monospace character is about 0.6 of the font size wide
    widths = [max(map(len, column)) * 0.62 * VALUES_FONT / 72 + 0.15 for column in columns]
    text_width = sum(widths)
    figure = figure_canvas(panel_width * panel_columns + text_width, height)
    grid = figure.add_gridspec(1, panel_columns + 1, width_ratios=[panel_width] * panel_columns + [text_width])
    side = figure.add_subplot(grid[0, panel_columns])
    side.axis("off")
    left = 0.0
    for column, width in zip(columns, widths):
        side.text(left / text_width, 1.0, "\n".join(column), va="top", ha="left", family="monospace", fontsize=VALUES_FONT,
                  transform=side.transAxes)
        left += width
    return figure, [grid[0, k] for k in range(panel_columns)]


# -------------------------------------------------------------- simulation
def _robot(result):
    return result.numeric.model.robot


def plot_energy(ax_energy, ax_drift, result):
    """The energies ``E = T + U``, ``T``, ``U`` (and ``E(0) + work`` under torques) and the drift ``E - E(0) - work``."""
    ax_energy.plot(result.t, result.energy, label="E = T + U")
    ax_energy.plot(result.t, result.kinetic, label="T", lw=0.8)
    ax_energy.plot(result.t, result.potential, label="U", lw=0.8)
    if np.any(result.work != 0):
        ax_energy.plot(result.t, result.energy[0] + result.work, "--", label="E(0) + work", lw=0.8)
    ax_energy.set_ylabel("energy [J]")
    ax_energy.legend(loc="best", fontsize="small")
    ax_drift.plot(result.t, result.energy_drift, color="C3", label="E - E(0) - work")
    ax_drift.set_ylabel("E - E(0) - work [J]")
    ax_drift.set_xlabel("t [s]")
    ax_drift.legend(loc="best", fontsize="small")
    ax_drift.set_title(f"energy drift (relative {result.relative_energy_drift:.2e})", fontsize="small")


def simulation_figures(result, controller=None):
    """The figures of a simulation, unwritten: ``{"motion", "torques", "energy"}`` -> Figure.

    See :func:`plot_simulation`, which writes them.
    """
    require_matplotlib("plotting a simulation")
    robot, space = _robot(result), result.numeric.state_space
    lines = values_lines(result, controller)
    q_panels = panels(series(robot, result.coordinates, "q", space.aliases))
    qd_panels = panels(series(robot, space.qd_names, "qd", space.aliases))
    tau_panels = panels(series(robot, space.torques, "tau"))
    figures = {}
    figure, cells = _layout(2, lines, max(len(q_panels), len(qd_panels)))
    _draw_panels(figure, cells[0], result.t, result.q, q_panels, "q")
    _draw_panels(figure, cells[1], result.t, result.qd, qd_panels, "qd")
    figure.suptitle(f"{result.name}: motion ({result.kind}, {result.method})")
    figures["motion"] = figure
    figure, cells = _layout(1, lines, len(tau_panels))
    _draw_panels(figure, cells[0], result.t, result.tau, tau_panels, "tau")
    figure.suptitle(f"{result.name}: torques")
    figures["torques"] = figure
    figures["energy"] = _energy_figure(result, lines, f"{result.name}: energy")
    return figures


def _energy_figure(result, lines, title):
    figure, cells = _layout(1, lines, 2)
    grid = cells[0].subgridspec(2, 1)
    ax_e = figure.add_subplot(grid[0, 0])
    plot_energy(ax_e, figure.add_subplot(grid[1, 0], sharex=ax_e), result)
    figure.suptitle(title)
    return figure


def _write(figures, folder, prefix):
    """Save ``{name: figure}`` as ``<prefix>_<name>.png`` in ``folder`` (created); the paths in order."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileError(folder, None, folder_problem(folder, created=True) or f"cannot create the folder: {exc.strerror}") from None
    return [save(figure, folder / f"{prefix}_{name}.png") for name, figure in figures.items()]


def plot_simulation(result, folder, prefix="simulation", controller=None):
    """Write the figures of a :class:`~kanerobot.simulation.SimulationResult` as PNG files in ``folder``.

    ``<prefix>_motion.png`` (q and qd, a panel per chain and unit),
    ``<prefix>_torques.png`` and ``<prefix>_energy.png`` (energies and
    drift), each with the values of the run beside.

    Parameters
    ----------
    result : SimulationResult
    folder : str or path-like
        Created with its parents.
    prefix : str, optional
    controller : object, optional
        The controller of the run, whose gains are written beside.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    KaneRobotError
        When matplotlib is not installed (``pip install 'kanerobot[plot]'``).
    """
    require_matplotlib("plotting a simulation")
    return _write(simulation_figures(result, controller), folder, prefix)


# --------------------------------------------------------- cross-validation
def plot_cross_validation(cv, folder, prefix="cross_validation"):
    """Write the figures of a :class:`~kanerobot.simulation.CrossValidation` in ``folder`` (PNG).

    ``<prefix>_tracking.png`` (the controlled coordinates, solid, and their
    desired values, dashed; the tracking error), ``<prefix>_torques.png``,
    ``<prefix>_energy.png`` (of the plant) and ``<prefix>_disagreement.png``
    (where the controller's model and the plant differ); a panel per chain
    and unit, the values of the plant and the controller's gains beside.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    KaneRobotError
        When matplotlib is not installed.
    """
    require_matplotlib("plotting a cross-validation")
    return _write(cross_validation_figures(cv), folder, prefix)


def cross_validation_figures(cv):
    """The figures of a cross-validation, unwritten: ``{"tracking", "torques", "energy", "disagreement"}`` -> Figure.

    See :func:`plot_cross_validation`, which writes them.
    """
    require_matplotlib("plotting a cross-validation")
    sim = cv.simulation
    lines = values_lines(sim, getattr(cv, "controller", None), cv.controller_name)
    lines[0] = f"plant: {lines[0]}"
    lines.insert(0, f"controller's model: {cv.controller_robot} ({cv.controller_kind})")
    chosen, tau_panels = cross_validation_panels(cv.controller_model, cv.coordinates, sim.numeric)
    figures = {}
    figure, cells = _layout(2, lines, len(chosen))
    _draw_panels(figure, cells[0], cv.t, (cv.actual, cv.desired), chosen, "q, q_d (dashed)", ({}, {"ls": "--", "lw": 0.8}))
    _draw_panels(figure, cells[1], cv.t, cv.tracking_error, chosen, "q_d - q")
    figure.suptitle(f"{cv.controller_name} on {cv.controller_robot}, plant {cv.plant_robot}: "
                    f"max error {np.abs(cv.tracking_error).max(initial=0):.3g}", fontsize="medium")
    figures["tracking"] = figure
    figure, cells = _layout(1, lines, len(tau_panels))
    _draw_panels(figure, cells[0], cv.t, cv.tau, tau_panels, "tau")
    figure.suptitle("torques")
    figures["torques"] = figure
    figures["energy"] = _energy_figure(sim, lines, f"energy of the plant {cv.plant_robot}")
    figure, cells = _layout(1, lines, 2, row_height=2.6, panel_width=7.0)
    _disagreement(figure, cells[0], cv)
    figure.suptitle("where the controller's model and the plant disagree")
    figures["disagreement"] = figure
    return figures


def cross_validation_panels(controller, coordinates, plant):
    """The panels of a cross-validation's tracking and torque figures: ``(tracking, torques)``, each as :func:`panels`.

    The controlled coordinates are the controller's model's, named by its
    robot; the torques are the plant's, named by the plant's robot.  (The
    two models meet by position, column for column: a plant read from the
    ``.par`` conversion of the controller's URDF numbers its joints 1..N
    where the URDF names them.)  :func:`kanerobot.cross_validate` calls this
    before the run, so that a figure it cannot draw is said in seconds, not
    after the simulation.

    Parameters
    ----------
    controller, plant : numeric model
        The controller's model and the plant (``model.numeric(values)``).
    coordinates : sequence of str
        The controlled coordinates, named as the controller's model names them.

    Returns
    -------
    tuple of (list, list)

    Raises
    ------
    KaneRobotError
        For a coordinate or torque its robot has no joint for.
    """
    tracking = series(controller.model.robot, coordinates, "q", controller.state_space.aliases)
    torques = series(plant.model.robot, plant.state_space.torques, "tau")
    return panels(tracking), panels(torques)


def _disagreement(figure, cell, cv):
    grid = cell.subgridspec(2, 1)
    ax_abs = figure.add_subplot(grid[0, 0])
    ax_rel = figure.add_subplot(grid[1, 0], sharex=ax_abs)
    labels = {"mass_matrix": "A [kg·m² or kg]", "h": "H [N·m or N]", "gravity": "Q [N·m or N]", "torque": "ID(plant motion) vs tau [N·m or N]"}
    drawn = False
    for k, (name, value) in enumerate(cv.disagreement.items()):
        label = labels.get(name, name)
        for ax, values in ((ax_abs, value), (ax_rel, cv.relative_disagreement.get(name))):
            if values is None:
                continue
            positive = np.where(np.asarray(values) > 0, values, np.nan)
            if np.all(np.isnan(positive)):
                ax.plot([], [], color=f"C{k}", label=f"{label}: identical")
            else:
                ax.semilogy(cv.t, positive, color=f"C{k}", lw=1, label=label)
                drawn = True
    ax_abs.set_ylabel("max |ctrl - plant| [SI]")
    ax_rel.set_ylabel("relative to the plant [1]")
    ax_rel.set_xlabel("t [s]")
    for ax in (ax_abs, ax_rel):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize="x-small")
    if not drawn:
        text = "the models agree exactly" if cv.disagreement else "no comparable models: " + "; ".join(cv.notes)
        ax_abs.text(0.5, 0.5, text, ha="center", va="center", transform=ax_abs.transAxes, wrap=True)
