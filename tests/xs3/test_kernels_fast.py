"""The fast form of a lowered layer (xs3/kernels_fast.py) gives exactly the literal kernel's integers.

Every kernel kind, padding and stride, channel counts the kernels pad, inputs
over the whole int8 range (the extremes included); the cases where only the
literal, step-by-step kernel is exact get no fast form; and a whole model on
the XS3 path gives the same values at every node either way.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexnn_import.testing import xs3_models as tm
from hexnn_import.xs3.layer_agreement import smooth_inputs
from hexnn_import.xs3.kernels_fast import fast_layer
from hexnn_import.xs3.legalize import LoweredLayer
from hexnn_import.xs3.kernel_table import kernel_desc
from hexnn_import.xs3.run import XS3Runner
from hexnn_import.api import import_model
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions

MODELS = Path(__file__).resolve().parents[2] / "models"

CASES = [
    ("deep 3x3 SAME, 40 channels", tm.conv_model((1, 9, 9, 40), 8, (3, 3)), "conv2d_deep"),
    ("deep 3x3 stride 2 VALID, RELU", tm.conv_model((1, 10, 10, 12), 12, (3, 3), 2, "VALID", act="RELU"),
     "conv2d_deep"),
    ("deep 2x3 stride 2, 2 images", tm.conv_model((2, 7, 9, 12), 8, (2, 3), 2), "conv2d_deep"),
    ("shallowin 3x3, 3 channels padded to 4", tm.conv_model((1, 12, 12, 3), 8, (3, 3), act="RELU6",
                                                            out_scale=6 / 255), "conv2d_shallowin"),
    ("shallowin 1x7 stride 2", tm.conv_model((1, 6, 10, 4), 8, (1, 7), 2), "conv2d_shallowin"),
    ("1x1, 2 images, 64 -> 20", tm.conv_model((2, 5, 5, 64), 20, (1, 1)), "conv2d_1x1"),
    ("1x1 per-tensor weights", tm.conv_model((1, 6, 6, 16), 16, (1, 1), per_channel=False), "conv2d_1x1"),
    ("depthwise 3x3, 6 channels padded to 8", tm.depthwise_model((1, 10, 10, 6), (3, 3)), "conv2d_depthwise"),
    ("depthwise 3x3 stride 2 SAME", tm.depthwise_model((1, 11, 11, 16), (3, 3), 2), "conv2d_depthwise"),
    ("depthwise 5x5 VALID", tm.depthwise_model((1, 9, 9, 8), (5, 5), 1, "VALID"), "conv2d_depthwise"),
    ("fully_connected_8, 70 inputs, 3 rows", tm.fc_model(70, 10, rows=3), "fully_connected_8"),
    ("conv covering its input", tm.conv_model((1, 5, 5, 3), 10, (5, 5), 1, "VALID"), "fully_connected_8"),
    ("many outputs saturate low", tm.conv_model((1, 6, 6, 16), 16, (1, 1), zp_out=-100), "conv2d_1x1"),
]


def inputs(shape: tuple[int, ...], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, shape).astype(np.int8), np.full(shape, -128, np.int8),
            np.full(shape, 127, np.int8), rng.choice(np.array([-128, 127], np.int8), shape)]


def lowered_of(lower_bytes, model: bytes) -> LoweredLayer:
    plan = lower_bytes(model)
    lowered = plan.lowered[0].lowered
    assert lowered is not None
    return lowered


@pytest.mark.parametrize("options", [DEFAULT_OPTIONS, VPUOptions(symmetric_output=True)],
                         ids=["default", "symmetric"])
@pytest.mark.parametrize("name,model,kernel", CASES, ids=[c[0] for c in CASES])
def test_fast_layer_equals_the_literal_kernel(lower_bytes, name: str, model: bytes, kernel: str,
                                              options: VPUOptions) -> None:
    lowered = lowered_of(lower_bytes, model)
    assert lowered.kernel == kernel
    fast = fast_layer(lowered, options)
    assert fast is not None
    for x in inputs(lowered.op.layer.x.shape, 5):
        want = lowered.run(x, options)
        got = fast.run(x)
        assert got.dtype == np.int8 and got.shape == want.shape
        assert np.array_equal(got, want)


def test_no_fast_form_where_only_the_literal_steps_are_exact(lower_bytes) -> None:
    lowered = lowered_of(lower_bytes, tm.conv_model((1, 6, 6, 16), 16, (1, 1)))
    assert fast_layer(lowered, DEFAULT_OPTIONS) is not None
    # a bias near the 32-bit limit: a VLMACCR step may saturate, so the order of the sum matters
    lowered.bso[0, 0, 0] = 2 ** 15 - 1  # bias high half-word of channel 0
    assert fast_layer(lowered, DEFAULT_OPTIONS) is None
    # fully_connected_16 keeps its own (16-bit) stage
    fc16 = lowered_of(lower_bytes, tm.fc_model(64, 20, rows=8, argmax=True))
    assert fc16.kernel == "fully_connected_16" and fast_layer(fc16, DEFAULT_OPTIONS) is None


def test_a_nonzero_weight_on_a_padded_input_channel_keeps_the_literal_kernel(lower_bytes) -> None:
    lowered = lowered_of(lower_bytes, tm.depthwise_model((1, 10, 10, 6), (3, 3)))
    assert fast_layer(lowered, DEFAULT_OPTIONS) is not None
    lowered.weights[0, 0, 7] = 1  # channel 7 only exists as padding
    assert fast_layer(lowered, DEFAULT_OPTIONS) is None


def test_mobilenet_same_values_at_every_node_fast_or_literal() -> None:
    path = MODELS / "mobilenet_v2_int8.tflite"
    literal = XS3Runner(import_model(path), literal=True)
    fast = XS3Runner(import_model(path))
    feeds = smooth_inputs(literal.plan, 2, seed=11)
    literal.run(feeds[0])
    fast.run(feeds[0])

    def forms(runner: XS3Runner) -> list[object]:  # the conv-like nodes (kernels with an exact fast form)
        return [runner.engine.state[n.node_id]["fast"] for n in runner.graph.nodes
                if n.op.startswith("XS3_") and kernel_desc(n.op[4:]).hwio is not None]

    assert len(forms(literal)) >= 10 and all(f is None for f in forms(literal))
    assert all(f is not None for f in forms(fast))  # every conv-like layer of the model
    for feed in feeds:
        out_l, every_l = literal.run_all(feed)
        out_f, every_f = fast.run_all(feed)
        assert every_l.keys() == every_f.keys()
        for ref, value in every_l.items():
            assert np.array_equal(value, every_f[ref]), ref
        assert np.array_equal(out_l["logits"], out_f["logits"])
