"""The app's state is described once: no page rebuilds a privacy map by hand or branches on a notion's
name (dpci.notions says each notion's symbol, unit, stops and conversions) or a method's (each method
declares what the app asks of it), and every function of the app can be read at once."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP_FILES = sorted([ROOT / "app.py", *(ROOT / "ui").glob("*.py"), *(ROOT / "pages").glob("*.py")])
NOTION_NAMES = {"pure", "zcdp"}
# every method's name, the opt-in ones too (a method is one file under dpci/methods)
METHOD_NAMES = {path.stem for path in (ROOT / "dpci" / "methods").glob("*.py")} - {"__init__", "base", "paper"}
METHOD_NAMES |= {"objective", "output"}


def _trees():
    return [(path.relative_to(ROOT), ast.parse(path.read_text(encoding="utf-8"))) for path in APP_FILES]


def _named(node, names) -> bool:
    """A constant that is one of ``names``, or a tuple/list/set holding one."""
    if isinstance(node, ast.Constant):
        return node.value in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_named(e, names) for e in node.elts)
    return False


def _notion_branches(tree, names=NOTION_NAMES) -> list[int]:
    """Lines that compare with one of ``names`` (a notion's), key a dict by one or index by one."""

    def branch(node) -> bool:
        if isinstance(node, ast.Compare):
            return any(_named(n, names) for n in (node.left, *node.comparators))
        if isinstance(node, ast.Dict):
            return any(k is not None and _named(k, names) for k in node.keys)
        return isinstance(node, ast.Subscript) and _named(node.slice, names)

    return [node.lineno for node in ast.walk(tree) if branch(node)]


def test_the_app_never_allocates_a_budget_by_hand():
    """Only ``spec.measure()`` gives a charge: the ledger's map is the app's."""
    calls = [
        f"{path}:{node.lineno}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) == "allocate" or getattr(node.func, "id", None) == "allocate")
    ]
    assert calls == []


def test_the_app_never_branches_on_a_notions_name():
    found = [f"{path}:{line}" for path, tree in _trees() for line in _notion_branches(tree)]
    assert found == []


def test_the_app_never_branches_on_a_methods_name():
    """What a page needs of a method is its declaration (dpci.methods.Method: steps, notions, losses,
    uses_c, noise_reducible, ...), so a new method is one file and no page names it."""
    assert {"objective", "output", "naive", "wu", "kulkarni", "chadha"} <= METHOD_NAMES
    found = [f"{path}:{line}" for path, tree in _trees() for line in _notion_branches(tree, METHOD_NAMES)]
    assert found == []
    assert _notion_branches(ast.parse('m in ("wu", "kulkarni")'), METHOD_NAMES) == [1]


def test_the_branch_finder_finds_branches():
    """The check above is not vacuous: each form it forbids is found."""
    for code in ('x == "pure"', '"zcdp" != y', 'x in ("pure", "zcdp")', '{"pure": 1}', 'a["zcdp"]'):
        assert _notion_branches(ast.parse(code)) == [1], code
    assert _notion_branches(ast.parse('f(privacy="pure")')) == []  # a value, not a branch


@pytest.mark.parametrize("name", ["pure", "zcdp"])
def test_a_notion_converts_as_the_accounting_does(name):
    from dpci.accounting import epsilon_from_rho, zcdp_to_approx_dp
    from dpci.notions import notion

    n = notion(name)
    expected = zcdp_to_approx_dp(0.5, 1e-6) if name == "zcdp" else 0.5  # Proposition 2; pure is (ε, 0)
    assert n.approx_epsilon(0.5, 1e-6) == pytest.approx(expected, rel=1e-12)
    assert n.pure_epsilon(0.5) == pytest.approx(epsilon_from_rho(0.5) if name == "zcdp" else 0.5, rel=1e-12)
    assert n.stops == tuple(sorted(n.stops)) and n.stops[0] <= n.default <= n.stops[-1]


def test_an_unknown_notion_is_refused_by_name():
    from dpci.notions import notion

    with pytest.raises(ValueError, match="unknown privacy notion 'approx'.*'pure', 'zcdp'"):
        notion("approx")


@pytest.mark.parametrize("alpha", [0.2, 0.1, 0.05, 0.01])
def test_the_apps_spec_is_the_librarys_for_the_same_settings(alpha):
    """The app keeps alpha as the library does (its slider shows the level 1 - alpha), and the split as
    round shares, so the app's spec, its key and its "copy as Python" are those of the same ReleaseSpec."""
    from dpci.spec import ReleaseSpec
    from ui.app_state import AppState
    from ui.settings import ALPHAS

    assert alpha in ALPHAS
    state = AppState.of(alpha=alpha, randomness="fresh")
    library = ReleaseSpec(split=(0.65, 0.175, 0.175), alpha=alpha)
    assert state.spec == library and state.spec.key == library.key
    assert f"alpha={alpha!r}" in state.spec.to_python() and state.level == round(1 - alpha, 12)


def test_the_state_names_its_spec_as_the_library_does():
    """The serialisation's spec keys are ReleaseSpec's fields (the loss's name under "loss", its parameters
    and the split's shares dotted), so an address, a settings file and a stored record read alike."""
    from dpci.spec import ReleaseSpec
    from ui.app_state import SPEC_KEYS, AppState

    state = AppState.of(method="output", privacy="zcdp", budget=0.5, loss="huber", **{"loss.h": 0.3})
    values, record = state.values(), state.spec.to_dict()
    assert set(record) >= SPEC_KEYS
    assert {k: values[k] for k in SPEC_KEYS - {"loss"}} == {k: record[k] for k in SPEC_KEYS - {"loss"}}
    assert values["loss"] == record["loss"]["name"] and values["loss.h"] == record["loss"]["h"] == 0.3
    assert {f"split.{k}": v for k, v in record["split"].items()} == {k: v for k, v in values.items() if "split." in k}
    assert AppState.from_values(values) == state and ReleaseSpec.from_dict(record) == state.spec


def test_an_unknown_setting_is_refused_by_name():
    from ui.app_state import AppState

    with pytest.raises(ValueError, match="not a setting of the app: level"):
        AppState.of(level=0.9)


def test_app_py_is_the_frame():
    assert len((ROOT / "app.py").read_text(encoding="utf-8").splitlines()) <= 80


def test_every_function_of_the_app_reads_at_once():
    """No function in app.py, ui/ or pages/ is over 60 lines (decorators and docstring included)."""
    long = [
        f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60
    ]
    assert long == []


def test_ui_is_imported_by_module_name():
    """``ui/__init__.py`` re-exports nothing: a reader sees which module owns each helper."""
    tree = ast.parse((ROOT / "ui" / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))]


def _cached(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if getattr(target, "attr", None) == "cache_data":
                    yield node


def test_no_cache_of_the_app_hashes_the_settings():
    """A cache keyed by the whole settings recomputes when a view option changes (the layout, δ shown, the
    estimand): each st.cache_data function takes the settings unhashed (``_s``) beside the keys of what
    changes its result (the rows, the spec's key, the fit's)."""
    hashed = [
        f"{path}:{fn.name}({arg.arg})"
        for path, tree in _trees()
        for fn in _cached(tree)
        for arg in fn.args.args
        if getattr(arg.annotation, "id", None) == "AppState" and not arg.arg.startswith("_")
    ]
    assert hashed == []
    assert len([fn for _, tree in _trees() for fn in _cached(tree)]) >= 7  # the check sees the caches


def test_the_caches_keys_ignore_the_view():
    from ui.app_state import AppState
    from ui.data import fit_key, seeded_spec

    base = AppState.of(randomness="teaching")
    for view in (
        dict(view="presentation"),
        dict(estimand="unregularised", theta_bound=3.0),
        dict(delta=1e-9),
        dict(vi_replicates=500),
    ):
        other = AppState.of(randomness="teaching", **view)
        assert seeded_spec(other).key == seeded_spec(base).key and fit_key(other) == fit_key(base), view
    assert (
        fit_key(AppState.of(alpha=0.1)) != fit_key(base)
        and seeded_spec(AppState.of(c=1e-2)).key != seeded_spec(base).key
    )


NEW_LINK = {
    "method": "output",
    "privacy": "zcdp",
    "budget": "0.2",
    "split.coefficients": "0.8",
    "split.hessian": "0.05",
    "split.covariance": "0.15",
    "loss": "huber",
    "loss.h": "0.3",
    "alpha": "0.1",
    "n_samples": "2000",
}
OLD_LINKS = [
    # the sidebar's names: the budget by its unit (the other notion's too), the level, m, the split's fractions
    {
        "mechanism": "output",
        "privacy": "zcdp",
        "epsilon": "0.5",
        "rho": "0.2",
        "split.coefficients": "0.8",
        "split.hessian": "0.25",
        "model": "huber",
        "loss.h": "0.3",
        "level": "0.9",
        "m": "2000",
    },
    # older: labels, Huber's width and the fractions by field, the budget only in the other notion's unit
    {
        "mechanism": "Output perturbation",
        "privacy": "ρ-zCDP",
        "epsilon": "0.63",
        "phi1": "0.8",
        "phi2_rest": "0.25",
        "model": "Huberized SVM",
        "h": "0.3",
        "level": "0.9",
        "m": "2000",
    },
]


@pytest.mark.parametrize("old", OLD_LINKS)
def test_old_links_and_records_open_as_the_same_settings(old):
    """An address, a settings file or a stored record in an older vocabulary opens as the settings the
    library's names give: the same method, notion, budget (ρ = ε²/2 from the other unit, to two
    digits), split shares, loss, alpha and m; the state it writes back is in the library's names."""
    from ui.app_state import AppState
    from ui.settings import OLD_KEYS, changed_settings, settings_from_spec, settings_values, translated

    new, _ = settings_values(translated(NEW_LINK))
    values, ignored = settings_values(translated(old))
    assert not ignored and not changed_settings(translated(old), values)
    assert AppState.from_values(values).spec == AppState.from_values(new).spec
    assert AppState.from_values(new).spec.split == (0.8, 0.05, 0.15)
    assert not OLD_KEYS & set(AppState.from_values(values).values())
    record = {k: v if k in ("mechanism", "privacy", "model") else float(v) for k, v in old.items()}
    record["m"] = int(record["m"])
    assert settings_from_spec({"app_settings": record}).spec == AppState.from_values(new).spec  # an old record


def test_an_old_links_unusable_text_is_said_not_lost():
    from ui.settings import changed_settings, settings_values, translated

    raw = translated({"mechanism": "output", "epsilon": "abc", "level": "high", "split.coefficients": "x"})
    values, _ = settings_values(raw)
    said = changed_settings(raw, values)
    assert {"budget = abc → 1.0", "alpha = high → 0.05", "split.coefficients = x → 0.65"} <= set(said), said
    assert translated({"phi1": "0.8", "split.coefficients": "0.5"})["split.coefficients"] == 0.5  # dotted wins


@pytest.mark.parametrize(
    "values",
    [
        {},
        {
            "loss": "huber",
            "loss.h": 0.3,
            "method": "output",
            "privacy": "zcdp",
            "budget": 0.25,
            "split.coefficients": 0.8,
            "split.hessian": 0.05,
            "split.covariance": 0.15,
        },
        {"dataset": "synthetic", "randomness": "fresh", "d": 3, "n": 2000, "c": 0.01, "alpha": 0.1, "n_samples": 2000},
        {
            "dataset": "upload",
            "scaling": "unit",
            "estimand": "unregularised",
            "theta_bound": 4.0,
            "view": "presentation",
        },
        {"delta": 1e-9, "vi_replicates": 500, "seed": 7, "budget": 0.5},
    ],
    ids=["defaults", "huber output zcdp", "synthetic fresh", "upload view", "display"],
)
def test_a_release_record_describes_the_settings_once_and_reopens_them(values):
    """A release's record keeps the spec's dict and, under ``app``, only what the spec does not say (the
    data and the view); read back it gives the same settings (the other notion's budget aside: unused)."""
    from ui.app_state import SPEC_KEYS as SPEC_FIELDS
    from ui.app_state import AppState
    from ui.settings import settings_from_spec, settings_record

    s = AppState.from_values({**AppState().values(), **values})
    record = settings_record(s)
    assert set(record) == {"release", "app"} and not set(record["app"]) & SPEC_FIELDS
    assert not any("." in k for k in record["app"])
    back = settings_from_spec(json.loads(json.dumps(record)))  # as the ledger stores it
    assert back.spec == s.spec
    names = set(back.values()) | set(s.values())
    assert {k: back.value(k) for k in names} == pytest.approx({k: s.value(k) for k in names})


def test_a_stored_release_is_renamed_from_its_own_record_or_keeps_its_name():
    """The one-time renaming's rule: an app record (either layout) gets the identity the app computes for
    its settings; an upload's, the command line's and an unreadable record keep their names (None)."""
    from types import SimpleNamespace

    from ui.app_state import AppState
    from ui.release_names import data_key, identity, renamed
    from ui.settings import settings_record

    s = AppState.of(loss="huber", method="output", privacy="zcdp", budget=0.25, d=4, n=2000)
    new = identity(s, "adult|4|2000||global")
    assert data_key(s) == "adult|4|2000||global" and data_key(AppState.of(dataset="synthetic")) == "synthetic|10|0|"
    assert renamed(SimpleNamespace(spec=settings_record(s))) == new
    assert renamed(SimpleNamespace(spec={"app_settings": s.values()})) == new
    upload = AppState.of(dataset="upload")
    for spec in (settings_record(upload), {"source": "command line"}, {"app": {}, "release": {"method": "no such"}}):
        assert renamed(SimpleNamespace(spec=spec)) is None


# A record as the ledger kept it before AppState (written by the flat settings type): it must still open.
RECORD_BEFORE_APPSTATE = {
    "release": {
        "spec_version": 1,
        "method": "output",
        "privacy": "zcdp",
        "budget": 0.25,
        "split": {"coefficients": 0.8, "hessian": 0.04999999999999999, "covariance": 0.14999999999999997},
        "loss": {"name": "huber", "h": 0.3},
        "c": 0.001,
        "alpha": 0.1,
        "n_samples": 10000,
        "seed": 7,
    },
    "app": {
        "dataset": "synthetic",
        "d": 3,
        "n": 2000,
        "estimand": "regularised",
        "theta_bound": 0.0,
        "vi_replicates": 10000,
        "seed": 7,
        "delta": 1e-09,
        "randomness": "teaching",
        "scaling": "global",
        "view": "presentation",
    },
}
KEY_BEFORE_APPSTATE = "5121d59b95f8d0cfe2c3938fd51e44208453097876a171cffb44e027c4d255fa"


def test_a_record_stored_before_the_state_type_opens_as_it_was():
    from ui.app_state import AppState, DataChoice
    from ui.settings import settings_from_spec, settings_record

    s = settings_from_spec(RECORD_BEFORE_APPSTATE)
    assert s.spec.key == KEY_BEFORE_APPSTATE and s.level == 0.9
    assert s.data == DataChoice("synthetic", 3, 2000, "global", "teaching", 7)
    assert (s.view.layout, s.view.delta) == ("presentation", 1e-9)
    assert AppState.from_values(s.values()).spec.key == KEY_BEFORE_APPSTATE  # its address opens it too
    assert settings_record(s) == RECORD_BEFORE_APPSTATE  # written again, the same record


def test_the_state_holds_one_budget_and_an_old_address_converts_it():
    """The spec has one budget; an old address's budget in the other notion's unit gets the same pure ε
    (Proposition 1: ρ = ε²/2), kept as the app keeps budgets (a stop, or two significant digits); a notion
    with no budget given takes its own default."""
    from dpci.notions import notion
    from ui.app_state import AppState
    from ui.settings import settings_values, translated

    def budget(**raw):
        return AppState.from_values(settings_values(translated(raw))[0]).spec.budget

    assert budget(privacy="zcdp") == notion("zcdp").default == AppState.of(privacy="zcdp").spec.budget
    assert budget(privacy="zcdp", epsilon="2.0") == 2.0
    assert budget(privacy="zcdp", epsilon="0.77") == 0.3  # 0.29645 to two digits
    assert budget(privacy="pure", rho="0.125") == 0.5  # sqrt(2 rho)
    assert budget(privacy="zcdp", rho="0.2", epsilon="3.0") == 0.2
    values = AppState.of(privacy="zcdp", budget=0.2).values()
    assert values["budget"] == 0.2 and not {"epsilon", "rho"} & set(values)


def test_the_default_split_is_round_and_sums_to_one():
    """Every registered method's default shares in the sidebar are round (four decimals at most)."""
    from dpci import methods as registry
    from ui.app_state import AppState

    for name in registry.available():
        method = registry.get(name)
        split = AppState.of(method=name, privacy=method.notions[0], loss=(method.losses or ("logistic",))[0]).spec.split
        assert sum(split) == pytest.approx(1.0, abs=1e-12)
        assert all(abs(share - round(share, 4)) < 1e-12 for share in split), (name, split)


def test_a_stored_spend_names_its_method_as_the_spec_does_and_old_ones_open():
    from dpci.ledger.records import spend_from_dict, spend_to_dict
    from dpci.spec import ReleaseSpec

    spend = ReleaseSpec(method="output", privacy="zcdp", budget=0.5).measure().spend
    stored = spend_to_dict(spend)
    assert stored["method"] == "output" and "mechanism" not in stored
    assert spend_from_dict(stored) == spend
    old = {("mechanism" if k == "method" else k): v for k, v in stored.items()}
    assert spend_from_dict(old) == spend
