"""What to do after ``hexnn-import MODEL``: the next commands for this model, with its real input names.

The convert summary ends with these (issue 21, [Newcomer]): ``run`` with the
``.npz`` the model needs (key = input name, shape, dtype), ``compare`` on
random and on real samples against the right reference, and ``xs3-export``
only when the model is an int8 TFLite model with layers that lower to XS3
kernels. Each step is ``{"command": ..., "about": ...}`` so ``--json`` can
carry the same list.
"""
from __future__ import annotations

import shlex
from typing import Any, Mapping, Sequence

from hexnn_import.graph import Graph
from hexnn_import.model_source import ModelSource

#: the reference runtime of each source format (``compare --reference auto``)
REFERENCE_RUNTIME = {"tflite": "LiteRT", "onnx": "onnxruntime"}


def _quote(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _inputs_text(graph: Graph, batch: str | None = None) -> str:
    """``'input': int8 [1, 24, 24, 3]`` per input; ``batch`` names a leading axis of samples (``N``)."""
    parts = []
    for io in graph.inputs:
        dims = list(io.shape)
        if batch:  # N samples, each of the input's shape (a batch of 1 need not be spelled out)
            dims = [batch, *(dims[1:] if dims[:1] == [1] else dims)]
        text = f"'{io.name}': {io.dtype} [{', '.join(str(d) for d in dims)}]"
        if batch and io.dtype != "float32":
            text += " (codes, or float32 real values)"
        parts.append(text)
    return ", ".join(parts)


def _savez_hint(graph: Graph) -> str:
    keys = ", ".join(f"{io.name!r}: x{i if len(graph.inputs) > 1 else ''}" for i, io in enumerate(graph.inputs))
    return f'numpy.savez("x.npz", **{{{keys}}})'


def xs3_lowerable(graph: Graph) -> tuple[int, int] | None:
    """``(lowered, layers)`` when the imported graph has at least one source layer that lowers to an XS3
    kernel, else None: Replace and Legalize on the layers the importer recorded (no kernel runs, no import)."""
    from hexnn_import.errors import HexnnError

    if not graph.source_layers:
        return None
    try:
        from hexnn_import.xs3.lower import lower_graph

        plan = lower_graph(graph)
    except HexnnError:
        return None
    return (len(plan.lowered), len(plan.results)) if plan.lowered else None


def next_steps(graph: Graph, source: ModelSource, shape_args: Sequence[str] = (), calibration: str | None = None,
               runtime_ranges: bool = False,
               input_shapes: Mapping[str, tuple[int, ...]] | None = None,
               preprocess: str | None = None) -> list[dict[str, str]]:
    """The commands that make sense after importing ``source`` (see the module docstring).

    ``shape_args`` are the ``--input-shape`` values the user gave (repeated so the commands take the same
    shapes); ``calibration`` the ``--calibration`` data (with its ``preprocess``), repeated for ``compare``;
    ``runtime_ranges`` says the model runs with run-time ranges (then ``compare`` judges the engine against
    the float model itself).
    """
    model = str(source)
    origin = ModelSource.of_graph(graph) if source.is_graph else source  # the model file a graph came from
    shapes = [w for s in shape_args for w in ("--input-shape", s)]
    single = len(graph.inputs) == 1
    steps = [{
        "command": _quote(["hexnn-import", "run", model, "--input", "x.npz", *shapes]),
        "about": f"x.npz holds {_inputs_text(graph)} ({_savez_hint(graph)})"
                 + ("; x.npy also works for this single input" if single else "")
                 + "; prints each output (top-5 for a classifier)",
    }]
    runtime = REFERENCE_RUNTIME.get(origin.format, "its source runtime") if origin else "its source runtime"
    cal = ["--calibration", calibration] if calibration else []
    if calibration and preprocess:
        cal += ["--preprocess", preprocess]
    if runtime_ranges or calibration:
        against = f"the float model itself in {runtime}"
        twin = ""
    else:
        against = f"this model in {runtime} (bit-faithfulness)"
        twin = f"; add --float-model FLOAT.{origin.format if origin else 'tflite'} to measure quantization " \
               "against the float twin"
    steps.append({
        "command": _quote(["hexnn-import", "compare", model, "--random", "10", *cal, *shapes]),
        "about": f"the engine against {against}, on 10 seeded random inputs{twin}",
    })
    steps.append({
        "command": _quote(["hexnn-import", "compare", model, "--data", "D.npz", *cal, *shapes]),
        "about": f"the same on your samples: D.npz holds {_inputs_text(graph, 'N')}, and optional 'labels' [N] "
                 "(class ids) for accuracy",
    })
    xs3 = xs3_lowerable(graph)
    if xs3:
        out = f"{source.stem}_xs3"
        steps.append({
            "command": _quote(["hexnn-import", "xs3-export", model, "-o", out, *shapes]),
            "about": f"{xs3[0]} of {xs3[1]} layers lower to XS3 (lib_nn) kernels: BSO, weights, C header, "
                     "manifest",
        })
    return steps


def print_next_steps(steps: list[dict[str, Any]]) -> None:
    """The steps on stdout, after the summary: one command a line, what it does indented below it."""
    import click

    if not steps:
        return
    click.echo("next:")
    for s in steps:
        click.echo(f"  {s['command']}")
        click.echo(f"      {s['about']}")
