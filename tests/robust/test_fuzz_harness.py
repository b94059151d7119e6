"""The fuzz harness itself: it sorts every kind of outcome, kills hangs (in CPU or in waiting), bounds memory,
reproduces cases."""
from __future__ import annotations

import os
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from hexnn_import.errors import ModelFormatError
from hexnn_import.testing import fuzz
from hexnn_import.testing.fuzz_seeds import onnx_seeds, tflite_seeds
from hexnn_import.testing.fuzz_structure import flatbuffer_structure, json_structure, protobuf_structure


def _misbehave(path: str) -> None:
    """A loader that, by the file's checksum, hangs, allocates, escapes, crashes or fails properly."""
    crc = zlib.crc32(Path(path).read_bytes())
    key = crc % 10
    if key == 0 and crc // 10 % 5 in (1, 2):
        while True:  # a hang that computes: past the CPU limit
            pass
    elif key == 0 and crc // 10 % 5 == 0:
        time.sleep(60)  # a hang that waits: past the wall-clock limit
    elif key == 1 and os.path.exists("/proc/self/statm"):  # only where the workers' memory is limited
        np.ones(1 << 34, dtype=np.uint8)
    elif key == 2:
        raise ValueError("escaped")
    elif key == 3:
        raise ModelFormatError("two\nlines")
    elif key == 4:
        os._exit(7)
    elif key < 8:
        raise ModelFormatError("bad file")


def test_every_outcome_is_sorted_and_a_hang_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = fuzz.FuzzFormat("selftest", ".bin", json_structure, load=_misbehave)
    monkeypatch.setitem(fuzz.FORMATS, "selftest", fmt)
    seeds = [("seed", b'{"a": [1, 2, {"b": "c"}], "d": 3.5}')]
    report = fuzz.run_fuzz("selftest", seeds, count=60, seed=1, case_limit_s=0.05, wall_limit_s=1.5)
    assert report.ran == 60
    hangs = [f.detail for f in report.failures if f.outcome == "hang"]
    assert any(d == "no result after 0.05 s of CPU" for d in hangs), hangs
    if os.path.exists("/proc/self/stat"):  # where CPU time is read; elsewhere every hang is a wall-clock one
        assert any(d.startswith("no result after 1.5 s (") for d in hangs), hangs
    assert report.timing.cpu_s < 0.05 and report.timing.cpu_case is not None  # hangs are not timed cases
    got = set(report.outcomes)
    expected = {"hang", "escape", "bad-message", "crash", "error", "ok"}
    if os.path.exists("/proc/self/statm"):
        expected.add("memory")
    assert expected <= got, report.summary()
    assert {f.outcome for f in report.failures} == expected - {"error", "ok"}
    assert not report.clean and "ValueError: escaped" in report.describe_failures()


def test_cases_are_reproducible_from_their_index() -> None:
    seeds = tflite_seeds()[:2]
    first = [c.data for c in fuzz.plan_cases(fuzz.FORMATS["tflite"], seeds, 1200, 5)]
    again = [c.data for c in fuzz.plan_cases(fuzz.FORMATS["tflite"], seeds, 1200, 5)]
    assert first == again and len(set(first)) > 1000
    assert fuzz.case_bytes("tflite", seeds, 1200, 5, 1100) == first[1100]


def test_walkers_find_the_structure_of_valid_files() -> None:
    _, data = tflite_seeds()[0]
    st = flatbuffer_structure(data)
    assert {0, 4, 8} <= st.boundaries and len(st.boundaries) > 100
    assert any(k == "tensor" for _, _, k in st.indices) and any(k == "scale" for _, _, k in st.values)
    _, data = onnx_seeds()[0]
    st = protobuf_structure(data)
    assert len(st.boundaries) > 50 and any(k == "varint:dim" for _, _, k in st.lengths)
    assert json_structure(b'{"a": [1, 22]}').boundaries >= {0, 1, 4, 5, 6, 8, 9, 10, 13, 14}
