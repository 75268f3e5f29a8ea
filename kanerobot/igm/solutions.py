"""The result of an inverse geometric model: the joint vectors solving a pose.

Its own module so that every solver (:mod:`~kanerobot.igm.api`,
:mod:`~kanerobot.igm.general6r`) can return it without importing another.
"""

__all__ = ["Solutions"]


class Solutions(list):
    """The joint vectors solving a pose (a list of numpy arrays, ``robot.joint_labels`` order).

    Attributes
    ----------
    families : list of tuple of str
        For each solution the joints that may take any value (a singular
        configuration: the solution is one member of a family, given with
        those joints at 0); empty tuples for isolated solutions.
    method : str
        The method that produced them.
    message : str
        ``'n solutions'``, or why there is none (the pose is out of reach).
    """

    #: general 6R method only (:func:`~kanerobot.igm.general6r.general_6r_inverse` sets it): its elimination is degenerate
    degenerate: bool

    def __init__(self, items=(), families=(), method="", message=""):
        super().__init__(items)
        self.families = list(families)
        self.method = method
        self.message = message or (f"{len(self)} solution(s)" if self else "no solution: the pose is out of reach")

    @property
    def singular(self):
        """True when some solution belongs to a family."""
        return any(self.families)
