"""Streamlit helpers shared by the app's pages: the settings (pure), the session's state and its
widgets, the sidebar, cached data, background jobs, the privacy ledger's views and error display. All
computation lives in dpci.

Nothing is re-exported here: a page imports each module by name (``import ui.sidebar``, then
``ui.sidebar.page(...)``), so a reader sees which module owns each helper. Imports run one way:
settings <- state <- upload <- data <- background, and settings, state <- sidebar.
"""
