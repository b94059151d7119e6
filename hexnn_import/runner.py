"""Running a graph with the source model's dtypes at its boundary (the engine sees graph dtypes).

:class:`Runner` feeds int8 codes as quint8 (XOR 0x80, SEMANTICS §1), uint8 as is and floats as
float32 (:func:`to_graph_input`), and returns quantized outputs in the source's dtype, scale and zero
point (:func:`from_quantized_output`). It sits beside the engine, below the API facade
(:mod:`hexnn_import.api` re-exports it), so calibration, compare and the XS3 path use it without
importing the facade.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from hexnn_import.engine import Engine
from hexnn_import.errors import GraphError, InputDataError
from hexnn_import.graph import Graph, GraphIO, Ref
from hexnn_import.ops.quant import round_away, scale_zp_to_range


class Runner:
    """Runs a graph with source-model dtypes at the boundary; keeps node state across runs."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.engine = Engine(graph)

    def reset_state(self) -> None:
        """Back to the state of a new Runner: the graph's Variables (a streaming model's state) at their
        initial values, as a new LiteRT interpreter starts (docs/recurrent.md). Without it, state carries
        from run to run, as in LiteRT's interpreter."""
        self.engine.reset_state()

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{input name: array} -> {output name: array}``."""
        outs, _ = self.engine.run(self._feeds(feeds))
        return {io.name: self._output(io, outs) for io in self.graph.outputs}

    def run_all(self, feeds: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[Ref, np.ndarray]]:
        """As :meth:`run`, plus every intermediate tensor by graph ref ("mark all")."""
        outs, every = self.engine.run(self._feeds(feeds), mark_all=True)
        return {io.name: self._output(io, outs) for io in self.graph.outputs}, every

    def _feeds(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        names = [io.name for io in self.graph.inputs]
        extra = sorted(set(feeds) - set(names))
        missing = [n for n in names if n not in feeds]
        if missing or extra:
            raise InputDataError(f"inputs {missing} missing and {extra} unknown; the model takes {names}")
        out: list[np.ndarray] = [np.empty(0)] * len(names)
        for io in self.graph.inputs:
            out[io.index] = to_graph_input(io, np.asarray(feeds[io.name]))
        return out

    def _output(self, io: GraphIO, outs: list[np.ndarray]) -> np.ndarray:
        vals = [outs[i] for i in io.refs]
        if vals[0].size != int(np.prod(io.shape, dtype=np.float64)):
            raise GraphError(f"output '{io.name}': the graph computes {vals[0].size} values, the model declares "
                             f"shape {list(io.shape)}")
        if len(vals) == 3 and io.quantized:
            return from_quantized_output(io, vals[0], float(vals[1].reshape(-1)[0]), float(vals[2].reshape(-1)[0]))
        out = vals[0].reshape(io.shape)
        if io.dtype in ("bool", "int64") and out.dtype != np.dtype(io.dtype):
            # bool as uint8 0/1 and int64 as int32 in the graph (hexagon_nn has neither type)
            return out.astype(io.dtype)
        return out


def to_graph_input(io: GraphIO, arr: np.ndarray) -> np.ndarray:
    """Source dtype -> graph dtype: int8 XOR 0x80 to quint8, uint8 as is, floats as float32."""
    if tuple(arr.shape) != tuple(io.shape):
        raise InputDataError(f"input '{io.name}' has shape {list(arr.shape)}, the model takes {list(io.shape)}")
    if io.dtype in ("int8", "uint8"):
        if arr.dtype != np.dtype(io.dtype):
            raise InputDataError(f"input '{io.name}' has dtype {arr.dtype}, the model takes {io.dtype}")
        return arr.view(np.uint8) ^ np.uint8(0x80) if io.dtype == "int8" else arr.copy()
    if io.dtype == "int16":  # int16x8 activations: quint16 by XOR 0x8000 (hexnn_import/importers/nodes/int16.py)
        if arr.dtype != np.dtype(np.int16):
            raise InputDataError(f"input '{io.name}' has dtype {arr.dtype}, the model takes int16")
        return arr.view(np.uint16) ^ np.uint16(0x8000)
    if io.dtype == "float32":
        if not np.issubdtype(arr.dtype, np.floating):
            raise InputDataError(f"input '{io.name}' has dtype {arr.dtype}, the model takes float32")
        return arr.astype(np.float32)
    return arr


def from_quantized_output(io: GraphIO, q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """quint8 (q, min, max) -> the source dtype with the source's scale/zero point.

    When the graph's range is the source's range (the importer fixes it so),
    this is the XOR of SEMANTICS §1; otherwise the real values are requantized
    with round-half-away.
    """
    assert io.scale is not None and io.zero_point is not None
    if io.dtype == "int16":
        return _int16_output(io, q, mn, mx)
    signed = io.dtype == "int8"
    want = scale_zp_to_range(io.scale, io.zero_point, signed)
    q = q.reshape(io.shape)
    if _close(mn, want[0]) and _close(mx, want[1]):
        return (q ^ np.uint8(0x80)).view(np.int8) if signed else q.copy()
    if not (np.isfinite(mn) and np.isfinite(mx) and mn <= mx) or not (np.isfinite(io.scale) and io.scale > 0):
        raise GraphError(f"output {io.name}: range [{mn}, {mx}] or scale {io.scale} cannot give "
                         f"{io.dtype} codes")
    step = (mx - mn) / 255.0
    if step == 0:  # a zero-width range (SEMANTICS §1): every code is the one value mn
        real = np.full(q.shape, float(mn))
    else:
        real = (q.astype(np.float64) - round_away(-mn / step)) * step
    lo, hi = (-128, 127) if signed else (0, 255)
    codes = np.clip(round_away(real / io.scale) + io.zero_point, lo, hi)
    return codes.astype(np.int8 if signed else np.uint8)


def _close(a: float, b: float) -> bool:
    """``numpy.allclose(a, b, rtol=1e-6, atol=1e-30)`` of two finite-or-not floats without numpy's array
    set-up (speed, issue 37: every quantized output of every run asks it): NaN is never close."""
    return a == b or abs(float(a) - float(b)) <= 1e-30 + 1e-6 * abs(float(b))


def _int16_output(io: GraphIO, q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """quint16 (q, min, max) -> int16 codes on the source's symmetric scale: XOR 0x8000 when the range is
    ``[-32768, 32768] * scale``, else the real values (65536 steps) requantized with round-half-away."""
    assert io.scale is not None
    q = q.reshape(io.shape)
    if np.allclose((mn, mx), (-32768.0 * io.scale, 32768.0 * io.scale), rtol=1e-6, atol=1e-30):
        return (q.astype(np.uint16) ^ np.uint16(0x8000)).view(np.int16)
    step = (mx - mn) / 65536.0
    real = (q.astype(np.float64) - min(65535.0, max(0.0, float(round_away(-mn / step))))) * step
    return np.clip(round_away(real / io.scale), -32768, 32767).astype(np.int16)
