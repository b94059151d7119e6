"""Test feeds put on the 8-bit grid of the QuantizeLinear that reads each graph input of a QDQ model.

Since issue 36 the engine's float-input Quantize is hexagon_nn's device code (quantize_execute_opt: a fixed point
in which a half code, and values within its precision above one, round down; inputs far outside the range wrap),
not onnxruntime's round-half-even with saturation. A random float feed therefore enters the graph up to one code
away from onnxruntime's for ~2% of its values, and every later op is judged on a different input. Feeds that are
codes of the input's own grid (inside its range) enter both identically, so an agreement test keeps measuring the
ops it was written for.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

Feed = Mapping[str, np.ndarray]


def _input_grids(model: onnx.ModelProto) -> dict[str, tuple[float, int, int, int]]:
    """``{input: (scale, zero point, lowest code, highest code)}`` of each graph input a QuantizeLinear reads with
    constant scale and zero point."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    inputs = {vi.name for vi in model.graph.input} - set(inits)
    grids = {}
    for node in model.graph.node:
        if node.op_type != "QuantizeLinear" or node.input[0] not in inputs or node.input[1] not in inits:
            continue
        zp = inits[node.input[2]] if len(node.input) > 2 and node.input[2] in inits else np.uint8(0)
        info = np.iinfo(zp.dtype)
        grids[node.input[0]] = (float(inits[node.input[1]]), int(zp), int(info.min), int(info.max))
    return grids


def on_input_grid(qdq_model: bytes, feeds: Sequence[Feed]) -> list[dict[str, np.ndarray]]:
    """``feeds`` with every input read by a QuantizeLinear moved to the nearest code of its grid, clipped to the
    range: ``(clip(round(x / scale) + zp) - zp) * scale`` in float32 (other inputs unchanged)."""
    grids = _input_grids(onnx.load_from_string(qdq_model))
    out = []
    for feed in feeds:
        new = dict(feed)
        for name, (scale, zp, lo, hi) in grids.items():
            if name in new:
                codes = np.clip(np.rint(np.asarray(new[name], np.float64) / scale) + zp, lo, hi)
                new[name] = ((codes - zp) * np.float32(scale)).astype(np.float32)
        out.append(new)
    return out
