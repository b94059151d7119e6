"""Convert-time check that each output can vary (issue 34, finding 4): a model whose weights are so small or
so uniform that a quantized output rounds to the same codes on every input says so in its summary.

The prepared graph runs on :data:`PROBES` inputs spread over the input range (every element at the
lowest value, every element at the highest, seeded uniform noise, and smooth random fields - a coarse
random grid interpolated over the input, as photographs vary - that a trained detector or segmenter
responds to where noise leaves it at rest; a quantized input over its codes, a float input over
:data:`FLOAT_RANGE`), each from a fresh state. An output (quantized or float, not empty: indices, counts
and shapes may rightly not move) equal in every element on every probe is named in a note
(``graph.meta["notes"]``, which the summary prints and ``--json`` lists): a trained model's outputs move
with such different inputs, a randomly initialised int8 classifier's softmax does not. The cost is
bounded: above :data:`MAX_PROBE_MACS` multiply-accumulates per run (:func:`estimated_macs`), or with an
input that is not a number in a range (integer indices, booleans), the check is skipped with a note saying
so; ``compare --random N`` then shows the same thing. docs/compare.md, "Results that tell nothing".
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.errors import HexnnError
from hexnn_import.graph import Graph, GraphIO

#: probe inputs per model (docstring): lowest, highest, noise, then smooth fields of these coarse grid sizes
SMOOTH_GRIDS = (3, 5, 8)
PROBES = 3 + len(SMOOTH_GRIDS)
#: the estimated multiply-accumulates of one run above which the probe is skipped (MobileNetV2 at 224 x 224
#: is about 3e8 and runs in well under a second on the engine)
MAX_PROBE_MACS = 500_000_000
#: the range of a float input's probes
FLOAT_RANGE = (-1.0, 1.0)
_CODES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def estimated_macs(graph: Graph) -> int:
    """Multiply-accumulates of one run, estimated from the weights: each node's output elements times its
    constant inputs' elements per output channel (exact for convolutions and fully-connected layers;
    small constants - biases, ranges - add a little)."""
    total = 0
    for node in graph.nodes:
        if node.is_const or not node.output_defs:
            continue
        out = node.output_defs[0].shape
        elements, channels = int(np.prod(out, dtype=np.int64)), max(1, int(out[-1]))
        for ref in node.inputs:
            src = graph.find_node(ref.src_id)
            if src is not None and src.is_const and src.data is not None and src.data.size > channels:
                total += elements * (src.data.size // channels)
    return total


def smooth_field(shape: tuple[int, ...], grid: int, rng: np.random.Generator) -> np.ndarray:
    """Values in [0, 1] of ``shape``: a random grid of at most ``grid`` points per axis, interpolated
    linearly along each longer axis (an axis of ``grid`` or fewer elements, e.g. colour, stays random)."""
    field = rng.uniform(0.0, 1.0, [min(int(d), grid) for d in shape])
    for axis, d in enumerate(shape):
        n = field.shape[axis]
        if n == d:
            continue
        pos = np.linspace(0.0, n - 1, int(d))
        i0 = np.floor(pos).astype(np.int64)
        i1 = np.minimum(i0 + 1, n - 1)
        f = (pos - i0).reshape([-1 if a == axis else 1 for a in range(len(shape))])
        field = np.take(field, i0, axis) * (1.0 - f) + np.take(field, i1, axis) * f
    return field


def _probe(io: GraphIO, k: int) -> np.ndarray | None:
    """Probe ``k`` of input ``io`` (module doc), or None for an input that is not a number in a range."""
    if io.dtype in _CODES and io.scale is not None:
        lo, hi = _CODES[io.dtype]
        dtype = np.dtype(io.dtype)
    elif io.dtype in ("float32", "float16", "float64"):
        lo, hi = FLOAT_RANGE  # type: ignore[assignment]
        dtype = np.dtype(io.dtype)
    else:
        return None
    if k < 2:
        return np.full(io.shape, lo if k == 0 else hi, dtype)
    rng = np.random.default_rng(k)
    unit = rng.uniform(0.0, 1.0, io.shape) if k == 2 else smooth_field(io.shape, SMOOTH_GRIDS[k - 3], rng)
    real = lo + (hi - lo) * unit
    return real.astype(dtype) if dtype.kind == "f" else np.clip(np.round(real), lo, hi).astype(dtype)


def probe_feeds(graph: Graph) -> list[dict[str, np.ndarray]] | None:
    """The :data:`PROBES` feeds, or None when an input is not a number in a range."""
    feeds = []
    for k in range(PROBES):
        feed = {io.name: _probe(io, k) for io in graph.inputs}
        if any(v is None for v in feed.values()):
            return None
        feeds.append(feed)  # type: ignore[arg-type]
    return feeds


def _mega(n: int) -> str:
    return f"{n / 1e6:,.0f} M" if n >= 10_000_000 else f"{n / 1e6:.2g} M"


def probe_name(k: int) -> str:
    """What probe ``k`` is, in words ("the probe input ...")."""
    if k < 3:
        return ("with every element at its lowest value", "with every element at its highest value",
                "of uniform noise")[k]
    return f"of a smooth random field ({SMOOTH_GRIDS[k - 3]}-point grid)"


def constant_outputs(graph: Graph) -> tuple[list[str], str | None]:
    """The outputs equal on every probe, and None; or ``[]`` and why the probe was skipped."""
    from hexnn_import.ops import compiled
    from hexnn_import.runner import Runner

    macs = estimated_macs(graph)
    if macs > MAX_PROBE_MACS:
        return [], f"about {_mega(macs)} multiply-accumulates per run, above {_mega(MAX_PROBE_MACS)}"
    feeds = probe_feeds(graph)
    if not graph.outputs or feeds is None:
        return [], None if not graph.outputs else "an input is not a number in a range (indices or booleans)"
    runner = Runner(graph)
    runs: list[dict[str, Any]] = []
    with compiled.held():  # six short runs: the numpy path, without importing numba (same codes, docs/speed.md)
        for k, feed in enumerate(feeds):
            runner.reset_state()
            try:
                runs.append(runner.run(feed))
            except HexnnError as exc:  # e.g. --max-memory: the probe is a check, not the conversion
                return [], f"the probe input {probe_name(k)} fails: {exc}"
    same = [io.name for io in graph.outputs if _values(io, runs[0][io.name])
            and all(np.array_equal(runs[0][io.name], r[io.name]) for r in runs[1:])]
    return same, None


def _values(io: GraphIO, first: np.ndarray) -> bool:
    """Whether output ``io`` holds values a model computes (quantized or float, not empty): indices, counts
    and shapes may rightly be the same on every input."""
    return first.size > 0 and (io.quantized or np.asarray(first).dtype.kind == "f")


def probe_notes(graph: Graph) -> list[str]:
    """The summary's note (module doc): the outputs that cannot vary, or that the probe was skipped."""
    same, skipped = constant_outputs(graph)
    if skipped:
        return [f"output probe skipped ({skipped}); compare --random N shows whether the outputs vary"]
    if not same:
        return []
    names = ", ".join(f"'{n}'" for n in same)
    which = f"output {names} is" if len(same) == 1 else f"outputs {names} are"
    return [f"{which} the same on every probe input ({PROBES} inputs: the lowest and the highest input value, "
            f"noise, smooth random fields): the weights are so small or so uniform that a quantized output "
            f"cannot vary, so compare's agreement and accuracy on {'it' if len(same) == 1 else 'them'} will "
            f"tell nothing"]


def add_probe_notes(graph: Graph) -> None:
    """Append :func:`probe_notes` to ``graph.meta["notes"]`` (what the convert summary prints; a graph file
    converted again keeps one copy)."""
    notes = probe_notes(graph)
    if notes:
        old = [n for n in graph.meta.get("notes", []) if n not in notes]  # type: ignore[attr-defined]
        graph.meta["notes"] = [*old, *notes]
