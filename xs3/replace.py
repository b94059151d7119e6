"""Replace: swap a TFLite conv-like operator for the lib_nn kernel that fits it (tflite2xcore's first step).

A rule is a small class with ``match(layer) -> reason | None`` and
``rewrite(layer) -> XS3Op``; the rules of an operator are tried in order
(:data:`hexnn_import.xs3.replace_rules.RULES`, the one table; :func:`.replace_rules.replace`),
the first that matches wins, and when none does the layer keeps the reason
of the last (most general) rule. Rewrites only canonicalize: they choose the
kernel, the window and the kernel-facing shapes, and make more layers fit
(input channels padded to a multiple of 4; a conv whose window covers the
whole input becomes a fully-connected layer). Weights stay in TFLite order;
:mod:`hexnn_import.xs3.legalize` puts them in kernel layout and computes the BSO.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.source_layers import LayerInfo, activation_bounds
from hexnn_import.xs3.vpu import VPU_INT8_EPV
from hexnn_import.xs3.window import Window, tflite_window


#: activation dtypes the int8 kernels take: int8, and uint8 through its int8 view (codes - 128, the same values)
INT8_VIEWS = ("int8", "uint8")


@dataclass
class XS3Op:
    """A layer after Replace: its kernel and canonical (TFLite-ordered, channel-padded) weights."""

    layer: LayerInfo
    kernel: str
    rule: str
    weights: np.ndarray | None  # OHWI (conv), [1, K_h, K_w, C] (depthwise), [M, N] (fully connected); None: none
    x_shape: tuple[int, ...]  # what the kernel reads: [B, H, W, C'] or [R, N]
    y_shape: tuple[int, ...]  # what the kernel writes: [B, Y_h, Y_w, Y_c'] or [R, M]
    window: Window | None = None
    canonical: list[str] = field(default_factory=list)
    out_bits: int = 8  # 16: fully_connected_16 writes the output at 8 more fractional bits
    clamp: tuple[int, int] | None = None  # a fused activation's clamp, run as a lookup8 after the kernel
    params: tuple[int, ...] = ()  # scalar parameters of kernels without a BSO (their descriptor's fields)
    table: np.ndarray | None = None  # a lookup8 layer's 256-entry int8 table

    @property
    def out_quant(self) -> tuple[float, int]:
        """The (scale, zero point) the kernel writes: the output tensor's, or 256x finer for 16 bits."""
        s, zp = float(self.layer.y.scale), self.layer.y.int8_zero_point  # type: ignore[arg-type]
        return (s / 256.0, zp * 256) if self.out_bits == 16 else (s, zp)

    @property
    def zero_point(self) -> int:
        """The input zero point: the value of implied padding taps."""
        return self.layer.x.int8_zero_point


def ceil4(n: int) -> int:
    return -(-n // 4) * 4


def pad_axis(a: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Zero-pad ``a`` along ``axis`` to ``size``."""
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, size - a.shape[axis])
    return np.pad(a, pad) if size > a.shape[axis] else a


# ---- preconditions shared by all rules ------------------------------------------------
def source_reason(layer: LayerInfo) -> str | None:
    """Why the TFLite layer's data cannot reach any XS3 kernel (None when it can)."""
    if layer.notes:
        return "; ".join(layer.notes)
    if not layer.inputs or not layer.outputs:
        return "no activation input or output"
    x, y = layer.x, layer.y
    if 0 in tuple(x.shape) or 0 in tuple(y.shape):
        return f"empty tensor (input {list(x.shape)}, output {list(y.shape)}): nothing to compute"
    if x.dtype not in INT8_VIEWS or x.scale is None:
        return f"input {x.name} is {x.dtype}{' per-channel' if x.per_channel else ''}, not per-tensor int8"
    if y.dtype not in INT8_VIEWS or y.scale is None:
        return f"output {y.name} is {y.dtype}, not per-tensor int8"
    if layer.w_dtype != "int8" or layer.w_scales is None:
        return f"weights are {layer.w_dtype or 'missing'}, not quantized int8"
    if np.any(layer.w_zero_points != 0):
        return "weights have non-zero zero points (XS3 kernels multiply raw codes)"
    want_axis = 3 if layer.opname == "DEPTHWISE_CONV_2D" else 0
    if layer.w_scales.size > 1 and layer.w_axis != want_axis:
        return f"per-channel weight scales on axis {layer.w_axis}, expected {want_axis}"
    n_out = layer.weights.shape[want_axis] if layer.weights is not None else 0
    if layer.w_scales.size not in (1, n_out) or layer.bias is None or layer.bias.size != n_out:
        return f"{layer.w_scales.size} weight scales / bias of {n_out} output channels do not match"
    if layer.bias_dtype != "int32":
        return f"bias is {layer.bias_dtype}, not int32"
    if layer.dilation != (1, 1):
        return f"dilation {layer.dilation[0]}x{layer.dilation[1]} (lib_nn windows have no dilation)"
    if layer.activation not in ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"):
        return f"fused activation {layer.activation}"
    return None


def activation_clamp(layer: LayerInfo) -> tuple[int, int] | None:
    """The int8 clamp of a fused activation that the output range does not imply (None when it does).

    XS3 kernels only saturate to the int8 range; such a clamp becomes a
    ``lookup8`` after the kernel (its table the clamp), as lib_nn runs it."""
    y = layer.y
    a_lo, a_hi = activation_bounds(layer.activation, float(y.scale), y.int8_zero_point)  # type: ignore[arg-type]
    return None if (a_lo, a_hi) == (-128, 127) else (a_lo, a_hi)


def conv_window(layer: LayerInfo) -> Window:
    """The lib_nn window of a CONV_2D / DEPTHWISE_CONV_2D layer (explicit ``pad_begin`` when the source has it)."""
    assert layer.weights is not None
    k_hw = (layer.weights.shape[1], layer.weights.shape[2])
    if layer.pad_begin is not None:
        return Window(k_hw[0], k_hw[1], -layer.pad_begin[0], -layer.pad_begin[1], *layer.stride)
    return tflite_window(layer.x.shape[1:3], layer.y.shape[1:3], k_hw, layer.stride, layer.same_padding)  # type: ignore[arg-type]


def window_reason(layer: LayerInfo) -> str | None:
    try:
        conv_window(layer).check_overlap(layer.x.shape[1:3], layer.y.shape[1:3])  # type: ignore[arg-type]
    except XS3Error as exc:
        return str(exc)
    return None


# ---- the rules ----------------------------------------------------------------------------
class ReplaceRule:
    """Base of a Replace rule: ``match`` says why not (None = fits), ``rewrite`` builds the XS3Op."""

    name = ""
    kernel = ""

    def match(self, layer: LayerInfo) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def rewrite(self, layer: LayerInfo) -> XS3Op:  # pragma: no cover - interface
        raise NotImplementedError


class ConvAsFullyConnected(ReplaceRule):
    """CONV_2D whose window covers the whole input (1x1 output, no padding) -> fully_connected_8."""

    name = "conv-covers-input-to-fc"
    kernel = "fully_connected_8"

    def match(self, layer: LayerInfo) -> str | None:
        win = conv_window(layer)
        _, h, w, _ = layer.x.shape
        covers = (win.k_h, win.k_w) == (h, w) and (win.start_row, win.start_col) == (0, 0)
        if tuple(layer.y.shape[1:3]) != (1, 1) or not covers:
            return f"window {win.k_h}x{win.k_w} does not cover the {h}x{w} input with a 1x1 output"
        return None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        assert layer.weights is not None
        b, h, w, c = layer.x.shape
        o = layer.weights.shape[0]
        n = h * w * c
        return XS3Op(layer, self.kernel, self.name, layer.weights.reshape(o, n), (b, n), (b, o),
                     canonical=[f"window {h}x{w} covers the whole input: fully-connected over N = {h}*{w}*{c} = {n}"])


class _ConvRule(ReplaceRule):
    """Shared CONV_2D rewrite: input and output channels padded to multiples of 4 (zero weights), as XMOS's
    converter pads channels (tflite2xcore's CanonicalizeConv2DInputChannels; the padded outputs get a zero BSO
    channel and are cut back after the kernel: :func:`.kernel_table._image_out`)."""

    def _ycheck(self, layer: LayerInfo) -> str | None:
        return window_reason(layer)

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        assert layer.weights is not None
        b, h, w, c = layer.x.shape
        c4, y_c = ceil4(c), int(layer.y.shape[3])
        y4 = ceil4(y_c)
        canonical = [f"input channels padded {c} -> {c4} (zero weights)"] if c4 != c else []
        if y4 != y_c:
            canonical.append(f"output channels padded {y_c} -> {y4} (zero weights and BSO; padded outputs dropped)")
        weights = pad_axis(pad_axis(layer.weights, 3, c4), 0, y4)
        return XS3Op(layer, self.kernel, self.name, weights, (b, h, w, c4),
                     tuple(layer.y.shape[:3]) + (y4,), conv_window(layer), canonical)


class Conv1x1(_ConvRule):
    """1x1 CONV_2D with stride 1 -> conv2d_1x1."""

    name = "conv-1x1"
    kernel = "conv2d_1x1"

    def match(self, layer: LayerInfo) -> str | None:
        assert layer.weights is not None
        if layer.weights.shape[1:3] != (1, 1) or layer.stride != (1, 1):
            return f"{self.kernel}: needs a 1x1 window with stride 1"
        return self._ycheck(layer)


class ConvShallowin(_ConvRule):
    """CONV_2D whose kernel row fits one VLMACCR (K_w * X_c <= 32, X_c in 4/8/16/32) -> conv2d_shallowin."""

    name = "conv-shallowin"
    kernel = "conv2d_shallowin"

    def match(self, layer: LayerInfo) -> str | None:
        assert layer.weights is not None
        c4, k_w = ceil4(layer.x.shape[3]), layer.weights.shape[2]
        if VPU_INT8_EPV % c4 or k_w * c4 > VPU_INT8_EPV:
            return f"{self.kernel}: K_w * X_c = {k_w} * {c4} must be <= 32 with X_c dividing 32"
        return self._ycheck(layer)


class ConvDeep(_ConvRule):
    """Any other CONV_2D -> conv2d_deep."""

    name = "conv-deep"
    kernel = "conv2d_deep"

    def match(self, layer: LayerInfo) -> str | None:
        return self._ycheck(layer)


class Depthwise(ReplaceRule):
    """DEPTHWISE_CONV_2D with depth multiplier 1 -> conv2d_depthwise (channels padded to a multiple of 4)."""

    name = "depthwise"
    kernel = "conv2d_depthwise"

    def match(self, layer: LayerInfo) -> str | None:
        if layer.depth_multiplier != 1:
            return f"{self.kernel}: depth multiplier {layer.depth_multiplier} (needs X_c == Y_c)"
        return window_reason(layer)

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        assert layer.weights is not None
        b, h, w, c = layer.x.shape
        c4 = ceil4(c)
        canonical = [f"channels padded {c} -> {c4} (zero weights; padded outputs dropped)"] if c4 != c else []
        y = tuple(layer.y.shape[:3]) + (c4,)
        return XS3Op(layer, self.kernel, self.name, pad_axis(layer.weights, 3, c4), (b, h, w, c4), y,
                     conv_window(layer), canonical)


class FullyConnected(ReplaceRule):
    """FULLY_CONNECTED -> fully_connected_8."""

    name = "fully-connected"
    kernel = "fully_connected_8"

    def match(self, layer: LayerInfo) -> str | None:
        return None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        assert layer.weights is not None
        m, n = layer.weights.shape
        rows = int(np.prod(layer.x.shape)) // n
        return XS3Op(layer, self.kernel, self.name, layer.weights, (rows, n), (rows, m))


class FullyConnectedToArgmax(FullyConnected):
    """FULLY_CONNECTED read only by ARG_MAX / ARG_MIN -> fully_connected_16 (tflite2xcore's pattern).

    The logits are written with 8 more fractional bits (output scale / 256,
    zero point x 256) so a 16-bit argmax on the device can separate values
    that the int8 output would tie; the int8 tensor is their rounding shift
    by 8 (VDEPTH8).
    """

    name = "fully-connected-to-argmax16"
    kernel = "fully_connected_16"

    def match(self, layer: LayerInfo) -> str | None:
        if not layer.consumers or any(c not in ("ARG_MAX", "ARG_MIN") for c in layer.consumers):
            return f"{self.kernel}: only for logits read by ARG_MAX / ARG_MIN alone"
        return None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        op = super().rewrite(layer)
        op.out_bits = 16
        op.canonical.append("16-bit logits for the argmax (output scale / 256, zero point x 256)")
        return op
