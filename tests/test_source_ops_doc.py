"""docs/ stays true: the supported source ops page is the importers' registries, the CLI reference names every
option click knows (issue 21: "supported source ops (generated, checked by a test to be current), CLI reference")."""
from __future__ import annotations

import json
import re
from pathlib import Path

import click
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.source_ops import REGENERATE, source_op_data, source_op_table

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_source_ops_page_is_current() -> None:
    assert (DOCS / "source_ops.md").read_text() == source_op_table(), f"regenerate it: `{REGENERATE}`"


def test_known_source_ops_are_listed() -> None:
    text = source_op_table()
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "CUSTOM:TFLite_Detection_PostProcess",
               "Conv", "QLinearConv", "QuantizeLinear", "DequantizeLinear", "QGemm"):
        assert re.search(rf"^\| `{re.escape(op)}` \|", text, re.M), op
    row = next(line for line in text.splitlines() if line.startswith("| `CONV_2D` |"))
    assert "Supernode_8x8p32to8" in row and "per-channel" in row  # emitted ops and the check's conditions


def test_every_registered_op_has_its_emits_and_conditions() -> None:
    rows = source_op_data()["ops"]
    assert {r["format"] for r in rows} == {"tflite", "onnx"}
    for r in rows:  # emits may be empty: DEQUANTIZE, Identity, Cast... only rename a value
        assert r["conditions"], f"{r['op']}: give its check function a docstring"
    assert all(r["emits"] for r in rows if r["op"] in ("CONV_2D", "Conv", "QLinearConv", "QuantizeLinear"))


def test_ops_source_cli_prints_the_page_and_json() -> None:
    res = CliRunner().invoke(cli, ["ops", "--source"])
    assert res.exit_code == 0, res.output
    assert res.output == source_op_table()
    res = CliRunner().invoke(cli, ["ops", "--source", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert any(r["op"] == "QLinearConv" and r["format"] == "onnx" for r in data["ops"])
    assert "SHAPE" in data["folded_only"]["tflite"]["ops"]


def _sections(text: str) -> dict[str, str]:
    """``## `hexnn-import <command>` `` heading -> the text up to the next such heading."""
    parts = re.split(r"^## `hexnn-import(?: ([\w-]+))?`.*$", text, flags=re.M)
    return {(name or ""): body for name, body in zip(parts[1::2], parts[2::2])}


def test_cli_reference_documents_every_command_and_option() -> None:
    """Every command click knows has a section in docs/cli.md, and every flag of its options appears there."""
    sections = _sections((DOCS / "cli.md").read_text())
    commands: dict[str, click.Command] = {"": cli, **cli.commands}  # type: ignore[attr-defined]
    for name, cmd in commands.items():
        assert name in sections, f"docs/cli.md has no section for `hexnn-import {name}`"
        body = sections[name]
        assert "```\nhexnn-import" in body or "\nhexnn-import " in body, f"no example for {name or 'top level'}"
        for param in cmd.params:
            if not isinstance(param, click.Option):
                continue
            for flag in param.opts + param.secondary_opts:
                assert re.search(rf"`[^`]*(?<![\w-]){re.escape(flag)}(?![\w-])", body), \
                    f"docs/cli.md: `hexnn-import {name}` does not document {flag}"
