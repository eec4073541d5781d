"""The privacy ledger: every result computed from a dataset, admitted by a privacy filter before its
noise is drawn, in a database that outlives a session, a reload and a restart.

One :class:`Ledger` per database. A dataset is named by a keyed hash of its content
(:meth:`Ledger.key_of`), registered with a budget fixed before its first release (the server's
default unless set first with :meth:`Ledger.set_budget`), and every private release is admitted by
:meth:`Ledger.admit` in one transaction: the dataset's row is locked, its charges summed and the
filter (:mod:`dpci.ledger.filter`) applied, the charge written, and only then does the caller draw
the noise. A refusal raises :class:`BudgetExceeded` and writes nothing.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping

import sqlalchemy as sa

from ..accounting import PrivacySpend
from . import config
from .answers import Admission, Practice, Preview, Status, refusal
from .filter import Budget, BudgetExceeded, NotCovered, admits, check_group_size, curator_refusals
from .schema import charges, datasets, make_engine, migrate, releases
from .stored import StoredReleases, to_json


class Ledger(StoredReleases):
    """The privacy ledger of one database (module docstring).

    ``with ledger:`` makes it the ledger library functions report to: every private release inside
    the block (the estimators' ``fit``, :func:`~dpci.release.private_confidence_intervals`, searches)
    is admitted, and charged to its dataset, before its noise is drawn; bootstraps, non-private
    intervals and releases with a public (integer) seed are recorded as not private. The block
    gives a :class:`~dpci.ledger.hooks.Watch` (``.status()``: what the data has spent).

    Parameters
    ----------
    url : str
        A SQLAlchemy URL (default ``"sqlite://"``, in memory for this process; the app and the
        command line use :meth:`from_config`: an SQLite file in the data directory or
        ``DPCI_DATABASE_URL``).
    budget, demo_budget : Budget or str or None
        The budget a new dataset (real data; the shipped practice data) gets: a :class:`Budget` or text
        such as ``"epsilon=3"``. None: ``DPCI_BUDGET`` / ``DPCI_DEMO_BUDGET``, else pure epsilon = 3
        / the zCDP budget that is (10, 1e-6)-DP (it counts pure and zCDP releases). Practice data's
        budget never refuses: it marks the releases a curator would have refused.
    secret : bytes or None
        The key of the datasets' keyed hashes. None: ``DPCI_SECRET``, else a ``secret.key`` file
        beside an SQLite database (a fresh key for an in-memory one).
    env : mapping or None
        The environment the settings above are read from (default ``os.environ``).

    Raises
    ------
    ValueError
        A budget that does not parse (see :meth:`Budget.parse`).
    sqlalchemy.exc.SQLAlchemyError
        The database cannot be opened or migrated.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> ledger = dpci.Ledger(budget="epsilon=3")  # in memory; dpci.Ledger("sqlite:///ledger.db") keeps it
    >>> with ledger as watch:  # every release inside is admitted before its noise is drawn
    ...     for eps in (0.5, 1.0):
    ...         model = dpci.PrivateLogisticRegression(mechanism="output", budget=eps, classes=(-1, 1)).fit(X, y)
    >>> print(watch.status().describe())
    ε = 1.5 of ε = 3 spent in 2 private releases
    """

    def __init__(
        self,
        url: str = "sqlite://",
        *,
        budget: Budget | str | None = None,
        demo_budget: Budget | str | None = None,
        secret: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ):
        self.url = url
        self.engine = make_engine(url)
        self.schema_version = migrate(self.engine)
        self.secret = secret if secret is not None else config.server_secret(url, env)
        self.default_budget = _budget(budget) or config.default_budget(env)
        self.demo_budget = _budget(demo_budget) or config.default_budget(env, demo=True)
        self._known: set[str] = set()  # keys this process has registered (registering again changes nothing)

    @classmethod
    def from_config(cls, env: Mapping[str, str] | None = None, url: str | None = None, **kwargs) -> Ledger:
        """The server's ledger: ``url`` or ``DPCI_DATABASE_URL`` or the SQLite file in the data directory."""
        return cls(url or config.database_url(env), env=env, **kwargs)

    def __repr__(self):
        return f"<Ledger {sa.engine.make_url(self.url).render_as_string(hide_password=True)}>"

    def close(self) -> None:
        self.engine.dispose()

    # --- the active ledger (library functions report to it) -------------------------------------
    def watching(self, dataset: str | None = None, session: str = ""):
        """Make this ledger the one library functions report to, inside a ``with`` block; ``dataset``
        names the data they run on (default: a keyed hash of the arrays each call receives)."""
        from .hooks import Watch

        return Watch(self, dataset, session)

    def __enter__(self):
        """``with ledger:`` is ``with ledger.watching():`` (each call's arrays name its dataset)."""
        watch = self.watching()
        self._watches = [*getattr(self, "_watches", []), watch]
        return watch.__enter__()

    def __exit__(self, *exc):
        self._watches.pop().__exit__(*exc)

    # --- datasets ---------------------------------------------------------------------------------
    def key_of(self, *parts, scope: str = "") -> str:
        """The ledger key of a dataset with this content (arrays, text, bytes; see
        :func:`dpci.ledger.config.content_digest`), and ``/scope`` for demo data kept per visitor."""
        content = config.keyed(self.secret, config.content_digest(*parts))
        return f"{content}/{scope}" if scope else content

    def register(
        self,
        key: str,
        label: str = "",
        *,
        demo: bool = False,
        group_size: int = 1,
        budget: Budget | str | None = None,
    ) -> Status:
        """Make ``key`` known (with ``budget``, else the server's default for its kind); an existing
        dataset keeps its budget and unit of protection: those are fixed before its first release."""
        group_size = check_group_size(group_size)
        chosen = _budget(budget) or (self.demo_budget if demo else self.default_budget)
        with self.engine.begin() as conn:
            exists = conn.execute(sa.select(datasets.c.key).where(datasets.c.key == key)).first()
            if exists is None:
                self._insert_dataset(conn, key, label, demo=demo, group_size=group_size, budget=chosen)
        return self.status(key)

    def _insert_dataset(self, conn, key, label, *, demo=False, group_size=1, budget=None) -> None:
        """Insert the dataset's row in ``conn``'s transaction (nothing if another session just did)."""
        chosen = budget or (self.demo_budget if demo else self.default_budget)
        content, _, scope = key.partition("/")
        try:
            with conn.begin_nested():
                conn.execute(
                    sa.insert(datasets).values(
                        key=key,
                        content=content,
                        scope=scope,
                        label=label,
                        demo=demo,
                        group_size=group_size,
                        notion=chosen.notion,
                        amount=chosen.amount,
                        delta=chosen.delta,
                        version=0,
                        created=time.time(),
                    )
                )
        except sa.exc.IntegrityError:  # registered by another session just now
            pass

    def table_key(self, table, label: str = "") -> str:
        """The key of an uploaded table (a :class:`dpci.data.TableColumns`), registered: the dataset
        of the same people if one is known (its columns nest with the table's), else a new one.
        Raises :class:`dpci.ledger.tables.SameRowsTwice` when two known datasets nest with it."""
        from .tables import table_key

        return table_key(self, table, label)

    def match_table(self, table, label: str = ""):
        """:meth:`table_key` with the reason: a :class:`dpci.ledger.tables.TableMatch` whose ``why`` says,
        for a table that only shares columns with a known dataset, why it meets that dataset's budget."""
        from .tables import match_table

        return match_table(self, table, label)

    def ensure(self, key: str, label: str = "", *, demo: bool = False) -> str:
        """Register ``key`` once per process (no database round trip after the first); returns it."""
        if key not in self._known:
            self.register(key, label, demo=demo)
            self._known.add(key)
        return key

    def set_budget(self, key: str, budget: Budget | str, group_size: int | None = None) -> Status:
        """Whoever runs the server: set a dataset's budget (and rows per person) before its first
        release. Refused once anything is charged: a filter's budget is fixed in advance."""
        chosen = _budget(budget)
        assert chosen is not None
        values: dict = dict(notion=chosen.notion, amount=chosen.amount, delta=chosen.delta)
        if group_size is not None:
            values["group_size"] = check_group_size(group_size)
        why = "its budget was fixed before the first one and cannot change (a privacy filter needs its budget in advance). Reset it only if it is demo data."
        return self._before_first_release(key, values, why)

    def set_group_size(self, key: str, group_size: int) -> Status:
        """The uploader: how many rows one person may contribute (the unit of protection), before the
        dataset's first private release; every charge is then for a group of that many rows."""
        values = dict(group_size=check_group_size(group_size))
        return self._before_first_release(key, values, "whom its guarantee protects was fixed before the first one.")

    def _before_first_release(self, key: str, values: dict, why: str) -> Status:
        """Change a dataset's row, in one transaction, only while it has no private release."""
        with self.engine.begin() as conn:
            self._lock(conn, key)
            if conn.execute(sa.select(sa.func.count()).where(charges.c.dataset == key, charges.c.private)).scalar():
                raise ValueError(f"this dataset has private releases already: {why}")
            conn.execute(sa.update(datasets).where(datasets.c.key == key).values(**values))
        return self.status(key)

    def reset(self, key: str, *, force: bool = False) -> int:
        """Whoever runs the server: forget a demo dataset's charges and releases (``force`` for other
        data: that voids the guarantee of everything released from it). Returns the charges removed."""
        with self.engine.begin() as conn:
            row = self._lock(conn, key)
            if not row.demo and not force:
                raise ValueError("only demo data can be reset; resetting real data voids its guarantee (force=True).")
            conn.execute(sa.delete(releases).where(releases.c.dataset == key))
            return conn.execute(sa.delete(charges).where(charges.c.dataset == key)).rowcount

    def datasets(self) -> list[Status]:
        with self.engine.connect() as conn:
            keys = [r[0] for r in conn.execute(sa.select(datasets.c.key).order_by(datasets.c.created))]
        return [self.status(k) for k in keys]

    # --- reading ----------------------------------------------------------------------------------
    def status(self, key: str) -> Status:
        with self.engine.connect() as conn:
            row = self._row(conn, key)
            own = conn.execute(sa.select(charges.c.private, charges.c.charge).where(charges.c.dataset == key)).all()
            server = own
            if row.demo:
                server = conn.execute(
                    sa.select(charges.c.private, charges.c.charge)
                    .join(datasets, datasets.c.key == charges.c.dataset)
                    .where(datasets.c.content == row.content)
                ).all()
        private = [c for p, c in own if p]
        server_private = [c for p, c in server if p]
        return Status(
            key=key,
            label=row.label,
            budget=Budget(row.notion, row.amount, row.delta),
            spent=math.fsum(private),
            releases=len(private),
            not_private=len(own) - len(private),
            group_size=row.group_size,
            demo=bool(row.demo),
            server_spent=math.fsum(server_private),
            server_releases=len(server_private),
        )

    def preview(self, key: str, spend: PrivacySpend) -> Preview:
        """What admitting a release with ``spend`` would do now (nothing is written). Practice data
        admits it whatever it costs; ``reason`` then says when a curator would refuse it."""
        status = self.status(key)
        if status.demo:
            return self._practice_preview(key, status, spend)
        try:
            charge = status.budget.charge(spend, status.group_size)
        except ValueError as err:
            return Preview(math.nan, status.spent, math.nan, status.budget, False, str(err))
        with self.engine.connect() as conn:
            spent = self._charges(conn, key)
        ok = admits(status.budget, spent, charge)
        after = math.fsum([*spent, charge])
        return Preview(charge, status.spent, after, status.budget, ok, "" if ok else refusal(status, charge, after))

    def _practice_preview(self, key: str, status: Status, spend: PrivacySpend) -> Preview:
        try:
            charge: float | None = status.budget.charge(spend, status.group_size)
        except NotCovered:
            charge = None
        refused = curator_refusals(status.budget, [*self._asked(key, status.budget), charge])[-1]
        cost = 0.0 if charge is None else charge
        mark = "Over the practice budget: a curator would refuse this release." if refused else ""
        return Preview(cost, status.spent, status.spent + cost, status.budget, True, mark)

    def practice(self, key: str) -> Practice:
        """A practice dataset's spend in ε and ρ, and which releases a curator holding its budget would
        have refused (the filter replayed, :func:`dpci.ledger.filter.curator_refusals`)."""
        budget = self.status(key).budget
        rows = self._private_rows(key)
        asked = self._asked(key, budget, rows)
        epsilons = [eps for _, eps, _, _ in rows]
        refused = curator_refusals(budget, asked)
        return Practice(
            budget=budget,
            epsilon=None if any(e is None for e in epsilons) else math.fsum(epsilons),
            rho=math.fsum(rho or 0.0 for _, _, rho, _ in rows),
            releases=len(rows),
            refused=tuple(refused),
            refused_ids=frozenset(r[3] for r, no in zip(rows, refused) if no and r[3]),
        )

    def _private_rows(self, key: str) -> list:
        """(charge, epsilon, rho, stored release id) of the dataset's private releases, oldest first."""
        with self.engine.connect() as conn:
            query = (
                sa.select(charges.c.charge, charges.c.epsilon, charges.c.rho, charges.c.release)
                .where(charges.c.dataset == key, charges.c.private)
                .order_by(charges.c.id)
            )
            return list(conn.execute(query).all())

    def _asked(self, key: str, budget: Budget, rows=None) -> list[float | None]:
        """Each private release's charge as a curator holding ``budget`` is asked for it: None for one
        its notion cannot count (a zCDP release, no ε, on a pure budget)."""
        rows = self._private_rows(key) if rows is None else rows
        return [None if budget.notion == "pure" and eps is None else charge for charge, eps, *_ in rows]

    def history(self, key: str) -> list[dict]:
        """Every result computed from the dataset, oldest first: when, what, private or not, its charge,
        the total before it, and its stored release (if any)."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(charges).where(charges.c.dataset == key).order_by(charges.c.id)).mappings()
            return [
                dict(
                    id=r["id"],
                    time=r["created"],
                    what=r["what"],
                    private=bool(r["private"]),
                    charge=r["charge"],
                    epsilon=r["epsilon"],
                    rho=r["rho"],
                    spent_before=r["spent_before"],
                    release=r["release"],
                    session=r["session"],
                    spec=json.loads(r["spec"]),
                )
                for r in rows
            ]

    # --- writing ----------------------------------------------------------------------------------
    def admit(
        self, key: str, spend: PrivacySpend, *, what: str, spec: Mapping | None = None, session: str = ""
    ) -> Admission:
        """Admit a private release with ``spend`` before its noise is drawn: one transaction that locks
        the dataset, applies the filter and writes the charge. Raises :class:`BudgetExceeded` (or
        :class:`dpci.ledger.NotCovered`) and writes nothing when the budget cannot pay for it.

        Practice data (registered with ``demo=True``: public data nobody in which is protected) is
        never refused: the charge is written (0 when the budget's notion cannot count it, its ε and ρ
        kept beside it) and :meth:`practice` marks what a curator would have refused."""
        if not isinstance(spend, PrivacySpend):
            raise TypeError(f"admit takes a PrivacySpend (a release's .spend), got {spend!r}.")
        with self.engine.begin() as conn:
            row = self._lock(conn, key)
            budget = Budget(row.notion, row.amount, row.delta)
            spent = self._charges(conn, key)
            before = math.fsum(spent)
            if row.demo:
                try:
                    charge = budget.charge(spend, row.group_size)
                except NotCovered:
                    charge = 0.0
                return self._insert(conn, key, True, charge, spend, what, spec, session, before, budget)
            charge = budget.charge(spend, row.group_size)
            if not admits(budget, spent, charge):
                status = Status(key, row.label, budget, before, len(spent), 0, row.group_size, bool(row.demo), 0, 0)
                raise BudgetExceeded(
                    refusal(status, charge, math.fsum([*spent, charge])), before, charge, budget.amount
                )
            return self._insert(conn, key, True, charge, spend, what, spec, session, before, budget)

    def note(self, key: str, *, what: str, spec: Mapping | None = None, session: str = "") -> Admission:
        """Record a result computed from the data that no guarantee covers (a public seed, a bootstrap, a
        non-private interval, a sweep on the data): listed in the history, never counted as privacy."""
        with self.engine.begin() as conn:
            row = self._lock(conn, key)
            budget = Budget(row.notion, row.amount, row.delta)
            return self._insert(
                conn, key, False, 0.0, None, what, spec, session, math.fsum(self._charges(conn, key)), budget
            )

    # --- internals --------------------------------------------------------------------------------
    def _row(self, conn, key):
        row = conn.execute(sa.select(datasets).where(datasets.c.key == key)).first()
        if row is None:
            raise KeyError(f"no dataset {key!r} in the ledger: register it first.")
        return row

    def _lock(self, conn, key):
        """Lock the dataset's row for this transaction (an UPDATE: SQLite's write lock, a row lock
        elsewhere), so concurrent charges are serialised and none is lost."""
        done = conn.execute(sa.update(datasets).where(datasets.c.key == key).values(version=datasets.c.version + 1))
        if done.rowcount == 0:
            raise KeyError(f"no dataset {key!r} in the ledger: register it first.")
        return self._row(conn, key)

    @staticmethod
    def _charges(conn, key) -> list[float]:
        query = sa.select(charges.c.charge).where(charges.c.dataset == key, charges.c.private).order_by(charges.c.id)
        return [c for (c,) in conn.execute(query)]

    @staticmethod
    def _insert(conn, key, private, charge, spend, what, spec, session, before, budget) -> Admission:
        done = conn.execute(
            sa.insert(charges).values(
                dataset=key,
                private=private,
                charge=charge,
                epsilon=None if spend is None else spend.epsilon,
                rho=None if spend is None else spend.rho,
                what=what,
                spec=to_json(dict(spec or {})),
                session=session,
                spent_before=before,
                created=time.time(),
            )
        )
        return Admission(int(done.inserted_primary_key[0]), key, private, charge, before, budget)


def _budget(budget) -> Budget | None:
    if budget is None or isinstance(budget, Budget):
        return budget
    return Budget.parse(budget)
