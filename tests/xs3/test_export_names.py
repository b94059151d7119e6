"""Layer file names stay under the file-system limit and unique (keras names reach 300 characters)."""
from __future__ import annotations

from pathlib import Path

from hexnn_import.xs3.export import MAX_STEM, file_stem


def test_long_names_are_shortened_uniquely(tmp_path: Path) -> None:
    a = "mobilenetv2/expanded_conv_depthwise/BN/batchnorm/" * 6 + "a"
    b = "mobilenetv2/expanded_conv_depthwise/BN/batchnorm/" * 6 + "b"
    c = "mobilenetv2/expanded_conv_depthwise/BN/batchnorm/" * 3 + "x" + "/BN/batchnorm/" * 6
    taken: set[str] = set()
    stems = [file_stem(n, taken) for n in (a, b, c)]
    assert len(set(stems)) == 3
    assert all(len(s) <= MAX_STEM + 4 for s in stems)
    for s in stems:  # each is a usable file name here
        (tmp_path / f"{s}.npz").write_bytes(b"")


def test_short_names_are_kept() -> None:
    taken: set[str] = set()
    assert file_stem("block1_0/expand", taken) == "block1_0_expand"
    assert file_stem("block1_0/expand", taken) == "block1_0_expand_2"
