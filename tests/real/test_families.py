"""Acceptance: the model families of ``models/real/families/`` (issue [Model families]) convert with no flags,
run, and classify their own held-out digits as their own runtime does.

Each file was made by a real converter (keras -> TFLiteConverter, torch.onnx.export -> onnxruntime's
quantize_static) from a network trained on scikit-learn's digits; its manifest holds the runtime's accuracy on
the 450 held-out samples. Here the first ``N`` (48; float files ``N_FLOAT``, 24) of them, both runs informative
(more than five distinct predicted classes): a quantized file's engine accuracy within one sample (or 0.5 points,
whichever is larger) of LiteRT's / onnxruntime's on the same file and samples, top-1 agreement >= 95%; a float
file, which the engine runs in 8 bits with run-time ranges (no flags), within 5 points, top-1 agreement >= 90%
(the cost of quantization). Every file converts with no flags; a refusal fails the test.
``python bench/families.py`` prints every figure on all 450 (docs/real_models.md, "Model families").
"""
from __future__ import annotations

import json

import pytest

from hexnn_import.testing.families import FAMILIES, evaluate_family, load_families

#: classifiers; other tasks have their own tests (the streaming VAD: test_vad_stream.py)
ENTRIES = [e for e in load_families() if e.get("task", "classifier") == "classifier"]
N = 48
#: float files run one sample a run (run-time ranges depend on the batch): fewer samples keep the suite fast
N_FLOAT = 24


def test_every_family_file_is_in_a_manifest() -> None:
    # no model in the folder escapes the acceptance tests, and none the manifests name is missing
    files = {p.name for p in FAMILIES.iterdir() if p.suffix in (".tflite", ".onnx")}
    listed = [json.loads(m.read_text()) for m in FAMILIES.glob("manifest_*.json")]
    assert files == {e["file"] for entries in listed for e in entries}
    assert len(ENTRIES) == 36  # the classifiers: 20 keras -> TFLite, 16 torch -> ONNX


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_family_model_runs_and_classifies_as_its_runtime(entry) -> None:
    fig = evaluate_family(entry, n=N_FLOAT if entry["quant"] == "float" else N)
    assert fig.runtime_distinct_top1 > 5, f"{entry['file']}: the runtime's answers tell nothing ({fig})"
    assert fig.engine_distinct_top1 > 5, f"{entry['file']}: the engine's answers tell nothing ({fig})"
    if entry["quant"] == "float":
        # a float file runs in 8 bits with run-time ranges (no flags): what that costs, not bit-faithfulness
        assert fig.top1_agreement >= 0.9, fig
        assert abs(fig.engine_accuracy - fig.runtime_accuracy) <= 0.05 + 1e-9, fig
    else:
        assert fig.top1_agreement >= 0.95, fig
        assert abs(fig.engine_accuracy - fig.runtime_accuracy) <= max(0.005, 1.0 / fig.n) + 1e-9, fig
