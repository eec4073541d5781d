"""The session's settings store and the widgets that mirror it, kept across pages and reruns,
and the flags of a session's first paint.
"""

from __future__ import annotations

import json

import streamlit as st

from dpci import methods as registry
from dpci.methods import default_split
from dpci.notions import notion
from ui.app_state import FIELDS, AppState, converted_budget, fractions_of, shares_of, split_keys
from ui.settings import OLD_KEYS, PRIVACY, changed_settings, models_said, settings_values, translated

STORE = "dpci_settings"  # session_state key of the settings dict; it outlives the widgets
WIDGET = "w_"  # session_state prefix of the settings widgets (Streamlit drops a widget's state when a
# page does not draw it, so the widgets only mirror the store)


def settings_store() -> dict:
    """The session's settings, filled once from the URL's query parameters, else the defaults."""
    if STORE not in st.session_state:
        raw = translated({k: st.query_params[k] for k in st.query_params})
        values, _ = settings_values(raw)
        changed = changed_settings(raw, values)
        if changed:
            st.session_state["_url_warning"] = (
                f"The address asked for settings the app cannot use; it uses the nearest it can: {'; '.join(changed)}."
            )
        st.session_state[STORE] = values
    return st.session_state[STORE]


def load_settings_file(data: bytes):
    """Replace the session's settings by those of a downloaded settings file; ValueError if unusable."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"This is not a dpci settings file (JSON): {err}.") from None
    if not isinstance(raw, dict) or not set(translated(raw)) & set(FIELDS):
        raise ValueError("This JSON file holds no dpci settings; download one with 'Download these settings'.")
    raw = translated(raw)
    values, _ = settings_values(raw)
    for name, value in values.items():
        set_setting(name, value)
    return changed_settings(raw, values)


def current_settings() -> AppState:
    """The session's settings; a method that cannot fit the chosen model (Kulkarni et al. fits logistic
    regression only) gives way to the first that can, and a privacy notion the method does not support
    (Kulkarni et al. is zCDP only) to one it does, so no page is asked for an impossible release."""
    store = settings_store()
    asked = registry.get(store["method"])
    if not asked.fits(store["loss"]):
        store["method"] = next(m for m in registry.available() if registry.get(m).fits(store["loss"]))
        st.session_state.pop(WIDGET + "method", None)
        gave_way(f"{asked.label} fits {models_said(asked.losses or ())} only", registry.get(store["method"]).label)
    notions = registry.get(store["method"]).notions
    if store["privacy"] not in notions:
        method = registry.get(store["method"])
        gave_way(f"{method.label} releases {' and '.join(PRIVACY[n] for n in notions)} only", PRIVACY[notions[0]])
        set_notion(notions[0])
        st.session_state.pop(WIDGET + "privacy", None)  # redrawn from the store (settings_widget) at its next draw
    return AppState.from_values(store)


def set_notion(name: str) -> None:
    """Switch the privacy notion, keeping the budget's pure epsilon (Proposition 1: rho = epsilon^2 / 2)."""
    store = settings_store()
    old = notion(store["privacy"])
    store["budget"] = converted_budget(store["budget"], old, notion(name))
    store["privacy"] = name


def gave_way(why: str, instead: str) -> None:
    """Say, until the user changes a setting, that a setting asked for (by an address or a settings file)
    could not be used with the others, and what is shown instead."""
    said = f"{why}: shown with {instead} instead."
    earlier = st.session_state.get("_url_warning")
    st.session_state["_url_warning"] = said if not earlier else f"{earlier} {said}"


def share_settings(settings: AppState):
    """Mirror the state in the URL so a teacher can reopen or share the same configuration: its own
    serialisation (the dotted keys of this loss and method); an old link's keys and another method's
    steps give way. A page's own controls stay."""
    values = settings.values()
    stale = [k for k in st.query_params if k in OLD_KEYS or ((k in FIELDS or "." in k) and k not in values)]
    for key in stale:
        st.query_params.pop(key, None)
    st.query_params.update({k: str(v) for k, v in values.items()})


def set_setting(name, value):
    """Set a setting and the widget showing it (usable as a button callback)."""
    settings_store()[name] = value
    st.session_state[WIDGET + name] = value


def set_split(shares) -> None:
    """Set the split's shares (one per step of the chosen method); the sliders redraw from the store."""
    store = settings_store()
    store.update(split_keys(registry.get(store["method"]).steps, shares))
    for step in registry.get(store["method"]).steps:
        st.session_state.pop(f"{WIDGET}split.{step}", None)


def restore_table2():
    """The method's default split for the notion (the paper's Table 2)."""
    store = settings_store()
    set_split(default_split(store["method"], store["privacy"]))


def declared_widgets(names) -> None:
    """Before drawing a dotted setting's widget: the store holds its value (its default until set)."""
    s = current_settings()
    store = settings_store()
    for name in names:
        store.setdefault(name, s.value(name))


def _store_widget(name, key, write):
    if _tick_only():
        return  # an echo (see type_setting): the next full run sets the widget from the store again
    write(name, st.session_state[key])
    st.session_state.pop("_url_warning", None)  # the user has taken over from the address
    st.session_state[MOVED] = name


def _write(name, value) -> None:
    settings_store()[name] = value


def write_notion(name, value) -> None:
    """A notion widget's writer (:func:`settings_widget`): the switch keeps the budget's meaning."""
    set_notion(value)


def write_fraction(name, value) -> None:
    """A split slider's writer (:func:`settings_widget`): its step's fraction of what the steps before it
    leave, the store's shares made again from all the fractions."""
    store = settings_store()
    steps = registry.get(store["method"]).steps
    fractions = dict(zip(steps, fractions_of([store[f"split.{s}"] for s in steps])))
    fractions[name.removeprefix("split.")] = value
    store.update(split_keys(steps, shares_of([fractions[s] for s in steps[:-1]])))


MOVED = "_moved"  # session_state: the setting whose widget this interaction changed (its callback's mark)
TYPED = "_typed"  # session_state: (setting, value) typed in a second box for it in this interaction


def type_setting(name, value):
    """A callback of a second widget for a setting (a box to type the budget beside its slider): the value
    is kept until the run starts (:func:`apply_typed_setting`) and applied unless the setting's own widget
    changed in the same interaction.

    A browser reports every widget's value with each change; a box whose value the server had just set
    (after a slider move) but the browser had not yet received reports its old value with the next slider
    move, as if typed, and pulled the slider back (with six sessions on two cores, a quick press every
    second or two). A person cannot type and slide in one interaction, so the slider wins; and a change
    reported with a results fragment's tick alone is such an echo (:func:`_tick_only`).
    """
    if not _tick_only():
        st.session_state[TYPED] = (name, value)


def _tick_only() -> bool:
    """True in a run of a results fragment alone (its tick). A settings widget's change reported with a tick
    is an echo: a person's change asks for a run of the whole page, which the server runs first, so a tick
    can only report a value the browser showed before the server's latest (a slider's old stop, or its first
    stop when the stops changed under it, as a typed budget adds one)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx is not None and bool(ctx.fragment_ids_this_run)


def settings_widget(factory, label, name, *args, widget=None, shown=None, write=_write, **kwargs):
    """Draw a settings widget that shows the store and writes to it only when the user changes it.

    The widget's state is set from the store on every run: Streamlit may drop or reset the state of
    a widget that a page switch interrupted, and reading the widget back unconditionally once
    reset every slider to its minimum (settings lost on the way to another page). A widget that shows
    the setting another way says so: ``widget`` (its key, default the setting's name), ``shown`` (its
    value, default the store's) and ``write`` (how its value is stored, default as it is).
    """
    key = WIDGET + (widget or name)
    st.session_state[key] = settings_store()[name] if shown is None else shown
    unused = st.session_state.get(UNUSED, ())
    if name in unused or name.partition(".")[0] in unused:  # not used on this page: greyed out, not hidden
        kwargs.update(disabled=True, help="Not used on this page (its own controls set this).")
    return factory(label, *args, key=key, on_change=_store_widget, args=(name, key, write), **kwargs)


def apply_typed_setting():
    """app.py's first line, after the interaction's callbacks: a setting typed in this interaction
    (:func:`type_setting`) is applied, unless the setting's own widget changed too."""
    typed, moved = st.session_state.pop(TYPED, None), st.session_state.pop(MOVED, None)
    if typed is not None and typed[0] != moved:
        settings_store()[typed[0]] = typed[1]
        st.session_state.pop("_url_warning", None)


UNUSED = "_unused_settings"  # session_state: the settings the page being drawn does not use


CONTROLS_DRAWN = "_controls_drawn"  # session_state flag: this session's browser has the settings widgets


def first_paint() -> bool:
    """True on a session's first Explorer run: the chart is drawn before the settings widgets.

    A browser that loads the widgets' code together with the chart's draws the chart about half a
    second later (measured in bench/bench_app.py), so the first run sends the chart alone and its
    results fragment asks for the full page a tick later (:func:`controls_follow`).
    """
    return not st.session_state.get(CONTROLS_DRAWN) and not st.session_state.get("_chart_sent")


def waiting_sidebar():
    """A note in the sidebar where the widgets will be (see :func:`first_paint`); returns its slot,
    for a run that draws the widgets after all to clear."""
    slot = st.sidebar.empty()
    slot.caption("Loading the settings…")
    return slot


def chart_sent():
    """Note that this session's first chart has been sent to the browser."""
    st.session_state["_chart_sent"] = True


def controls_follow():
    """At a results fragment's tick after a first paint: rerun the whole page, with the settings widgets."""
    if st.session_state.get("_chart_sent") and not st.session_state.get(CONTROLS_DRAWN):
        st.rerun(scope="app")


def _keep(key):
    st.session_state["kept_" + key] = st.session_state[key]


def _tuples(value):
    """JSON gives lists where the options hold tuples (method, notion): turn them back."""
    if isinstance(value, list):
        return [tuple(v) if isinstance(v, list) else v for v in value]
    return value


def _from_address(key):
    try:
        return _tuples(json.loads(st.query_params[key])) if key in st.query_params else None
    except (ValueError, TypeError):
        return None


def kept_choice(key, options, default=None, address=True):
    """The choice :func:`kept_widget` will show (kept in the session, else from the address, else
    ``default``), known before the widget is drawn (a page's sidebar can depend on it)."""
    kept = st.session_state.get("kept_" + key)
    if kept is None and address:
        kept = _from_address(key)
    valid = kept is not None and (set(kept) <= set(options) if isinstance(kept, list) else kept in options)
    if not valid:
        kept = default if default is not None else options[0]
    return kept


def kept_widget(factory, label, options, key, default=None, address=True, **kwargs):
    """A choice widget (radio, selectbox, multiselect, select_slider) whose choice survives a visit
    to another page: Streamlit drops the state of widgets a page does not draw, so the choice is
    also kept under another key and given back on every run. A kept choice no longer among the
    options gives way to ``default`` (else the first option). With ``address`` the choice is also
    in the page's address (as JSON), so a reload or a shared link opens the same view."""
    kept = kept_choice(key, options, default, address)
    st.session_state["kept_" + key] = kept
    st.session_state[key] = kept
    widget = factory(label, options, key=key, on_change=_keep, args=(key,), **kwargs)
    if address:
        st.query_params[key] = json.dumps(widget, ensure_ascii=False)
    return widget


def method_chooser(key: str):
    """The (method, notion) pairs to compare: every registered method is offered, the paper's four
    chosen at first; a row of its own, since method names need the width. Kept across pages."""
    from dpci import methods as registry

    return kept_widget(
        st.multiselect,
        "Methods",
        list(registry.pairs()),
        key,
        default=list(registry.PAPER_PAIRS),
        format_func=lambda m: registry.describe(*m, short=True),
    )
