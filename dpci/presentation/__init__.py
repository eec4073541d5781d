"""What a release looks like to people: Plotly figures (:mod:`.figures`), tables and plain
sentences (:mod:`.tables`) and the one-file HTML report (:mod:`.report`). Needs plotly
(the ``app`` extra); ``import dpci`` never imports this package."""
