"""Issue 34 finding 1: the reference runtimes come with the default install where their wheels exist; where one
is missing, a command that needs it stops with one line naming the package and the extra (exit 2), never an
internal error, and no command reports agreement it could not measure."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
from packaging.requirements import Requirement

from hexnn_import.examples import example_file
from hexnn_import.optional import EXTRAS, MissingDependencyError, require

ROOT = Path(__file__).resolve().parent.parent


def cli_without(module: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``hexnn-import ARGS`` in a fresh interpreter where ``import MODULE`` fails as if it were not installed."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            "from hexnn_import.cli import main\n"
            f"sys.argv = ['hexnn-import', *{[str(a) for a in args]!r}]\nmain()\n")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_default_dependencies_hold_both_reference_runtimes_on_this_machine() -> None:
    deps = [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    runtimes = {r.name: r for r in deps if r.name in ("onnxruntime", "ai-edge-litert")}
    assert set(runtimes) == {"onnxruntime", "ai-edge-litert"}
    # this linux x86_64 machine has both wheels; a platform without them (e.g. linux riscv64) gets neither
    assert all(r.marker is None or r.marker.evaluate() for r in runtimes.values())
    riscv = {"sys_platform": "linux", "platform_machine": "riscv64"}
    assert not any(r.marker.evaluate(riscv) for r in runtimes.values())


def test_compare_without_litert_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    out = cli_without("ai_edge_litert", ["compare", example_file("small_int8.tflite"), "--data", "generated:2"],
                      tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "internal error" not in lines[0]
    assert "ai-edge-litert" in lines[0] and "hexnn-import[reference]" in lines[0]


def test_compare_onnx_without_onnxruntime_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, tmp_path / "relu.onnx")
    np.savez(tmp_path / "d.npz", x=np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 1, 4))
    out = cli_without("onnxruntime", ["compare", "relu.onnx", "--data", "d.npz"], tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "onnxruntime" in lines[0] and "hexnn-import[reference]" in lines[0], lines


def test_xs3_export_without_litert_says_agreement_was_not_measured(tmp_path: Path) -> None:
    out = cli_without("ai_edge_litert", ["xs3-export", example_file("small_int8.tflite"), "-o", "x"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "agreement with the source runtime not measured: ai-edge-litert" in out.stdout
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    assert "ai-edge-litert" in manifest["agreement"]["note"]
    assert all(e["exact_fraction"] is None for e in manifest["layers"])  # nothing reported that was not measured


def test_require_names_the_extra_and_is_still_an_import_error() -> None:
    assert {"ai_edge_litert", "onnxruntime"} <= set(EXTRAS)
    saved = sys.modules.get("dask")
    sys.modules["dask"] = None  # type: ignore[assignment]
    try:
        try:
            require("dask", "compare --scheduler")
        except MissingDependencyError as exc:
            assert isinstance(exc, ImportError)
            assert str(exc).startswith("compare --scheduler: dask[distributed]") and "hexnn-import[cluster]" in str(exc)
        else:
            raise AssertionError("require did not raise")
    finally:
        if saved is None:
            del sys.modules["dask"]
        else:
            sys.modules["dask"] = saved
