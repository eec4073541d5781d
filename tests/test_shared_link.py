"""A link shares numbers: the Explorer's address carries the stored release it shows, and another
browser opening it sees exactly those numbers and the same guarantee, drawing and charging nothing;
a setting the noise depends on, moved, leaves the shared release. A bad id is said, and the settings used."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def _one(value):
    return value[0] if isinstance(value, list) else value


def _explorer(query=None, state=None):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.query_params.update({k: str(v) for k, v in (query or {}).items()})
    at.run()
    return at.run()


def _bounds(at):
    at.session_state["explorer_numbers"] = True
    at.run()
    table = next(f.value for f in at.dataframe if "private lower" in f.value.columns)
    return table["private lower"].to_numpy(), table["private upper"].to_numpy()


def _status_of_visitor(at, name="adult"):
    from dpci.ledger import Ledger

    book = Ledger.from_config()
    return book.status(book.key_of(f"dpci shipped data: {name}", scope=at.session_state["_visitor"]))


def _text(at) -> str:
    parts = [e.value for e in at.error] + [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [i.value for i in at.info] + [w.value for w in at.warning]
    return " ".join(parts).replace("\\", "")


def test_a_practice_release_link_shows_the_same_numbers_in_another_browser_for_free():
    at = _explorer({"d": 2, "n": 2000, "epsilon": 0.5})
    assert not at.exception, [e.value for e in at.exception]
    release_id = _one(at.query_params["release"])
    shown = _bounds(at)
    assert "Share these numbers by copying the page address" in _text(at)
    assert "holds the settings only" in _text(at)  # which link shares what

    other = _explorer(dict(at.query_params))  # another browser: another visitor, the copied address
    assert not other.exception, [e.value for e in other.exception]
    for mine, theirs in zip(shown, _bounds(other)):
        np.testing.assert_array_equal(mine, theirs)  # exactly the stored numbers
    assert "A shared release" in _text(other) and "Guarantee: ε = 0.5" in _text(other)
    assert _status_of_visitor(other).releases == 0 and _status_of_visitor(other).spent == 0  # nothing charged
    assert _one(other.query_params["release"]) == release_id

    other.switch_page("pages/5_Present.py").run()  # its Present shows the shared release too
    assert not other.exception and any(release_id in c.value for c in other.caption)
    assert _status_of_visitor(other).releases == 0

    other.switch_page("app.py").run()
    other.sidebar.select_slider(key="w_epsilon").set_value(1.0).run()  # the noise moves: a new release
    assert not other.exception
    assert _one(other.query_params["release"]) != release_id and _status_of_visitor(other).releases == 1
    assert "A shared release" not in _text(other)


def test_the_level_is_post_processing_and_keeps_the_shared_release():
    at = _explorer({"d": 2, "n": 2000})
    other = _explorer(dict(at.query_params))
    release_id = _one(other.query_params["release"])
    other.sidebar.select_slider(key="w_alpha").set_value(0.1).run()
    assert not other.exception and _one(other.query_params["release"]) == release_id
    assert _status_of_visitor(other).releases == 0


def _upload(seed):
    rng = np.random.default_rng(seed)
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(1200)]
    return "\n".join(["age,hours,label", *rows]).encode()


@pytest.mark.parametrize("public", [True, False], ids=["public bounds", "bounds from the data"])
def test_an_upload_release_link_shows_its_numbers_and_guarantee_without_the_data(public):
    from dpci.ledger import Ledger
    from ui.privacy import canonical_upload
    from ui.upload import upload_digest

    data = _upload(21 if public else 22)
    state = {"upload_kept": ("people.csv", data, upload_digest(data)), "kept_upload_target": "label"}
    if public:
        state.update(kept_bounds={"age": (0.0, 120.0), "hours": (0.0, 100.0)}, kept_labels_public=True)
    at = _explorer({"dataset": "upload"}, state)
    assert "release" not in at.query_params  # a preview on a stand-in: nothing stored to share
    at.button(key="release_on_data").click().run()
    assert not at.exception, [e.value for e in at.exception]
    release_id = _one(at.query_params["release"])
    shown = _bounds(at)
    book = Ledger.from_config()
    key = book.key_of(canonical_upload(data))
    assert book.status(key).releases == 1
    assert ("Not private" in _text(at)) is not public

    other = _explorer(dict(at.query_params))  # another browser: no upload in its session
    assert not other.exception, [e.value for e in other.exception]
    for mine, theirs in zip(shown, _bounds(other)):
        np.testing.assert_array_equal(mine, theirs)
    text = _text(other)
    assert "A shared release" in text and "never reads" in text
    if public:
        assert "Guarantee: ε = 1" in text and "Not private" not in text
    else:
        assert " ".join(e.value for e in other.error).replace("\\", "").startswith("Not private: the"), text
    assert book.status(key).releases == 1 and book.status(key).spent == pytest.approx(1.0)  # charged once only

    other.switch_page("pages/5_Present.py").run()
    assert not other.exception and any(release_id in c.value for c in other.caption)
    assert ("Not private" in _text(other)) is not public


@pytest.mark.parametrize(
    "asked, said", [("nope!", "is not a release id"), ("A" * 22, "There is no release")], ids=["malformed", "unknown"]
)
def test_a_bad_release_id_is_said_and_the_settings_are_used(asked, said):
    at = _explorer({"d": 2, "n": 2000, "release": asked})
    assert not at.exception
    assert any(said in w.value and "the settings in the address are used instead" in w.value for w in at.warning)
    assert _status_of_visitor(at).releases == 1  # the settings' own release, as without a link
    assert _one(at.query_params["release"]) != asked


@pytest.mark.parametrize("randomness, said", [("fresh", True), ("teaching", False)])
def test_an_address_of_settings_only_says_at_the_top_that_its_numbers_are_new(randomness, said):
    """Opened from an address without ``release=``, the Explorer says first that its numbers were drawn now
    (new noise, not the sender's); in teaching mode the public seed draws the same numbers, so it says nothing."""
    from ui.shared import SETTINGS_ONLY

    at = _explorer({"dataset": "adult", "epsilon": "1", "randomness": randomness})
    assert not at.exception, [e.value for e in at.exception]
    infos = [i.value for i in at.main.info]
    assert (SETTINGS_ONLY in infos) is said, infos
    if said:  # above the chart: the first message of the page
        assert at.main.info[0].value == SETTINGS_ONLY or infos.index(SETTINGS_ONLY) <= 1
