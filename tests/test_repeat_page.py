"""The Repeat a release page, headless (streamlit.testing.v1.AppTest): each press of Repeat draws a new
public seed, shown with the result, so two presses give two pictures; the seed in the box (chosen, or
typed) repeats a run exactly; the coverage reads as a count with its Wilson interval."""

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "pages" / "6_Repeat_a_release.py"


def _page():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.query_params.update({"d": "2", "repeat_k": "20", "repeat_n": "1000"})
    return at.run()


def _no_errors(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _press(at):
    """Press Repeat and wait for its job; returns the job."""
    at.button[0].click().run()
    job = at.session_state["slot_repeat"].job
    assert job.wait(240), "the repetitions did not finish"
    assert job.error is None, job.error
    at.run()
    _no_errors(at)
    return job


def _seed(at):
    return at.number_input(key="repeat_seed").value


def _picture(at):
    """What the chart draws of this run (the earlier run's grey bars left out): its bars, per trace."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return [(t["name"], t["x"], t["y"]) for t in spec["data"] if t["name"] != "earlier run" and len(t["x"]) > 1]


def _result(at):
    """The result line under the chart: it starts with the run's seed."""
    lines = [m.value for m in at.markdown if m.value.startswith("**Seed")]
    assert len(lines) == 1, [m.value for m in at.markdown]
    return lines[0]


def _title(at):
    return json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]


def test_each_press_draws_a_new_public_seed_shown_with_a_new_picture():
    at = _page()
    _no_errors(at)
    assert _seed(at) is None  # no run yet: no seed
    _press(at)
    first, first_picture = _seed(at), _picture(at)
    assert isinstance(first, int) and 0 <= first < 2**31
    assert _result(at).startswith(f"**Seed {first}.**") and f"seed {first}" in _title(at)
    _press(at)
    second = _seed(at)
    assert second != first and _result(at).startswith(f"**Seed {second}.**")
    assert _picture(at) != first_picture  # a new sample and new noise in every repetition
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "earlier run" in {t["name"] for t in spec["data"]}  # the first press's run, in grey


def test_the_seed_in_the_box_chosen_or_typed_repeats_a_run_exactly():
    at = _page()
    first_job = _press(at)
    first, first_picture = _seed(at), _picture(at)
    at.radio(key="repeat_seed_choice").set_value("same").run()
    _press(at)
    assert _seed(at) == first and _picture(at) == first_picture

    at.radio(key="repeat_seed_choice").set_value("new").run()
    _press(at)
    assert _seed(at) != first and _picture(at) != first_picture

    at.number_input(key="repeat_seed").set_value(first).run()  # typing a seed chooses it for the next press
    assert at.radio(key="repeat_seed_choice").value == "same"
    again = _press(at)
    assert again.key == first_job.key  # the same seed names the same run: the server's shared result
    assert _seed(at) == first and _result(at).startswith(f"**Seed {first}.**")
    assert _picture(at) == first_picture


def test_the_result_counts_hits_with_their_wilson_interval():
    at = _page()
    _press(at)
    result = _result(at)
    match = re.search(
        r"x1: \*\*(\d+) of 20 private intervals \((\d+)%; 95% Wilson interval ([\d.]+)%–([\d.]+)%\)", result
    )
    assert match, result
    hits, share, low, high = (float(g) for g in match.groups())
    assert share == round(100 * hits / 20) and low < share <= high and high - low > 5
    assert "±" not in result


@pytest.mark.parametrize(
    "query, wide",
    [
        ({"epsilon": "0.1", "c": "0.001"}, True),  # private noise dominates: intervals of 10 and more
        ({"mechanism": "output", "privacy": "zcdp", "rho": "4.5", "c": "0.05"}, False),
    ],
)
def test_intervals_too_wide_to_be_useful_are_called_so(query, wide):
    """Covering the truth is no success for intervals that could not tell a typical coefficient from 0."""
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.query_params.update({"d": "2", "repeat_k": "20", "repeat_n": "2000", **query})
    at.run()
    _press(at)
    said = [w.value for w in at.warning if "Too wide to be useful" in w.value]
    assert bool(said) == wide, ([w.value for w in at.warning], _result(at))
