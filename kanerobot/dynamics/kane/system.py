"""The system a Kane model is made of (:class:`KaneSystem`): its symbols, its two stages and its two paths."""

import functools

from sympy.physics.mechanics import dynamicsymbols

from kanerobot.dynamics.common import joint_torques, program_inputs
from kanerobot.dynamics.coriolis import hamel_blocks
from kanerobot.dynamics.free_flyer import BASE_ACCELERATION, BASE_VELOCITY, QUATERNION
from kanerobot.dynamics.kane.kanes_method import KanesMethodModels
from kanerobot.dynamics.kane.mechanics import Mechanics
from kanerobot.dynamics.kane.models import KaneModels
from kanerobot.dynamics.kane.nested import NestedModels
from kanerobot.dynamics.kane.recursion import KinematicRecursion
from kanerobot.dynamics.kane.rhs import system_rhs_terms
from kanerobot.dynamics.kane.support import (
    BASE_SPEED_LABELS,
    MODELS,
    RealTwins,
    check_masses,
    check_supported,
    moving_base,
    speed_keys,
)
from kanerobot.dynamics.root import root_joint_model
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, DYNAMIC_NAMES
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program


def _speed_name(robot, label, key):
    """The name of the dynamicsymbol of one speed: ``u<stem>`` for a joint of one speed, ``u_<speed>`` else."""
    return f"u{robot.stems[label]}" if key == label else f"u_{key}"


def _staged(stage, name):
    """The attribute ``name`` of the stage ``stage`` (a cached property of the system, built on first access)."""
    return property(lambda self: getattr(getattr(self, stage), name), doc=f"``{stage}.{name}``: see the class notes.")


class KaneSystem:
    """Kane's method for a robot, on sympy.physics.mechanics objects.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot; the base is fixed, moves with the known
        motion ``W0, WP0, V0, VP0`` of ``robot.base``, or floats
        (``robot.floating``, link 0 a body; docs/theory/kane.md, *Floating base*).
    trig : bool, optional
        Apply the compound-angle rules (``C23``) in the kinematic program.

    Attributes
    ----------
    robot : Robot
    N : ReferenceFrame
        The inertial frame (the robot's frame 0 when the base is fixed).
    frames : dict str -> ReferenceFrame
        One per robot frame, ``'0'`` included, named ``F<label>``.
    origins, centres : dict str -> Point
        Frame origins ``O<label>`` and link centres of mass ``G<label>``.
    bodies : list of RigidBody
        One per link, named ``B<label>``, mass ``M``, mass centre ``G<label>``
        and as inertia the central inertia :attr:`IG` (the inertia
        ``XX .. ZZ`` about the frame origin, moved to the centre of mass).
    loads : list of (Point or ReferenceFrame, Vector)
        All of :attr:`load_groups`, in the order ``torque``, ``friction``,
        ``gravity``, ``wrench``.
    load_groups : dict str -> list
        The loads by kind.
    q, u : list of sympy Function
        ``dynamicsymbols`` of the joint variables (named as the robot's:
        ``robot.q``, a spherical joint's quaternion ``QX2 .. QW2``
        included) and of the speeds (``u<label>`` for a joint of one speed,
        ``u_WX2 ..`` per speed of a joint of several), in
        ``robot.joint_labels`` order; for a floating base, preceded by the
        base's six pseudo-coordinates ``q_VX0 .. q_WZ0`` and speeds ``u_VX0
        .. u_WZ0``.  KanesMethod's kinematic equations are each joint
        model's configuration derivative
        (:func:`~kanerobot.dynamics.kane.support.joint_kd_equations`).
    speed_labels : list of str
        The key of each speed in the partial velocities (``recursion.JW`` ..):
        the joint label for a joint of one speed, the joint model's speed
        names (``WX2 ..``) for a joint of several, after ``VX0 .. WZ0`` for
        a floating base.
    speed_joints : list
        The joint label of each speed (None for a floating base's six).
    joint_speed_labels : dict str -> list of str
        Each joint's keys in :attr:`speed_labels`.
    suffixes : list of str
        The suffix of each speed's generalized force (the joint models'
        ``force_names``: ``1``, ``CX2 ..``, ``FX0 ..``).
    GAM : list of sympy.Symbol
        The joint torques, one per joint speed (``GAM<label>``, ``GAMCX2 ..``).
    n : int
        Number of generalized speeds (``6 +`` joints for a floating base).
    floating : bool
    udot : list of sympy.Derivative
        ``u'``.
    kanes_method : KanesMethod
        After ``kanes_equations(bodies, loads)``: its ``mass_matrix`` and
        ``forcing`` (``Fr - nonMM``) are sympy's.
    kinematics : Program
        The intermediate symbols the vectors are made of, with their
        definitions (robot symbols, not the real twins).
    IG : dict str -> sympy.Matrix
        Per link, the central inertia ``J - M (c.c E - c c^T)`` (``J`` the
        inertia ``XX .. ZZ`` about the frame origin, ``c = MS / M``, 0 when
        ``M = 0``) as symbols of :attr:`kinematics` (``IG<r><c>_<label>``).
    real_symbols : dict str -> sympy.Symbol
        The real twins used in the mechanics objects, by name; :meth:`real`
        maps an expression of robot symbols onto them.
    fr, frstar : sympy.Matrix
        KanesMethod's generalized active and inertia forces (``frstar``
        with the rotor inertia term ``-IA_j u'_j`` added).
    mass_matrix_kane, forcing : sympy.Matrix
        ``kanes_method.mass_matrix`` and ``.forcing``, computed once.

    Two stages, cached properties built on first access and not by the
    constructor (the default, nested, programs need neither; sympy's
    ``kanes_equations`` is most of a KanesMethod build's time):
    :attr:`recursion` (1, :class:`~kanerobot.dynamics.kane.recursion.KinematicRecursion`:
    :attr:`kinematics`, :attr:`IG` and the partial velocities) and
    :attr:`mechanics` (2, :class:`~kanerobot.dynamics.kane.mechanics.Mechanics`,
    on stage 1: :attr:`N` .. :attr:`forcing`, :attr:`kanes_method` among them).
    A stage that fails is not kept: the next access builds it afresh.

    Methods :meth:`inverse_dynamics`, :meth:`mass_matrix`, :meth:`h`,
    :meth:`gravity`, :meth:`coriolis_matrix`, :meth:`velocity_forces` (or
    :meth:`program` by name, derived once) give the programs of one of two
    paths with one interface (:class:`~kanerobot.dynamics.kane.models.KaneModels`),
    chosen by ``source`` (:meth:`models`): by default Kane's equations summed
    from the leaves to the root (:attr:`nested_models`,
    :class:`~kanerobot.dynamics.kane.nested.NestedModels`, docs/theory/kane.md); with
    ``source="kanes_method"`` read off KanesMethod's ``mass_matrix`` and
    ``forcing`` (:attr:`kanes_method_models`,
    :class:`~kanerobot.dynamics.kane.kanes_method.KanesMethodModels`);
    :meth:`kanes_method_program` gives those two themselves;
    :meth:`rhs_terms` the right-hand side terms; :meth:`fr_group` ``Fr`` of
    one kind of load.

    Examples
    --------
    >>> import kanerobot as kr
    >>> system = KaneSystem(kr.load(kr.frames_path("planar2")))
    >>> system.kanes_method.mass_matrix.shape
    (2, 2)
    >>> sorted(system.frames)
    ['0', '1', '2']
    >>> print(system.frames["2"].ang_vel_in(system.N))
    (u1(t) + u2(t))*F2.z
    >>> print(system.mass_matrix())  # doctest: +ELLIPSIS
    C2 = cos(th2)
    ...
    A22 = IA2 + ZZ2


    The same inertia matrix read off KanesMethod's ``mass_matrix``:

    >>> from kanerobot.symbolic.printing import matrix_entry_names
    >>> km = system.program("mass_matrix", source="kanes_method")
    >>> sorted(km.outputs) == sorted(system.program("mass_matrix").outputs)
    True
    """

    def __init__(self, robot, trig=True):
        check_supported(robot)
        self.robot = robot
        self.trig = bool(trig)
        self.floating = bool(robot.floating)
        labels = robot.joint_labels
        root = root_joint_model(robot)
        # A floating base puts its six speeds (its body-frame twist) before the
        # joint rates, as pinocchio's free flyer: see docs/theory/kane.md.
        base = BASE_SPEED_LABELS if self.floating else ()
        # One key per speed: a joint of one speed keeps its label, a joint of several names each (WX2 ..).
        self.joint_speed_labels = {label: speed_keys(robot.frame(label)) for label in labels}
        self.speed_labels = list(base) + [key for label in labels for key in self.joint_speed_labels[label]]
        #: The joint label of each speed (None for the root joint's).
        self.speed_joints = [None] * len(base) + [label for label in labels for _ in self.joint_speed_labels[label]]
        self.n = len(self.speed_labels)
        #: ``(start, S_j, name)`` of the root and the joints whose speeds are quasi-velocities (coriolis.hamel_blocks).
        self.hamel_blocks = hamel_blocks(robot)
        self.speed_index = {label: k for k, label in enumerate(self.speed_labels)}
        self.q = [dynamicsymbols(f"q_{key}", real=True) for key in base]
        self.q += [dynamicsymbols(str(x), real=True) for x in robot.q]
        self.u = [dynamicsymbols(f"u_{key}", real=True) for key in base]
        self.u += [dynamicsymbols(_speed_name(robot, label, key), real=True)
                   for label in labels for key in self.joint_speed_labels[label]]
        self.twins = RealTwins()
        t = dynamicsymbols._t
        self.udot = [uk.diff(t) for uk in self.u]
        # The suffixes of the generalized forces' names (the joint models' force_names), and the joint torques.
        self.suffixes = list(root.force_names(robot.stems[BASE])) + [
            name for label in labels for name in robot.frame(label).joint.force_names(robot.stems[label])]
        self.GAM = [torque for label in labels for torque in joint_torques(robot, label)]
        # Program symbols of u and u'.
        if self.floating:
            self.speed_symbols = list(BASE_VELOCITY) + list(robot.qd)
            self.acceleration_symbols = list(BASE_ACCELERATION) + list(robot.qdd)
            state = [robot.q, QUATERNION, robot.qd, BASE_VELOCITY, robot.qdd, BASE_ACCELERATION]
        else:
            self.speed_symbols, self.acceleration_symbols = list(robot.qd), list(robot.qdd)
            state = [robot.q, robot.qd, robot.qdd]
        # A floating base has no known motion: W0 .. VP0 of robot.base are not used.
        self.moving = moving_base(robot) and not self.floating
        self.inputs = program_inputs(robot, state, DYNAMIC_NAMES, base=True)
        check_masses(robot)

    # ------------------------------------------------ stages, built on first access

    @functools.cached_property
    def recursion(self) -> KinematicRecursion:
        """Stage 1: the :class:`~kanerobot.dynamics.kane.recursion.KinematicRecursion` (the kinematic program)."""
        return KinematicRecursion(self)

    @functools.cached_property
    def mechanics(self) -> Mechanics:
        """Stage 2: the :class:`~kanerobot.dynamics.kane.mechanics.Mechanics` objects and KanesMethod's equations."""
        return Mechanics(self, self.recursion)

    kinematics = _staged("recursion", "program")
    IG = _staged("recursion", "IG")
    N = _staged("mechanics", "N")
    frames = _staged("mechanics", "frames")
    origins = _staged("mechanics", "origins")
    centres = _staged("mechanics", "centres")
    bodies = _staged("mechanics", "bodies")
    loads = _staged("mechanics", "loads")
    load_groups = _staged("mechanics", "load_groups")
    kanes_method = _staged("mechanics", "kanes_method")
    fr = _staged("mechanics", "fr")
    frstar = _staged("mechanics", "frstar")
    mass_matrix_kane = _staged("mechanics", "mass_matrix_kane")
    forcing = _staged("mechanics", "forcing")

    @property
    def real_symbols(self):
        """The real twins used in the mechanics objects, by name."""
        return self.twins.symbols

    def real(self, expr):
        """``expr`` with every symbol replaced by its real twin (the symbols of
        the mechanics objects; see :attr:`real_symbols`)."""
        return self.twins.real(expr)

    def output_names(self):
        """Names the models output: no intermediate variable may take them
        (the compound angle ``C23`` would otherwise take the Coriolis entry's name)."""
        n, labels = self.n, self.suffixes
        names = set()
        for prefix in ("A", "C"):
            names |= {name for row in matrix_entry_names(prefix, (n, n)) for name in row}
        for prefix in ("JVT", "JWT"):
            names |= {name for row in matrix_entry_names(prefix, (n, 3)) for name in row}
        for prefix in ("GAM", "Q", "H", "HV", "a", "c"):
            names |= {f"{prefix}{label}" for label in labels}
        return names

    def generalized_active_forces(self, loads):
        """``Fr`` of ``loads`` alone (a list of (Point or ReferenceFrame,
        Vector)), formed by a KanesMethod on the same frames and speeds."""
        return self.mechanics.generalized_active_forces(loads)

    def fr_group(self, name):
        """``Fr`` of one load group: ``torque``, ``friction``, ``gravity`` or ``wrench``
        (:meth:`~kanerobot.dynamics.kane.mechanics.Mechanics.fr_group`)."""
        return self.mechanics.fr_group(name)

    # ------------------------------------------------ the two paths

    @functools.cached_property
    def nested_models(self) -> NestedModels:
        """The nested path: :class:`~kanerobot.dynamics.kane.nested.NestedModels`."""
        return NestedModels(self)

    @functools.cached_property
    def kanes_method_models(self) -> KanesMethodModels:
        """The KanesMethod path: :class:`~kanerobot.dynamics.kane.kanes_method.KanesMethodModels`."""
        return KanesMethodModels(self)

    @property
    def nested(self):
        """The :class:`~kanerobot.dynamics.kane.nested.NestedKane` builder of this system's order-n programs."""
        return self.nested_models.builder

    def models(self, source: str = "nested") -> KaneModels:
        """The path of ``source``: ``"nested"`` (Kane's equations summed from the leaves to the
        root) or ``"kanes_method"`` (read off KanesMethod's ``mass_matrix`` and ``forcing``)."""
        if source == "nested":
            return self.nested_models
        if source == "kanes_method":
            return self.kanes_method_models
        raise KaneRobotError(f"unknown source {source!r}: 'nested' or 'kanes_method'")

    def program(self, name: str, source: str = "nested") -> Program:
        """The program of model ``name`` (one of :data:`~kanerobot.dynamics.kane.support.MODELS`), derived once.

        Parameters
        ----------
        name : str
            ``"inverse_dynamics"``, ``"mass_matrix"``, ``"h"``, ``"gravity"``
            or ``"coriolis_matrix"``.
        source : {"nested", "kanes_method"}, optional
            ``"nested"`` (the default, what :func:`kanerobot.derive` and the
            numeric functions and code exports use): Kane's equations summed
            from the leaves to the root (docs/theory/kane.md).  ``"kanes_method"``:
            the same models read off KanesMethod's ``mass_matrix`` and
            ``forcing``, an independent path kept for cross-checks (larger
            programs).  Both serve a floating robot (the free flyer's six
            speeds first).
        """
        if name not in MODELS:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(MODELS)}")
        return self.models(source).program(name)

    # The models of the path of ``source`` (see KaneModels for each).

    def inverse_dynamics(self, source="nested"):
        """:meth:`KaneModels.inverse_dynamics <kanerobot.dynamics.kane.models.KaneModels.inverse_dynamics>`: outputs ``GAM<label>``."""
        return self.models(source).inverse_dynamics()

    def h(self, source="nested"):
        """:meth:`KaneModels.h <kanerobot.dynamics.kane.models.KaneModels.h>`: outputs ``GAM<label>``."""
        return self.models(source).h()

    def gravity(self, source="nested"):
        """:meth:`KaneModels.gravity <kanerobot.dynamics.kane.models.KaneModels.gravity>`: outputs ``Q<label>``."""
        return self.models(source).gravity()

    def mass_matrix(self, source="nested"):
        """:meth:`KaneModels.mass_matrix <kanerobot.dynamics.kane.models.KaneModels.mass_matrix>`: outputs ``A<i><j>``."""
        return self.models(source).mass_matrix()

    def velocity_forces(self, source="nested"):
        """:meth:`KaneModels.velocity_forces <kanerobot.dynamics.kane.models.KaneModels.velocity_forces>`: outputs ``HV<label>``."""
        return self.models(source).velocity_forces()

    def coriolis_matrix(self, source="nested"):
        """:meth:`KaneModels.coriolis_matrix <kanerobot.dynamics.kane.models.KaneModels.coriolis_matrix>`: outputs ``C<i><j>``."""
        return self.models(source).coriolis_matrix()

    def kanes_method_program(self):
        """KanesMethod's own ``mass_matrix`` and ``forcing`` as one program
        (:meth:`~kanerobot.dynamics.kane.kanes_method.KanesMethodModels.kanes_method_program`)."""
        return self.kanes_method_models.kanes_method_program()

    def rhs_terms(self, frames=None):
        """The right-hand side of ``A u' + C u + Q = F`` split as the seed's ``kanesRHS``.

        Parameters
        ----------
        frames : sequence of str, optional
            Frames at whose origin the environment applies a force and a
            moment, both expressed in that frame (default: the leaves of
            the tree, ``('10l', '10r')`` for Krang).

        Returns
        -------
        KaneRHS
            See :class:`~kanerobot.dynamics.kane.rhs.KaneRHS`.  Every term is
            ``Fr`` of its loads, formed by a KanesMethod.
        """
        return system_rhs_terms(self, frames)
