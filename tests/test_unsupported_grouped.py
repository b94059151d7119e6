"""The unsupported-op error: one line grouped by op type (count, reasons, at most three example names),
every node under --json."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.testing import TFLiteBuilder


def _model(n: int) -> bytes:
    """``n`` CUMSUM ops (no mapping) and one int16 RELU (a reason) on one float input."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 8), np.float32)
    axis = b.add_const("axis", np.array([1], np.int32))
    outs = []
    for k in range(n):
        y = b.add_tensor(f"cumsum_output_with_a_long_keras_style_name_{k:03d}/" + "block" * 8, (1, 8), np.float32)
        b.add_operator("CUMSUM", [x, axis], [y], {})
        outs.append(y)
    i16 = b.add_tensor("i16", (1, 8), np.int16)
    r = b.add_tensor("r", (1, 8), np.int16)
    b.add_operator("RELU", [i16], [r], {})
    b.set_io([x, i16], outs + [r])
    return b.build()


def test_message_is_one_grouped_line() -> None:
    err = UnsupportedOpsError("TFLite", {"CUMSUM": [f"c{k}" for k in range(200)], "RELU (input of type int16)": ["r"],
                                         "RELU (fused activation)": ["q"]})
    msg = str(err)
    assert "\n" not in msg and len(msg) < 400
    assert msg.startswith("unsupported TFLite op(s) (2 types, 202 nodes; --json lists every node)")
    assert "CUMSUM x200 [no mapping for this op] (e.g. c0, c1, c2, ...)" in msg  # every type says why
    assert "RELU x2 [input of type int16; fused activation]" in msg
    d = err.as_dict()
    cumsum = next(g for g in d["unsupported"] if g["op"] == "CUMSUM")
    assert cumsum["count"] == 200 and len(cumsum["nodes"]) == 200


def test_cli_prints_one_line_and_the_full_list_under_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.tflite"
    path.write_bytes(_model(30))
    r = CliRunner().invoke(cli, [str(path), "-o", str(tmp_path / "g.hexnn.json")])
    assert r.exit_code == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "CUMSUM x30" in lines[0] and "..." in lines[0]
    r = CliRunner().invoke(cli, [str(path), "-o", str(tmp_path / "g.hexnn.json"), "--json"])
    assert r.exit_code == 2
    d = json.loads(r.stdout)
    groups = {g["op"]: g for g in d["unsupported"]}
    assert groups["CUMSUM"]["count"] == 30 and len(groups["CUMSUM"]["nodes"]) == 30
    assert not (tmp_path / "g.hexnn.json").exists()
