"""Kernel registry and the base-class contract every kernel follows.

Modelled on onnx/reference's ``OpRun`` (docs/architecture.md, "Models learned
from"): a kernel is a small class registered under one or more op names with
``@register("Name")``; input and output counts and output dtypes are checked
here, centrally, against the catalog, and every error names the node and op.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from hexnn_import.errors import HexnnError, OpError
from hexnn_import.ops.catalog import OpSpec, get_spec
from hexnn_import.ops.quant import range_problem

_KERNELS: dict[str, type["Kernel"]] = {}

# NN_PAD_* values of hexagon_nn's nn_graph_types.h (kept here so ops/ does not
# depend on the IR module).
PAD_NA, PAD_SAME, PAD_VALID, PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC, PAD_SAME_CAFFE = range(6)


@dataclass
class KernelContext:
    """What a kernel may know about the node it runs for.

    ``state`` persists across executions of the same node (auto-range
    widening of SEMANTICS §5 keeps its widened range there).
    """

    node: str
    op: str
    padding: int = PAD_NA
    state: dict[str, Any] = field(default_factory=dict)
    n_outputs: int | None = None
    #: the node's declared output shapes (ops whose output shape has no input, e.g. ExpandDims_f)
    out_shapes: tuple[tuple[int, ...], ...] | None = None

    def fail(self, message: str) -> "OpError":
        """Build the project's error naming this node and op (raise it)."""
        return OpError(self.node, self.op, message)

    def scalar(self, arr: np.ndarray, what: str) -> float:
        """Read a float scalar input (shape [1,1,1,1] or any single element)."""
        if type(arr) is np.ndarray and arr.size == 1 and arr.dtype.kind in "fiub":
            return float(arr.item())  # the common case, without the reshape
        a = np.asarray(arr)
        if a.size != 1:
            raise self.fail(f"{what} has {a.size} elements, expected a scalar")
        return float(a.reshape(-1)[0])

    def int_scalar(self, arr: np.ndarray, what: str) -> int:
        """Read an int32 scalar input."""
        a = np.asarray(arr)
        if a.size != 1:
            raise self.fail(f"{what} has {a.size} elements, expected a scalar")
        return int(a.reshape(-1)[0])

    def sane_range(self, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> tuple[float, float]:
        """Read a (min, max) pair and require it sane (SEMANTICS §1)."""
        mn, mx = self.scalar(mn_arr, f"{what} min"), self.scalar(mx_arr, f"{what} max")
        problem = range_problem(mn, mx)
        if problem:
            raise self.fail(f"{what} {problem}")
        return mn, mx

    def finite_range(self, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> tuple[float, float]:
        """Read a (min, max) pair and require finite ends with min <= max."""
        mn, mx = self.scalar(mn_arr, f"{what} min"), self.scalar(mx_arr, f"{what} max")
        if not (math.isfinite(mn) and math.isfinite(mx)) or mn > mx:
            raise self.fail(f"{what} range [{mn}, {mx}] is not a finite range with min <= max")
        return mn, mx


class Kernel:
    """Base class: subclasses implement :meth:`compute`.

    ``compute(ctx, *inputs)`` returns a tuple of numpy arrays (4-D for
    tensors, ``[1,1,1,1]`` for scalars). The base class checks counts and
    dtypes against the op's :class:`OpSpec` and wraps unexpected numpy errors
    into :class:`OpError` with the node named.
    """

    ops: ClassVar[tuple[str, ...]] = ()

    def __init__(self, op: str):
        self.op = op
        spec = get_spec(op)
        if spec is None:
            raise HexnnError(f"kernel registered for {op}, which no op document names")
        self.spec: OpSpec = spec
        # allowed numpy dtypes of each fixed output slot, derived once (checked on every call)
        self._out_dtypes = [None if (d := slot.numpy_dtypes()) is None else frozenset(d) for slot in spec.outputs]
        self._fixed_outputs = spec.min_outputs == spec.max_outputs

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """Compute the outputs; overridden by every kernel."""
        raise HexnnError(f"kernel class {type(self).__name__} does not implement compute()")

    def check_inputs(self, ctx: KernelContext, inputs: Sequence[Any]) -> None:
        """Input count within the spec's bounds."""
        s = self.spec
        n = len(inputs)
        if n < s.min_inputs or (s.max_inputs is not None and n > s.max_inputs):
            hi = "n" if s.max_inputs is None else str(s.max_inputs)
            raise ctx.fail(f"got {n} inputs, the op takes {s.min_inputs}..{hi}")

    def check_outputs(self, ctx: KernelContext, outputs: Sequence[Any]) -> None:
        """Output count within bounds (and equal to the node's when known); dtypes per spec."""
        s = self.spec
        n = len(outputs)
        if n < s.min_outputs or (s.max_outputs is not None and n > s.max_outputs):
            raise ctx.fail(f"kernel produced {n} outputs, the op gives {s.min_outputs}..{s.max_outputs}")
        if ctx.n_outputs is not None and n != ctx.n_outputs:
            raise ctx.fail(f"kernel produced {n} outputs, the node declares {ctx.n_outputs}")
        if not self._fixed_outputs or len(s.outputs) != n:
            return  # variadic outputs: slot positions are not fixed, the kernel answers for them
        for i, (arr, allowed) in enumerate(zip(outputs, self._out_dtypes)):
            if allowed is not None and isinstance(arr, np.ndarray) and arr.dtype not in allowed:
                slot = s.outputs[i]
                raise ctx.fail(f"output {i} ({slot.name}) has dtype {arr.dtype}, the op gives {'|'.join(slot.types)}")

    def __call__(self, ctx: KernelContext, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        self.check_inputs(ctx, inputs)
        try:
            outputs = self.compute(ctx, *inputs)
        except HexnnError:
            raise
        except (ValueError, IndexError, TypeError, ZeroDivisionError, OverflowError, FloatingPointError) as exc:
            raise ctx.fail(f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(outputs, tuple):
            outputs = tuple(outputs)
        self.check_outputs(ctx, outputs)
        return outputs


def register(*names: str) -> Callable[[type[Kernel]], type[Kernel]]:
    """Class decorator: register a kernel class under the given op names."""

    def deco(cls: type[Kernel]) -> type[Kernel]:
        for name in names:
            if name in _KERNELS:
                raise HexnnError(f"two kernels registered for {name}")
            if get_spec(name) is None:
                raise HexnnError(f"kernel {cls.__name__} registered for {name}, which no op document names")
            _KERNELS[name] = cls
        cls.ops = tuple(cls.ops) + names
        return cls

    return deco


def _load_kernels() -> None:
    # Importing the package registers every kernel module.
    import hexnn_import.ops.kernels  # noqa: F401


def has_kernel(op: str) -> bool:
    """True when a kernel is registered for ``op``."""
    _load_kernels()
    return op in _KERNELS


def kernel_names() -> list[str]:
    """Sorted names of every op with a kernel."""
    _load_kernels()
    return sorted(_KERNELS)


def get_kernel(op: str, node: str = "?") -> Kernel:
    """Instantiate the kernel for ``op``; error naming the node if none exists."""
    _load_kernels()
    cls = _KERNELS.get(op)
    if cls is None:
        raise OpError(node, op, "no kernel for this op")
    return cls(op)


def run_op(op: str, inputs: Sequence[Any], padding: int = PAD_NA, state: dict | None = None,
           n_outputs: int | None = None, node: str = "run_op") -> tuple[np.ndarray, ...]:
    """Evaluate one op alone (for tests): ``run_op("Requantize_32to8", [...])``.

    Python scalars and lists are turned into arrays: floats as float32
    ``[1,1,1,1]`` scalars; arrays pass through unchanged.
    """
    arrs = [_as_array(x) for x in inputs]
    ctx = KernelContext(node=node, op=op, padding=int(padding), state=state if state is not None else {},
                        n_outputs=n_outputs)
    return get_kernel(op, node)(ctx, arrs)


def _as_array(x: Any) -> Any:
    if isinstance(x, np.ndarray) or not isinstance(x, (int, float, list, tuple)):
        return x
    if isinstance(x, float) or (isinstance(x, (list, tuple)) and any(isinstance(v, float) for v in x)):
        return np.asarray(x, dtype=np.float32).reshape((1, 1, 1, -1))
    return np.asarray(x, dtype=np.int32).reshape((1, 1, 1, -1))
