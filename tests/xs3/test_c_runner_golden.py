"""xs3-export's C runner, built against lib_nn's C, against ``run --xs3``: golden files replayed (issue 39).

``tests/data/golden/xs3_runner/<model>.json`` (``tools/xs3_runner_golden.py --libnn DIR``) holds, for every
model of ``models/`` and ``models/real/`` that lowers a layer, the digests of the files the runner was built
from and, per seeded input, of every tensor the C runner wrote (``--dump``) and of its outputs. Here the XS3
path (:class:`~hexnn_import.xs3.run.XS3Runner`, what ``run --xs3`` runs) recomputes every one of those tensors
bit for bit, and xs3-export's runner files must still be the bytes the C was built from. No lib_nn, no
compiler: CI replays. The costly models are ``slow`` (``python bench/slow_tests.py`` runs them).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hexnn_import.api import import_model
from hexnn_import.xs3.c_runner_replay import digest, network_values, runner_export, seeded_inputs
from hexnn_import.xs3.run import XS3Runner

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/data/golden/xs3_runner"
REGEN = "python tools/xs3_runner_golden.py --libnn <lib_nn checkout>"
#: replays of 1.5-4 s each (import, lowering and two runs of the XS3 path): the suite keeps the other 23 models,
#: which use every kernel these do (the small CNNs, MobileNet v1 / v2 / v3, ResNet-18, the MediaPipe models)
SLOW = {"keras_mobilenet_v2_1.0_224_int8", "keras_efficientnet_b0_int8", "keras_mobilenet_v3_small_int8_floatio",
        "mediapipe_selfie_segmentation_aeq_int8", "rapidocr_ppocr_mobile_v2_cls_qdq", "rapidocr_ppocrv3_det_qdq",
        "torch_efficientnet_b0_qdq", "torch_efficientnet_b0_qop", "torch_mobilenet_v3_small_qdq",
        "torch_mobilenet_v3_small_qop", "torch_shufflenet_v2_qdq", "torch_shufflenet_v2_qop", "torch_squeezenet_qdq",
        "torch_squeezenet_qop", "torch_yolo_tiny_qdq"}


def _cases() -> list[Any]:
    files = sorted(p for p in GOLDEN.glob("*.json") if p.name != "summary.json")
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else []) for p in files]


def test_the_golden_files_cover_every_model_that_lowers() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    models = summary["models"]
    recorded = {name for name, rec in models.items() if isinstance(rec, dict)}
    assert {p.stem for p in GOLDEN.glob("*.json") if p.name != "summary.json"} == {Path(n).stem for n in recorded}
    assert len(recorded) >= 30, f"fewer golden models than when written: regenerate with {REGEN}"
    assert all(rec["exact"] == rec["compared"] for name, rec in models.items() if isinstance(rec, dict))
    prov = summary["provenance"]
    assert prov["lib_nn_commit"] == "96bd67c" and "-DNN_USE_REF" in prov["lib_nn_flags"]
    assert "-Werror" in prov["runner_flags"] and prov["compiler"].startswith("gcc")


@pytest.mark.parametrize("path", _cases())
def test_run_xs3_reproduces_the_c_runner(path: Path) -> None:
    rec = json.loads(path.read_text())
    model = ROOT / rec["model"]
    assert digest(model.read_bytes()) == rec["model_sha256"], f"the model file changed: regenerate with {REGEN}"
    shapes = {k: tuple(v) for k, v in rec["input_shapes"].items()} or None
    runner = XS3Runner(import_model(model, input_shapes=shapes))
    net, refs, files = runner_export(runner.graph, model)
    assert {name: digest(data) for name, data in files.items()} == rec["files"], \
        f"xs3-export's runner files changed since the C ran them: regenerate with {REGEN}"
    assert [layer.outputs[0] for layer in net.layers] == rec["written"]
    assert (net.inputs, net.outputs) == (rec["network_inputs"], rec["network_outputs"])
    for run in rec["runs"]:
        feeds = seeded_inputs(runner.graph, run["seed"])
        assert {n: digest(v) for n, v in feeds.items()} == run["feeds"]
        ours = network_values(runner, refs, feeds)
        given = {t: digest(ours[t]) for t in net.inputs}
        assert given == run["given"], "the XS3 layers' inputs from outside them changed (upstream of the network)"
        differ = [t for t in rec["written"] if digest(ours[t]) != run["tensors"][t]]
        assert not differ, f"seed {run['seed']}: {len(differ)} of {len(rec['written'])} tensors differ from lib_nn's " \
                           f"C, first {differ[0]}"
        assert {t: digest(ours[t]) for t in net.outputs} == run["outputs"]
        for t, values in run["small_outputs"].items():
            assert ours[t].tolist() == values
        assert run.get("poison_independent", True)
