"""``compare --resume`` takes only the shards its run listed (issue [Robust] finding 6): an extra shard file, a
shard copied over another index or a list line of another run is refused, one line naming the file; a list
line cut by a kill is dropped; a resumed run reports byte for byte what a whole run reports."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hexnn_import.compare import CompareOptions, compare
from hexnn_import.compare.ledger import LEDGER_FILE
from hexnn_import.compare.report import to_json
from hexnn_import.errors import InputDataError

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")
N = 70  # three shards: 32, 32 and 6 samples


def _report(results: Path, resume: bool = False, n: int = N) -> str:
    opts = CompareOptions(MODEL, random=n, jobs=1, results=str(results), resume=resume)
    return json.dumps(to_json(compare(opts)), indent=1)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    results = tmp_path_factory.mktemp("whole") / "results"
    return results, _report(results)


def _copy(whole: tuple[Path, str], tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    shutil.copytree(whole[0], folder)
    return folder


def test_an_extra_shard_file_is_refused_by_name(whole: tuple[Path, str], tmp_path: Path) -> None:
    folder = _copy(whole, tmp_path)
    shutil.copy(folder / "shard_000001.npz", folder / "shard_000099.npz")  # the 482 of 450 samples
    before = _files(folder)
    with pytest.raises(InputDataError, match=r"shard_000099\.npz: not a shard of this run \(run\.shards does "
                                             r"not list it\); remove it") as err:
        _report(folder, resume=True)
    assert "\n" not in str(err.value) and _files(folder) == before


def test_a_shard_copied_over_another_index_is_refused(whole: tuple[Path, str], tmp_path: Path) -> None:
    folder = _copy(whole, tmp_path)
    shutil.copy(folder / "shard_000000.npz", folder / "shard_000001.npz")
    with pytest.raises(InputDataError, match=r"shard_000001\.npz: not the shard 1 this run wrote"):
        _report(folder, resume=True)


def test_a_list_of_another_run_is_refused(whole: tuple[Path, str], tmp_path: Path) -> None:
    other = tmp_path / "other"
    _report(other, n=40)  # another run: 40 samples
    folder = _copy(whole, tmp_path)
    (folder / LEDGER_FILE).write_bytes((other / LEDGER_FILE).read_bytes())
    with pytest.raises(InputDataError, match=r"run\.shards: line 1 is another run's"):
        _report(folder, resume=True)
    lines = (whole[0] / LEDGER_FILE).read_text().splitlines()
    entry = json.loads(lines[2])
    entry["shard"] = 7  # this run has shards 0 .. 2
    (folder / LEDGER_FILE).write_text("\n".join(lines[:2] + [json.dumps(entry)]) + "\n")
    with pytest.raises(InputDataError, match=r"line 3 lists shard 7 with 6 samples, which this run does not have"):
        _report(folder, resume=True)


def test_a_cut_line_and_a_missing_shard_resume_to_the_whole_report(whole: tuple[Path, str], tmp_path: Path
                                                                    ) -> None:
    folder = _copy(whole, tmp_path)
    text = (folder / LEDGER_FILE).read_bytes()
    last = text.rstrip(b"\n").rfind(b"\n") + 1
    (folder / LEDGER_FILE).write_bytes(text[:last] + text[last:last + 40])  # killed while the line was written
    (folder / "shard_000002.npz").unlink()  # ... before its file was
    (folder / "shard_000000.npz").unlink()  # a shard the user removed to run it again
    assert _report(folder, resume=True) == whole[1]
    assert _files(folder) == _files(whole[0]) | {LEDGER_FILE: _files(folder)[LEDGER_FILE]}
    lines = (folder / LEDGER_FILE).read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(x)["samples"] in (32, 6) for x in lines)  # the cut line is gone
    assert _report(folder, resume=True) == whole[1]  # and again: the later line for an index wins
