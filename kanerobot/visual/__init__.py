"""Views of robots: the numeric geometry of a drawing (:mod:`~kanerobot.visual.skeleton`),
static 3D views (:mod:`~kanerobot.visual.draw`), animations of simulations
(:mod:`~kanerobot.visual.animate`) and the figures of simulations and
cross-validations (:mod:`~kanerobot.visual.figures`).

Only :mod:`~kanerobot.visual.skeleton` is imported here: the others need
matplotlib (the ``plot`` extra) and are imported where they are used.
"""

from kanerobot.visual.skeleton import Scene, Skeleton, skeleton

__all__ = ["Scene", "Skeleton", "skeleton"]
