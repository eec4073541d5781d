"""Streamlit helpers shared by app.py and pages/: the settings sidebar, cached data,
background jobs, URL sharing and error display. All computation lives in dpci.

The helpers live in the modules below; this package re-exports the names the app, its pages and
tests use, so ``import ui; ui.sidebar()`` works. Imports run one way: settings <- state <- upload
<- data <- background, and settings, state <- sidebar.
"""

from dpci.presentation.tables import escape_markdown
from ui.background import (
    _WARMING,
    NO_JOB,
    VI_JOBS,
    current_job,
    existing_variability_job,
    first_preview,
    job_slot,
    poll_interval,
    rerun_once_when_done,
    session_alive,
    shown_variability,
    sweep_job,
    sweep_progress,
    sweep_state,
    variability_job,
    variability_key,
    warm_workers,
)
from ui.data import (
    c_bound,
    c_caution,
    c_problem,
    cached_nonprivate,
    cached_release,
    cached_walkthrough,
    dataset_key,
    explain_error,
    load_data,
    loader,
)
from ui.settings import DATASETS, Settings, _fmt_c, changed_settings, settings_values
from ui.sidebar import page, settings_file_panel, sidebar
from ui.state import (
    chart_sent,
    controls_follow,
    current_settings,
    first_paint,
    kept_widget,
    set_setting,
    share_settings,
    waiting_sidebar,
)
from ui.upload import _not_private_reason, upload_not_private, upload_panel

__all__ = [
    "DATASETS",
    "NO_JOB",
    "VI_JOBS",
    "_WARMING",
    "Settings",
    "_fmt_c",
    "_not_private_reason",
    "c_bound",
    "c_caution",
    "c_problem",
    "cached_nonprivate",
    "cached_release",
    "cached_walkthrough",
    "changed_settings",
    "chart_sent",
    "controls_follow",
    "current_job",
    "current_settings",
    "dataset_key",
    "escape_markdown",
    "existing_variability_job",
    "explain_error",
    "first_paint",
    "first_preview",
    "job_slot",
    "kept_widget",
    "load_data",
    "loader",
    "page",
    "poll_interval",
    "rerun_once_when_done",
    "session_alive",
    "set_setting",
    "settings_file_panel",
    "settings_values",
    "share_settings",
    "shown_variability",
    "sidebar",
    "sweep_job",
    "sweep_progress",
    "sweep_state",
    "upload_not_private",
    "upload_panel",
    "variability_job",
    "variability_key",
    "waiting_sidebar",
    "warm_workers",
]
