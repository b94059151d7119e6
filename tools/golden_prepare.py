"""Golden prepared graphs from hexagon_nn's own prepare.c (issue 19): run the prepare oracle, keep the node lists.

The oracle (``oracles/prepare``: hexagon_nn 2.14.1's graph construction and ``prepare.c`` pass sequence built
for x86, with nnlib's sources in ``oracles/nnlib/nnlib``) is not part of the project. This script copies it
to a work folder, runs its ``run.sh`` (which appends each model's ``hexnn-import MODEL --emit c --no-optimize``
graph through the real API and runs the real ``optimize()``), and writes each C-prepared node list to
``tests/data/golden/prepare/<model>.json`` in a form that does not depend on node ids:

- ``nodes``: in list order, ``[op, padding, inputs, shapes]`` with every input ref ``[position of the
  producer in the list, output index]`` and ``shapes`` the output definitions' max sizes;
- ``model``: the model's path relative to the repository;
- ``consts`` (when the oracle's dump has Const bytes, ``"hex"``: a driver that prints them): the bytes of
  every Const that prepare.c made (id counted down from 0xFFFFFFFF) with 1, 2 or 4-byte elements, as
  ``{position: hex}`` (the weights, biases, crops of create_transpose_conv_nodes, the scalars of the
  fusions). The C's 16-byte ``[1,1,1,1]`` stride Const of a transposed conv's expansion is not among them:
  only its shape is read, and the project's graph cannot hold 16 bytes under one element.

``tests/optimizer/test_prepare_golden.py`` prepares the same models with the project and compares, so the
suite needs neither the oracle nor gcc.

    python tools/golden_prepare.py --oracle ../shared/oracles/prepare                  # report only
    python tools/golden_prepare.py --oracle ../shared/oracles/prepare --write          # and write the files
    python tools/golden_prepare.py --oracle ... --work /tmp/p --real keras_mobilenet_int8 --write

The oracle's x86 build must be able to run the models: the stock copy stubs nnlib's shape_util.c and
HVX intrinsics, which the transpose-conv models (mediapipe_selfie_segmentation*) reach in prepare.c's
create_transpose_conv_nodes; run it from a copy with shape_util.c compiled and the three data-movement
intrinsics of bulk_transpose.c modelled (issue 19's working copy) for the default lists.

The project side is ``hexnn-import`` on PATH (or the command in ``$HEXNN``).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "golden" / "prepare"
#: Bundled models (models/*.tflite): all of them.
BUNDLED = ("small_int8", "small_float", "small_uint8", "digits_int8", "digits_float", "mobilenet_v2_int8",
           "mobilenet_v2_float")
#: Representative converter-made models of models/real (per-channel depthwise chains, float auto ranges,
#: uint8 v1, sparse weights, MobileNet v1 / v2; fold_scalar_mpys in MobileNet v3 float, an oversize-filter
#: QuantizedPadForConv_8_d32 in DS-CNN, QuantizedSoftmax_8_d32 / Requantize_8to8_d32 in person-detect,
#: QuantizedPRelu_8_V2_d32 in face-landmark, create_transpose_conv_nodes -> DepthToSpace_8_d32 and a
#: supernode chain with another node inside it in selfie segmentation); small enough to keep the files
#: < 450 KB.
REAL = ("keras_cnn_uint8_v1", "keras_sparse_int8", "keras_mobilenet_int8", "keras_mobilenet_float",
        "keras_mobilenet_v2_aeq_static_wi8_ai8", "keras_mobilenet_v3_small_float", "keras_ds_cnn_int8",
        "keras_person_detect_int8", "mediapipe_face_landmark_aeq_int8", "mediapipe_selfie_segmentation")
#: Const element sizes whose bytes the golden files keep (see ``consts`` above).
ELEMENT_SIZES = (1, 2, 4)


def reduce_c_nodes(nodes: list[dict]) -> list[list]:
    """The oracle dump's node list as ``[op, padding, [[position, output], ...], [shape, ...]]`` rows."""
    pos = {n["id"]: i for i, n in enumerate(nodes)}
    return [[n["op"], n["padding"], [[pos[s], o] for s, o in n["inputs"]], [o["shape"] for o in n["outputs"]]]
            for n in nodes]


def prepare_made_consts(nodes: list[dict]) -> dict[str, str]:
    """``{position: hex}`` of the Consts prepare.c made (ids from 0x80000000 up) with 1/2/4-byte elements."""
    out = {}
    for i, n in enumerate(nodes):
        if n["op"] != "Const" or n["id"] < 0x80000000 or "hex" not in n:
            continue
        size = n["outputs"][0]["elementsize"]
        count = 1
        for d in n["const_shape"]:
            count *= d
        if size in ELEMENT_SIZES and n["data_size"] == count * size:
            out[str(i)] = n["hex"]
    return out


def run_oracle(oracle: pathlib.Path, nnlib: pathlib.Path, work: pathlib.Path, models_dir: pathlib.Path,
               names: list[str], out: pathlib.Path) -> None:
    """Run the oracle's run.sh on ``names`` (``models_dir/<name>.tflite``), results in ``out``."""
    env = dict(os.environ, NNLIB=str(nnlib), MODELS_DIR=str(models_dir), OUT=str(out),
               BUILD=str(work / "build"),
               HEXNN=os.environ.get("HEXNN") or shutil.which("hexnn-import") or "hexnn-import")
    subprocess.run(["bash", str(work / "run.sh"), *names], env=env, check=True, stdout=subprocess.DEVNULL)


def copy_oracle(oracle: pathlib.Path, work: pathlib.Path) -> None:
    """A writable copy of the oracle folder in ``work`` (build outputs go inside it)."""
    if not (work / "run.sh").exists():
        shutil.copytree(oracle, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("build", "out*"))
    for p in [work, *work.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def verdict(out: pathlib.Path, name: str) -> str:
    """The oracle's own comparison of C and project for one model (from its compare.json)."""
    cmp = out / f"{name}.compare.json"
    if not cmp.exists():
        return "no comparison (the C prepare failed?)"
    r = json.loads(cmp.read_text())
    same = r["same_full_op_sequence"] and r["same_id_sequence_after_pairing_new_nodes"] and not r["same_id_field_diffs"]
    return "identical" if same else (f"DIFFERENT: ops only C {r['ops_only_c']}, only project {r['ops_only_proj']}, "
                                     f"{r['same_id_field_diffs']} same-id diffs")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", type=pathlib.Path, required=True, help="the oracles/prepare folder")
    ap.add_argument("--nnlib", type=pathlib.Path, help="nnlib sources (default: ORACLE/../nnlib/nnlib)")
    ap.add_argument("--models", type=pathlib.Path, default=ROOT / "models", help="the bundled models folder")
    ap.add_argument("--work", type=pathlib.Path, help="work folder (default: a temporary one)")
    ap.add_argument("--bundled", nargs="*", default=list(BUNDLED), help="bundled model names")
    ap.add_argument("--real", nargs="*", default=list(REAL), help="models/real TFLite model names")
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}/<model>.json")
    args = ap.parse_args(argv)
    oracle = args.oracle.resolve()
    nnlib = (args.nnlib or oracle.parent / "nnlib" / "nnlib").resolve()
    work = (args.work or pathlib.Path(tempfile.mkdtemp(prefix="golden_prepare_"))).resolve()
    copy_oracle(oracle, work)
    groups = [(args.models.resolve(), args.bundled, "bundled"), (args.models.resolve() / "real", args.real, "real")]
    bad = 0
    for models_dir, names, tag in groups:
        if not names:
            continue
        out = work / f"out_{tag}"
        run_oracle(oracle, nnlib, work, models_dir, names, out)
        for name in names:
            dump = out / f"{name}.c_prepared.json"
            c = json.loads(dump.read_text()) if dump.exists() and dump.stat().st_size else {"rc": -1}
            v = verdict(out, name) if c.get("rc") == 0 else f"C prepare failed (rc {c.get('rc')})"
            print(f"{name:45s} {v}")
            bad += not v.startswith("identical")
            if args.write and c.get("rc") == 0:
                model = (models_dir / f"{name}.tflite").relative_to(ROOT)
                OUT.mkdir(parents=True, exist_ok=True)
                rows = reduce_c_nodes(c["nodes"])
                text = ",\n".join(json.dumps(r, separators=(",", ":")) for r in rows)
                consts = prepare_made_consts(c["nodes"])
                extra = f'"consts": {json.dumps(consts, separators=(",", ":"))},\n' if consts else ""
                (OUT / f"{name}.json").write_text(
                    f'{{"model": "{model}", "oracle": "hexagon_nn 2.14.1 prepare.c optimize() (oracles/prepare)",\n'
                    f'{extra}"nodes": [\n{text}\n]}}\n')
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
