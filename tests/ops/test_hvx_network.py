"""Whole networks against hexagon_nn itself on the emulated DSP (issue 36), replayed without qemu or clang.

``tools/hvx/golden_network.py`` built nnlib's own graph API (XiaoMi/nnlib df7ad3c, unedited: ``hexagon_nn_init``,
the append calls of ``hexnn-import MODEL --emit c --no-optimize`` - or, for a model whose prepare keeps a conv chain
prepare.c would fuse, of ``--emit c``: ``KNOWN``'s comment -, ``hexagon_nn_prepare`` with nnlib's own prepare
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
import sys

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
#: The 1x1 average pool over a depth that is not a multiple of 32 was one too: the device means to count the d32
#: depth-padding lanes as the zero sum, but its mask (Q6_Q_vand_VR(depthmask, 1): one byte in four) replaces only
#: the low byte of those lanes' sums, so whatever the padding holds reached the output range (MediaPipe selfie
#: segmentation, int8 and float, 16 channels). The importer now pools copies of the channels up to a multiple of
#: 32 (importers/nodes/whole_pool.py), where there is no padding lane: both models give the device's outputs.
#: Float models with run-time ranges (and the float DS-CNN): the project keeps some conv -> [QuantizedChannelScale_32xf]
#: -> QuantizedBiasAdd_32p32to32 -> QuantizeDownAndShrinkRange_32to8 [-> Relu] chains that prepare.c
#: (try_make_supernode_flavored, allow_channelscale) fuses into a Supernode_8x8p32to8_d32 (optimizer/bias_fit.py: the
#: fused node refuses its bias, "Final too big", on a blank input after a varied one - on the emulated DSP too). The
#: kept chain's requantize reads the bias add's minimum through Minimum_f(min, 0) (the same value;
#: optimizer/bias_fit_chain.py unfusable_tail), which that pass does not match (graphops.c find_unique_consumer: every
#: input of the consumer from the producer or a Const), and such a model is emitted prepared, as a user emits it
#: (tools/hvx/network/net.py emits_prepared; provenance "emitted"): nnlib's prepare, run again over it, leaves the
#: chains, and the device runs the chains the engine runs. All 8 give the device's outputs bit for bit.
#: The int16x8 digit models' Dense heads (Supernode_u16x16p32to16_d32 on a 1x1 input made by another node) were
#: wrong on the device: op_supernode_16b.c supernode_u16b_check sizes the input's even / odd byte planes without
#: the right pad a node output does not have yet at check, execute keeps that size, and the odd plane then starts
#: off a vector. The importer widens such a layer's input with zero columns (importers/nodes/int16_narrow.py):
#: both models give the device's outputs bit for bit.
#: name -> {output index: (elements differing at most over all runs, largest difference at most, cause)}.
KNOWN: dict[str, dict[int, tuple[int, float, str]]] = {
    # The ViT / encoder families' LayerNorms were here (height-1 QuantizedInstanceNorm_8, whose _d32 form reads
    # two rows of unwritten bottom padding on the device: squashed outputs); the importers now lay each row's
    # features on a grid of >= 3 rows (importers/nodes/norm.py norm_grid) and both models equal the device's.
}
#: the notes optimizer/bias_fit_chain.py writes for a chain the project keeps and for a run-time range it floors
#: (emitted prepared: net.emits_prepared)
KEPT_CHAIN, FLOORED = ": kept as ", ") floored at "


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
    kept = any(KEPT_CHAIN in str(n) or FLOORED in str(n) for n in graph.meta.get("notes") or [])
    assert fig.get("emitted", "imported") == ("prepared" if kept else "imported"), (
        f"{name}: recorded from the {fig.get('emitted', 'imported')} graph, but the project's prepare "
        f"{'keeps' if kept else 'keeps no'} conv chain or floor (tools/hvx/network/net.py emits_prepared): "
        "record it again")
    eng = Engine(graph)
    return dev, [[np.asarray(a) for a in eng.run(f)[0]] for f in feeds]


def test_provenance() -> None:
    """The goldens name the nnlib commit, the tools and the command; >= 4 real inputs per model; under 5 MB."""
    assert PROV["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in PROV and "clang" in PROV
    assert "golden_network.py" in PROV["command"] and len(PROV["models"]) >= 10
    assert all(m["runs"] >= 4 and m["inputs"]["source"] for m in PROV["models"].values())
    assert sum(p.stat().st_size for p in GOLDEN.iterdir()) < 5 * 2**20


def test_blank_and_constant_inputs_recorded() -> None:
    """The float models with run-time ranges were recorded on a blank (all-zero) and a constant input too, among
    >= 4 real ones (tools/hvx/network/inputs.py BLANK_ORDER): there AutoQuantize's range is the device's
    ``[-0.0, 1e-18]`` unless the project floors it; the replay below holds the engine to the device on them."""
    mod = _inputs_module()
    assert len(mod.BLANK_MODELS) == 8 and set(mod.BLANK_ORDER) == {"p", "b", "c"} and mod.BLANK_ORDER.count("p") >= 4
    for name in mod.BLANK_MODELS:
        fig = PROV["models"][name]
        assert fig["inputs"]["order"] == mod.BLANK_ORDER and fig["runs"] == len(mod.BLANK_ORDER), name


def _assert_as_known(name: str, dev: list[list[np.ndarray]], eng: list[list[np.ndarray]],
                     known: dict[int, tuple[int, float, str]]) -> None:
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


@pytest.mark.parametrize("name", _golden_names())
def test_network_equals_device(name: str) -> None:
    """Every output of every run bit for bit as the device gave it, but the outputs ``KNOWN`` names, which must
    differ as said (no more elements, no larger difference) and nowhere else."""
    dev, eng = _replay(name)
    _assert_as_known(name, dev, eng, KNOWN.get(name, {}))
    # the figures docs/verification.md prints (provenance.json, divergence.json) say what this replay found
    # (tools/hvx/golden_network.py --refigure makes them again)
    div = json.loads((GOLDEN / "divergence.json").read_text())
    assert PROV["models"][name]["all_equal"] == (name not in KNOWN) and (name in div) == (name in KNOWN), (
        f"{name}: provenance.json / divergence.json are stale: run tools/hvx/golden_network.py --refigure")


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


def test_idmap_matches_nodes_prepare_made() -> None:
    """tools/hvx/network/idmap.py: a node of the same id maps to itself (also when the two prepares made it as
    different ops); a node prepare created (nnlib numbers it down from 0xffffffff) maps to the engine node of the
    same op reading the same mapped non-Const outputs; Consts stay out of the match."""
    from types import SimpleNamespace as N

    from hexnn_import.graph import Ref

    spec = importlib.util.spec_from_file_location("hxnet_idmap", ROOT / "tools" / "hvx" / "network" / "idmap.py")
    idmap = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = idmap   # its dataclass looks its module up
    spec.loader.exec_module(idmap)
    listing = ["1000 INPUT 0 0 | 1 1,4,4,3:1", "1002 Const 0 0 | 1 1,1,1,1:4",
               "fffffffc Convert_to_d32 0 1 1000:0 | 1 1,4,4,3:1",
               "1005 Supernode_8x8p32to8_d32 2 3 fffffffc:0 1002:0 ffffffff:0 | 3 1,4,4,8:1 1,1,1,1:4 1,1,1,1:4",
               "fffffffb Convert_from_d32 0 1 1005:0 | 1 1,4,4,8:1"]
    dev = [idmap.parse_line(s) for s in listing]
    assert dev[3].inputs == ((0xfffffffc, 0), (0x1002, 0), (0xffffffff, 0)) and dev[3].n_outputs == 3
    node = lambda i, op, ins=(), const=False: N(node_id=i, op=op, inputs=[Ref(*r) for r in ins], is_const=const)
    graph = N(nodes=[node(0x1000, "INPUT"), node(0x1002, "Const", const=True), node(0x1400, "Const", const=True),
                     node(0x1401, "Convert_to_d32", [(0x1000, 0)]),
                     node(0x1005, "QuantizeDownAndShrinkRange_32to8", [(0x1401, 0), (0x1002, 0), (0x1400, 0)]),
                     node(0x1402, "Convert_from_d32", [(0x1005, 1)]), node(0x1403, "Convert_from_d32", [(0x1005, 0)])])
    got = idmap.map_ids(dev, graph)
    assert got == {0x1000: 0x1000, 0x1002: 0x1002, 0xfffffffc: 0x1401, 0x1005: 0x1005, 0xfffffffb: 0x1403}
