"""Inverse geometric models: Paul, Pieper, the general 6R method, a numeric fallback and closed-loop solving (SYMORO+ section 3.3).

>>> import kanerobot as kr
>>> arm = kr.load(kr.frames_path("planar2"))
>>> T = kr.geometry.numeric_transform(arm, "0", "2", {"L1": 1.0})([0.5, -0.25])
>>> [q.round(9).tolist() for q in kr.inverse_geometric(arm, T, {"L1": 1.0})]
[[0.5, -0.25]]

Modules: :mod:`~kanerobot.igm.equations` (the equation types 1 to 8),
:mod:`~kanerobot.igm.paul` (equations of a chain, step-by-step solving),
:mod:`~kanerobot.igm.pieper` (decoupled structures),
:mod:`~kanerobot.igm.program` (numeric evaluation of every branch),
:mod:`~kanerobot.igm.general6r` (general 6R, Raghavan-Roth / Manocha-Canny),
:mod:`~kanerobot.igm.numeric` (damped least squares),
:mod:`~kanerobot.igm.redundant` (redundant chains: one solution, a posture in the null space),
:mod:`~kanerobot.igm.loops` (closed loops), :mod:`~kanerobot.igm.export`
(python, C, MATLAB code) and :mod:`~kanerobot.igm.api`.
"""

from kanerobot.igm.api import InverseGeometricModel, Solutions, derive_igm, inverse_geometric
from kanerobot.igm.export import generate_igm
from kanerobot.igm.loops import all_loop_closures
from kanerobot.igm.redundant import RedundantChain, RedundantSolution, redundant_ik

__all__ = [
    "InverseGeometricModel",
    "RedundantChain",
    "RedundantSolution",
    "Solutions",
    "all_loop_closures",
    "derive_igm",
    "generate_igm",
    "inverse_geometric",
    "redundant_ik",
]
