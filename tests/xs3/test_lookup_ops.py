"""Activations that are one per-tensor function of int8 lower to lib_nn's lookup8 with a 256-entry table
computed as LiteRT computes the int8 op (issue 39; :mod:`hexnn_import.xs3.litert_int8`): each layer's output
against LiteRT's on the same input codes (``xs3-export``'s per-layer agreement), every code exact. A PRELU with
one alpha per channel is refused with its reason.

``data/activations_int8.tflite`` (``data/make_activations_model.py``: keras -> TFLiteConverter int8) holds the
ops that converter writes in int8; the others (ELU, GELU's erf form, RELU_0_TO_1, PRELU) are built here with
the flatbuffer builder, as LiteRT's own kernel tests build them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hexnn_import.xs3.layer_agreement import layer_agreement, random_inputs
from hexnn_import.xs3.lower import lower_model

from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource
from hexnn_import.testing import TFLiteBuilder

pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert, a test dependency) is needed as the reference")

KERAS = Path(__file__).resolve().parent / "data" / "activations_int8.tflite"
SHAPE = (1, 8, 8, 16)  # 1,024 codes a sample: every one of the 256 codes is met


def test_keras_activations_are_exact_lookup8_tables() -> None:
    plan = lower_model(import_model(KERAS))
    lowered = {r.layer.opname: r for r in plan.lowered}
    assert set(lowered) == {"LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "GELU", "RELU6", "RELU_N1_TO_1", "RELU"}
    assert all(r.lowered.kernel == "lookup8" for r in lowered.values())
    res = layer_agreement(plan, ModelSource.open(KERAS), random_inputs(plan, 2, seed=4))
    for r in plan.lowered:
        a = res[r.name]
        assert a.exact_fraction == 1.0 and a.max_abs_diff == 0, (r.layer.opname, a.as_dict())


def _one_op(op: str, out_q: tuple[float, int], options: dict | None = None, alpha: np.ndarray | None = None,
            x_q: tuple[float, int] = (0.04, 3)) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.int8, scale=x_q[0], zero_point=x_q[1])
    y = b.add_tensor("y", SHAPE, np.int8, scale=out_q[0], zero_point=out_q[1])
    ins = [x]
    if alpha is not None:
        ins.append(b.add_const("alpha", alpha.astype(np.int8), scale=0.004, zero_point=-2))
    b.add_operator(op, ins, [y], options)
    b.set_io([x], [y])
    return b.build()


def _with_constant(op: str, c: int, c_q: tuple[float, int], out_q: tuple[float, int], act: str = "NONE",
                   const_shape: tuple[int, ...] = (1,)) -> bytes:
    """``x op c``: an ADD / MUL of the input and a constant of one value (int8 code ``c``)."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.int8, scale=0.04, zero_point=3)
    k = b.add_const("c", np.full(const_shape, c, np.int8), scale=c_q[0], zero_point=c_q[1])
    y = b.add_tensor("y", SHAPE, np.int8, scale=out_q[0], zero_point=out_q[1])
    b.add_operator(op, [x, k], [y], fused_activation=act)
    b.set_io([x], [y])
    return b.build()


BUILT = [
    ("ELU", _one_op("ELU", (6.0 / 255, -85))),
    ("GELU erf", _one_op("GELU", (5.2 / 255, -120), {"approximate": False})),
    ("GELU tanh", _one_op("GELU", (5.2 / 255, -120), {"approximate": True})),
    ("RELU_0_TO_1 rescaled", _one_op("RELU_0_TO_1", (1.0 / 255, -128))),
    ("RELU_0_TO_1 clamp", _one_op("RELU_0_TO_1", (0.04, 3))),
    ("LEAKY_RELU", _one_op("LEAKY_RELU", (0.03, -40), {"alpha": 0.1})),
    ("PRELU one alpha", _one_op("PRELU", (0.03, -40), alpha=np.array([70]))),
    ("ADD constant", _with_constant("ADD", 90, (0.02, -10), (0.05, -20))),
    ("ADD constant RELU6", _with_constant("ADD", -70, (0.03, 5), (0.03, -100), act="RELU6")),
    ("MUL constant", _with_constant("MUL", 127, (1.0 / 762, 0), (0.04 / 6, -3), const_shape=(1, 1, 1, 16))),
    ("MUL negative constant", _with_constant("MUL", -50, (0.01, 0), (0.03, 7))),
]


@pytest.mark.parametrize("name,model", BUILT, ids=[c[0] for c in BUILT])
def test_builder_activations_are_exact_lookup8_tables(agreement, name: str, model: bytes) -> None:
    plan, result = agreement(model, n=2)
    low = plan.results[0].lowered
    assert low is not None and low.kernel == "lookup8" and low.op.table.shape == (256,)
    assert result.exact_fraction == 1.0 and result.max_abs_diff == 0, result.as_dict()


def test_relu_0_to_1_on_its_own_range_is_a_clamp(lower_bytes) -> None:
    low = lower_bytes(_one_op("RELU_0_TO_1", (0.04, 3))).results[0].lowered
    codes = np.arange(256, dtype=np.uint8).view(np.int8)
    # 0 -> code 3, 1.0 -> code 3 + 25: a clamp of the code, worked by hand
    assert np.array_equal(low.op.table, np.clip(codes, 3, 28))


def test_mul_of_two_tensors_is_refused_with_its_reason(lower_bytes) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.int8, scale=0.04, zero_point=3)
    g = b.add_tensor("g", (1, 1, 1, 16), np.int8, scale=1 / 256, zero_point=-128)
    y = b.add_tensor("y", SHAPE, np.int8, scale=0.04, zero_point=3)
    b.add_operator("MUL", [x, g], [y])
    b.set_io([x, g], [y])
    r = lower_bytes(b.build()).results[0]
    assert r.lowered is None and "MUL of two tensors" in r.reason


def test_prelu_with_an_alpha_per_channel_is_refused_with_its_reason(lower_bytes) -> None:
    alphas = np.arange(16).reshape(1, 1, 16) * 5 + 10
    r = lower_bytes(_one_op("PRELU", (0.03, -40), alpha=alphas)).results[0]
    assert r.lowered is None and "16 alphas (one per channel)" in r.reason and "lookup8" in r.reason
