"""DepthwiseSupernode_8x8p32to8_d32 / _8x8p8to8_d32 on nnlib's device code (op_dwise_snode_8bit.c, whole).

nnlib registers the d32 depthwise supernodes with ``dwise_supernode_check`` (``dwise_rearrange_weights``,
``dwise_sumb``, ``find_k_kinv``, ``setup_initial_output_range``) and ``dwise_supernode_execute``
(``dwise_supernode_recalculate_strategy``: the kernel ``dwconv2dbbb_s{1,2}_{3x3,3xN,5xN,7xN}_asm`` chosen by
stride and filter width, with its per-channel requantize and range; ``supernode_execute_strategy``; its own retry
loop, at most five computations). The whole file is compiled unedited with nnlib's ``nn_graph.h`` and the assembly,
through the Supernode harness (``harness_supernode.c`` with ``HX_DWISE``; cases, I/O and the comparison are
``op_supernode``'s, ``dout`` being the depth multiplier). The device takes filter widths 3, 5, 7, heights >= 2 and
stride widths 1-2 (``dwise_supernode_recalculate_strategy`` refuses or leaves other shapes without a kernel); the
cases keep to those. The engine's op is its flat twin on the logical data.

With a depth multiplier of 2 the device never writes the output's last d32 chunk (channels 32-63 of 2 chunks,
96-127 of 4; the whole output when the doubled depth fits one chunk): 21 of the 625 runs. The harness zeroes the
output buffer, so those bytes read 0 and a recording is byte-reproducible; before, a reused buffer showed an
earlier case's bytes there, which moved with the emulated stack's addresses (two recordings from executables at
different paths differed in 4 codes).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_supernode as sn

NAME = "dwise"
OPS = ("DepthwiseSupernode_8x8p32to8_d32", "DepthwiseSupernode_8x8p8to8_d32")
SOURCE = "hexagon/ops/src/op_dwise_snode_8bit.c"
FUNCTIONS = ["dwise_supernode_check", "dwise_rearrange_weights", "dwise_sumb", "dwise_supernode_execute",
             "dwise_supernode_recalculate_strategy", "dwise_supernode_execute_conv_work", "fill_info_minmax_basics",
             "fill_bias_buf", "supernode_execute_strategy", "find_k_kinv", "setup_initial_output_range"]
KERNELS = ["dwconv2dbbb_s1_3x3", "dwconv2dbbb_s1_3xN", "dwconv2dbbb_s1_5xN", "dwconv2dbbb_s1_7xN",
           "dwconv2dbbb_s2_3x3", "dwconv2dbbb_s2_3xN", "dwconv2dbbb_s2_5xN", "dwconv2dbbb_s2_7xN"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{k}_h.S" for k in KERNELS] + [
    f"hexagon/asm_src/{a}.S" for a in ("vrmaxmin_h", "nn_os_fast", "padzap_d32", "vmemset_nt_h")]
HEADERS: list[str] = []
HARNESS = "harness_supernode.c"
INCLUDES = sn.INCLUDES


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, three helpers from src/ verbatim, ``HX_DWISE``, then the whole op_dwise_snode_8bit.c."""
    return (f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["memset_32", "nn_tensor_addressing_d32"])
            + hvx_build.extract_functions(nnlib / "hexagon/src/quantize.c", ["adjust_minmax_for_zero_with_constraints"])
            + f'#define HX_DWISE 1\n#include "{nnlib / SOURCE}"\n')


def _case(rng: np.random.Generator, t: int) -> dict:
    """A Supernode case reshaped to a depthwise node: filter (fh, fw, din, dmul), bias and scales din*dmul."""
    c = sn._case(rng, t)
    fh, fw, sw = int(rng.integers(2, 5)), int(rng.choice([3, 5, 7])), int(rng.integers(1, 3))
    din, dmul = int(rng.integers(1, 70)), 2 if t % 10 == 9 else 1
    b, pad = c["b"], c["pad"]
    h = int(rng.integers(1, 5)) if pad == sn.PAD_SAME else int(rng.integers(fh, fh + 3))
    w = int(rng.integers(1, 10)) if pad == sn.PAD_SAME else int(rng.integers(fw, fw + 8))
    od = din * dmul
    c.update(h=h, w=w, din=din, fh=fh, fw=fw, dout=dmul, sw=sw, vtcm=0,
             x=rng.integers(0, 256, (b, h, w, din), dtype=np.uint8),
             f=rng.integers(0, 256, (fh, fw, din, dmul), dtype=np.uint8))
    c["bias"] = (rng.normal(0, 2.0 ** rng.integers(4, 20), od).astype(np.int32) if c["bias32"]
                 else rng.integers(0, 256, od, dtype=np.uint8))
    if c["scales"] is not None:
        c["scales"] = rng.uniform(1.0 / 64, 1.0, od).astype(np.float32)
    return c


def _edges(rng: np.random.Generator) -> list[dict]:
    """A constant filter, 32 / 33 / 64 channels, narrow fixed output ranges (retries), each kernel once; 64 channels
    with channel scales that repeat every 32 channels and that do not, on ``dwconv2dbbb_s1_7xN`` / ``_s2_5xN``."""
    out = []
    for t, k in enumerate(KERNELS):
        c = _case(rng, 6 * t + 1)
        c["sw"] = 1 if "_s1_" in k else 2
        c["fw"] = int(k[-3])
        c["fh"] = 3 if k.endswith("3x3") else 4
        c["scales"], c["n_in"] = None, 12
        h = c["h"] if c["pad"] == sn.PAD_SAME else c["fh"] + 1
        w = c["w"] if c["pad"] == sn.PAD_SAME else c["fw"] + 2
        c.update(h=h, w=w, din=[32, 33, 64][t % 3], dout=1)
        c["x"] = rng.integers(0, 256, (c["b"], h, w, c["din"]), dtype=np.uint8)
        c["f"] = rng.integers(0, 256, (c["fh"], c["fw"], c["din"], 1), dtype=np.uint8)
        if t % 4 == 0:
            c["f"][...] = c["f"].flat[0]
        c["bias"] = np.resize(c["bias"], c["din"])
        if t % 2:
            c["ranges"][6:8] = (0.0, 1e-3) if t % 4 == 1 else (-1e-3, 0.0)
            c["nruns"] = 3
        out.append(c)
    for fw, sw in ((7, 1), (5, 2)):   # channel scales repeating every 32 channels, then not (see compare in the test)
        for periodic in (True, False):
            c = _case(rng, 3)
            c.update(fh=3, fw=fw, sw=sw, din=64, dout=1, pad=sn.PAD_SAME, n_in=13, h=3, w=6, nruns=1)
            c["x"] = rng.integers(0, 256, (c["b"], 3, 6, 64), dtype=np.uint8)
            c["f"] = rng.integers(0, 256, (3, fw, 64, 1), dtype=np.uint8)
            c["bias"] = np.resize(c["bias"], 64)
            k = rng.uniform(1.0 / 64, 1.0, 64).astype(np.float32)
            c["scales"] = np.tile(k[:32], 2) if periodic else k
            c["ranges"][6:8] = (-np.inf, np.inf)
            out.append(c)
    return out


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The edge cases, then ``n`` random ones."""
    return _edges(rng) + [_case(rng, t) for t in range(n)]


pack, unpack = sn.pack, sn.unpack


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    return sn.compare(gold, OPS)
