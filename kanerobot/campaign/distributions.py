"""What a campaign draws: plant parameters, initial states and references.

:func:`~kanerobot.campaign.campaign` takes ``sample``, a dict ``{name:
distribution}`` or a callable ``sample(rng) -> {name: value}``.  The names
are the model's parameters (``"ZZ2"``, ``"M6"``) and three reserved ones:

- ``"q0"``: the initial configuration (the rates start at rest);
- ``"x0"``: the whole initial state ``(q, qd)``;
- ``"target"``: where the reference goes, one value per controlled
  coordinate (:func:`kanerobot.control.controlled_coordinates`): the
  controller tracks a quintic from the start to it over the run.

A distribution is

- ``(low, high)``: uniform (:class:`Uniform`); ``low`` and ``high`` are
  numbers, or arrays for the reserved names (a number is broadcast);
- :class:`Normal` ``(mean, std)``, per entry;
- :class:`MultivariateNormal` ``(names, mean, covariance)``: several
  parameters at once, correlated, under a key of your choice; built from
  :func:`kanerobot.identify`'s result by
  :meth:`MultivariateNormal.from_identification`.

Run ``i`` draws from its own generator ``numpy.random.default_rng([seed,
i])``, the entries in the order of the dict, so that its plant does not
depend on the scheduler nor on which runs came before.

Examples
--------
>>> import numpy as np
>>> draw = Sampler({"ZZ2": (0.9, 1.1), "target": Normal(0.5, 0.1)}, ["ZZ2", "L1"], {"target": 2})
>>> a, b = draw(7, 3), draw(7, 3)
>>> a == b, sorted(a.parameters), a.target.shape
(True, ['ZZ2'], (2,))
>>> Sampler({"ZZ9": (0, 1)}, ["ZZ2", "L1"])
Traceback (most recent call last):
  ...
kanerobot.errors.KaneRobotError: sample: 'ZZ9' is not a parameter of the model (its parameters: L1, ZZ2) nor one of q0, x0, target
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["RESERVED", "Draw", "MultivariateNormal", "Normal", "Sampler", "Uniform"]

#: Names of ``sample`` that are not model parameters.
RESERVED = ("q0", "x0", "target")


def _array(value, what):
    """``value`` as a finite float or float array; an error naming ``what`` otherwise."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise KaneRobotError(f"{what} must be numbers, got {value!r}") from None
    if not np.all(np.isfinite(array)):
        raise KaneRobotError(f"{what} must be finite numbers, got {value!r}")
    return array


def _value(array):
    """A float for a 0-d array, the array otherwise."""
    return float(array) if array.ndim == 0 else array


class Uniform:
    """Uniform on ``[low, high]`` (numbers or arrays of one shape).

    Examples
    --------
    >>> round(Uniform(1.0, 2.0).draw(np.random.default_rng(0)), 12)
    1.636961687321
    >>> Uniform(2.0, 1.0)
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: uniform (low, high) = (2, 1): low 2 is above high 1: give (low, high) with low <= high
    """

    def __init__(self, low, high, what="uniform"):
        self.low, self.high = _array(low, f"{what} low"), _array(high, f"{what} high")
        try:
            shape = np.broadcast_shapes(self.low.shape, self.high.shape)
        except ValueError:
            raise KaneRobotError(f"{what} (low, high): shapes {self.low.shape} and {self.high.shape} differ") from None
        self.low, self.high = np.broadcast_to(self.low, shape), np.broadcast_to(self.high, shape)
        bad = self.low > self.high
        if bad.any():
            k = np.unravel_index(int(np.argmax(bad)), shape) if shape else ()
            lo, hi = float(self.low[k]), float(self.high[k])
            where = f" (entry {k[0]})" if shape else ""
            raise KaneRobotError(
                f"{what} (low, high) = ({_text(low)}, {_text(high)}): low {lo:g} is above high {hi:g}{where}: give (low, high) with low <= high"
            )

    def draw(self, rng):
        return _value(np.asarray(rng.uniform(self.low, self.high)))

    def describe(self):
        return f"uniform({_text(self.low)}, {_text(self.high)})"


class Normal:
    """Normal of ``mean`` and standard deviation ``std`` per entry (numbers or arrays).

    Examples
    --------
    >>> Normal([0.0, 1.0], 0.0).draw(np.random.default_rng(0)).tolist()
    [0.0, 1.0]
    """

    def __init__(self, mean, std, what="normal"):
        self.mean, self.std = _array(mean, f"{what} mean"), _array(std, f"{what} std")
        try:
            shape = np.broadcast_shapes(self.mean.shape, self.std.shape)
        except ValueError:
            raise KaneRobotError(f"{what} (mean, std): shapes {self.mean.shape} and {self.std.shape} differ") from None
        if np.any(self.std < 0):
            raise KaneRobotError(f"{what}: standard deviation {_text(std)} is negative: give std >= 0")
        self.shape = shape

    def draw(self, rng):
        return _value(self.mean + self.std * rng.standard_normal(self.shape))

    def describe(self):
        return f"normal({_text(self.mean)}, {_text(self.std)})"


class MultivariateNormal:
    """Correlated parameters: ``names`` drawn from ``N(mean, covariance)``.

    Parameters
    ----------
    names : sequence of str
        Model parameters.
    mean : array_like, shape (n,)
    covariance : array_like, shape (n, n)
        Symmetric positive definite (checked by a Cholesky factorisation,
        which also draws: ``mean + L z``).
    fixed : mapping, optional
        Parameters set along with each draw (``from_identification`` sets
        the standard parameters regrouped into the base ones to 0).

    Examples
    --------
    >>> d = MultivariateNormal(["ZZ1", "ZZ2"], [1.0, 2.0], [[0.04, 0.01], [0.01, 0.09]])
    >>> sorted(d.draw(np.random.default_rng(0)))
    ['ZZ1', 'ZZ2']
    >>> MultivariateNormal(["ZZ1", "ZZ2"], [1.0, 2.0], [[1.0, 2.0], [2.0, 1.0]])
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: covariance of ZZ1, ZZ2 is not positive definite (smallest eigenvalue -1): give a symmetric positive definite matrix
    """

    def __init__(self, names, mean, covariance, fixed=None):
        self.names = [str(name) for name in names]
        self.mean = _array(mean, "mean").reshape(-1)
        self.covariance = _array(covariance, "covariance")
        n = len(self.names)
        if self.mean.shape != (n,) or self.covariance.shape != (n, n):
            raise KaneRobotError(
                f"a multivariate normal of {n} parameters needs a mean of {n} values and an ({n}, {n}) covariance; "
                f"got {self.mean.shape} and {self.covariance.shape}"
            )
        if not np.allclose(self.covariance, self.covariance.T, rtol=1e-10, atol=0.0):
            raise KaneRobotError(f"covariance of {', '.join(self.names)} is not symmetric: give a symmetric positive definite matrix")
        try:
            self.factor = np.linalg.cholesky(self.covariance)
        except np.linalg.LinAlgError:
            smallest = float(np.linalg.eigvalsh(self.covariance)[0])
            raise KaneRobotError(
                f"covariance of {', '.join(self.names)} is not positive definite (smallest eigenvalue {smallest:.3g}): "
                "give a symmetric positive definite matrix"
            ) from None
        self.fixed = {str(k): float(v) for k, v in dict(fixed or {}).items()}

    @classmethod
    def from_identification(cls, result):
        """The plants an identification allows: its base parameters from ``N(estimate, covariance)``.

        Each base parameter is carried by the standard parameter of its
        column (``result.columns``: ``ZZ2`` carries ``ZZ2R``); the standard
        parameters regrouped into it are set to 0, so that the model with
        these values has exactly the base parameters drawn.  Such values are
        not those of real bodies: the plants are bound with
        ``physical=False``.

        Parameters
        ----------
        result : kanerobot.identification.IdentificationResult
        """
        parameters = list(result.regressors.parameters)
        names = [parameters[c] for c in result.columns]
        fixed = {name: 0.0 for name in parameters if name not in names}
        mean = [result.ls_estimates[name] for name in result.names]
        return cls(names, mean, result.covariance, fixed)

    def draw(self, rng):
        x = self.mean + self.factor @ rng.standard_normal(len(self.names))
        return dict(self.fixed) | dict(zip(self.names, x.tolist()))

    def describe(self):
        # the mean and covariance hashed: a restart with another identification's result is another campaign
        numbers = hashlib.sha256(np.concatenate([self.mean, self.covariance.reshape(-1)]).tobytes()).hexdigest()[:16]
        return f"multivariate normal of {', '.join(self.names)} ({numbers})"


def _text(value):
    array = np.asarray(value)
    return f"{float(array):g}" if array.ndim == 0 else "[" + ", ".join(f"{float(v):g}" for v in array.reshape(-1)) + "]"


def as_distribution(name, spec):
    """The distribution of ``sample[name]``: (low, high), a Normal, Uniform or MultivariateNormal, or an identification result."""
    if isinstance(spec, (Uniform, Normal, MultivariateNormal)):
        return spec
    if hasattr(spec, "covariance") and hasattr(spec, "regressors"):
        return MultivariateNormal.from_identification(spec)
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        return Uniform(spec[0], spec[1], what=f"sample[{name!r}]")
    raise KaneRobotError(
        f"sample[{name!r}] = {spec!r}: give (low, high) for a uniform draw, Normal(mean, std), "
        "MultivariateNormal(names, mean, covariance) or an identification result"
    )


def _sized(dist, size, name):
    """``dist`` of the reserved entry ``name`` drawing ``size`` numbers (one number given is broadcast)."""
    if size is None or isinstance(dist, MultivariateNormal):
        return dist
    dist = copy.copy(dist)  # sized here, not in the user's object (one Normal may serve q0 and target)
    if isinstance(dist, Uniform):
        shape = dist.low.shape
        if shape not in ((), (1,), (size,)):
            raise KaneRobotError(f"sample[{name!r}] has {shape[0]} values; {name} has {size}")
        dist.low, dist.high = np.broadcast_to(dist.low, (size,)), np.broadcast_to(dist.high, (size,))
    else:
        if dist.shape not in ((), (1,), (size,)):
            raise KaneRobotError(f"sample[{name!r}] has {dist.shape[0]} values; {name} has {size}")
        dist.shape = (size,)
    return dist


@dataclass
class Draw:
    """What one run draws: parameter values and, when drawn, ``q0``, ``x0``, ``target``."""

    parameters: dict = field(default_factory=dict)
    q0: np.ndarray | None = None
    x0: np.ndarray | None = None
    target: np.ndarray | None = None

    def __eq__(self, other):
        same = lambda a, b: (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))  # noqa: E731
        return self.parameters == other.parameters and all(same(getattr(self, k), getattr(other, k)) for k in RESERVED)

    def columns(self):
        """The draw as table columns: ``param.<name>``, ``q0.<k>``, ``x0.<k>``, ``target.<k>``."""
        out = {f"param.{name}": float(value) for name, value in self.parameters.items()}
        for key in RESERVED:
            value = getattr(self, key)
            if value is not None:
                out.update({f"{key}.{k}": float(v) for k, v in enumerate(value)})
        return out


class Sampler:
    """Run ``i``'s :class:`Draw` from ``default_rng([seed, i])``.

    Parameters
    ----------
    sample : dict or callable
        See the module's notes.
    parameters : sequence of str
        The model's parameters (the names ``sample`` may give).
    sizes : mapping, optional
        Lengths of ``q0``, ``x0`` and ``target``: a distribution of one
        number given for them draws that many entries, independently.
    """

    def __init__(self, sample, parameters, sizes=None):
        self.parameters = set(parameters)
        self.sizes = dict(sizes or {})
        self.callable = callable(sample) and not isinstance(sample, (Uniform, Normal, MultivariateNormal))
        if (hasattr(sample, "covariance") and hasattr(sample, "regressors")) or isinstance(sample, MultivariateNormal):
            sample = {"identified": sample}
        if self.callable:
            self.sample, self.entries = sample, None
            return
        if not isinstance(sample, dict):
            raise KaneRobotError(f"sample must be a dict {{name: (low, high) or distribution}} or a function sample(rng) -> values; got {sample!r}")
        self.sample = sample
        self.entries = [(str(name), _sized(as_distribution(name, spec), self.sizes.get(name), name)) for name, spec in sample.items()]
        for name, dist in self.entries:
            self._check_names(dist.names if isinstance(dist, MultivariateNormal) else [name])

    def _check_names(self, names):
        for name in names:
            if name not in self.parameters and name not in RESERVED:
                known = ", ".join(sorted(self.parameters))
                raise KaneRobotError(
                    f"sample: {name!r} is not a parameter of the model (its parameters: {known}) nor one of {', '.join(RESERVED)}"
                )

    def __call__(self, seed, i):
        rng = np.random.default_rng([seed, i])
        if self.callable:
            drawn = self.sample(rng)
            if not isinstance(drawn, dict):
                raise KaneRobotError(f"sample(rng) must return a dict {{name: value}}, returned {drawn!r}")
            self._check_names(drawn)
        else:
            assert self.entries is not None  # a dict of distributions
            drawn = {}
            for name, dist in self.entries:
                value = dist.draw(rng)
                if isinstance(value, dict):
                    # the fixed names the model has no use for (XX1 of a planar arm) are left out
                    drawn.update({k: v for k, v in value.items() if k in self.parameters or k in dist.names})
                else:
                    drawn[name] = value
        draw = Draw()
        for name, value in drawn.items():
            if name in RESERVED:
                setattr(draw, name, _array(value, f"sample {name!r}").reshape(-1))
            else:
                draw.parameters[str(name)] = float(_array(value, f"sample {name!r}"))
        return draw

    def describe(self):
        """Text that says what is drawn (for the store's record of the campaign)."""
        if self.callable:
            return f"function {getattr(self.sample, '__qualname__', type(self.sample).__name__)}"
        assert self.entries is not None  # a dict of distributions
        return "; ".join(f"{name}: {dist.describe()}" for name, dist in self.entries)
