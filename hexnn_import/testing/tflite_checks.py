"""Checks shared by the one-op TFLite importer tests (``tests/importers/test_tflite_*.py``, tests only).

* :func:`check_bar`: a model against LiteRT at the issue's bar for its dtype (exact or within one
  code for int8 / uint8 outputs, SQNR >= 30 dB for float ones);
* :func:`unsupported_listing`: a built model the importer must refuse; the refusal's listing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.testing.tflite_builder import TFLiteBuilder
from hexnn_import.testing.tflite_compare import Agreement, assert_agrees, compare_tflite


def check_bar(model: bytes, dtype: type, exact: bool = True) -> dict[str, Agreement]:
    """The issue's bar (exact when ``exact``) for quantized outputs, SQNR >= 30 dB for float ones."""
    if dtype is np.float32:
        res = compare_tflite(model, n=3)
        for a in res.values():
            assert a.sqnr >= 30, a
        return res
    return assert_agrees(model, n=3, min_within1=1.0 if exact else 0.99, max_worst=0 if exact else 2)


def unsupported_listing(builder: TFLiteBuilder, folder: Path) -> str:
    """Write ``builder``'s model to ``folder / "bad.tflite"``; importing it raises UnsupportedOpsError,
    whose listing is returned."""
    import hexnn_import as hx

    path = folder / "bad.tflite"
    path.write_bytes(builder.build())
    with pytest.raises(UnsupportedOpsError) as err:
        hx.import_model(path)
    return err.value.listing()
