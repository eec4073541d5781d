"""The app's privacy-honest workflow, headless: fresh randomness for real data, the privacy ledger
(every release admitted before its noise, stored releases shown again for free, refusals before
anything runs), one release for Present, and teaching mode said wherever its numbers appear."""

import hashlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from dpci.methods import allocate

ROOT = Path(__file__).resolve().parents[1]


def _page(page="app.py", **query):
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    at.query_params.update({k: str(v) for k, v in query.items()})
    at.run()
    return at.run() if page == "app.py" else at  # the Explorer draws its settings at its second run


def _status(at, name="adult"):
    """The ledger's status of a shipped dataset for this AppTest session's visitor."""
    from dpci.ledger import Ledger

    book = Ledger.from_config()
    return book.status(book.key_of(f"dpci shipped data: {name}", scope=at.session_state["_visitor"]))


def _explorer_on_upload(name, data):
    """The Explorer on an uploaded CSV (its bytes kept in the session, as the upload panel keeps them), as
    a browser sees it once loaded."""
    from ui.upload import upload_digest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["upload_kept"] = (name, data, upload_digest(data))
    at.session_state["kept_upload_target"] = "label"  # the analyst's choice
    at.query_params.update({"dataset": "upload"})
    at.run()
    return at.run()


def _private_bounds(at):
    at.session_state["explorer_numbers"] = True
    at.run()
    return at.dataframe[0].value["private lower"].to_numpy()


def test_real_data_get_fresh_randomness_and_every_new_release_is_paid_once():
    at = _page(d=2, n=2000)
    assert not at.exception
    first = _private_bounds(at)
    assert _status(at).releases == 1
    for eps in (0.5, 0.3):
        at.sidebar.select_slider(key="w_epsilon").set_value(eps).run()
    status = _status(at)
    rho = [allocate(eps, None, "objective", "pure").spend.rho for eps in (1.0, 0.5, 0.3)]
    assert status.releases == 3 and status.spent == pytest.approx(sum(rho))  # practice: a zCDP budget, in ρ
    at.sidebar.select_slider(key="w_epsilon").set_value(1.0).run()
    assert _status(at).releases == 3  # the same settings again: the stored release, nothing drawn or paid
    np.testing.assert_array_equal(_private_bounds(at), first)
    server_before = _status(at).server_releases  # every visitor's releases of Adult on this server
    other = _page(d=2, n=2000)  # another browser (another visitor) draws its own release, on its own budget
    assert not np.array_equal(_private_bounds(other), first)
    assert _status(other).releases == 1 and _status(other).server_releases == server_before + 1
    ledger = " ".join(m.value for m in at.sidebar.markdown)
    from dpci.ledger import tight_epsilon

    counted = f"3 releases: ε = {tight_epsilon(sum(rho), 1e-6):.3g} at δ = 1e-06 of ε = 10 at δ = 1e-06"
    assert "Practice ledger" in ledger and counted in ledger, ledger  # one total, as the budget counts it


def test_the_confidence_level_is_post_processing_and_costs_nothing():
    at = _page(d=2, n=2000)
    before = _private_bounds(at)
    at.sidebar.select_slider(key="w_alpha").set_value(0.1).run()
    assert not at.exception and _status(at).releases == 1
    assert np.all(_private_bounds(at) > before)  # a 90% interval inside the 95% one: the same draws


def test_practice_data_is_never_refused_and_past_the_budget_the_ledger_marks_it():
    """Adult is public practice data: a release past the practice budget (ρ = 1.54, that is (10, 1e-6)) runs
    and draws its chart; the practice ledger marks it, and "Start again" empties it."""
    at = _page(d=2, n=2000, epsilon=5.0)  # ε = 5 by objective perturbation: ρ = 5.9, over the budget alone
    assert not at.exception and at.get("plotly_chart") and _status(at).releases == 1
    at.sidebar.select_slider(key="w_epsilon").set_value(10.0).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.get("plotly_chart") and _status(at).releases == 2
    assert any("a curator would refuse this release" in w.value for w in at.sidebar.warning)
    assert any("Practice data" in c.value and "nobody in it is protected" in c.value for c in at.caption)
    at.session_state["odometer_panel"] = True  # the ledger's history: the release past the budget is marked
    at.run()
    history = [c.value for c in at.sidebar.caption if c.value.startswith("• release")]
    assert len(history) == 2 and all("a curator would refuse it" in line for line in history), history
    at.sidebar.button(key="start_again").click().run()
    assert not at.exception and _status(at).releases == 1  # forgotten; these settings drawn again


def test_present_shows_the_one_release_made_and_says_how_it_was_drawn():
    at = _page("pages/5_Present.py", d=2, n=2000)
    assert not at.exception and "Nothing has been released" in at.info[0].value
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(m.value for m in at.markdown)
    assert "fresh, secret randomness" in shown and "seed" not in shown
    assert _status(at).releases == 1
    release_id = (
        at.query_params["release"][0] if isinstance(at.query_params["release"], list) else at.query_params["release"]
    )
    elsewhere = _page("pages/5_Present.py", release=release_id)  # the link, in another browser: the same numbers
    assert not elsewhere.exception and any(release_id in c.value for c in elsewhere.caption)
    assert _status(elsewhere).releases == 0  # nothing drawn for the second browser
    missing = _page("pages/5_Present.py", release="no-such-release")
    assert "There is no release" in missing.error[0].value


def test_present_shows_the_release_the_explorer_made_and_charges_nothing_new():
    """A visitor sees the Explorer draw a release of Adult, then opens Present: the same release, by its id,
    and no second charge (nothing says "nothing released", no button makes another)."""
    at = _page(d=2, n=2000)
    assert not at.exception and _status(at).releases == 1
    at.query_params.pop("release", None)  # the navigation link carries the settings, not always the release
    at.switch_page("pages/5_Present.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("Nothing has been released" in i.value for i in at.info)
    assert not at.button or all(b.label != "Release the sidebar's settings" for b in at.button)
    shown = at.query_params["release"]
    release_id = shown[0] if isinstance(shown, list) else shown
    assert any(release_id in c.value for c in at.caption) and _status(at).releases == 1


def test_teaching_mode_is_labelled_and_not_counted_as_private():
    at = _page(d=2, n=2000, randomness="teaching")
    assert _status(at).releases == 0 and _status(at).not_private >= 1
    assert any("Teaching mode" in c.value for c in at.sidebar.caption)
    present = _page("pages/5_Present.py", d=2, n=2000, randomness="teaching")
    shown = " ".join(m.value for m in present.markdown)
    assert "fixed random seed 0" in shown and any("Teaching mode" in w.value for w in present.warning)


def test_how_it_works_never_uses_the_secret_randomness():
    at = _page("pages/4_How_it_works.py", d=2, n=2000)
    assert not at.exception and "always runs in teaching mode" in at.info[0].value
    assert _status(at).releases == 0 and _status(at).not_private >= 1  # recorded as not private, never paid


def test_sweeps_tune_on_the_stand_in_unless_told_otherwise():
    at = _page("pages/1_Budget_allocation.py", d=2, n=2000)
    assert at.radio(key="sweep_source").value.startswith("A stand-in")
    assert any("Stand-in: synthetic rows with n = 2,000" in c.value for c in at.caption)
    at.select_slider[0].set_value(50).run()  # repetitions
    at.select_slider[1].set_value(500).run()  # Monte Carlo samples
    at.button[0].click().run()
    assert at.session_state["slot_split"].job.wait(240)
    at.run()
    status = _status(at)
    assert not at.exception and (status.releases, status.not_private) == (0, 0)  # the stand-in: nothing spent
    at.radio(key="sweep_source").set_value("The real data (not private)").run()
    assert any("not private" in w.value for w in at.warning)
    at.button[0].click().run()
    assert at.session_state["slot_split"].job.wait(240)
    at.run()
    from dpci.ledger import Ledger

    status = _status(at)
    assert status.releases == 0 and "Budget allocation sweep run on the real data" in [
        r["what"] for r in Ledger.from_config().history(status.key)
    ]


def test_the_downloaded_csv_says_how_its_numbers_were_drawn():
    import pandas as pd

    from ui.app_state import AppState
    from ui.present import intervals_csv, settings_in_words

    table = pd.DataFrame(
        {"feature": ["age", "const"], "private_lower": [0.123456789, -1.0], "private_upper": [2.0, 3.0]}
    )
    text = intervals_csv(table, AppState.of(randomness="teaching", seed=7), 30_162, 11, None)
    header = [line for line in text.splitlines() if line.startswith("# ")]
    assert "# Randomness: teaching mode, public seed 7 (not a private release)" in header
    assert (
        "# Privacy guarantee: none: not private (teaching mode: the public seed 7 made the noise, so anyone can "
        "recompute it). The mechanism would spend ε = 1 (pure differential privacy)" in header
    )
    assert any(line.startswith("# dpci version: ") for line in header) and "# Outcome: income >50K" in header
    assert "0.1235" in text and "0.123456789" not in text  # rounded
    words = settings_in_words(AppState.of(privacy="zcdp", budget=0.5), 1000, 3, None)
    assert words["Privacy guarantee"].startswith("ρ = 0.5 (zero-concentrated DP), i.e. (ε = 5.76")
    assert words["Randomness"] == "fresh and secret (a private release)" and words["Features"] == "2 and a constant"
    assert not any(key in words for key in ("phi2_rest", "vi_replicates", "m", "n"))  # no internal names


@pytest.mark.parametrize("source", ["A stand-in from public facts (costs no privacy)", "The real data (not private)"])
def test_a_sweep_page_runs_on_an_upload(source):
    from ui.upload import upload_digest

    rng = np.random.default_rng(0)
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(1500)]
    data = "\n".join(["age,hours,label", *rows]).encode()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["upload_kept"] = ("people.csv", data, upload_digest(data))
    at.session_state["kept_upload_target"] = "label"  # the analyst's choice
    at.query_params.update({"dataset": "upload", "randomness": "teaching"})
    at.run()
    at.switch_page("pages/3_Compare_methods.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.radio(key="sweep_source").set_value(source).run()
    at.multiselect(key="cmp_methods").set_value([("output", "pure")]).run()
    at.multiselect(key="cmp_values_n").set_value([500, 1000]).run()
    at.select_slider(key="cmp_k").set_value(20).run()
    next(b for b in at.button if b.label == "Run").click().run()
    job = at.session_state["slot_cmp"].job
    assert job.wait(240) and job.error is None, job.error
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sorted(set(job.latest.frame["n"])) == [500, 1000]


@pytest.mark.parametrize(
    "page", ["pages/1_Budget_allocation.py", "pages/2_Coverage_and_sample_size.py", "pages/3_Compare_methods.py"]
)
def test_a_sweep_page_without_an_upload_says_so(page):
    at = _page(page, dataset="upload")
    assert not at.exception and "No CSV uploaded yet" in at.error[0].value


def test_budget_for_a_target_width_charges_every_search_on_the_real_data_before_it_runs():
    at = _page("pages/7_Budget_for_a_target_width.py", d=2, n=5000, af_target="0.5", af_max="2.0")
    assert not at.exception, [e.value for e in at.exception]
    next(b for b in at.button if b.label == "Find the budget").click().run()
    assert at.session_state["slot_accuracy"].job.wait(240)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = " ".join(m.value for m in at.markdown)
    assert "noise reduction" in shown and "doubling" in shown and "pays for that step only" in shown
    assert at.get("plotly_chart")
    assert _status(at).releases == 0  # the stand-in: nothing spent
    at.radio(key="sweep_source").set_value("The real data (private releases, on the privacy ledger)").run()
    assert at.multiselect(key="af_strategies_real").value == ["noise_reduction"]
    assert any("at the most it can spend" in i.value and "from 0 to 0.968 of 1.54" in i.value for i in at.info), [
        i.value for i in at.info
    ]
    spent = []
    for target in ("0.3", "0.5", "0.3"):  # the audit's sequence: every search that runs is paid for
        at.select_slider(key="af_target").set_value(float(target)).run()
        next(b for b in at.button if b.label == "Find the budget").click().run()
        assert at.session_state["slot_accuracy"].job.wait(240)
        at.run()
        spent.append(_status(at).spent)
    assert spent == pytest.approx([0.9675, 1.935, 2.9025], rel=1e-12)  # each search at ε = 2: ρ = 0.9675
    at.select_slider(key="af_max").set_value(5.0).run()  # practice data: past the budget, marked, not refused
    assert any("a curator would refuse this release" in i.value for i in at.info), [i.value for i in at.info]
    assert not next(b for b in at.button if b.label == "Find the budget").disabled


def test_an_upload_file_name_is_shown_as_text_not_markdown():

    rng = np.random.default_rng(0)
    rows = [f"{rng.integers(18, 80)},{rng.choice(['yes', 'no'])}" for _ in range(300)]
    data = "\n".join(["age,label", *rows]).encode()
    at = _explorer_on_upload("[x](http://evil.example).csv", data)
    at.switch_page("pages/1_Budget_allocation.py").run()
    assert not at.exception
    shown = [c.value for c in at.caption if "Stand-in" in c.value] + [m.value for m in at.sidebar.markdown]
    assert shown and not any("[x](http" in v for v in shown), shown  # brackets escaped, no live link


def test_an_upload_is_explored_on_a_free_preview_and_charged_only_on_release():
    from dpci.ledger import Ledger
    from ui.privacy import canonical_upload

    rng = np.random.default_rng(7)
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(1500)]
    data = "\r\n".join(["age,hours,label", *rows]).encode()  # saved on Windows: the same data as with \n
    at = _explorer_on_upload("people.csv", data)
    book = Ledger.from_config()
    key = book.key_of(canonical_upload(data.replace(b"\r\n", b"\n")))

    def shown():  # as read on the page (markdown escapes removed)
        return (" ".join(i.value for i in at.info) + " ".join(c.value for c in at.caption)).replace("\\", "")

    assert not at.exception, [e.value for e in at.exception]
    assert "Preview: not your data" in shown() and book.status(key).releases == 0
    assert at.metric[0].label == "ε if released"  # a preview spends nothing, and says so
    # the bounds were read from the data (no public ones given): no (ε, δ) is shown as if it held
    assert at.metric[1].label == "Guarantee" and at.metric[1].value == "none"
    assert all("(ε, δ)-DP" not in m.label for m in at.metric)
    assert "Release at ε = 1 costs ε = 1: the budget of this dataset goes from 0 to 1 of 3" in shown()
    at.sidebar.select_slider(key="w_epsilon").set_value(0.5).run()  # moving sliders costs nothing
    assert "Preview: not your data" in shown() and book.status(key).releases == 0
    at.button(key="release_on_data").click().run()
    assert not at.exception and "Preview: not your data" not in shown()
    assert book.status(key).releases == 1 and book.status(key).spent == pytest.approx(0.5)
    at.sidebar.select_slider(key="w_epsilon").set_value(1.0).run()  # new settings: a preview again, cost said
    assert "Preview: not your data" in shown() and "goes from 0.5 to 1.5 of 3" in shown()
    at.sidebar.select_slider(key="w_epsilon").set_value(0.5).run()  # the released settings: the stored release
    assert "Preview: not your data" not in shown() and book.status(key).releases == 1


def test_an_uploader_says_whom_the_guarantee_protects_and_whether_the_labels_are_public():
    from dpci.ledger import Ledger
    from ui.privacy import canonical_upload

    rng = np.random.default_rng(8)
    rows = [f"{rng.integers(18, 80)},{rng.choice(['yes', 'no'])}" for _ in range(800)]
    data = "\n".join(["age,label", *rows]).encode()
    at = _explorer_on_upload("visits.csv", data)
    book = Ledger.from_config()
    key = book.key_of(canonical_upload(data))
    assert any("label values 'yes' and 'no' were read from the data" in w.value.replace("\\", "") for w in at.warning)
    at.checkbox(key="upload_labels_public").check().run()
    assert not any("label values" in w.value for w in at.warning)
    at.number_input(key=f"group_size_{key[:12]}").set_value(3).run()
    assert book.status(key).group_size == 3
    assert any("up to 3 rows" in c.value for c in at.caption)
    at.button(key="release_on_data").click().run()
    assert book.status(key).spent == pytest.approx(3.0)  # epsilon 1 for a group of 3 rows: 3 (group privacy)
    at.run()
    assert at.number_input(key=f"group_size_{key[:12]}").disabled  # fixed at the first release
    with pytest.raises(ValueError, match="fixed before"):
        book.set_group_size(key, 1)  # and the ledger refuses it whatever a page does


def test_the_ledger_reads_streamlits_secrets_where_the_environment_says_nothing():
    from ui.privacy import server_env

    secrets = {"connections": {"dpci": {"url": "postgresql+psycopg://u@host/db"}}, "dpci": {"budget": "epsilon=1"}}
    env = server_env(secrets, {"DPCI_DEMO_BUDGET": "epsilon=2"})
    assert env["DPCI_DATABASE_URL"] == "postgresql+psycopg://u@host/db" and env["DPCI_BUDGET"] == "epsilon=1"
    assert env["DPCI_DEMO_BUDGET"] == "epsilon=2"
    assert server_env(secrets, {"DPCI_DATABASE_URL": "sqlite://"})["DPCI_DATABASE_URL"] == "sqlite://"  # env first
    assert "DPCI_DATABASE_URL" not in server_env({}, {})


def _old_name(old: dict, data_key: str) -> str:
    """The name the app gave a release before release specifications (its formula, copied as it was):
    the rows in use with the dataset's label, and the label-valued settings but post-processing."""
    values = {k: v for k, v in old.items() if k not in ("level", "m", "vi_replicates", "delta", "seed")}
    values["randomness"] = "fresh"
    return hashlib.blake2b(f"{data_key}|{sorted(values.items())}".encode(), digest_size=12).hexdigest()


OLD_SETTINGS = {  # AppState.of(d=2, n=2000) as the app recorded them then: labels as values, the old field names
    "dataset": "Adult (UCI census)", "d": 2, "n": 2000, "model": "Logistic regression", "h": 0.5,
    "mechanism": "Objective perturbation", "privacy": "Pure ε-DP", "epsilon": 1.0, "rho": 0.5, "phi1": 0.65,
    "phi2_rest": 0.5, "c": 0.001, "level": 0.95, "m": 10_000, "vi_replicates": 10_000, "seed": 0, "delta": 1e-6,
    "randomness": "auto", "scaling": "global",
}  # fmt: skip


@pytest.fixture
def own_ledger(tmp_path, monkeypatch):
    """The app on a ledger of its own (a fresh SQLite file), opened anew by the next run."""
    import ui.privacy

    monkeypatch.setenv("DPCI_DATABASE_URL", f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    ui.privacy.ledger.clear()
    yield
    ui.privacy.ledger.clear()


def test_releases_stored_under_their_old_names_are_renamed_once_and_found_free(own_ledger):
    """A ledger written by the app before release specifications (records holding label-valued settings,
    named by the old formula) opens, is renamed once, and the Explorer shows each stored release again
    by its new name without charging; an upload's release keeps its name and opens by its id."""
    import json

    import sqlalchemy as sa

    import ui.privacy
    from dpci.ledger import Ledger
    from dpci.ledger.schema import meta, releases
    from ui.app_state import AppState
    from ui.release_names import RENAMING, identity

    at = _page(d=2, n=2000)  # a release stored by today's code, then rewritten as the old code kept it
    first, visitor = _private_bounds(at), at.session_state["_visitor"]
    book = Ledger.from_config()
    (made,) = book.releases_of(book.key_of("dpci shipped data: adult", scope=visitor))
    upload = book.key_of("some upload")
    book.register(upload, "your upload people.csv")
    old_upload = _old_name({**OLD_SETTINGS, "dataset": "Uploaded CSV"}, "Uploaded CSV|2|2000|0123abcd|global")
    kept = book.store_release(
        None, upload, old_upload, {"app_settings": {**OLD_SETTINGS, "dataset": "Uploaded CSV"}}, made.payload
    )
    old = _old_name(OLD_SETTINGS, "Adult (UCI census)|2|2000||global")
    record = dict(app_settings=OLD_SETTINGS, page="Explorer", method="objective", privacy="pure", budget=1.0)
    with book.engine.begin() as conn:
        conn.execute(sa.update(releases).where(releases.c.id == made.id).values(identity=old, spec=json.dumps(record)))
        conn.execute(sa.delete(meta).where(meta.c.key == f"done: {RENAMING}"))
    ui.privacy.ledger.clear()  # the server restarts on the old ledger

    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    again.session_state["_visitor"] = visitor
    again.query_params.update(d="2", n="2000")
    again.run()
    again.run()
    assert not again.exception and _status(again).releases == 1  # found by its new name: nothing drawn or paid
    np.testing.assert_array_equal(_private_bounds(again), first)
    new = identity(AppState.of(d=2, n=2000), "adult|2|2000||global")
    assert book.release(made.id).identity == new and new != old
    assert book.release(kept).identity == old_upload  # its file's digest is not in the record: kept
    assert book.rename_releases(RENAMING, lambda stored: "never") is None  # a second open does nothing
    shown = _page("pages/5_Present.py", release=kept)  # the upload's release, by its id
    assert not shown.exception and any(kept in c.value for c in shown.caption)


@pytest.mark.parametrize(
    "sent",
    [
        {},
        {"demo": "1", "practice": "true", "ledger": "practice"},  # address fields the app does not read
        {"dataset": "upload", "randomness": "fresh", "_visitor": "someone-elses-visitor-id"},
    ],
    ids=["nothing", "practice asked in the address", "another visitor's id"],
)
def test_an_upload_never_reaches_the_practice_rule_whatever_the_visitor_sends(sent):
    """Real data keeps its gate: the server decides the rule from the data it loads, so an upload is
    refused past its budget whatever the address or the session says, and never called practice data."""
    from dpci.ledger import Ledger
    from ui.privacy import canonical_upload

    rng = np.random.default_rng(sum(map(ord, str(sent))))  # one upload per case: its budget is fixed once
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(1200)]
    data = "\n".join(["age,hours,label", *rows]).encode()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    from ui.upload import upload_digest

    at.session_state["upload_kept"] = ("people.csv", data, upload_digest(data))
    at.session_state["kept_upload_target"] = "label"  # the analyst's choice
    if "_visitor" in sent:
        at.session_state["_visitor"] = sent["_visitor"]
    at.query_params.update({"dataset": "upload", **{k: v for k, v in sent.items() if k != "_visitor"}})
    at.run()
    at.run()
    book = Ledger.from_config()
    key = book.key_of(canonical_upload(data))
    assert not book.status(key).demo
    book.set_budget(key, "epsilon=0.6")  # whoever runs the server, before the first release
    at.sidebar.select_slider(key="w_epsilon").set_value(0.5).run()
    at.button(key="release_on_data").click().run()
    assert not at.exception and book.status(key).releases == 1
    at.sidebar.select_slider(key="w_epsilon").set_value(1.0).run()  # 0.5 + 1 > 0.6
    said = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "Refused before it ran" in said and at.button(key="release_on_data").disabled
    assert book.status(key).releases == 1 and not book.status(key).demo
    assert not any("Practice data" in c.value for c in at.caption)
    assert not any("Practice ledger" in m.value for m in at.sidebar.markdown)


def test_the_sidebar_offers_only_what_runs_on_the_data_and_says_why():
    """A pair that cannot run is not offered, with the reason in words: Kulkarni et al. with the Huberized
    SVM (logistic regression only), ρ-zCDP on real data whose budget is pure ε-DP (and so Kulkarni et al.,
    zCDP only). Practice data offers both notions. An address asking for a pair that cannot run draws the
    first that can."""
    at = _page(d=2, n=2000, mechanism="kulkarni", model="huber")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.get("plotly_chart")
    mechanisms = at.sidebar.radio(key="w_method").options
    assert not any("Kulkarni" in m for m in mechanisms) and at.sidebar.radio(key="w_method").value != "kulkarni"
    said = " ".join(c.value for c in at.sidebar.caption)
    assert "Kulkarni et al. noise-aware Bayesian is not offered: it fits logistic regression only." in said
    assert at.sidebar.radio(key="w_privacy").options == ["Pure ε-DP", "ρ-zCDP"]

    rng = np.random.default_rng(5)
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(1100)]
    upload = _explorer_on_upload("pure.csv", "\n".join(["age,hours,label", *rows]).encode())
    assert not upload.exception
    assert upload.sidebar.radio(key="w_privacy").options == ["Pure ε-DP"]
    said = " ".join(c.value for c in upload.sidebar.caption)
    assert "ρ-zCDP is not offered: this data's budget, ε = 3, is pure ε-DP" in said
    assert "it releases ρ-zCDP only, which this data's budget cannot count" in said
    assert not any("Kulkarni" in m for m in upload.sidebar.radio(key="w_method").options)
