"""Re-figure recorded networks against the current engine, without qemu (issue 36).

A network golden keeps the device's outputs (``tests/data/golden/hvx_network/<name>.npz``); ``provenance.json``
keeps, per model, how the engine compared with them when they were recorded. When the engine later follows the
device on an op (e.g. QuantizedMean_8, the 1x1 QuantizedAvgPool_8_d32), those figures and the first-divergence
records of ``divergence.json`` go stale. This runs the engine again on the same inputs (made again from committed
data and checked against the recorded SHA-256, as ``tests/ops/test_hvx_network.py`` does), compares with the
stored device outputs (``golden_network.compare``) and rewrites each model's ``outputs`` / ``all_equal``; a model
that now equals the device on every run loses its ``divergence.json`` entry (it was the first node that differed
then). The device figures (nodes, qemu seconds, inputs) stay those of the recording.

    python3 tools/hvx/golden_network.py NNLIB_DIR --refigure [--only NAME ...]
"""
from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any, Callable

import numpy as np

from hexnn_import import api


def device_outputs(golden: pathlib.Path, name: str, runs: int, n_out: int) -> list[list[np.ndarray]]:
    """The stored device outputs of ``name``: run ``r``, output ``k`` is member ``dev_{r}_{k}``."""
    with np.load(golden / f"{name}.npz") as z:
        return [[z[f"dev_{r}_{k}"] for k in range(n_out)] for r in range(runs)]


def refigure_model(root: pathlib.Path, golden: pathlib.Path, name: str, fig: dict[str, Any], feeds_of: Callable,
                   engine_outputs: Callable, compare: Callable) -> dict[str, Any]:
    """``fig`` with ``outputs`` / ``all_equal`` made again from the current engine; raises ValueError when the
    inputs made again are not the recorded ones (then the golden must be recorded again, with qemu)."""
    shapes = {k: tuple(v) for k, v in (fig.get("input_shapes") or {}).items()}
    graph = api.prepare(api.import_model(str(root / fig["model"]), input_shapes=shapes or None))
    feeds, _ = feeds_of(name, graph)
    digest = hashlib.sha256(b"".join(a.tobytes() for f in feeds for a in f)).hexdigest()
    if len(feeds) != fig["runs"] or digest != fig["input_sha256"]:
        raise ValueError(f"{name}: the inputs made again are not the recorded ones: record it again")
    eng = engine_outputs(graph, feeds)
    dev = device_outputs(golden, name, fig["runs"], len(eng[0]))
    return {**fig, **compare(dev, eng)}


def refigure(root: pathlib.Path, golden: pathlib.Path, only: list[str] | None, feeds_of: Callable,
             engine_outputs: Callable, compare: Callable) -> None:
    """Every recorded model (or ``only`` those) re-figured; provenance.json and divergence.json rewritten."""
    prov_path, div_path = golden / "provenance.json", golden / "divergence.json"
    prov = json.loads(prov_path.read_text())
    div = json.loads(div_path.read_text()) if div_path.exists() else {}
    for name in sorted(prov["models"]):
        if only and name not in only:
            continue
        before = prov["models"][name]["all_equal"]
        prov["models"][name] = refigure_model(root, golden, name, prov["models"][name], feeds_of,
                                              engine_outputs, compare)
        if prov["models"][name]["all_equal"]:
            div.pop(name, None)
        print(name, "all equal" if prov["models"][name]["all_equal"] else "differs",
              "(was equal)" if before else "(was differing)", flush=True)
    prov_path.write_text(json.dumps(prov, indent=1, sort_keys=True) + "\n")
    div_path.write_text(json.dumps(div, indent=1, sort_keys=True) + "\n")
