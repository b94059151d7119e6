"""A small synthetic network for the C runner: the kernels and paddings no bundled model lowers to yet.

No model of ``models/`` lowers a layer to ``avgpool2d``,
``avgpool2d_global`` or ``fully_connected_16``; the network also has the
paddings: a kernel whose output channels are padded (``k_out`` above the real
count), a fully-connected input padded to a multiple of 4, and a max pool of 6
channels (padded to 8 around the kernel). :func:`synthetic_network`
builds one network (seeded weights, BSO from :func:`~.bso.bso_params`, pool
parameters from :func:`~.kernels_pool.global_avg_params`) that has each, as
:class:`~.kernel_table.KernelCall` s and the :class:`~.c_network.NetworkDesc`
the header takes (parameters from :func:`~.network_desc._call_params`, as
xs3-export writes them). :func:`simulate` runs it on the kernels' literal
references (:func:`~.kernel_table.run_literal`, what an ``XS3_<kernel>`` node
runs with ``literal=True``). ``tools/xs3_runner_golden.py`` runs its runner
against lib_nn; ``tests/xs3/test_c_runner_golden.py`` replays it.
"""
from __future__ import annotations

import math

import numpy as np
from hexnn_import.xs3.arena import ArenaBuffer, plan_arena
from hexnn_import.xs3.bso import bso_params, pack_bso
from hexnn_import.xs3.c_network import NetLayer, NetTensor, NetworkDesc
from hexnn_import.xs3.kernel_table import KernelCall, run_literal
from hexnn_import.xs3.kernels_fc import fc_weights
from hexnn_import.xs3.kernels_pool import global_avg_params
from hexnn_import.xs3.network_desc import _call_params
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS
from hexnn_import.xs3.window import Window

NAME = "synthetic_kernels"
#: (layer, kernel, inputs, output) in order; shapes in :func:`synthetic_network`
LAYERS = [("pool", "avgpool2d", ["x"], "pool"), ("table", "lookup8", ["pool"], "table"),
          ("pw", "conv2d_1x1", ["table"], "pw"), ("dw", "conv2d_depthwise", ["pw"], "dw"),
          ("gap", "avgpool2d_global", ["table"], "gap"), ("fc16", "fully_connected_16", ["gap"], "fc16"),
          ("fc8", "fully_connected_8", ["fc16"], "fc8"), ("mp", "maxpool2d", ["pw"], "mp")]
SHAPES = {"x": (1, 8, 8, 12), "pool": (1, 4, 4, 12), "table": (1, 4, 4, 12), "pw": (1, 4, 4, 6),
          "dw": (1, 4, 4, 6), "gap": (1, 1, 1, 12), "fc16": (1, 5), "fc8": (1, 3), "mp": (1, 2, 2, 6)}
OUTPUTS = ["dw", "fc8", "mp"]


def _bso(rng: np.random.Generator, w: np.ndarray, zp_in: int, out_bits: int = 8) -> np.ndarray:
    sums = w.astype(np.int64).reshape(w.shape[0], -1).sum(axis=1)
    bias = rng.integers(-2000, 2000, w.shape[0])
    s_out, zp_out = (0.05 / 256, 3 * 256) if out_bits == 16 else (0.05, 3)  # 16 bits: 256x finer (replace.py)
    return pack_bso(bso_params(bias, sums, 0.02, zp_in, rng.uniform(0.004, 0.01, w.shape[0]), s_out, zp_out,
                               out_bits))


def _calls(seed: int) -> list[KernelCall]:
    rng = np.random.default_rng(seed)
    s = SHAPES
    w_pw = rng.integers(-60, 61, (8, 12)).astype(np.int8)          # k_out 8 for 6 real output channels
    w_dw = rng.integers(-60, 61, (3, 3, 8)).astype(np.int8)        # channels 6 -> 8, output cut back to 6
    w_dw[:, :, 6:] = 0
    dw_bso = _bso(rng, w_dw.transpose(2, 0, 1), 3)
    w16 = rng.integers(-60, 61, (5, 12)).astype(np.int8)
    w8 = fc_weights(rng.integers(-60, 61, (3, 5)).astype(np.int8))  # N 5 -> 8
    bias, scale, shift = global_avg_params(0.03, -2, 0.03, -2, 16)
    return [KernelCall("avgpool2d", None, None, 0, Window(2, 2, 0, 0, 2, 2), s["x"], s["pool"]),
            KernelCall("lookup8", None, None, 0, None, s["pool"], s["table"],
                       table=rng.integers(-128, 128, 256).astype(np.int8)),
            KernelCall("conv2d_1x1", w_pw, _bso(rng, w_pw, -2), -2, Window(1, 1), s["table"], s["pw"]),
            KernelCall("conv2d_depthwise", w_dw, dw_bso, 3, Window(3, 3, -1, -1, 1, 1), s["pw"], s["dw"]),
            KernelCall("avgpool2d_global", None, None, 0, None, s["table"], s["gap"], params=(bias, scale, shift)),
            KernelCall("fully_connected_16", w16, _bso(rng, w16, -2, 16), -2, None, s["gap"], s["fc16"],
                       out_bits=16),
            KernelCall("fully_connected_8", w8, _bso(rng, w8, 3), 3, None, s["fc16"], s["fc8"]),
            KernelCall("maxpool2d", None, None, 0, Window(2, 2, 0, 0, 2, 2), s["pw"], s["mp"])]  # 6 channels


def synthetic_network(seed: int = 0) -> tuple[NetworkDesc, list[KernelCall]]:
    """The network (arena planned as xs3-export plans it) and its kernel calls."""
    calls = _calls(seed)
    layers = []
    for (name, kernel, ins, out), call in zip(LAYERS, calls):
        arrays = {k: v for k, v in (("weights", call.weights), ("bso", call.bso), ("lut", call.table))
                  if v is not None}
        layers.append(NetLayer(name, kernel, ins, [out], _call_params(call), arrays))
    first = {"x": -1, **{out: i for i, (_, _, _, out) in enumerate(LAYERS)}}
    last = {t: len(LAYERS) if t in OUTPUTS else first[t] for t in SHAPES}
    for i, (_, _, ins, _) in enumerate(LAYERS):
        for t in ins:
            last[t] = max(last[t], i)
    plan = plan_arena([ArenaBuffer(t, math.prod(shape), first[t], last[t]) for t, shape in SHAPES.items()])
    tensors = [NetTensor(t, shape, "int8", plan.offsets[t]) for t, shape in SHAPES.items()]
    weight_bytes = sum(int(a.nbytes) for layer in layers for a in layer.arrays.values())
    return NetworkDesc(NAME, tensors, layers, ["x"], OUTPUTS, plan.size, plan.largest_live, weight_bytes), calls


def simulate(calls: list[KernelCall], x: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor (flat int8) of the network on the input ``x``, by the kernels' literal references."""
    values = {"x": np.asarray(x, np.int8).reshape(SHAPES["x"])}
    for (_, _, ins, out), call in zip(LAYERS, calls):
        values[out] = np.asarray(run_literal(call, [values[t].reshape(call.x_shape) for t in ins], DEFAULT_OPTIONS),
                                 np.int8).reshape(SHAPES[out])
    return {t: v.reshape(-1) for t, v in values.items()}
