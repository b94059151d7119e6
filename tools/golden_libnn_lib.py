"""ctypes calls into a build of lib_nn's C kernels through the oracle's shim (harness/shim.c), for golden_libnn.py.

The shim's flat entry points build ``nn_image_params_t`` / ``nn_window_params_t``
and call ``conv2d_deep``, ``conv2d_shallowin``, ``conv2d_1x1``,
``conv2d_depthwise``, ``fully_connected_8`` and ``fully_connected_16`` on one
image (one input vector for the fully-connected kernels).
"""
from __future__ import annotations

import argparse
import ctypes
from pathlib import Path
from typing import Any

import numpy as np

def golden_parser(doc: str, per_mode: str = "random cases per kernel and mode") -> argparse.ArgumentParser:
    """The options every lib_nn golden tool takes: the oracle folder, ``--out`` (tests/data/golden/libnn),
    ``--seed`` and ``--per-mode`` (12); a tool adds its own to the parser."""
    root = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("oracle", type=Path, help="the lib_nn oracle folder (src/lib_nn, harness/)")
    ap.add_argument("--out", type=Path, default=root / "tests/data/golden/libnn")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-mode", type=int, default=12, help=per_mode)
    return ap


#: the C reads up to 32 bytes past a row or vector (VLDC of a tail): give every input some slack
_SLACK = 256


def _buf(a: np.ndarray) -> np.ndarray:
    b = np.zeros(a.size + _SLACK, a.dtype)
    b[:a.size] = a.ravel()
    return b


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return a.ctypes.data_as(ctypes.c_void_p)


class LibNN:
    """One build of lib_nn (``liblibnn_ref.so``); :meth:`run` computes a golden case's output."""

    def __init__(self, path: Path):
        self.lib = ctypes.CDLL(str(path))

    def run(self, case: dict[str, Any]) -> np.ndarray:
        """The kernel's output for ``case`` (keys ``x``, ``k``, ``bso``, ``meta``)."""
        kernel = case["meta"]["kernel"]
        if kernel.startswith("fully_connected"):
            return np.stack([self._fc(row, case["k"], case["bso"], kernel) for row in case["x"]])
        if kernel == "conv2d_1x1":
            return self._conv1x1(case["x"], case["k"], case["bso"])
        return self._conv(kernel, case)

    def _conv(self, kernel: str, case: dict[str, Any]) -> np.ndarray:
        m = case["meta"]
        _, xh, xw, xc = case["x"].shape
        (oh, ow), yc = m["out_hw"], m["y_c"]
        (kh, kw), (r0, c0), (sv, sh) = m["window"]["shape"], m["window"]["start"], m["window"]["stride"]
        y = np.full(oh * ow * yc + 64, 0x55, np.int8)
        x, k, bso = _buf(case["x"]), _buf(case["k"]), np.ascontiguousarray(case["bso"], np.int16)
        args = [_ptr(y), _ptr(x), _ptr(k), _ptr(bso), ctypes.c_int(int(m["zero_point"])), xh, xw, xc, oh, ow]
        if kernel == "conv2d_depthwise":
            self.lib.shim_conv2d_depthwise(*args, kh, kw, r0, c0, sv, sh)
        else:
            fn = self.lib.shim_conv2d_deep if kernel == "conv2d_deep" else self.lib.shim_conv2d_shallowin
            fn(*args, yc, kh, kw, r0, c0, sv, sh)
        return y[:oh * ow * yc].reshape(1, oh, ow, yc)

    def _conv1x1(self, x: np.ndarray, k: np.ndarray, bso: np.ndarray) -> np.ndarray:
        _, h, w, xc = x.shape
        yc = k.shape[0]
        y = np.zeros(h * w * yc + 64, np.int8)
        xb, kb, bb = _buf(x), _buf(k), np.ascontiguousarray(bso, np.int16)
        self.lib.shim_conv2d_1x1(_ptr(y), _ptr(xb), _ptr(kb), _ptr(bb), h, w, xc, yc)
        return y[:h * w * yc].reshape(1, h, w, yc)

    def _fc(self, row: np.ndarray, w: np.ndarray, bso: np.ndarray, kernel: str) -> np.ndarray:
        m, n = w.shape
        y = np.zeros(m + 32, np.int8 if kernel == "fully_connected_8" else np.int16)
        wb, xb, bb = _buf(w), _buf(row), np.ascontiguousarray(bso, np.int16)
        fn = self.lib.shim_fc8 if kernel == "fully_connected_8" else self.lib.shim_fc16
        fn(_ptr(y), _ptr(wb), _ptr(xb), _ptr(bb), n, m)
        return y[:m]
