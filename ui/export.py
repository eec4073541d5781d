"""A stored release, exported: its JSON record, and a short Python script (or notebook) that re-runs
its specification with dpci on one's own copy of the data, so an analyst moves from the app to code in
one step. The script draws fresh randomness (a new release, paid on the script's own ledger): the
stored numbers are in the record, not recomputed.
"""

from __future__ import annotations

import json

from dpci.ledger import StoredRelease
from dpci.ledger.records import release_record
from dpci.spec import ReleaseSpec
from ui.app_state import AppState


def upload_spec(result, file_name: str, sep: str | None) -> dict:
    """What a script needs to read an upload as the app did: the file's name, the target, the positive
    class and every column's public description (bounds, categories)."""
    schema = result.schema
    columns = [
        dict(name=c.name, kind=c.kind, lower=c.lower, upper=c.upper, categories=list(c.categories or ()))
        for c in schema.columns
    ]
    return dict(file=file_name, sep=sep or ",", target=schema.label, positive=schema.positive_class, columns=columns)


def _data_lines(s: AppState, upload: dict | None, public: bool = True) -> list[str]:
    """How the script reads the release's data; ``public``: whether the release's bounds and labels
    were public facts (else the script says they were read from the data)."""
    if s.data.dataset == "adult":
        return [
            "from dpci.data import load_adult",
            "",
            f"data = load_adult(d={s.data.d}, normalize={s.data.scaling!r})  # UCI Adult, shipped with dpci",
        ]
    if s.data.dataset == "synthetic":
        return [
            "import numpy as np",
            "from dpci.data import make_synthetic_logistic",
            "",
            "# the app's synthetic data: public, with a known truth",
            f"theta = np.append(np.resize({(1.5, -1.0, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, -1.2, 0.4)!r}, {s.data.d}), 0.3)",
            "X, y = make_synthetic_logistic(50_000, theta, random_state=20261122)",
        ]
    upload = upload or {}
    bounds = {c["name"]: (c["lower"], c["upper"]) for c in upload.get("columns", []) if c["kind"] == "numeric"}
    categories = {c["name"]: tuple(c["categories"]) for c in upload.get("columns", []) if c["kind"] != "numeric"}
    features = [c["name"] for c in upload.get("columns", [])]
    return [
        "from pathlib import Path",
        "",
        "from dpci.data import read_uploaded_csv",
        "",
        f"path = Path({upload.get('file', 'your-data.csv')!r})  # your copy of the data",
        "result = read_uploaded_csv(",
        "    path.read_bytes(),",
        f"    {upload.get('target', 'label')!r},",
        f"    positive_class={upload.get('positive')!r},",
        f"    features={features!r},",
        f"    bounds={bounds!r},  "
        + ("# public bounds, as in the app" if public else "# NOT public: read from the data; give public ones"),
        f"    categories={categories!r},",
        f"    sep={upload.get('sep', ',')!r},",
        ")",
        f"data = result.to_dataset(d={s.data.d}, normalize={s.data.scaling!r})",
    ]


def _budget_text(s: AppState) -> str:
    """A budget for the script's ledger in the release's own notion, large enough for this one release."""
    n = s.notion
    amount = max(3 * n.default, s.spec.budget)  # room for this one release
    return f"{n.unit}={amount:g}" + (f",delta={s.view.delta:g}" if n.needs_delta else "")


def release_spec_of(s: AppState, stored: StoredRelease | None):
    """The specification of the stored release exactly (as the ledger recorded it), else the settings'."""
    if stored is not None and "release" in stored.spec:
        return ReleaseSpec.from_dict(stored.spec["release"])
    return s.spec


def release_script(s: AppState, stored: StoredRelease | None = None) -> str:
    """A Python script that makes a release with these settings (fresh randomness) on a ledger."""
    upload = (stored.spec.get("upload") if stored else None) or None
    # the bounds are public when the release recorded nothing read from the data (a record without the
    # field is read as not private, as dpci.ledger.records.not_private_reason reads it)
    public = stored is None or ("not_private" in stored.spec and not stored.spec["not_private"])
    data = _data_lines(s, upload, public)
    arrays = "X, y" if s.data.dataset == "synthetic" else "data.X, data.y"
    header = [
        '"""A private release with the settings of the dpci app' + (f" (release {stored.id})" if stored else "") + ".",
        "",
        "It draws fresh randomness: a new release, admitted by the ledger below before its noise is",
        "drawn. The app's stored numbers are in the release's JSON record.",
        '"""',
        "",
        "import dpci",
        "from dpci import ReleaseSpec, get_loss",
    ]
    n_rows = (
        [f"# the app used n = {s.data.n} rows (a fixed subsample); this script uses all of them"] if s.data.n else []
    )
    call = [
        "",
        *n_rows,
        f'ledger = dpci.Ledger("sqlite:///dpci-ledger.sqlite3", budget={_budget_text(s)!r})  # set your own budget',
        "# the release's specification (seed=None: fresh, secret randomness)",
        f"spec = {release_spec_of(s, stored).replace(seed=None)!r}",
        "with ledger as watch:",
        f"    release = spec.release({arrays})",
        "print(release.conf_int)",
        "print(watch.status().describe())",
    ]
    return "\n".join(header + data + call) + "\n"


def release_notebook(s: AppState, stored: StoredRelease | None = None) -> str:
    """The same script as a Jupyter notebook (nbformat 4): a title cell and one code cell."""
    title = "# A private release with dpci\n\nThe settings of the app" + (f"'s release `{stored.id}`" if stored else "")
    settings = "\n".join(f"- {k}: {v}" for k, v in s.values().items())
    cells = [
        dict(cell_type="markdown", metadata={}, source=title + ".\n\n" + settings),
        dict(cell_type="code", metadata={}, execution_count=None, outputs=[], source=release_script(s, stored)),
    ]
    notebook = dict(nbformat=4, nbformat_minor=5, metadata=dict(language_info=dict(name="python")), cells=cells)
    return json.dumps(notebook, indent=1, ensure_ascii=False)


__all__ = ["release_notebook", "release_record", "release_script", "upload_spec"]
