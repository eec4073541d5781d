"""What the intervals a page shows are for, and the words that say so: theta from the release alone
(dpci.theta), theta_0(c) widened by a proven bias bound for a stated B, or theta_0(c) itself (the Explorer,
Present, its report and the walkthrough; docs/theta.md)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpci import methods as registry
from dpci.recommend import BiasBound, describe_estimand
from dpci.recommend import estimand_bias as dpci_estimand_bias
from ui.app_state import AppState
from ui.settings import fmt_c

THETA_CACHE = "_theta_releases"  # session_state: (release, level) -> its interval for theta (dpci.theta)


def theta_shown(s: AppState, release):
    """The release's interval for theta (a dpci.theta.ThetaRelease) when theta is asked with no bound stated
    (AppState.theta_from_release), else None. Post-processing of the release: its simulation's seed is the
    release's own numbers, so a reload, another tab or Present show the same interval."""
    if not s.theta_from_release or release.hessian is None:
        return None
    import hashlib

    from dpci.methods import PrivateRelease
    from dpci.theta import theta_release

    digest = hashlib.sha256(np.ascontiguousarray(np.concatenate([release.theta, release.hessian.ravel()])).tobytes())
    key = (digest.hexdigest(), round(float(s.spec.alpha), 12))
    cache = st.session_state.setdefault(THETA_CACHE, {})
    if key not in cache:
        measurement = s.spec.measure()
        method = registry.get(s.spec.method)
        full = PrivateRelease(
            release.theta,
            release.hessian,
            release.covariance,
            release.conf_int,
            s.spec.alpha,
            release.n,
            release.c,
            measurement.allocation,
            method.coefficient_noise_law(measurement, release.n),
            caveats=tuple(getattr(release, "caveats", ())),
        )
        seed = int.from_bytes(digest.digest()[:8], "little")
        cache[key] = theta_release(full, s.spec.loss, np.random.default_rng(seed))
    return cache[key]


def shown_for_table(s: AppState, release):
    """(the release whose intervals a page draws, the bias bound to widen them by, the estimand's symbol, and
    a sentence when theta was asked but this release gives no interval for it)."""
    theta = theta_shown(s, release)
    if theta is not None:
        if theta.valid:
            return theta, None, "θ", None
        return release, None, "θ₀(c)", theta.caveats[-1] + " Shown: the interval for θ₀(c)."
    return release, estimand_bias(s, release), estimand_symbol(s), None


def estimand_bias(s: AppState, release) -> BiasBound | None:
    """The proven bias bound the private interval is widened by (dpci.bias_bound: the stated public B and
    the release's private Hessian, post-processing); None when the intervals are for theta_0(c), for theta
    already (a method without c), or for theta from the release alone (:func:`theta_shown`)."""
    if s.shown_estimand == "regularised" or not registry.get(s.spec.method).uses_c or s.theta_from_release:
        return None
    return dpci_estimand_bias(
        registry.get(s.spec.method), "unregularised", release, s.spec.loss, s.view.theta_bound, s.spec.alpha
    )


def estimand_symbol(s: AppState) -> str:
    return "θ₀(c)" if s.shown_estimand == "regularised" else "θ"


def _bias_words(bias: BiasBound) -> str:
    """How far the penalty can move a coefficient, and what the bound rests on."""
    if bias.trivial:
        return (
            f"±{bias.value:.3g}, your public bound B on ‖θ‖ itself: no curvature of the loss on the ball ‖θ‖ ≤ B "
            "could be proven from the private Hessian (or the loss is flat there, as the Huberized hinge is off "
            "its band), so the penalty's bias is bounded only by B"
        )
    return (
        f"±{bias.value:.3g}, a proven bound on the penalty's bias from your public bound B = {bias.theta_bound:g} "
        f"on ‖θ‖ and the private Hessian (it holds with probability {1 - bias.delta:.3g}, paid from the level)"
    )


def estimand_caption(s: AppState, bias: BiasBound | None, theta_said: str | None = None) -> str:
    """Under a chart of intervals: which estimand they are for, in words (and why not theta, if asked);
    ``theta_said``: why this release gives no interval for theta (:func:`shown_for_table`)."""
    method = registry.get(s.spec.method)
    if theta_said:
        return theta_said
    if s.theta_from_release:
        return (
            f"The private interval is for {describe_estimand('unregularised')}: the private estimate corrected for "
            f"the penalty c = {fmt_c(s.spec.c)}, its law simulated from the release (the interval for θ in the "
            "documentation). The non-private interval is the fit without penalty; the variability interval is "
            "still the spread of the private estimate before its correction, around θ₀(c)."
        )
    if not method.uses_c:
        return f"The intervals are for {describe_estimand('unregularised')}: {method.label} has no penalty c."
    if bias is None:
        refused = s.theta_refusal
        return (
            f"The private interval is for {describe_estimand('regularised')}, c = {fmt_c(s.spec.c)}: what the paper's "
            "intervals cover. "
            + (
                refused
                if refused
                else "Choose *θ: the coefficients without penalty* in the sidebar for the coefficients odds ratios mean."
            )
        )
    nonprivate = (
        "the non-private interval is the fit without penalty"
        if getattr(s.spec.loss, "curvature_drift", None) is not None
        else "the non-private interval is still for θ₀(c)"
    )
    return (
        f"The private interval is for {describe_estimand('unregularised')}: it is the interval for θ₀(c) widened "
        f"by {_bias_words(bias)} (see Choosing c in the documentation). The variability interval is still for "
        f"θ₀(c); {nonprivate}."
    )


def shrinkage_words(release) -> str:
    """How far the penalty pulls this release's coefficients towards 0, measured from the release itself:
    the median over the coefficients of |theta~_j| / |theta^_j|, theta^ the estimate corrected for the
    penalty (dpci.theta.correct, post-processing of the private Hessian)."""
    from dpci.theta import correct

    if release.hessian is None:
        return "which pulls them towards 0"
    corrected = correct(release.theta, release.hessian, release.c)
    big = np.abs(corrected) > 1e-12
    if not big.any():
        return "which pulls them towards 0"
    kept = float(np.median(np.abs(release.theta[big]) / np.abs(corrected[big])))
    # where the private Hessian's curvature is at most 4c the correction is capped (a doubling): the shrinkage
    # there is at least what is measured, and may be much more
    capped = bool(np.linalg.eigvalsh(release.hessian)[0] <= 4.0 * release.c)
    if kept >= 0.95 and not capped:
        return f"which pulls them towards 0 by about {100 * (1 - kept):.0f}%: little"
    return (
        f"which shrinks them: measured from this release, they are about {100 * kept:.0f}% of the coefficients "
        "without penalty (the median over the coefficients)"
        + (", or less: the private Hessian is too noisy in some directions to tell how much less" if capped else "")
    )


def estimand_sentence(s: AppState, release, bias: BiasBound | None) -> str:
    """What the intervals are for, in a stakeholder's words (Present, its report and CSV); what it says of the
    penalty is measured on ``release``, so it holds at every c."""
    c = release.c
    if not registry.get(s.spec.method).uses_c:
        return "The intervals are for the coefficients without penalty (the method uses none)."
    if getattr(release, "estimand", None) == "unregularised":  # dpci.theta: corrected for the penalty
        private = release.theta - release.shift
        big = np.abs(release.theta) > 1e-12
        kept = float(np.median(np.abs(private[big]) / np.abs(release.theta[big]))) if big.any() else 1.0
        return (
            f"The intervals are for the coefficients without penalty: the private estimates corrected for the "
            f"penalty (c = {c:.3g}), which had shrunk them to about {100 * kept:.0f}% (the median over the "
            "coefficients), with that correction's uncertainty included."
        )
    if bias is None:
        return (
            f"The intervals are for the coefficients of the model fitted with a penalty (c = {c:.3g}), "
            f"{shrinkage_words(release)}."
        )
    return (
        f"The intervals are for the coefficients without penalty, penalty bias included: each is widened by "
        f"{_bias_words(bias)}."
    )
