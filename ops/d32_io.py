"""Reading and writing d32 tensors in kernels; the shared body of every "flat twin" _d32 op.

A _d32 op computes exactly what its flat twin computes (SEMANTICS.md §7: the
layout changes where bytes live, never the arithmetic): the kernel reads the
*logical* region of each d32 input (:meth:`D32Tensor.logical`, the padding is
never read), runs the flat twin's kernel with the same
:class:`~hexnn_import.ops.registry.KernelContext` (so errors name the _d32
node and op, and auto-range state persists on that node), and lays the
result out as a fresh d32 tensor with the default padding of §7.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from hexnn_import.ops.d32 import LANES, MAX_RIGHT, D32Tensor, right_padding, to_d32
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.registry import Kernel, KernelContext, get_kernel

#: Padding inputs of Convert_to_d32 / AutoQuantize_d32 / QuantizeForTest*_d32, in input order:
#: (name, default, largest allowed value or None).
PAD_INPUTS = (("depth-before padding", 0, LANES - 1), ("width-left padding", 4, MAX_RIGHT),
              ("minimum width-right padding", 0, MAX_RIGHT), ("top/bottom padding", 4, None))


def d32_input(ctx: KernelContext, arr: Any, what: str) -> D32Tensor:
    """Require a d32 tensor (a flat array here means a missing Convert_to_d32)."""
    if not isinstance(arr, D32Tensor):
        shape = list(np.shape(arr)) if isinstance(arr, np.ndarray) else type(arr).__name__
        raise ctx.fail(f"{what} must be a d32 tensor (SEMANTICS §7), got a flat {shape}; "
                       "insert Convert_to_d32 before this node")
    return arr


def flat_input(ctx: KernelContext, arr: Any, what: str) -> np.ndarray:
    """Require a flat array (a d32 tensor here means a missing Convert_from_d32)."""
    if isinstance(arr, D32Tensor):
        raise ctx.fail(f"{what} must be a flat tensor, got {arr!r}; insert Convert_from_d32 before this node")
    return arr


def logical_input(ctx: KernelContext, arr: Any, what: str) -> np.ndarray:
    """The logical ``[b, h, w, d]`` data of a d32 input, read-only (kernels never write their inputs)."""
    return d32_input(ctx, arr, what).logical_view()


def read_padding(ctx: KernelContext, inputs: Sequence[Any], first: int) -> tuple[int, int, int, int]:
    """``(before, left, min_right, top_bottom)`` from the optional inputs ``first..first+3``.

    Defaults 0, 4, 0, 4 (op text of Convert_to_d32). Choice where the
    documents are silent about bad values (the device logs and uses the
    default): a value outside 0..31 (before), 0..7 (left, minimum right) or
    below 0 (top/bottom) is an error.
    """
    vals = []
    for i, (name, default, top) in enumerate(PAD_INPUTS):
        idx = first + i
        v = int_param(ctx, inputs[idx], name) if idx < len(inputs) else default
        if v < 0 or (top is not None and v > top):
            limit = f"0..{top}" if top is not None else ">= 0"
            raise ctx.fail(f"{name} (input {idx}) is {v}, expected {limit}")
        vals.append(v)
    return vals[0], vals[1], vals[2], vals[3]


def d32_output(arr: np.ndarray, padding: tuple[int, int, int, int] = (0, 4, 0, 4)) -> D32Tensor:
    """Lay a flat result out as d32; ``padding`` is ``(before, left, min_right, top_bottom)``.

    The flat result is kept on the tensor (:meth:`D32Tensor.keep_flat`), so
    the next _d32 op reads it without gathering it from the padded layout,
    and the layout itself is only made when something reads it (``lazy``).
    """
    if padding == _DEFAULT_PADDING and type(arr) is np.ndarray and arr.ndim == 4:
        # the layout of this shape and type checked once (speed, issue 37: every _d32 output passes here)
        key = (arr.shape, arr.dtype.char)
        fields = _LAYOUTS.get(key)
        if fields is None:
            t = to_d32(arr, top=4, bottom=4, left=4, right=right_padding(4, arr.shape[2]), before=0, lazy=True)
            if len(_LAYOUTS) >= _MAX_LAYOUTS:
                _LAYOUTS.clear()
            _LAYOUTS[key] = (t.shape, t._dtype, t._fill, t.padding)
            return t
        t = D32Tensor.__new__(D32Tensor)
        t.shape, t._dtype, t._fill, pads = fields
        t._data = None
        t.top, t.bottom, t.left, t.right, t.before, t.after = pads
        return t.keep_flat(arr)
    before, left, min_right, tb = padding
    right = right_padding(left, np.shape(arr)[2], min_right)
    return to_d32(arr, top=tb, bottom=tb, left=left, right=right, before=before, lazy=True)


_DEFAULT_PADDING = (0, 4, 0, 4)
#: The checked layout fields (shape, dtype, fill, paddings) of a d32 tensor per (shape, type) that
#: :func:`d32_output` laid out with the default padding
_LAYOUTS: dict[tuple, tuple] = {}
_MAX_LAYOUTS = 4096


#: Flat twin kernels by op name (a kernel instance holds no per-node state: that lives in ctx.state).
_FLAT_KERNELS: dict[str, Kernel] = {}


def run_flat(ctx: KernelContext, flat_op: str, inputs: Sequence[Any]) -> tuple[np.ndarray, ...]:
    """Run the flat twin's kernel on flat inputs with this node's context.

    Its ``compute`` is called directly: the _d32 op's own call (same input
    counts, same context) already checks the inputs, wraps numpy errors
    into OpError naming the node, and checks the outputs it passes on; the
    flat twin's data output is checked when it is laid out as d32.
    """
    kernel = _FLAT_KERNELS.get(flat_op)
    if kernel is None:
        kernel = _FLAT_KERNELS[flat_op] = get_kernel(flat_op, ctx.node)
    outs = kernel.compute(ctx, *inputs)
    return outs if isinstance(outs, tuple) else tuple(outs)


class D32Twin(Kernel):
    """A _d32 op that is its flat twin with d32 inputs/outputs.

    ``FLAT_OP`` names the twin; ``D32_INPUTS`` lists the input slots that are
    d32 (the others pass through unchanged); output 0 is laid out as d32 with
    the default padding, outputs 1.. (min, max) pass through.
    """

    FLAT_OP: ClassVar[str] = ""
    D32_INPUTS: ClassVar[tuple[int, ...]] = (0,)

    def flat_inputs(self, ctx: KernelContext, inputs: Sequence[Any]) -> list[Any]:
        """The inputs with every d32 slot replaced by its logical data."""
        flat = list(inputs)
        for i in self.D32_INPUTS:
            arr = inputs[i]
            # the message is only built when the check fails (this runs for every _d32 node)
            flat[i] = (arr.logical_view() if isinstance(arr, D32Tensor)
                       else logical_input(ctx, arr, f"input {i} ({self.spec.inputs[i].name})"))
        for i, arr in enumerate(flat):
            if isinstance(arr, D32Tensor) and i not in self.D32_INPUTS:
                flat_input(ctx, arr, f"input {i}")
        return flat

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """Flat twin on the logical data; output 0 back to d32."""
        outs = run_flat(ctx, self.FLAT_OP, self.flat_inputs(ctx, inputs))
        return (d32_output(outs[0]), *outs[1:])
