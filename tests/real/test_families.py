"""Acceptance: the model families of ``models/real/families/`` (issue [Model families]) convert with no flags,
run, and classify their own held-out digits as their own runtime does.

Each file was made by a real converter (keras -> TFLiteConverter, torch.onnx.export -> onnxruntime's
quantize_static) from a network trained on scikit-learn's digits; its manifest holds the runtime's accuracy on
the 450 held-out samples. Here the first ``N`` of them: the engine's accuracy within one sample (or 0.5 points,
whichever is larger) of LiteRT's / onnxruntime's on the same file and samples, and both runs informative (more
than five distinct predicted classes). ``python bench/families.py`` prints every figure on all 450.

``REFUSED`` lists the files the importer still refuses at convert time, with the words of the reason; each is a
strict xfail, so it fails the day the file converts and runs (then the entry goes).
"""
from __future__ import annotations

import pytest

from hexnn_import.errors import HexnnError
from hexnn_import.testing.families import evaluate_family, load_families

#: classifiers; other tasks have their own tests (the streaming VAD: test_vad_stream.py)
ENTRIES = [e for e in load_families() if e.get("task", "classifier") == "classifier"]
N = 120
#: file -> words of the convert-time refusal (a strict xfail each)
REFUSED: dict[str, str] = {}


def test_the_families_are_there() -> None:
    # the acceptance set must not silently shrink to nothing
    assert len(ENTRIES) >= 1


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_family_model_runs_and_classifies_as_its_runtime(entry) -> None:
    if entry["file"] in REFUSED:
        with pytest.raises(HexnnError, match=REFUSED[entry["file"]]):
            evaluate_family(entry, n=2)
        pytest.xfail(f"refused at convert: {REFUSED[entry['file']]}")
    fig = evaluate_family(entry, n=N)
    assert fig.runtime_distinct_top1 > 5, f"{entry['file']}: the runtime's answers tell nothing ({fig})"
    assert fig.engine_distinct_top1 > 5, f"{entry['file']}: the engine's answers tell nothing ({fig})"
    assert abs(fig.engine_accuracy - fig.runtime_accuracy) <= max(0.005, 1.0 / fig.n) + 1e-9, fig
