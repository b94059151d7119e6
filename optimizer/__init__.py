"""The prepare passes and the graph-editing API of hexagon_nn_prepare_notes.txt (docs/architecture.md).

- :mod:`.editor`: the GraphEditor every change goes through (indexes at once, list per pass);
- :mod:`.lookup`, :mod:`.consts`, :mod:`.edits`, :mod:`.check`: the notes' utilities;
- :mod:`.quant_passes`, :mod:`.supernodes`, :mod:`.relus`, :mod:`.d32_passes`, :mod:`.cleanup`: the passes;
- :mod:`.pipeline`: the passes in order, verified after each.
"""
from hexnn_import.optimizer.pipeline import (DEFAULT_PASSES, PASSES, PrepareReport, UnknownPassError,
                                             passes_by_name, run_pipeline)

__all__ = ["DEFAULT_PASSES", "PASSES", "PrepareReport", "UnknownPassError", "passes_by_name", "run_pipeline"]
