"""Small helpers for kernel tests: typed 4-D tensors and the OpError check.

Every ``tests/ops`` file builds inputs the same way; these keep that in one
place.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op


def f4(values: Any, shape: Sequence[int] | None = None) -> np.ndarray:
    """float32 tensor, ``[1,1,1,n]`` unless a shape is given."""
    a = np.asarray(values, dtype=np.float32)
    return a.reshape(tuple(shape) if shape else (1, 1, 1, a.size))


def u4(values: Any, shape: Sequence[int] | None = None) -> np.ndarray:
    """uint8 (quint8 codes) tensor, ``[1,1,1,n]`` unless a shape is given."""
    a = np.asarray(values, dtype=np.uint8)
    return a.reshape(tuple(shape) if shape else (1, 1, 1, a.size))


def i4(values: Any, shape: Sequence[int] | None = None) -> np.ndarray:
    """int32 tensor, ``[1,1,1,n]`` unless a shape is given."""
    a = np.asarray(values, dtype=np.int32)
    return a.reshape(tuple(shape) if shape else (1, 1, 1, a.size))


def assert_op_error(op: str, inputs: list, *fragments: str, **kwargs: Any) -> str:
    """The op raises OpError naming node and op, with each fragment in the message; returns it."""
    with pytest.raises(OpError) as info:
        run_op(op, inputs, node="n7", **kwargs)
    msg = str(info.value)
    assert f"node n7 ({op})" in msg
    for frag in fragments:
        assert frag in msg, msg
    return msg
