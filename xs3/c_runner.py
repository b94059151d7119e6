"""xs3-export's C runner: ``xs3_runner.c`` and ``build_runner.sh``, written beside the network header.

``xs3_runner.c`` is the project's own C (:mod:`.c_runner_c`) after a model
binding: it defines the header's ``<MODEL>_IMPLEMENTATION``, includes
``<model>_xs3_network.h`` and names its tables as ``XR_*`` macros. It walks
the layer table and calls lib_nn's kernels on the tensor arena; ``main``
reads one raw int8 file per network input, runs, writes one file per network
output (``--dump``: every tensor a layer writes). ``build_runner.sh --libnn
DIR`` compiles lib_nn's portable C (``-DNN_USE_REF``, a checkout of
github.com/xmos/lib_nn at 96bd67c: ``DIR/lib_nn/api``, ``DIR/lib_nn/src``)
and the runner (``-std=c99 -Wall -Wextra -Werror``) on x86.

The header holds the XS3 layers only. When a Hexagon layer writes one of its
inputs or reads one of its outputs (:attr:`NetworkDesc.hexagon_inputs` /
``hexagon_outputs``), the runner cannot run the model end to end: the build
script refuses with that reason, unless ``--xs3-part`` (then the runner runs
the XS3 layers with every network input given as a file, e.g. ``run --xs3``'s
intermediate tensors). A layer whose kernel or parameters the runner does not
know makes the build script refuse always (:func:`runner_refusal`).
"""
from __future__ import annotations

import math

from hexnn_import.xs3.c_header import c_ident
from hexnn_import.xs3.c_network import NetLayer, NetTensor, NetworkDesc
from hexnn_import.xs3.c_runner_c import RUNNER_BODY
from hexnn_import.xs3.c_runner_sh import build_script

RUNNER_C = "xs3_runner.c"
BUILD_SH = "build_runner.sh"
#: bytes of slack after every buffer the kernels read (lib_nn's C reads up to 32 bytes past a row); the C's XR_SLACK
SLACK = 64
CONV_LIKE = ("conv2d_deep", "conv2d_shallowin", "conv2d_1x1", "conv2d_depthwise")
FC = ("fully_connected_8", "fully_connected_16")
#: each kernel's parameter names in the order the C reads their slots (network_desc._call_params)
PARAMS: dict[str, tuple[str, ...]] = {
    **{k: ("window", "zero_point", "k_in", "k_out") for k in CONV_LIKE},
    **{k: ("zero_point", "rows", "k_in", "k_out") for k in FC},
    "add_elementwise": ("shr0", "m0", "shr1", "m1", "bias", "out_shr"),
    "maxpool2d": ("window",), "avgpool2d": ("window",), "avgpool2d_global": ("bias", "scale", "shift"),
    "lookup8": (),
}


def _align4(n: int) -> int:
    return -(-n // 4) * 4


def scratch_need(layer: NetLayer, tensors: dict[str, NetTensor]) -> int:
    """Scratch bytes of one layer, as the C's ``xr_scratch_need``: a padded input, a padded (or int16) output."""
    x, y = tensors[layer.inputs[0]], tensors[layer.outputs[0]]
    p = layer.params
    if layer.kernel in CONV_LIKE:
        px, py = math.prod(x.shape[1:-1]), math.prod(y.shape[1:-1])
        need = _align4(px * int(p["k_in"])) + SLACK if x.shape[-1] != p["k_in"] else 0
        return need + (_align4(py * int(p["k_out"])) + SLACK if y.shape[-1] != p["k_out"] else 0)
    if layer.kernel in FC:
        rows = int(p["rows"])
        n, m = math.prod(x.shape) // rows, math.prod(y.shape) // rows
        need = _align4(int(p["k_in"])) + SLACK if n != p["k_in"] else 0
        if layer.kernel == "fully_connected_16":
            return need + _align4(2 * int(p["k_out"])) + SLACK
        return need + (_align4(int(p["k_out"])) + SLACK if m != p["k_out"] else 0)
    return 0


def runner_refusal(net: NetworkDesc) -> str | None:
    """Why the runner cannot run this header at all (a kernel or parameter layout it does not know), or None."""
    for layer in net.layers:
        want = PARAMS.get(layer.kernel)
        if want is None:
            return f"layer {layer.name}: kernel {layer.kernel} is not one the runner runs"
        if tuple(layer.params) != want:
            return f"layer {layer.name} ({layer.kernel}): parameters {list(layer.params)}, the runner reads {list(want)}"
        if layer.kernel == "lookup8" and "lut" not in layer.arrays:
            return f"layer {layer.name} (lookup8): no table"
        if len(layer.inputs) != (2 if layer.kernel == "add_elementwise" else 1) or len(layer.outputs) != 1:
            return f"layer {layer.name} ({layer.kernel}): {len(layer.inputs)} inputs, {len(layer.outputs)} outputs"
    return None


def part_reason(net: NetworkDesc) -> str | None:
    """Why the header is only the XS3 part of its model (Hexagon layers write its inputs or read its outputs)."""
    why = []
    if net.hexagon_inputs:
        why.append(f"{len(net.hexagon_inputs)} of its {len(net.inputs)} inputs are written by layers that stay on "
                   f"Hexagon (first: {net.hexagon_inputs[0]})")
    if net.hexagon_outputs:
        why.append(f"{len(net.hexagon_outputs)} of its {len(net.outputs)} outputs are read by layers that stay on "
                   f"Hexagon (first: {net.hexagon_outputs[0]})")
    return "; ".join(why) or None


def binding(net: NetworkDesc, header: str, symmetric: bool) -> str:
    """The model binding that precedes the runner's body: the header's tables as ``XR_*`` names."""
    p = c_ident(net.name)
    P = p.upper()
    tensors = {t.name: t for t in net.tensors}
    scratch = max([4] + [_align4(scratch_need(layer, tensors)) for layer in net.layers])
    whole = part_reason(net) is None
    lines = [f"/* xs3_runner.c: runs the XS3 network {net.name} ({header}) on lib_nn's kernels.",
             " * Written by hexnn-import (hexnn_import.xs3.c_runner); build with ./build_runner.sh --libnn DIR.",
             " * API: xr_check(), xr_run(arena, scratch, hook, ctx), xr_tensor_data(arena, tensor); XR_ARENA_BYTES and",
             " * XR_SCRATCH_BYTES of 4-aligned memory; -DXR_NO_MAIN leaves main() out. */",
             f"#define {P}_IMPLEMENTATION", f'#include "{header}"', "",
             f'#define XR_MODEL_NAME "{p}"', f"#define XR_ARENA_SIZE {P}_ARENA_SIZE",
             f"#define XR_SCRATCH_SIZE {scratch}", f"#define XR_N_LAYERS {P}_N_LAYERS",
             f"#define XR_N_INPUTS {P}_N_INPUTS", f"#define XR_N_OUTPUTS {P}_N_OUTPUTS",
             f"#define XR_SYMMETRIC {int(symmetric)}", f"#define xr_layer_t {p}_layer_t",
             f"#define xr_tensor_t {p}_tensor_t", f"#define xr_layers {p}_layers", f"#define xr_tensors {p}_tensors",
             f"#define xr_inputs {p}_inputs", f"#define xr_outputs {p}_outputs",
             f"#define xr_kernel_names {p}_kernel_names", ""]
    if not whole:
        lines += ["/* only the XS3 part of the model: its inputs from Hexagon layers must be given as files */",
                  "#ifndef XR_XS3_PART", '#error "the header holds only the XS3 part of the model (build with '
                  '--xs3-part: build_runner.sh says why)"', "#endif", ""]
    return "\n".join(lines)


def runner_files(net: NetworkDesc, header: str, symmetric: bool = False) -> dict[str, bytes]:
    """``xs3_runner.c`` and ``build_runner.sh`` of a network whose header is the file ``header``."""
    refusal = runner_refusal(net)
    source = binding(net, header, symmetric) + RUNNER_BODY
    script = build_script(c_ident(net.name), refusal, part_reason(net), symmetric)
    return {RUNNER_C: source.encode("utf-8"), BUILD_SH: script.encode("utf-8")}
