"""``xs3-export`` is linear in layers (issue 38, finding 2: ``xs3/graph_pass.py`` walked every tensor per layer
and ``xs3/arena.py`` every placed buffer per buffer; 4,000 ADDs took 31 s, 10,000 478 s). The 10,000-layer
replay with its times is ``bench/hostile_scale.py``."""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from hexnn_import.testing.hostile_chains import add_chain_tflite
from hexnn_import.xs3.arena import ArenaBuffer, largest_live_bytes, plan_arena


def greedy_reference(buffers: list[ArenaBuffer], alignment: int = 4) -> dict[str, int]:
    """TFLM's GreedyMemoryPlanner as xs3/arena.py's module doc words it, walking every placed buffer."""
    sizes = [-(-b.size // alignment) * alignment for b in buffers]
    placed: list[tuple[int, int, int]] = []  # (offset, placement order, index)
    out: dict[str, int] = {}
    for seq, i in enumerate(sorted(range(len(buffers)), key=lambda k: -sizes[k])):
        b, cand = buffers[i], 0
        for off, _, j in sorted(placed):
            o = buffers[j]
            if o.first > b.last or b.first > o.last:
                continue
            if off - cand >= sizes[i]:
                break
            cand = max(cand, off + sizes[j])
        out[b.name] = cand
        placed.append((cand, seq, i))
    return out


def test_the_arena_plan_equals_the_walk_of_every_buffer() -> None:
    rng = np.random.default_rng(38)
    for trial in range(30):
        n = int(rng.integers(1, 120))
        first = rng.integers(-1, 90, n)
        bufs = [ArenaBuffer(f"t{k}", int(rng.integers(0, 3000)), int(f), int(f + rng.integers(0, 1 + 40 * (k % 3))))
                for k, f in enumerate(first)]
        assert plan_arena(bufs).offsets == greedy_reference(bufs), trial
        live = [sum(b.size for b in bufs if b.first <= p <= b.last) for p in range(-1, 200)]
        assert largest_live_bytes(bufs) == max(live)


def test_a_20000_buffer_chain_plans_in_linear_time() -> None:
    n = 20_000  # a chain: op k writes t{k}, op k+1 reads it; the input lives throughout (the ADD chain's x)
    bufs = [ArenaBuffer("x", 128, -1, n)] + [ArenaBuffer(f"t{k}", 128, k, k + 1) for k in range(n)]
    t0 = time.process_time()
    plan = plan_arena(bufs)
    assert time.process_time() - t0 < 3.0  # the walk of every placed buffer took minutes
    assert plan.size == 3 * 128 and plan.largest_live == 3 * 128  # x, and two chain tensors at a time


def test_a_400_layer_chain_exports_whole(tmp_path: Path) -> None:
    model = tmp_path / "chain.tflite"
    model.write_bytes(add_chain_tflite(400))  # 1,000 take ~3 s of CPU, past 5 s on a loaded machine
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", "xs3-export", str(model), "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.returncode == 0, r.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 4.0, cpu  # ~1.5 s
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(list((tmp_path / "out").rglob("*.npz"))) >= 400, sorted(manifest)[:5]
