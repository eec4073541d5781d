"""Background jobs in the app: the bootstrap's worker processes, the variability job and its
previews, job slots kept in the session, sweep progress and the results fragments' polling.
"""

from __future__ import annotations

import threading
import time

import streamlit as st
from threadpoolctl import threadpool_limits

from dpci import methods as registry
from dpci.experiments import bootstrap
from dpci.experiments.bootstrap import iter_variability
from dpci.presentation.tables import escape_markdown
from ui import cluster, privacy
from ui.app_state import AppState
from ui.data import dataset_key
from ui.jobs import JobBoard, JobSlot

# One BLAS thread: the background jobs run in Python threads of this server process, and
# multi-threaded BLAS busy-waiting against them slowed the bootstrap more than tenfold.
threadpool_limits(limits=1)
# The bootstrap runs in worker processes (joblib), so the server's own Python thread,
# which draws the pages, never competes with it for the interpreter lock.
VI_JOBS = 2


WARMING = threading.Lock()


def warm_workers():
    """Start the bootstrap's worker processes in the background, unless they are running.

    A first paint calls this, so the bootstrap that starts at its results fragment's next tick
    finds its workers ready: starting them (each imports numpy, scipy and dpci) took a fresh
    server's first variability interval 2.3 s after the chart, against 1.1 s with running
    workers. The engine (dpci.experiments.engine) stops idle workers after 300 s and replaces a
    pool whose worker died, so this is worth checking at every first paint; cancelling a run no
    longer stops them. Running workers are left alone.
    """
    if WARMING.locked() or bootstrap.workers_running() or cluster.scheduler_address():
        return  # running, or the jobs go to the class's Dask scheduler

    def warm():
        with WARMING:
            try:
                bootstrap.warm_up_workers(VI_JOBS)
            except Exception:  # noqa: BLE001 - only a head start: the bootstrap starts them itself
                pass

    threading.Thread(target=warm, name="dpci-warm-workers", daemon=True).start()


def session_alive(grace=15.0):
    """A callable telling a background job whether this browser session is still connected; a job
    whose session has been gone for ``grace`` seconds stops (abandoned tabs must not keep the
    server's cores busy). The grace period lets a page reload or a brief disconnection resume."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():  # bare mode or tests: no session to watch
        return None
    runtime, session_id, seen = Runtime.instance(), ctx.session_id, [time.monotonic()]

    def alive():
        now = time.monotonic()
        if runtime.is_active_session(session_id):
            seen[0] = now
        return now - seen[0] < grace

    return alive


# The jobs whose results every session may share: computed from public randomness (the bootstrap's own
# seed, a sweep's public seeds), never a private release. The accuracy-first search on real data spends
# the budget for its visitor, so it stays the session's own.
SHARED = frozenset({"variability", "split", "grid", "cmp", "repeat"})


def _save(job):
    from dpci.experiments import stored

    return stored.encode(job.latest, job.warnings) if getattr(job.latest, "finished", False) else None


def _load(payload):
    """(state, warnings) of a stored result: what dpci warned of is shown with it again."""
    from dpci.experiments import stored

    return stored.decode(payload), stored.decode_warnings(payload)


@st.cache_resource(show_spinner=False)
def job_board() -> JobBoard:
    """The server's shared jobs (one board per process): a result being computed is joined, a finished
    one shown at once; finished results are kept in the ledger's database, so they outlive a restart."""
    from dpci.ledger.results import ResultStore

    return JobBoard(store=ResultStore(privacy.ledger().engine), save=_save, load=_load)


def _session_id():
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def job_slot(name: str) -> JobSlot:
    """The session's slot for its ``name`` job; its jobs take their turns at the worker pool as the session."""
    if f"slot_{name}" not in st.session_state:
        board = job_board() if name in SHARED else None
        st.session_state[f"slot_{name}"] = JobSlot(alive=session_alive(), board=board, kind=name, group=_session_id())
    return st.session_state[f"slot_{name}"]


def current_job(name: str, key):
    """The page's job if it was started for exactly these inputs, else None."""
    job = job_slot(name).job
    return job if _usable(job, key) else None


def _usable(job, key) -> bool:
    """``job`` is for ``key`` and was not cancelled under its session (a shared job goes when every session
    that wanted it has gone, e.g. a browser silent past the grace period under load): a cancelled one is
    asked for again, never shown as computing for ever."""
    return job is not None and job.key == key and not getattr(job, "cancelled", False)


class _NoJob:
    """Stands in for a job not started yet."""

    latest = None
    error = None
    done = False
    key = None
    elapsed = 0.0


NO_JOB = _NoJob()


def variability_key(s: AppState, source: str = "data"):
    """What a variability job's result depends on (``source``: "data", or "preview" for the stand-in)."""
    method = registry.get(s.spec.method)
    spec = s.spec
    return (
        source,
        dataset_key(s),
        repr(spec.loss),
        method.name,
        method.variability_key(spec.measure()),  # the steps its replicates read
        s.spec.c,
        s.data.seed,
        replicates(s),
        VI_PRECISION,
    )


# The bootstrap stops once each endpoint's Monte Carlo standard error is within 2% of the interval's width
# (dpci.experiments.stopping), at most at the replicates setting: on Adult about 2,500 replicates, 1.3 s
# with two workers, where 10,000 took 5 s; a drawn endpoint moves by less than the width of its line.
VI_PRECISION = 0.02


def replicates(s: AppState) -> int:
    """The bootstrap replicates to run: the setting, at most the method's own limit (a slow replicate)."""
    most = registry.get(s.spec.method).max_replicates
    return s.view.vi_replicates if most is None else min(s.view.vi_replicates, most)


def existing_variability_job(s: AppState, source: str = "data"):
    """The variability job for these settings if one was started, else None."""
    slot = st.session_state.get("slot_variability")
    job = slot.job if slot is not None else None
    return job if _usable(job, variability_key(s, source)) else None


def variability_job(s: AppState, X, y, source: str = "data"):
    """The background job computing variability intervals for these settings (kept across reruns).

    The key leaves out what variability intervals do not depend on (φ2, φ3, m, the level),
    so moving those sliders does not restart it.
    """
    slot = job_slot("variability")
    key = variability_key(s, source)
    if source == "data" and not (
        slot.job is not None and slot.job.key == key
    ):  # from the data, no privacy: on the ledger
        privacy.note_not_private(
            s, f"variability:{key!r}", "variability intervals (a bootstrap on the data, not private)"
        )
    spec = s.spec.replace(n_samples=10_000, seed=None)  # the bootstrap draws its own randomness
    kwargs = dict(n_replicates=replicates(s), random_state=s.data.seed, precision=VI_PRECISION)
    return slot.ensure(
        key, cluster.scheduled(lambda: iter_variability(X, y, spec, n_jobs=VI_JOBS, low_priority=True, **kwargs))
    )


# The first bars come at 20 replicates (a slow method's replicate takes a second: Kulkarni et al.'s bars are
# drawn within 30 s of the chart), said to be rough until ROUGH_UNTIL; fast methods pass 20 within 0.1 s.
MILESTONES = (20, 50, 100, 200, 500, 1_000, 2_000, 3_000, 5_000, 7_500, 10_000)
ROUGH_UNTIL = 200


FIRST_PREVIEW_WAIT = 0.4  # seconds; a warm worker pool yields its first replicates within about 0.15 s
FINISH_WAIT = 0.6  # seconds a tick waits for a bootstrap predicted to be done by then


def tick_state(job):
    """The job's latest state. A job started less than a second ago is given up to
    FIRST_PREVIEW_WAIT to reach the first drawn milestone, so the first variability interval is
    drawn now rather than at the next tick, a second later; a job predicted to be done within
    FINISH_WAIT (:func:`seconds_left`) is waited for, so "done" is drawn now, not a second later."""
    if job is NO_JOB:
        return None
    deadline = time.monotonic() + FIRST_PREVIEW_WAIT
    while (
        job.elapsed < 1.0
        and not job.done
        and time.monotonic() < deadline
        and (job.latest is None or job.latest.done < MILESTONES[0])
    ):
        time.sleep(0.02)
    left = seconds_left(job, job.latest)
    if left is not None and left <= FINISH_WAIT:
        deadline = time.monotonic() + FINISH_WAIT
        while not job.done and time.monotonic() < deadline:
            time.sleep(0.02)
    return job.latest


def seconds_left(job, state) -> float | None:
    """Seconds until the running ``job`` is predicted to stop, at its pace so far (its replicates over the
    seconds since it started) and by its stopping rule's prediction of the replicates it needs; None while
    it has no state or is done."""
    if state is None or job.done or state.finished or not hasattr(state, "predicted_total") or state.done == 0:
        return None
    return (state.predicted_total - state.done) * job.elapsed / state.done


def shown_variability(state, alpha):
    """Variability bounds at level 1 - alpha to draw, refreshed only at milestones of the replicate
    count: between them the chart stays identical, so browsers are not asked to redraw it twice a
    second. The job does not depend on the level, so alpha is the page's current one."""
    if state is None or state.done < MILESTONES[0]:
        return None
    reached = max([m for m in MILESTONES if m <= state.done] + ([state.done] if state.finished else []))
    return column_bounds(state.estimates[:reached], alpha)


def variability_or_last(state, alpha, names, where):
    """(bounds, stale): the job's variability bounds to draw; while it has none yet, the last ones drawn for
    the same coefficients of the same estimand (``where``: the data, the loss and c, which place the bars),
    marked stale (drawn faded), so a budget slider's move never blanks the bars. After a move that places
    them elsewhere (another c), none: bars of another estimand are never drawn beside these."""
    bounds = shown_variability(state, alpha)
    if bounds is not None:
        st.session_state["_last_variability"] = (tuple(names), where, bounds)
        return bounds, False
    last = st.session_state.get("_last_variability")
    if last is not None and last[:2] == (tuple(names), where):
        return last[2], True
    return None, False


def estimand_place(s: AppState, source: str = "data") -> tuple:
    """What places the variability bars: the rows, the loss and c (their estimand, theta_0(c))."""
    return (source, dataset_key(s), repr(s.spec.loss), s.spec.c)


def variability_progress(job, state) -> str:
    """The variability job's progress in words: "Variability interval (done): 2,500 bootstrap replicates,
    endpoints ±1.9% of the width, 1.3 s" (a result another session computed says so)."""
    if not state.finished:
        text = f"Variability interval (computing): {state.done:,} / {state.total:,} bootstrap replicates"
        rough = f" (rough until {ROUGH_UNTIL:,}: its ends move as replicates come)" if state.done < ROUGH_UNTIL else ""
        return f"{text}, {job.elapsed:.1f} s{rough}"
    precise = state.summary().removeprefix("done: ").replace("replicates", "bootstrap replicates", 1)
    took = "computed earlier, shared" if job.__class__.__name__ == "Finished" else f"{job.elapsed:.1f} s"
    return f"Variability interval (done): {precise}, {took}"


def memo_chart(draw, table, **kwargs):
    """``draw(table, **kwargs)``, or the figure it gave for the same table and arguments at this session's
    previous call: a results fragment redraws once a second while a bootstrap runs, and between milestones
    the chart is the same (building a Plotly figure took a sixth of a busy server's time)."""
    import pandas as pd

    key = (pd.util.hash_pandas_object(table, index=True).to_numpy().tobytes(), repr(sorted(kwargs.items())))
    last = st.session_state.get("_memo_chart")
    if last is None or last[0] != key:
        last = st.session_state["_memo_chart"] = (key, draw(table, **kwargs))
    return last[1]


def column_bounds(estimates, alpha):
    from dpci.intervals import column_quantiles

    return column_quantiles(estimates, [alpha / 2, 1 - alpha / 2]).T


def sweep_job(name: str, key, make, label: str = "Run", hint: str = "", disabled: bool = False, on_click=None):
    """A sweep page's Run button and its background job: pressing it starts ``make()``; returns the
    job started for exactly these inputs, else None (and shows ``hint``). ``on_click`` runs before the
    page's rerun, so it may change what the page then computes ``key`` and ``make`` from (a new seed)."""
    if st.button(label, type="primary", disabled=disabled, on_click=on_click):
        job_slot(name).ensure(key, cluster.scheduled(make))
    job = current_job(name, key)
    if job is None and hint:
        st.info(hint)
    return job


def sweep_state(job):
    """In a results fragment: show the sweep's progress; its latest state when it has rows to draw, else None."""
    state = sweep_progress(job)
    return None if state is None or state.frame.empty else state


def sweep_fragment(job, show):
    """A page's sweep results: a fragment that redraws once a second while ``job`` runs, shows its
    progress and, once the sweep has rows, calls ``show(state)`` with its latest state."""

    @st.fragment(run_every=poll_interval(job))
    def results():
        state = sweep_state(job)
        if state is not None:
            show_warnings(job)
            show(state)

    results()


def job_fragment(job, show):
    """A page's results of a job that is not a sweep: a fragment that redraws once a second while it
    runs and calls ``show()`` once there is a job, or shows its error."""

    @st.fragment(run_every=poll_interval(job))
    def results():
        if job is None:
            return
        if job.error:
            st.error(escape_markdown(job.error))
            return
        show_warnings(job)
        show()

    results()


def show_warnings(job):
    """What dpci warned of while the job ran (intervals likely to under-cover at some setting, no useful
    interval, ...), each message once and escaped (it quotes values), in one box above the results it
    concerns: before, these reached only the server's log."""
    said = [escape_markdown(message) for message in getattr(job, "warnings", ())]
    if len(said) == 1:
        st.warning(f"**About these results:** {said[0]}")
    elif said:
        st.warning("**About these results:**\n" + "\n".join(f"- {message}" for message in said))


def sweep_progress(job):
    """Show a sweep job's progress and error; return its latest state (or None)."""
    if job is None:
        return None
    state = job.latest
    if job.error:
        st.error(escape_markdown(job.error))
    elif state is None:
        st.progress(0.0, text="Starting…")
    elif not state.finished:
        inner = state.replicates_done / state.replicates_total if state.replicates_total else 0.0
        frac = (state.settings_done + inner) / max(state.settings_total, 1)
        st.progress(
            min(frac, 1.0),
            text=f"Setting {state.settings_done + 1} of {state.settings_total}: "
            f"{state.replicates_done} / {state.replicates_total} repetitions, "
            f"{job.elapsed:.0f} s",
        )
    else:
        total = state.settings_total
        st.success(f"Done: {total} setting{'' if total == 1 else 's'} in {job.elapsed:.0f} s.")
    return state


def poll_interval(job, first=False, first_paint=False):
    """How often a results fragment redraws: once a second while ``job`` runs; ``first`` asks for
    one tick a second after the first draw, which starts the job once the browser has had time to
    draw the chart (started at once, it slowed the first chart from under 3 s to 5 s here). After a
    session's first paint (see :func:`first_paint`) that tick comes after two seconds: the browser is
    still loading the chart's code, and the settings widgets that the tick brings would slow it."""
    if first:
        return 2.0 if first_paint else 1.0
    return 1.0 if job is not None and not job.done else None


def rerun_once_when_done(job, name):
    """After a job ends, one full rerun so the polling fragment stops."""
    if job is not None and job.done and st.session_state.get(f"_done_{name}") != job.key:
        st.session_state[f"_done_{name}"] = job.key
        st.rerun()
