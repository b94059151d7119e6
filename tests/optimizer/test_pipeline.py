"""The pipeline: documented order, verify after each pass naming the pass that broke the graph,
op-class skipping, the timing table, api.prepare and the CLI options."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

import hexnn_import as hx
from hexnn_import.cli import cli
from hexnn_import.errors import GraphError, HexnnError
from hexnn_import.optimizer import DEFAULT_PASSES, UnknownPassError, passes_by_name, run_pipeline
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.pass_base import Pass
from hexnn_import.optimizer.pipeline import verify_default
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3

MODELS = Path(__file__).resolve().parents[2] / "models"
FLOAT = MODELS / "small_float.tflite"

DOCUMENTED = ["make_autorequantize", "make_autoquantize", "remove_unnecessary_quants",
              "remove_unnecessary_dequant_quants", "remove_unnecessary_requants", "mark_biasadd_nodes",
              "make_reluX_nodes", "make_supernodes", "move_relus", "convert_to_depth32",
              "remove_unnecessary_d32_converts", "remove_concats_with_placement", "remove_dead_nodes",
              "gather_const_nodes"]


@dataclass(frozen=True)
class Breaker(Pass):
    """Wires the first Relu to the outputs of the second (a later node): a cycle."""

    name: str = "breaker"

    def apply(self, ed: GraphEditor) -> int:
        first, second = ed.nodes_of(["QuantizedRelu_8"])
        ed.rewire(first, q3(second))
        return 1


def small() -> QBuilder:
    b = QBuilder()
    x = b.input((1, 2, 2, 3))
    r1 = b.op("QuantizedRelu_8", x, (1, 2, 2, 3))
    b.output(q3(b.op("QuantizedRelu_8", q3(r1), (1, 2, 2, 3))))
    return b


def test_default_order_is_the_documented_one() -> None:
    names = [p.name for p in DEFAULT_PASSES]
    once = [n for i, n in enumerate(names) if n not in names[:i]]
    # plus prepare.c optimize()'s passes the notes do not list: fold_scalar_mpys between make_supernodes and
    # move_relus, create_transpose_conv_nodes and convert_insane_dwise right after make_autoquantize, and a
    # first gather_const_nodes right before make_supernodes
    want = [n for n in DOCUMENTED if n not in ("remove_dead_nodes", "gather_const_nodes")]
    want.insert(want.index("move_relus"), "fold_scalar_mpys")
    want.insert(want.index("remove_unnecessary_quants"), "create_transpose_conv_nodes")
    want.insert(want.index("remove_unnecessary_quants"), "create_transpose_conv16_nodes")  # its 16-bit case
    want.insert(want.index("remove_unnecessary_quants"), "convert_insane_dwise")
    want.insert(want.index("make_supernodes"), "gather_const_nodes")
    assert [n for n in once if n != "remove_dead_nodes"] == want
    assert names[-2:] == ["remove_dead_nodes", "gather_const_nodes"] and names.count("gather_const_nodes") == 2
    # dead nodes also go before the fusions (a bypassed node would hide a unique consumer)
    assert names.index("remove_dead_nodes") < names.index("make_supernodes")


def test_the_pass_that_breaks_the_graph_is_named() -> None:
    with pytest.raises(GraphError, match="pass breaker broke the graph: .*does not name an earlier node"):
        run_pipeline(small().g, [Breaker()])  # verify is on in tests by default
    run_pipeline(small().g, [Breaker()], verify=False)  # unchecked when asked


def test_verify_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert verify_default()  # under pytest
    monkeypatch.setenv("HEXNN_VERIFY", "0")
    assert not verify_default()
    monkeypatch.delenv("HEXNN_VERIFY")
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert not verify_default()
    monkeypatch.setenv("HEXNN_VERIFY", "1")
    assert verify_default()


def test_passes_without_their_op_class_are_skipped() -> None:
    report = run_pipeline(hx.import_model(MODELS / "small_int8.tflite"))
    ran = {r.name: r.ran for r in report.records}
    assert not ran["make_supernodes"] and not ran["make_autoquantize"] and ran["convert_to_depth32"]
    # the class set grows with the nodes a pass adds: the d32 converts enable their cleanup pass
    assert ran["remove_unnecessary_d32_converts"]
    assert report.op_counts_before["Supernode_8x8p32to8"] == 3


def test_timing_table_and_api_prepare() -> None:
    g = hx.import_model(FLOAT)
    hx.prepare(g, timing=True)
    timing = g.meta["prepare_timing"]
    assert [t["name"] for t in timing] == [p.name for p in DEFAULT_PASSES]
    assert all(t["seconds"] >= 0 for t in timing)
    report = run_pipeline(hx.import_model(FLOAT))
    text = report.table()
    assert "make_supernodes" in text and "skipped" in text and text.splitlines()[-1].startswith("total")


def test_prepare_options() -> None:
    g = hx.import_model(FLOAT)
    counts = g.op_counts()
    assert hx.prepare(g, optimize=False).op_counts() == counts
    hx.prepare(g, passes="make_supernodes, remove_dead_nodes")
    assert "Supernode_8x8p32to8" in g.op_counts() and "QuantizedConv2d_8x8to32" not in g.op_counts()
    assert "Convert_to_d32" not in g.op_counts()
    with pytest.raises(UnknownPassError, match="nope.*passes are: make_autorequantize"):
        hx.prepare(g, passes=["make_supernodes", "nope"])
    assert issubclass(UnknownPassError, HexnnError)
    assert [p.name for p in passes_by_name(["gather_const_nodes"])] == ["gather_const_nodes"]


def test_cli_prepares_by_default_and_takes_options(tmp_path: Path) -> None:
    run = CliRunner()
    out = str(tmp_path / "g.hexnn.json")
    r = run.invoke(cli, [str(FLOAT), "-o", out, "--json", "--timing"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["op_counts_imported"]["QuantizedConv2d_8x8to32"] == 3
    assert "QuantizedConv2d_8x8to32" not in s["op_counts"] and s["op_counts"]["Supernode_8x8p32to8_d32"] == 3
    assert [t["name"] for t in s["prepare_timing"]][0] == "make_autorequantize"
    r = run.invoke(cli, [str(FLOAT), "-o", out, "--json", "--no-optimize"])
    s = json.loads(r.output)
    assert s["op_counts"] == s["op_counts_imported"]
    r = run.invoke(cli, [str(FLOAT), "-o", out, "--json", "--passes", "make_supernodes,remove_dead_nodes"])
    assert json.loads(r.output)["op_counts"]["Supernode_8x8p32to8"] == 3
    r = run.invoke(cli, [str(FLOAT), "-o", out, "--passes", "bogus"])
    assert r.exit_code == 2 and "unknown pass(es) bogus" in r.output
    r = run.invoke(cli, [str(FLOAT), "-o", out, "--timing"])
    assert r.exit_code == 0 and "imported" in r.output and "prepare passes" in r.output
    # the prepared graph file loads and runs again
    assert hx.load_graph(out).op_counts()["Supernode_8x8p32to8_d32"] == 3


def test_unverified_run_gives_the_same_valid_graph() -> None:
    """Without verify the list is committed only where needed (lazily): same graph, still valid."""
    a, b = hx.import_model(FLOAT), hx.import_model(FLOAT)
    run_pipeline(a, verify=True)
    run_pipeline(b, verify=False)
    b.verify()
    assert canonical(a) == canonical(b)


def test_a_broken_input_graph_is_reported_as_such() -> None:
    b = small()
    b.g.nodes.reverse()
    with pytest.raises(GraphError, match="the graph given to prepare is broken"):
        run_pipeline(b.g)
