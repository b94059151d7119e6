"""compare flags results that tell nothing (issue 34, finding 4): a constant output, a classifier that predicts
one class, top-1 / top-5 only on class scores; checked against LiteRT run on the same samples, against labels
counted by hand, and on the bundled digits model, which must give no warning."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.datasets.samples import feed_for, random_dataset
from hexnn_import.graph import GraphIO
from hexnn_import.testing.degenerate_models import landmark_model, one_class_classifier, tiny_weight_classifier
from hexnn_import.testing.litert import run_litert

MODELS = Path(__file__).resolve().parents[2] / "models"


def compare(*args: str, columns: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["compare", "--jobs", "1", *args], env={"COLUMNS": columns})
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


def test_a_constant_output_is_flagged_in_the_terminal_and_the_json(tmp_path: Path) -> None:
    model = tmp_path / "random_init.tflite"
    model.write_bytes(tiny_weight_classifier())
    # independent: LiteRT gives one and the same output on each of the 12 samples compare draws
    spec = GraphIO("input", (1, 32), "int8", 0.02, -3)
    samples = random_dataset(12, [spec], 0).samples
    feeds = [feed_for([spec], s) for s in samples]
    outs = [run_litert(model.read_bytes(), f)[0] for f in feeds]
    assert all(np.array_equal(outs[0], o) for o in outs[1:]) and len({f["input"].tobytes() for f in feeds}) == 12
    code, out, _ = compare(str(model), "--random", "12", "--json", str(tmp_path / "r.json"), "--report",
                           str(tmp_path / "r.html"))
    assert code == 0
    line = ("warning: constant output: 'probabilities' is the same on all 12 samples in hexagon, source: "
            "agreement and accuracy tell nothing")
    assert line in out.splitlines() and out.index(line) < out.index("runners"), out  # before the tables
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["warnings"] == [line.removeprefix("warning: ")]
    output = doc["comparisons"][0]["outputs"][0]
    assert output["exact"] and output["constant_tested"] is True and output["constant_reference"] is True
    assert doc["comparisons"][0]["top1_agreement"] == 1.0  # the figure the warning qualifies
    page = (tmp_path / "r.html").read_text()
    assert "is the same on all 12 samples in hexagon, source: agreement and accuracy tell nothing" in page


def test_one_class_for_every_sample_is_flagged_with_the_accuracy_it_is(tmp_path: Path) -> None:
    model = tmp_path / "biased.tflite"
    model.write_bytes(one_class_classifier())
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (6, 1, 16)).astype(np.int8)
    labels = np.array([3, 5, 3, 5, 5, 1])
    np.savez(tmp_path / "d.npz", input=x, labels=labels)
    tops = {int(np.argmax(run_litert(model.read_bytes(), {"input": xi})[0])) for xi in x}
    assert tops == {3}  # independent: LiteRT's top class is 3 for every sample
    code, out, _ = compare(str(model), "--data", str(tmp_path / "d.npz"), "--json", "-")
    doc = json.loads(out)
    share = float(np.mean(labels == 3))  # 2 of 6, counted by hand
    assert doc["runners"]["hexagon"]["accuracy"] == share and doc["runners"]["hexagon"]["one_class"] == 3
    assert doc["warnings"] == [f"one class: hexagon, source predict class 3 of 'logits' for all 6 samples (accuracy "
                               f"{100 * share:.2f}% is that class's share of the labels): agreement and accuracy "
                               f"tell nothing"]
    assert not any(o["constant_tested"] for o in doc["comparisons"][0]["outputs"])  # the logits do vary


def test_one_class_without_labels_needs_ten_samples(tmp_path: Path) -> None:
    model = tmp_path / "biased.tflite"
    model.write_bytes(one_class_classifier())
    few = json.loads(compare(str(model), "--random", "5", "--json", "-")[1])
    many = json.loads(compare(str(model), "--random", "10", "--json", "-")[1])
    assert few["warnings"] == [] and few["runners"]["hexagon"]["one_class"] is None
    assert len(many["warnings"]) == 1 and many["warnings"][0].startswith("one class: hexagon, source predict class 3")


def test_a_landmark_regression_gets_no_top_k(tmp_path: Path) -> None:
    model = tmp_path / "hand.tflite"
    model.write_bytes(landmark_model())
    code, out, _ = compare(str(model), "--random", "4")
    assert code == 0 and "Identity" in out and "top-1" not in out and "top-5" not in out, out
    doc = json.loads(compare(str(model), "--random", "4", "--json", "-")[1])
    assert doc["classifier"] is None and doc["comparisons"][0]["top1_agreement"] is None and doc["warnings"] == []


def test_the_digits_model_gives_no_false_warning() -> None:
    code, out, _ = compare(str(MODELS / "digits_int8.tflite"), "--float-model", str(MODELS / "digits_float.tflite"),
                           "--data", str(MODELS / "digits_test.npz"), "--limit", "64", "--json", "-")
    doc = json.loads(out)
    assert code == 0 and doc["warnings"] == [] and doc["classifier"] == "logits"
    assert all(r["one_class"] is None for r in doc["runners"].values())
    for comp in doc["comparisons"]:
        assert [(o["constant_tested"], o["constant_reference"]) for o in comp["outputs"]] == [(False, False)]


def test_the_outputs_table_fits_80_columns_without_cutting_a_number() -> None:
    code, out, _ = compare(str(MODELS / "digits_int8.tflite"), "--float-model", str(MODELS / "digits_float.tflite"),
                           "--random", "3", columns="80")
    assert code == 0
    table = out[out.index("outputs of hexagon"):]
    assert all(len(line) <= 80 for line in table.splitlines()) and "…" not in table, table
    assert len(re.findall(r"│ +[01]\.\d{6} │", table)) == 2, table  # both cosines whole, six decimals
    assert len(re.findall(r"│ +100\.00% │ +100\.00% │", table)) == 2, table
