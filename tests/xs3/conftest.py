"""Shared helpers of the XS3 tests: write a model to a file, lower it, measure it against LiteRT."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from hexnn_import.xs3.layer_agreement import LayerAgreement, layer_agreement, random_inputs
from hexnn_import.xs3.lower import LoweringPlan, lower_model
from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions


@pytest.fixture
def lower_bytes(tmp_path: Path) -> Callable[[bytes], LoweringPlan]:
    """Lower TFLite bytes (written to a temporary file)."""
    def run(data: bytes, name: str = "model") -> LoweringPlan:
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(data)
        return lower_model(import_model(path))
    return run


@pytest.fixture
def agreement(lower_bytes: Callable[[bytes], LoweringPlan], tmp_path: Path) -> Callable[..., tuple[LoweringPlan, LayerAgreement]]:
    """Lower a one-layer model and measure its only conv-like layer on ``n`` seeded random inputs."""
    def run(data: bytes, n: int = 4, options: VPUOptions = DEFAULT_OPTIONS) -> tuple[LoweringPlan, LayerAgreement]:
        plan = lower_bytes(data)
        assert plan.lowered, [r.reason for r in plan.results]
        result = layer_agreement(plan, ModelSource.open(tmp_path / "model.tflite"), random_inputs(plan, n, seed=1),
                                 options)
        return plan, result[plan.lowered[0].name]
    return run
