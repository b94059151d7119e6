"""``hexnn-import xs3-export MODEL -o DIR``: lowered layers' tensors, C headers and a manifest.

Writes, for an int8 TFLite or a quantized ONNX (QDQ / QOperator) model:

- ``DIR/layers.npz``: every lowered layer's arrays, as members
  ``<layer>/<field>`` (the manifest's ``arrays`` names each layer's prefix):
  ``kernel``, the kernel-facing and source shapes, ``zero_point``, and what
  the kernel takes: ``bso`` (int16, ``(ceil(C_out/16), 7, 16)``) and
  ``weights`` (kernel layout), the window, the parameters of the kernels
  without weights (``params``), a clamp's ``lut`` (:mod:`.layer_arrays`).
  One archive, where manifest version 2 wrote one file per layer: 10,000
  files cost seconds of file creation on a real disk (issue 38);
- ``DIR/<model>_xs3.h``: the weights and BSO of the layers that have them as
  C arrays in lib_nn's layout (:mod:`.c_header`);
- ``DIR/<model>_xs3_network.h``: the whole lowered network (:mod:`.c_network`:
  every layer's constants, a tensor table with arena offsets, a layer table
  with kernel, tensors and parameters), the arena plan of :mod:`.network`;
- ``DIR/manifest.json``: every layer (source op and tensor names, kernel,
  shapes, ``lowered``, ``reason`` when not) with its agreement with the
  source model's own runtime (LiteRT for TFLite, onnxruntime for ONNX) on the
  same layer input (``exact_fraction``, ``max_abs_diff``) and the lib_nn
  golden cases its kernel is held to; the network's arena size, largest live
  set and weight bytes, with a warning when the arena exceeds one xcore.ai tile.

Everything is computed in memory first; the folder is then built under a
hidden name beside ``DIR`` and renamed into place whole
(:func:`hexnn_import.emit.files.write_folder`), so a failure leaves ``DIR`` as
it was and no temporary behind (issue 20, finding 2). A ``DIR`` that is not
empty is refused unless ``force`` is given, and then only when it holds an
earlier export (its ``manifest.json``): it is replaced whole, never mixed with
the new files, and a folder of other files is never deleted.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from hexnn_import.emit.files import EmitError, check_folder_target, write_folder
from hexnn_import.graph import Graph
from hexnn_import.model_source import ModelSource
from hexnn_import.optional import install_hint
from hexnn_import.xs3.layer_agreement import LayerAgreement, layer_agreement, random_inputs
from hexnn_import.xs3.arena import arena_warning
from hexnn_import.xs3.c_header import c_ident, render_header
from hexnn_import.xs3.c_network import network_header
from hexnn_import.xs3.c_runner import runner_files
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernel_table import kernel_desc
from hexnn_import.xs3.layer_arrays import layer_arrays
from hexnn_import.xs3.legalize import LoweredLayer
from hexnn_import.xs3.lower import LoweringPlan
from hexnn_import.xs3.manifest_json import dumps_indented
from hexnn_import.xs3.network_desc import network_desc
from hexnn_import.xs3.npz_bytes import npz_bytes
from hexnn_import.xs3.run import lowered_graph
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions

#: the lib_nn commit whose C the kernels are held to, and where the golden cases live in the repository
LIBNN_COMMIT = "96bd67c"

MANIFEST_FORMAT = "hexnn-xs3-manifest"
#: 2: the network header and arena plan, lib_nn references, ONNX sources; 3: every layer's arrays in one
#: ``layers.npz`` (an entry's ``arrays``: its member prefix) instead of a ``<layer>.npz`` each (``file``)
MANIFEST_VERSION = 3


#: longest file stem: file systems allow 255 bytes a name; keras layer names reach 300 characters
MAX_STEM = 96
#: the file name written last, and the one that marks a folder as an export (``--force`` replaces only those)
MANIFEST = "manifest.json"
#: the one archive of every lowered layer's arrays (members ``<stem>/<field>``)
LAYERS_FILE = "layers.npz"
#: how every manifest :func:`export_model` writes begins (``json.dumps(..., indent=1)`` of a dict whose first key is
#: ``format``)
_MANIFEST_OPENING = ('{\n "format": ' + json.dumps(MANIFEST_FORMAT) + ",\n").encode("utf-8")


def file_stem(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique stem for a layer name (``block1_0/expand`` -> ``block1_0_expand``): its
    members' prefix in ``layers.npz`` and its C names in the headers.

    A name longer than :data:`MAX_STEM` keeps its start and end around a
    short hash of the whole name (keras names ``a;b;c`` join every fused
    tensor's name); the manifest keeps the full name beside the prefix. Stems
    are unique without regard to case (case-insensitive file systems); a
    clash gets ``_2``, ``_3``... All stay within ``MAX_STEM`` + 8 characters.
    """
    base = bounded_stem(name)
    stem, k = base, 1
    while stem.lower() in taken:
        k += 1
        stem = f"{base}_{k}"
    taken.add(stem.lower())
    return stem


def bounded_stem(name: str) -> str:
    """``c_ident(name)``, or for one longer than :data:`MAX_STEM` its first 48 and last 38 characters
    around the first 8 hex digits of the SHA-1 of the whole name: at most ``MAX_STEM`` characters."""
    base = c_ident(name)
    if len(base) <= MAX_STEM:
        return base
    import hashlib

    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return f"{base[:48]}_{digest}_{base[-(MAX_STEM - 58):]}"


def measure(plan: LoweringPlan, source: ModelSource | None, feeds: Sequence[Mapping[str, np.ndarray]] | None,
            options: VPUOptions) -> tuple[dict[str, LayerAgreement] | None, dict[str, Any]]:
    """Per-layer agreement with the source model's runtime (None with a note when it is not installed, or when a
    saved graph's source model is not at hand)."""
    tflite = source is not None and source.format == "tflite"
    runtime, module = (("LiteRT (builtin kernels)", "ai_edge_litert") if tflite else
                       ("onnxruntime (graph optimizations off)", "onnxruntime"))
    how: dict[str, Any] = {"reference": f"{runtime}, each layer on its own input there",
                           "inputs": "given" if feeds is not None else "1 seeded random input (seed 0)"}
    if source is None:
        how["reference"] = None
        how["note"] = ("the graph's source model is not at hand (moved, or changed since the import: "
                       "meta.source_file names it)")
        return None, how
    try:
        __import__(module)
    except ImportError:
        how["note"] = install_hint(module)
        return None, how
    return layer_agreement(plan, source, feeds if feeds is not None else random_inputs(plan),
                           options), how


def build_export(source: ModelSource, graph: Graph, feeds: Sequence[Mapping[str, np.ndarray]] | None = None,
                 options: VPUOptions = DEFAULT_OPTIONS) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and every file's bytes (name -> bytes), nothing written yet: ``graph`` (imported from
    ``source``, or the saved graph file ``source`` names) lowered; agreement measured in the runtime of the
    source model (the model file, or a graph's source file while it is at hand, :meth:`ModelSource.of_graph`)."""
    graph, plan, placements = lowered_graph(graph, options)
    placed = {p.name: p for p in placements}
    reference = ModelSource.of_graph(graph) if source.is_graph else source
    agreement, how = measure(plan, reference, feeds, options)  # first: a file its runtime refuses says so
    refuse_nothing_lowered(source.label, plan, placed)
    files: dict[str, bytes] = {}
    arrays: dict[str, np.ndarray] = {}  # layers.npz: "<stem>/<field>" -> array
    taken: set[str] = {"manifest"}
    header_layers = []
    model_stem = Path(str(graph.meta.get("source") or source.stem)).stem if source.is_graph else source.stem
    model_id = c_ident(model_stem)
    entries = []
    for r in plan.results:
        e = r.entry()
        e["exact_fraction"] = e["max_abs_diff"] = None
        place = placed.get(r.name)
        if r.lowered is not None and (place is None or place.target != "xs3"):
            e["lowered"], e["reason"] = False, place.reason if place is not None else "not placed in the graph"
        elif r.lowered is not None:
            stem = file_stem(r.name, taken)
            e["arrays"] = f"{stem}/"
            for field, value in layer_arrays(r.lowered, r, e).items():  # e holds r.lowered.describe()
                arrays[f"{stem}/{field}"] = value
            e["libnn"] = libnn_reference(r.lowered)
            note = f"{r.name}: {r.layer.opname} -> {r.lowered.kernel}"
            note += "".join(f"; {c}" for c in r.lowered.op.canonical)
            if r.lowered.weights is not None:
                header_layers.append((f"{model_id}_{stem}", r.lowered, note.replace("*/", "* /")))
            if agreement is not None:
                e.update(agreement[r.name].as_dict())
        entries.append(e)
    files[LAYERS_FILE] = npz_bytes(arrays)  # np.savez's bytes, built without zipfile (:mod:`.npz_bytes`)
    del arrays
    header = f"{bounded_stem(model_stem)}_xs3.h"  # a model's own name may be long too
    files[header] = render_header(Path(str(graph.meta.get("source") or source.path)).name, model_id,
                                  header_layers).encode("utf-8")
    net, arena = network_desc(graph, model_id)
    network = {"header": f"{bounded_stem(model_stem)}_xs3_network.h", "layers": len(net.layers),
               "tensors": len(net.tensors), "arena_bytes": arena.size, "largest_live_bytes": arena.largest_live,
               "weight_bytes": net.weight_bytes, "inputs": net.inputs, "outputs": net.outputs,
               "warning": arena_warning(arena, net.weight_bytes)}
    if net.layers:
        files[network["header"]] = network_header(net).encode("utf-8")
        files.update(runner_files(net, network["header"], options.symmetric_output))  # xs3_runner.c, build_runner.sh
    else:
        network["header"] = None
    lowered = [r for r in plan.lowered if placed.get(r.name) is not None and placed[r.name].target == "xs3"]
    manifest = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "model": source.label, "header": header,
                "arrays": LAYERS_FILE,
                "options": asdict(options), "agreement": how, "network": network,
                "summary": {"layers": len(entries), "lowered": len(lowered),
                            "kernels": sorted({r.lowered.kernel for r in lowered if r.lowered is not None})},
                "layers": entries}
    return manifest, files


def refuse_nothing_lowered(path: str, plan: LoweringPlan, placed: Mapping[str, Any]) -> None:
    """An XS3Error (one line, exit 2, nothing written) when no layer lowers: the export would hold no kernel
    (issue 34 finding 6: a float model). Names the most frequent reasons with their counts."""
    if any(placed.get(r.name) is not None and placed[r.name].target == "xs3" for r in plan.lowered):
        return
    if not plan.results:
        raise XS3Error(f"{path}: no source-layer records to lower (a float model, or a graph file written before "
                       "version 2: convert the model again); nothing written")
    reasons: dict[str, int] = {}
    for r in plan.results:
        entry = r.entry()
        why = str(entry.get("reason") or "not placed in the graph")
        kind = why.rsplit(" is ", 1)[1] if " is " in why else why  # "conv1/relu is float32, ..." -> the kind
        reasons[kind] = reasons.get(kind, 0) + 1
    top = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
    why = "; ".join(f"{n} x {k}" for k, n in top) + (f"; +{len(reasons) - 3} other reasons" if len(reasons) > 3
                                                     else "")
    hint = ("; XS3 kernels take int8 layers: export a quantized model (TFLite int8, ONNX QDQ or QOperator)"
            if "float" in why else "")
    raise XS3Error(f"{path}: none of its {len(plan.results)} layers lowers to an XS3 kernel ({why}){hint}; "
                   "nothing written")


def libnn_reference(layer: LoweredLayer) -> dict[str, Any]:
    """What holds a layer's kernels to lib_nn's C: the source files and the golden cases of each call."""
    calls = layer.kernels()
    return {"commit": LIBNN_COMMIT, "sources": [kernel_desc(k).source for k in calls],
            "golden_cases": [f"tests/data/golden/libnn/{k}.npz" for k in calls]}


def check_export_target(out_dir: str | os.PathLike, force: bool = False) -> None:
    """An EmitError (one line) unless ``out_dir`` may receive the export: missing, empty, or with ``force``
    a folder holding an earlier export (its ``manifest.json``), which is then replaced whole."""
    out = Path(out_dir)
    out = out.resolve() if out.is_symlink() else out
    check_folder_target(out, force)
    if force and out.is_dir() and any(out.iterdir()) and not is_export_folder(out):
        raise EmitError(f"-o {out_dir}: holds files that are not an xs3 export (no {MANIFEST} of format "
                        f"{MANIFEST_FORMAT}); it is not replaced even with --force (remove it, or give another "
                        f"folder)")


def is_export_folder(folder: Path) -> bool:
    """True when ``folder/manifest.json`` is an xs3 export's manifest (:data:`MANIFEST_FORMAT`).

    A manifest as :func:`export_model` writes it opens with its format line, so that opening settles it without
    parsing a 10,000-layer manifest (8 MB, 0.2-1 s, three times per ``--force`` export; issue 38); any other
    file is parsed whole."""
    try:
        with open(folder / MANIFEST, "rb") as fh:
            if fh.read(len(_MANIFEST_OPENING)) == _MANIFEST_OPENING:
                return True
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT


def export_model(source: ModelSource, graph: Graph, out_dir: str | os.PathLike,
                 feeds: Sequence[Mapping[str, np.ndarray]] | None = None,
                 options: VPUOptions = DEFAULT_OPTIONS, force: bool = False) -> dict[str, Any]:
    """Write the export of ``graph`` (imported from ``source``) as the folder ``out_dir``, whole or not at all;
    returns the manifest.

    ``out_dir`` may be missing (it and its parents are created) or empty; a
    non-empty one needs ``force`` and must hold an earlier export
    (:func:`check_export_target`), checked before the model is even lowered.
    """
    check_export_target(out_dir, force)
    manifest, files = build_export(source, graph, feeds, options)
    files[MANIFEST] = (dumps_indented(manifest, 1) + "\n").encode("utf-8")  # last: its presence = whole
    out = Path(out_dir)
    if force and out.is_dir() and any(out.iterdir()):
        check_export_target(out, force)  # still an export folder after the (long) lowering
    write_folder(out, files, force)
    return manifest


#: width of the layer column of the printed table
NAME_WIDTH = 36


def common_scope(names: Sequence[str]) -> str:
    """The scope (``model_1/``) every scoped name starts with, up to a ``/``; names without a ``/`` (the
    output's ``StatefulPartitionedCall_1:0``) do not count; empty for fewer than two scoped names."""
    scoped = [n for n in names if "/" in n]
    if len(scoped) < 2:
        return ""
    prefix = os.path.commonprefix(scoped)
    return prefix[: prefix.rfind("/") + 1]


def _unscoped(name: str, scope: str) -> str:
    return name[len(scope):] if scope and name.startswith(scope) and len(name) > len(scope) else name


def display_names(names: Sequence[str], width: int = NAME_WIDTH) -> list[str]:
    """Short, distinct names for the table's layer column, one per layer, at most ``width`` characters.

    A keras layer's name joins every fused tensor's name (``m/conv_relu/Relu6;m/bn/add_1;m/conv/convolution``)
    and all begin with the model's scope, so cutting the start collides (issue 21). The column shows the
    first fused name without the scope shared by every layer, keeping its end when it is still too long
    (``...block_13_expand_relu_1/Relu6``); names that would still print alike get their row number in front
    (``#12 ...``), so two layers never print the same. The manifest keeps the full names.
    """
    firsts = [next((part for part in n.split(";") if part), n) for n in names]
    scope = common_scope(firsts)
    shown = [_fit(_unscoped(f, scope), width) for f in firsts]
    tagged: set[int] = set()
    while True:
        seen: dict[str, list[int]] = {}
        for i, s in enumerate(shown):
            seen.setdefault(s, []).append(i)
        clash = [i for rows in seen.values() if len(rows) > 1 for i in rows if i not in tagged]
        if not clash:
            return shown
        for i in clash:  # "#k " ends at its space, so two different rows never give the same text
            tag = f"#{i + 1} "
            shown[i] = tag + _fit(_unscoped(firsts[i], scope), width - len(tag))
            tagged.add(i)


def _fit(name: str, width: int) -> str:
    """``name``, or its last ``width - 3`` characters after ``...`` (the end names the layer's own op)."""
    return name if len(name) <= width else "..." + name[-(width - 3):]


def manifest_lines(manifest: dict[str, Any]) -> list[str]:
    """A plain-text table of the manifest: one line per layer, each layer's name distinct
    (:func:`display_names`)."""
    entries = manifest["layers"]
    w = NAME_WIDTH
    shown = display_names([e["name"] for e in entries], w)
    lines = [f"{'layer':{w}s} {'op':18s} {'kernel':20s} {'exact':>8s} {'maxdiff':>7s}  note"]
    for e, name in zip(entries, shown):
        exact = "" if e["exact_fraction"] is None else f"{100 * e['exact_fraction']:.2f}%"
        diff = "" if e["max_abs_diff"] is None else str(e["max_abs_diff"])
        note = e["reason"] if not e["lowered"] else "; ".join(e.get("canonicalizations", []))
        kernel = (e["kernel"] or "-")[:20]
        lines.append(f"{name:{w}s} {e['op'][:18]:18s} {kernel:20s} {exact:>8s} {diff:>7s}  {note}")
    s = manifest["summary"]
    lines.append(f"{s['lowered']} of {s['layers']} layers lowered ({', '.join(s['kernels']) or 'no XS3 kernel'})")
    net = manifest.get("network") or {}
    if net.get("header"):
        lines.append(f"network: {net['layers']} XS3 layers, tensor arena {net['arena_bytes']:,} bytes (largest live "
                     f"set {net['largest_live_bytes']:,}), weights and BSO {net['weight_bytes']:,} bytes")
    if net.get("warning"):
        lines.append(f"warning: {net['warning']}")
    if manifest.get("agreement", {}).get("note"):
        lines.append(f"agreement with the source runtime not measured: {manifest['agreement']['note']} (the exact "
                     "and maxdiff columns are empty)")
    scope = common_scope([next((p for p in e["name"].split(";") if p), e["name"]) for e in entries])
    if any(len(e["name"]) > w or ";" in e["name"] for e in entries):
        lines.append("layer: the first fused tensor's name" + (f" without the scope '{scope}'" if scope else "")
                     + "; full names in manifest.json")
    return lines
