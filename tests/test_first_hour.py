"""Issue 34 [First hour] findings 2 and 6, replayed as a new user met them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import hexnn_import as hx
from hexnn_import.errors import ModelFormatError
from hexnn_import.summary import grouped_notes, note_kind


def hexnn(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hexnn_import.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_xs3_export_of_a_float_model_is_one_line_and_writes_no_folder(tmp_path: Path) -> None:
    """Finding 6: it exited 0, printed 65 rows of "is float32, not per-tensor int8" and wrote an empty export."""
    out = hexnn(["xs3-export", hx.example_file("small_float.tflite"), "-o", "exp"], tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "none of its 6 layers lowers to an XS3 kernel" in lines[0], lines
    assert "5 x float32, not per-tensor int8" in lines[0] and "quantized model" in lines[0]
    assert out.stdout == "" and not (tmp_path / "exp").exists()


def test_notes_of_one_kind_print_once_with_their_count() -> None:
    """Finding 6: 25 ``note:`` lines about weight rescaling, one per node; now one line per kind."""
    notes = [f"model/conv{i}/Conv2D: channel {3 * i} scale ratio {1e-4 / (i + 1):.3g} below 1/2048; weights "
             "rescaled to 1/1024" for i in range(25)] + ["input 'x': dynamic batch set to 1"]
    grouped = grouped_notes(notes)
    assert grouped == [(notes[0], 25), (notes[-1], 1)]
    assert note_kind(notes[0]) == note_kind(notes[7]) != note_kind(notes[-1])


def test_convert_prints_a_kind_once_and_json_keeps_every_note(capsys: pytest.CaptureFixture[str]) -> None:
    from hexnn_import.summary import graph_summary, print_summary

    s = graph_summary(hx.import_model(hx.example_file("small_int8.tflite")), "m.tflite", None)
    s["notes"] = [f"n{i}/conv: channel {i} scale ratio 1e-05 below 1/2048; weights rescaled to 1/1024"
                  for i in range(4)]
    print_summary(s)
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: n")]
    assert notes == [f"note: {s['notes'][0]} (and 3 more like it; --json lists every note)"]
    assert len(s["notes"]) == 4  # what --json prints


def test_example_files_are_installed_with_the_package(tmp_path: Path) -> None:
    """Finding 2: from any folder the bundled models are there, by name; a wrong name lists the right ones."""
    names = hx.example_files()
    assert {"small_int8.tflite", "small_float.tflite", "digits_int8.tflite", "digits_test.npz"} <= set(names)
    assert Path(hx.example_file("small_int8.tflite")).read_bytes()[4:8] == b"TFL3"
    with pytest.raises(ModelFormatError, match="there are: .*small_int8.tflite"):
        hx.example_file("small_int9.tflite")
    with pytest.raises(ModelFormatError):
        hx.example_file("../examples.py")


def test_the_convert_probe_stays_cold_and_numba_caches_outside_the_package(tmp_path: Path) -> None:
    """Convert's six probe runs keep the numpy path (numba's import cost 1.2 s of every convert); later runs
    warm up as before, and numba's machine code goes to the user's cache, not beside the installed package
    (where it outlived ``pip uninstall`` and hid a later editable install: ``cannot import name '__version__'``)."""
    import os

    code = ("import os, sys\nimport numpy as np\nimport hexnn_import as hx\n"
            "from hexnn_import.probe_outputs import add_probe_notes\n"
            "g = hx.prepare(hx.import_model(hx.example_file('small_int8.tflite')))\n"
            "add_probe_notes(g)\nprint('numba' in sys.modules)\n"
            "r = hx.Runner(g)\nx = {'input': np.zeros((1, 24, 24, 3), np.int8)}\nr.run(x); r.run(x)\n"
            "print('numba' in sys.modules, os.environ.get('NUMBA_CACHE_DIR'))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "HEXNN_COMPILED")}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", str(tmp_path / "hexnn-import" / "numba")], out.stdout
