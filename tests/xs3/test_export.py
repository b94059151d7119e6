"""``hexnn-import xs3-export``: layers.npz (every layer's arrays), the C header (gcc -fsyntax-only), the manifest."""
from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hexnn_import.xs3.export as export
from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource
from hexnn_import.errors import HexnnError
from hexnn_import.xs3.bso import unpack_bso

MODELS = Path(__file__).resolve().parents[2] / "models"

#: lib_nn's nn_bso.h, reduced to what the header needs (nn_types.h: data16_t is uint16_t)
STUB_NN_BSO = """#include <stdint.h>
typedef uint16_t data16_t;
typedef struct {
    data16_t bias_hi[16]; data16_t bias_lo[16]; data16_t shift1[16]; data16_t scale[16];
    data16_t offset_scale[16]; data16_t offset[16]; data16_t shift2[16];
} nn_bso_block_t;
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hexnn_import.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def gcc_syntax(header: Path, tmp: Path) -> subprocess.CompletedProcess:
    (tmp / "stub").mkdir(exist_ok=True)
    (tmp / "stub" / "nn_bso.h").write_text(STUB_NN_BSO)
    src = tmp / "use.c"
    src.write_text(f'#include "{header}"\nint main(void) {{ return 0; }}\n')
    return subprocess.run(["gcc", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused-variable",
                           "-Wno-unused-const-variable", f"-I{tmp / 'stub'}", str(src)],
                          capture_output=True, text=True, timeout=300)


def test_export_small_model(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("xs3-export", str(MODELS / "small_int8.tflite"), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "5 of 6 layers lowered" in r.stdout and "RESHAPE has no XS3 kernel" in r.stdout
    assert "network: 5 XS3 layers, tensor arena 6,336 bytes" in r.stdout
    names = sorted(p.name for p in out.iterdir())
    assert names == ["build_runner.sh", "layers.npz", "manifest.json", "small_int8_xs3.h", "small_int8_xs3_network.h",
                     "xs3_runner.c"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["version"] == 3 and manifest["arrays"] == "layers.npz"
    layers = {e["name"]: e for e in manifest["layers"]}
    assert len(layers) == 6
    for e in manifest["layers"]:
        assert {"lowered", "reason", "exact_fraction", "max_abs_diff", "op", "inputs", "outputs", "kernel"} <= set(e)
    conv1 = layers["conv1/relu"]
    assert conv1["lowered"] is True and conv1["kernel"] == "conv2d_shallowin" and conv1["op"] == "CONV_2D"
    assert conv1["inputs"] == ["input"] and conv1["arrays"] == "conv1_relu/" and "file" not in conv1
    assert conv1["exact_fraction"] >= 0.99 and conv1["max_abs_diff"] <= 1
    pool1 = layers["pool1"]
    assert pool1["lowered"] is True and pool1["kernel"] == "maxpool2d" and pool1["exact_fraction"] == 1.0
    assert pool1["libnn"] == {"commit": "96bd67c", "sources": ["maxpool2d.c"],
                              "golden_cases": ["tests/data/golden/libnn/maxpool2d.npz"]}
    flatten = layers["flatten"]
    assert flatten["lowered"] is False and flatten["exact_fraction"] is None
    net = manifest["network"]
    assert net["header"] == "small_int8_xs3_network.h" and net["layers"] == 5 and net["warning"] is None
    assert net["inputs"] == ["input"] and net["outputs"] == ["logits"]
    assert net["largest_live_bytes"] <= net["arena_bytes"]
    with np.load(out / "layers.npz", allow_pickle=False) as z:
        lowered = [e for e in manifest["layers"] if e["lowered"]]  # every member under a lowered layer's prefix
        assert sorted({f.split("/")[0] + "/" for f in z.files}) == sorted(e["arrays"] for e in lowered)
        assert str(z["pool1/kernel"]) == "maxpool2d" and "pool1/weights" not in z.files
        assert z["pool1/window_shape"].tolist() == [2, 2] and z["pool1/window_stride"].tolist() == [2, 2]
        c = conv1["arrays"]
        assert str(z[c + "kernel"]) == "conv2d_shallowin" and str(z[c + "name"]) == "conv1/relu"
        assert z[c + "bso"].dtype == np.int16 and z[c + "bso"].shape == (1, 7, 16)
        assert z[c + "weights"].dtype == np.int8 and z[c + "weights"].shape == (8, 3, 8, 4)
        assert z[c + "input_shape"].tolist() == [1, 24, 24, 4] and z[c + "source_input_shape"].tolist() == [1, 24, 24, 3]
        assert z[c + "window_stride"].tolist() == [1, 1]
        shift2 = unpack_bso(z[c + "bso"], 8).shift2
        assert shift2.min() >= 0 and shift2.max() <= 31  # lib_nn's unsigned shifts, within VLSAT's 32 bits
        assert str(z["logits/kernel"]) == "fully_connected_8" and z["logits/weights"].shape == (10, 32)
    if shutil.which("gcc"):
        res = gcc_syntax(out / "small_int8_xs3.h", tmp_path)
        assert res.returncode == 0, res.stderr
        net_c = tmp_path / "net.c"
        net_c.write_text('#define SMALL_INT8_IMPLEMENTATION\n#include "small_int8_xs3_network.h"\n')
        res = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", f"-I{out}", str(net_c),
                              "-o", str(tmp_path / "net.o")], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr


def test_export_json_and_header_of_mobilenet(tmp_path: Path) -> None:
    out = tmp_path / "mb"
    r = cli("xs3-export", str(MODELS / "mobilenet_v2_int8.tflite"), "-o", str(out), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    manifest = json.loads(r.stdout)
    assert manifest == json.loads((out / "manifest.json").read_text())
    lowered = [e for e in manifest["layers"] if e["lowered"]]
    assert len(lowered) == 64 and [p.name for p in out.glob("*.npz")] == ["layers.npz"]
    assert all(e["exact_fraction"] >= 0.99 and e["max_abs_diff"] <= 1 for e in lowered)
    with np.load(out / "layers.npz", allow_pickle=False) as z:
        assert len({f.split("/")[0] for f in z.files}) == 64
        d = "block5_1_depthwise/"  # 336 channels: 21 groups
        assert z[d + "bso"].shape == (21, 7, 16) and z[d + "weights"].shape == (3, 3, 336)
    header = (out / "mobilenet_v2_int8_xs3.h").read_text()
    assert "mobilenet_v2_int8_block5_1_depthwise_bso[21]" in header
    assert '#define MOBILENET_V2_INT8_STEM_KERNEL "conv2d_shallowin"' in header
    if shutil.which("gcc"):
        res = gcc_syntax(out / "mobilenet_v2_int8_xs3.h", tmp_path)
        assert res.returncode == 0, res.stderr


def test_force_replaces_a_version_2_export_whole(tmp_path: Path) -> None:
    """A folder manifest version 2 wrote (a ``<layer>.npz`` per layer) is still an export: refused without
    ``force``, replaced whole with it: no old layer file is left beside the new ``layers.npz``."""
    out = tmp_path / "out"
    out.mkdir()
    np.savez(out / "conv1_relu.npz", kernel=np.array("conv2d_shallowin"))
    np.savez(out / "gone.npz", kernel=np.array("maxpool2d"))
    layers = [{"name": "conv1/relu", "file": "conv1_relu.npz"}, {"name": "gone", "file": "gone.npz"}]
    (out / "manifest.json").write_text(json.dumps({"format": "hexnn-xs3-manifest", "version": 2, "layers": layers},
                                                  indent=1) + "\n")
    source = ModelSource.open(MODELS / "small_int8.tflite")
    with pytest.raises(HexnnError, match="not empty"):
        export.export_model(source, import_model(source), out)
    assert sorted(p.name for p in out.iterdir()) == ["conv1_relu.npz", "gone.npz", "manifest.json"]
    manifest = export.export_model(source, import_model(source), out, force=True)
    assert manifest["version"] == 3 and json.loads((out / "manifest.json").read_text()) == manifest
    assert sorted(p.name for p in out.iterdir()) == ["build_runner.sh", "layers.npz", "manifest.json",
                                                     "small_int8_xs3.h", "small_int8_xs3_network.h", "xs3_runner.c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no hidden build folder, no old copy


def test_header_bso_matches_the_npz(tmp_path: Path) -> None:
    manifest, files = export.build_export(ModelSource.open(MODELS / "small_int8.tflite"), import_model(MODELS / "small_int8.tflite"))
    header = files["small_int8_xs3.h"].decode()
    import io
    with np.load(io.BytesIO(files["layers.npz"])) as z:
        bso = z["logits/bso"]
    first = bso[0, 1].view(np.uint16)  # bias_lo row as the header writes it
    assert "/* bias_lo */ {" + ", ".join(str(v) for v in first.tolist()) + "}" in header


def test_export_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "x.tflite"
    bad.write_bytes(b"not a model at all")
    r = cli("xs3-export", str(bad), "-o", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "TFLite" in r.stderr
    assert not (tmp_path / "o").exists()


def test_a_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hexnn_import.emit import files as emit_files

    real = emit_files._write_new  # each file of the hidden folder
    calls = []

    def failing(path, payload):  # type: ignore[no-untyped-def]
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, payload)

    monkeypatch.setattr(emit_files, "_write_new", failing)
    with pytest.raises(HexnnError, match="No space left on device"):
        export.export_model(ModelSource.open(MODELS / "small_int8.tflite"), import_model(MODELS / "small_int8.tflite"), tmp_path / "o")
    assert len(calls) == 2 and list(tmp_path.iterdir()) == []  # the folder is built aside: nothing is left


def test_export_of_a_float_onnx_model_is_one_line_exit_2(tmp_path: Path) -> None:
    """A model with nothing to lower (a float ONNX file; the float TFLite one: tests/test_first_hour.py): one
    line naming why, exit 2, nothing written (issue 39)."""
    model = Path(__file__).resolve().parents[2] / "models/real/families/torch_conv1d_logmel_digits_float.onnx"
    r = cli("xs3-export", str(model), "-o", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and not r.stdout, r.stdout + r.stderr
    assert "none of its 6 layers lowers to an XS3 kernel (6 x not a quantized tensor" in r.stderr
    assert "nothing written" in r.stderr
    assert not (tmp_path / "o").exists()
