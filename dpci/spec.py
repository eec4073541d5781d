"""The release specification: one typed, frozen description of a private release.

A :class:`ReleaseSpec` names everything that decides a release -- the method, the privacy notion and
budget, the split (one share per step the method declares), the loss with its parameters, c, alpha,
the Monte Carlo size m and the randomness -- and everything else is derived from it:

* ``method.measure(spec)`` (:meth:`dpci.methods.Method.measure`) gives its privacy map (the ledger's
  charge) and the function that runs it;
* :attr:`ReleaseSpec.key` is its identity, the one key of the ledger's release records and of every
  cache (the library's, the app's pages');
* :meth:`ReleaseSpec.to_json` / :meth:`ReleaseSpec.from_json` make it data (the release record the
  ledger stores), and ``repr(spec)`` is the Python call that makes it (the app's "copy as Python" and
  the exported release script print it).

Examples
--------
>>> from dpci import ReleaseSpec, get_loss
>>> spec = ReleaseSpec(method="output", privacy="zcdp", budget=0.5, loss=get_loss("huber", h=0.3))
>>> spec.split  # the method's default (the paper's Table 2), written out
(0.9, 0.05, 0.05)
>>> ReleaseSpec.from_json(spec.to_json()) == spec
True
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from dataclasses import dataclass, field, fields, replace
from typing import Any

from . import methods
from .intervals import MAX_SAMPLES, MIN_SAMPLES, check_alpha, check_count
from .ledger.hooks import admit_release, is_public_seed
from .losses import LOSSES, LogisticLoss, Loss, coerce_loss, get_loss, loss_call, loss_params, loss_to_dict
from .methods import PrivateRelease
from .noise import check_random_state, check_randomness_kind
from .solver import margin_rows
from .validation import check_signed_parts

__all__ = ["SPEC_VERSION", "ReleaseSpec", "check_spec", "keyword_spec", "release_spec"]

SPEC_VERSION = 1  # the JSON layout; a newer one is refused with a clear message
POST_PROCESSING = ("alpha", "n_samples")  # fields that never change a release's noise


def normal_loss(loss):
    """A registered loss rebuilt from its name and parameters as plain floats (``HuberLoss(np.float32(0.3))``
    and ``HuberLoss(1)`` become ``HuberLoss(0.3)`` and ``HuberLoss(1.0)``), so its JSON, its key and its
    printed call are those of the same loss; a loss not registered is kept as it is."""
    if LOSSES.get(loss.name) is type(loss):
        return get_loss(loss.name, **loss_params(loss))
    return loss


def _seed(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(
            f"seed must be None (fresh randomness: a private release) or a non-negative integer (a public "
            f"seed: reproducible, NOT private), got {value!r}. Pass a numpy Generator to the release "
            "function instead if you keep your own randomness."
        )
    return int(value)


@dataclass(frozen=True, repr=False)
class ReleaseSpec:
    """Everything that decides one private release (see the module docstring).

    Parameters
    ----------
    method : str
        A registered method (:func:`dpci.methods.available`; the paper's are "objective" and "output").
    privacy : {"pure", "zcdp"}
        The privacy notion: ``budget`` is epsilon for pure DP, rho for zCDP.
    budget : float
        The total budget of the release (Proposition 4 composes its steps).
    split : tuple of float, optional
        One positive share per step of the method (:attr:`dpci.methods.Method.steps`), summing to 1; a
        mapping step name -> share is accepted too. None: the method's default (the paper's Table 2),
        written out, so the specification always states it.
    loss : Loss or str
        The margin loss with its parameters (``get_loss("huber", h=0.3)``); a registered name takes
        the loss's default parameters.
    c : float
        The regularisation coefficient of Eq. 3.1.
    alpha : float
        1 - the confidence level.
    n_samples : int
        The Monte Carlo samples m of Algorithms 3 and 5.
    seed : int, optional
        None: fresh randomness (a private release, charged by the ledger). An integer is a public seed:
        the release is reproducible and NOT private (the ledger notes it, never counts it as privacy).

    Raises
    ------
    ValueError
        For an unknown method or notion, a budget that is not positive, a split of the wrong length or
        one that does not sum to 1, an alpha outside (0, 1) or an m outside [100, 10^6].

    Examples
    --------
    >>> spec = ReleaseSpec(method="output", privacy="zcdp", budget=0.5, loss=get_loss("huber", h=0.3))
    >>> spec
    ReleaseSpec(method='output', privacy='zcdp', budget=0.5, split=(0.9, 0.05, 0.05), loss=get_loss('huber', h=0.3), c=0.001, alpha=0.05, n_samples=10000, seed=None)
    >>> spec.steps
    {'coefficients': 0.9, 'hessian': 0.05, 'covariance': 0.05}
    >>> ReleaseSpec.from_json(spec.to_json()) == spec
    True
    >>> spec.measure().spend.rho  # what the ledger charges
    0.5
    """

    method: str = "objective"
    privacy: str = "pure"
    budget: float = 1.0
    split: Any = None
    loss: Loss = field(default_factory=LogisticLoss)
    c: float = 1e-3
    alpha: float = 0.05
    n_samples: int = 10_000
    seed: int | None = None

    def __post_init__(self):
        method = methods.get(self.method)
        split = self.split
        if isinstance(split, dict):
            missing = [s for s in method.steps if s not in split]
            if missing or len(split) != len(method.steps):
                raise ValueError(
                    f"split for method {method.name!r} names its steps {list(method.steps)}; got {list(split)}."
                )
            split = [split[s] for s in method.steps]
        alloc = method.allocate(self.budget, split, self.privacy)  # validates notion, budget and split
        set_ = object.__setattr__
        set_(self, "method", method.name)
        set_(self, "budget", alloc.budget)
        set_(self, "split", tuple(alloc.shares))
        set_(self, "loss", normal_loss(coerce_loss(self.loss)))
        c = float(self.c)
        if not (math.isfinite(c) and c > 0):
            raise ValueError(f"c must be a positive, finite number, got {self.c!r}.")
        set_(self, "c", c)
        set_(self, "alpha", check_alpha(self.alpha))
        set_(
            self,
            "n_samples",
            check_count("n_samples", self.n_samples, MIN_SAMPLES, MAX_SAMPLES, "the paper uses 10,000"),
        )
        set_(self, "seed", _seed(self.seed))

    # --- derived --------------------------------------------------------------------------------
    @property
    def steps(self) -> dict[str, float]:
        """The split by step name, in the method's order."""
        return dict(zip(methods.get(self.method).steps, self.split))

    @property
    def private(self) -> bool:
        """False for a public seed (a reproducible, not private, release)."""
        return self.seed is None

    def measure(self):
        """The method's measurement of this specification (:meth:`dpci.methods.Method.measure`)."""
        return methods.get(self.method).measure(self)

    @property
    def key(self) -> str:
        """The specification's identity: a SHA-256 of its canonical JSON (the key of results' caches)."""
        return hashlib.sha256(self.to_json(indent=None).encode()).hexdigest()

    @property
    def noise_key(self) -> str:
        """The identity of the release's noise: the key without alpha and m, which only post-process the
        released quantities (an interval at another level, or from more Monte Carlo draws, costs no
        budget). The ledger names a stored release by it, so showing it at another level is free."""
        data = {k: v for k, v in self.to_dict().items() if k not in POST_PROCESSING}
        return hashlib.sha256(json.dumps(data, separators=(",", ":")).encode()).hexdigest()

    def replace(self, **changes) -> ReleaseSpec:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    # --- as data ----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The specification as JSON-ready data: the split by step name, the loss with its parameters."""
        return {
            "spec_version": SPEC_VERSION,
            "method": self.method,
            "privacy": self.privacy,
            "budget": self.budget,
            "split": self.steps,
            "loss": loss_to_dict(self.loss),
            "c": self.c,
            "alpha": self.alpha,
            "n_samples": self.n_samples,
            "seed": self.seed,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """Canonical JSON: fields in a fixed order (the split in the method's step order, the loss's
        name then its parameters), floats written to round-trip exactly."""
        separators = (",", ":") if indent is None else None
        return json.dumps(self.to_dict(), indent=indent, separators=separators, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data) -> ReleaseSpec:
        """The specification of :meth:`to_dict`; a ValueError says what is missing or unusable."""
        if not isinstance(data, dict):
            raise ValueError(f"a release specification is a JSON object, got {type(data).__name__}.")
        version = data.get("spec_version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise ValueError(
                f"this release specification has layout version {version}; this dpci reads {SPEC_VERSION}. "
                "Upgrade dpci to read it."
            )
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - {"spec_version"})
        if unknown:
            raise ValueError(f"unknown field(s) in a release specification: {', '.join(unknown)}.")
        values = {k: v for k, v in data.items() if k in known}
        loss = values.get("loss", "logistic")
        if isinstance(loss, dict):
            params = dict(loss)
            values["loss"] = get_loss(params.pop("name", "logistic"), **params)
        return cls(**values)

    @classmethod
    def from_json(cls, text: str) -> ReleaseSpec:
        """The specification written by :meth:`to_json`."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"not a release specification (JSON): {err}.") from None
        return cls.from_dict(data)

    def __repr__(self) -> str:
        """The Python call that makes this specification (with ``from dpci import ReleaseSpec, get_loss``)."""
        args = [
            f"method={self.method!r}",
            f"privacy={self.privacy!r}",
            f"budget={self.budget!r}",
            f"split={self.split!r}",
            f"loss={loss_call(self.loss)}",
            f"c={self.c!r}",
            f"alpha={self.alpha!r}",
            f"n_samples={self.n_samples!r}",
            f"seed={self.seed!r}",
        ]
        return f"ReleaseSpec({', '.join(args)})"

    def to_python(self, data: str = "X, y") -> str:
        """A script that makes this release: the imports, the specification and the call on ``data``."""
        return (
            "from dpci import ReleaseSpec, get_loss\n\n"
            f"spec = {self!r}\n"
            f"release = spec.release({data})\n"
            "print(release.conf_int)\n"
        )

    # --- running -----------------------------------------------------------------------------------
    def release(self, X, y, random_state=None, closed_form: bool = True):
        """The release on (X, y) (rows in the unit ball, labels -1/+1), admitted by the active ledger
        before its noise is drawn. ``random_state`` (a Generator you keep secret) overrides ``seed``."""
        X, y, divisors = check_signed_parts(X, y)
        return release_spec(X, y, self, closed_form=closed_form, random_state=random_state, divisors=divisors)


def check_spec(spec, who: str) -> ReleaseSpec:
    """``spec`` if it is a :class:`ReleaseSpec`; else a TypeError that says how to make one (an
    experiment takes the release it judges as a spec, not its loss and keywords)."""
    if not isinstance(spec, ReleaseSpec):
        raise TypeError(
            f"{who} takes the release it runs as a dpci.ReleaseSpec, got {type(spec).__name__}: make one "
            "with ReleaseSpec(method, privacy, budget, split, loss=..., c=..., alpha=..., n_samples=...)."
        )
    return spec


def keyword_spec(
    loss, *, mechanism, privacy, budget, split, c, alpha, n_samples, random_state
) -> tuple[ReleaseSpec, Any]:
    """The specification of the keyword API (:func:`dpci.private_confidence_intervals`, the estimators,
    :func:`dpci.teaching.walkthrough`; their defaults are the fields' defaults above) and the randomness
    to draw from: an integer ``random_state`` is the spec's public seed; a Generator (randomness the
    caller keeps) is passed on beside it (the spec itself then says fresh randomness)."""
    seed = random_state if is_public_seed(random_state) else None
    spec = ReleaseSpec(mechanism, privacy, budget, split, loss, c, alpha, n_samples, seed)
    return spec, (None if seed is not None else random_state)


def release_spec(X, y, spec: ReleaseSpec, closed_form=True, random_state=None, divisors=None) -> PrivateRelease:
    """The release a specification describes, on validated (X, y): measured by its method, admitted by
    the active ledger (charged, or noted as not private for a public seed) and only then drawn.
    ``random_state`` (None, a Generator or SeedSequence the caller keeps) overrides ``spec.seed``.
    ``divisors``: X's :func:`~dpci.validation.unit_ball_divisors` when its rows just outside the unit
    ball are not projected yet (they are as the margin rows are built)."""
    measurement = spec.measure()
    measurement.check(X.shape[0])  # an invalid c raises here, before any charge
    A = margin_rows(X, y, divisors)
    randomness = check_randomness_kind(spec.seed if random_state is None else random_state)  # before the charge
    record = {"function": "private_confidence_intervals", **spec.to_dict()}
    what = f"release: {measurement.method.describe(spec.privacy)}, budget {spec.budget:g}"
    admit_release(A, measurement.spend, record, randomness, what)
    rng = check_random_state(randomness)  # the noise is drawn only after the ledger admitted it
    return measurement.run(A, rng, closed_form=closed_form)
