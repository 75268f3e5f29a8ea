"""The ``kanerobot`` command line.

::

    kanerobot list                       # the robots shipped in frames/
    kanerobot info rx90                  # tables, structure, DOF
    kanerobot model rx90 fgm             # fast geometric model 0T6
    kanerobot model rx90 jac --frame 6 --projection 0 -o rx90_jac.txt
    kanerobot model rx90 idm --lang latex -o rx90_idm.tex   # the report as a LaTeX document
    kanerobot model talos.urdf cmm --lang c -o talos_cmm.c   # centroidal momentum matrix (also com)
    kanerobot convert SR400.par sr400.toml
    kanerobot convert arm7 arm7.xml      # MJCF for MuJoCo, with the robot's numbers
    kanerobot identify planar2 run.csv --values geometry.toml --method wls -o estimates.toml
    kanerobot view rx90 --set D3=0.45 --set RL4=0.5   # the robot in the browser

ROBOT is a file (.par, .toml, .urdf or MJCF .xml) or the name of a robot in frames/.  Errors in
what the user wrote are printed on one line, ``kanerobot: error: ...``, with
exit status 2 and no traceback.
"""

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

from kanerobot import __version__
from kanerobot.command_options import add_loading, announced_own_values, gravity_values, load_robot
from kanerobot.errors import KaneRobotError, KaneRobotWarning
from kanerobot.identification.base_parameters import METHODS
from kanerobot.library import resolve, robot_names
from kanerobot.report import model_latex, model_text, robot_tables, summary
from kanerobot.robot.files import folder_problem
from kanerobot.robot.io import PAR_HOLDS_NO_VALUES, atomic_write_text, bound_values, load, save


class Progress:
    """Stage messages on standard error, so that long work is seen to move.

    Shown when standard error is a terminal or with ``--progress``; quiet
    otherwise so that scripts and tests read clean output.
    """

    def __init__(self, enabled):
        self.enabled = enabled
        self.start = time.perf_counter()

    def __call__(self, message):
        if self.enabled:
            elapsed = time.perf_counter() - self.start
            print(f"[{elapsed:6.1f} s] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ models
def _model_trm(robot, args, progress):
    from kanerobot.geometry import transform
    from kanerobot.symbolic.printing import format_matrix

    i, j = args.start, args.frame or _terminal(robot)
    progress(f"transformation matrix {i}T{j}")
    title = f"Geometric model: transformation matrix {i}T{j}"
    return title, format_matrix(f"T{i}T{j}_", transform(robot, i, j), _latex(args))


def _model_fgm(robot, args, progress):
    from kanerobot.geometry import fast_geometric_model
    from kanerobot.symbolic.printing import format_program

    i, j = args.start, args.frame or _terminal(robot)
    progress(f"fast geometric model {i}T{j} with intermediate variables")
    program = fast_geometric_model(robot, i, j)
    title = f"Fast geometric model {i}T{j}"
    if args.lang and not _latex(args):
        doc = f"Fast geometric model {i}T{j} of {robot.name}: the top three rows of the transform; p holds the parameters it uses."
        return title, _export_kinematics(robot, program, args, (3, 4), doc)
    return title, format_program(program, latex=_latex(args))


def _model_jac(robot, args, progress):
    from kanerobot.kinematics import jacobian
    from kanerobot.symbolic.printing import format_matrix

    frame = args.frame or _terminal(robot)
    progress(f"Jacobian of frame {frame} projected in frame {args.projection}")
    title = f"Jacobian matrix for frame {frame}\nProjection frame {args.projection}, intermediate frame {args.intermediate or args.projection}"
    if args.lang and not _latex(args):
        from kanerobot.dynamics.kinematic_programs import jacobian_program

        # the program of the numeric Jacobian (partial products named: Krang's arm in 134 products, not Renaud's 1586);
        # the same matrix whatever --intermediate, which only shapes the printed expressions
        program = jacobian_program(robot, frame, args.projection)
        grid = [[f"J{r + 1}_{c + 1}" for c in range(len(robot.joint_labels))] for r in range(6)]
        doc = (
            f"Jacobian of frame {frame} of {robot.name} projected in frame {args.projection}: [linear; angular] "
            f"velocity of its origin from the joint rates; p holds the parameters it uses."
        )
        return title, _export_kinematics(robot, program, args, grid, doc)
    J = jacobian(robot, frame, projection=args.projection, intermediate=args.intermediate)
    return title, format_matrix("J", J, _latex(args))


def _export_kinematics(robot, program, args, outputs, doc, tree=None):
    """Generated function file text of a kinematic program of the joint vector q (``--lang``): a pose, a Jacobian,
    a balance program (of ``tree``, the robot's own or that of its loops or wheels set free)."""
    from kanerobot.codegen import generate

    tree = tree or robot
    groups = [("q", list(tree.q))]
    groups.append(_parameter_group(tree, program, groups))
    return generate(program, args.lang, _function_name(robot, args.model), groups, outputs=outputs, doc=doc)


def _model_det(robot, args, progress):
    from kanerobot.kinematics import jacobian_determinant
    from kanerobot.symbolic.printing import format_assignments

    frame = args.frame or _terminal(robot)
    progress(f"determinant of the Jacobian of frame {frame}")
    det = jacobian_determinant(robot, frame, projection=args.projection, intermediate=args.intermediate, rows=args.rows)
    return f"Determinant of the Jacobian of frame {frame}", format_assignments([("DETJ", det)], _latex(args))


def _model_vel(robot, args, progress):
    from kanerobot.kinematics import link_velocities
    from kanerobot.symbolic.printing import format_assignments

    progress("link velocities (recursive)")
    rows = []
    for label, (w, v) in link_velocities(robot).items():
        rows += [(f"W{axis}{label}", w[k]) for k, axis in enumerate("123")]
        rows += [(f"V{axis}{label}", v[k]) for k, axis in enumerate("123")]
    return "Velocities of links (angular W, linear V, in their own frames)", format_assignments(rows, _latex(args))


def _model_acc(robot, args, progress):
    from kanerobot.kinematics import link_accelerations
    from kanerobot.symbolic.printing import format_assignments

    progress("link accelerations (recursive)")
    rows = []
    for label, (wp, vp) in link_accelerations(robot).items():
        rows += [(f"WP{axis}{label}", wp[k]) for k, axis in enumerate("123")]
        rows += [(f"VP{axis}{label}", vp[k]) for k, axis in enumerate("123")]
    return "Accelerations of links (angular WP, linear VP, in their own frames)", format_assignments(rows, _latex(args))


def _model_jpqp(robot, args, progress):
    from kanerobot.kinematics import jdot_qdot
    from kanerobot.symbolic.printing import format_matrix

    frame = args.frame or _terminal(robot)
    progress(f"J-dot q-dot of frame {frame}")
    return f"JPQP of frame {frame} projected in frame {args.projection}", format_matrix(
        "JPQP", jdot_qdot(robot, frame, projection=args.projection), _latex(args)
    )


def _model_loops(robot, args, progress):
    from kanerobot.geometry import fast_geometric_model
    from kanerobot.robot.tables import latex_text
    from kanerobot.symbolic.printing import format_program

    _need_loops(robot)
    parts = []
    for cut, closing in robot.loops:
        progress(f"loop closed by frame {closing}: {closing}T{cut} with intermediate variables")
        program = fast_geometric_model(robot, closing, cut)
        heading = f"Loop cut at joint {cut}: {closing}T{cut} = I4 when the loop is closed\n"
        parts.append((latex_text(heading) if _latex(args) else heading) + format_program(program, latex=_latex(args)))
    title = "Geometric constraint equations of loops (SYMORO+ eq. 2)"
    return title, "\n".join(parts)


def _model_loopvel(robot, args, progress):
    from kanerobot.kinematics import loop_velocity_constraints
    from kanerobot.symbolic.printing import format_assignments, matrix_rows

    _need_loops(robot)
    progress("kinematic constraint equations of the loops")
    constraints = loop_velocity_constraints(robot)
    text = format_assignments(matrix_rows("WA", constraints.Wa) + matrix_rows("WP", constraints.Wp), _latex(args))
    note = (
        "Active joints: " + ", ".join(constraints.active) + "; passive joints: " + ", ".join(constraints.passive)
        + "; cut joints: " + ", ".join(constraints.cut)
        + "\nWA qd_active + WP qd_passive = 0, so qd_passive = W qd_active with W = -WP^-1 WA"
    )
    return "Kinematic constraint equations of loops\n" + note, text


def _model_igm(robot, args, progress):
    from kanerobot.igm.api import derive_igm
    from kanerobot.igm.export import generate_igm

    progress(f"inverse geometric model of {robot.name} by Paul's method")
    igm = derive_igm(robot, end=args.frame)
    title = f"Inverse geometric model ({igm.method.capitalize()}'s method, SYMORO+ section 3.3)"
    if args.lang:
        return title, generate_igm(igm, args.lang)
    return title, str(igm) + "\n"


def _model_dim(robot, args, progress):
    from kanerobot.identification.regressor import identification_model
    from kanerobot.symbolic.printing import format_program

    progress(f"dynamic identification model of {robot.name} ({robot.nj} joints)")
    model = identification_model(robot)
    if args.lang and not _latex(args):
        return "Dynamic identification model", model.export(args.lang)
    rows, p = model.shape
    title = f"Dynamic identification model (regressor D of GAM = D K, {rows} x {p}, outputs DG<joint>_<parameter>)"
    if robot.loops:
        title += f"\nClosed loops (SYMORO+ 5.2): D_a = G^T D_tree on the active joints {', '.join(robot.active_joints)}"
    return title, format_program(model.program, latex=_latex(args))


def _model_regp(robot, args, progress):
    from kanerobot.identification.base_parameters import base_parameter_set

    progress(f"base parameters of {robot.name} (symbolic grouping rules)")
    from kanerobot.symbolic.printing import latex_equations

    numeric = args.base_method == "numeric"  # the robot's numbers (a URDF's) for the geometry, --set's bound already
    base = base_parameter_set(robot, method=args.base_method, values=dict(robot.values) if numeric else None)
    how = "by grouping" if args.base_method == "symbolic" else "by the numeric method"
    title = f"Base inertial parameters {how} ({len(base.names)}, friction included)"
    if _latex(args):
        return title, latex_equations(base.expressions.items())
    return title, "".join(f"{name} = {expr}\n" for name, expr in base.expressions.items())


def _dynamic(name, title):
    def build(robot, args, progress):
        from kanerobot.dynamics.model import derive
        from kanerobot.symbolic.printing import format_program

        progress(f"{title} of {robot.name} ({robot.nj} joints) by {args.method}")
        model = derive(robot, method=args.method)
        program = model.program(name)
        heading = title
        if robot.loops:
            heading += (
                f"\nClosed loops (SYMORO+ 5.2): the tree model projected on the active joints "
                f"{', '.join(robot.active_joints)}, GAM_a = GT_a + W^T GT_p, W = -WP^-1 WA"
            )
        if args.lang and not _latex(args):
            return heading, _export(model, name, program, args)
        return heading, format_program(program, latex=_latex(args))

    return build


DYNAMIC_MODELS = {
    "idm": ("inverse_dynamics", "Inverse dynamic model using Newton-Euler algorithm"),
    "inm": ("mass_matrix", "Inertia matrix by composite links"),
    "ccg": ("h", "Centrifugal, Coriolis, gravity and friction torques"),
    "grav": ("gravity", "Gravity torques"),
    "cor": ("coriolis_matrix", "Coriolis matrix (Christoffel form)"),
    "ddm": ("direct_dynamics", "Direct dynamic model (recursive, without the inertia matrix)"),
    "didm": ("inverse_dynamics_derivatives", "Derivatives of the inverse dynamic model: [dGAM/dq, dGAM/dqd]"),
    "dddm": ("direct_dynamics_derivatives", "Derivatives of the direct dynamic model: [dqdd/dq, dqdd/dqd, dqdd/dGAM]"),
}


def _export(model, name, program, args):
    """Generated function file text for one dynamic model (``--lang``)."""
    from kanerobot.codegen import generate
    from kanerobot.dynamics.derivatives import DERIVATIVE_MODELS, output_grid

    robot = model.robot
    if not model.state_space.joint_state:
        # Programs of a state of their own (floating base, flexible joints, wheels):
        # x holds the program's state inputs (base speeds, quaternion, motor
        # positions ...), p the others, both named in the generated docstring.
        states = set(model.state_symbols)
        groups = [("x", [s for s in program.inputs if s in states])]
        groups.append(_parameter_group(robot, program, groups))
        function = _function_name(robot, args.model)
        doc = f"{MODELS[args.model][0]} of {robot.name}; x holds the state, p the parameters."
        return generate(program, args.lang, function, groups, doc=doc)
    groups = [("q", model.q)]
    inverse = ("inverse_dynamics", "inverse_dynamics_derivatives")
    direct = ("direct_dynamics", "direct_dynamics_derivatives")
    if name in ("h", "coriolis_matrix", *inverse, *direct):
        groups.append(("qd", model.qd))
    if name in inverse:
        groups.append(("qdd", model.qdd))
    if name in direct:
        groups.append(("tau", model.tau))
    if name in ("h", *inverse, *direct):
        groups += [(f"wrench{model.robot.stems.get(label, label)}", symbols) for label, symbols in model.wrench.items()]
    groups.append(_parameter_group(robot, program, groups))
    function = _function_name(robot, args.model)
    doc = f"{MODELS[args.model][0]} of {robot.name}; p holds the parameters this model uses."
    n = len(model.qd)  # the active joints of a closed-loop robot
    shape = (n, n) if name in ("mass_matrix", "coriolis_matrix") else None
    if name in DERIVATIVE_MODELS:  # one row per speed, the blocks side by side
        shape = output_grid(program, n)
    return generate(program, args.lang, function, groups, outputs=shape, doc=doc)


def _balance(key, title):
    """The builder of a balance program (``com``, ``cmm``): printed, or exported with ``--lang``."""

    def build(robot, args, progress):
        from kanerobot.dynamics.kinematic_programs import PROGRAMS
        from kanerobot.symbolic.printing import format_program

        tree, heading = _balance_tree(robot), title
        if tree is not robot:
            kind = "Wheeled base" if robot.wheeled else "Closed loops"
            heading += (
                f"\n{kind}: the program of the tree (every joint free, {', '.join(tree.joint_labels)}); on the "
                f"independent speeds qd = G qd_a the matrix is A_G G (kr.derive(robot).numeric(values) evaluates it)"
            )
        if robot.floating:
            heading += "\nFloating base: frame 0 axes; in the world, wR_0 times each column and p_0 + wR_0 PG"
        progress(f"{PROGRAMS[key][0]} of {robot.name} ({len(tree.joint_labels)} joints)")
        program = PROGRAMS[key][1](tree)
        if args.lang and not _latex(args):
            return heading, _export_balance(robot, tree, key, program, args)
        return heading, format_program(program, latex=_latex(args))

    return build


def _balance_tree(robot):
    """The tree whose balance program ``robot`` has: its own, or that of its wheels or loops set free."""
    if robot.wheeled:
        from kanerobot.dynamics.wheeled import tree_robot

        return tree_robot(robot)
    if robot.loops:
        from kanerobot.dynamics.closed_loop import equivalent_tree

        return equivalent_tree(robot)
    return robot


def _export_balance(robot, tree, key, program, args):
    """A function of ``(q, p)`` returning ``[c, J_G]`` (3 x (1 + nv)) or ``A_G`` (6 x nv), frame 0 axes."""
    from kanerobot.dynamics.centroidal import NAMES

    nv = (6 if robot.floating else 0) + len(tree.joint_labels)
    if key == "centroidal_momentum_matrix":
        grid = [[NAMES["cmm"].format(r=r, c=c) for c in range(1, nv + 1)] for r in range(1, 7)]
        what = "centroidal momentum matrix A_G (6 x nv, linear rows first, angular momentum about the centre of mass)"
    else:
        grid = [[NAMES["com"].format(r=r)] + [NAMES["jacobian"].format(r=r, c=c) for c in range(1, nv + 1)] for r in range(1, 4)]
        what = "[c, J_G]: the centre of mass (first column) and its Jacobian (3 x (1 + nv))"
    doc = f"{what} of {robot.name} in the axes of frame 0; q the joints, p the parameters the program reads, in the robot's order."
    return _export_kinematics(robot, program, args, grid, doc, tree=tree)


def _function_name(robot, model):
    """``<robot>_<model>``, lower case (``rx90_idm``)."""
    return f"{robot.name.lower()}_{model}"


def _parameter_group(robot, program, groups):
    """``("p", symbols)``: what ``program``'s outputs read besides the other argument ``groups``, in the robot's order.

    Exactly the model's own parameters (a gravity model has no FV1), frame by
    frame as :meth:`~kanerobot.robot.description.Robot.parameter_order` sorts
    them; the generated file lists them.
    """
    given = {s for _, symbols in groups for s in symbols}
    return ("p", robot.parameter_order(program.used_inputs() - given))


MODELS = {
    "trm": ("transformation matrix between two frames (--start, --frame)", _model_trm),
    "fgm": ("fast geometric model with intermediate variables (--start, --frame)", _model_fgm),
    "jac": ("Jacobian matrix of a frame, Renaud's form (--frame, --projection, --intermediate)", _model_jac),
    "det": ("determinant of the Jacobian (--frame, --projection; --rows for fewer than 6 joints)", _model_det),
    "vel": ("velocities of all links, recursive", _model_vel),
    "acc": ("accelerations of all links, recursive", _model_acc),
    "jpqp": ("J-dot q-dot of a frame (--frame, --projection)", _model_jpqp),
    "loops": ("geometric constraint equations of the loops of a closed-loop robot", _model_loops),
    "loopvel": ("kinematic constraint equations of the loops (W matrices)", _model_loopvel),
    "igm": ("inverse geometric model, every solution (Paul/Pieper; --lang python, c, matlab, julia); a redundant chain "
            "(more than 6 joints) is reported, solved by kr.redundant_ik", _model_igm),
    "dim": ("dynamic identification model: the regressor D of GAM = D K (--lang python, c, matlab, julia)", _model_dim),
    "regp": ("base inertial parameters by the grouping rules", _model_regp),
}
MODELS.update({key: (title[0].lower() + title[1:], _dynamic(name, title)) for key, (name, title) in DYNAMIC_MODELS.items()})
#: The balance programs (:mod:`kanerobot.dynamics.centroidal`): key -> (program, title).
BALANCE_MODELS = {
    "com": ("center_of_mass_jacobian", "Centre of mass PG and its Jacobian JG (composite links, axes of frame 0)"),
    "cmm": ("centroidal_momentum_matrix", "Centroidal momentum matrix AG (Orin-Goswami; h_G = AG qd, axes of frame 0)"),
}
MODELS.update({
    key: (title[0].lower() + title[1:] + " (--lang python, c, matlab, julia)", _balance(name, title))
    for key, (name, title) in BALANCE_MODELS.items()
})  # fmt: skip
#: The models ``--lang python|c|matlab|julia`` writes as a function file.
EXPORTED_MODELS = ("fgm", "jac", *DYNAMIC_MODELS, *BALANCE_MODELS, "igm", "dim")


def _terminal(robot):
    """The end frame of a robot with a single one; trees must name theirs."""
    from kanerobot.geometry import terminal_frame

    leaves = [f.label for f in robot.frames if not robot.children(f.label)]
    try:
        return terminal_frame(robot)
    except KaneRobotError:
        raise KaneRobotError(f"{robot.name} has several end frames ({', '.join(leaves)}): choose one with --frame") from None


def _need_loops(robot):
    if not robot.loops:
        raise KaneRobotError(f"{robot.name} has no closed loop: loop constraints exist only for closed-loop robots")


# ---------------------------------------------------------------- commands
def _write(text, output):
    if output:
        atomic_write_text(output, text)
        print(f"written {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def cmd_list(args):
    for name in robot_names():
        robot = load(resolve(name))
        joints = f"({robot.nj} joint{'s' if robot.nj != 1 else ''})" if robot.nj != robot.dof else ""  # where they differ
        print(f"{name:12s} {robot.structure:12s} {robot.dof:3d} DOF {joints:12s} {resolve(name).name}")


def cmd_info(args):
    if args.output:
        _output_path(args.output)
    robot = load_robot(args)
    _write(summary(robot) + "\n" + robot_tables(robot), args.output)


def cmd_model(args):
    if args.output:
        _output_path(args.output)  # before a derivation that may take minutes
    progress = Progress(args.progress or sys.stderr.isatty())
    progress(f"loading {args.robot}")
    robot = load_robot(args)
    if args.values:
        robot = _bind(robot, _parse_values(args.values))
    for option in ("start", "frame", "projection", "intermediate"):
        label = getattr(args, option)
        if label not in (None, "0"):
            robot.frame(label)  # a clear error for an unknown frame
    if _latex(args) and args.model == "igm":
        raise KaneRobotError("--lang latex writes the models SYMORO prints as equations; the igm's steps and branches have no such layout")
    if args.lang and not _latex(args) and args.model not in EXPORTED_MODELS:
        raise KaneRobotError(
            f"--lang exports {', '.join(EXPORTED_MODELS)} as {args.lang} functions, not {args.model} "
            f"(--lang latex writes any model's report as LaTeX)"
        )
    title, text = MODELS[args.model][1](robot, args, progress)
    progress("done")
    if _latex(args):
        _write(model_latex(title, robot, text), args.output)
    else:
        _write(text if args.lang else model_text(title, robot, text), args.output)


def _latex(args):
    """``--lang latex``: the model's SYMORO report as a LaTeX document rather than a function file."""
    return args.lang == "latex"


def read_values(path):
    """Parameter values from a TOML file of ``NAME = number`` lines."""
    import tomllib

    from kanerobot.errors import RobotFileError

    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise RobotFileError(path, None, "no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise RobotFileError(path, None, f"{exc}: write one NAME = number per line") from None
    bad = [name for name, value in data.items() if isinstance(value, bool) or not isinstance(value, (int, float))]
    if bad:
        raise RobotFileError(path, None, f"{', '.join(bad)} must be numbers (NAME = 0.5)")
    return {name: float(value) for name, value in data.items()}


def cmd_simulate(args):
    """``kanerobot simulate``: check the options, derive, bind the values, run, report and save."""
    import numpy as np

    from kanerobot.dynamics.model import derive
    from kanerobot.simulation import simulate, stop_message

    # What the user wrote is checked before the model is derived and the run
    # starts: a mistake costs a second, not the whole simulation.
    output = _output_path(args.output, (".npz", ".csv"), "a simulation") if args.output else None
    if args.plot:
        _check_plot_folder(args.plot)
    if args.animate:
        from kanerobot.visual.animate import check_path

        check_path(args.animate)
    values = read_values(args.values) if args.values else None
    x0 = _floats(args.x0, "--x0") if args.x0 else None
    target = _floats(args.target, "--target") if args.target else None
    robot = load_robot(args)
    progress = Progress(args.progress or sys.stderr.isatty())
    model = derive(robot, method=args.method)  # programs are derived on first use: cheap here
    x0 = _initial_state(robot, args, model, x0, target)
    plot_prefix = robot.name
    values_path = text = None
    if values is None:  # a URDF's own numbers (or a robot file that carries them)
        values = announced_own_values(robot, args)
    if values is None:
        values, values_path, text = _random_values(robot, args, output, plot_prefix)
    values = {**values, **gravity_values(robot, args)}
    progress(f"deriving the dynamic model of {robot.name} by {args.method} and binding the values")
    try:
        fn = model.numeric(values, physical=not args.unphysical)  # --unphysical: the file's bodies as written
    except KaneRobotError as exc:
        where = f"{args.values}: " if args.values else ""
        raise type(exc)(f"{where}{exc}") from None
    controller = _cli_controller(args, fn, x0[: model.state_space.nq], target)
    result = simulate(fn, None, np.asarray(x0), (0.0, args.t), controller=controller, progress=args.progress or sys.stderr.isatty(),
                      t_eval=np.linspace(0.0, args.t, args.samples), limits=args.limits, restitution=args.restitution)
    if result.limits == "stop" and result.limit_events:
        print(f"kanerobot: {stop_message(result.limit_events[-1], '--limits {}')}", file=sys.stderr)
    for key, value in result.summary().items():
        print(f"{key:22s} {value:.6g}" if isinstance(value, float) else f"{key:22s} {value}")
    _write_simulation(result, args, output, plot_prefix, values_path, text, controller)


def cmd_campaign(args):
    """``kanerobot campaign``: the options and the run are :mod:`kanerobot.campaign.command`'s."""
    from kanerobot.campaign.command import run

    run(args, read_values(args.values) if args.values else None)


def _initial_state(robot, args, model, x0, target):
    """The state to start from (--x0 or the model's rest); --x0, --target and --controller must fit the model."""
    space = model.state_space
    kind, q_names, qd_names, default = state_layout(model)
    if args.controller == "computed-torque" and space.not_rigid:
        raise KaneRobotError(f"{robot.name} is a {kind} robot: computed torque needs a rigid model; use --controller pd")
    layout = f"q = {', '.join(q_names)}, then qd = {', '.join(qd_names)}"
    if x0 is None:
        if default is None:
            raise KaneRobotError(
                f"{robot.name} is a {kind} robot: q = 0 need not be a state of it; give --x0 with "
                f"{len(q_names) + len(qd_names)} values: {layout}"
            )
        x0 = default
    elif len(x0) != len(q_names) + len(qd_names):
        raise KaneRobotError(f"--x0 of {robot.name} ({kind}) takes {len(q_names) + len(qd_names)} values, got {len(x0)}: {layout}")
    if target is not None and args.controller != "none":
        count = space.ntau  # one target per torque (kanerobot.control's table)
        if len(target) != count:
            raise KaneRobotError(f"--target of {robot.name} ({kind}) takes {count} values, one per controlled coordinate, got {len(target)}")
    return x0


def _random_values(robot, args, output, plot_prefix):
    """Random physically consistent parameters (--seed), announced on stderr: (values, file to save them to or None, its text)."""
    import numpy as np

    from kanerobot.dynamics.parameters import random_parameters

    values_path = None
    values = random_parameters(robot, np.random.default_rng(args.seed), friction=False, wrench=False)
    if output:
        values_path = output.with_name(output.stem + ".values.toml")
    elif args.plot:
        values_path = Path(args.plot) / f"{plot_prefix}_values.toml"
    text = _values_text(values, f"random physically consistent parameters of {robot.name} (kanerobot simulate --seed {args.seed})")
    if values_path is None and len(values) <= PRINTED_VALUES:
        print(f"kanerobot: random physically consistent parameters (seed {args.seed}); "
              "give yours with --values FILE (these lines are such a file):", file=sys.stderr)
        sys.stderr.write(text)
    elif values_path is None:
        gravity = ", ".join(f"{g} = {values[str(g)]:g}" for g in robot.base.G if str(g) in values) or "as in the file"
        print(f"kanerobot: {len(values)} random physically consistent parameters (seed {args.seed}; gravity {gravity}); "
              "-o FILE saves them with the results, --seed draws them again; give yours with --values FILE", file=sys.stderr)
    else:
        print(f"kanerobot: random physically consistent parameters (seed {args.seed}), saved to {values_path} "
              "with the results; give yours with --values FILE", file=sys.stderr)
    return values, values_path, text


def _cli_controller(args, fn, q0, target):
    """The --controller (None for none), towards --target or holding the start positions."""
    import numpy as np

    from kanerobot.control import computed_torque, pd_gravity, quintic

    if args.controller == "none":
        return None
    start = _controlled_positions(fn, q0)
    target = start if target is None else np.asarray(target)
    if args.controller == "pd":
        return pd_gravity(fn, target)
    return computed_torque(fn, quintic(start, target, args.t))


def _write_simulation(result, args, output, plot_prefix, values_path, text, controller=None):
    """Save the results (-o), the plots (--plot) and the random values drawn, each announced on stderr."""
    if output:
        print(f"written {result.save(output)}", file=sys.stderr)
    if args.plot:
        for path in result.plot(args.plot, prefix=plot_prefix, controller=controller):
            print(f"written {path}", file=sys.stderr)
    if args.animate:
        print(f"written {result.animate(args.animate)}", file=sys.stderr)
    if values_path is not None:
        Path(values_path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(values_path, text)
        print(f"written {values_path}", file=sys.stderr)

#: Random parameters printed in full when the run is not saved; more are summarised.
PRINTED_VALUES = 40


def state_layout(model):
    """What ``x0 = (q, qd)`` of :func:`kanerobot.simulate` holds for a derived
    ``model`` (the table of :mod:`kanerobot.simulation`), read off its
    :class:`~kanerobot.state_space.StateSpace`.

    Returns
    -------
    tuple
        ``(kind, q names, qd names, default x0 or None)``: the default is
        rest at q = 0 (a floating base at the origin, unit quaternion);
        None where q = 0 need not be a state (closed loops, wheeled bases).
    """
    space = model.state_space
    q = list(space.q_names)
    q[-1] += space.q_note
    default = [float(x) for x in space.origin] + [0.0] * space.nv if space.origin_is_state else None
    return space.adjective, q, list(space.qd_names), default


def _controlled_positions(fn, q):
    """The coordinates a controller on ``fn`` tracks, at the configuration ``q``."""
    from kanerobot.control import ControlView

    return ControlView(fn).positions(q)


def _values_text(values, title):
    """``NAME = number`` lines that :func:`read_values` reads back exactly."""
    return f"# {title}\n" + "".join(f"{name} = {float(value)!r}\n" for name, value in sorted(values.items()))


def _output_path(text, suffixes=None, what=None, option="-o"):
    """An output file, checked before the work: one of ``suffixes`` (when
    given; ``what`` is what the file holds), in a folder that exists and can
    be written."""
    path = Path(text)
    if suffixes and path.suffix not in suffixes:
        raise KaneRobotError(f"{option} {text}: cannot save {what} as {path.name!r}: use a {' or '.join(suffixes)} file")
    if path.is_dir():
        raise KaneRobotError(f"{option} {text} is a folder: give a file name")
    problem = folder_problem(path.parent)
    if problem:
        raise KaneRobotError(f"{option} {text}: {problem}")
    return path


def _check_plot_folder(text):
    """``--plot FOLDER``: matplotlib installed, and a folder that is or can be
    made writable (it is created with its parents)."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise KaneRobotError("--plot needs matplotlib, which is not installed: pip install 'kanerobot[plot]' (or leave out --plot)")
    problem = folder_problem(text, created=True)
    if problem:
        raise KaneRobotError(f"--plot {text}: {problem}")


def _floats(text, option):
    try:
        numbers = [float(v) for v in text.split(",")]
    except ValueError:
        raise KaneRobotError(f"{option} takes numbers separated by commas, got {text!r}") from None
    bad = [v for v in numbers if not math.isfinite(v)]
    if bad:
        raise KaneRobotError(f"{option} takes finite numbers, got {bad[0]} in {text!r}")
    return numbers


def _duration(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a duration in seconds, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"takes a positive duration in seconds, got {text!r}")
    return value


def _restitution(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a coefficient of restitution in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"takes a coefficient of restitution in [0, 1] (0: stops dead, 1: rebounds), got {text!r}")
    return value


def _samples(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number of samples, got {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"takes at least 2 samples (the start and the end), got {value}")
    return value


def cmd_draw(args):
    """``kanerobot draw``: the robot in 3D at --q, written as a PNG, SVG or PDF figure."""
    from kanerobot.visual.draw import write_drawing
    from kanerobot.visual.figures import FORMATS

    output = _output_path(args.output, FORMATS, "a drawing")
    robot = load_robot(args)
    values = read_values(args.values) if args.values else {}
    if args.set:
        given = _parse_values(args.set)
        _bind(robot, given)  # refuses a name that is not one of the robot's parameters
        values.update(given)
    q = _floats(args.q, "--q") if args.q else None
    print(f"written {write_drawing(robot, output, q, values, option='--q')}", file=sys.stderr)


def cmd_identify(args):
    from kanerobot.errors import ParameterError
    from kanerobot.identification.identify import identify

    if args.output:
        _output_path(args.output, (".toml", ".csv"), "identification results")
    for path in args.data + ([args.validate] if args.validate else []):
        if not Path(path).exists():
            raise KaneRobotError(f"{path}: no such file (the recording: a .csv or .npz file, or a folder or several .csv, .npz, .parquet files)")
    # one file is read whole unless --chunk-size; a folder or several files chunk by chunk (kanerobot.identification.chunked)
    data = args.data[0] if len(args.data) == 1 else args.data
    robot = load_robot(args)
    # the robot's own numbers (a URDF's lengths, its or --gravity's gravity), below --values', below --gravity's
    values = {**robot.values, **(read_values(args.values) if args.values else {}), **gravity_values(robot, args)}
    try:
        result = identify(robot, data, values=values, method=args.method, form=args.model, cutoff=args.cutoff,
                          decimation=args.decimate, physical=args.physical, chunk_size=args.chunk_size, gains=args.gains,
                          period=args.period, max_gap=args.max_gap, identify_gains=args.identify_gains)  # fmt: skip
    except ParameterError as exc:
        where = f"{args.values}: " if args.values else ""
        raise ParameterError(f"{where}{exc}; give them with --values FILE (NAME = number lines)") from None
    print(result.summary())
    if args.output:
        print(f"written {result.save(args.output)}", file=sys.stderr)
    if args.validate:
        check = result.validate(args.validate)
        print()
        print(check.summary())
        # the figures beside the estimates (or beside the test recording without -o)
        beside = Path(args.output) if args.output else Path(args.validate)
        for path in check.save_figures(beside.with_name(beside.stem + "_validation")):
            print(f"written {path}", file=sys.stderr)


def cmd_convert(args):
    from kanerobot.robot.khalil_kleinfinger import khalil_kleinfinger_conversion, numbered

    robot = load_robot(args)
    general = any(not f.is_kk for f in robot.frames)
    # A .par holds Khalil-Kleinfinger frames only: general frames are converted first.
    par = str(args.target).lower().endswith(".par")
    if par or (general and args.kk):
        # A URDF's numbers (robot.values): a .par has no place for them, and the conversion
        # finds the common normals of numbers; a .toml keeps them in its [values] table.
        robot, line = bound_values(robot, PAR_HOLDS_NO_VALUES if par else "the conversion to Khalil-Kleinfinger frames needs them")
        if line:
            print(line, file=sys.stderr)
    if general and (args.kk or par):
        conversion = khalil_kleinfinger_conversion(robot, args.snap)
        robot = conversion.robot
        print(conversion.summary(), file=sys.stderr)
        if par and conversion.end_frames:
            robot = conversion.without_end_frames()
            print(
                f"end frames {', '.join(conversion.end_frames)} not written: a .par holds no frame without a link "
                f"(NF = NL + 2B); write a .toml with --kk to keep them",
                file=sys.stderr,
            )
    if par and robot.labels != tuple(str(n) for n in range(1, robot.nf + 1)):
        # A .par numbers its frames 1..N; the old labels (a URDF's joint names) are said once.
        old = robot.labels
        robot = numbered(robot)
        print(f"frames numbered for the .par: {', '.join(f'{n} = {label}' for n, label in enumerate(old, start=1))}", file=sys.stderr)
    save(robot, args.target)
    print(f"written {args.target}", file=sys.stderr)


def _rows(text):
    try:
        rows = [int(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--rows takes row numbers 0-5 separated by commas, got {text!r}") from None
    if not rows or any(not 0 <= r <= 5 for r in rows) or len(set(rows)) != len(rows):
        raise argparse.ArgumentTypeError(f"--rows takes distinct row numbers 0-5, got {text!r}")
    return rows


def _parse_values(items):
    """``{name: sympy number}`` of ``--set NAME=VALUE`` options.

    A value is a number or an expression of numbers (``pi/2``, ``0.45*2``);
    a name in it (``--set D3=abc``, a typo) is refused rather than becoming a
    new symbol of the model."""
    from kanerobot.robot.expressions import parse_expression

    values = {}
    for item in items:
        if "=" not in item:
            raise KaneRobotError(f"--set takes NAME=VALUE, got {item!r}")
        name, text = (part.strip() for part in item.split("=", 1))
        if not name or not text:
            raise KaneRobotError(f"--set takes NAME=VALUE, got {item!r}")
        try:
            value = parse_expression(text)
        except KaneRobotError as exc:
            raise KaneRobotError(f"--set {item}: {exc}") from None
        free = sorted(str(s) for s in value.free_symbols)
        if free:
            raise KaneRobotError(
                f"--set {item}: {', '.join(free)} {'is not a number' if len(free) == 1 else 'are not numbers'}; "
                "--set takes a number or an expression of numbers (D3=0.45, A=pi/2)"
            )
        if not (value.is_real and value.is_finite):
            raise KaneRobotError(f"--set {item}: {text} is not a finite real number")
        values[name] = value
    return values


def _bind(robot, values):
    """``robot`` with the ``--set`` values, refusing names it does not have."""
    unused = [name for name, value in values.items() if robot.subs({name: value}) == robot]
    if unused:
        raise KaneRobotError(
            f"--set: {', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not a symbol of {robot.name}'s tables "
            f"(its geometric parameters: {', '.join(robot.geometric_parameters) or 'none'}; see kanerobot info {robot.name})"
        )
    return robot.subs(values)


def cmd_view(args):
    """``kanerobot view``: serve the browser viewer until Ctrl-C (see :mod:`kanerobot.viewer`)."""
    from kanerobot.viewer.server import serve

    robot = load_robot(args)
    urdf = resolve(args.robot) if Path(resolve(args.robot)).suffix == ".urdf" else None  # its meshes dress the robot
    serve(robot, {k: float(v) for k, v in _parse_values(args.values or []).items()}, _floats(args.q, "--q") if args.q else None,
          args.play, urdf=urdf, host=args.host, port=args.port, frames=not args.no_frames)  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """argparse reporting a usage error as every other error: one line on
    standard error, exit status 2 (sub-commands are made of this class too)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser():
    parser = _Parser(
        prog="kanerobot",
        description=(
            "Symbolic models of robots described by a Khalil-Kleinfinger table (.par, SYMORO's format) "
            "or a tree of frames (.toml), or a URDF (.urdf). ROBOT is a file or the name of a robot shipped in frames/ "
            "(see 'kanerobot list')."
        ),
        epilog="Example: kanerobot model rx90 fgm    |    kanerobot model sr400 loops -o sr400_loops.txt",
    )
    parser.add_argument("--version", action="version", version=f"kanerobot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="list the robots shipped in frames/")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("info", help="print a robot's parameter tables, structure and DOF")
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_loading(p)
    p.set_defaults(func=cmd_info)

    models = "\n".join(f"  {name:8s} {help_}" for name, (help_, _) in MODELS.items())
    p = sub.add_parser(
        "model",
        help="generate a geometric, kinematic or dynamic model as SYMORO-style text or code",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Generate a model of ROBOT. Models:\n" + models,
        epilog="Frames are named by their labels ('6', '10l'); 0 is the base. "
        "Example: kanerobot model rx90 idm --lang c -o rx90_idm.c",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name")
    p.add_argument("model", metavar="MODEL", choices=sorted(MODELS), help="one of: " + ", ".join(MODELS))
    p.add_argument("--frame", metavar="J", help="frame of interest (default: the terminal link)")
    p.add_argument("--start", metavar="I", default="0", help="first frame of trm/fgm (default 0, the base)")
    p.add_argument("--projection", metavar="R", default="0", help="frame the Jacobian is projected into (default 0)")
    p.add_argument("--intermediate", metavar="I", help="intermediate frame of Renaud's Jacobian (default: projection)")
    p.add_argument(
        "--rows", metavar="R,R,...", type=_rows, help="task rows of det for a frame moved by fewer than 6 joints (0-2 linear, 3-5 angular)"
    )
    p.add_argument("--set", dest="values", metavar="NAME=VALUE", action="append", help="bind a parameter, e.g. --set D3=0.45")
    p.add_argument(
        "--lang",
        choices=("python", "c", "matlab", "julia", "latex"),
        help="export fgm, jac, a dynamic model, igm or dim as a function file in this language; "
        "latex: any model's report (tables, equations) as a LaTeX document",
    )
    p.add_argument(
        "--method",
        choices=("newton-euler", "lagrange", "kane"),
        default="newton-euler",
        help="engine of the dynamic models (default newton-euler; ddm needs newton-euler)",
    )
    p.add_argument("--base-method", choices=METHODS, default=METHODS[0],
                   help="how regp finds the base parameters: symbolic grouping rules (default), or numeric (QR of the regressor at "
                        "random states; the geometry needs numbers: a URDF's own, or --set); base_parameter_set's method=")  # fmt: skip
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("--progress", action="store_true", help="show progress on standard error")
    add_loading(p)
    p.set_defaults(func=cmd_model)

    p = sub.add_parser(
        "simulate",
        help="integrate the direct dynamics with scipy, print a summary, save results and figures",
        description="Integrate ROBOT's direct dynamic model from x0 = (q, qd) over --t seconds.",
        epilog="Example: kanerobot simulate planar2 --t 2 --x0 0.5,0,0,0 --controller pd --target 0,0 -o run.npz --plot figures",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name")
    p.add_argument("--values", metavar="FILE", help="parameter values, a TOML file of NAME = number lines (default: the file's own, as a URDF has them, else random physical ones)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random parameters when --values is not given")
    p.add_argument("--t", type=_duration, default=1.0, help="duration in seconds (default 1)")
    p.add_argument("--x0", metavar="Q,QD", help="initial state, q then qd, comma separated (default: rest at q = 0; "
                   "a floating base at the origin; closed loops and wheeled bases must give it)")
    p.add_argument("--controller", choices=["none", "pd", "computed-torque"], default="none",
                   help="PD with gravity compensation holding --target, or computed torque along a quintic to --target")
    p.add_argument("--target", metavar="Q", help="target configuration, comma separated (default: the initial q)")
    p.add_argument("--method", choices=["newton-euler", "lagrange", "kane"], default="newton-euler", help="engine of the model")
    p.add_argument("--samples", type=_samples, default=201, help="output samples, at least 2 (default 201)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the run as .npz or .csv (random parameters go to FILE's stem + .values.toml)")
    p.add_argument("--plot", metavar="FOLDER", help="write figures (PNG) there; needs pip install 'kanerobot[plot]'")
    add_loading(p)
    p.add_argument("--animate", metavar="FILE", help="write an animation of the run: .gif, .html or .mp4 (mp4 needs ffmpeg: "
                   "pip install 'kanerobot[animation]')")
    p.add_argument("--limits", choices=["stop", "impact", "ignore"], default="stop",
                   help="at a joint limit of the robot (a URDF's <limit>): stop the run there (default), an impact on the stop "
                   "(--restitution), or ignore the limits")
    p.add_argument("--restitution", type=_restitution, default=0.0, metavar="E",
                   help="coefficient of restitution of --limits impact, in [0, 1] (default 0: the joint stops dead at its stop)")
    p.add_argument("--progress", action="store_true", help="show progress on standard error")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser(
        "draw",
        help="draw the robot in 3D (frames, links as their tables say, joint axes, loops, wheels) as a PNG, SVG or PDF",
        description="Draw ROBOT at the configuration --q: each frame's triad and label, the links as the polylines of their "
        "tables, the joint axes, closed loops, wheels and the base, with the values used written beside.",
        epilog="Example: kanerobot draw rx90 --set D3=0.45 --set RL4=0.4 --q 0,0.5,-0.5,0,0.7,0 -o rx90.png",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name")
    p.add_argument("--q", metavar="Q", help="configuration, comma separated: every joint (after the base x y z qx qy qz qw of a "
                   "floating robot), or the active joints of a closed loop (default: 0)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="value of a geometric parameter, e.g. --set D3=0.45")
    p.add_argument("--values", metavar="FILE", help="parameter values, a TOML file of NAME = number lines")
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="the figure: .png, .svg or .pdf")
    add_loading(p)
    p.set_defaults(func=cmd_draw)

    p = sub.add_parser(
        "campaign",
        help="simulate a controller on many plants drawn from parameter ranges (Monte-Carlo), in parallel; needs kanerobot[cluster]",
        description="Run --runs simulations of ROBOT under a controller built on the nominal values, each plant drawn by --sample.",
        epilog="Example: kanerobot campaign rx90 --runs 200 --sample M6=0.5:1.5 --sample target=-0.5:0.5 --t-span 0:2 --store rx90_campaign",
    )
    from kanerobot.campaign.command import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_campaign)

    p = sub.add_parser(
        "identify",
        help="estimate the base dynamic parameters from a recording (t, q, tau) by least squares",
        description="Identify ROBOT's base dynamic parameters from DATA, a .csv (columns t, q_<joint>..., tau_<joint>...) or .npz (t, q, tau); "
                    "a folder or several files (.csv, .npz, .parquet, in time order) are read chunk by chunk.",
        epilog="Example: kanerobot identify arm.urdf train.csv --gains gains.toml --cutoff 5 --validate test.csv -o estimate.toml",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name")
    p.add_argument("data", metavar="DATA", nargs="+", help="recording, .csv or .npz; or a folder or several files (.csv, .npz, .parquet) read chunk by chunk")
    p.add_argument("--values", metavar="FILE", help="geometric and gravity values, a TOML file of NAME = number lines")
    p.add_argument("--method", choices=["ls", "wls"], default="ls", help="ordinary or per-joint weighted least squares (default ls)")
    p.add_argument("--model", choices=["dynamic", "filtered", "energy"], default="dynamic", help="identification model (default dynamic)")
    p.add_argument("--cutoff", type=float, metavar="HZ", help="low-pass the positions at HZ before differentiating")
    p.add_argument("--decimate", type=int, default=1, metavar="K", help="parallel decimation factor (default 1)")
    p.add_argument("--physical", action="store_true", help="physically consistent estimate (positive masses, triangle inequalities)")
    p.add_argument("--chunk-size", type=_samples, metavar="N", help="read the recording N samples at a time (default 20000 for a folder or several files)")
    p.add_argument("--gains", metavar="FILE", help="drive gains for a recording of currents (current_<joint> columns): a TOML file, [gains] joint = N m/A")
    p.add_argument("--identify-gains", action="store_true",
                   help="identify the drive gains of the joints --gains leaves out (the gains given fix the scale)")
    p.add_argument("--period", type=_duration, metavar="S", help="resample the recording to this period (default its median step)")
    p.add_argument("--max-gap", type=_duration, metavar="S", help="longest step between samples that is not a gap (default 10 median steps: a few stale rows in a row are no gap)")
    p.add_argument("--validate", metavar="TEST", help="a second recording: predict its torques with the estimate, print the errors, write figures")
    p.add_argument("-o", "--output", metavar="FILE", help="write the estimates as .toml or .csv (validation figures beside it)")
    add_loading(p)
    p.set_defaults(func=cmd_identify)

    p = sub.add_parser(
        "convert",
        help="convert a robot file between .par and .toml (general frames become Khalil-Kleinfinger frames in a .par), "
        "or write it as .urdf or as MJCF (.xml, MuJoCo's, with the robot's numbers)",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name")
    p.add_argument("target", metavar="FILE", help="output file; its extension picks the format")
    p.add_argument(
        "--kk",
        action="store_true",
        help="convert general frames to Khalil-Kleinfinger frames (z on the joint axes, x on the common normals) "
        "for a .toml too; a .par output always is",
    )
    p.add_argument(
        "--snap",
        type=float,
        metavar="TOL",
        help="snapping tolerance of that conversion (default 1e-5): angles within TOL of a multiple of pi/2 "
        "(a URDF's 1.5708, 1.570796325), rotation entries within TOL of 0 or +-1 and lengths within TOL "
        "(relative to the robot's size) of 0 become exact; what is snapped is listed; 1e-12 keeps the numbers",
    )
    add_loading(p)
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser(
        "view",
        help="show the robot in the browser: 3D, a slider per joint, frames, playback of a saved run (pip install 'kanerobot[view]')",
        description="Serve a local page with ROBOT in 3D until Ctrl-C; open the address it prints.",
        epilog="Example: kanerobot view rx90 --set D3=0.45 --set RL4=0.5    |    kanerobot view planar2 --set L1=0.5 --play run.npz",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml, .urdf or MJCF .xml) or library name; a URDF's meshes are shown (its collision shapes where they are not on disk)")
    p.add_argument("--set", dest="values", metavar="NAME=VALUE", action="append", help="a geometric parameter, e.g. --set D3=0.45")
    p.add_argument("--q", metavar="Q", help="the configuration shown first, comma separated (closed loops: the active joints)")
    p.add_argument("--play", metavar="RUN", help="a saved simulation to play back (.npz or .csv of kanerobot simulate -o)")
    p.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address served (default 127.0.0.1, this machine only)")
    p.add_argument("--no-frames", action="store_true", help="hide the frames' triads and labels at first")
    add_loading(p)
    p.set_defaults(func=cmd_view)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None, show=warnings.showwarning):
    """A :class:`~kanerobot.errors.KaneRobotWarning` on one line, as the errors; any other warning as Python shows it."""
    if issubclass(category, KaneRobotWarning):
        print(f"kanerobot: warning: {message}", file=sys.stderr)
    else:
        show(message, category, filename, lineno, file, line)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args):
    """Run the parsed command: the exit status; errors of what the user wrote on one line."""
    try:
        args.func(args)
    except KaneRobotError as exc:
        print(f"kanerobot: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kanerobot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (kanerobot list | head): stop quietly, as other tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
