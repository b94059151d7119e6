"""QuantizedHashtableLookup_8 and LSHProjection (op texts; farmhash Fingerprint64)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.farmhash import fingerprint64_rows
from hexnn_import.testing.opcheck import assert_op_error, f4, i4, u8


def test_hashtable_by_hand():
    # keys [5, 1, 9] own rows [10,11], [20,21], [30,31]; lookups [9, 4, 1]:
    # 9 -> row 2, 4 -> missing, 1 -> row 1.  Range [-2, 3]: step 5/255, zero = round(2 * 255/5) = 102,
    # so a missing key reads code 102 (real 0.0) and hit 0.
    values = u8([10, 11, 20, 21, 30, 31], (3, 1, 1, 2))
    out, mn, mx, hits, hmn, hmx = run_op("QuantizedHashtableLookup_8",
                                         [i4([9, 4, 1]), i4([5, 1, 9]), values, -2.0, 3.0])
    assert out.shape == (3, 1, 1, 2) and out.reshape(3, 2).tolist() == [[30, 31], [102, 102], [20, 21]]
    assert hits.dtype == np.uint8 and hits.shape == (1, 1, 1, 3) and hits.ravel().tolist() == [1, 0, 1]
    assert (mn.item(), mx.item(), hmn.item(), hmx.item()) == (-2.0, 3.0, 0.0, 255.0)


def test_hashtable_against_dict():
    rng = np.random.default_rng(2)
    keys = rng.choice(np.arange(-50, 50), 12, replace=False).astype(np.int32)
    lookups = rng.integers(-60, 60, 20).astype(np.int32)
    values = rng.integers(0, 256, (12, 2, 3, 2), dtype=np.uint8)
    out, _, _, hits, _, _ = run_op("QuantizedHashtableLookup_8", [i4(lookups), i4(keys), values, 0.0, 1.0])
    table = {int(k): values[i] for i, k in enumerate(keys)}
    for j, key in enumerate(lookups):
        row = table.get(int(key))
        assert hits.ravel()[j] == (row is not None)
        assert np.array_equal(out[j], row if row is not None else np.zeros_like(values[0]))


def test_hashtable_errors():
    assert_op_error("QuantizedHashtableLookup_8", [i4([1]), i4([1, 2]), np.zeros((3, 1, 1, 1), np.uint8), 0.0, 1.0],
                    "first dimension")
    assert_op_error("QuantizedHashtableLookup_8", [i4([1]), i4([1]), np.zeros((1, 1, 1, 1), np.uint8), 0.5, 1.0],
                    "does not contain 0")


def test_fingerprint64_vectors():
    # Length 0 returns k2 = 0x9ae16a3b2f90404f straight from HashLen0to16.  The others are
    # Fingerprint64(bytes(range(n))) from the independent pyfarmhash library (one per code path).
    want = {0: 0x9AE16A3B2F90404F, 3: 0x94A13D22E9EBA49A, 7: 0xA2E0BFF20DB0A6A1, 12: 0x9FD5DF33AEFC3D7D,
            20: 0x8DD7E7F1BF16A0E9, 40: 0x08F45B937B49468C, 100: 0x3CFF0F886D8D6195, 130: 0xE9E1885E5FE0570D}
    for n, value in want.items():
        row = np.arange(n, dtype=np.uint8).reshape(1, n)
        assert int(fingerprint64_rows(row)[0]) == value, n


HASH = f4([0.123, 0.456, -0.321, 1.234, 5.678, -4.321], (1, 1, 3, 2))


def test_lsh_tflite_reference_cases():
    # Expected outputs of TFLite's lsh_projection_test.cc (same hash seeds and inputs).
    x = np.array([12345, 54321, 67890, 9876, -12345678], np.int32)
    (y,) = run_op("LSHProjection", [HASH, x, f4([1.0] * 5), 2])
    assert y.dtype == np.int32 and y.shape == (1, 1, 1, 6) and y.ravel().tolist() == [0, 0, 0, 1, 0, 0]
    (y,) = run_op("LSHProjection", [HASH, x, f4([1.0]), 3])
    assert y.ravel().tolist() == [0 + 0, 4 + 1, 8 + 0]
    x3 = np.array([1234, 2345, 3456, 1234, 4567, 5678, 6789, 4567, 7891, 8912, 9123, 7890,
                   -987, -876, -765, -987, -543, -432, -321, -543], np.int32).reshape(5, 2, 2)
    (y,) = run_op("LSHProjection", [HASH, x3, f4([0.12, 0.34, 0.56, 0.67, 0.78]), 3])
    assert y.ravel().tolist() == [0 + 2, 4 + 1, 8 + 1]


def test_lsh_structure_by_hand():
    # Two identical items weighted +1 and -1: every score is exactly 0, not > 0, so every bit is 0.
    x = np.array([[7, 8], [7, 8]], np.int16)
    (y,) = run_op("LSHProjection", [HASH, x, f4([1.0, -1.0]), 2])
    assert y.ravel().tolist() == [0] * 6
    # Sparse type 1 packs bits MSB first without offsets; type 3 adds i * 2**bits: 0, 4, 8.
    x = np.array([3, 1, 4], np.uint8)
    (dense,) = run_op("LSHProjection", [HASH, x, f4([1.0]), 2])
    bits = dense.reshape(3, 2)
    (old,) = run_op("LSHProjection", [HASH, x, f4([1.0]), 1])
    (new,) = run_op("LSHProjection", [HASH, x, f4([1.0]), 3])
    assert old.ravel().tolist() == [2 * int(b[0]) + int(b[1]) for b in bits]
    assert (new.ravel() - old.ravel()).tolist() == [0, 4, 8]


def test_lsh_against_loop_reference():
    # Bit (i, j) = sign of sum_k w_k * int64(Fingerprint64(float32 seed bytes + item k bytes)).
    rng = np.random.default_rng(8)
    hashes = rng.normal(size=(1, 1, 4, 3)).astype(np.float32)
    x = rng.integers(-1000, 1000, (6, 5)).astype(np.int32)     # 6 items of 20 bytes
    w = rng.normal(size=6).astype(np.float32)
    (y,) = run_op("LSHProjection", [hashes, x, f4(w), 2])
    want = []
    for seed in hashes.ravel():
        score = 0.0
        for k in range(6):
            key = np.frombuffer(np.float32(seed).tobytes() + x[k].astype("<i4").tobytes(), np.uint8)
            fp = int(fingerprint64_rows(key.reshape(1, -1))[0])
            signed = fp - 2 ** 64 if fp >= 2 ** 63 else fp
            score += float(w[k]) * float(signed)
        want.append(1 if score > 0 else 0)
    assert y.ravel().tolist() == want


@pytest.mark.parametrize("inputs, fragment", [
    ([HASH, np.int32([1, 2]), f4([1.0]), 4], "type 4"),
    ([f4(np.zeros(33), (1, 1, 1, 33)), np.int32([1, 2]), f4([1.0]), 2], "bits"),
    ([HASH, np.int32([1, 2]), f4([1.0, 2.0, 3.0]), 2], "one per item"),
    ([HASH, np.int32([1, 2]), f4([0.5]), 3], "one per item"),
])
def test_lsh_errors(inputs, fragment):
    assert_op_error("LSHProjection", inputs, fragment)
