"""The app's privacy bookkeeping: fresh randomness for real data, a privacy odometer per dataset
per browser session (dpci.odometer), and the one release Present shows.

A private release is named by the data, the settings it depends on and its randomness: the
coefficients, the Hessian and the covariance are drawn first from the random stream, and the
confidence level and the Monte Carlo sample size m only post-process them (Algorithms 3 and 5),
so changing those (or delta, a reading of the same spend) is the same release and costs nothing.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import asdict

import streamlit as st

from dpci import methods as registry
from dpci.odometer import PrivacyOdometer
from dpci.presentation.tables import escape_markdown
from ui.settings import DATASETS, Settings

ODOMETERS = "_odometers"  # session_state: dataset id -> PrivacyOdometer
ENTROPY = "_fresh_entropy"  # session_state: release key -> secret OS entropy (never shown)
CONFIRMED = "_over_cap_confirmed"  # session_state: release keys the user chose to spend over the cap
RELEASED = "_released"  # session_state: dataset id -> (Settings, release key) of the release Present shows
CAP = "odometer_cap"  # session_state: the session cap in epsilon (not in the address: a link cannot set it)
DEFAULT_CAP = 5.0
POST_PROCESSING = ("level", "m", "vi_replicates", "delta")  # settings that never change a release's noise


def dataset_id(s: Settings) -> str:
    """The data behind the settings (the same people whatever d, n or the upload's choices)."""
    if s.dataset == DATASETS[2]:
        kept = st.session_state.get("upload_kept")
        return f"upload:{kept[2] if kept else ''}"
    return s.dataset


def dataset_label(s: Settings) -> str:
    if s.dataset == DATASETS[2]:
        kept = st.session_state.get("upload_kept")
        return f"your upload {kept[0]}" if kept else "your upload"
    return s.dataset.split(" (")[0]


def odometer(s: Settings) -> PrivacyOdometer:
    """The session's odometer for the settings' dataset (created at the session cap)."""
    meters = st.session_state.setdefault(ODOMETERS, {})
    key = dataset_id(s)
    if key not in meters:
        meters[key] = PrivacyOdometer(cap=session_cap(), delta=s.delta, name=dataset_label(s))
    meter = meters[key]
    meter.delta = s.delta  # the reading follows the sidebar's delta
    return meter


def session_cap() -> float:
    return float(st.session_state.setdefault(CAP, DEFAULT_CAP))


def set_cap(value: float) -> None:
    st.session_state[CAP] = float(value)
    for meter in st.session_state.get(ODOMETERS, {}).values():
        meter.set_cap(value)


def release_key(s: Settings, data_key: str) -> str:
    """Names a release: the rows in use, the settings the noise depends on, and its randomness."""
    values = {k: v for k, v in asdict(s).items() if k not in POST_PROCESSING}
    values["randomness"] = f"seed {values.pop('seed')}" if s.teaching else "fresh"
    text = f"{data_key}|{sorted(values.items())}"
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def random_state(s: Settings, key: str) -> int:
    """The release's randomness: the public seed in teaching mode, else secret OS entropy drawn
    once per release key and kept for this session (the same settings show the same release)."""
    if s.teaching:
        return s.seed
    return st.session_state.setdefault(ENTROPY, {}).setdefault(key, secrets.randbits(128))


def spend_of(s: Settings):
    method = registry.get(s.mech)
    return method.allocate(s.budget, s.split, s.priv).spend


def describe(s: Settings) -> str:
    budget = f"ε = {s.epsilon:g}" if s.priv == "pure" else f"ρ = {s.rho:g}"
    return f"{registry.get(s.mech).label}, {budget}, c = {s.c:g}"


def over_cap(s: Settings, key: str) -> str | None:
    """Why this release must be confirmed first (it would take the odometer over the cap), or None."""
    if s.teaching or key in st.session_state.get(CONFIRMED, set()):
        return None
    meter = odometer(s)
    spend = spend_of(s)
    if not meter.would_exceed(spend, key):
        return None
    after = meter.epsilon(meter.after(spend, key))
    return (
        f"This would be a new private release from {escape_markdown(dataset_label(s))}: the privacy spent on it in this session "
        f"would reach ε = {after:.3g}, over your cap of {meter.cap:g}. Raise the cap in the sidebar's privacy "
        "odometer, go back to settings you have already seen (they cost nothing more), or spend it anyway. "
        "Exploring for a class? Teaching mode (in the sidebar) uses a public seed: nothing is charged, "
        "and nothing is private."
    )


def confirm(key: str) -> None:
    """Button callback: the user chose to go over the cap for this release."""
    st.session_state.setdefault(CONFIRMED, set()).add(key)


def charge(s: Settings, key: str, where: str) -> None:
    """Put the release on the odometer: its spend with fresh randomness; in teaching mode a note that
    a public seed made it (no guarantee covers it, whatever its epsilon)."""
    meter = odometer(s)
    if s.teaching:
        meter.note_not_private(key, f"{where}: {describe(s)}, teaching mode (public seed {s.seed})")
    else:
        confirmed = key in st.session_state.get(CONFIRMED, set())
        meter.charge(key, spend_of(s), f"{where}: {describe(s)}", confirm=confirmed)


def charge_spend(s: Settings, key: str, spend, where: str) -> None:
    """Charge a release made elsewhere (an accuracy-first search) with its own spend; already confirmed:
    the user pressed the button on the real data."""
    odometer(s).charge(key, spend, f"{where} on the real data", confirm=True)


def note_not_private(s: Settings, key: str, what: str) -> None:
    odometer(s).note_not_private(key, what)


def release(s: Settings, key: str) -> None:
    """Make the current settings' release the one Present shows (it is already on the odometer)."""
    st.session_state.setdefault(RELEASED, {})[dataset_id(s)] = (s, key)


def released(s: Settings):
    """(Settings, key) of the release made for the settings' dataset, or None."""
    return st.session_state.get(RELEASED, {}).get(dataset_id(s))


def release_sentences(s: Settings) -> list[str]:
    """What Present says about the randomness and about every other look at the same data."""
    if s.teaching:
        return []  # plain_summary already says a fixed seed made them
    lines = ["Drawn with fresh, secret randomness from the operating system (never shown or stored in a download)."]
    meter = odometer(s)
    total = meter.total
    if total.releases > 1:
        approx = total.to_approx_dp(meter.delta)
        delta = "" if approx.delta == 0 else f", δ = {approx.delta:.0e}"
        lines.append(
            f"Before choosing this release, {total.releases} private releases were computed from this data in this "
            f"session; all together they spent ε = {approx.epsilon:.3g}{delta}. If they guided the choice of "
            "settings, that total, not this release's own, is the guarantee of what is published."
        )
    if meter.not_private:
        lines.append(
            f"{len(meter.not_private)} results from this data that no guarantee covers were also computed in this "
            "session (teaching-mode numbers or sweeps on the real data); a split or c chosen from them was chosen "
            "from the data."
        )
    return lines


def release_current(s: Settings) -> None:
    """Button callback on Present: release the sidebar's settings (charged when Present draws them)."""
    from ui.data import dataset_key

    release(s, release_key(s, dataset_key(s)))
