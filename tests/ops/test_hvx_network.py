"""Whole networks against hexagon_nn itself on the emulated DSP (issue 36), replayed without qemu or clang.

``tools/hvx/golden_network.py`` built nnlib's own graph API (XiaoMi/nnlib df7ad3c, unedited: ``hexagon_nn_init``,
the append calls of ``hexnn-import MODEL --emit c --no-optimize``, ``hexagon_nn_prepare`` with nnlib's own prepare
passes and every op's ``check()``, ``hexagon_nn_execute_new``) for Hexagon v66 / HVX 128 with its assembly kernels
and ran it in ``qemu-hexagon`` on 4 real inputs per model, runs in order on one graph. Each golden file keeps the
device's outputs; the inputs are made again from committed data (``tools/hvx/network/inputs.py``: photo crops of
models/real/photos.npz, models/digits_test.npz) and checked against their recorded SHA-256. Here the engine (the project's prepare and kernels) runs the
same inputs in the same order and must give the device's outputs bit for bit; where it does not, the differing
outputs, their bound and the traced cause are written below (``KNOWN``), and anything else is a failure.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import pathlib
import re

import numpy as np
import pytest
from hexnn_import.ops.catalog_data import OPS

from hexnn_import import api
from hexnn_import.emit.c_source import _op_call as append_call
from hexnn_import.emit.files import EmitError
from hexnn_import.emit.op_ids import NNLIB_NAMES, NO_ID, op_id_name
from hexnn_import.engine import Engine

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden" / "hvx_network"
PROV = json.loads((GOLDEN / "provenance.json").read_text())

#: Causes, each localised with tools/hvx/network/localise.py (nnlib's own tensor print against the engine's every
#: tensor; every node before the named one equal; tests/data/golden/hvx_network/divergence.json).
#: QuantizedMean_8 (op_reducing_mean.c's fixed-point multiplier) and QuantizedAvgPool_8_d32 reducing the image to
#: 1x1 (op_avgpool_d32.c: the output range from the window sums) were causes here; the engine follows both now
#: (ops/nnlib_reduce_device.py) and every model whose only cause they were gives the device's outputs bit for bit.
#: What is left of the 1x1 average pool: when the depth is not a multiple of 32, the device means to count the d32
#: depth-padding lanes as the zero sum, but its mask (Q6_Q_vand_VR(depthmask, 1): one byte in four) replaces only
#: the low byte of those lanes' sums, so the sums of whatever the padding holds reach the output range
#: (MediaPipe selfie segmentation, 16 channels, node 0x1426: device [-3.029, 6.166], engine the data's
#: [-3.015, 5.252], every code before it equal). The engine does not model d32 padding contents.
AVGPOOL_1X1_PAD = "QuantizedAvgPool_8_d32 1x1 reduce: the device's range takes in d32 depth-padding lanes' sums"
#: The float Keras MobileNet v3's first cause was QuantizedAdd_8p8to8_d32 with a single B and the ends given as
#: -inf / +inf (its input rescaling's - 1): the device re-codes A (op_add_d32.c mode_broadcast_1111); the engine
#: follows it now (every node to 0x1052 equal). The first differing node is then the Requantize_32to8 0x105e of a
#: float conv (conv, channel scale, bias add: not held under the same ids by nnlib's prepared graph, so not
#: compared): the float-conv ranges of QDSR_FLOAT below, not traced further here.
FLOAT_CONV_REQUANTIZE = "float conv's Requantize_32to8 (its conv + channel scale + bias chain not compared)"
#: Float models with run-time ranges: the first compared node that differs is the first conv's
#: QuantizeDownAndShrinkRange_32to8, whose range the device makes wider than the data's (torch MobileNet v3
#: float: device [-6.73, 5.70], engine the data's [-4.83, 4.16]); its input, the conv + QuantizedBiasAdd chain,
#: is not held under the same ids by nnlib's prepared graph, so it is not compared: not traced further.
QDSR_FLOAT = "float conv's QuantizeDownAndShrinkRange_32to8 range wider on the device; its inputs not compared"
#: name -> {output index: (elements differing at most over all runs, largest difference at most, cause)}.
KNOWN: dict[str, dict[int, tuple[int, float, str]]] = {
    'keras_ds_cnn_float': {0: (38, 0.1277000904083252, 'first differing node QuantizedRelu_8 0x100e; not traced further')},
    'keras_mobilenet_v3_small_float': {0: (40, 0.03731876611709595, FLOAT_CONV_REQUANTIZE)},
    'mediapipe_face_landmark': {0: (3769, 4.100433349609375, QDSR_FLOAT), 1: (4, 1.0236806869506836, QDSR_FLOAT)},
    'mediapipe_selfie_segmentation': {0: (21518, 0.501960813999176, QDSR_FLOAT)},
    'mediapipe_selfie_segmentation_aeq_int8': {0: (402, 126.0, AVGPOOL_1X1_PAD)},
    'rapidocr_ppocr_mobile_v2_cls': {0: (6, 0.26274511218070984, QDSR_FLOAT)},
    'torch_efficientnet_b0_float': {0: (19, 0.05882352590560913, QDSR_FLOAT)},
    'torch_mobilenet_v3_small_float': {0: (40, 0.08823823928833008, QDSR_FLOAT)},
    'torch_yolo_tiny_float': {0: (1612, 1.373443603515625, QDSR_FLOAT)},
}


def _golden_names() -> list[str]:
    return sorted(PROV["models"])


def _inputs_module():  # type: ignore[no-untyped-def]
    """tools/hvx/network/inputs.py: how the goldens' inputs are made from committed data (photo crops of
    models/real/photos.npz, models/digits_test.npz)."""
    spec = importlib.util.spec_from_file_location("hxnet_inputs", ROOT / "tools" / "hvx" / "network" / "inputs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _replay(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """(device outputs, engine outputs) per run for the golden ``name``; the inputs made again and checked against
    the recorded SHA-256."""
    fig = PROV["models"][name]
    with np.load(GOLDEN / f"{name}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    shapes = {k: tuple(v) for k, v in (fig.get("input_shapes") or {}).items()}
    graph = api.prepare(api.import_model(str(ROOT / fig["model"]), input_shapes=shapes or None))
    feeds, _ = _inputs_module().feeds(name, graph)
    assert len(feeds) == fig["runs"]
    assert hashlib.sha256(b"".join(a.tobytes() for f in feeds for a in f)).hexdigest() == fig["input_sha256"]
    dev = [[arrays[f"dev_{r}_{k}"] for k in range(len(fig["outputs"]))] for r in range(fig["runs"])]
    eng = Engine(graph)
    return dev, [[np.asarray(a) for a in eng.run(f)[0]] for f in feeds]


def test_provenance() -> None:
    """The goldens name the nnlib commit, the tools and the command; >= 4 real inputs per model; under 5 MB."""
    assert PROV["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in PROV and "clang" in PROV
    assert "golden_network.py" in PROV["command"] and len(PROV["models"]) >= 10
    assert all(m["runs"] >= 4 and m["inputs"]["source"] for m in PROV["models"].values())
    assert sum(p.stat().st_size for p in GOLDEN.iterdir()) < 5 * 2**20


@pytest.mark.parametrize("name", _golden_names())
def test_network_equals_device(name: str) -> None:
    """Every output of every run bit for bit as the device gave it, but the outputs ``KNOWN`` names, which must
    differ as said (no more elements, no larger difference) and nowhere else."""
    dev, eng = _replay(name)
    known = KNOWN.get(name, {})
    for k in range(len(eng[0])):
        ndiff, maxd = 0, 0.0
        for r, (d, e) in enumerate(zip(dev, eng)):
            a, b = d[k].reshape(-1), e[k].reshape(-1)
            assert a.size == b.size and a.dtype == b.dtype, f"{name} run {r} output {k}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            ndiff += int((a.view(np.uint8) != b.view(np.uint8)).reshape(a.size, -1).any(axis=1).sum())
            maxd = max(maxd, float(diff.max()) if diff.size else 0.0)
        if k in known:
            bound_n, bound_d, cause = known[k]
            assert 0 < ndiff <= bound_n and maxd <= bound_d, f"{name} output {k} ({cause}): {ndiff} elements, max {maxd}"
        else:
            assert ndiff == 0, f"{name} output {k}: {ndiff} elements differ from the device, max {maxd}"


def test_emitted_op_names_are_nnlib_ids() -> None:
    """Every op the catalog knows is emitted as an OP_ name nnlib's ops.def defines, or refused with a reason
    (ops_def_names.txt: the names of df7ad3c's interface/ops.def through the C preprocessor, in id order)."""
    lines = (GOLDEN / "ops_def_names.txt").read_text().splitlines()
    assert lines[0].startswith("# OP_ names of XiaoMi/nnlib df7ad3c")
    ids = set(lines[1:])
    assert len(ids) == len(lines) - 1 and {"QuantizedMaximum_8", "Supernode_8x8p32to8_d32", "INPUT"} <= ids
    missing = sorted(op for op in OPS if op_id_name(op) is not None and op_id_name(op) not in ids)
    assert missing == []
    assert set(NNLIB_NAMES.values()) <= ids and not set(NO_ID) & ids


def test_emitter_writes_nnlib_spelling() -> None:
    """A QuantizedMaximum node's append call names OP_QuantizedMaximum_8 (ops.def), not the documents' name; a
    StridedSlice_uint8 node, which has no id, is refused naming the node and op."""
    graph = api.import_model(str(ROOT / "models" / "small_int8.tflite"))
    node = next(n for n in graph.nodes if not n.is_const and n.op not in ("INPUT", "OUTPUT"))
    node.op = "QuantizedMaximum"
    call = append_call(node, "g")
    assert re.search(r"\bOP_QuantizedMaximum_8\b", call) and not re.search(r"\bOP_QuantizedMaximum\b", call)
    node.op = "StridedSlice_uint8"
    with pytest.raises(EmitError, match=r"StridedSlice_uint8\): no hexagon_nn op id"):
        append_call(node, "g")
