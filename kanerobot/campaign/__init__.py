"""Campaigns: many simulations of a controller on plants drawn from the parameters' uncertainty.

:func:`campaign` runs them in this process, in local processes or on a
dask cluster (:mod:`.schedulers`), or all at once on JAX (:mod:`.batched`), draws each run's plant from its own
generator (:mod:`.distributions`), measures each run (:mod:`.runner`) and
keeps the table on disk as runs complete (:mod:`.store`), so that an
interrupted campaign resumes where it stopped.

Needs the ``cluster`` extra (pandas, pyarrow, dask, distributed):
``pip install 'kanerobot[cluster]'``; ``import kanerobot`` does not import
them.
"""

from kanerobot.campaign.batched import Jax
from kanerobot.campaign.distributions import MultivariateNormal, Normal, Uniform
from kanerobot.campaign.driver import campaign
from kanerobot.campaign.runner import METRICS
from kanerobot.campaign.schedulers import Dask, InProcess, Processes

__all__ = ["METRICS", "Dask", "InProcess", "Jax", "MultivariateNormal", "Normal", "Processes", "Uniform", "campaign"]
