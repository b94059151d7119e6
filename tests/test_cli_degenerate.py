"""``hexnn-import MODEL`` says when an output cannot vary, and ``run`` lists top classes only for class scores
(issue 34, finding 4); the probe's inputs checked in LiteRT, its cost estimate against hand-worked MACs."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hexnn_import import probe_outputs
from hexnn_import.api import import_model
from hexnn_import.cli import cli
from hexnn_import.testing.degenerate_models import landmark_model, tiny_weight_classifier
from hexnn_import.testing.litert import run_litert
from hexnn_import.testing.xs3_models import conv_model

MODELS = Path(__file__).resolve().parent.parent / "models"
NOTE = ("output 'probabilities' is the same on every probe input (6 inputs: the lowest and the highest input value, "
        "noise, smooth random fields): the weights are so small or so uniform that a quantized output cannot vary, "
        "so compare's agreement and accuracy on it will tell nothing")


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


def test_convert_notes_an_output_that_cannot_vary(tmp_path: Path) -> None:
    model = tmp_path / "random_init.tflite"
    model.write_bytes(tiny_weight_classifier())
    feeds = probe_outputs.probe_feeds(import_model(model))
    assert feeds is not None and len(feeds) == probe_outputs.PROBES
    assert len({f["input"].tobytes() for f in feeds}) == probe_outputs.PROBES  # six different inputs
    outs = [run_litert(model.read_bytes(), f)[0] for f in feeds]  # independent: LiteRT agrees it never varies
    assert all(np.array_equal(outs[0], o) for o in outs[1:])
    code, out, _ = invoke(str(model), "-o", str(tmp_path / "g.hexnn.json"))
    assert code == 0 and f"note: {NOTE}" in out.splitlines(), out
    code, out, _ = invoke(str(model), "-o", str(tmp_path / "g.hexnn.json"), "--json")
    assert code == 0 and NOTE in json.loads(out)["notes"]


@pytest.mark.parametrize("name", ["digits_int8.tflite", "digits_float.tflite", "small_uint8.tflite"])
def test_the_bundled_models_get_no_probe_note(tmp_path: Path, name: str) -> None:
    code, out, _ = invoke(str(MODELS / name), "-o", str(tmp_path / "g.hexnn.json"), "--json")
    assert code == 0 and not [n for n in json.loads(out)["notes"] if "probe" in n], out


def test_the_probe_is_skipped_with_a_note_above_its_cost_bound(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "conv.tflite"
    model.write_bytes(conv_model((1, 8, 8, 4), 8, (3, 3)))
    graph = import_model(model)
    assert probe_outputs.estimated_macs(graph) == 8 * 8 * 8 * (3 * 3 * 4)  # outputs x taps, worked by hand
    monkeypatch.setattr(probe_outputs, "MAX_PROBE_MACS", 10_000)
    code, out, _ = invoke(str(model), "-o", str(tmp_path / "g.hexnn.json"))
    assert code == 0
    assert ("note: output probe skipped (about 0.018 M multiply-accumulates per run, above 0.01 M); compare --random N "
            "shows whether the outputs vary") in out.splitlines(), out


def test_run_prints_values_of_a_landmark_output_and_top_classes_of_logits(tmp_path: Path) -> None:
    model = tmp_path / "hand.tflite"
    model.write_bytes(landmark_model())
    x = np.arange(16, dtype=np.int8).reshape(1, 16)
    np.save(tmp_path / "x.npy", x)
    code, out, _ = invoke("run", str(model), "--input", str(tmp_path / "x.npy"))
    want = run_litert(model.read_bytes(), {"input": x})[0].reshape(-1)
    assert code == 0 and "top-" not in out, out
    assert f"; values {' '.join(str(v) for v in want[:8])} ..." in out  # the first values, as LiteRT gives them
    np.save(tmp_path / "d.npy", np.zeros((1, 8, 8, 1), np.int8))
    code, out, _ = invoke("run", str(MODELS / "digits_int8.tflite"), "--input", str(tmp_path / "d.npy"))
    assert code == 0 and "logits: shape [1, 10] int8" in out and "top-5: " in out, out


def test_an_empty_output_gets_no_probe_note(tmp_path: Path) -> None:
    """A batch-0 model's output is empty on every input: the same, but nothing a weight could move."""
    from hexnn_import.testing import TFLiteBuilder

    b = TFLiteBuilder()
    x = b.add_tensor("x", (0, 8), np.int8, scale=0.1, zero_point=0)
    y = b.add_tensor("y", (0, 8), np.int8, scale=0.1, zero_point=0)
    b.add_operator("RELU", [x], [y], {})
    b.set_io([x], [y])
    (tmp_path / "b0.tflite").write_bytes(b.build())
    graph = import_model(tmp_path / "b0.tflite")
    assert probe_outputs.constant_outputs(graph) == ([], None)
    code, out, _ = invoke(str(tmp_path / "b0.tflite"), "-o", str(tmp_path / "g.hexnn.json"), "--json")
    assert code == 0 and not [n for n in json.loads(out)["notes"] if "probe" in n]
