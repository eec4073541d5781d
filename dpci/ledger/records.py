"""A release as it is stored and shown again: its public outputs only, as JSON, and back.

:func:`release_payload` keeps what a release publishes (the private coefficients and matrices, the
interval at each confidence level a reader may ask for, the privacy spent): never the rows, the
non-private fit or the secret randomness. :class:`StoredIntervals` is the same release read back,
with the attributes the tables and figures read (``theta``, ``conf_int``, ``spend``, ``interval``),
so a stored release is drawn exactly as a fresh one, and never draws new noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..accounting import PrivacySpend, StepSpend

LEVELS = (0.8, 0.9, 0.95, 0.99)  # the confidence levels kept with a release (each a post-processing)


def spend_to_dict(spend: PrivacySpend) -> dict:
    """The spend as a stored release keeps it, in the release specification's names (``method``)."""
    return dict(
        privacy=spend.privacy,
        method=spend.mechanism,
        steps=[dict(step=s.step, share=s.share, epsilon=s.epsilon, rho=s.rho) for s in spend.steps],
    )


def spend_from_dict(data: dict) -> PrivacySpend:
    """The spend of :func:`spend_to_dict`; a record stored before it named the method ``mechanism``."""
    steps = tuple(StepSpend(s["step"], s["share"], s["epsilon"], s["rho"]) for s in data["steps"])
    return PrivacySpend(data["privacy"], data["method"] if "method" in data else data["mechanism"], steps)


def _level_key(level: float) -> str:
    return f"{float(level):.6g}"


def release_payload(release, levels=LEVELS, feature_names=None) -> dict:
    """The public outputs of a :class:`dpci.methods.PrivateRelease` as JSON-ready values (and the
    coefficients' names, public facts, so the release can be shown without its data)."""

    def listed(a):
        return None if a is None else np.asarray(a, dtype=float).tolist()

    return dict(
        theta=listed(release.theta),
        conf_int=listed(release.conf_int),
        alpha=float(release.alpha),
        n=int(release.n),
        c=float(release.c),
        hessian=listed(release.hessian),
        covariance=listed(release.covariance),
        intervals={_level_key(level): listed(release.interval(1.0 - level)) for level in levels},
        spend=spend_to_dict(release.spend),
        feature_names=None if feature_names is None else [str(v) for v in feature_names],
        caveats=[str(v) for v in getattr(release, "caveats", ())],
    )


PUBLIC_SEED = "a public seed made its noise: anyone can recompute it"
UNRECORDED = (
    "its record does not say whether the bounds, categories and labels of its file were public facts "
    "or read from the data, so it is treated as not private"
)


def not_private_reason(stored) -> str | None:
    """Why a stored release (:class:`dpci.ledger.StoredRelease`) carries no privacy guarantee, or None
    when it does. The reason is recorded with the release when it is made (``spec["not_private"]``:
    values read from the data, in the words of whoever made it), so a reload, another browser and every
    export say the same. A release the ledger did not charge as private was drawn from a public seed.
    A release of a file (an upload, a CSV on the command line) whose record lacks the field cannot show
    that its bounds and labels were public, so it is read as not private (the safe reading)."""
    spec = stored.spec or {}
    if "not_private" in spec:
        recorded = spec["not_private"] or None
    else:
        recorded = UNRECORDED if "upload" in spec or spec.get("source") == "command line" else None
    if not stored.charge or not stored.charge.get("private"):
        return PUBLIC_SEED if recorded is None else f"{PUBLIC_SEED}; {recorded}"
    return recorded


def release_record(stored) -> str:
    """A stored release (:class:`dpci.ledger.StoredRelease`) as one JSON document: its id, time,
    specification, public outputs, whether it is private (and if not, why) and what it cost. ``charge``
    says what the ledger counted: a release is charged when its noise is drawn, whether or not values
    read from the data void its guarantee."""
    import json

    from ..version import __version__

    charge = stored.charge or {}
    reason = not_private_reason(stored)
    record = dict(
        release=stored.id,
        created_utc=stored.created,
        dpci_version=__version__,
        private=reason is None,
        not_private=reason,
        specification=stored.spec,
        outputs=stored.payload,
        charge=None
        if not charge
        else dict(
            counted=bool(charge.get("private")), charge=charge.get("charge"), spent_before=charge.get("spent_before")
        ),
    )
    return json.dumps(record, indent=2, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class StoredIntervals:
    """A stored release read back (module docstring)."""

    theta: np.ndarray
    conf_int: np.ndarray
    alpha: float
    n: int
    c: float
    hessian: np.ndarray | None
    covariance: np.ndarray | None
    intervals: dict
    spend: PrivacySpend
    release_id: str | None = None
    caveats: tuple[str, ...] = ()  # the method's own warnings about this release's coverage

    @classmethod
    def from_payload(cls, payload: dict, release_id: str | None = None) -> StoredIntervals:
        def array(value):
            return None if value is None else np.asarray(value, dtype=float)

        return cls(
            theta=np.asarray(payload["theta"], dtype=float),
            conf_int=np.asarray(payload["conf_int"], dtype=float),
            alpha=float(payload["alpha"]),
            n=int(payload["n"]),
            c=float(payload["c"]),
            hessian=array(payload.get("hessian")),
            covariance=array(payload.get("covariance")),
            intervals={k: np.asarray(v, dtype=float) for k, v in payload["intervals"].items()},
            spend=spend_from_dict(payload["spend"]),
            release_id=release_id,
            caveats=tuple(payload.get("caveats", ())),
        )

    def interval(self, alpha=None) -> np.ndarray:
        """The stored (1 - alpha) interval; a level that was not stored is refused (it would need the
        release's Monte Carlo draws, which are not kept)."""
        level = 1.0 - (self.alpha if alpha is None else float(alpha))
        found = self.intervals.get(_level_key(level))
        if found is None:
            kept = ", ".join(f"{100 * float(k):g}%" for k in self.intervals)
            raise ValueError(f"this stored release keeps its intervals at {kept}; {100 * level:g}% is not among them.")
        return found
