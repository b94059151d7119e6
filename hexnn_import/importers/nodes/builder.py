"""What every importer shares: the graph under construction and its small helpers.

Both importers (TFLite, ONNX) subclass :class:`GraphBuilder`; the emitters
of ``nodes/core.py`` take a builder and append hexagon_nn nodes to its graph, so
one lowering (a Supernode, a requantize, an activation folded into a range)
is written once for both source formats.

The range policy (how an importer knows an activation's quantization):

- a quantized source tensor has a fixed range from its scale / zero point
  (SEMANTICS §1);
- a float source tensor has a fixed range when calibration observed it
  (``calibration``: source tensor name -> (min, max)), widened to contain 0
  and nudged so that 0 is exactly representable;
- otherwise its range is only known at run time (``None``): the emitters
  then choose the ops that compute ranges from the data
  (AutoQuantize, QuantizeDownAndShrinkRange_32to8), as hexagon_nn's float
  graphs do.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from hexnn_import.graph import Graph, Node, Ref
from hexnn_import.importers.nodes.values import Value


def calibrated_range(mn: float, mx: float) -> tuple[float, float]:
    """A quint8 range containing ``[mn, mx]`` and 0, with 0 exactly on a code.

    The step is ``(max - min) / 255`` of the widened range and the zero code is
    rounded to an integer, as TFLite's and onnxruntime's quantizers do, so the
    range survives Requantize_8to8's zero check (SEMANTICS §4).
    """
    lo, hi = min(float(mn), 0.0), max(float(mx), 0.0)
    if hi - lo < 1e-8:
        hi = lo + 1e-8
    step = (hi - lo) / 255.0
    zero = int(np.clip(np.round(-lo / step), 0, 255))
    return -zero * step, (255 - zero) * step


class GraphBuilder:
    """The graph under construction, the tensor values and the range policy."""

    def __init__(self, label: str, source_format: str, calibration: Mapping[str, tuple[float, float]] | None = None):
        self.label = label
        self.graph = Graph()
        self.graph.meta = {"source_format": source_format, "source": label, "notes": []}
        self.calibration: dict[str, tuple[float, float]] = dict(calibration or {})
        if calibration is not None:
            self.graph.meta["calibrated"] = True
        #: products whose chain the source format fixes as one Supernode (``nodes.core.emit_conv``); fused by
        #: the optimizer's own conv fusion in :meth:`fuse_fixed_chains` at the end of the import
        self.fixed_chains: list[Node] = []

    def fuse_fixed_chains(self) -> None:
        """Fuse the declared chains with ``optimizer.supernodes.fuse_declared`` (the one implementation of
        the conv -> Supernode fusion, which make_supernodes also runs)."""
        from hexnn_import.optimizer.dwise_split import split_defect_dwise
        from hexnn_import.optimizer import run_pipeline
        from hexnn_import.optimizer.maxpool_left import split_left_pools
        from hexnn_import.optimizer.supernodes import fuse_declared

        fuse_declared(self.graph, self.fixed_chains)
        self.fixed_chains = []
        split_defect_dwise(self.graph)  # a form hexagon_nn's device code computes right (optimizer.dwise_split)
        # the same for a max pool after a depthwise layer (optimizer.maxpool_left), checked on a prepared copy
        split_left_pools(self.graph, lambda g: run_pipeline(g, None, verify=False))

    # ---- constants ---------------------------------------------------------------
    def float_const(self, x: float, name: str = "") -> Ref:
        """A float32 scalar Const ``[1,1,1,1]``."""
        return self.graph.const_ref(float(x), name)

    def int_const(self, values: int | list[int] | tuple[int, ...] | np.ndarray, name: str = "") -> Ref:
        """An int32 Const: a scalar ``[1,1,1,1]`` or a vector ``[1,1,1,n]``."""
        arr = np.asarray(values, dtype=np.int32)
        return self.graph.const_ref(arr.reshape(1, 1, 1, -1) if arr.ndim else arr.reshape(1, 1, 1, 1), name)

    def range_consts(self, rng: tuple[float, float], name: str) -> tuple[Ref, Ref]:
        """Two float Consts holding a (min, max) pair."""
        return self.float_const(rng[0], f"{name}/min"), self.float_const(rng[1], f"{name}/max")

    # ---- bookkeeping ----------------------------------------------------------------
    def note(self, text: str) -> None:
        """An importer note shown in the summary (a choice the user should know of)."""
        notes = self.graph.meta.setdefault("notes", [])
        assert isinstance(notes, list)
        if text not in notes:
            notes.append(text)

    def map_tensor(self, name: str, value: Value) -> None:
        """Record where a source tensor lives in the graph (per-layer compare)."""
        self.graph.tensor_map[name] = value.data
        if value.mn is not None and value.mx is not None:
            self.graph.tensor_ranges[name] = (value.mn, value.mx)
        else:
            self.graph.tensor_ranges.pop(name, None)

    def float_range(self, name: str) -> tuple[float, float] | None:
        """The calibrated range of a float source tensor, a range the model itself implies (a float
        island between DEQUANTIZE and QUANTIZE), or None (run-time range)."""
        r = self.calibration.get(name)
        if r is None:
            implied = getattr(self, "implied_ranges", {}).get(name)
            return None if implied is None else tuple(implied)  # type: ignore[return-value]
        return calibrated_range(*r)
