"""TFLite constant folding (``tflite.fold``): numpy's own slicing is the reference, and converter-made
shape subgraphs (keras Flatten: SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE) never reach the op mapper."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hexnn_import.importers.tflite.fold import _strided_slice, dequantize_const
from hexnn_import.importers.tflite.importer import load_tflite
from hexnn_import.importers.tflite.reader import TFOperator, TFQuant, TFTensor
from hexnn_import.testing.real_models import REAL


class _Options:
    def __init__(self, **values: int):
        self.values = values

    def __getattr__(self, name: str) -> Any:
        return lambda: self.values.get(name, 0)


def _t(a: np.ndarray, dtype: str = "int32") -> TFTensor:
    return TFTensor(0, "t", a.shape, dtype, None, a)


DATA = np.arange(24).reshape(2, 3, 4)


@pytest.mark.parametrize("begin,end,strides,masks,want", [
    ([0, 0, 0], [2, 3, 4], [1, 1, 1], {}, DATA),
    ([0, -1, 3], [1, -4, 0], [1, -1, -1], {"ShrinkAxisMask": 1}, DATA[0, -1:-4:-1, 3:0:-1]),
    ([1, 0, 0], [2, 0, 0], [1, 1, 1], {"BeginMask": 6, "EndMask": 6, "ShrinkAxisMask": 1}, DATA[1]),
    ([0], [1], [1], {"ShrinkAxisMask": 1}, DATA[0]),
    ([0, 1], [2, 3], [2, 1], {}, DATA[0:2:2, 1:3]),
])
def test_strided_slice_folds_as_numpy_slices(begin: list[int], end: list[int], strides: list[int],
                                             masks: dict[str, int], want: np.ndarray) -> None:
    op = TFOperator(0, "STRIDED_SLICE", [], [], _Options(**masks))
    got = _strided_slice(op, [_t(DATA), _t(np.array(begin)), _t(np.array(end)), _t(np.array(strides))], None)
    np.testing.assert_array_equal(got, want)


def test_dequantize_of_constants() -> None:
    f16 = np.array([0.5, -1.25, 3.0], np.float16)
    assert dequantize_const(_t(f16, "float16")).dtype == np.float32
    q = TFTensor(0, "w", (2, 2), "int8", TFQuant(np.array([0.5, 0.25]), np.array([0, 0]), axis=0),
                 np.array([[2, -4], [8, 1]], np.int8))
    np.testing.assert_array_equal(dequantize_const(q), [[1.0, -2.0], [2.0, 0.25]])  # per row: 0.5, 0.25


@pytest.mark.parametrize("name", ["keras_cnn_int8.tflite", "keras_mobilenet_v3_small_int8.tflite",
                                  "keras_sparse_float.tflite", "mediapipe_face_landmark.tflite"])
def test_converter_shape_subgraphs_and_weight_dequantize_are_folded(name: str) -> None:
    model, _ = load_tflite(REAL / name)
    left = {op.opname for op in model.operators}
    assert not left & {"SHAPE", "STRIDED_SLICE", "PACK", "DENSIFY", "DEQUANTIZE"}, left
    for op in model.operators:  # every operator reads only int8/uint8/float32/int32 data
        for i in op.inputs:
            if i >= 0:
                assert model.tensors[i].dtype in ("int8", "uint8", "float32", "int32"), (op.opname, i)
