"""The memory budget (issue 20, finding 4; docs/limits.md): oversize inputs, tensors and activation plans are
refused before anything is allocated - one line, exit 2, nothing written, and the refusing process stays small.

The oversize cases run ``hexnn-import`` in a real process (``python -m hexnn_import.cli`` through a small
wrapper that records the process's own peak resident size, ``VmHWM`` (Linux), on exit), since the point is
what the process would have allocated. Budget arithmetic and header reading are also checked in-process against
hand-worked figures.
"""
from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from numpy.lib import format as npformat
from onnx import TensorProto, helper

from hexnn_import import memory
from hexnn_import.api import import_model
from hexnn_import.engine import activation_bytes
from hexnn_import.errors import InputDataError, ModelFormatError, ResourceError
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.peak_rss import PEAK_WRAPPER

ROOT = Path(__file__).resolve().parents[2]
INT8 = ROOT / "models" / "small_int8.tflite"  # input 'input' int8 [1, 24, 24, 3]
FLOAT = ROOT / "models" / "small_float.tflite"  # input 'input' float32 [1, 24, 24, 3]
PEAK_LIMIT_KB = 500 * 1024
#: samples of [24, 24, 3] int8 that make 4 GiB (rounded up to whole samples)
BOMB_N = -(-(4 << 30) // (24 * 24 * 3))


def run_cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, int]:
    """(exit code, stderr, peak RSS in KiB) of ``hexnn-import ARGS`` in a fresh process."""
    peak_file = cwd / ".peak_kb"
    full_env = {k: v for k, v in os.environ.items() if k != memory.BUDGET_ENV}
    full_env.update(env or {})
    r = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, str(peak_file), *args], capture_output=True, text=True,
                       timeout=300, cwd=cwd, env=full_env)
    peak = int(peak_file.read_text())
    peak_file.unlink()
    return r.returncode, r.stderr, peak


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_refused(args: list[str], cwd: Path, words: tuple[str, ...], env: dict[str, str] | None = None) -> int:
    """Exit 2, one line ``error: ...`` holding ``words``, no file added or changed in ``cwd``; returns peak KiB."""
    before = snapshot(cwd)
    code, err, peak = run_cli(args, cwd, env)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert snapshot(cwd) == before
    assert peak < PEAK_LIMIT_KB, f"peak {peak} KiB"
    return peak


@pytest.fixture(autouse=True)
def _no_budget(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(memory.BUDGET_ENV, raising=False)
    memory.set_budget(None)
    yield
    memory.set_budget(None)


class _RepeatingDeflate:
    """zlib's raw deflate, flushed to a byte boundary with a reset history after every write, so that the same
    16 MiB of zeros deflates to the same bytes each time: those are computed once (deflating 4 GiB took 21 s of
    CPU, the suite's costliest fixture). The stream is an ordinary deflate stream any inflater reads."""

    def __init__(self) -> None:
        self._z = zlib.compressobj(9, zlib.DEFLATED, -15)
        self._last: tuple[bytes, bytes] = (b"", b"")

    def compress(self, data: bytes) -> bytes:
        if data != self._last[0]:  # a memcmp, not a deflate
            self._last = (bytes(data), self._z.compress(data) + self._z.flush(zlib.Z_FULL_FLUSH))
        return self._last[1]

    def flush(self) -> bytes:
        return self._z.flush(zlib.Z_FINISH)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 4 MB on disk: ``input`` int8 [BOMB_N, 24, 24, 3] (4.0 GiB) of zeros, deflated."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.npz"
    header = io.BytesIO()
    npformat.write_array_header_1_0(header, {"descr": "|i1", "fortran_order": False, "shape": (BOMB_N, 24, 24, 3)})
    left = BOMB_N * 24 * 24 * 3
    chunk = bytes(16 << 20)
    real = zipfile._get_compressor  # type: ignore[attr-defined]
    zipfile._get_compressor = lambda *a, **k: _RepeatingDeflate()  # type: ignore[attr-defined]
    try:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
            with z.open("input.npy", "w", force_zip64=True) as w:
                w.write(header.getvalue())
                while left:
                    n = min(left, len(chunk))
                    w.write(chunk if n == len(chunk) else chunk[:n])
                    left -= n
    finally:
        zipfile._get_compressor = real  # type: ignore[attr-defined]
    assert path.stat().st_size < 8 << 20
    with zipfile.ZipFile(path) as z, z.open("input.npy") as r:  # an ordinary zip: it inflates to what it claims
        assert r.read(len(header.getvalue())) == header.getvalue() and r.read(1 << 20) == bytes(1 << 20)
        assert z.getinfo("input.npy").file_size == len(header.getvalue()) + BOMB_N * 24 * 24 * 3
    return path


def claim_npy(path: Path, shape: tuple[int, ...], dtype: str = "<f4", payload: int = 100) -> Path:
    """A ``.npy`` whose header claims ``shape`` followed by ``payload`` bytes of data."""
    buf = io.BytesIO()
    npformat.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    path.write_bytes(buf.getvalue() + bytes(payload))
    return path


def relu_tflite(path: Path, shape: list[int]) -> Path:
    """A one-RELU int8 TFLite whose input and output tensors declare ``shape``."""
    b = TFLiteBuilder(description="")
    x = b.add_tensor("x", shape, np.int8, scale=0.1, zero_point=0)
    y = b.add_tensor("y", shape, np.int8, scale=0.1, zero_point=0)
    b.add_operator("RELU", [x], [y])
    b.set_io([x], [y])
    path.write_bytes(b.build())
    return path


# ---- the budget itself ----------------------------------------------------------------------------------------
def test_parse_size_binary_units() -> None:
    assert memory.parse_size("2G") == 2 * 1024 ** 3
    assert memory.parse_size("512M") == 512 * 1024 ** 2
    assert memory.parse_size("100k") == 102400
    assert memory.parse_size("123") == 123
    assert memory.parse_size("1.5GiB") == 3 * 1024 ** 3 // 2


@pytest.mark.parametrize("junk", ["", "abc", "0", "-1", "2X", "1e9", "nan", "G"])
def test_parse_size_refuses_junk_in_one_line(junk: str) -> None:
    with pytest.raises(InputDataError) as e:
        memory.parse_size(junk)
    assert "\n" not in str(e.value) and "2G" in str(e.value)


def test_budget_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert memory.budget_bytes() == total // 2
    monkeypatch.setenv(memory.BUDGET_ENV, "3M")
    assert memory.budget_bytes() == 3 << 20
    memory.set_budget(5000)
    assert memory.budget_bytes() == 5000
    memory.set_budget(None)
    monkeypatch.setenv(memory.BUDGET_ENV, "lots")
    with pytest.raises(InputDataError, match=memory.BUDGET_ENV):
        memory.budget_bytes()


def test_check_bytes_names_the_figures() -> None:
    memory.set_budget(int(11.5 * 2 ** 30))
    memory.check_bytes(int(11.5 * 2 ** 30), "exactly the budget")
    with pytest.raises(ResourceError) as e:
        memory.check_bytes(1 * 100000 * 100000 * 3 * 4, "input x.npz:x")
    assert str(e.value) == ("input x.npz:x would need 111.8 GiB, above the memory budget of 11.5 GiB "
                            "(--max-memory / HEXNN_MAX_MEMORY)")


# ---- array files, from their headers -----------------------------------------------------------------------
def test_huge_npy_header_refused_before_reading(tmp_path: Path) -> None:
    path = claim_npy(tmp_path / "x.npy", (1, 100000, 100000, 3))
    assert path.stat().st_size == 228
    memory.set_budget(8 << 30)
    with pytest.raises(ResourceError, match=r"input .*x\.npy would need 111\.8 GiB"):
        memory.check_array_file(path, {"input": (1, 24, 24, 3)})


def test_bomb_refused_from_its_header(bomb: Path) -> None:
    memory.set_budget(1 << 30)
    with pytest.raises(ResourceError, match=r"bomb\.npz:input would need 4\.0 GiB, above the memory budget of 1\.0 GiB"):
        memory.check_array_file(bomb, {"input": (1, 24, 24, 3)})
    memory.set_budget(None)
    # within a large budget the shape still has to fit the model: [N, 24, 24, 3] fits [1, 24, 24, 3] ...
    memory.set_budget(8 << 30)
    memory.check_array_file(bomb, {"input": (1, 24, 24, 3)})
    # ... and does not fit an input of 7 values
    with pytest.raises(InputDataError, match=r"has shape \[2485514, 24, 24, 3\] \(2485514 samples of shape \[24, 24, 3\]\); "
                                             r"the model's input 'input' takes \[1, 7\]"):
        memory.check_array_file(bomb, {"input": (1, 7)})


def test_expected_shapes_allow_a_leading_sample_axis(tmp_path: Path) -> None:
    np.savez(tmp_path / "d.npz", input=np.zeros((5, 24, 24, 3), np.float32), labels=np.arange(5))
    np.save(tmp_path / "one.npy", np.zeros((1, 1728), np.int8))
    for shape in [(1, 24, 24, 3), (5, 24, 24, 3), (1, 1728), (24, 24, 3)]:
        memory.check_array_file(tmp_path / "d.npz", {"input": shape})
    memory.check_array_file(tmp_path / "one.npy", {"anything": (1, 24, 24, 3)})  # one array feeds one input
    memory.check_array_file(tmp_path / "d.npz", {"other": (1, 7), "second": (1, 7)})  # names: the loader's job
    with pytest.raises(InputDataError, match=r"d\.npz:input has shape \[5, 24, 24, 3\]"):
        memory.check_array_file(tmp_path / "d.npz", {"input": (1, 24, 24, 4)})


def test_truncated_member_and_object_arrays_refused(tmp_path: Path) -> None:
    np.savez(tmp_path / "ok.npz", x=np.arange(100, dtype=np.float32))
    member = zipfile.ZipFile(tmp_path / "ok.npz").read("x.npy")
    with zipfile.ZipFile(tmp_path / "cut.npz", "w") as z:
        z.writestr("x.npy", member[:-40])
    with pytest.raises(InputDataError, match=r"cut\.npz:x: its header declares shape \[100\] float32 \(400 bytes\) "
                                             r"but the file holds 360 bytes"):
        memory.check_array_file(tmp_path / "cut.npz")
    np.save(tmp_path / "obj.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    with pytest.raises(InputDataError, match="holds Python objects"):
        memory.check_array_file(tmp_path / "obj.npy")
    memory.check_array_file(tmp_path / "ok.npz")


def test_arrays_together_count(tmp_path: Path) -> None:
    np.savez(tmp_path / "two.npz", a=np.zeros(1000, np.uint8), b=np.zeros(1000, np.uint8))
    memory.set_budget(1500)
    with pytest.raises(ResourceError, match=r"\(2 arrays together\) would need 2\.0 KiB"):
        memory.check_array_file(tmp_path / "two.npz")


# ---- the activation plan ---------------------------------------------------------------------------------
def test_activation_bytes_hand_worked(tmp_path: Path) -> None:
    graph = import_model(relu_tflite(tmp_path / "r.tflite", [1, 2, 2, 4]))
    # INPUT [1,2,2,4] quint8 = 16 bytes; QuantizedRelu_8: 16 + min 4 + max 4; the INPUT is freed after the relu
    assert activation_bytes(graph)[:2] == (40, 40)


def test_activation_bytes_count_a_convolutions_working_arrays(tmp_path: Path) -> None:
    # CONV_2D int8 [1,6,6,4] -> [1,6,6,4] imports as INPUT (144 bytes of quint8) -> Supernode_8x8p32to8
    # (144 + 4 + 4 bytes) -> OUTPUT. While the supernode runs it also holds its exact sums and pre-saturation
    # codes, 16 bytes for each of its 144 output elements: peak 144 + 152 + 2304 = 2600; total 144 + 152 = 296
    from tests.robust.test_pipeline_errors import conv_model

    (tmp_path / "c.tflite").write_bytes(conv_model())
    assert activation_bytes(import_model(tmp_path / "c.tflite"))[:2] == (2600, 296)


# ---- through the command line, in a real process -----------------------------------------------------------
def test_bomb_npz_input_to_run(bomb: Path, tmp_path: Path) -> None:
    peak = assert_refused(["run", str(INT8), "--input", str(bomb), "-o", "out.npz", "--max-memory", "1G"], tmp_path,
                          ("bomb.npz:input would need 4.0 GiB", "1.0 GiB", "--max-memory"))
    print(f"bomb npz, run: peak {peak} KiB")


def test_bomb_npz_to_compare_data(bomb: Path, tmp_path: Path) -> None:
    peak = assert_refused(["compare", str(INT8), "--data", str(bomb), "--json", "r.json"], tmp_path,
                          ("bomb.npz:input would need 4.0 GiB",), env={memory.BUDGET_ENV: "1G"})
    print(f"bomb npz, compare --data: peak {peak} KiB")


def test_bomb_npz_as_calibration(bomb: Path, tmp_path: Path) -> None:
    peak = assert_refused([str(FLOAT), "--calibration", str(bomb), "-o", "g.json"], tmp_path,
                          ("bomb.npz:input would need 4.0 GiB",), env={memory.BUDGET_ENV: "1G"})
    print(f"bomb npz, --calibration: peak {peak} KiB")


def test_bomb_npz_of_the_wrong_shape_without_a_budget_flag(bomb: Path, tmp_path: Path) -> None:
    model = relu_tflite(tmp_path / "seven.tflite", [1, 7])
    peak = assert_refused(["run", str(model), "--input", str(bomb), "-o", "out.npz"], tmp_path,
                          ("has shape [2485514, 24, 24, 3]", "takes [1, 7]"))
    print(f"bomb npz, wrong shape: peak {peak} KiB")


def test_228_byte_npy_claiming_112_gib(tmp_path: Path) -> None:
    claim_npy(tmp_path / "x.npy", (1, 100000, 100000, 3))
    peak = assert_refused(["run", str(FLOAT), "--input", "x.npy", "-o", "out.npz", "--max-memory", "8G"], tmp_path,
                          ("x.npy would need 111.8 GiB", "8.0 GiB"))
    # with the default budget (whatever this machine has) it is refused too: by the budget or by its size
    assert_refused(["run", str(FLOAT), "--input", "x.npy", "-o", "out.npz"], tmp_path, ("x.npy",))
    print(f"228-byte npy: peak {peak} KiB")


def test_tflite_with_a_2_31_element_tensor(tmp_path: Path) -> None:
    model = relu_tflite(tmp_path / "huge.tflite", [1, 32768, 32768, 2])
    assert model.stat().st_size < 1000 and math.prod([32768, 32768, 2]) == 2 ** 31
    words = ("tensor x of shape [1, 32768, 32768, 2]", "2147483648 bytes", "2147483647")
    peak = assert_refused([str(model), "-o", "g.json"], tmp_path, words)
    assert_refused(["compare", str(model), "--random", "1"], tmp_path, words)
    assert_refused(["xs3-export", str(model), "-o", "exp"], tmp_path, words)
    print(f"2^31-element TFLite: peak {peak} KiB")


def test_tflite_tensor_above_the_budget(tmp_path: Path) -> None:
    model = relu_tflite(tmp_path / "half.tflite", [1, 16384, 16384, 2])  # 512 MiB: fits hexagon_nn
    assert_refused([str(model), "-o", "g.json", "--max-memory", "100M"], tmp_path,
                   ("tensor x of shape [1, 16384, 16384, 2] would need 512.0 MiB", "100.0 MiB"))
    with pytest.raises(ResourceError):
        memory.set_budget(100 << 20)
        import_model(model)


def test_onnx_declared_input_above_the_budget(tmp_path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1 << 28])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1 << 28])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "m.onnx")
    assert_refused(["m.onnx", "-o", "g.json"], tmp_path,
                   ("input x of shape [1, 268435456] would need 1.0 GiB", "100.0 MiB"), env={memory.BUDGET_ENV: "100M"})


def test_onnx_initializer_dims_above_the_budget(tmp_path: Path) -> None:
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20], raw_data=b"")  # 4 TiB declared
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x], [y], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "w.onnx")
    peak = assert_refused(["w.onnx", "-o", "g.json"], tmp_path, ("initializer w of shape [1048576, 1048576]",
                                                                  "4.0 TiB"))
    print(f"ONNX initializer dims: peak {peak} KiB")


def test_graph_file_with_a_huge_output(tmp_path: Path) -> None:
    model = relu_tflite(tmp_path / "r.tflite", [1, 2, 2, 4])
    code, err, _ = run_cli([str(model), "-o", "g.hexnn.json"], tmp_path)
    assert code == 0, err
    doc = json.loads((tmp_path / "g.hexnn.json").read_text())
    for node in doc["nodes"]:
        if node["op"] == "QuantizedRelu_8":
            node["outputs"][0]["shape"] = [1, 40000, 40000, 2]  # 3.0 GiB of quint8, under hexagon_nn's 4 GiB
    (tmp_path / "huge.hexnn.json").write_text(json.dumps(doc))
    np.save(tmp_path / "x.npy", np.zeros((1, 2, 2, 4), np.int8))
    peak = assert_refused(["run", "huge.hexnn.json", "--input", "x.npy", "-o", "out.npz", "--max-memory", "1G"],
                          tmp_path, ("the run's activations", "[1, 40000, 40000, 2]", "would need 3.0 GiB", "1.0 GiB"))
    print(f"graph file with a huge output: peak {peak} KiB")


def test_model_file_above_the_budget(tmp_path: Path) -> None:
    memory.set_budget(100)
    with pytest.raises(ResourceError, match=r"model .*small_int8\.tflite would need"):
        import_model(INT8)


def test_within_the_budget_nothing_changes(tmp_path: Path) -> None:
    """The same commands on ordinary files still work (the checks refuse only what is too large)."""
    np.save(tmp_path / "x.npy", np.zeros((1, 24, 24, 3), np.int8))
    code, err, _ = run_cli(["run", str(INT8), "--input", "x.npy", "-o", "out.npz", "--max-memory", "1G"], tmp_path)
    assert code == 0, err
    with np.load(tmp_path / "out.npz") as z:
        assert len(z.files) == 1
    with pytest.raises(ModelFormatError):  # and the hexagon_nn limit is not the budget: it holds with any budget
        memory.set_budget(1 << 40)
        import_model(relu_tflite(tmp_path / "h.tflite", [1, 32768, 32768, 2]))


def test_calibration_npy_is_one_unnamed_array(tmp_path: Path) -> None:
    """``--calibration x.npy`` (finding 7: was an internal error) reads as the .npz with one unnamed array."""
    data = np.random.default_rng(3).uniform(-1, 1, (4, 24, 24, 3)).astype(np.float32)
    np.save(tmp_path / "cal.npy", data)
    np.savez(tmp_path / "cal.npz", data)
    from_npy = import_model(FLOAT, calibration=tmp_path / "cal.npy").meta["calibration"]
    assert from_npy == import_model(FLOAT, calibration=tmp_path / "cal.npz").meta["calibration"]
    np.save(tmp_path / "bad.npy", np.zeros((4, 5), np.float32))
    with pytest.raises(InputDataError, match=r"bad\.npy has shape \[4, 5\]"):
        import_model(FLOAT, calibration=tmp_path / "bad.npy")
