"""A mean over the whole image (MEAN over H, W) on XS3: correctly rounded, and within 1 of LiteRT.

The lowering computes ``z_out + round((mean(x) - z_in) * s_in / s_out)`` (a depthwise conv of equal
weights whose BSO stage has a 15-bit scale), correctly rounded but within 0.002 of a tie. LiteRT's int8
MEAN does not round at .5: on these keras
models it rounds up from about .42, so up to ~10% of the outputs differ from it by 1 while the XS3
output is the exact value correctly rounded. Both claims are checked here on LiteRT's own input codes,
against a mean worked in float64 from those codes (independent of the kernels).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexnn_import.xs3.layer_agreement import litert_codes, random_inputs
from hexnn_import.xs3.lower import LoweringPlan, lower_model
from hexnn_import.api import import_model

REAL = Path(__file__).resolve().parents[2] / "models" / "real"
MODELS = ["keras_mobilenet_int8.tflite", "keras_mobilenet_v2_int8.tflite", "keras_mobilenet_v3_small_int8.tflite"]


def mean_layers(plan: LoweringPlan) -> list:
    return [r for r in plan.lowered if r.layer.opname == "MEAN"]


@pytest.mark.parametrize("name", MODELS)
def test_mean_is_the_exact_mean_correctly_rounded_and_within_1_of_litert(name: str) -> None:
    path = REAL / name
    plan = lower_model(import_model(path))
    layers = mean_layers(plan)
    assert layers, [(r.layer.opname, r.reason) for r in plan.results]
    worked = litert_equal = total = 0
    for codes in litert_codes(plan, path.read_bytes(), random_inputs(plan, 2, seed=5), "builtin"):
        for r in layers:
            lay = r.layer
            assert r.lowered is not None and r.lowered.op.rule == "global-mean-as-depthwise"
            x = codes(lay.x, r.name, "")
            lite = codes(lay.y, r.name, "").astype(np.int64).reshape(-1)
            got = r.lowered.run([x]).astype(np.int64).reshape(-1)
            n = lay.x.shape[1] * lay.x.shape[2]
            exact = ((x.astype(np.float64).sum(axis=(0, 1, 2)) / n - lay.x.int8_zero_point)
                     * float(lay.x.scale) / float(lay.y.scale) + lay.y.int8_zero_point)
            frac = exact - np.floor(exact)
            # away from ties: the BSO's 15-bit multiplier moves a value by up to ~2**-15 of its size (< 0.002 code)
            clear = np.abs(frac - 0.5) > 2e-3
            want = np.clip(np.floor(exact + 0.5), -128, 127)
            assert np.array_equal(got[clear], want[clear]), name
            assert np.abs(got - lite).max() <= 1
            worked += int(clear.sum())
            litert_equal += int(np.sum(got == lite))
            total += got.size
    assert worked > 0.9 * total
    print(f"{name}: {litert_equal}/{total} outputs equal to LiteRT's")


def test_agreement_compares_mean_with_the_kernel_litert_runs_by_default() -> None:
    """xs3-export's agreement takes a MEAN layer against LiteRT's default kernel (XNNPACK): there every one is
    >= 99% exact and within 1; every other layer stays against the builtin kernels, and a layer below the bar
    carries its reason."""
    from hexnn_import.model_source import ModelSource
    from hexnn_import.xs3.layer_agreement import layer_agreement

    path = REAL / "keras_mobilenet_v3_small_int8.tflite"
    plan = lower_model(import_model(path))
    res = layer_agreement(plan, ModelSource.open(path), random_inputs(plan, 2, seed=5))
    ops = {r.name: r.layer.opname for r in plan.lowered}
    means = [a for n, a in res.items() if ops[n] == "MEAN"]
    assert len(means) == 10 and all(a.reference == "auto" and a.meets_bar for a in means), [
        a.as_dict() for a in means]
    assert {a.reference for n, a in res.items() if ops[n] != "MEAN"} == {"builtin"}
    assert all(a.meets_bar or a.as_dict()["agreement_note"] for a in res.values())
    builtin = layer_agreement(plan, ModelSource.open(path), random_inputs(plan, 2, seed=5), by_layer=False)
    assert min(builtin[a.name].exact_fraction for a in means) < 0.99  # what the builtin MEAN gave (43-91%)
