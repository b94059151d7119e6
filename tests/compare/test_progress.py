"""compare's progress when piped (issue [First hour] finding 8): plain lines on stderr while it runs, at least
every ``$HEXNN_PROGRESS_EVERY`` seconds (10 by default), and one at the end; none for a run shorter than
that; the bar on a terminal."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from hexnn_import.compare.progress import (DEFAULT_EVERY_S, EVERY_ENV, BarProgress, PlainProgress, progress_every,
                                           progress_for)

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")
LINE = re.compile(r"^compare: (\d+)/(\d+) samples \((\d+)/(\d+) shards\) (\d+) s")


def test_a_piped_run_prints_progress_lines_while_it_runs(tmp_path: Path) -> None:
    """40 generated images are two shards (32 + 8); with a line every 0.05 s, lines come before the first
    shard ends (0 of 40 samples) and the last says 40/40 - stdout and stderr both pipes, as under ``| tee``."""
    env = dict(os.environ, **{EVERY_ENV: "0.05"})
    done = subprocess.run([sys.executable, "-m", "hexnn_import.cli", "compare", MODEL, "--data", "generated:40",
                           "--preprocess", "mobilenet", "--jobs", "1"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [m.groups() for m in map(LINE.match, done.stderr.splitlines()) if m]
    assert len(lines) >= 2, done.stderr
    assert all(total == "40" and shards == "2" for _, total, _, shards, _ in lines)
    assert int(lines[0][0]) < 40, "no line before the end"
    assert lines[-1][:4] == ("40", "40", "2", "2")
    seen = [int(s) for s, *_ in lines]
    assert seen == sorted(seen) and set(seen) <= {0, 32, 40}
    assert "samples" in done.stdout and "compare:" not in done.stdout  # the report alone on stdout


def test_lines_come_every_interval_even_while_no_shard_ends() -> None:
    buf = io.StringIO()
    err = Console(file=buf, width=200)
    with progress_for(err, total=450, shards=15, samples_done=96, shards_done=3, every=0.02) as progress:
        assert isinstance(progress, PlainProgress)
        time.sleep(0.3)  # one long shard: the lines keep coming
        progress.advance(32)
    lines = buf.getvalue().splitlines()
    assert len(lines) >= 3 and all(LINE.match(x) for x in lines), lines
    assert lines[0].startswith("compare: 96/450 samples (3/15 shards)")
    assert lines[-1].startswith("compare: 128/450 samples (4/15 shards)") and "samples/s" in lines[-1]


def test_a_run_shorter_than_the_interval_prints_nothing() -> None:
    buf = io.StringIO()
    with progress_for(Console(file=buf), total=64, shards=2, every=30.0) as progress:
        progress.advance(32)
        progress.advance(32)
    assert buf.getvalue() == ""


def test_a_terminal_gets_the_bar_and_the_interval_comes_from_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    term = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(progress_for(term, total=10, shards=1), BarProgress)
    monkeypatch.setenv(EVERY_ENV, "2.5")
    assert progress_every() == 2.5
    for bad in ("0", "-1", "soon"):
        monkeypatch.setenv(EVERY_ENV, bad)
        assert progress_every() == DEFAULT_EVERY_S == 10.0
    monkeypatch.delenv(EVERY_ENV)
    assert progress_every() == 10.0
