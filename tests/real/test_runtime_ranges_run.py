"""A float model imported without calibration runs with run-time ranges (AutoQuantize on its input,
QuantizeDownAndShrinkRange_32to8 after each product, each taking the run's own data range). Whatever
input comes, no node may refuse at run time (a model that converts must run): here every float file of
``models/real/`` and ``models/real/families/`` runs on a real sample and then, on the same runner (the
supernodes keep the output ranges of the sample), on degenerate inputs - all zeros, all -1, all at the
sample's maximum - and on each of those on a fresh runner too. Before optimizer/bias_fit_floor.py the
logmel conv1d net (a Supernode reading a shrink-range output) and silero VAD (a supernode reading an
AutoQuantize through MirrorPad_8) refused such inputs in fill_bias_buf ("Final too big"); the outputs must
also keep the sample's sizes and be finite.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing.families import FAMILIES, load_families
from hexnn_import.testing.real_models import (
    REAL,
    float_inputs,
    is_float_model,
    load_manifest,
    manifest_shape,
)

#: models/real files whose height and width the file leaves open (their manifest shape is given)
DYNAMIC = {"rapidocr_ppocr_mobile_v2_cls.onnx", "rapidocr_ppocrv3_det.onnx"}
ENTRIES = ([(REAL, e) for e in load_manifest() if is_float_model(e)]
           + [(FAMILIES, e) for e in load_families() if e.get("quant") == "float"
              or e["file"] == "silero_vad_v6.onnx"])


def _graph_and_sample(folder, entry):  # type: ignore[no-untyped-def]
    import hexnn_import as hx

    shapes = {"x": manifest_shape(entry)} if entry["file"] in DYNAMIC else None
    graph = hx.prepare(hx.import_model(folder / entry["file"], input_shapes=shapes))
    ios = graph.inputs
    if folder == REAL:
        return graph, {ios[0].name: float_inputs(entry, 1).reshape(ios[0].shape)}
    if entry.get("task") == "stream-vad":   # one 576-sample chunk of its recording, from a zero state
        chunk = np.load(folder / entry["data"])["calibration"][:1]
        return graph, {io.name: (chunk if io.name == "input" else np.zeros(io.shape)).astype(np.float32)
                       .reshape(io.shape) for io in ios}
    data = np.load(folder / entry["data"])   # the held-out samples, first one (a detector's npz has no labels)
    return graph, {io.name: np.asarray(data[io.name][:1], np.float32).reshape(io.shape) for io in ios}


@pytest.mark.parametrize("folder,entry", ENTRIES, ids=[e["file"] for _, e in ENTRIES])
def test_float_model_runs_on_degenerate_inputs(folder, entry) -> None:  # type: ignore[no-untyped-def]
    import hexnn_import as hx

    graph, sample = _graph_and_sample(folder, entry)
    assert all(io.dtype == "float32" for io in graph.inputs), entry["file"]
    runner = hx.Runner(graph)
    sizes = {k: np.asarray(v).size for k, v in runner.run(sample).items()}
    peak = max(float(np.max(v)) for v in sample.values())
    for value in (0.0, -1.0, peak):
        feed = {k: np.full(v.shape, value, np.float32) for k, v in sample.items()}
        for r in (runner, hx.Runner(graph)):
            outs = r.run(feed)
            assert {k: np.asarray(v).size for k, v in outs.items()} == sizes
            assert all(np.all(np.isfinite(np.asarray(v, np.float64))) for v in outs.values()), (entry["file"], value)
