"""xs3-export's C runner files: the binding worked by hand, the build script's refusals, the C against lib_nn's API.

The C's results are held to ``run --xs3`` by tests/xs3/test_c_runner_golden.py (golden files of the runner built
against lib_nn); here nothing is built against lib_nn.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hexnn_import.ops.op_groups import is_xs3
from hexnn_import.xs3.c_network import NetLayer, NetTensor, NetworkDesc
from hexnn_import.xs3.c_runner import (
    BUILD_SH,
    RUNNER_C,
    part_reason,
    runner_files,
    runner_refusal,
)
from hexnn_import.xs3.c_runner_replay import runner_export
from hexnn_import.xs3.export import build_export
from hexnn_import.xs3.run import lowered_graph

from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource

MODELS = Path(__file__).resolve().parents[2] / "models"
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is not installed: the runner cannot be compiled")

#: lib_nn's public API as nn_operator.h declares it (commit 96bd67c): the types and the functions the runner calls
STUB_NN_OPERATOR = """#include <stdint.h>
typedef int8_t nn_tensor_t; typedef nn_tensor_t nn_image_t; typedef uint32_t channel_count_t;
typedef struct { uint32_t height; uint32_t width; channel_count_t channels; } nn_image_params_t;
typedef struct { struct { unsigned height; unsigned width; } shape; struct { int row; int column; } start;
  struct { int vertical; int horizontal; } stride; struct { int vertical; int horizontal; } dilation; }
  nn_window_params_t;
typedef struct { uint16_t d[7][16]; } nn_bso_block_t;
typedef struct { struct { int16_t shr; int16_t multiplier; } input[2]; struct { int32_t bias; uint8_t shr; } output; }
  nn_add_params_t;
void conv2d_deep(nn_image_t*, const nn_image_t*, const nn_tensor_t*, const nn_bso_block_t*, const int8_t,
  const nn_image_params_t*, const nn_image_params_t*, const nn_window_params_t*);
void conv2d_shallowin(nn_image_t*, const nn_image_t*, const nn_tensor_t*, const nn_bso_block_t*, const int8_t,
  const nn_image_params_t*, const nn_image_params_t*, const nn_window_params_t*);
void conv2d_1x1(nn_image_t*, const nn_image_t*, const nn_tensor_t*, const nn_bso_block_t*,
  const nn_image_params_t*, const nn_image_params_t*);
void conv2d_depthwise(int8_t*, const int8_t*, const int8_t*, const nn_bso_block_t*, const int8_t,
  const nn_image_params_t*, const nn_image_params_t*, const nn_window_params_t*);
void fully_connected_8(int8_t*, const int8_t*, const int8_t*, const nn_bso_block_t*, const channel_count_t,
  const channel_count_t, const channel_count_t);
void fully_connected_16(int16_t*, const int8_t*, const int8_t*, const nn_bso_block_t*, const channel_count_t,
  const channel_count_t, const channel_count_t);
void maxpool2d(nn_image_t*, const nn_image_t*, const nn_image_params_t*, const nn_image_params_t*,
  const nn_window_params_t*);
void avgpool2d(int8_t*, const int8_t*, const nn_image_params_t*, const nn_image_params_t*, const nn_window_params_t*);
void avgpool2d_global(nn_image_t*, const nn_image_t*, const int32_t, const int8_t, const uint16_t,
  const nn_image_params_t*);
void add_elementwise(int8_t Y[], const int8_t X0[], const int8_t X1[], const nn_add_params_t*, const unsigned,
  const unsigned);
void lookup8(uint8_t*, const uint8_t*, const uint8_t*, const unsigned, const unsigned);
"""


def _files(model: str, tmp: Path) -> tuple[NetworkDesc, Path]:
    graph, _, _ = lowered_graph(import_model(MODELS / model))
    net, _, files = runner_export(graph, MODELS / model)
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    return net, tmp


def _build(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(folder / BUILD_SH), *args], capture_output=True, text=True, timeout=60)


def test_small_model_binding_worked_by_hand(tmp_path: Path) -> None:
    """small_int8: one network input and output, the model's own; only conv1 pads (24x24 pixels of 3 channels to
    its weight layout's 4: 2304 bytes + 64 of slack), so the scratch is 2368 bytes."""
    net, folder = _files("small_int8.tflite", tmp_path)
    assert part_reason(net) is None and runner_refusal(net) is None
    assert [(la.params["k_in"], la.params["k_out"]) for la in net.layers if "k_in" in la.params] == \
        [(4, 8), (8, 32), (32, 32), (32, 10)]
    c = (folder / RUNNER_C).read_text()
    assert "#define SMALL_INT8_IMPLEMENTATION\n#include \"small_int8_xs3_network.h\"" in c
    assert "#define XR_SCRATCH_SIZE 2368\n" in c and "#error" not in c
    r = _build(folder)  # nothing to refuse: it asks for lib_nn
    assert r.returncode == 2 and "--libnn DIR is required" in r.stderr
    r = _build(folder, "--libnn", str(tmp_path))
    assert r.returncode == 2 and "is not a lib_nn checkout" in r.stderr


def test_a_model_with_hexagon_layers_around_is_refused_with_the_reason(tmp_path: Path) -> None:
    """keras_cnn_int8_floatio: its float input's Quantize and its output's Dequantize stay on Hexagon."""
    net, folder = _files("real/keras_cnn_int8_floatio.tflite", tmp_path)
    assert net.hexagon_inputs == ["tfl.quantize"] and net.hexagon_outputs == ["StatefulPartitionedCall_1:01"]
    r = _build(folder, "--libnn", str(tmp_path))
    assert r.returncode == 3
    assert "refused: the header holds only the XS3 part of the model: 1 of its 1 inputs are written by layers " \
           "that stay on Hexagon (first: tfl.quantize)" in r.stderr and "--xs3-part" in r.stderr
    assert "#ifndef XR_XS3_PART\n#error" in (folder / RUNNER_C).read_text()
    r = _build(folder, "--libnn", str(tmp_path), "--xs3-part")  # past the refusal: now it wants lib_nn
    assert r.returncode == 2 and "is not a lib_nn checkout" in r.stderr


def test_a_flatten_before_the_classifier_is_read_in_place(tmp_path: Path) -> None:
    """digits_int8: the classifier reads pool2's codes in place (its flatten only relabels them, so no node is
    left on Hexagon): the runner runs the network whole, from the model's input to its output."""
    graph, _, _ = lowered_graph(import_model(MODELS / "digits_int8.tflite"))
    assert not [n.op for n in graph.nodes if n.op not in ("INPUT", "OUTPUT", "Const") and not is_xs3(n.op)]
    net, _ = _files("digits_int8.tflite", tmp_path)
    assert part_reason(net) is None and net.hexagon_inputs == net.hexagon_outputs == []
    fc = net.layers[-1]
    assert fc.kernel == "fully_connected_8" and fc.inputs == ["pool2"]  # the flatten's input, 4-D, same bytes


def _net(kernel: str, params: dict) -> NetworkDesc:
    t = [NetTensor("x", (1, 4, 4, 4), "int8", 0), NetTensor("y", (1, 4, 4, 4), "int8", 64)]
    layer = NetLayer("l0", kernel, ["x"], ["y"], params, {"weights": np.zeros((4, 4), np.int8)})
    return NetworkDesc("m", t, [layer], ["x"], ["y"], 128, 128, 16)


@pytest.mark.parametrize("kernel, params, why", [
    ("conv2d_im2col", {}, "layer l0: kernel conv2d_im2col is not one the runner runs"),
    ("conv2d_1x1", {"zero_point": 0, "window": [1, 1, 0, 0, 1, 1], "k_in": 4, "k_out": 4},
     "layer l0 (conv2d_1x1): parameters ['zero_point', 'window', 'k_in', 'k_out'], the runner reads "
     "['window', 'zero_point', 'k_in', 'k_out']"),
    ("lookup8", {}, "layer l0 (lookup8): no table"),
])
def test_a_layer_the_runner_cannot_run_is_refused_always(tmp_path: Path, kernel: str, params: dict, why: str) -> None:
    net = _net(kernel, params)
    assert runner_refusal(net) == why
    for name, data in runner_files(net, "m_xs3_network.h").items():
        (tmp_path / name).write_bytes(data)
    r = _build(tmp_path, "--libnn", str(tmp_path), "--xs3-part")
    assert r.returncode == 3 and f"m: refused: {why}" in r.stderr


def test_xs3_export_writes_the_runner_files_the_golden_files_hash(tmp_path: Path) -> None:
    source = ModelSource.open(MODELS / "small_int8.tflite")
    graph = import_model(source)
    _, files = build_export(source, graph)
    _, _, ours = runner_export(lowered_graph(import_model(source))[0], MODELS / "small_int8.tflite")
    assert {k: files[k] for k in ours} == ours


@needs_gcc
@pytest.mark.parametrize("model", ["small_int8.tflite", "digits_int8.tflite"])
def test_the_runner_compiles_against_lib_nns_api_with_every_warning_an_error(tmp_path: Path, model: str) -> None:
    _, folder = _files(model, tmp_path)
    (tmp_path / "nn_operator.h").write_text(STUB_NN_OPERATOR)
    r = subprocess.run([GCC, "-fsyntax-only", "-std=c99", "-Wall", "-Wextra", "-Werror", "-DXR_XS3_PART",
                        f"-I{tmp_path}", str(folder / RUNNER_C)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
