"""``python -m dpci ledger ...``: the server's privacy ledger, for whoever runs the server.

    python -m dpci ledger list                      # every dataset: budget, spent, releases
    python -m dpci ledger history KEY               # what was computed from one dataset
    python -m dpci ledger set-budget KEY epsilon=1  # before its first release only
    python -m dpci ledger reset KEY                 # demo data only (forgets its spend)

The database is the one the app uses (``DPCI_DATABASE_URL``, else the SQLite file in the data
directory); ``--database URL`` points elsewhere. A KEY may be given by its first characters.
"""

from __future__ import annotations

import datetime as dt
import sys


def add_arguments(parser) -> None:
    parser.add_argument("--database", help="a SQLAlchemy URL (default: the app's ledger)")
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


def _find(ledger, prefix: str) -> str:
    keys = [s.key for s in ledger.datasets() if s.key.startswith(prefix)]
    if len(keys) != 1:
        raise ValueError(f"{len(keys)} datasets have a key starting with {prefix!r}: give more of it (see `list`).")
    return keys[0]


def main(args) -> int:
    from .ledger import Ledger

    try:
        ledger = Ledger.from_config(url=args.database)
        if args.action == "list":
            for s in ledger.datasets():
                kind = "demo, one visitor" if s.demo else "shared"
                print(f"{s.key[:16]}  {s.label[:30]:30s}  {kind:17s}  {s.describe()}")
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
