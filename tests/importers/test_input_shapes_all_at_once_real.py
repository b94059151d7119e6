"""Open input dimensions of converter-made models (issue 34, finding 5), built from the committed files.

- YOLOv8n (ultralytics): its input marked ``[batch, 3, height, width]`` as ``YOLO.export(dynamic=True)``
  writes it, its ``metadata_props`` kept: the metadata's ``imgsz`` sizes it, and the graph is the one the
  static export gives;
- Silero VAD: its three inputs opened as the Silero VAD a user brought (``input [?, ?]``, ``state [2, ?, 128]``
  here ``h`` / ``c [1, ?, 128]``): one error names them all, the LSTM's batch filled in, the sample count
  left to the user;
- PP-OCRv3 det (Paddle2ONNX, height and width -1): nothing implies a size; the error says which fit, and
  onnxruntime agrees (it runs 320 x 320 and refuses 336).
"""
from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner

import hexnn_import as hx
from hexnn_import.cli_support import parse_input_shapes
from hexnn_import.cli import cli
from hexnn_import.errors import ModelFormatError
from hexnn_import.serialize import graph_to_dict
from hexnn_import.testing.onnx_compare import run_ort

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ROOT / "models" / "real" / "families"
YOLO = FAMILIES / "torch_yolov8n_digits_float.onnx"
VAD = FAMILIES / "silero_vad_v6.onnx"
DET = ROOT / "models" / "real" / "rapidocr_ppocrv3_det.onnx"


def _opened(src: Path, dims: dict[str, list], dst: Path, metadata: bool = True) -> Path:  # type: ignore[type-arg]
    """``src`` with input dims replaced (str: a dim_param, None: no value), output shapes cleared."""
    m = onnx.load(str(src))
    for vi in m.graph.input:
        for d, v in zip(vi.type.tensor_type.shape.dim, dims.get(vi.name, [])):
            if v is None or isinstance(v, str):
                d.Clear()
                if v is not None:
                    d.dim_param = v
    for vi in m.graph.output:
        vi.type.tensor_type.ClearField("shape")
    if not metadata:
        del m.metadata_props[:]
    onnx.save(m, str(dst))
    return dst


def _body(graph: hx.Graph) -> dict:  # type: ignore[type-arg]
    d = graph_to_dict(graph)
    d.pop("meta")
    return d


def test_an_ultralytics_dynamic_export_converts_at_its_imgsz(tmp_path: Path) -> None:
    path = _opened(YOLO, {"images": ["batch", 3, "height", "width"]}, tmp_path / "yolo.onnx")
    g = hx.import_model(path)
    assert g.meta["notes"] == ["input 'images': dynamic batch set to 1, dims 2, 3 set to 96, 96 from the model's "
                               "metadata (imgsz [96, 96]) (change with --input-shape images=4,3,96,96)"]
    assert _body(g) == _body(hx.import_model(YOLO))  # the static export's graph, node for node


def test_without_its_metadata_the_same_export_names_height_and_width(tmp_path: Path) -> None:
    path = _opened(YOLO, {"images": ["batch", 3, "height", "width"]}, tmp_path / "yolo.onnx", metadata=False)
    with pytest.raises(ModelFormatError) as info:
        hx.import_model(path)
    msg = str(info.value)
    assert "input images [batch,3,height,width] dims 2, 3 open" in msg and "\n" not in msg, msg
    assert "convert with --input-shape images=1,3,?,? (each ? replaced by the size to use)" in msg, msg


def test_the_vad_inputs_are_named_in_one_error_and_the_pasted_line_converts(tmp_path: Path) -> None:
    path = _opened(VAD, {"input": [None, None], "h": [1, None, 128], "c": [1, None, 128]}, tmp_path / "vad.onnx")
    r = CliRunner().invoke(cli, [str(path), "-o", str(tmp_path / "g.hexnn.json")])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
    msg = r.stderr
    assert "1 input dimension of the model has no size" in msg and "input input [?,?] dim 1 open" in msg, msg
    assert "input h [1,?,128]: dim 1 set to 1 as LSTM /decoder/rnn/LSTM requires" in msg, msg
    assert "input c [1,?,128]: dim 1 set to 1 as LSTM /decoder/rnn/LSTM requires" in msg, msg
    line = msg.split("convert with ")[1].split(" (each ?")[0]
    assert line == "--input-shape input=1,? --input-shape h=1,1,128 --input-shape c=1,1,128", line
    pasted = shlex.split(line.replace("?", "576"))
    r = CliRunner().invoke(cli, [str(path), *pasted, "-o", str(tmp_path / "g.hexnn.json")])
    assert r.exit_code == 0, r.output
    g = hx.import_model(path, input_shapes=parse_input_shapes(tuple(pasted[1::2])))
    assert _body(g) == _body(hx.import_model(VAD))  # the committed file's graph, node for node


def test_the_vad_with_its_sample_count_converts_with_no_flags(tmp_path: Path) -> None:
    path = _opened(VAD, {"input": [None, 576], "h": [1, None, 128], "c": [1, "b", None]}, tmp_path / "vad.onnx")
    g = hx.import_model(path)
    assert [io.shape for io in g.inputs] == [(1, 576), (1, 1, 128), (1, 1, 128)]
    assert g.meta["notes"][1:] == [
        "input 'h': dim 1 set to 1 as LSTM /decoder/rnn/LSTM requires (change with --input-shape h=1,1,128)",
        "input 'c': dims 1, 2 set to 1, 128 as LSTM /decoder/rnn/LSTM requires (change with --input-shape c=1,1,128)"]
    assert _body(g) == _body(hx.import_model(VAD))


def test_the_paddle_detector_says_which_sizes_fit(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, [str(DET), "-o", str(tmp_path / "g.hexnn.json")])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
    msg = r.stderr
    assert "input x [?,3,?,?] dims 2, 3 open (a multiple of 32 fits its layers, e.g. 320)" in msg, msg
    assert "convert with --input-shape x=1,3,?,?" in msg and "e.g. --input-shape x=1,3,320,320 fits" in msg, msg
    model = DET.read_bytes()
    out = run_ort(model, {"x": np.zeros((1, 3, 320, 320), np.float32)})
    assert next(iter(out.values())).shape == (1, 1, 320, 320)
    with pytest.raises(Exception, match="Add node"):  # not a multiple of 32: its FPN's Add
        run_ort(model, {"x": np.zeros((1, 3, 336, 320), np.float32)})
