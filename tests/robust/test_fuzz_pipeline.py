"""Whole-pipeline fuzzing (issue [Robust] "The whole pipeline under bad input"): no internal error anywhere.

Each format's mutated artefacts - TFLite and ONNX models (bundled and real
converter outputs), graph files as ``hexnn-import MODEL -o g.hexnn.json``
writes them, ``run --input`` files - go through every stage the command
line runs on them (:mod:`hexnn_import.testing.fuzz_pipeline`): import,
prepare, summary, graph file written and read back, ``--emit c`` / ``dot``,
run on a valid input; every 10th case and every seed also ``xs3-export``,
``run --xs3`` and ``compare``. An exception other than the project's own, a
hang (:data:`fuzz_pipeline.CASE_LIMIT_S` of CPU) or a dead worker in any
stage fails the test, with the case and a reproducer. The test runs a fixed
number of cases per format (:data:`PIPELINE_TEST_CASES`, seed 0), all of them
however loaded the machine; ``bench/fuzz_campaign.py`` runs thousands
(``HEXNN_FUZZ_CASES`` / ``HEXNN_FUZZ_SEED``).
"""
from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hexnn_import.errors import HexnnError, ModelFormatError
from hexnn_import.testing import fuzz_pipeline as fp
from hexnn_import.testing.fuzz_bar import PIPELINE_TEST_CASES, pipeline_problems
from hexnn_import.testing.fuzz_pipeline_npz import BOMB_BYTES, bomb_member, npy_header, npz_structure
from hexnn_import.testing.fuzz_pipeline_stages import CliUserError, Recorder, cli_call, stage
from hexnn_import.testing.fuzz_compare_cases import row_of
from hexnn_import.testing.fuzz_seeds import PREPARED, pipeline_seeds


@pytest.mark.parametrize("fmt", ["tflite", "onnx", "graph", "npz"])
def test_fuzz_pipeline_has_no_internal_error(fmt: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    count = PIPELINE_TEST_CASES[fmt]
    report = fp.run_pipeline_fuzz(fmt, pipeline_seeds(fmt), count=count, seed=0)
    with capsys.disabled():
        print("\n" + report.summary())
        if report.converted_failed:
            print("converted-then-failed (a model that imported and prepared, then failed):\n"
                  + report.describe("converted_failed", limit=8))
    problems = pipeline_problems(report, count)
    if not report.clean:
        fp.write_reproducers(report, tmp_path)
    assert not problems, report.summary() + f"\nreproducers in {tmp_path}:\n" + "\n".join(problems)


# ---- the harness itself ------------------------------------------------------------------------
def test_stage_outcomes_are_sorted(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "r.json")

    def raise_(exc: BaseException) -> None:
        raise exc

    assert stage(rec, "a", lambda: 7) == (True, 7)
    assert stage(rec, "b", raise_, ModelFormatError("bad file"))[0] is False
    stage(rec, "c", raise_, MemoryError())
    stage(rec, "d", raise_, ModelFormatError("two\nlines"))
    stage(rec, "e", raise_, SystemExit(3))
    saved = json.loads((tmp_path / "r.json").read_text())
    assert [s[:2] for s in saved["stages"]] == [["a", "ok"], ["b", "error"], ["c", "INTERNAL"], ["d", "INTERNAL"],
                                                ["e", "INTERNAL"]]
    assert saved["stages"][2][3].startswith("test_fuzz_pipeline.py:")  # where it was raised
    assert saved["current"] is None


def test_a_command_error_is_one_project_error(tmp_path: Path) -> None:
    with pytest.raises(CliUserError) as err:
        cli_call(["run", tmp_path / "missing.tflite", "--input", tmp_path / "x.npz"])
    assert isinstance(err.value, HexnnError) and "missing.tflite" in str(err.value) and "\n" not in str(err.value)
    assert "usage" not in cli_call(["ops", "--json"]).lower()


def test_a_case_that_hangs_is_charged_to_its_stage(tmp_path: Path) -> None:
    report = fp.PipelineReport("tflite", 0, 10)
    (tmp_path / "5.json").write_text(json.dumps({"current": "run", "stages": [["import", "ok", "", "", ""],
                                                                              ["prepare", "ok", "", "", ""]]}))
    job = fp.PipelineJob(5, "m.tflite", "flip", b'{"index": 5}\nPAYLOAD')
    fp._record(report, job, "hang", "no result after 20 s", tmp_path)
    assert report.cases == {"hang": 1} and report.failures[0].stage == "run"
    assert report.failures[0].payload == b"PAYLOAD" and not (tmp_path / "5.json").exists()
    (tmp_path / "6.json").write_text(json.dumps({"current": None, "stages": [
        ["import", "ok", "", "", ""], ["prepare", "ok", "", "", ""], ["run", "error", "OpError: x", "", ""]]}))
    fp._record(report, fp.PipelineJob(6, "m.tflite", "flip", b"{}\n"), "ok", "", tmp_path)
    assert report.cases["converted-then-failed"] == 1 and report.converted_failed[0].stage == "run"
    written = fp.write_reproducers(report, tmp_path / "repro")
    assert written[0].read_bytes() == b"PAYLOAD" and "hexnn-import run" in (
        tmp_path / "repro" / "README_tflite_failures.txt").read_text()


def test_cases_reproduce_from_their_index() -> None:
    seeds = pipeline_seeds("npz")
    jobs = list(fp.plan_jobs("npz", seeds, 300, 4, 10))
    assert [j.index for j in jobs[:len(seeds)]] == [-1 - k for k in range(len(seeds))]
    assert fp.case_payload("npz", seeds, 300, 4, 250) == next(j.payload for j in jobs if j.index == 250)
    assert len({j.payload for j in jobs}) > 250
    head = json.loads(jobs[len(seeds)].data.partition(b"\n")[0])
    assert head["slow"] is True and head["model"] in PREPARED  # case 0 is sampled; its model was prepared


def test_npz_seeds_are_valid_inputs_and_their_structure_is_found(tmp_path: Path) -> None:
    from hexnn_import.cli import load_feeds

    for s in pipeline_seeds("npz"):
        if row_of(s.label) is not None:  # a compare row (fuzz_compare_cases), not an input file
            continue
        graph = PREPARED[s.model]
        (tmp_path / "x.npz").write_bytes(s.data)
        feeds = load_feeds(str(tmp_path / "x.npz"), [i.name for i in graph.inputs])
        assert sorted(feeds) == sorted(i.name for i in graph.inputs)
        for i in graph.inputs:
            assert feeds[i.name].shape == tuple(i.shape) and feeds[i.name].dtype == np.dtype(i.dtype)
    data = pipeline_seeds("npz")[0].data  # stored (not deflated): the .npy inside is walked too
    st = npz_structure(data)
    hlen_at = data.index(b"\x93NUMPY") + 8
    assert (hlen_at, 2, "u16") in st.lengths and (18, 4, "u32") in st.lengths
    assert any(k == "cd_offset" for _, _, k in st.indices) and len(st.boundaries) > 20
    assert struct.unpack_from("<H", data, hlen_at)[0] + hlen_at + 2 in st.boundaries  # the data's start


def test_the_deflate_bomb_claims_what_it_inflates_to() -> None:
    data = bomb_member("x.npy", (BOMB_BYTES // 12, 3), "<f4")
    assert len(data) < BOMB_BYTES // 500
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo("x.npy")
        head = npy_header((BOMB_BYTES // 12, 3), "<f4")
        assert info.file_size == len(head) + BOMB_BYTES
        with z.open(info) as fh:
            assert fh.read(len(head) + 64) == head + bytes(64)


def test_the_compare_rows_are_refused_for_their_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compare-side seed rows (issue 38 findings 4, 6, 9; testing/fuzz_compare_cases.py): each refused row
    is one line naming its finding's cause, the generated:N row runs."""
    from hexnn_import.testing.fuzz_compare_cases import ROWS, run_row

    monkeypatch.setenv("HEXNN_DEBUG", "1")
    model = str(Path(__file__).resolve().parents[2] / "models" / "small_int8.tflite")
    want = {"resume_stray_shard": "shard_000099.npz: not a shard of this run",
            "readonly_results": "ro is not writable", "image_bomb": "b.png: refused before decoding, an image bomb",
            "generated_huge": ""}
    for name, (make, refused, _) in ROWS.items():
        work = tmp_path / name
        work.mkdir()
        monkeypatch.chdir(work)
        (work / "input.npz").write_bytes(make())
        rec = Recorder(work / "r.json", work)
        run_row(name, model, work / "input.npz", work, lambda st, fn, args, rec=rec: stage(rec, st, fn, args),
                cli_call)
        stages = json.loads((work / "r.json").read_text())["stages"]
        load = next(s for s in stages if s[0] == "load")
        assert load[1] == ("error" if refused else "ok") and want[name] in load[2], (name, stages)
        assert all(s[1] == "ok" for s in stages if s[0] != "load"), (name, stages)
