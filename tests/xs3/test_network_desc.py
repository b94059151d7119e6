"""The lowered network of xs3-export: its tensors, lifetimes and arena plan, worked by hand on a small model."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hexnn_import.xs3.arena import TILE_BYTES, arena_warning, check_plan
from hexnn_import.xs3.c_network import network_header
from hexnn_import.xs3.network_desc import network_desc
from hexnn_import.xs3.run import lowered_graph
from hexnn_import.api import import_model

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_small_model_arena_worked_by_hand() -> None:
    """models/small_int8.tflite, every layer but the (no-op) flatten on XS3: 5 layers, 6 tensors.

    Tensors (int8 bytes, aligned to 4) and lifetimes (positions of the XS3 layers that write / last read them;
    -1: written outside, 5: read after the last layer):

        input        24x24x3  = 1728   -1..0     conv1/relu 24x24x8 = 4608   0..1
        pool1        12x12x8  = 1152    1..2     conv2/relu6 5x5x32 =  800   2..3
        pool2        1x1x32   =   32    3..4     logits     10 -> 12          4..5

    TFLM's greedy planner takes them largest first, each at the lowest offset clear of the placed ones it
    overlaps in time:
        conv1/relu -> 0; input (overlaps conv1 at 0) -> 4608; pool1 (overlaps conv1 at 1) -> 4608;
        conv2/relu6 (overlaps pool1 at 2, not conv1) -> 0; pool2 (overlaps conv2 at 3) -> 800;
        logits (overlaps pool2 at 4) -> 0.
    Arena: the largest end, input's 4608 + 1728 = 6336; largest live set: at position 0, input + conv1 = 6336.
    """
    graph, _, placements = lowered_graph(import_model(MODELS / "small_int8.tflite"))
    assert [p.target for p in placements] == ["xs3", "xs3", "xs3", "xs3", "hexagon", "xs3"]
    net, plan = network_desc(graph, "small")
    sizes = {b.name: (b.size, b.first, b.last) for b in plan.buffers}
    assert sizes == {"input": (1728, -1, 0), "conv1/relu": (4608, 0, 1), "pool1": (1152, 1, 2),
                     "conv2/relu6": (800, 2, 3), "pool2": (32, 3, 4), "logits": (10, 4, 5)}
    assert plan.offsets == {"conv1/relu": 0, "input": 4608, "pool1": 4608, "conv2/relu6": 0, "pool2": 800,
                            "logits": 0}
    assert (plan.size, plan.largest_live) == (6336, 6336)
    check_plan(plan)
    assert net.inputs == ["input"] and net.outputs == ["logits"]
    assert [layer.kernel for layer in net.layers] == ["conv2d_shallowin", "maxpool2d", "conv2d_shallowin",
                                                      "conv2d_depthwise", "fully_connected_8"]
    assert arena_warning(plan, net.weight_bytes) is None


def test_mobilenet_network_header_compiles_and_warns_past_a_tile(tmp_path: Path) -> None:
    graph, _, _ = lowered_graph(import_model(MODELS / "mobilenet_v2_int8.tflite"))
    net, plan = network_desc(graph, "mobilenet_v2_int8")
    assert len(net.layers) == 64 and net.arena_size == plan.size >= plan.largest_live
    check_plan(plan)
    warning = arena_warning(plan, net.weight_bytes)
    assert (warning is not None) == (plan.size + net.weight_bytes > TILE_BYTES)
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: the header is not compiled")
    header = tmp_path / "net.h"
    header.write_text(network_header(net))
    src = tmp_path / "net.c"
    src.write_text('#define MOBILENET_V2_INT8_IMPLEMENTATION\n#include "net.h"\n')
    res = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", str(src), "-o",
                          str(tmp_path / "net.o")], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
