"""``python -m dpci release ...``: one release from a CSV through the server's ledger (the app's
database: the app then shows its spend and the release); ``python -m dpci ledger ...``: the ledger,
for whoever runs the server.

    python -m dpci release --data people.csv --target label --bounds bounds.json --epsilon 1

    python -m dpci ledger list                      # every dataset: budget, spent, releases
    python -m dpci ledger history KEY               # what was computed from one dataset
    python -m dpci ledger set-budget KEY epsilon=1  # before its first release only
    python -m dpci ledger reset KEY                 # demo data only (forgets its spend)

The database is the one the app uses (``DPCI_DATABASE_URL``, else the SQLite file in the data
directory); ``--database URL`` points elsewhere. A KEY is any prefix of a key as ``list`` shows it
(``content/visitor``, each part cut where it tells datasets and visitors apart).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import warnings
from pathlib import Path

EXIT_REFUSED = 3  # the ledger refused the release (its budget cannot pay): nothing was drawn

#: The library's words for what the command line calls by its flags (the messages come from the library).
FLAG_WORDS = {
    "(bounds=...)": "(--bounds)",
    "category lists (categories=...)": 'category lists ("categories" in --bounds)',
    "or raise max_categories": "or leave it out with --features",
    "raise max_categories": "leave it out with --features",
    "positive_class=": "--positive ",
    "features=": "--features ",
}


def in_flags(message) -> str:
    """A library message in the command line's words: its parameters named by the flags that set them."""
    text = str(message)
    for words, flags in FLAG_WORDS.items():
        text = text.replace(words, flags)
    return text


def database_help() -> str:
    """The --database help: where the ledger is when it is not given (created on first use)."""
    from .ledger.config import database_url

    return f"a SQLAlchemy URL (default: {database_url()}, the app's ledger, made on first use beside its secret.key)"


def open_ledger(url: str | None):
    """The ledger at ``url`` (default: the app's); says on stderr where it was made when this call made it."""
    from sqlalchemy.engine import make_url

    from .ledger import Ledger
    from .ledger.config import database_url

    parsed = make_url(url or database_url())
    path = (
        Path(str(parsed.database)).expanduser() if parsed.get_backend_name() == "sqlite" and parsed.database else None
    )
    new = path is not None and str(parsed.database) != ":memory:" and not path.exists()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ledger = Ledger.from_config(url=url)
    for warning in caught:  # a ledger file others could read, made private now
        print(f"warning: {warning.message}", file=sys.stderr)
    if new and path is not None:
        print(
            f"made the privacy ledger {path} and its key {path.parent / 'secret.key'} (yours alone: 0600); "
            "every release from your files is charged there",
            file=sys.stderr,
        )
    return ledger


def read_data(path) -> bytes:
    """A data file's bytes, a gzip-compressed one (.csv.gz) uncompressed; ValueError naming --data if unreadable."""
    import gzip

    try:
        raw = Path(path).read_bytes()
        return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    except (OSError, EOFError) as err:
        raise ValueError(f"--data {path}: {getattr(err, 'strerror', None) or err}.") from None


def add_arguments(parser) -> None:
    parser.add_argument("--database", help=database_help())
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="every dataset: its budget, what it has spent and in how many releases")
    history = sub.add_parser("history", help="every result computed from one dataset, oldest first")
    history.add_argument("key")
    budget = sub.add_parser("set-budget", help="set a dataset's budget before its first release")
    budget.add_argument("key")
    budget.add_argument("budget", help="epsilon=3 | rho=0.5,delta=1e-6 | epsilon=3,delta=1e-6")
    budget.add_argument("--rows-per-person", type=int, default=None, help="the unit of protection (group privacy)")
    reset = sub.add_parser("reset", help="forget a demo dataset's spend and releases")
    reset.add_argument("key")


CONTENT_SHOWN = 12  # hex digits of a dataset's content key `list` shows at least (more where two share them)
SCOPE_SHOWN = 6  # characters of a visitor's scope `list` shows at least (more where two share them)


def _shortest_unique(names: list[str], least: int) -> dict[str, str]:
    """Each name cut to its shortest prefix (at least ``least`` characters) that no other name starts
    with; a name that is a prefix of another is shown whole."""
    shown = {}
    for name in names:
        others = [o for o in names if o != name]
        cut = min(least, len(name))
        while cut < len(name) and any(o.startswith(name[:cut]) for o in others):
            cut += 1
        shown[name] = name[:cut]
    return shown


def shown_keys(keys: list[str]) -> dict[str, str]:
    """How `list` shows each ledger key: ``content/scope``, each part cut to the shortest prefix that tells
    it apart (the content from the other datasets', the scope from the other visitors' of the same
    content). Every shown key, and every prefix of one that is still unique, finds its dataset."""
    parts = [key.partition("/") for key in keys]
    contents = _shortest_unique(sorted({c for c, _, _ in parts}), CONTENT_SHOWN)
    shown = {}
    for key, (content, slash, scope) in zip(keys, parts):
        scopes = _shortest_unique(sorted({s for c, _, s in parts if c == content and s}), SCOPE_SHOWN)
        shown[key] = contents[content] + (slash + scopes[scope] if scope else "")
    return shown


def find_key(keys: list[str], prefix: str) -> str:
    """The one key ``prefix`` names: a key itself or as `list` shows it, else the only key whose content
    starts with the part before a ``/`` and whose scope starts with the part after it."""
    exact = [k for k, shown in shown_keys(keys).items() if prefix in (k, shown)]
    if len(exact) == 1:  # a shown key names its dataset even where it prefixes another (``C`` and ``C/v``)
        return exact[0]
    content, slash, scope = prefix.partition("/")
    found = [
        k
        for k in keys
        if k.partition("/")[0].startswith(content) and (not slash or k.partition("/")[2].startswith(scope))
    ]
    if len(found) != 1:
        seen = ", ".join(sorted(shown_keys(keys)[k] for k in found)[:5])
        raise ValueError(
            f"{len(found)} datasets have a key starting with {prefix!r}"
            + (f" ({seen}{', ...' if len(found) > 5 else ''})" if found else "")
            + ": give more of it, as `list` shows it."
        )
    return found[0]


def _find(ledger, prefix: str) -> str:
    return find_key([s.key for s in ledger.datasets()], prefix)


def main(args) -> int:
    try:
        ledger = open_ledger(args.database)
        if args.action == "list":
            statuses = ledger.datasets()
            shown = shown_keys([s.key for s in statuses])
            width = max((len(k) for k in shown.values()), default=0)
            for s in statuses:
                kind = "demo, one visitor" if s.demo else "shared"
                print(f"{shown[s.key]:{width}s}  {s.label[:30]:30s}  {kind:17s}  {status_words(s)}")
        elif args.action == "history":
            key = _find(ledger, args.key)
            unit = ledger.status(key).budget.symbol
            for row in ledger.history(key):
                when = dt.datetime.fromtimestamp(row["time"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
                cost = f"{unit} = {row['charge']:.4g}" if row["private"] else "not private"
                print(f"{when}  {cost:14s}  {row['what']}")
        elif args.action == "set-budget":
            status = ledger.set_budget(_find(ledger, args.key), args.budget, args.rows_per_person)
            print(f"{status.label}: budget {status.budget.describe()}, {status.group_size} row(s) per person")
        elif args.action == "reset":
            removed = ledger.reset(_find(ledger, args.key))
            print(f"forgot {removed} results")
    except (ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def add_release_arguments(parser) -> None:
    from .methods import available

    data = parser.add_argument_group("the data (read as the app reads an upload)")
    data.add_argument("--data", required=True, help="a CSV file with a header row")
    data.add_argument("--target", required=True, help="the label column (two values)")
    data.add_argument("--positive", help="the label value coded +1 (default: as the app chooses)")
    data.add_argument("--features", help="comma-separated feature columns (default: every other column)")
    data.add_argument(
        "--bounds",
        help='a JSON file of public facts: {"age": [0, 120], ...} or {"bounds": {...}, "categories": {"city": [...]}, '
        '"labels": ["yes", "no"]}; what it leaves out is taken from the data, and the release is then recorded as '
        "not private",
    )
    data.add_argument("--sep", help="the separator (default: guessed)")
    data.add_argument("--d", type=int, help="use the first d features (default: all)")
    data.add_argument("--scaling", choices=("global", "unit"), default="global", help="rows into the unit ball")
    rel = parser.add_argument_group("the release")
    budget = rel.add_mutually_exclusive_group(required=True)
    budget.add_argument("--epsilon", type=float, help="pure epsilon-DP at this epsilon")
    budget.add_argument("--rho", type=float, help="rho-zCDP at this rho")
    rel.add_argument("--method", default="objective", choices=available())
    rel.add_argument("--loss", default="logistic", help="a registered loss (dpci.losses.LOSSES): logistic, huber, ...")
    rel.add_argument("--h", type=float, default=None, help="the Huber width (--loss huber; default 0.5)")
    rel.add_argument(
        "--loss-param", action="append", default=[], metavar="NAME=VALUE", help="a parameter of the loss (repeatable)"
    )
    rel.add_argument("--split", help="phi1,phi2,phi3 (default: the method's)")
    rel.add_argument("--c", type=float, default=1e-3, help="the regularisation coefficient")
    rel.add_argument("--level", type=float, default=0.95, help="the confidence level")
    rel.add_argument("--m", type=int, default=10_000, help="Monte Carlo samples")
    rel.add_argument("--seed", type=int, help="a PUBLIC seed: reproducible, and recorded as not private")
    out = parser.add_argument_group("where")
    out.add_argument("--database", help=database_help())
    out.add_argument("--record", help="write the release record (JSON) here")


def _public_facts(path):
    """(bounds, categories, labels) from the --bounds file; None for what it does not give."""
    if not path:
        return None, None, None
    try:
        facts = json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise ValueError(
            f'--bounds {path} is not JSON ({err.msg}, line {err.lineno}); write {{"age": [17, 90], ...}}.'
        ) from None
    if not isinstance(facts, dict):
        raise ValueError(f"{path}: expected a JSON object of bounds, got {type(facts).__name__}.")
    if {"bounds", "categories", "labels"} & set(facts):
        return facts.get("bounds"), facts.get("categories"), facts.get("labels")
    return facts, None, None


def _labels_public(labels, schema) -> bool:
    """Whether the --bounds file gave the target's two values as public facts (they must be the values
    the file holds); without them the values were read from the data."""
    if labels is None:
        return False
    found = {str(schema.positive_class), str(schema.negative_class)}
    if not isinstance(labels, list) or {str(v) for v in labels} != found or len(labels) != 2:
        raise ValueError(f'"labels" in --bounds must list the target\'s two values, {sorted(found)}; got {labels!r}.')
    return True


def file_not_private(result, labels_public: bool) -> str | None:
    """Why a release from this file is not private (values read from the data), in the command line's
    words; None when every bound, category and label was given as a public fact."""
    parts = []
    if result.data_derived:
        parts.append(f"the bounds or categories of {', '.join(result.data_derived)} were read from the data")
    if not labels_public:
        schema = result.schema
        parts.append(
            f"the label values {schema.positive_class!r} and {schema.negative_class!r} were read from the data"
        )
    if not parts:
        return None
    return (
        "; ".join(parts) + ". Values taken from the data reveal something about individual rows: give them in "
        '--bounds ({"bounds": ..., "categories": ..., "labels": [...]}) from a codebook.'
    )


def scaled_words(scaling: str, X) -> str:
    """How to read the coefficients of a release from a file: its features were rescaled to [0, 1] by their
    bounds and its rows put into the unit ball (``X``: the rows, the constant's column last)."""
    if scaling == "global":
        k = 1.0 / float(X[0, -1])  # every row divided by one public K, the constant's column 1/K
        return (
            f"The features were rescaled to [0, 1] by their bounds and every row divided by K = {k:.4g}: the change "
            "in log-odds from a feature's lower bound to its upper (for a category, from not having it to having it) "
            "is its estimate divided by K."
        )
    return (
        "The features were rescaled to [0, 1] by their bounds and each row divided by its own norm: compare the "
        "estimates' signs and sizes, not their values, with a model fitted on the raw columns."
    )


def spend_line(ledger, key, private: bool | None = None) -> str:
    """The last line: what the dataset has spent and in how many charged releases (``private``: whether the
    one just made is), and the results recorded as not private (public seeds, sweeps), counted apart."""
    return status_words(ledger.status(key), private)


def status_words(status, private: bool | None = None) -> str:
    """A dataset's spend in the command line's words (:func:`spend_line`)."""
    spent = f"{status.budget.describe(status.spent)} of {status.budget.describe()} spent"
    charged = f"{status.releases} charged release{'s' * (status.releases != 1)}"
    noted = f"{status.not_private} result{'s' * (status.not_private != 1)} recorded as not private"
    words = f"{spent} in {charged}; {noted}"
    if private is not None:
        words += "; this release is " + ("private" if private else "NOT private (see its first line)")
    return words


def release_main(args) -> int:
    """Read the CSV, admit the release on the ledger (refused: exit 3, nothing drawn), release, store
    it, print the intervals and write the record."""
    from .data import guess_separator, read_uploaded_csv, upload_table
    from .ledger import BudgetExceeded, NotCovered
    from .ledger.records import not_private_reason, release_payload, release_record
    from .losses import loss_from_text
    from .spec import ReleaseSpec

    try:
        raw = read_data(args.data)
        bounds, categories, labels = _public_facts(args.bounds)
        sep = args.sep or guess_separator(raw)
        features = args.features.split(",") if args.features else None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = read_uploaded_csv(
                raw,
                args.target,
                positive_class=args.positive,
                features=features,
                bounds=bounds,
                categories=categories,
                sep=sep,
            )
        for warning in caught:
            print(f"warning: {in_flags(warning.message)}", file=sys.stderr)
        not_private = file_not_private(result, _labels_public(labels, result.schema))
        data = result.to_dataset(d=args.d, normalize=args.scaling)
        privacy, budget = ("pure", args.epsilon) if args.epsilon is not None else ("zcdp", args.rho)
        split = None if args.split is None else tuple(float(v) for v in args.split.split(","))
        loss = loss_from_text(args.loss, args.loss_param, h=args.h)
        ledger = open_ledger(args.database)
        # the table's people, however the file was saved and whichever ignored columns it carries
        match = ledger.match_table(upload_table(raw, sep=sep), f"your upload {Path(args.data).name}")
        if match.why:
            print(f"note: {match.why}.", file=sys.stderr)
        key = match.key
        spec = ReleaseSpec(args.method, privacy, budget, split, loss, args.c, 1.0 - args.level, args.m, args.seed)
        with ledger.watching(dataset=key, session="command line") as watch:
            release = spec.release(data.X, data.y)
    except (BudgetExceeded, NotCovered) as err:
        print(f"refused: {in_flags(err)}", file=sys.stderr)
        return EXIT_REFUSED
    except (ValueError, OSError) as err:
        print(f"error: {in_flags(err)}", file=sys.stderr)
        return 2
    record = dict(
        source="command line",
        release=spec.to_dict(),
        data=dict(
            file=Path(args.data).name,
            target=result.schema.label,
            positive=result.schema.positive_class,
            d=data.X.shape[1] - 1,
            scaling=args.scaling,
        ),
        not_private=not_private,
    )
    payload = release_payload(release, feature_names=data.feature_names)
    release_id = ledger.store_release(
        watch.admissions[-1], key, f"cli:{json.dumps(record, sort_keys=True)}", record, payload, "command line"
    )
    reason = not_private_reason(ledger.release(release_id))
    print(f"release {release_id} ({'private' if reason is None else 'NOT private: ' + reason})")
    print(f"{'feature':30s} {'estimate':>10s} {'lower':>10s} {'upper':>10s}")
    for name, theta, (low, high) in zip(data.feature_names, release.theta, release.conf_int):
        print(f"{str(name)[:30]:30s} {theta:10.4g} {low:10.4g} {high:10.4g}")
    print(scaled_words(args.scaling, data.X))
    print(spend_line(ledger, key, reason is None))
    if args.record:
        Path(args.record).write_text(release_record(ledger.release(release_id)))
        print(f"wrote the release record to {args.record}", file=sys.stderr)
    return 0
