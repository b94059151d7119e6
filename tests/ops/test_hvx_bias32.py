"""QuantizedBiasAdd_32p32to32 and QuantizedChannelScale_32xf against hexagon_nn's device code (op_biasadd.c,
op_channelscale.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_bias32`` (issue 36): the vendor files compiled whole and
unedited with nnlib's own ``nn_graph.h``, each node's registered execute run on int32 data: ``fast_roundf`` and the
wrapping ``Q6_P_vaddw_PP`` word adds; ``roundf_i32`` scales and ``Q6_R_sat_P(Q6_P_asrrnd_PI(Q6_P_mpy_RR(..), 28))``.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_bias32  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "bias32.json").read_text())
    with np.load(GOLDEN / "bias32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_bias32_equals_device_code() -> None:
    """Every one of the 345 nodes (45 edge, 300 random; 176 BiasAdd, 169 ChannelScale): the int32 data, shape and
    range bit for bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_biasadd.c") and "biasadd_32p32to32_execute" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 345 and np.bincount(g["hdr"][:, 0]).tolist() == [176, 169]
    assert not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_bias32.engine_case(g, i)[0]]
    assert not bad, [op_bias32.engine_case(g, i)[1] for i in bad[:3]]


def test_device_word_adds_wrap_and_unit_scale_copies() -> None:
    """Properties the golden set must show: with equal input and bias ranges the device adds each bias as it is,
    modulo 2**32 (``Q6_P_vaddw_PP`` wraps, the bias being exact in float32 there); a broadcast scale of 1.0 copies."""
    _, g = _load()
    h, r = g["hdr"], g["ranges"]
    eq = np.flatnonzero((h[:, 0] == 0) & (r[:, 0] == r[:, 2]) & (r[:, 1] == r[:, 3]))
    assert len(eq)
    for i in eq:
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].astype(np.int64).reshape(-1, h[i][5])
        bias = g["side"][g["side_off"][i]:g["side_off"][i + 1]].astype(np.int64)
        assert (np.abs(bias) < 2 ** 24).all()
        want = ((x + bias + 2 ** 31) % 2 ** 32 - 2 ** 31).reshape(-1)
        assert np.array_equal(g["out"][g["offsets"][i]:g["offsets"][i + 1]], want)
    ones = [i for i in np.flatnonzero((h[:, 0] == 1) & (h[:, 5] == 1))
            if g["side"][g["side_off"][i]:g["side_off"][i + 1]].view(np.float32)[0] == 1.0]
    assert ones and all(np.array_equal(g["out"][g["offsets"][i]:g["offsets"][i + 1]],
                                       g["x"][g["x_off"][i]:g["x_off"][i + 1]]) for i in ones)
