"""xs3-export's C runner, built against lib_nn's C, against ``run --xs3``: golden files replayed (issue 39).

``tests/data/golden/xs3_runner/<model>.json`` (``tools/xs3_runner_golden.py --libnn DIR``) holds, for every
model of ``models/`` and ``models/real/`` that lowers a layer, the digests of the files the runner was built
from and, per seeded input, of every tensor the C runner wrote (``--dump``) and of its outputs. Here the XS3
path (:class:`~hexnn_import.xs3.run.XS3Runner`, what ``run --xs3`` runs) recomputes every one of those tensors
bit for bit, and xs3-export's runner files must still be the bytes the C was built from. No lib_nn, no
compiler: CI replays. The costly models are in tests/conftest.py's ``SLOW`` (``python bench/slow_tests.py`` runs them).
``synthetic_kernels.json`` holds the synthetic network of the kernels no model lowers to yet
(:mod:`hexnn_import.xs3.c_runner_synthetic`), replayed on the kernels' literal references.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hexnn_import.xs3.c_network import network_header
from hexnn_import.xs3.c_runner import runner_files
from hexnn_import.xs3.c_runner_replay import (
    digest,
    network_values,
    runner_export,
    seeded_inputs,
)
from hexnn_import.xs3.c_runner_synthetic import (
    NAME,
    SHAPES,
    simulate,
    synthetic_network,
)
from hexnn_import.xs3.run import XS3Runner

from hexnn_import.api import import_model

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/data/golden/xs3_runner"
REGEN = "python tools/xs3_runner_golden.py --libnn <lib_nn checkout>"
def _cases() -> list[Any]:
    files = sorted(p for p in GOLDEN.glob("*.json") if p.name not in ("summary.json", "synthetic_kernels.json"))
    return [pytest.param(p, id=p.stem) for p in files]  # the costly ones: tests/conftest.py SLOW


def test_the_golden_files_cover_every_model_that_lowers() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    models = summary["models"]
    recorded = {name for name, rec in models.items() if isinstance(rec, dict)}
    assert {p.stem for p in GOLDEN.glob("*.json") if p.name != "summary.json"} == {Path(n).stem for n in recorded}
    assert len(recorded) >= 30 and "synthetic_kernels.json" in recorded, \
        f"fewer golden models than when written: regenerate with {REGEN}"
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

    def ours(k: int) -> tuple[dict[str, str], dict[str, Any]]:
        feeds = seeded_inputs(runner.graph, k)
        return {n: digest(v) for n, v in feeds.items()}, network_values(runner, refs, feeds)

    _check_runs(rec, net.inputs, net.outputs, ours)


def _check_runs(rec: dict, net_inputs: list[str], outputs: list[str], ours_of: Any) -> None:
    """Every recorded run: the same inputs, every tensor the C wrote and its outputs bit for bit."""
    for run in rec["runs"]:
        feeds, ours = ours_of(run["seed"])
        assert feeds == run["feeds"]
        assert {t: digest(ours[t]) for t in net_inputs} == run["given"]
        differ = [t for t in rec["written"] if digest(ours[t]) != run["tensors"][t]]
        assert not differ, f"seed {run['seed']}: {differ} differ from lib_nn's C"
        assert {t: digest(ours[t]) for t in outputs} == run["outputs"]
        assert all(ours[t].tolist() == v for t, v in run["small_outputs"].items())
        assert run.get("poison_independent", True)


def test_the_kernels_no_model_lowers_to_reproduce_the_c_runner() -> None:
    """avgpool2d, lookup8, avgpool2d_global, fully_connected_16; a 1x1 conv with padded output channels, a
    depthwise conv padded in and out, a fully-connected input padded from 5 to 8, a max pool of 6 channels
    (padded to 8 around the kernel): on their literal references."""
    rec = json.loads((GOLDEN / "synthetic_kernels.json").read_text())
    net, calls = synthetic_network(rec["network_seed"])
    header = f"{NAME}_xs3_network.h"
    files = {header: network_header(net).encode("utf-8"), **runner_files(net, header)}
    assert {name: digest(data) for name, data in files.items()} == rec["files"], f"regenerate with {REGEN}"
    assert rec["kernels"] == {"avgpool2d": 1, "avgpool2d_global": 1, "conv2d_1x1": 1, "conv2d_depthwise": 1,
                              "fully_connected_16": 1, "fully_connected_8": 1, "lookup8": 1, "maxpool2d": 1}
    assert [(la.params.get("k_in"), la.params.get("k_out")) for la in net.layers if "k_in" in la.params] == \
        [(12, 8), (8, 8), (12, 5), (8, 3)]  # pw: 6 real outputs; dw: 6 real channels; fc8: 5 real inputs

    def ours(k: int) -> tuple[dict[str, str], dict[str, Any]]:
        x = np.random.default_rng(k).integers(-128, 128, SHAPES["x"]).astype(np.int8)
        return {"x": digest(x)}, simulate(calls, x)

    _check_runs(rec, net.inputs, net.outputs, ours)
