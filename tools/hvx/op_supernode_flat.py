"""Supernode_8x8p32to8 / Supernode_8x8p8to8 (flat) on nnlib's device code (op_supernode.c, whole).

nnlib registers the flat supernodes with op_supernode.c's ``supernode_check_ref`` and ``supernode_execute_hvx``
(padding and im2col in C / asm ``im2col33322_hvx``, the asm ``gvconvsum2dbbb_asm`` / ``gvconv2dbbb_asm`` /
``gvmsumb_asm`` products with their bias / requantize output stage, its own range retry). prepare.c turns them
into the _d32 node in a graph; the flat op is what a graph without that conversion runs. The whole file is
compiled unedited through ``harness_supernode.c`` with ``HX_FLAT``; cases, I/O and the comparison are
``op_supernode``'s (input and output plain).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_supernode as sn

NAME = "supernode_flat"
OPS = ("Supernode_8x8p32to8", "Supernode_8x8p8to8")
SOURCE = "hexagon/ops/src/op_supernode.c"
FUNCTIONS = ["supernode_check_ref", "supernode_execute_hvx", "gvconvsum2dbbb_asm", "gvconv2dbbb_asm", "gvmsumb_asm",
             "im2col33322_hvx", "fast_im2col_co", "im2col_full", "pad2d", "transpack", "unpad2d_bytes"]
C_FILES = ["hexagon/src/im2col_o.c", "hexagon/src/im2col_full.c", "hexagon/src/pad2d.c",
           "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("gvconv2dbbb_h", "gvconvsum2dbbb_h", "gvmsumb_h", "im2col33322_h",
                                          "gemsumb_h", "gemmpybbw_h", "gemaddvvm_h", "gemsuma_h", "vmemset_h",
                                          "vmemcpy_h", "vmemcpy_2d_h", "vmemset_2d_h", "nn_os_fast")]
HEADERS: list[str] = []
HARNESS = "harness_supernode.c"
INCLUDES = sn.INCLUDES


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, ``HX_FLAT``, then the whole op_supernode.c."""
    return f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n#define HX_FLAT 1\n#include "{nnlib / SOURCE}"\n'


def _tall(rng: np.random.Generator, t: int) -> dict:
    """A node whose output has 4 to 10 rows (the HVX path): depths that make the filter values a multiple of 16
    (the im2col-free and ``fast_im2col_co`` layouts) or not (``im2col_full``), one to three 32-channel blocks,
    equal strides but every 9th case (which the engine refuses)."""
    c = sn._case(rng, t)
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sw = int(rng.integers(1, 3))
    sh = sw if t % 9 else 3 - sw
    oh = int(rng.integers(4, 11))
    din = int(rng.choice([16, 32, 48])) if t % 2 else int(rng.integers(1, 41))
    dout = int(rng.integers(1, 80))
    if c["pad"] == sn.PAD_SAME:
        h, w = (oh - 1) * sh + 1 + int(rng.integers(0, sh)), int(rng.integers(1, 13))
    else:
        h, w = (oh - 1) * sh + fh + int(rng.integers(0, sh)), int(rng.integers(fw, fw + 10))
    b = 2 if t % 11 == 5 else 1
    c.update(b=b, h=h, w=w, din=din, fh=fh, fw=fw, dout=dout, sh=sh, sw=sw, vtcm=0, n_in=12, scales=None)
    c["x"] = rng.integers(0, 256, (b, h, w, din), dtype=np.uint8)
    c["f"] = rng.integers(0, 256, (fh, fw, din, dout), dtype=np.uint8)
    c["bias"] = (np.resize(c["bias"], dout) if c["bias32"] else rng.integers(0, 256, dout, dtype=np.uint8))
    return c


def tall_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """``n`` random nodes with 4 output rows and more (:func:`_tall`), after op_supernode's."""
    return [_tall(rng, t) for t in range(n)]


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """op_supernode's edge and random cases (no VTCM: the flat op does not use it), then as many tall ones."""
    cases = sn.make_cases(rng, n)
    for c in cases:
        c["vtcm"] = 0
    return cases + tall_cases(rng, n)


pack, unpack = sn.pack, sn.unpack


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine's flat device code reproduces bit for bit - codes and range - or both refuse, first
    difference): op_supernode's comparison with ``run_op`` standing for ``run_flat_device`` meanwhile."""
    import hexnn_import.ops.registry as reg
    from hexnn_import.ops.kernels.supernode_flat_device import run_flat_device

    run_op, reg.run_op = reg.run_op, run_flat_device
    try:
        return sn.compare(gold, OPS)
    finally:
        reg.run_op = run_op
