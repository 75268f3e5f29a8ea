"""Kane's method for serial and tree robots: sympy's KanesMethod, and the models summed in order n.

:class:`KaneSystem` turns a robot (serial or tree, base fixed, moving with
a known motion, or floating: see *Floating base* below) into the objects a
sympy user works with: a
:class:`~sympy.physics.vector.ReferenceFrame` per frame, a
:class:`~sympy.physics.vector.Point` per origin and centre of mass, a
:class:`~sympy.physics.mechanics.RigidBody` per link, the loads, and a
:class:`~sympy.physics.mechanics.KanesMethod` that forms the generalized
active forces ``Fr`` and the generalized inertia forces ``Fr*`` from the
partial velocities (``KanesMethod.kanes_equations``, ``mass_matrix``,
``forcing``).

The dynamic models are :class:`~kanerobot.symbolic.Program` objects with the
output names of the Newton-Euler engine, so that the engines are
interchangeable.  By default (``KaneSystem.program(name)``, which
:func:`kanerobot.derive`, the numeric functions and the code exports use)
they are written by :class:`NestedKane`: Kane's equations with their sums
over bodies taken in a different order, from the leaves of the tree to the
root (below), so that each costs about what a Newton-Euler pass costs.
``KaneSystem.program(name, source="kanes_method")`` reads the same models off
KanesMethod's ``mass_matrix`` and ``forcing`` instead: an independent path,
with larger programs, that the tests compare with the nested one.

Every joint model is taken (:mod:`kanerobot.robot.joints`): a joint's speeds
are generalized speeds, one partial velocity per column of its motion
subspace (a spherical joint's angular velocity and a planar joint's ``VX,
VY, WZ`` in its own frame, a free flyer's twist), and the floating base is
the root joint (:mod:`kanerobot.dynamics.root`).  KanesMethod is given each
joint's configuration derivative as its kinematic equations (a quaternion's
included); a speed that both turns and slides (a screw) is left to the
nested path, and the KanesMethod path says so.

The derivation (notation, Kane's equations, the nested sums K1-K5, B1-B3,
S1-S2, E1, G1-G3, M1-M4, the Coriolis matrix by the seed's ``getAC`` rule,
the floating base as a root joint, costs) is in ``docs/theory/kane.md``.

The modules: :mod:`~kanerobot.dynamics.kane.system` (:class:`KaneSystem`, its
symbols, its two stages and the choice of a path),
:mod:`~kanerobot.dynamics.kane.recursion` (stage 1, the kinematic recursion),
:mod:`~kanerobot.dynamics.kane.mechanics` (stage 2, the mechanics objects and
KanesMethod), :mod:`~kanerobot.dynamics.kane.models` (the interface of a
path, the Coriolis matrix), :mod:`~kanerobot.dynamics.kane.nested` (the
nested path), :mod:`~kanerobot.dynamics.kane.kanes_method` and
:mod:`~kanerobot.dynamics.kane.emit` (the KanesMethod path),
:mod:`~kanerobot.dynamics.kane.rhs` (:class:`KaneRHS`),
:mod:`~kanerobot.dynamics.kane.functions` (one model each) and
:mod:`~kanerobot.dynamics.kane.naive` (the textbook build).
"""

from kanerobot.dynamics.kane.functions import (
    coriolis_gravity,
    coriolis_matrix,
    gravity,
    gravity_torques,
    h,
    inverse_dynamics,
    mass_matrix,
    rhs_terms,
)
from kanerobot.dynamics.kane.kanes_method import KanesMethodModels
from kanerobot.dynamics.kane.models import KaneModels, coriolis_from_velocity_forces
from kanerobot.dynamics.kane.naive import NaiveKane, naive_kanes_method
from kanerobot.dynamics.kane.nested import NestedKane, NestedModels
from kanerobot.dynamics.kane.rhs import KaneRHS
from kanerobot.dynamics.kane.support import BASE_SPEED_LABELS, FLOATING_MODELS, MODELS, check_supported
from kanerobot.dynamics.kane.system import KaneSystem

__all__ = [
    "BASE_SPEED_LABELS",
    "FLOATING_MODELS",
    "MODELS",
    "KaneModels",
    "KaneRHS",
    "KaneSystem",
    "KanesMethodModels",
    "NaiveKane",
    "NestedKane",
    "NestedModels",
    "check_supported",
    "coriolis_from_velocity_forces",
    "coriolis_gravity",
    "coriolis_matrix",
    "gravity",
    "gravity_torques",
    "h",
    "inverse_dynamics",
    "mass_matrix",
    "naive_kanes_method",
    "rhs_terms",
]
