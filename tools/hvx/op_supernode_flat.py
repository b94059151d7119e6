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


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """op_supernode's edge and random cases (no VTCM: the flat op does not use it)."""
    cases = sn.make_cases(rng, n)
    for c in cases:
        c["vtcm"] = 0
    return cases


pack, unpack = sn.pack, sn.unpack


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    return sn.compare(gold, OPS)
