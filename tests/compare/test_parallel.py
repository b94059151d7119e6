"""compare in shards (issue [Scale]): the same report from one process, local workers and a two-worker Dask
cluster; a run killed midway resumes from its results folder to the same report."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from hexnn_import.compare import CompareOptions, compare
from hexnn_import.compare.report import to_json
from hexnn_import.compare.shards import SHARD_SIZE
from hexnn_import.errors import InputDataError

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")
FLOAT = str(ROOT / "models" / "small_float.tflite")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three classes of random images, 75 in all (3 shards), of other sizes than the model's 24 x 24."""
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(7)
    for k, name in enumerate(("bird", "cat", "dog")):
        (root / name).mkdir()
        for i in range(25):
            arr = rng.integers(0, 256, (30 + i % 5, 40, 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / name / f"{i:03d}.png")
    return root


def report(folder: Path, **kw) -> dict:  # type: ignore[no-untyped-def]
    opts = CompareOptions(MODEL, data=str(folder), preprocess="mobilenet", float_model=FLOAT, per_layer=True, **kw)
    return json.loads(json.dumps(to_json(compare(opts))))


def test_local_workers_and_a_dask_cluster_give_the_report_of_one_process(folder: Path) -> None:
    from distributed import LocalCluster

    one = report(folder, jobs=1)
    assert one["samples"] == 75 and 75 > 2 * SHARD_SIZE
    hexagon = one["runners"]["hexagon"]
    assert [row["samples"] for row in hexagon["per_class"]] == [25, 25, 25]
    assert [row["name"] for row in hexagon["per_class"]] == ["bird", "cat", "dog"]
    assert one["comparisons"][0]["layers"], "per-layer statistics are part of what must agree"
    assert report(folder, jobs=2) == one
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert report(folder, scheduler=cluster.scheduler_address) == one


def test_exact_sums_and_the_merge_do_not_depend_on_the_order() -> None:
    """1e16 + 1 - 1e16 is 1 (a float64 running sum says 0); shards merged in any order give one result."""
    from hexnn_import.compare.results import Comparison, CompareResult, RunnerResult
    from hexnn_import.compare.merge import ExactSum, Merger
    from hexnn_import.compare.tensor_stats import TensorStats

    acc = ExactSum()
    for v in (1e16, 1.0, -1e16):
        acc.add(v)
    assert acc.value == 1.0 and (1e16 + 1.0) - 1e16 == 0.0
    rng = np.random.default_rng(3)
    parts = []
    for k in range(7):
        stats = TensorStats("y")
        stats.update(rng.normal(0, 10.0 ** k, 50), rng.normal(0, 10.0 ** k, 50), 0.5)
        parts.append(CompareResult("m", "d", 50, [RunnerResult("hexagon", "b", "m")], [Comparison("hexagon", "f",
                                   {"y": stats})], predictions={"hexagon": rng.integers(0, 9, (50, 5))},
                                   labels=rng.integers(0, 9, 50), n_classes=9))
    results = []
    for order in (range(7), [6, 2, 0, 5, 1, 3, 4]):
        m = Merger()
        for i in order:
            m.add(i, parts[i])
        results.append(to_json(m.result("d")))
    assert results[0] == results[1]
    want = math.fsum(p.comparisons[0].outputs["y"].signal for p in parts)
    assert results[0]["comparisons"][0]["outputs"][0]["sqnr_db"] == pytest.approx(
        10 * math.log10(want / math.fsum(p.comparisons[0].outputs["y"].noise for p in parts)), rel=1e-15)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hexnn_import.cli", "compare", MODEL, "--float-model", FLOAT, *args]


def test_a_killed_run_resumes_to_the_same_report(folder: Path, tmp_path: Path) -> None:
    base = ["--data", str(folder), "--preprocess", "mobilenet", "--jobs", "1"]
    whole = subprocess.run(_cli(*base, "--json", str(tmp_path / "whole.json")), capture_output=True, text=True,
                           timeout=300)
    assert whole.returncode == 0, whole.stderr
    results = tmp_path / "results"
    # a shard that takes a while: each image goes through the engine, LiteRT int8 and LiteRT float, so the
    # first shard file appears well before the third
    proc = subprocess.Popen(_cli(*base, "--results", str(results), "--json", str(tmp_path / "x.json")),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not list(results.glob("shard_*.npz")) and proc.poll() is None:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = sorted(results.glob("shard_*.npz"))
    assert 1 <= len(first) < 3, f"killed after {len(first)} of 3 shards"
    assert not (tmp_path / "x.json").exists()
    stamps = {p.name: p.stat().st_mtime_ns for p in first}
    again = subprocess.run(_cli(*base, "--results", str(results), "--json", str(tmp_path / "x.json")),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "--resume continues it" in again.stderr
    resumed = subprocess.run(_cli(*base, "--results", str(results), "--resume", "--json",
                                  str(tmp_path / "resumed.json")), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((tmp_path / "resumed.json").read_text()) == json.loads((tmp_path / "whole.json").read_text())
    assert {p.name: p.stat().st_mtime_ns for p in first} == stamps, "finished shards are not run again"
    assert len(list(results.glob("shard_*.npz"))) == 3
    with np.load(results / "shard_000000.npz") as z:  # every sample's outputs are kept
        assert z["out_0"].shape == (32, 1, 10) and z["labels"].tolist() == [0] * 25 + [1] * 7


def test_a_results_folder_of_another_run_is_refused(folder: Path, tmp_path: Path) -> None:
    results = tmp_path / "r"
    report(folder, jobs=1, limit=5, results=str(results))
    assert report(folder, jobs=1, limit=5, results=str(results), resume=True)["samples"] == 5
    with pytest.raises(InputDataError, match=r"holds another run \(it differs in samples\)"):
        report(folder, jobs=1, limit=6, results=str(results), resume=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    with pytest.raises(InputDataError, match="holds other files"):
        report(folder, jobs=1, limit=5, results=str(tmp_path / "other"))
    assert (tmp_path / "other" / "keep.txt").read_text() == "mine"
    with pytest.raises(InputDataError, match="holds no run to resume"):
        report(folder, jobs=1, limit=5, results=str(tmp_path / "new"), resume=True)
    whole = (results / "shard_000000.npz").read_bytes()
    (results / "shard_000000.npz").write_bytes(whole[:len(whole) // 2])  # a zip cut in half
    with pytest.raises(InputDataError, match="shard_000000.npz: not the shard 0 this run wrote"):
        report(folder, jobs=1, limit=5, results=str(results), resume=True)


def test_a_workers_error_is_the_commands_one_line(tmp_path: Path) -> None:
    """A damaged image in the second shard, read by a --jobs 2 worker: the command says which file, in one line,
    exit 2. The project's errors cross process boundaries whole (OpError and UnsupportedOpsError too)."""
    import pickle

    from hexnn_import.errors import OpError, UnsupportedOpsError

    rng = np.random.default_rng(1)
    (tmp_path / "a").mkdir()
    for i in range(40):
        Image.fromarray(rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)).save(tmp_path / "a" / f"{i:03d}.png")
    (tmp_path / "a" / "035.png").write_bytes(b"not a png")
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", "compare", MODEL, "--data", str(tmp_path / "a"),
                        "--preprocess", "mobilenet", "--jobs", "2"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "035.png: not an image Pillow can decode" in r.stderr
    e = pickle.loads(pickle.dumps(OpError("conv1", "Supernode_8x8p32to8", "bad range")))
    assert (e.node, e.op, str(e)) == ("conv1", "Supernode_8x8p32to8", "node conv1 (Supernode_8x8p32to8): bad range")
    u = UnsupportedOpsError("ONNX", {"Foo": ["n1"]})
    assert str(pickle.loads(pickle.dumps(u))) == str(u)
