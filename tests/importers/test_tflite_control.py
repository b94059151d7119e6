"""TFLite IF whose condition is constant once the input shapes are fixed: the chosen branch is inlined, and the
graph agrees with LiteRT running the same file at the same batch (issue 33, item 3).

``if_on_batch.tflite`` (tests/data/recurrent/make_keras_rnn.py) branches on the batch size: batch 1 takes the
else branch, batch 3 the then branch; each imported graph holds no IF and matches LiteRT within 30 dB.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.importers.tflite.importer import TFLiteImporter, load_handlers, load_tflite
from hexnn_import.testing.litert import run_litert

MODEL = Path(__file__).resolve().parents[1] / "data" / "recurrent" / "if_on_batch.tflite"


@pytest.mark.parametrize("batch, branch", [(1, "else"), (3, "then")])
def test_constant_if_takes_litert_branch(batch: int, branch: str) -> None:
    g = hx.import_model(MODEL, input_shapes={"x": (batch, 4)})
    assert any(f"the {branch} branch is inlined" in n for n in g.meta["notes"]), g.meta["notes"]
    runner = hx.Runner(hx.prepare(g))
    rng = np.random.default_rng(batch)
    got, want = [], []
    for _ in range(6):
        x = rng.normal(0, 1, (batch, 4)).astype(np.float32)
        got.append(next(iter(runner.run({"x": x}).values())))
        want.append(next(iter(run_litert(MODEL.read_bytes(), {"x": x}, as_dict=True).values())))
    got_a, want_a = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert float(np.std(want_a, axis=0).mean()) > 0.05  # outputs vary with the input
    sqnr = 10 * np.log10(np.sum(want_a ** 2) / np.sum((got_a - want_a) ** 2))
    assert sqnr >= 30.0, sqnr


def test_if_on_a_run_time_condition_is_refused() -> None:
    """Read without folding, the condition is a run-time value (SHAPE of the input): the IF is refused by name,
    and nothing inlined it; folded, it is gone."""
    from hexnn_import.importers.tflite.reader import read_tflite

    load_handlers()
    model, _ = load_tflite(MODEL)
    assert not any(op.opname == "IF" for op in model.operators)
    with pytest.raises(UnsupportedOpsError) as info:
        TFLiteImporter(read_tflite(MODEL), "unfolded").run()
    assert "IF x1 [no mapping for this op]" in str(info.value), str(info.value)
