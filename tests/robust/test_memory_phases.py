"""The Python graph and the run's per-node state count against ``--max-memory`` before each phase (issue 38,
[Robust]: a 100,000-ADD chain took 6.3 GB to convert under ``--max-memory 2G``, and a run under ``64M`` was
refused at node 32,575 after 81 s). A graph that cannot fit is refused up front, one line naming its size and
the budget, before the work; one that fits runs with its peak resident size below the budget. The full-size
replay with times and peaks is ``bench/hostile_scale.py``."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hexnn_import import graph_memory as gm
from hexnn_import import memory
from hexnn_import.api import import_model, prepare
from hexnn_import.engine import activation_bytes
from hexnn_import.errors import ResourceError
from hexnn_import.graph import Graph
from hexnn_import.runner import Runner
from hexnn_import.table_plan import TABLE_RESIDENT, planned_tables
from hexnn_import.testing.hostile_chains import add_chain_tflite
from hexnn_import.testing.peak_rss import PEAK_WRAPPER


@pytest.fixture
def budget() -> Iterator[Any]:
    try:
        yield memory.set_budget
    finally:
        memory.set_budget(None)


def _chain(tmp_path: Path, n: int) -> Path:
    path = tmp_path / f"chain{n}.tflite"
    path.write_bytes(add_chain_tflite(n))
    return path


def _one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert "\n" not in msg and "--max-memory" in msg, msg
    return msg


def test_an_import_that_cannot_fit_is_refused_before_any_node(tmp_path: Path, budget: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = _chain(tmp_path, 300)
    built: list[int] = []
    real = Graph._insert
    monkeypatch.setattr(Graph, "_insert", lambda self, pos, node: (built.append(1), real(self, pos, node))[1])
    budget(512 << 10)  # 300 ADDs: ~1,800 graph nodes with the copy kept as imported, ~2.6 MiB
    with pytest.raises(ResourceError) as err:
        import_model(path)
    msg = _one_line(err.value)
    assert "300 operators" in msg and "before the import" in msg and "512.0 KiB" in msg, msg
    assert not built  # refused before the first node was made


def test_a_tflite_model_that_cannot_fit_is_refused_before_its_operators_are_read(
        tmp_path: Path, budget: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader states the operator count from the flatbuffer's vector length, before it parses any
    operator or tensor (a 100,000-ADD file under 64M: refused in ~2.6 s / 70 MB instead of 6 s / 224 MB)."""
    from hexnn_import.importers.tflite import reader

    path = _chain(tmp_path, 300)
    parsed: list[int] = []
    real = reader._subgraph
    monkeypatch.setattr(reader, "_subgraph", lambda *a, **k: (parsed.append(1), real(*a, **k))[1])
    budget(512 << 10)
    with pytest.raises(ResourceError) as err:
        import_model(path)
    assert "300 operators" in _one_line(err.value)
    assert not parsed  # no subgraph was read


def test_a_growing_graph_is_refused_once_its_records_pass_the_budget(budget: Any) -> None:
    budget(gm.CHECK_EVERY * gm.NODE_BYTES - 1)  # the records of CHECK_EVERY nodes just do not fit
    g = Graph()
    with pytest.raises(ResourceError) as err:
        for _ in range(3 * gm.CHECK_EVERY):
            g.const_ref(1.0)
    assert f"({gm.CHECK_EVERY:,} nodes so far" in _one_line(err.value)
    assert len(g.nodes) == gm.CHECK_EVERY  # refused at the first check past the budget, not later


def test_prepare_is_refused_up_front(tmp_path: Path, budget: Any) -> None:
    graph = import_model(_chain(tmp_path, 300))
    nodes = [n.node_id for n in graph.nodes]
    budget(1 << 20)
    with pytest.raises(ResourceError) as err:
        prepare(graph)
    assert "prepare of a graph of" in _one_line(err.value)
    assert [n.node_id for n in graph.nodes] == nodes and not graph.prepared  # no pass ran


def test_a_run_that_cannot_fit_is_refused_before_the_first_node(tmp_path: Path, budget: Any) -> None:
    runner = Runner(prepare(import_model(_chain(tmp_path, 150))))
    engine = runner.engine
    ran: list[int] = []
    for nid, kernel in list(engine._kernels.items()):  # count every node the run executes
        engine._kernels[nid] = lambda ctx, ins, _k=kernel, _id=nid: (ran.append(_id), _k(ctx, ins))[1]
    records = gm.record_bytes(engine.graph)
    per_node = gm.RUN_NODE_BYTES + gm.CACHE_NODE_BYTES
    ops = [n for n in engine.graph.nodes if n.op == "QuantizedAdd_8p8to8"]
    assert len(ops) == 150
    budget(records + 100 * per_node + (per_node // 2))  # room for the state of about 100 of the 150 ADDs
    x = {"x": np.zeros((1, 4, 4, 8), np.uint8)}
    with pytest.raises(ResourceError) as err:
        runner.run(x)
    msg = _one_line(err.value)
    assert not ran and not engine.tables.shared_tables  # nothing ran, nothing was built
    # the node named is the first whose state (and the tables first needed there, at their resident size) no
    # longer fits beside the records and activations: the two scalings' tables come at the first two ADDs
    first: dict[int, int] = {}
    seen: set[object] = set()
    for node, key, nbytes in planned_tables(engine.graph):
        if key not in seen:
            seen.add(key)
            first[node.node_id] = first.get(node.node_id, 0) + nbytes
    assert [n.node_id for n in ops[:2]] == list(first)
    sums = np.cumsum([per_node + int(first.get(n.node_id, 0) * TABLE_RESIDENT) for n in ops])
    k = int(np.searchsorted(sums, memory.budget_bytes() - records - activation_bytes(engine.graph)[0], "right")) + 1
    assert msg.startswith(f"node {ops[k - 1].label} (QuantizedAdd_8p8to8): the run's state of {k} op nodes"), msg
    assert 10 < k < 100, k
    budget(None)
    runner.run(x)
    assert len(ran) == 150  # within the default budget the same engine runs every node


def _peak_kib(args: list[str], cwd: Path) -> tuple[int, int, str]:
    peak = cwd / "peak.txt"
    r = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, str(peak), *args], cwd=cwd, capture_output=True,
                       text=True, timeout=120)
    return r.returncode, int(peak.read_text()) if peak.exists() else 0, r.stderr


def test_a_chain_that_fits_runs_below_the_budget(tmp_path: Path) -> None:
    """``run`` of a 100-ADD chain under --max-memory 256M: exit 0 and the process's peak resident size (VmHWM,
    interpreter and libraries included) below 256 MiB. Converting too is in bench/hostile_scale.py."""
    path = _chain(tmp_path, 100)
    np.save(tmp_path / "x.npy", np.zeros((1, 4, 4, 8), np.uint8))
    peak = tmp_path / "peak.txt"
    r = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, str(peak), "run", str(path), "--input", "x.npy",
                        "--max-memory", "256M"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert 0 < int(peak.read_text()) < 256 << 10


def test_identical_nodes_share_their_memos(tmp_path: Path) -> None:
    """The 100 ADDs on the same ranges keep two scalings between them, not one each, and give the outputs of
    an engine whose nodes keep their own (the store that does not count node states keeps them per node)."""
    path = _chain(tmp_path, 100)
    x = {"x": np.random.default_rng(38).integers(0, 256, (1, 4, 4, 8), dtype=np.uint8)}
    shared, own = Runner(prepare(import_model(path))), Runner(prepare(import_model(path)))
    own.engine.tables.counts_nodes = False
    got, want = shared.run(x), own.run(x)
    assert all(np.array_equal(got[k], want[k]) for k in want)
    scalings = [k for k in shared.engine.tables.memos if k[0] == "qadd_scaling"]
    assert len(scalings) == 2  # x + x, then prev + x at the same scales
    states = shared.engine.state.values()
    assert not any(k.startswith("_cache.qadd_scaling") for st in states for k in st)
    assert sum(k.startswith("_cache.qadd_scaling") for st in own.engine.state.values() for k in st) >= 100


def test_an_onnx_import_that_cannot_fit_is_refused_before_any_node(tmp_path: Path, budget: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"t{i}" for i in range(301)]
    nodes = [helper.make_node("Relu", [a], [b]) for a, b in zip(names, names[1:])]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("t300", TensorProto.FLOAT, [1, 4])])
    path = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    built: list[int] = []
    real = Graph._insert
    monkeypatch.setattr(Graph, "_insert", lambda self, pos, node: (built.append(1), real(self, pos, node))[1])
    budget(512 << 10)
    with pytest.raises(ResourceError) as err:
        import_model(path)
    assert "300 operators" in _one_line(err.value) and not built
    budget(None)
    # within the default budget it imports: one QuantizedRelu_8 for each of the file's 300 Relu nodes
    assert import_model(path).op_counts()["QuantizedRelu_8"] == len(nodes) == 300


def test_a_reset_keeps_the_shared_tables(tmp_path: Path) -> None:
    """``convert``'s output probe resets the engine before each of its six runs: the 256x256 tables (pure
    functions of the ranges) are kept, not built six times over, and the runs give the same codes."""
    path = tmp_path / "distinct.tflite"
    path.write_bytes(add_chain_tflite(40, distinct_ranges=True))
    runner = Runner(prepare(import_model(path)))
    x = {"x": np.random.default_rng(1).integers(0, 256, (1, 4, 4, 8), dtype=np.uint8)}
    first = runner.run(x)
    kept = {k: id(v[0]) for k, v in runner.engine.tables.shared_tables.items()}
    assert len(kept) == 40
    runner.reset_state()
    again = runner.run(x)
    assert {k: id(v[0]) for k, v in runner.engine.tables.shared_tables.items()} == kept  # none rebuilt
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert runner.engine.tables.total <= memory.budget_bytes()
