"""Replay of golden cases from hexagon_nn's C code (tests/data/golden/nnlib/, written by tools/golden_nnlib.py).

Shared by the golden tests and by ``tools/golden_nnlib.py --summarize``, which records the per-op figures in
:mod:`hexnn_import.ops.verified_data`.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

from hexnn_import.ops import run_op


def golden_ops(path: pathlib.Path) -> list[str]:
    """The op names of one golden file's cases."""
    return sorted({c["op"] for c in json.loads(str(np.load(path)["meta"]))["cases"]})


def replay(path: pathlib.Path) -> tuple[int, int, str | None]:
    """Run every case of one golden file; ``(cases, exact, first difference)``."""
    diffs = case_differences(path)
    return len(diffs), sum(d is None for d in diffs), next((d for d in diffs if d is not None), None)


def case_differences(path: pathlib.Path) -> list[str | None]:
    """Run every case of one golden file; per case None (bit-exact) or what differs."""
    z = np.load(path)
    meta = json.loads(str(z["meta"]))
    states: dict[int, dict] = {}
    diffs: list[str | None] = []
    for i, c in enumerate(meta["cases"]):
        ins = [z[f"c{i}_in{k}"] for k in range(c["n_in"])]
        kw = dict(c["kw"])
        if c["group"] is not None:
            kw["state"] = states.setdefault(c["group"], {})
        want_codes, want_range = z[f"c{i}_codes"], z[f"c{i}_range"]
        try:
            out = run_op(c["op"], ins, **kw)
        except Exception as e:  # noqa: BLE001 - a refusal is a difference from the C code, reported as such
            diffs.append(f"case {i}: {c['op']} raised {e}")
            continue
        codes = np.asarray(out[c["code_idx"]]).reshape(-1) if c["code_idx"] >= 0 else np.zeros(0)
        got_range = np.array([np.asarray(out[j], np.float32).reshape(-1)[0] for j in c["range_idx"]], np.float32)
        if want_codes.dtype.kind == "f":  # float outputs (Dequantize): bit for bit
            same_codes = codes.shape == want_codes.shape and np.array_equal(
                np.asarray(codes, np.float32).view(np.int32), np.asarray(want_codes, np.float32).view(np.int32))
        else:
            same_codes = codes.shape == want_codes.shape and np.array_equal(codes.astype(np.int64),
                                                                            want_codes.astype(np.int64))
        # float32-equal ends (bit patterns, or +0.0 / -0.0 where the C writes a signed zero)
        same_range = np.array_equal(got_range.view(np.int32), want_range.view(np.int32)) or \
            np.array_equal(got_range, want_range)
        if same_codes and same_range:
            diffs.append(None)
            continue
        comparable = not same_codes and codes.shape == want_codes.shape and codes.size and want_codes.dtype.kind != "f"
        d = int(np.max(np.abs(codes.astype(np.int64) - want_codes.astype(np.int64)))) if comparable else 0
        diffs.append(f"case {i} {c['op']} {[a.shape for a in ins]} kw={c['kw']}: max code diff {d}, "
                     f"range C={want_range.tolist()} engine={got_range.tolist()}")
    return diffs
