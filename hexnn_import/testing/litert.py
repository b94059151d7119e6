"""Run a TFLite model with LiteRT (``ai_edge_litert``), the tests' reference runtime.

A thin wrapper over ``ai_edge_litert.interpreter.Interpreter`` so a test can
write ``run_litert(model, {"x": x})`` and get the outputs back as numpy
arrays, in the order of the subgraph's outputs (Polygraphy-style runner,
docs/architecture.md "Models learned from").
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from hexnn_import.errors import InputDataError
# the runtime wrapper lives in the package (compare and xs3-export use it); re-exported for the tests
from hexnn_import.litert_runtime import (KERNELS, MAX_WHY, PROBE_TIMEOUT_S, RuntimeLoadError,  # noqa: F401
                                         crash_signal, invoke, make_interpreter, runtime_why)


def _feed(interp: Any, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> None:
    details = interp.get_input_details()
    if isinstance(inputs, Mapping):
        by_name = {d["name"]: d for d in details}
        unknown = sorted(set(inputs) - set(by_name))
        missing = sorted(set(by_name) - set(inputs))
        if unknown or missing:
            raise InputDataError(f"LiteRT inputs: unknown {unknown}, missing {missing}")
        pairs = [(by_name[n], v) for n, v in inputs.items()]
    else:
        if len(inputs) != len(details):
            raise InputDataError(f"LiteRT model takes {len(details)} inputs, got {len(inputs)}")
        pairs = list(zip(details, inputs))
    resized = False
    for d, value in pairs:  # another batch (same rank and dtype): resize, as LiteRT allows
        arr = np.asarray(value)
        if (tuple(arr.shape) != tuple(d["shape"]) and arr.ndim == len(d["shape"]) and arr.dtype == d["dtype"]
                and tuple(arr.shape[1:]) == tuple(d["shape"][1:])):
            interp.resize_tensor_input(d["index"], list(arr.shape))
            resized = True
    if resized:
        try:
            interp.allocate_tensors()
        except (RuntimeError, ValueError) as exc:
            raise RuntimeLoadError(f"LiteRT cannot run the model at the fed batch: {runtime_why(exc)}") from exc
        fresh = {d["index"]: d for d in interp.get_input_details()}
        pairs = [(fresh[d["index"]], v) for d, v in pairs]
    for d, value in pairs:
        arr = np.asarray(value)
        if tuple(arr.shape) != tuple(d["shape"]) or arr.dtype != d["dtype"]:
            raise InputDataError(
                f"LiteRT input {d['name']}: expected {tuple(d['shape'])} {np.dtype(d['dtype']).name}, "
                f"got {arr.shape} {arr.dtype.name}")
        interp.set_tensor(d["index"], arr)


def run_litert(
    model_bytes: bytes,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    num_threads: int = 1,
    as_dict: bool = False,
    kernels: str = "builtin",
) -> list[np.ndarray] | dict[str, np.ndarray]:
    """Run the model once and return its outputs (list in output order, or dict by name).

    ``inputs`` is a dict by input tensor name or a list in the subgraph's
    input order; shapes and dtypes must match exactly.  ``kernels`` as in
    :func:`make_interpreter`.
    """
    interp = make_interpreter(model_bytes, num_threads, kernels)
    _feed(interp, inputs)
    invoke(interp)
    outs = [(d["name"], np.array(interp.get_tensor(d["index"]))) for d in interp.get_output_details()]
    return dict(outs) if as_dict else [v for _, v in outs]
