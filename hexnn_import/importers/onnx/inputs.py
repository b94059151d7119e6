"""Fixed input shapes of an ONNX model: ``--input-shape``, defaults for dynamic dims, and notes (issue 18).

Converters leave input dimensions open in three ways: a symbolic
``dim_param`` (torch.onnx.export's ``dynamic_axes``), ``dim_value: -1``
(Paddle2ONNX), no value, or ``dim_value: 0`` on the batch axis (0 elsewhere
is a real empty dimension, refused later as such). The importer needs every
dimension, so each open one is fixed before shape inference:

* a shape the user gives (``input_shapes`` / ``--input-shape NAME=...``)
  wins; it must agree with the model's static dimensions except the batch
  (dim 0): a user evaluating a data set runs batches on a batch-1 export;
* every other open dimension is settled by :mod:`onnx.open_dims`: the batch
  becomes 1, a ``dim_param`` shared with a known dimension takes its size,
  the model's metadata (ultralytics ``imgsz``) or its first layers imply
  the rest (:mod:`onnx.implied_shapes`; issue 34);
* if any dimension is left open, one error names every input at once, with
  a ``--input-shape`` line to paste (``?`` only where nothing implies a size).

Each defaulted input adds one note (``graph.meta["notes"]``, printed by the
CLI summary) saying what was chosen, why, and how to change it.
"""
from __future__ import annotations

from typing import Mapping

import onnx

from hexnn_import.errors import InputDataError, ModelFormatError, UnsupportedOpsError
from hexnn_import.importers.onnx.reader import printable
from hexnn_import.importers.onnx.open_dims import Plan
from hexnn_import.importers.onnx.open_dims import is_open as _is_open


def _given(vi: onnx.ValueInfoProto, want: tuple[int, ...], label: str) -> None:
    """Write a user-given shape into ``vi`` (InputDataError when it contradicts a static dimension)."""
    dims = vi.type.tensor_type.shape.dim
    spec = f"--input-shape {printable(vi.name)}={','.join(map(str, want))}"
    if len(want) != len(dims):
        raise InputDataError(f"{label}: --input-shape {printable(vi.name)} gives {len(want)} dimensions, "
                             f"the input has {len(dims)}")
    if any(int(v) <= 0 for v in want):
        raise InputDataError(f"{label}: {spec}: every dimension must be positive")
    for k, (d, v) in enumerate(zip(dims, want)):
        if k > 0 and not _is_open(d, k) and d.dim_value != v:
            raise InputDataError(f"{label}: {spec} conflicts with the fixed dimension {d.dim_value} "
                                 f"(axis {k}; only the batch, axis 0, may differ)")


def _set(vi: onnx.ValueInfoProto, values: list[int]) -> None:
    for d, v in zip(vi.type.tensor_type.shape.dim, values):
        d.ClearField("dim_param")
        d.dim_value = int(v)


def fix_input_shapes(model: onnx.ModelProto, shapes: Mapping[str, tuple[int, ...]],
                     label: str) -> tuple[list[str], dict[str, int]]:
    """Fix every graph input's shape in place (module doc); returns (notes, {input: batch > 1 given by the user})."""
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    names = {i.name for i in inputs}
    unknown = sorted(set(shapes) - names)
    if unknown:
        raise InputDataError(f"{label}: --input-shape names {unknown}; the model's inputs are "
                             f"{[printable(n) for n in sorted(names)]}")
    for vi in inputs:
        if not vi.type.HasField("tensor_type"):
            raise UnsupportedOpsError("ONNX", {"graph input of a non-tensor type (sequence, map, optional)":
                                              [printable(vi.name)]})
    batches: dict[str, int] = {}
    known: dict[str, int] = {}  # dim_param -> value, from static / given dimensions
    for vi in inputs:
        dims = vi.type.tensor_type.shape.dim
        want = shapes.get(vi.name)
        if want is not None:
            _given(vi, tuple(int(v) for v in want), label)
            for d, v in zip(dims, want):
                if d.dim_param:
                    known.setdefault(d.dim_param, int(v))
            if want and int(want[0]) > 1:
                batches[vi.name] = int(want[0])
            _set(vi, [int(v) for v in want])
    plan = Plan(model, [vi for vi in inputs if vi.name not in shapes], known)
    missing = plan.resolve()
    if missing or plan.rankless:
        raise ModelFormatError(plan.missing_message(label))
    notes = []
    for vi in plan.inputs:
        if plan.said[vi.name]:
            example = ",".join(map(str, plan.example(vi)))
            _set(vi, plan.values[vi.name])  # type: ignore[arg-type]
            notes.append(f"input '{printable(vi.name)}': {', '.join(plan.said[vi.name])} "
                         f"(change with --input-shape {printable(vi.name)}={example})")
    _forget_stale_shapes(model)
    return notes, batches


def _forget_stale_shapes(model: onnx.ModelProto) -> None:
    """Drop the declared output shapes: they hold the open dims just fixed (inference redoes them)."""
    for vi in model.graph.output:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")


__all__ = ["fix_input_shapes"]
