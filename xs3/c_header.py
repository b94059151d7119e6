"""The C header of an XS3 export: every lowered layer's weights and BSO as lib_nn-layout C arrays.

Weights keep their kernel layout as a multi-dimensional ``int8_t`` array
(word-aligned, as lib_nn requires); the BSO is an array of lib_nn's
``nn_bso_block_t`` (``nn_bso.h``: seven rows of sixteen ``data16_t``, i.e.
``uint16_t``), whose memory is exactly the ``(groups, 7, 16)`` int16 tensor
of lib_nn note 5, written as unsigned 16-bit patterns. Shapes, window and
zero point are ``#define``\\ s.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from hexnn_import.printable import c_comment_text
from hexnn_import.xs3.bso import BSO_ROWS
from hexnn_import.xs3.legalize import LoweredLayer


_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


def c_ident(text: str) -> str:
    """A C identifier from free text: non [A-Za-z0-9_] become '_', no leading digit (remembered: a network header
    asks for the same parameter and kernel names once per layer)."""
    ident = _IDENTS.get(text)
    if ident is None:
        ident = _NOT_IDENT.sub("_", text).strip("_") or "x"
        ident = f"l_{ident}" if ident[0].isdigit() else ident
        if len(_IDENTS) >= 65536:
            _IDENTS.clear()
        _IDENTS[text] = ident
    return ident


_IDENTS: dict[str, str] = {}


def c_array_body(arr: np.ndarray, indent: str = "  ") -> str:
    """Nested brace initializer of an integer array, 32 values per line at the innermost level."""
    if arr.ndim == 1:
        vals = [str(v) for v in arr.tolist()]
        lines = [", ".join(vals[i:i + 32]) for i in range(0, len(vals), 32)] or [""]
        return "{" + (",\n" + indent).join(lines) + "}"
    inner = [c_array_body(sub, indent + "  ") for sub in arr]
    return "{\n" + indent + (",\n" + indent).join(inner) + "\n" + indent[:-2] + "}"


def bso_blocks(bso: np.ndarray) -> str:
    """``nn_bso_block_t`` initializers: one block per 16 channels, rows as uint16 bit patterns."""
    blocks = []
    for g, block in enumerate(np.asarray(bso, dtype=np.int16).view(np.uint16)):
        rows = [f"    /* {name} */ {{{', '.join(str(v) for v in row.tolist())}}}" for name, row in zip(BSO_ROWS, block)]
        blocks.append(f"  {{ /* channels {16 * g}..{16 * g + 15} */\n" + ",\n".join(rows) + "\n  }")
    return "{\n" + ",\n".join(blocks) + "\n}"


def layer_defines(prefix: str, desc: dict[str, Any]) -> list[str]:
    """``#define``\\ s of a layer's kernel name, kernel-facing shapes, window and zero point."""
    p = prefix.upper()
    lines = [f'#define {p}_KERNEL "{desc["kernel"]}"']
    x, y = desc["input_shape"], desc["output_shape"]
    if "window" in desc:
        for label, dims in (("X", x), ("Y", y)):
            lines += [f"#define {p}_{label}_{n} {v}" for n, v in zip(("HEIGHT", "WIDTH", "CHANNELS"), dims[1:])]
        w = desc["window"]
        lines += [f"#define {p}_K_HEIGHT {w['shape'][0]}", f"#define {p}_K_WIDTH {w['shape'][1]}",
                  f"#define {p}_WINDOW_START_ROW {w['start'][0]}", f"#define {p}_WINDOW_START_COL {w['start'][1]}",
                  f"#define {p}_STRIDE_VERT {w['stride'][0]}", f"#define {p}_STRIDE_HORI {w['stride'][1]}",
                  f"#define {p}_ZERO_POINT {desc['zero_point']}"]
    else:
        lines += [f"#define {p}_N {desc['weights_shape'][1]}", f"#define {p}_M {desc['weights_shape'][0]}",
                  f"#define {p}_ROWS {x[0]}"]
    return lines


def layer_block(prefix: str, layer: LoweredLayer, note: str) -> str:
    """One layer's comment, defines, weights array and BSO array."""
    desc = layer.describe()
    dims = "".join(f"[{d}]" for d in layer.weights.shape)
    parts = [f"/* ---- {note} ---- */", *layer_defines(prefix, desc),
             f"static const int8_t {prefix}_weights{dims} __attribute__((aligned(4))) = "
             f"{c_array_body(np.asarray(layer.weights))};",
             f"static const nn_bso_block_t {prefix}_bso[{layer.bso.shape[0]}] __attribute__((aligned(4))) = "
             f"{bso_blocks(layer.bso)};", ""]
    return "\n".join(parts)


def render_header(model_name: str, model_id: str, layers: list[tuple[str, LoweredLayer, str]]) -> str:
    """The whole header: ``layers`` as (C prefix, lowered layer, comment) in model order."""
    guard = c_ident(model_id).upper() + "_XS3_H_"
    head = [f"/* XS3 (lib_nn) kernel tensors of {c_comment_text(model_name)}, written by hexnn-import xs3-export.",
            " * Weights are in each kernel's layout; BSO blocks follow lib_nn note 5 (nn_bso_block_t,",
            " * rows as uint16 bit patterns of two's-complement int16 values). */",
            f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", '#include "nn_bso.h"', ""]
    body = [layer_block(prefix, layer, note) for prefix, layer, note in layers]
    return "\n".join(head + body + [f"#endif /* {guard} */", ""])
