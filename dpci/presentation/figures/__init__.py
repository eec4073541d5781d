"""Plotly figure builders: plain functions from data to a ``plotly.graph_objects.Figure``,
so the app, a notebook and a report draw the same pictures in one visual language.

Every figure uses the same colour and mark for each kind of quantity (:data:`STYLE`). The
builders live in :mod:`.release`, :mod:`.sweeps` and :mod:`.teaching`; all are importable from here.
"""

from .accuracy import target_path_plot
from .release import forest_plot, ledger_plot
from .repeat import repeat_plot
from .style import FONT, STYLE, _nice_log_ticks, method_label, plain, short_method_label
from .sweeps import ci_vs_vi_plot, coverage_length_plot, curve_fit_plot, heatmap_grid, sample_size_plot
from .teaching import cloud_plot, eigenvalue_plot, matrix_plot, noise_matrix_plot, noise_norm_plot, shift_plot

__all__ = [
    "FONT",
    "STYLE",
    "_nice_log_ticks",
    "ci_vs_vi_plot",
    "cloud_plot",
    "coverage_length_plot",
    "curve_fit_plot",
    "eigenvalue_plot",
    "forest_plot",
    "heatmap_grid",
    "ledger_plot",
    "matrix_plot",
    "method_label",
    "noise_matrix_plot",
    "noise_norm_plot",
    "plain",
    "repeat_plot",
    "sample_size_plot",
    "shift_plot",
    "short_method_label",
    "target_path_plot",
]
