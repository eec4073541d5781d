"""dpci: differentially private confidence intervals for ERM (Wang, Kifer and Lee).

Start with :class:`PrivateLogisticRegression` or :class:`PrivateHuberSVM`; the
algorithms themselves are pure functions in the submodules, named after the paper.
"""

from . import methods
from .accounting import PrivacySpend, Split
from .exceptions import (
    DataValidationError,
    PrivacyLeakWarning,
    ReferenceWarning,
    RegularisationTooSmall,
    UnderCoverageWarning,
    WideIntervalWarning,
)
from .ledger import Budget, BudgetExceeded
from .losses import HuberLoss, LogisticLoss, get_loss, register_loss
from .mechanisms import smallest_valid_c
from .methods import allocate, default_split
from .planning import feasibility
from .recommend import bias_bound, recommend_c
from .release import nonprivate_confidence_intervals, private_confidence_intervals
from .solver import ConvergenceError
from .spec import ReleaseSpec
from .version import __version__ as __version__  # the package version, re-exported

__all__ = [
    "Budget",
    "BudgetExceeded",
    "ConvergenceError",
    "DataValidationError",
    "HuberLoss",
    "Ledger",
    "LogisticLoss",
    "PrivacyLeakWarning",
    "PrivacySpend",
    "PrivateERMClassifier",
    "PrivateHuberSVM",
    "PrivateLogisticRegression",
    "ReferenceWarning",
    "RegularisationTooSmall",
    "ReleaseSpec",
    "Split",
    "UnderCoverageWarning",
    "WideIntervalWarning",
    "allocate",
    "bias_bound",
    "default_split",
    "feasibility",
    "get_loss",
    "methods",
    "nonprivate_confidence_intervals",
    "private_confidence_intervals",
    "recommend_c",
    "register_loss",
    "smallest_valid_c",
]


def __getattr__(name):
    # The estimators import scikit-learn (over a second); load them only when asked for.
    if name == "Ledger":  # loads SQLAlchemy: only when asked for
        from .ledger import Ledger

        return Ledger
    if name in ("PrivateLogisticRegression", "PrivateHuberSVM", "PrivateERMClassifier"):
        from . import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'dpci' has no attribute {name!r}")
