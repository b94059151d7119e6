"""LiteRT (``ai_edge_litert``) as the toolkit's reference runtime for ``.tflite`` files: loading, running,
and its errors as the project's own.

``compare`` and ``xs3-export`` hand a user's file to LiteRT. A file LiteRT refuses becomes a
:class:`RuntimeLoadError` (one line, exit 2, naming the model), and a file that would crash LiteRT's
C++ is first tried in a forked child (:func:`crash_signal`). The tests' helpers
(:mod:`hexnn_import.testing.litert`: ``run_litert``) build on this module.
"""
from __future__ import annotations

import faulthandler
import hashlib
import os
import re
import signal
import time
from typing import Any

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.optional import require

KERNELS = ("builtin", "reference", "auto")
#: longest runtime message kept in an error line (LiteRT can print a whole op's prepare log)
MAX_WHY = 300


class RuntimeLoadError(ModelFormatError, RuntimeError):
    """A reference runtime (LiteRT, onnxruntime) refused to load or run a model that the importer accepted.

    A :class:`ModelFormatError` for the CLI (one line, exit 2), and still a ``RuntimeError`` for code that
    caught LiteRT's own exception before (trying another kernel set on a model one cannot run)."""


def runtime_why(exc: BaseException) -> str:
    """A runtime's exception text on one line: LiteRT joins several lines (``conv.cc:417 ... failed to
    prepare.``), onnxruntime prefixes ``[ONNXRuntimeError] : 2 : INVALID_ARGUMENT :``; lines are joined with
    ``"; "``, blanks collapsed, and the text cut at :data:`MAX_WHY` characters."""
    text = re.sub(r"(?<=\S)(?=Node number \d+ )", "\n", str(exc))  # LiteRT glues its op line on without a break
    parts = [" ".join(line.split()) for line in text.splitlines()]
    text = "; ".join(p.rstrip(".") for p in parts if p.rstrip(".")) or type(exc).__name__
    return text if len(text) <= MAX_WHY else text[:MAX_WHY - 3] + "..."


def ort_quiet_run_options(ort: Any) -> Any:
    """onnxruntime ``RunOptions`` that log nothing below fatal (issue 38, finding 8): a failing run printed its
    own coloured ``[E:onnxruntime:...]`` line before the project's error, which carries the same message
    (:func:`runtime_why`). Sessions made for the user's model take these on every ``run``."""
    options = ort.RunOptions()
    options.log_severity_level = 4
    return options


#: (sha1 of the model, kernels) -> the signal that killed LiteRT loading it in a child, or None
_PROBED: dict[tuple[str, str], int | None] = {}
#: a probe that takes longer than this is abandoned (the model is then loaded in-process as before)
PROBE_TIMEOUT_S = 120.0


def crash_signal(model_bytes: bytes, kernels: str = "builtin") -> int | None:
    """The signal that kills LiteRT loading and running ``model_bytes`` (zeros in), tried in a forked child;
    None when the child survives (whatever Python error it met), or where ``os.fork`` does not exist.

    A damaged file that the importer accepts can still crash LiteRT's C++ (an op input index of -1 where
    the kernel needs a tensor): no Python ``except`` catches that, so the commands that hand a user's file
    to LiteRT (``compare``, ``xs3-export``, ``run --xs3``) try it in a child first. Cached per model."""
    key = (hashlib.sha1(bytes(model_bytes)).hexdigest(), kernels)
    if key in _PROBED or not hasattr(os, "fork"):
        return _PROBED.get(key)
    pid = os.fork()
    if pid == 0:  # the child: load, allocate, invoke on zeros; only its survival matters
        faulthandler.disable()  # a crash here is the expected answer, not a traceback to print
        try:
            interp = make_interpreter(model_bytes, kernels=kernels)
            for d in interp.get_input_details():
                interp.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
            interp.invoke()
        except BaseException:  # noqa: BLE001 - Python errors are reported in the parent
            pass
        os._exit(0)
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.005)
    _PROBED[key] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    return _PROBED[key]


def make_interpreter(model_bytes: bytes, num_threads: int = 1, kernels: str = "builtin",
                     preserve_all_tensors: bool = False, model: str = "the model", probe: bool = False) -> Any:
    """Return an allocated LiteRT ``Interpreter`` for ``model_bytes``.

    ``kernels`` picks the op resolver: "builtin" = TFLite's own optimized
    kernels with no default delegate (the documented integer arithmetic),
    "reference" = the reference kernels (``BUILTIN_REF``), "auto" = LiteRT's
    default, which hands supported ops to the XNNPACK delegate (and the one
    that resolves MediaPipe's custom ops: a model using them falls back to it).
    ``preserve_all_tensors`` keeps intermediate tensors readable after
    ``invoke()`` (for layer-by-layer comparisons). A model LiteRT refuses
    (not a valid flatbuffer, an op that fails to prepare) raises
    :class:`RuntimeLoadError` naming ``model``, on one line; with ``probe`` so does a model that
    crashes LiteRT (:func:`crash_signal`), before it is loaded in this process.
    """
    require("ai_edge_litert", f"running {model} in LiteRT")
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    resolvers = {"builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                 "reference": OpResolverType.BUILTIN_REF, "auto": OpResolverType.AUTO}
    if kernels not in resolvers:
        raise ValueError(f"kernels must be one of {KERNELS}, got {kernels!r}")
    resolver = resolvers[kernels]
    if probe:
        sig = crash_signal(model_bytes, kernels)
        if sig is not None:
            raise RuntimeLoadError(f"LiteRT crashes loading {model} (signal {sig}: "
                                   f"{signal.Signals(sig).name}); the file is damaged")
    try:
        interp = Interpreter(model_content=bytes(model_bytes), num_threads=num_threads,
                             experimental_op_resolver_type=resolver,
                             experimental_preserve_all_tensors=preserve_all_tensors)
        interp.allocate_tensors()
    except (RuntimeError, ValueError) as exc:
        # MediaPipe's custom ops (Convolution2DTransposeBias, ...) are registered in LiteRT's default
        # resolver only: fall back to it for such a model
        if isinstance(exc, RuntimeError) and "custom op" in str(exc) and kernels != "auto":
            return make_interpreter(model_bytes, num_threads, "auto", preserve_all_tensors, model)
        raise RuntimeLoadError(f"LiteRT cannot load {model}: {runtime_why(exc)}") from exc
    return interp


def invoke(interp: Any, model: str = "the model") -> None:
    """``interp.invoke()``; a kernel's failure (a reshape whose sizes differ...) as :class:`RuntimeLoadError`."""
    try:
        interp.invoke()
    except (RuntimeError, ValueError) as exc:
        raise RuntimeLoadError(f"LiteRT failed running {model}: {runtime_why(exc)}") from exc
