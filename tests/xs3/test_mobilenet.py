"""The MobileNetV2-style int8 model: every lowered layer against LiteRT on the layer's LiteRT input.

Done-when of the XS3 issue: >= 99% of each lowered layer's outputs exactly
equal to LiteRT's, none off by more than 1 (SEMANTICS §8). The table is
printed (``pytest -s``; ``bench/xs3_layers.py`` prints it too).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from hexnn_import.xs3.layer_agreement import layer_agreement, random_inputs, smooth_inputs
from hexnn_import.xs3.lower import LoweringPlan, lower_model
from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource

MODEL = Path(__file__).resolve().parents[2] / "models" / "mobilenet_v2_int8.tflite"


@pytest.fixture(scope="module")
def plan() -> LoweringPlan:
    return lower_model(import_model(MODEL))


def test_every_conv_fc_add_and_pool_layer_is_lowered(plan: LoweringPlan) -> None:
    kernels = [r.lowered.kernel for r in plan.lowered if r.lowered is not None]
    assert len(kernels) == 53 + 10 + 1  # conv / depthwise / FC, the residual ADDs, the average pool
    assert set(kernels) == {"conv2d_shallowin", "conv2d_1x1", "conv2d_depthwise", "fully_connected_8",
                            "add_elementwise"}
    # the 3x3 average pool over the 3x3 image: a depthwise conv of unit weights (the BSO's 15-bit scale)
    assert plan.by_name("pool").lowered.op.rule == "global-mean-as-depthwise"
    assert plan.by_name("stem").lowered.op.canonical == ["input channels padded 3 -> 4 (zero weights)"]
    assert [(r.layer.opname, r.reason) for r in plan.not_lowered] == [("RESHAPE", "RESHAPE has no XS3 kernel")]


def test_every_lowered_layer_agrees_with_litert(plan: LoweringPlan) -> None:
    feeds = smooth_inputs(plan, 3, seed=11) + random_inputs(plan, 1, seed=12)
    result = layer_agreement(plan, ModelSource.open(MODEL), feeds)
    print(f"\n{'layer':22s} {'kernel':18s} {'exact':>8s} {'max':>4s} {'outputs':>8s}")
    for name, a in result.items():
        print(f"{name:22s} {a.kernel:18s} {100 * a.exact_fraction:7.2f}% {a.max_abs_diff:4d} {a.total:8d}")
    assert len(result) == 64
    bad = {n: (a.exact_fraction, a.max_abs_diff) for n, a in result.items()
           if a.exact_fraction < 0.99 or a.max_abs_diff > 1}
    assert not bad, bad
