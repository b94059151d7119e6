"""``compare --resume`` says how many finished shards it reused (issue [First hour] finding 8), and the
resumed report is the one an uninterrupted run gives."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from hexnn_import.compare import CompareOptions, compare
from hexnn_import.compare.progress import EVERY_ENV
from hexnn_import.compare.report import to_json

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")


@pytest.fixture(autouse=True)
def _progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EVERY_ENV, "0.01")  # piped progress lines, so that the last one can be read


def _run(results: Path, resume: bool) -> tuple[dict, str]:
    opts = CompareOptions(MODEL, data="generated:40", preprocess="mobilenet", jobs=1, results=str(results),
                          resume=resume)
    buf = io.StringIO()
    report = to_json(compare(opts, Console(file=buf, width=300)))
    return json.loads(json.dumps(report)), buf.getvalue()


def test_resume_says_what_it_reused_and_reports_as_a_whole_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    whole, said = _run(results, resume=False)
    assert whole["samples"] == 40 and "--resume" not in said
    assert sorted(p.name for p in results.glob("shard_*.npz")) == [f"shard_00000{i}.npz" for i in range(2)]
    (results / "shard_000000.npz").unlink()  # an interrupted run: only shard 1 (8 samples) finished
    resumed, said = _run(results, resume=True)
    first = said.splitlines()[0]
    assert first == f"compare: --resume: reused 1 of 2 shards (8 of 40 samples) in {results}; 1 to run", said
    assert said.splitlines()[-1].startswith("compare: 40/40 samples (2/2 shards)")
    assert resumed == whole
    again, said = _run(results, resume=True)  # nothing left to run
    assert said.splitlines()[0].endswith("reused 2 of 2 shards (40 of 40 samples) in " + f"{results}; 0 to run")
    assert again == whole
