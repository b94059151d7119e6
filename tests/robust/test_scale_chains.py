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
import pytest

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
    with np.load(tmp_path / "out" / manifest["arrays"]) as z:  # one archive: a file per layer cost seconds at 10,000
        assert len({f.split("/")[0] for f in z.files}) == 400 == manifest["summary"]["lowered"], sorted(manifest)[:5]


def _savez(arrays: dict[str, np.ndarray]) -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_layer_files_are_numpy_s_own_bytes() -> None:
    """xs3/npz_bytes.py builds layers.npz without zipfile (a quarter of a 10,000-layer export): the bytes are
    np.savez's, for every kind of array a layer's members hold and the rarer ones."""
    from hexnn_import.xs3 import npz_bytes as nb

    rng = np.random.default_rng(38)
    cases = [{}, {"kernel": np.array("conv2d_deep"), "name": np.array("a/b;c"), "zero_point": np.array(-3, np.int64),
                  "weights": rng.integers(-128, 128, (2, 3, 3, 32), dtype=np.int8),
                  "bso": rng.integers(-2**15, 2**15, (1, 7, 16), dtype=np.int16),
                  "params": np.arange(9, dtype=np.int64), "param_names": np.array(["k_h", "k_w", "stride"]),
                  "lut": rng.integers(-128, 128, 256, dtype=np.int8), "window_shape": np.array([3, 3])},
             {"f": np.asfortranarray(rng.random((3, 5))), "strided": rng.random((4, 6))[:, ::2],
              "empty": np.zeros((0, 4), np.float32), "scalar": np.float32(2.5), "big_endian": np.ones(3, ">i4"),
              "flags": np.array([True, False]), "rec": np.zeros(2, [("a", "<i4"), ("b", "<f8")])}]
    for arrays in cases:
        assert nb._fast(arrays) == _savez(arrays), sorted(arrays)
        assert nb.npz_bytes(arrays) == _savez(arrays)
    assert nb._fast({"o": np.array([object()])}) is None  # object arrays: numpy's path (it pickles)
    assert nb._fast({"é": np.zeros(1)}) is None  # a non-ASCII member name: zipfile's UTF-8 flag


def test_layer_files_fall_back_to_numpy_when_the_bytes_would_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    from hexnn_import.xs3 import npz_bytes as nb

    monkeypatch.setattr(nb, "_state", {"checked": False, "exact": True})
    monkeypatch.setattr(nb, "_VERSION", 20)  # as a Python whose zipfile writes other member versions would
    arrays = {"x": np.arange(5, dtype=np.int8)}
    assert nb.npz_bytes(arrays) == _savez(arrays) and nb._state == {"checked": True, "exact": False}
    assert nb.npz_bytes({"y": np.ones(2)}) == _savez({"y": np.ones(2)})


def test_an_archive_past_65535_members_reads_back_whole() -> None:
    """A 10,000-layer export's one layers.npz holds ~100,000 members: past 65,535 the archive needs zipfile's ZIP64
    end record and its locator (APPNOTE 4.3.14-4.3.15). zipfile (through np.load) reads every member's name back
    and the last member's value; np.savez's own bytes for it take ~2 s of zipfile here (equal when checked by hand:
    ``nb._fast(arrays) == np.savez``'s buffer), so the test reads instead."""
    import io

    from hexnn_import.xs3 import npz_bytes as nb

    arrays = {f"layer{i}/k": np.array(i % 251, np.uint8) for i in range(65_536 + 3)}
    fast = nb._fast(arrays)
    assert fast is not None and fast[-22:-18] == b"PK\x05\x06" and b"PK\x06\x06" in fast[-98:]
    with np.load(io.BytesIO(fast)) as z:
        assert z.files == list(arrays) and int(z["layer65538/k"]) == 65_538 % 251
        info = z.zip.getinfo("layer40000/k.npy")  # the central directory's offset and size of a member hold
    start = info.header_offset + 30 + len(info.filename) + 20  # local header, name, ZIP64 extra
    assert int(np.load(io.BytesIO(fast[start:start + info.file_size]))) == 40_000 % 251
