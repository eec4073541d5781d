"""The method registry: every way dpci can release private coefficients and intervals.

``available()`` lists the registered names, ``get(name)`` returns a method, ``register(method)``
adds one (also from outside the package: subclass :class:`Method`, register an instance, and the
estimators (``method=``), the sweeps, the command line and the app's method lists offer it).
``pairs()`` lists every (method, notion) a method supports, e.g. the paper's four methods:
objective or output perturbation under pure DP or zCDP.
"""

from __future__ import annotations

from .base import NOTION_LABELS, Advice, Measurement, Method, NotionName, OffsetLaw, PrivateRelease
from .kulkarni import KulkarniBayesian
from .naive import NaiveInterval
from .paper import ObjectivePerturbation, OutputPerturbation, PaperMethod
from .wu import WuOutputPerturbation

_REGISTRY: dict[str, Method] = {}


def register(method: Method, replace: bool = False) -> Method:
    """Add ``method`` under ``method.name``; an existing name is refused unless ``replace``."""
    if not isinstance(method, Method):
        raise TypeError(f"register takes a dpci.methods.Method instance, got {method!r}.")
    if method.name in _REGISTRY and not replace and _REGISTRY[method.name] is not method:
        raise ValueError(f"a method named {method.name!r} is already registered (pass replace=True).")
    _REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a registered method (the paper's own cannot be removed)."""
    if name in BUILT_IN:
        raise ValueError(f"{name!r} is one of dpci's own methods (the paper's, or its baseline) and stays registered.")
    _REGISTRY.pop(name, None)


def available() -> tuple[str, ...]:
    """The names of the registered methods, in registration order."""
    return tuple(_REGISTRY)


def get(name) -> Method:
    """The registered method called ``name`` (a Method is returned as it is)."""
    if isinstance(name, Method):
        return name
    if name not in _REGISTRY:
        raise ValueError(f"unknown method {name!r}; registered methods: {', '.join(map(repr, _REGISTRY))}.")
    return _REGISTRY[name]


def pairs(names=None) -> tuple[tuple[str, str], ...]:
    """(method, notion) for every notion each of ``names`` (default: all registered) supports."""
    return tuple((m, p) for m in (names or available()) for p in get(m).notions)


def default_split(mechanism: str, privacy: str):
    """The default shares of a registered method for a notion (the paper's Table 2 for its methods).

    Parameters
    ----------
    mechanism : str
        A registered method's name (:func:`available`), e.g. "objective" or "output".
    privacy : {"pure", "zcdp"}
        The privacy notion.

    Returns
    -------
    Split
        One share per step of the method, in the method's order (phi1, phi2, phi3 for the paper's).

    Raises
    ------
    ValueError
        An unknown method or notion, or a notion the method does not support.

    Examples
    --------
    >>> import dpci
    >>> dpci.default_split("objective", "pure")
    Split(phi1=0.65, phi2=0.175, phi3=0.175)
    >>> dpci.default_split("output", "zcdp")
    Split(phi1=0.9, phi2=0.05, phi3=0.05)
    """
    from ..accounting import PRIVACY_NOTIONS, check_choice

    return get(mechanism).default_split(check_choice("privacy", privacy, PRIVACY_NOTIONS))


def allocate(budget, split, mechanism: str, privacy: str):
    """Split a total budget into the steps of a registered method and account for it (the method's own
    privacy map, :meth:`dpci.methods.Method.allocate`): an :class:`dpci.accounting.Allocation`.

    Parameters
    ----------
    budget : float
        The release's total budget: epsilon ("pure") or rho ("zcdp").
    split : Split, sequence of float or None
        One share per step of the method, positive and summing to 1; None: :func:`default_split`.
    mechanism : str
        A registered method's name (:func:`available`).
    privacy : {"pure", "zcdp"}
        The privacy notion.

    Returns
    -------
    dpci.accounting.Allocation
        The budget each step runs at (``phi``), the shares, and what the release spends
        (``spend``, a :class:`~dpci.accounting.PrivacySpend`: what the ledger charges).

    Raises
    ------
    ValueError
        An unknown method or notion, a budget that is not positive and finite, or a split without one
        positive share per step summing to 1.

    Examples
    --------
    >>> import dpci
    >>> alloc = dpci.allocate(0.5, (0.5, 0.25, 0.25), "output", "zcdp")
    >>> alloc.phi  # rho of the coefficients, the Hessian and the covariance
    (0.25, 0.125, 0.125)
    >>> alloc.spend.rho
    0.5
    """
    return get(mechanism).allocate(budget, split, privacy)


def describe(name: str, privacy: str, short: bool = False) -> str:
    """A method and notion in words; a name no longer registered (an old CSV) is shown as it is."""
    if name in _REGISTRY:
        return _REGISTRY[name].describe(privacy, short)
    return f"{name}, {NOTION_LABELS.get(privacy, privacy)}"


def color(name: str, privacy: str) -> str:
    return _REGISTRY[name].color(privacy) if name in _REGISTRY else "#333333"


for _method in (
    ObjectivePerturbation(),
    OutputPerturbation(),
    NaiveInterval(),
    WuOutputPerturbation(),
    KulkarniBayesian(),
):
    register(_method)
PAPER = ("objective", "output")
BUILT_IN = (*PAPER, "naive", "wu", "kulkarni")
PAPER_PAIRS = (("objective", "pure"), ("output", "pure"), ("objective", "zcdp"), ("output", "zcdp"))

__all__ = [
    "PAPER",
    "PAPER_PAIRS",
    "Advice",
    "KulkarniBayesian",
    "Measurement",
    "Method",
    "NaiveInterval",
    "NotionName",
    "ObjectivePerturbation",
    "OffsetLaw",
    "OutputPerturbation",
    "PaperMethod",
    "PrivateRelease",
    "WuOutputPerturbation",
    "allocate",
    "available",
    "color",
    "default_split",
    "describe",
    "get",
    "pairs",
    "register",
    "unregister",
]
