"""Golden hashes of lib_nn's C on every lowered layer of a real model, on its real inputs (issue 23).

    python tools/golden_libnn_model.py models/real/keras_mobilenet_v2_1.0_224_int8.tflite \
        --oracle ORACLE_LIBNN_DIR [--out FILE] [--photos 2]

The model runs on the XS3 path (:class:`hexnn_import.xs3.run.XS3Runner`,
every node's output kept) on ``--photos`` crops of the repository's sample
photographs (``models/real/photos.npz``), mapped onto the model's int8 input
exactly as ``bench/speed_real.py`` maps them (``Int8Model(path).quantize(
Int8Model(path).float_images(n))``, checked here when LiteRT is installed).
For every ``XS3_<kernel>`` node the very input the simulation gave the node
is handed to lib_nn's portable C (commit 96bd67c, built by
``tools/golden_libnn.py`` / ``tools/golden_libnn_ops.py``'s ``build_both``:
patched and pristine), padded as the simulation pads it (``_pad_channels`` /
``pad_inputs`` of ``hexnn_import.xs3``: channels or vector elements with
zeros up to the kernel-layout weights' count) and the C's output cut back to
the real channels.

The inputs are large (112x112x96 int8 ...), so the JSON file holds SHA-256
hashes, not arrays: per layer (model order) and photo, the hash of each int8
activation input's bytes (source shape, real channels, C order) and of the
patched build's int8 output bytes, whether the pristine build agrees, and
(``xs3_equal``) whether the simulation's output was identical when the file
was written. ``tests/xs3/test_libnn_model_golden.py`` recomputes the XS3
path and checks both hashes of every layer.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # this checkout's hexnn_import (an installed copy may be older) and its models/
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("HEXNN_MODELS_DIR", str(ROOT / "models"))
MODEL = ROOT / "models/real/keras_mobilenet_v2_1.0_224_int8.tflite"
LIBNN_COMMIT = "96bd67c"
PHOTOS_HOW = ("hexnn_import.testing.photos.photo_batch(n, 224, 224, 3, split='test') / 255 mapped onto the "
              "int8 input's real range and quantized, as bench/speed_real.py's Int8Model.quantize(float_images(n))")


def golden_path(model: Path) -> Path:
    return ROOT / "tests/data/golden/libnn" / f"model_{model.stem}.json"


def sha(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def file_sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def photo_feeds(io: Any, n: int) -> np.ndarray:
    """``n`` int8 photo inputs ``[n, H, W, C]`` for a graph input ``io`` (GraphIO: shape, scale, zero point),
    with bench/speed_real.py's arithmetic (``Int8Model.float_images`` then ``.quantize``)."""
    from hexnn_import.testing.photos import photo_batch

    _, h, w, c = (int(v) for v in io.shape)
    scale, zp = float(io.scale), int(io.zero_point)
    lo, hi = (-128 - zp) * scale, (127 - zp) * scale
    p = (photo_batch(n, h, w, c, split="test") / 255.0).astype(np.float32)
    x = (lo + p * (hi - lo)).astype(np.float32)
    return np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)


def to_int8(q: np.ndarray) -> np.ndarray:
    """quint8 graph codes -> int8 values."""
    return (np.asarray(q).view(np.uint8) ^ np.uint8(0x80)).view(np.int8)


def xs3_layers(runner: Any, x: np.ndarray) -> Iterator[tuple[Any, Any, list[np.ndarray], np.ndarray]]:
    """Run ``runner`` (an XS3Runner) on one int8 input ``[1, H, W, C]``; per XS3 node, in graph order:
    ``(node, call, int8 inputs in the call's source shapes, int8 output shaped like call.y_shape)``."""
    from hexnn_import.graph import Ref
    from hexnn_import.runner import to_graph_input
    from hexnn_import.xs3.graph_pass import kernel_calls

    io = runner.graph.inputs[0]
    _, every = runner.run_all({io.name: x})
    inputs = {r: to_graph_input(io, x) for r in io.refs} if io.refs else {}
    for node, call in kernel_calls(runner.graph):
        xs = []
        for k in range(call.desc.n_inputs):
            ref = node.inputs[3 * k]
            if ref in every:
                q = every[ref]
            elif runner.graph.node(ref.src_id).op == "INPUT":
                q = inputs.get(ref, to_graph_input(io, x))
            else:
                raise KeyError(f"{node.name}: no value for its input {ref}")
            xs.append(to_int8(q).reshape(call.x_shape if call.kernel != "add_elementwise" else (-1,)))
        y = to_int8(every[Ref(node.node_id, 0)]).reshape(call.y_shape)
        yield node, call, xs, y


# ---------------------------------------------------------------------------------------------- lib_nn's C

def _window_meta(call: Any) -> dict[str, Any]:
    w = call.window
    return dict(shape=[w.k_h, w.k_w], start=[w.start_row, w.start_col], stride=[w.stride_v, w.stride_h])


def libnn_output(call: Any, xs: list[np.ndarray], conv: Any, ops: Any) -> np.ndarray:
    """lib_nn C's int8 output of one kernel call (``conv``: a LibNN build, ``ops``: the OpsLib build of the same
    lib_nn), on exactly the padded input the simulation hands its kernel, cut back to ``call.y_shape``."""
    from hexnn_import.xs3.kernel_table import _pad_channels
    from hexnn_import.xs3.kernels_fc import pad_inputs

    kernel, k, bso = call.kernel, call.weights, call.bso
    y_real = int(call.y_shape[-1])
    if kernel in ("conv2d_deep", "conv2d_shallowin", "conv2d_depthwise"):
        c = k.shape[2] if kernel == "conv2d_depthwise" else k.shape[3]
        x = _pad_channels(xs[0], call.x_shape, c)
        meta = dict(kernel=kernel, zero_point=int(call.zero_point), out_hw=list(call.out_hw),
                    y_c=int(c if kernel == "conv2d_depthwise" else k.shape[0]), window=_window_meta(call))
        y = conv.run(dict(x=np.ascontiguousarray(x, np.int8), k=k, bso=bso, meta=meta))
        return y[..., :y_real].reshape(call.y_shape)
    if kernel == "conv2d_1x1":
        x = _pad_channels(xs[0], call.x_shape, k.shape[1])
        y = conv.run(dict(x=np.ascontiguousarray(x, np.int8), k=k, bso=bso, meta=dict(kernel=kernel)))
        return y[..., :y_real].reshape(call.y_shape)
    if kernel in ("fully_connected_8",):
        x = pad_inputs(np.asarray(xs[0]).reshape(call.rows, -1), k.shape[1])
        y = conv.run(dict(x=np.ascontiguousarray(x, np.int8), k=k, bso=bso, meta=dict(kernel=kernel)))
        return y[:, :int(np.prod(call.y_shape)) // call.rows].reshape(call.y_shape)
    if kernel == "add_elementwise":
        a = dict(x0=xs[0].reshape(-1), x1=xs[1].reshape(-1), params=np.array(call.params, np.int64))
        return ops.run(kernel, a, {}).reshape(call.y_shape)
    if kernel == "avgpool2d_global":
        bias, scale, shift = (int(v) for v in call.params)
        y = ops.run(kernel, dict(x=xs[0].reshape(call.x_shape)), dict(bias=bias, scale=scale, shift=shift))
        return y.reshape(call.y_shape)
    if kernel == "lookup8":
        return ops.run(kernel, dict(x=xs[0].reshape(-1), lut=np.asarray(call.table).view(np.int8)), {}
                       ).reshape(call.y_shape)
    raise SystemExit(f"golden_libnn_model: no lib_nn call for the XS3 kernel {kernel}")


def _check_bench_feed(model: Path, x: np.ndarray) -> str:
    """Whether bench/speed_real.py's Int8Model gives the same photo inputs (needs LiteRT)."""
    try:
        sys.path.insert(0, str(ROOT / "bench"))
        from speed_real import Int8Model  # type: ignore[import-not-found]

        m = Int8Model(model)
        ref = m.quantize(m.float_images(len(x)))
    except Exception as e:  # noqa: BLE001 - LiteRT missing: say so
        return f"not checked ({type(e).__name__}: {e})"
    if not np.array_equal(ref, x):
        raise SystemExit("golden_libnn_model: the photo inputs differ from bench/speed_real.py's Int8Model")
    return "identical to bench/speed_real.py Int8Model.quantize(float_images(n))"


def dumps(doc: dict[str, Any]) -> str:
    """The golden JSON: one key a line, one layer a line (small, and a regenerated file diffs by layer)."""
    lines = []
    for key, value in doc.items():
        if key == "layers":
            rows = ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in value)
            lines.append(f' "layers": [\n{rows}\n ]')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path, nargs="?", default=MODEL)
    ap.add_argument("--oracle", type=Path, required=True, help="the lib_nn oracle folder (src/lib_nn, harness/)")
    ap.add_argument("--out", type=Path, default=None, help="default tests/data/golden/libnn/model_<stem>.json")
    ap.add_argument("--photos", type=int, default=2)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    import golden_libnn  # noqa: E402
    import golden_libnn_ops  # noqa: E402

    from hexnn_import.xs3.run import XS3Runner
    from hexnn_import.api import import_model

    t0 = time.perf_counter()
    model = a.model.resolve()
    out = a.out or golden_path(model)
    runner = XS3Runner(import_model(model))
    io = runner.graph.inputs[0]
    feeds = photo_feeds(io, a.photos)
    feed_note = _check_bench_feed(model, feeds)
    layers: list[dict[str, Any]] = []
    mismatches: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        conv_p, conv_o = golden_libnn.build_both(a.oracle.resolve(), Path(tmp) / "conv")
        ops_p, ops_o = golden_libnn_ops.build_both(a.oracle.resolve(), Path(tmp) / "ops")
        t_build = time.perf_counter() - t0
        for p in range(a.photos):
            for i, (node, call, xs, y) in enumerate(xs3_layers(runner, feeds[p:p + 1])):
                if p == 0:
                    layers.append(dict(index=i, node=node.name, kernel=call.kernel,
                                       x_shapes=[list(v.shape) for v in xs], y_shape=list(call.y_shape), photos=[]))
                rec = layers[i]
                assert rec["node"] == node.name, (rec["node"], node.name)
                c = libnn_output(call, xs, conv_p, ops_p)
                pristine = libnn_output(call, xs, conv_o, ops_o)
                equal = bool(np.array_equal(c, y))
                if not equal:
                    d = np.abs(c.astype(np.int32) - y.astype(np.int32))
                    mismatches.append(f"photo {p} layer {i} {call.kernel} {node.name}: {int((d > 0).sum())} of "
                                      f"{d.size} values differ, max |diff| {int(d.max())}")
                rec["photos"].append(dict(x=[sha(v) for v in xs], y=sha(c), xs3_equal=equal,
                                          pristine_equal=bool(np.array_equal(c, pristine))))
    counts = Counter(r["kernel"] for r in layers)
    shown = model.relative_to(ROOT) if model.is_relative_to(ROOT) else model
    doc = {
        "what": "SHA-256 of every XS3 layer's int8 input(s) and of XMOS lib_nn C's int8 output on it "
                "(tools/golden_libnn_model.py; checked by tests/xs3/test_libnn_model_golden.py)",
        "command": f"python tools/golden_libnn_model.py {shown} --oracle <lib_nn oracle folder> --photos {a.photos}",
        "lib_nn_commit": LIBNN_COMMIT,
        "lib_nn_build": "portable C (-DNN_USE_REF, gcc -O1 -fwrapv), patched: VLSAT's rounding add in int64; "
                        "pristine_equal: unmodified lib_nn agrees",
        "model": model.name,
        "model_sha256": file_sha(model),
        "photos": {"n": a.photos, "how": PHOTOS_HOW, "check": feed_note, "input_sha256": [sha(f) for f in feeds]},
        "counts": dict(sorted(counts.items())),
        "n_layers": len(layers),
        "xs3_exact_when_written": sum(ph["xs3_equal"] for r in layers for ph in r["photos"]),
        "cases": len(layers) * a.photos,
        "layers": layers,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(doc))
    for k, n in sorted(counts.items()):
        print(f"{k}: {n} layers")
    print(f"{len(layers)} layers x {a.photos} photos; simulation bit-exact on {doc['xs3_exact_when_written']} of "
          f"{doc['cases']}; pristine lib_nn agrees on "
          f"{sum(ph['pristine_equal'] for r in layers for ph in r['photos'])}")
    for m in mismatches:
        print("NOT EXACT:", m)
    print(f"-> {out} ({out.stat().st_size // 1024} KB); lib_nn builds {t_build:.1f} s, "
          f"total {time.perf_counter() - t0:.1f} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
