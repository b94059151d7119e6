"""ops/padding.py: nn_outsize_padding against hand-worked nn_pad_compute_outsize_padding values.

include/nn_graph_padding.h: VALID ``out = (in - f) / s + 1`` when ``in >= f``, else 0; SAME / SAME_CAFFE
``n = in + s - 1``, NA ``n = in``; ``out = n / s`` when ``n >= s`` (else 0); ``pad = (out - 1) * s - (in - f)``;
when positive, ``before = pad >> 1`` (SAME, NA) or ``(pad + 1) >> 1`` (SAME_CAFFE); other paddings give 0.
"""
from __future__ import annotations

import pytest

from hexnn_import.ops.padding import nn_outsize_padding
from hexnn_import.ops.registry import PAD_MIRROR_REFLECT, PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID


@pytest.mark.parametrize("size,f,s,padding,expected", [
    (7, 3, 2, PAD_VALID, (3, 0, 0)),        # (7 - 3) / 2 + 1 = 3
    (2, 3, 1, PAD_VALID, (0, 0, 0)),        # window larger than the input: no output
    (7, 3, 2, PAD_SAME, (4, 1, 1)),         # n = 8, out 4, pad = 3*2 - 4 = 2
    (6, 4, 2, PAD_SAME, (3, 1, 1)),         # n = 7, out 3, pad = 2*2 - 2 = 2
    (5, 4, 2, PAD_SAME, (3, 1, 2)),         # n = 6, out 3, pad = 4 - 1 = 3: 1 before, 2 after
    (5, 4, 2, PAD_SAME_CAFFE, (3, 2, 1)),   # the same pad, the extra one before
    (5, 3, 1, PAD_NA, (5, 1, 1)),           # n = 5, out 5, pad = 4 - 2 = 2
    (5, 3, 2, PAD_NA, (2, 0, 0)),           # out 5 / 2 = 2, pad = 2 - 2 = 0
    (1, 1, 3, PAD_NA, (0, 0, 0)),           # n = 1 < stride: no output
    (9, 2, 4, PAD_SAME, (3, 0, 1)),         # n = 12, out 3, pad = 8 - 7 = 1: 0 before, 1 after
    (9, 2, 4, PAD_MIRROR_REFLECT, (0, 0, 0)),
])
def test_nn_outsize_padding(size, f, s, padding, expected):
    assert nn_outsize_padding(size, f, s, padding) == expected
