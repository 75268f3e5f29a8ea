"""One model each, of a fresh :class:`~kanerobot.dynamics.kane.KaneSystem` (the engine modules' functions)."""

from kanerobot.dynamics.kane.system import KaneSystem


def inverse_dynamics(robot):
    """:meth:`KaneSystem.inverse_dynamics` of a fresh system."""
    return KaneSystem(robot).inverse_dynamics()


def coriolis_gravity(robot):
    """:meth:`KaneSystem.h` of a fresh system."""
    return KaneSystem(robot).h()


def gravity_torques(robot):
    """:meth:`KaneSystem.gravity` of a fresh system."""
    return KaneSystem(robot).gravity()


def mass_matrix(robot):
    """:meth:`KaneSystem.mass_matrix` of a fresh system."""
    return KaneSystem(robot).mass_matrix()


def coriolis_matrix(robot):
    """:meth:`KaneSystem.coriolis_matrix` of a fresh system."""
    return KaneSystem(robot).coriolis_matrix()


def rhs_terms(robot, frames=None):
    """:meth:`KaneSystem.rhs_terms` of a fresh system."""
    return KaneSystem(robot).rhs_terms(frames)


# Every engine module names its models as kanerobot.dynamics.model.MODELS does; the
# first names above stay for existing code.
h = coriolis_gravity
gravity = gravity_torques
