"""One release, one guarantee: an upload released on the Explorer (one Release, one charge) is shown by
Present with the same guarantee in this session and after a reload or in another browser (a new session
opening Present's ``?release=`` link), on the page, in its report and in every CSV it offers. Bounds and
labels read from the data leave it not private everywhere; public ones keep it private, and the internal
CSV names the columns no guarantee covers."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_BOUNDS = {"age": (0.0, 120.0), "hours": (0.0, 100.0)}
INTERNAL = "Internal: with non-private comparisons"
NON_PRIVATE_COLUMNS = "nonprivate_estimate, nonprivate_lower, nonprivate_upper"


class Downloads(dict):
    """The files a page offered for download, by file name: static data as it is, deferred data (the
    report, built when clicked) as its callable."""

    def text(self, ending: str) -> str:
        """The latest offered file whose name ends so, as a click gives it."""
        data = [v for name, v in self.items() if name.endswith(ending)][-1]
        data = data() if callable(data) else data
        return data.decode() if isinstance(data, bytes) else data


@pytest.fixture
def downloads(monkeypatch):
    offered = Downloads()
    add, add_deferred = MediaFileManager.add, MediaFileManager.add_deferred

    def record(self, data, mimetype, coordinates, file_name=None, **kwargs):
        if file_name:
            offered[file_name] = data
        return (add_deferred if callable(data) else add)(self, data, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add", record)
    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return offered


def _upload(seed):
    rng = np.random.default_rng(seed)
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(1200)]
    return "\n".join(["age,hours,label", *rows]).encode()


def _released_upload(data, public):
    """The Explorer on an upload (with public bounds and labels, or the data's own), after one press of
    its one Release button; returns the session and the ledger's key of the upload."""
    from dpci.ledger import Ledger
    from ui.privacy import canonical_upload
    from ui.upload import upload_digest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["upload_kept"] = ("people.csv", data, upload_digest(data))
    at.session_state["kept_upload_target"] = "label"  # the analyst's choice
    if public:
        at.session_state["kept_bounds"] = dict(PUBLIC_BOUNDS)
        at.session_state["kept_labels_public"] = True
    at.query_params.update({"dataset": "upload"})
    at.run().run()
    assert not at.exception, [e.value for e in at.exception]
    releases = [b for b in at.button if b.label == "Release"]
    assert [b.key for b in releases] == ["release_on_data"]  # one button named Release
    releases[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Release" not in [b.label for b in at.button]  # nothing left to press that would spend again
    book = Ledger.from_config()
    return at, book, book.key_of(canonical_upload(data))


def _page_text(at) -> str:
    parts = [e.value for e in at.error] + [m.value for m in at.markdown] + [c.value for c in at.caption]
    return " ".join(parts).replace("\\", "")  # as read on the page (markdown escapes removed)


def _views(at, offered):
    """What Present says (page, report, public CSV, internal CSV), read after the page's run."""
    offered.clear()
    at.run()
    views = {"page": _page_text(at), "report": offered.text("report.html"), "csv": offered.text(".csv")}
    offered.clear()
    at.radio(key="present_audience").set_value(INTERNAL).run()
    views["internal csv"] = offered.text(".csv") if "intervals-internal.csv" in offered else None
    return views


def _guarantee(view: str) -> str:
    """The guarantee a view states: "private" or "not private" (and never both)."""
    void = any(
        word in view
        for word in ("No privacy guarantee", "Not private: the bounds", "Privacy guarantee: none", "not private (the")
    )
    promised = any(word in view for word in ("Guarantee: ε = 1", "Privacy guarantee: ε = 1", "<td>ε = 1 (pure"))
    assert void != promised, view[:3000]
    return "not private" if void else "private"


def _header(csv_text: str) -> dict[str, str]:
    lines = [line[2:].split(": ", 1) for line in csv_text.splitlines() if line.startswith("# ")]
    return dict(lines)


def _body(csv_text: str) -> str:
    return "\n".join(line for line in csv_text.splitlines() if not line.startswith("# "))


@pytest.mark.parametrize("public", [True, False], ids=["public bounds", "bounds from the data"])
def test_present_states_one_true_guarantee_fresh_and_reloaded_on_page_report_and_every_csv(public, downloads):
    from ui.privacy import history_csv

    data = _upload(11 if public else 12)
    at, book, key = _released_upload(data, public)
    assert book.status(key).releases == 1 and book.status(key).spent == pytest.approx(1.0)  # one charge
    at.switch_page("pages/5_Present.py").run()
    assert not at.exception, [e.value for e in at.exception]
    release_id = at.query_params["release"]
    release_id = release_id[0] if isinstance(release_id, list) else release_id
    fresh = _views(at, downloads)

    reloaded_at = AppTest.from_file(str(ROOT / "pages/5_Present.py"), default_timeout=120)
    reloaded_at.query_params["release"] = release_id  # a reload, or another browser opening the link
    reloaded = _views(reloaded_at, downloads)
    assert not reloaded_at.exception, [e.value for e in reloaded_at.exception]
    assert book.status(key).releases == 1  # shown again: nothing drawn, nothing charged

    expected = "private" if public else "not private"
    for when, views in (("fresh", fresh), ("reloaded", reloaded)):
        for name, view in views.items():
            if view is not None:
                assert _guarantee(view) == expected, (when, name)
        title = "What the private model says about label = yes" if public else "What the model (not private) says"
        assert title in views["page"] and title in views["report"], when
    assert _body(fresh["csv"]) == _body(reloaded["csv"])  # the same numbers
    for views in (fresh, reloaded):
        header = _header(views["csv"])
        assert header["Outcome"] == "label = yes" and header["Release"] == release_id
        if public:
            assert header["Not private"] == "no column: every number is private"
            assert header["Privacy guarantee"] == "ε = 1 (pure differential privacy)"
        else:
            assert header["Not private"].startswith("every column (private_estimate, private_lower, private_upper")
            assert "the data's own minimum or maximum" in header["Not private"]
            assert header["Privacy guarantee"].startswith("none: not private (the bounds of age, hours")
    internal = _header(fresh["internal csv"])  # the internal view needs the data: in its own session only
    assert reloaded["internal csv"] is None
    if public:
        assert internal["Not private"] == f"the columns {NON_PRIVATE_COLUMNS} (computed from the data without privacy)"
    else:
        assert internal["Not private"].startswith("every column (") and NON_PRIVATE_COLUMNS in internal["Not private"]
    history = pd.read_csv(io.StringIO(history_csv(book.history(key))))  # the sidebar's History (CSV)
    made = history[history["release"] == release_id]
    assert made["private"].tolist() == [public] and made["counted"].tolist() == [True]


@pytest.mark.parametrize("curvature, kept", [(0.02, 50), (2.0, 99)])
def test_what_present_says_of_the_penalty_is_measured_on_the_release(curvature, kept):
    """theta~ = H_L (H_L + 2cI)^-1 theta for a quadratic loss: with c = 0.01 and curvature 0.02 the penalty
    halves the coefficients, with curvature 2 it moves them by 1%; the sentence says which."""
    from types import SimpleNamespace

    from ui.estimand_shown import shrinkage_words

    c, theta = 0.01, np.array([1.0, -2.0, 0.5])
    hessian = np.eye(3) * (curvature + 2 * c)
    release = SimpleNamespace(theta=theta * curvature / (curvature + 2 * c), hessian=hessian, c=c)
    words = shrinkage_words(release)
    if kept < 95:
        assert f"about {kept}% of the coefficients without penalty" in words
    else:
        assert words.endswith("by about 1%: little")


def test_a_capped_correction_says_the_shrinkage_may_be_larger():
    from types import SimpleNamespace

    from ui.estimand_shown import shrinkage_words

    c = 0.01
    release = SimpleNamespace(theta=np.array([1.0, 1.0]), hessian=np.diag([1.0, 2 * c]), c=c)  # one direction floored
    assert shrinkage_words(release).endswith("too noisy in some directions to tell how much less")
