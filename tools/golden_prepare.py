"""Golden prepared graphs from hexagon_nn's own prepare.c (issue 19): run the prepare oracle, keep the node lists.

The oracle (``oracles/prepare``: hexagon_nn 2.14.1's graph construction and ``prepare.c`` pass sequence built
for x86, with nnlib's sources in ``oracles/nnlib/nnlib``) is not part of the project. This script copies it
to a work folder, runs its ``run.sh`` (which appends each model's ``hexnn-import MODEL --emit c --no-optimize``
graph through the real API and runs the real ``optimize()``), and writes each C-prepared node list to
``tests/data/golden/prepare/<model>.json`` in a form that does not depend on node ids:

- ``nodes``: in list order, ``[op, padding, inputs, shapes]`` with every input ref ``[position of the
  producer in the list, output index]`` and ``shapes`` the output definitions' max sizes;
- ``model``: the model's path relative to the repository (and ``input_shapes`` when its file leaves
  dimensions open: the RapidOCR models, as ``tools/mark_all.py`` fixes them);
- ``consts`` (when the oracle's dump has Const bytes, ``"hex"``: a driver that prints them): the bytes of
  every Const that prepare.c made (id counted down from 0xFFFFFFFF) with 1, 2 or 4-byte elements, as
  ``{position: hex}`` (the weights, biases, crops of create_transpose_conv_nodes, the scalars of the
  fusions). The C's 16-byte ``[1,1,1,1]`` stride Const of a transposed conv's expansion is not among them:
  only its shape is read, and the project's graph cannot hold 16 bytes under one element.

``tests/optimizer/test_prepare_golden.py`` prepares the same models with the project and compares, so the
suite needs neither the oracle nor gcc.

    python tools/golden_prepare.py --oracle ../shared/oracles/prepare                  # report only
    python tools/golden_prepare.py --oracle ../shared/oracles/prepare --write          # and write the files
    python tools/golden_prepare.py --oracle ... --work /tmp/p --real keras_mobilenet_int8 --families --write

By default every bundled model, every model of ``models/real/`` and of ``models/real/families/`` (about an
hour on a busy 2-core machine; ``--work`` keeps the build for the next run). The work copy of the oracle is
patched first (:mod:`golden_prepare_patch`: ``.onnx`` models, shape_util.c and three HVX data-movement
intrinsics, Const bytes in the dump). The emitted C names ``QuantizedMaximum`` / ``QuantizedMinimum`` as the
op documentation does; nnlib 2.14.1's ``ops.def`` spells them with ``_8``: the graph is compiled with
``-DOP_QuantizedMaximum=OP_QuantizedMaximum_8`` (and Minimum), and the golden files keep the project's
names (:data:`C_NAMES`). A model that hexnn-import refuses, or whose C prepare aborts, gets no file.

The project side is ``hexnn-import`` on PATH (or the command in ``$HEXNN``) and, for the verdict,
``hx.prepare`` in this process (the node lists compared as tests/optimizer/test_prepare_golden.py does).
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

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from golden_prepare_patch import patch_oracle_copy  # noqa: E402
from mark_all import SHAPES  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "golden" / "prepare"
#: Bundled models (models/*.tflite): all of them.
BUNDLED = ("small_int8", "small_float", "small_uint8", "digits_int8", "digits_float", "mobilenet_v2_int8",
           "mobilenet_v2_float")
#: The models of models/real and of models/real/families (TFLite and ONNX), by name.
REAL = tuple(sorted(p.stem for p in (ROOT / "models" / "real").glob("*") if p.suffix in (".tflite", ".onnx")))
FAMILIES = tuple(sorted(p.stem for p in (ROOT / "models" / "real" / "families").glob("*")
                        if p.suffix in (".tflite", ".onnx")))
#: ops whose nnlib 2.14.1 name (ops.def) differs from the documented one the project emits
OP_ALIASES = {"QuantizedMaximum": "QuantizedMaximum_8", "QuantizedMinimum": "QuantizedMinimum_8"}
C_NAMES = {c: doc for doc, c in OP_ALIASES.items()}
#: Const element sizes whose bytes the golden files keep (see ``consts`` above), and the largest Const kept
#: (a transposed conv's weights in selfie segmentation: 2 KiB; the int16 models' 8 KiB ones are left out)
ELEMENT_SIZES = (1, 2, 4)
MAX_CONST_BYTES = 2048


def reduce_c_nodes(nodes: list[dict]) -> list[list]:
    """The oracle dump's node list as ``[op, padding, [[position, output], ...], [shape, ...]]`` rows."""
    pos = {n["id"]: i for i, n in enumerate(nodes)}
    return [[C_NAMES.get(n["op"], n["op"]), n["padding"], [[pos[s], o] for s, o in n["inputs"]],
             [o["shape"] for o in n["outputs"]]] for n in nodes]


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
        if size in ELEMENT_SIZES and n["data_size"] == count * size <= MAX_CONST_BYTES:
            out[str(i)] = n["hex"]
    return out


def input_shapes(path: pathlib.Path) -> dict[str, list[int]]:
    """The input shapes the model needs (tools/mark_all.py :data:`SHAPES`: ONNX files with open dims)."""
    shape = SHAPES.get(path.stem)
    if shape is None or path.suffix != ".onnx":
        return {}
    import onnx

    return {onnx.load(str(path), load_external_data=False).graph.input[0].name: list(shape)}


def model_path(models_dir: pathlib.Path, name: str) -> pathlib.Path:
    """``models_dir/name.tflite``, else ``.onnx``."""
    path = models_dir / f"{name}.tflite"
    return path if path.exists() else models_dir / f"{name}.onnx"


def run_oracle(nnlib: pathlib.Path, work: pathlib.Path, models_dir: pathlib.Path, names: list[str],
               out: pathlib.Path) -> None:
    """Run the (patched) oracle's run.sh on ``names`` (``models_dir/<name>.tflite|.onnx``), results in ``out``."""
    args = work / "args"
    args.mkdir(exist_ok=True)
    for name in names:
        shapes = input_shapes(model_path(models_dir, name))
        if shapes:
            (args / f"{name}.args").write_text(" ".join(f"--input-shape {k}={','.join(map(str, v))}"
                                                        for k, v in shapes.items()))
    aliases = " ".join(f"-DOP_{doc}=OP_{c}" for doc, c in OP_ALIASES.items())
    env = dict(os.environ, NNLIB=str(nnlib), MODELS_DIR=str(models_dir), OUT=str(out), BUILD=str(work / "build"),
               HEXNN=os.environ.get("HEXNN") or shutil.which("hexnn-import") or "hexnn-import",
               ARGS_DIR=str(args), GRAPH_CFLAGS=aliases, ORACLE_ONLY="1", SKIP_FULL="1",
               NO_BUILD="1" if (work / "build" / "obj" / "shape_util_wrap.o").exists() else "")
    subprocess.run(["bash", str(work / "run.sh"), *names], env=env, check=True, stdout=subprocess.DEVNULL)


def copy_oracle(oracle: pathlib.Path, work: pathlib.Path) -> None:
    """A writable, patched copy of the oracle folder in ``work`` (build outputs go inside it)."""
    if not (work / "run.sh").exists():
        shutil.copytree(oracle, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("build", "out*"))
    for p in [work, *work.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    patch_oracle_copy(work)


def project_rows(path: pathlib.Path, shapes: dict[str, list[int]]) -> list[list]:
    """The project's prepared node list as ``reduce_c_nodes`` rows (tests/optimizer/test_prepare_golden.py)."""
    import hexnn_import as hx
    from hexnn_import.graph import NNPad

    graph = hx.prepare(hx.import_model(path, input_shapes={k: tuple(v) for k, v in shapes.items()} or None))
    pos = {n.node_id: i for i, n in enumerate(graph.nodes)}
    return [[n.op, f"NN_PAD_{NNPad(n.padding).name}", [[pos[r.src_id], r.output_idx] for r in n.inputs],
             [list(o.shape) for o in n.output_defs]] for n in graph.nodes]


def verdict(path: pathlib.Path, shapes: dict[str, list[int]], want: list[list]) -> str:
    """"identical", or where the project's list first leaves prepare.c's; a difference that goes with the
    bias fit's kept chains (optimizer/bias_fit.py, unfused on purpose) is named as such."""
    got = project_rows(path, shapes)
    if got == want:
        return "identical"
    from hexnn_import.optimizer import supernodes

    keep, supernodes.unfused_reason = supernodes.unfused_reason, lambda *a: None
    try:
        fused = project_rows(path, shapes)
    finally:
        supernodes.unfused_reason = keep
    if fused == want:
        return "identical but for the bias fit's kept chains"
    i = next((i for i, (a, b) in enumerate(zip(fused, want)) if a != b), min(len(fused), len(want)))
    return (f"DIFFERENT: {len(fused)} nodes vs prepare.c's {len(want)}, first at position {i}: project "
            f"{fused[i] if i < len(fused) else None} / prepare.c {want[i] if i < len(want) else None}")


def write_golden(path: pathlib.Path, shapes: dict[str, list[int]], nodes: list[dict]) -> None:
    """``tests/data/golden/prepare/<model>.json`` from the oracle's dump (see the module's docstring)."""
    model = path.relative_to(ROOT)
    OUT.mkdir(parents=True, exist_ok=True)
    text = ",\n".join(json.dumps(r, separators=(",", ":")) for r in reduce_c_nodes(nodes))
    consts = prepare_made_consts(nodes)
    extra = f'"consts": {json.dumps(consts, separators=(",", ":"))},\n' if consts else ""
    extra += f'"input_shapes": {json.dumps(shapes)},\n' if shapes else ""
    (OUT / f"{path.stem}.json").write_text(
        f'{{"model": "{model}", "oracle": "hexagon_nn 2.14.1 prepare.c optimize() (oracles/prepare)",\n'
        f'{extra}"nodes": [\n{text}\n]}}\n')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", type=pathlib.Path, required=True, help="the oracles/prepare folder")
    ap.add_argument("--nnlib", type=pathlib.Path, help="nnlib sources (default: ORACLE/../nnlib/nnlib)")
    ap.add_argument("--models", type=pathlib.Path, default=ROOT / "models", help="the bundled models folder")
    ap.add_argument("--work", type=pathlib.Path, help="work folder (default: a temporary one)")
    ap.add_argument("--bundled", nargs="*", default=list(BUNDLED), help="bundled model names")
    ap.add_argument("--real", nargs="*", default=list(REAL), help="models/real model names (TFLite / ONNX)")
    ap.add_argument("--families", nargs="*", default=list(FAMILIES), help="models/real/families model names")
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}/<model>.json")
    ap.add_argument("--no-run", action="store_true", help="reuse the dumps of an earlier run in --work")
    args = ap.parse_args(argv)
    oracle = args.oracle.resolve()
    nnlib = (args.nnlib or oracle.parent / "nnlib" / "nnlib").resolve()
    work = (args.work or pathlib.Path(tempfile.mkdtemp(prefix="golden_prepare_"))).resolve()
    copy_oracle(oracle, work)
    models = args.models.resolve()
    groups = [(models, args.bundled, "bundled"), (models / "real", args.real, "real"),
              (models / "real" / "families", args.families, "families")]
    bad = 0
    for models_dir, names, tag in groups:
        if not names:
            continue
        out = work / f"out_{tag}"
        if not args.no_run:
            run_oracle(nnlib, work, models_dir, names, out)
        for name in names:
            path = model_path(models_dir, name)
            shapes = input_shapes(path)
            dump = out / f"{name}.c_prepared.json"
            c = json.loads(dump.read_text()) if dump.exists() and dump.stat().st_size else {"rc": -1}
            v = verdict(path, shapes, reduce_c_nodes(c["nodes"])) if c.get("rc") == 0 else \
                f"no C prepare (rc {c.get('rc')}; see {out}/{name}.*.log)"
            print(f"{name:45s} {v}", flush=True)
            bad += not v.startswith("identical")
            if args.write and c.get("rc") == 0:
                write_golden(path, shapes, c["nodes"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
