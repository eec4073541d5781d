"""The upload workflow: a CSV file, its target, positive class, features and public bounds, kept
for the session, and whether the resulting intervals are private.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from dpci.presentation.tables import escape_markdown
from ui.app_state import AppState
from ui.state import kept_widget


def _memo(kind: str, key, compute):
    """``compute()`` once for ``key``, kept in the session's state (the latest value per ``kind``), so a
    rerun never parses the same upload again and the memory goes when the session ends. An error is kept
    and raised again, so a bad file is not parsed again at every rerun either."""
    memo = st.session_state.setdefault("_upload_memo", {})
    hit = memo.get(kind)
    if hit is None or hit[0] != key:
        try:
            hit = (key, compute(), None)
        except ValueError as err:
            hit = (key, None, err)
        memo[kind] = hit
    if hit[2] is not None:
        raise hit[2]
    return hit[1]


def _read_upload(data: bytes, sep, target, positive, features, bounds, levels):
    """read_uploaded_csv, its warnings collected as text instead of printed; ``levels``: the declared
    public levels (a value outside them gets no indicator)."""
    import warnings

    from dpci.data import read_uploaded_csv

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = read_uploaded_csv(
            data,
            target,
            positive_class=positive,
            features=features,
            categorical=list(levels),
            bounds=bounds or None,
            categories=levels,
            unknown_levels="ignore",
            sep=sep,
        )
    return result, [str(w.message) for w in caught]


def _uploaded_bytes():
    """(name, bytes) of the CSV in use: a new upload, else the one kept from earlier in this session."""
    file = st.file_uploader("A CSV file with a header row (at most 50 MB)", type=["csv", "txt"], key="upload_file")
    if file is not None:
        previous = st.session_state.get("upload_kept")
        if previous is None or previous[1] != file.getvalue():
            _forget_choices()
            st.session_state["upload_kept"] = (file.name, file.getvalue(), upload_digest(file.getvalue()))
        return st.session_state["upload_kept"]
    kept = st.session_state.get("upload_kept")
    if kept is not None:
        c1, c2 = st.columns([3, 1])
        c1.caption(
            f"Using {escape_markdown(kept[0])} ({len(kept[1]) / 1e3:,.0f} kB), uploaded earlier in this session."
        )
        if c2.button("Forget this file"):
            _forget_choices()
            for name in ("upload_kept", "upload_result", "upload_digest"):
                st.session_state.pop(name, None)
            st.rerun()
    return kept


def _forget_choices() -> None:
    """A new file starts with nothing chosen: its target, bounds and public levels are the analyst's to
    give for it (a column of the same name in another file is not known to share them)."""
    levels = [name for name in st.session_state if str(name).startswith("upload_levels_")]
    for name in ("kept_upload_target", "kept_bounds", "kept_levels", "_levels_file", "_upload_memo", *levels):
        st.session_state.pop(name, None)


def _bounds_editor(numeric, data_key):
    """Public bounds of the numeric features, starting from the observed range (flagged as not
    private); returns the bounds the user changed, kept across pages."""
    import pandas as pd

    kept = st.session_state.setdefault("kept_bounds", {})
    st.markdown(
        "**Bounds of the numeric features.** Use bounds known *before* seeing the data (for example "
        "from a codebook: age 0 to 120). The defaults are the observed minimum and maximum, which "
        "are **not private**."
    )
    # One editor per file and choice of columns, with a stable key and a stable starting table, so
    # every typed edit stays in the editor's own state; the starting table is made again (from the kept
    # bounds) only when the editor's state is gone, after a visit to another page.
    key = "upload_bounds_" + upload_digest(data_key.encode())
    starts = st.session_state.setdefault("_bounds_start", {})
    if key not in st.session_state or key not in starts:
        starts[key] = pd.DataFrame(
            {
                "column": [c.name for c in numeric],
                "lower": [kept.get(c.name, (c.lower, c.upper))[0] for c in numeric],
                "upper": [kept.get(c.name, (c.lower, c.upper))[1] for c in numeric],
            }
        )
    start = starts[key]
    # In a form: typed edits stay in the table until "Use these bounds" sends them all at once, so a
    # rerun of the page (the bootstrap's progress, a slider) can never drop an edit being typed.
    with st.form("upload_bounds_form", border=False):
        edited = st.data_editor(start, key=key, hide_index=True, disabled=["column"], width="stretch")
        st.form_submit_button("Use these bounds", help="Sends every bound typed above; nothing is released.")
    bounds = dict(kept)
    for col, (_, row) in zip(numeric, edited.iterrows()):
        try:
            low, high = float(row["lower"]), float(row["upper"])
        except (TypeError, ValueError):
            raise ValueError(f"Give both bounds of {col.name!r} as numbers.") from None
        if (low, high) != (col.lower, col.upper):
            bounds[col.name] = (low, high)
    st.session_state["kept_bounds"] = bounds
    # a feature with one bound typed and the other still the data's own is not private either
    st.session_state["_partial_bounds"] = [
        c.name for c in numeric if c.name in bounds and (bounds[c.name][0] == c.lower or bounds[c.name][1] == c.upper)
    ]
    return {name: b for name, b in bounds.items() if name in {c.name for c in numeric}}


AFTER_REASONS = "Values taken from the data reveal something about individual rows."


def not_private_reasons(result, partial=(), here: bool = False, labels_from_data: bool = False) -> list[str]:
    """Why an uploaded dataset's intervals are not private, one problem per item, in the app's words (the
    library's warning names its Python arguments); empty when nothing was taken from the data.
    ``partial``: features with only one bound typed (the other still the data's own); ``here``: said in
    the upload panel itself (else the text points to it)."""
    numeric = {c.name for c in result.schema.numeric_columns}
    bounds = [c for c in result.data_derived if c in numeric]
    bounds += [c for c in partial if c not in bounds]
    levels = [c for c in result.data_derived if c not in numeric]
    panel = "" if here else " of the Explorer's upload panel"
    reasons = []
    if bounds:
        where = "the table above" if here else "the table of the Explorer's upload panel"
        reasons.append(
            f"the bounds of {', '.join(bounds)} are (at least on one side) the data's own minimum or maximum "
            f"(type both public bounds of each into {where})"
        )
    reasons += [
        f"the categories of {column} are the values seen in the data (type its public levels under "
        f"'Public levels'{panel}, or upload a public schema file, or leave it out of the features)"
        for column in levels
    ]
    if labels_from_data:
        where = "below the target column" if here else "in the Explorer's upload panel"
        reasons.append(
            f"the label values {result.schema.positive_class!r} and {result.schema.negative_class!r} were read from "
            f"the data (if they are public facts, say so {where})"
        )
    return reasons


def not_private_reason(result, partial=(), here: bool = False, labels_from_data: bool = False) -> str | None:
    """:func:`not_private_reasons` as one sentence (what a stored release records), or None."""
    reasons = not_private_reasons(result, partial, here, labels_from_data)
    return "; ".join(reasons) + ". " + AFTER_REASONS if reasons else None


def upload_not_private(s: AppState) -> str | None:
    """Why the intervals of the settings' dataset are not private (only an upload can be so), or None."""
    result = st.session_state.get("upload_result")
    if s.data.dataset != "upload" or result is None:
        return None
    return not_private_reason(
        result,
        st.session_state.get("_partial_bounds", ()),
        labels_from_data=st.session_state.get("_labels_from_data", False),
    )


#: Column names that usually hold the outcome: named to the analyst, never chosen for them.
OUTCOME_NAMES = ("income", "target", "label", "outcome", "class", "y", "response", "default", "churn")


def _target_choice(column, candidates):
    """The target column, chosen by the analyst: the select starts empty (no silent default, since the
    first two-valued column is often a feature such as sex) and keeps the choice across pages."""
    kept = st.session_state.get("kept_upload_target")
    st.session_state["upload_target"] = kept if kept in candidates else None
    target = column.selectbox(
        "Target column (two values)",
        candidates,
        key="upload_target",
        placeholder="Choose the column to predict",
        on_change=lambda: st.session_state.update(kept_upload_target=st.session_state["upload_target"]),
        help="Columns with exactly two values are listed first.",
    )
    named = [c for c in candidates if c.strip().lower() in OUTCOME_NAMES]
    if target is None and named:
        column.caption(f"A column named like an outcome: {escape_markdown(', '.join(named))}.")
    return target


def _declared_levels(categorical: list[str]) -> dict[str, list[str]]:
    """Public levels of the categorical features, typed (comma-separated) or from a JSON schema file,
    kept for the session; a column without declared levels stays undeclared (not private)."""
    from dpci.data import read_public_levels

    kept = st.session_state.setdefault("kept_levels", {})
    with st.expander("Public levels of the categorical features", expanded=True):
        st.markdown(
            "Type each column's **complete list of levels known before seeing the data** (a codebook, the "
            "survey's form), separated by commas, or upload a schema file "
            '`{"column": ["level1", "level2"]}`. Declared levels make the one-hot encoding public; a value '
            "outside the list gets no indicator. A column left empty uses the levels seen in the data "
            "(**not private**)."
        )
        schema = st.file_uploader("A public schema file (JSON)", type=["json"], key="upload_schema_file")
        if schema is not None and st.session_state.get("_levels_file") != schema.file_id:
            st.session_state["_levels_file"] = schema.file_id
            for column, levels in read_public_levels(schema.getvalue()).items():
                kept[column] = levels
                st.session_state[f"upload_levels_{column}"] = ", ".join(levels)
        unknown = sorted(set(kept) - set(categorical))
        if unknown:
            st.caption(f"Not categorical features here, so not used: {escape_markdown(', '.join(unknown))}.")
        for column in categorical:
            key = f"upload_levels_{column}"
            if key not in st.session_state:  # widget state goes with a page switch; the levels stay
                st.session_state[key] = ", ".join(kept.get(column, []))
            typed = st.text_input(f"Public levels of {column}", key=key, placeholder="level1, level2, …")
            levels = [v.strip() for v in typed.split(",") if v.strip()]
            if len(set(levels)) != len(levels):
                raise ValueError(f"The public levels of {column!r} list a level twice; list each once.")
            kept[column] = levels
    return {column: kept[column] for column in categorical if kept.get(column)}


def _show_problems(warnings_, reasons) -> None:
    """Each problem on its own line: the library's warnings, then why the result is not private."""
    items = [text for text in warnings_ if not text.startswith("Not private")]
    for text in items:
        st.warning(escape_markdown(text))
    if reasons:
        lines = "\n".join(f"- {escape_markdown(reason)}" for reason in reasons)
        st.warning(f"**Not private:**\n{lines}\n\n{AFTER_REASONS}")


def _forget_result() -> None:
    for name in ("upload_result", "upload_digest"):
        st.session_state.pop(name, None)


def upload_panel() -> bool:
    """Upload a CSV, choose target, positive class, features, public levels and bounds; stores the
    result. The file and the choices are kept for the session, so a visit to another page loses nothing.

    Returns True when a usable dataset is ready (never before the analyst has chosen the target).
    """
    from dpci.data import guess_separator, inspect_uploaded_csv

    st.subheader("Your data")
    uploaded = _uploaded_bytes()
    if uploaded is None:
        _forget_result()
        st.info("Upload a CSV to see private intervals for your own data, or pick Adult or Synthetic in the sidebar.")
        return False
    name, data, digest = uploaded
    try:
        with st.spinner(f"Reading {escape_markdown(name)}…"):  # once per file; later runs use the parse
            sep = guess_separator(data)
            st.session_state["upload_sep"] = sep
            summary = _memo("inspect", digest, lambda: inspect_uploaded_csv(data, sep=sep))
            table_identity(uploaded)  # the ledger's name for the rows, kept for this file
        binary = summary.binary_columns
        candidates = binary + [c for c in summary.columns if c not in binary] if binary else summary.columns
        c1, c2, c3 = st.columns(3)
        target = _target_choice(c1, candidates)
        if target is None:
            _forget_result()
            st.info("Choose the target column, the one the model predicts: nothing is shown or released before.")
            return False
        others = [c for c in summary.columns if c != target]
        features = kept_widget(c3.multiselect, "Features", others, "upload_features", default=others, address=False)
        categorical = [c for c in features if summary.kinds[c] != "numeric"]
        levels = _declared_levels(categorical) if categorical else {}
        read = (digest, target, tuple(features), sorted(levels.items()))
        result, warnings_ = _memo("read", read, lambda: _read_upload(data, sep, target, None, features, None, levels))
        classes = [result.schema.positive_class, result.schema.negative_class]
        positive = kept_widget(
            c2.selectbox,
            "Positive class (+1)",
            classes,
            "upload_positive",
            address=False,
            help="The label the model predicts as +1; the other is -1.",
        )
        public_labels = _labels_public(result)
        numeric = [col for col in result.schema.numeric_columns if col.name in features]
        bounds = _bounds_editor(numeric, name + repr((target, features))) if numeric else {}
        if bounds or positive != classes[0]:
            result, warnings_ = _memo(
                "read_public",
                (*read, positive, sorted(bounds.items())),
                lambda: _read_upload(data, sep, target, positive, features, bounds, levels),
            )
    except ValueError as err:
        st.error(escape_markdown(err))
        _forget_result()
        return False
    choices = (target, positive, features, sorted(bounds.items()), sorted(levels.items()))
    _keep_result(result, warnings_, public_labels, upload_digest(digest.encode() + repr(choices).encode()))
    return True


def _labels_public(result) -> bool:
    """Whether the analyst states the two label values public (a codebook), kept across pages."""
    labels = f"{result.schema.positive_class!r} and {result.schema.negative_class!r}"
    if "upload_labels_public" not in st.session_state:  # widget state goes with a page switch; the choice stays
        st.session_state["upload_labels_public"] = st.session_state.get("kept_labels_public", False)
    public_labels = st.checkbox(
        f"The label values {escape_markdown(labels)} are public (from a codebook, not read off this file)",
        key="upload_labels_public",
        help="The app read the two label values from the file: that both occur is a fact about these rows. "
        "Tick this only if the values are known without the data.",
    )
    st.session_state["kept_labels_public"] = public_labels
    st.session_state["_labels_from_data"] = not public_labels
    return public_labels


def _keep_result(result, warnings_, public_labels: bool, digest: str) -> None:
    """Say what is not private or was noted while reading, and keep the result for the session."""
    partial = st.session_state.get("_partial_bounds", ())
    _show_problems(warnings_, not_private_reasons(result, partial, here=True, labels_from_data=not public_labels))
    for note in result.notes:
        # the positive class has its own selector here, and warnings are already shown above
        if note not in warnings_ and not note.startswith("positive_class not given"):
            st.info(escape_markdown(note))
    st.session_state["upload_result"] = result
    st.session_state["upload_digest"] = digest
    st.caption(
        f"{len(result.frame):,} usable rows ({result.n_dropped:,} dropped for missing values); "
        f"positive class: {escape_markdown(repr(result.schema.positive_class))}."
    )


def upload_dataset(digest: str, d: int, scaling: str = "unit"):
    """The uploaded file preprocessed with its first d features and rows scaled by ``scaling`` (digest
    names the upload and its choices). Kept in the session (not in a cache shared by all sessions),
    so it goes when the session ends."""
    result = st.session_state["upload_result"]
    width = min(d, len(result.schema.feature_names()))
    return _memo("dataset", (digest, d, scaling), lambda: result.to_dataset(d=width, normalize=scaling))


def upload_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def canonical_table(data: bytes) -> bytes:
    """The ledger's name for an uploaded file: its table made canonical (dpci.data.upload_identity: the
    same people's data however the file was saved); a file that is no table, by its bytes as saved."""
    from dpci.data import upload_identity
    from dpci.exceptions import DataValidationError
    from dpci.ledger.config import canonical_csv

    try:
        return upload_identity(data)
    except DataValidationError:
        return canonical_csv(data)


def table_columns(kept):
    """The kept upload's :class:`dpci.data.TableColumns` (its column fingerprints), once per file; None
    for a file that is no table."""
    from dpci.data import upload_table
    from dpci.exceptions import DataValidationError

    def read():
        try:
            return upload_table(kept[1])
        except DataValidationError:
            return None

    return _memo("columns", kept[2], read)


def table_identity(kept) -> bytes:
    """:func:`canonical_table` of the kept upload ``(name, bytes, digest)``, computed once per file."""
    return _memo("identity", kept[2], lambda: canonical_table(kept[1]))
