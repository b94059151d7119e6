"""One descriptor per lib_nn kernel, in one table that Replace, Legalize, the run, the fast path and the export use.

The XS3 kernel names come from here only: :data:`KERNELS` (the kernels layers lower to) and
:data:`SIMULATED` (simulated, not lowered to yet); ``hexnn-import ops`` lists both. Adding a kernel touches
its own file (the simulation and its weight layout) and this one (its ``run`` adapter and its row of
:data:`KERNELS`). A :class:`KernelDesc` names:

- ``layout``: the kernel's weight layout from the canonical weights Replace
  chose (TFLite order, channels padded), or None for kernels without weights;
- ``run``: the literal reference - the VPU step by step, as lib_nn's portable
  C does it - on int8 inputs in the caller's shapes (:class:`KernelCall`);
- ``hwio``: for the exact fast form (:mod:`.kernels_fast`), the real channels'
  weights as an int8 HWIO filter and the padded taps (which must be zero);
  None when the kernel has no such form;
- ``weight_sums``: each output channel's weight sum (the input zero point's
  share of the bias, for the BSO);
- ``fields``: the kernel's scalar parameters in the graph node's parameter
  vector and the C header's layer table (:func:`encode_call` / :func:`decode_call`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from hexnn_import.ops.op_groups import XS3_PREFIX
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_add import AddParams, add_elementwise
from hexnn_import.xs3.kernels_conv import (conv1x1_weights, conv2d_1x1, conv2d_deep, conv2d_shallowin, deep_weights,
                                           shallowin_weights)
from hexnn_import.xs3.kernels_depthwise import conv2d_depthwise, depthwise_weights
from hexnn_import.xs3.kernels_fc import fc_weights, fully_connected_16, fully_connected_8, pad_inputs
from hexnn_import.xs3.kernels_misc import lookup8
from hexnn_import.xs3.kernels_pool import avgpool2d, avgpool2d_global, maxpool2d
from hexnn_import.xs3.vpu import VPUOptions, vdepth8
from hexnn_import.xs3.window import Window


@dataclass(frozen=True)
class KernelCall:
    """One lib_nn kernel call: kernel name, kernel-layout weights, BSO, input zero point, window and shapes.

    ``x_shape`` / ``y_shape`` are the caller's input and output shapes with
    the real channels (a layer's source shapes; for fully-connected kernels
    any shape of ``R x N`` and ``R x M`` values), ``rows`` the number of
    input vectors of a fully-connected kernel. ``params`` holds the scalar
    parameters of kernels without a BSO (named by their descriptor's
    ``fields``), ``table`` a look-up table.
    """

    kernel: str
    weights: np.ndarray | None
    bso: np.ndarray | None
    zero_point: int
    window: Window | None
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    rows: int = 1
    out_bits: int = 8
    params: tuple[int, ...] = ()
    table: np.ndarray | None = None

    @property
    def desc(self) -> "KernelDesc":
        return kernel_desc(self.kernel)

    @property
    def out_hw(self) -> tuple[int, int]:
        return int(self.y_shape[1]), int(self.y_shape[2])


Run = Callable[[KernelCall, Sequence[np.ndarray], VPUOptions], np.ndarray]


@dataclass(frozen=True)
class KernelDesc:
    """What the lowering needs of one lib_nn kernel (module doc)."""

    name: str
    run: Run
    layout: Callable[[np.ndarray], np.ndarray] | None = None
    hwio: Callable[[KernelCall], tuple[np.ndarray, np.ndarray]] | None = None
    weight_sums: Callable[[np.ndarray], np.ndarray] | None = None
    fields: tuple[str, ...] = ()
    #: the fast form's shape of the products: "dense" (HWIO conv), "depthwise", "fc" (one pixel per row)
    form: str = ""
    weight_rank: int = 0  # the kernel layout's rank (graph Consts are 4-D)
    #: an element-wise kernel whose output byte is a function of its input bytes alone: the graph op replays
    #: it from a table of all 256 ** n_inputs cases, computed once by the literal kernel
    elementwise: bool = False
    n_inputs: int = 1
    source: str = ""  # the lib_nn C file

    @property
    def op(self) -> str:
        """The graph op that runs this kernel."""
        return f"{XS3_PREFIX}{self.name}"


# ---- helpers shared by the conv-like kernels -----------------------------------------------
def _pad_channels(x: np.ndarray, shape: tuple[int, ...], c: int) -> np.ndarray:
    x = np.asarray(x).reshape(shape)
    return np.pad(x, [(0, 0)] * 3 + [(0, c - x.shape[3])]) if c > x.shape[3] else x


def _image_out(call: KernelCall, y: np.ndarray) -> np.ndarray:
    return y[..., :call.y_shape[-1]].reshape(call.y_shape)


def _need_window(call: KernelCall) -> Window:
    if call.window is None:
        raise XS3Error(f"{call.kernel}: the call has no window")
    return call.window


def _run_deep(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    k = call.weights
    assert k is not None and call.bso is not None
    x = _pad_channels(xs[0], call.x_shape, k.shape[3])
    return _image_out(call, conv2d_deep(x, k, call.bso, call.zero_point, _need_window(call), call.out_hw, options))


def _run_shallowin(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    k = call.weights
    assert k is not None and call.bso is not None
    x = _pad_channels(xs[0], call.x_shape, k.shape[3])
    y = conv2d_shallowin(x, k, call.bso, call.zero_point, _need_window(call), call.out_hw, options)
    return _image_out(call, y)


def _run_1x1(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    k = call.weights
    assert k is not None and call.bso is not None
    return _image_out(call, conv2d_1x1(_pad_channels(xs[0], call.x_shape, k.shape[1]), k, call.bso, options))


def _run_depthwise(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    k = call.weights
    assert k is not None and call.bso is not None
    x = _pad_channels(xs[0], call.x_shape, k.shape[2])
    y = conv2d_depthwise(x, k, call.bso, call.zero_point, _need_window(call), call.out_hw, options)
    return _image_out(call, y)


def _fc_input(call: KernelCall, x: np.ndarray) -> np.ndarray:
    assert call.weights is not None
    return pad_inputs(np.asarray(x).reshape(call.rows, -1), call.weights.shape[1])


def _run_fc8(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    assert call.weights is not None and call.bso is not None
    return fully_connected_8(_fc_input(call, xs[0]), call.weights, call.bso, options).reshape(call.y_shape)


def run_fc16_native(call: KernelCall, x: np.ndarray, options: VPUOptions) -> np.ndarray:
    """fully_connected_16's own int16 output ``[R, M]`` (output scale / 256, zero point x 256)."""
    assert call.weights is not None and call.bso is not None
    return fully_connected_16(_fc_input(call, x), call.weights, call.bso, options)


def _run_fc16(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    """The int8 tensor of a 16-bit fully-connected layer: its int16 output reduced by VDEPTH8."""
    lo, hi = options.output_bounds
    y16 = run_fc16_native(call, xs[0], options)
    return np.clip(vdepth8(y16), lo, hi).astype(np.int8).reshape(call.y_shape)


# ---- the fast form's filters ----------------------------------------------------------------
def _real_channels(call: KernelCall) -> tuple[int, int]:
    return int(call.x_shape[-1]), int(call.y_shape[-1])


def _hwio_fc(call: KernelCall) -> tuple[np.ndarray, np.ndarray]:
    k = call.weights
    assert k is not None
    n_real = int(np.prod(call.x_shape)) // call.rows
    y_real = int(np.prod(call.y_shape)) // call.rows
    return k[:y_real, :n_real].T[None, None], k[:, n_real:]


def _hwio_depthwise(call: KernelCall) -> tuple[np.ndarray, np.ndarray]:
    k = call.weights
    assert k is not None
    x_real, _ = _real_channels(call)
    return k[:, :, :x_real, None], k[:, :, x_real:]


def _hwio_1x1(call: KernelCall) -> tuple[np.ndarray, np.ndarray]:
    k = call.weights
    assert k is not None
    x_real, y_real = _real_channels(call)
    return k[:y_real, :x_real].T[None, None], k[:y_real, x_real:]


def _hwio_dense(call: KernelCall) -> tuple[np.ndarray, np.ndarray]:
    """conv2d_deep ``[Y_c, K_h, K_w, X_c]``, conv2d_shallowin ``[Y_c, K_h, 32 / X_c, X_c]`` (taps past K_w zero)."""
    k = call.weights
    assert k is not None
    kw = _need_window(call).k_w
    x_real, y_real = _real_channels(call)
    pad = np.concatenate([k[:y_real, :, :, x_real:].reshape(-1), k[:y_real, :, kw:].reshape(-1)])
    return k[:y_real, :, :kw, :x_real].transpose(1, 2, 3, 0), pad


def _sums_dense(w: np.ndarray) -> np.ndarray:
    w = w.astype(np.int64)
    return w.reshape(w.shape[0], -1).sum(axis=1)


def _sums_depthwise(w: np.ndarray) -> np.ndarray:
    return w.astype(np.int64)[0].sum(axis=(0, 1))


def _run_lookup8(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    assert call.table is not None
    return np.asarray(lookup8(np.asarray(xs[0]), call.table), dtype=np.int8).reshape(call.y_shape)


def _run_add(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    a, b = (np.asarray(v).reshape(-1) for v in xs[:2])
    return add_elementwise(a, b, AddParams(*call.params), options).reshape(call.y_shape)


def _run_global_avg(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    bias, scale, shift = call.params
    return avgpool2d_global(np.asarray(xs[0]).reshape(call.x_shape), bias, scale, shift, options).reshape(call.y_shape)


def _pool_input(call: KernelCall, x: np.ndarray) -> np.ndarray:
    """A pool's input with its channels zero-padded to a multiple of 4 (lib_nn asserts one; the C runner pads
    the same way in its scratch and cuts the output back)."""
    return _pad_channels(x, call.x_shape, -(-int(call.x_shape[3]) // 4) * 4)


def _run_maxpool(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    return _image_out(call, maxpool2d(_pool_input(call, xs[0]), _need_window(call), call.out_hw))


def _run_avgpool(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    return _image_out(call, avgpool2d(_pool_input(call, xs[0]), _need_window(call), call.out_hw, options))


_CONV = ("zero_point", "k_h", "k_w", "start_row", "start_col", "stride_v", "stride_h")
_WINDOW = ("k_h", "k_w", "start_row", "start_col", "stride_v", "stride_h")

#: every lib_nn kernel a layer lowers to, by name: the one list of them (Replace, Legalize, the graph ops of
#: :mod:`.graph_ops`, the run, the fast path, the export and ``hexnn-import ops`` read it)
KERNELS: dict[str, KernelDesc] = {d.name: d for d in (
    KernelDesc("conv2d_deep", _run_deep, deep_weights, _hwio_dense, _sums_dense, _CONV, "dense", 4,
               source="conv2d_deep.c"),
    KernelDesc("conv2d_shallowin", _run_shallowin, shallowin_weights, _hwio_dense, _sums_dense, _CONV, "dense", 4,
               source="conv2d_shallowin.c"),
    KernelDesc("conv2d_1x1", _run_1x1, conv1x1_weights, _hwio_1x1, _sums_dense, ("zero_point",), "dense", 2,
               source="conv2d_1x1.c"),
    KernelDesc("conv2d_depthwise", _run_depthwise, depthwise_weights, _hwio_depthwise, _sums_depthwise, _CONV,
               "depthwise", 3, source="conv2d_depthwise.c"),
    KernelDesc("fully_connected_8", _run_fc8, fc_weights, _hwio_fc, _sums_dense, ("rows",), "fc", 2,
               source="fully_connected.c"),
    KernelDesc("fully_connected_16", _run_fc16, fc_weights, None, _sums_dense, ("rows",), "", 2,
               source="fully_connected.c"),
    KernelDesc("add_elementwise", _run_add, fields=("shr0", "m0", "shr1", "m1", "bias", "out_shr"), n_inputs=2,
               elementwise=True, source="add_elementwise.c"),
    KernelDesc("maxpool2d", _run_maxpool, fields=_WINDOW, source="maxpool2d.c"),
    KernelDesc("avgpool2d", _run_avgpool, fields=_WINDOW, source="avgpool2d.c"),
    KernelDesc("avgpool2d_global", _run_global_avg, fields=("bias", "scale", "shift"), source="avgpool2d.c"),
    KernelDesc("lookup8", _run_lookup8, elementwise=True, source="nn_operator.c"),
)}

#: lib_nn kernels simulated bit for bit and checked against lib_nn's C (golden cases) that no layer lowers to
#: yet: :mod:`.kernels_misc` (requantize_16_to_8, pad) and :mod:`.kernels_im2col` (conv2d_im2col)
SIMULATED = ("requantize_16_to_8", "pad", "conv2d_im2col")


def kernel_desc(name: str) -> KernelDesc:
    """The descriptor of a kernel; XS3Error naming it when the table has none."""
    desc = KERNELS.get(name)
    if desc is None:
        raise XS3Error(f"no XS3 kernel named {name} (known: {', '.join(sorted(KERNELS))})")
    return desc


def run_literal(call: KernelCall, xs: Sequence[np.ndarray], options: VPUOptions) -> np.ndarray:
    """The kernel's literal reference on int8 inputs in the caller's shapes."""
    return call.desc.run(call, xs, options)
