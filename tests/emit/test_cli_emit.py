"""``hexnn-import MODEL --emit c|dot|svg|png|json -o FILE``."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import hexnn_import as hx

MODEL = Path(__file__).resolve().parents[2] / "models" / "small_int8.tflite"


def cli(*args: str, cwd: Path, env_path: str | None = None) -> subprocess.CompletedProcess:
    """Run the CLI in a real process (cwd away from the source tree)."""
    import os

    env = dict(os.environ)
    if env_path is not None:
        env["PATH"] = env_path
    return subprocess.run([sys.executable, "-m", "hexnn_import.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env, check=False)


def test_emit_c_writes_source_and_header(tmp_path: Path, gcc_check: Callable) -> None:
    r = cli(str(MODEL), "--emit", "c", "-o", "net.c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote net.c" in r.stdout and "wrote net.h" in r.stdout
    gcc_check(tmp_path / "net.c")
    r = cli(str(MODEL), "--emit", "c", "-o", "net.c", "--json", cwd=tmp_path)
    summary = json.loads(r.stdout)
    assert summary["emitted"] == {"format": "c", "files": ["net.c", "net.h"]}
    assert (tmp_path / "net.c").read_text().count("hexagon_nn_append_const_node(") == summary["op_counts"]["Const"]


def test_emit_dot_and_json(tmp_path: Path, dot_check: Callable) -> None:
    r = cli(str(MODEL), "--emit", "dot", "-o", "g.dot", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    parsed = dot_check((tmp_path / "g.dot").read_text())
    assert any("Supernode_8x8p32to8_d32" in a["label"] for a in parsed["nodes"].values())  # type: ignore[union-attr]
    r = cli(str(MODEL), "--emit", "json", "-o", "g.hexnn.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert hx.load_graph(tmp_path / "g.hexnn.json").op_counts()["Supernode_8x8p32to8_d32"] == 3


def test_emit_default_paths_are_in_the_current_directory(tmp_path: Path) -> None:
    """Without -o the files take the model's name in the cwd, never the model's folder (issue 21)."""
    (tmp_path / "models").mkdir()
    model = tmp_path / "models" / "m.tflite"
    shutil.copy(MODEL, model)
    for fmt, names in (("c", ["m.c", "m.h"]), ("dot", ["m.dot"]), ("json", ["m.hexnn.json"])):
        r = cli(str(model), "--emit", fmt, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert all((tmp_path / n).is_file() for n in names)
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["m.tflite"]


def test_emit_pictures_need_graphviz(tmp_path: Path) -> None:
    if shutil.which("dot"):
        r = cli(str(MODEL), "--emit", "svg", "-o", "g.svg", cwd=tmp_path)
        assert r.returncode == 0 and b"<svg" in (tmp_path / "g.svg").read_bytes()
    bare = tmp_path / "bin"
    bare.mkdir()
    r = cli(str(MODEL), "--emit", "png", "-o", "g.png", cwd=tmp_path, env_path=str(bare))
    assert r.returncode == 2 and r.stderr.startswith("error:") and "Graphviz" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "g.png").exists()


def test_emit_errors_are_one_line(tmp_path: Path) -> None:
    r = cli(str(MODEL), "--emit", "c", "-o", "nowhere/net.c", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "net.c").mkdir()
    r = cli(str(MODEL), "--emit", "c", "-o", "net.c", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error:")
    assert not (tmp_path / "net.h").exists()
    r = cli(str(MODEL), "--emit", "bogus", cwd=tmp_path)
    assert r.returncode == 2 and "bogus" in r.stderr
