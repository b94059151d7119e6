"""Node inputs by catalog slot name (optimizer/slots.py) and the op groups in op_groups (issue 35).

The positions the expected values name are the ones the passes indexed before they read slots by name
(hexagon_nn_ops.txt's input order), copied here by hand: every table the passes now hold by name must
resolve to the position it held before.
"""
from __future__ import annotations

import pytest

from hexnn_import.engine import activation_bytes
from hexnn_import.errors import GraphError
from hexnn_import.graph import Ref
from hexnn_import.ops.catalog import CATALOG
from hexnn_import.ops import op_groups
from hexnn_import.optimizer.slots import (PRODUCT_FILTER, PRODUCT_OPERANDS, has_slot, part, part_index, run_count, slot,
                                          slot_index, slots, with_slots)
from hexnn_import.testing.prepare_graphs import QBuilder
from tests.test_import_graph import cycles, imports, modules

SUPERNODE = "Supernode_8x8p32to8"


def test_names_resolve_to_the_documented_positions() -> None:
    assert slot_index("QuantizedConv2d_8x8to32", "in_min") == 2
    assert slot_index("QuantizedConv2d_8x8to32", "stride") == 6
    assert slot_index(SUPERNODE, "out_max") == 11
    assert slot_index("Requantize_32to8", "out_min") == 3
    assert slot_index("QuantizedReluX_8", "x") == 3
    assert slot_index("QuantizedClamp_8", "clamp_max") == 4
    assert slot_index("QuantizedMatMul_8x8to32", PRODUCT_FILTER) == 1
    assert [slot_index("QuantizedMatMul_8x8to32", n) for n in PRODUCT_OPERANDS] == [0, 1, 2, 3, 4, 5]
    assert [slot_index("QuantizedConv2d_8x8to32", n) for n in PRODUCT_OPERANDS] == [0, 1, 2, 3, 4, 5]


def test_the_tables_by_name_are_the_former_tables_by_position() -> None:
    scalable = {"Supernode_8x8p8to8": (4, 5, 8, 9, 10, 11), "Supernode_8x8p32to8": (4, 5, 8, 9, 10, 11),
                "DepthwiseSupernode_8x8p8to8": (4, 5, 8, 9, 10, 11),
                "DepthwiseSupernode_8x8p32to8": (4, 5, 8, 9, 10, 11),
                "QuantizedBatchNorm_8x8p8to8": (4, 5, 7, 8, 9, 10), "QuantizedBatchNorm_8x8p32to8": (4, 5, 7, 8, 9, 10)}
    assert {op: tuple(slot_index(op, n) for n in names) for op, names in op_groups.SCALABLE.items()} == scalable
    fixed = {"Quantize": (1, 2), "Requantize_32to8": (3, 4), "QuantizedBatchNorm_8x8p8to8": (9, 10),
             "QuantizedAdd_8p8to8": (6, 7), "InputSupernode_8x8p8to8_outd32": (10, 11), SUPERNODE: (10, 11)}
    assert {op: tuple(slot_index(op, n) for n in op_groups.FIXED_OUTPUT[op]) for op in fixed} == fixed
    passthrough = {"QuantizedMaxPool_8": (1, 2), "QuantizedReshape": (2, 3), "QuantizedStridedSlice_8": (7, 8),
                   "QuantizedSlice_8": (3, 4), "BatchToSpaceND_8": (3, 4), "SpaceToBatchND_8": (3, 4),
                   "MirrorPad_8": (2, 3), "QuantizedSplit_8": (2, 3)}
    assert {op: (slot_index(op, "in_min"), slot_index(op, "in_max")) for op in passthrough} == passthrough
    groups = op_groups.PASSTHROUGH_OPS | op_groups.MORE_PASSTHROUGH_OPS | op_groups.SPLIT_OPS
    assert set(passthrough) <= groups and op_groups.RELU_COMMUTES <= op_groups.PASSTHROUGH_OPS


def test_reading_and_writing_by_name() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 3))
    lo, hi = b.c(-1.0), b.c(1.0)
    rq = b.op("Requantize_8to8", [*x, lo, hi], (1, 2, 2, 3))
    assert slot(rq, "out_min") == lo and slots(rq, "out_max", "data") == [hi, x[0]]
    new = Ref(999, 0)
    before = list(rq.inputs)
    assert with_slots(rq, {"out_max": new}) == [*before[:4], new]
    assert rq.inputs == before  # a copy: the node is rewired through the editor, not here
    assert has_slot(rq, "out_max") and not has_slot(b.op("QuantizedAdd_8p8to8", [*x, *x], (1, 2, 2, 3)), "out_min")


def test_an_unknown_or_absent_slot_is_a_graph_error_naming_node_op_and_slot() -> None:
    b = QBuilder()
    relu = b.op("QuantizedRelu_8", b.input((1, 2, 2, 3)), (1, 2, 2, 3), name="r1")
    with pytest.raises(GraphError, match=r"node r1 \(QuantizedRelu_8\): .*no input slot 'out_min'.*data, in_min"):
        slot(relu, "out_min")
    with pytest.raises(GraphError, match=r"node r1 \(QuantizedRelu_8\): .*no input slot"):
        slot(relu, PRODUCT_FILTER)  # a per-op table without this op
    add = b.op("QuantizedAdd_8p8to8", [*b.input((1, 2, 2, 3)), *b.input((1, 2, 2, 3))], (1, 2, 2, 3), name="a1")
    with pytest.raises(GraphError, match=r"node a1 \(QuantizedAdd_8p8to8\): input slot 'out_min' \(input 6\) is abs"):
        slot(add, "out_min")
    with pytest.raises(GraphError, match=r"op NoSuchOp: the op catalog names no input slot 'data'"):
        slot_index("NoSuchOp", "data")


def test_the_runs_of_a_concat() -> None:
    b = QBuilder()
    x, y = b.input((1, 2, 2, 3)), b.input((1, 2, 2, 3))
    dim = b.c(3, dtype="int32")
    cat = b.op("QuantizedConcat_8", [dim, x[0], y[0], x[1], y[1], x[2], y[2]], (1, 2, 2, 6))
    assert run_count(cat) == 2
    assert [part_index(cat, n, k) for k in (0, 1) for n in ("data", "in_min", "in_max")] == [1, 3, 5, 2, 4, 6]
    assert part(cat, "in_max", 1) == y[2]


def test_work_ops_are_the_products_exactly() -> None:
    """engine.WORK_OPS matched names by substring: "Conv" also took the Convert_* ops and QuantizedPadForConv_8_d32,
    which hold no product's working arrays; every other op it matched is in the group, and nothing else."""
    old = {op for op in CATALOG if any(k in op for k in ("Conv", "Supernode", "MatMul", "FullyConnected"))}
    dropped = {op for op in old if op.startswith("Convert_")} | {"QuantizedPadForConv_8_d32"}
    assert len(dropped) == 11  # with Convert_to_d32_16b / Convert_from_d32_16b
    assert op_groups.WORK_OPS == old - dropped


def test_a_convert_holds_no_working_arrays() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 32))
    d32 = b.op("Convert_to_d32", x[:1], (1, 2, 2, 32), dtype="quint8_d32", n_out=1)
    back = b.op("Convert_from_d32", [Ref(d32.node_id, 0)], (1, 2, 2, 32), n_out=1)
    b.output([Ref(back.node_id, 0), x[1], x[2]])
    # INPUT 128 bytes of quint8 (its min / max are Consts, not counted); each convert makes 128 more while
    # its input is live: peak 256, total 384. Counted as a product (16 bytes per output element while it
    # runs), the first convert would have made the peak 256 + 2048
    assert activation_bytes(b.g)[:2] == (256, 384)


def test_no_optimizer_module_is_in_an_import_cycle_counting_imports_inside_functions() -> None:
    mods = modules()
    graph = {m: imports(m, f, mods, module_level=False) for m, f in mods.items()}
    assert [c for c in cycles(graph) if any(m.startswith("hexnn_import.optimizer.") for m in c)] == []
