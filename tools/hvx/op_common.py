"""What the golden op modules here share: the harnesses' per-case result record (``runtime/harness_io.h``
hx_write_result: int32 status, float out_min, out_max, the outputs), the offsets that concatenate cases, and
the comparison of one case with the engine's kernel (``hexnn_import.ops.registry.run_op``) for
``golden_hvx.py``'s report."""
from __future__ import annotations

import pathlib
import struct
from collections.abc import Callable, Sequence

import hvx_build
import numpy as np

F = np.float32
GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "golden" / "hvx"


def load_golden(name: str) -> tuple[dict, dict[str, np.ndarray]]:
    """The files ``golden_hvx.py --write`` keeps for op module ``op_<name>``: (its provenance ``<name>.json``, the
    arrays of ``<name>.npz``)."""
    import json

    with np.load(GOLDEN / f"{name}.npz") as f:
        return json.loads((GOLDEN / f"{name}.json").read_text()), {k: f[k] for k in f.files}


def offsets(xs: Sequence[np.ndarray]) -> np.ndarray:
    """int64 start offsets of ``xs`` concatenated, with the total last (``len(xs) + 1`` entries)."""
    return np.concatenate([[0], np.cumsum([x.size for x in xs])]).astype(np.int64)


def column(cases: Sequence[tuple], k: int, dtype: type) -> np.ndarray:
    """Field ``k`` of every case, as one array of ``dtype``."""
    return np.array([c[k] for c in cases], dtype)


def check_end(out: bytes, pos: int) -> None:
    """Raises ValueError unless the harness's output ends at ``pos``."""
    if pos != len(out):
        raise ValueError(f"harness wrote {len(out)} bytes, expected {pos}")


def read_d32_run(out: bytes, pos: int, dtype: type = np.uint8) -> tuple[int, tuple, np.ndarray]:
    """The _d32 harnesses' run record at ``pos`` (``harness_d32.h`` hx_write_d32_result, or with ``dtype`` uint16
    ``harness_u16_d32.h`` hx_write_d32_result_u16: int32 status, float out_min, out_max, int32 shape[4], the codes):
    (the position after it, (status, out_min, out_max, shape), codes)."""
    st, lo, hi, *shp = struct.unpack_from("<iff4i", out, pos); pos += 28
    n = int(np.prod(shp))
    return pos + np.dtype(dtype).itemsize * n, (st, lo, hi, shp), np.frombuffer(out, dtype, n, pos).copy()


def read_d32_runs(out: bytes, ncases: int) -> dict[str, np.ndarray]:
    """``ncases`` run records (``read_d32_run``) filling all of ``out``: ``status``, ``out_min``, ``out_max``,
    ``out_shape``, the codes concatenated (``codes``) and their ``offsets``. Raises ValueError on bytes left over."""
    pos, status, rmin, rmax, shapes, codes = 0, [], [], [], [], []
    for _ in range(ncases):
        pos, (st, lo, hi, shp), run_codes = read_d32_run(out, pos)
        codes.append(run_codes); status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    check_end(out, pos)
    return {"status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": offsets(codes)}


def read_byte_runs(out: bytes, itemsizes: Sequence[int],
                   runs: int = 1) -> tuple[dict[str, np.ndarray], list[list[tuple[tuple, bytes]]]]:
    """The flat harnesses' records, ``runs`` per case (int32 status, float out_min, out_max, int32 shape[4], then
    the outputs, ``itemsizes[i]`` bytes each), filling all of ``out``: the golden arrays of each case's first run
    (``status``, ``out_min``, ``out_max``, ``out_shape``, the output bytes concatenated ``out`` and their
    ``offsets``) and every case's records as ((status, out_min, out_max, shape), the record's bytes)."""
    pos, cases = 0, []
    for k in itemsizes:
        recs = []
        for _ in range(runs):
            st, lo, hi, *shp = struct.unpack_from("<iff4i", out, pos)
            end = pos + 28 + int(np.prod(shp)) * k
            recs.append(((st, lo, hi, shp), out[pos:end])); pos = end
        cases.append(recs)
    check_end(out, pos)
    heads = [recs[0][0] for recs in cases]
    res = [np.frombuffer(recs[0][1], np.uint8, len(recs[0][1]) - 28, 28).copy() for recs in cases]
    return {"status": np.array([h[0] for h in heads], np.int32), "out_min": np.array([h[1] for h in heads], F),
            "out_max": np.array([h[2] for h in heads], F), "out_shape": np.array([h[3] for h in heads], np.int32),
            "out": np.concatenate(res), "offsets": offsets(res)}, cases


def byte_case_arrays(cases: Sequence[dict]) -> dict[str, np.ndarray]:
    """The golden arrays of flat cases (dicts with ``hdr``, the float32 ``range`` and the input ``x`` of any type):
    ``hdr`` as int32, the ranges stacked, the inputs as bytes concatenated (``x``) and their ``x_off``."""
    xs = [c["x"].view(np.uint8).ravel() for c in cases]
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "range": np.stack([c["range"] for c in cases]),
            "x": np.concatenate(xs), "x_off": offsets(xs)}


def read_results(out: bytes, sizes: Sequence[int], dtype: type = np.uint8, key: str = "codes") -> dict[str, np.ndarray]:
    """The harness's records, one per case of ``sizes[i]`` outputs of ``dtype`` (zeros where status is not 0):
    ``status``, ``out_min``, ``out_max``, the outputs concatenated (``key``) and their ``offsets``.
    Raises ValueError if ``out`` is not exactly those records."""
    pos, status, rmin, rmax, res = 0, [], [], [], []
    width = np.dtype(dtype).itemsize
    for n in sizes:
        st, lo, hi = struct.unpack_from("<iff", out, pos); pos += 12
        res.append(np.frombuffer(out, dtype, n, pos).copy() if st == 0 else np.zeros(n, dtype)); pos += width * n
        status.append(st); rmin.append(lo); rmax.append(hi)
    check_end(out, pos)
    return {"status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            key: np.concatenate(res), "offsets": offsets(res)}


def engine_case(op: str, inputs: list[np.ndarray], gold: dict[str, np.ndarray], i: int, dev: np.ndarray,
                unit: str = "codes", show_range: bool = False) -> tuple[bool, str]:
    """Runs ``op`` on ``inputs`` in the engine: (whether it reproduces golden case ``i`` - outputs ``dev`` and the
    range bit for bit, or both refuse -, a message on the difference: with ``show_range`` both ranges, else the
    largest difference)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    try:
        q, mn, mx = run_op(op, inputs)
    except HexnnError as e:
        return bool(gold["status"][i]), f"engine error {e}"
    same = (mn.reshape(-1)[:1].tobytes() == gold["out_min"][i:i + 1].tobytes()
            and mx.reshape(-1)[:1].tobytes() == gold["out_max"][i:i + 1].tobytes())
    d = q.reshape(-1).astype(np.int64) - dev
    nd = int((d != 0).sum())
    ok = bool(gold["status"][i] == 0 and same and nd == 0)
    if show_range:
        return ok, (f"{nd} {unit} differ; range dev=[{gold['out_min'][i]!r}, {gold['out_max'][i]!r}] "
                    f"engine=[{mn.reshape(-1)[0]!r}, {mx.reshape(-1)[0]!r}]")
    return ok, f"{nd} {unit} differ (max {int(np.abs(d).max()) if d.size else 0}); range same {same}"


def run_case(g: dict[str, np.ndarray], i: int,
             case_inputs: Callable[[dict[str, np.ndarray], int], tuple[str, list]]) -> tuple[str, tuple | None, str]:
    """Runs golden case ``i``'s op on its inputs in the engine (``case_inputs(g, i)``: the op's name, the inputs):
    (the name, the outputs or None when the engine refuses, then the message ``<name>: engine error <error>``)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    name, ins = case_inputs(g, i)
    try:
        return name, run_op(name, ins), ""
    except HexnnError as e:
        return name, None, f"{name}: engine error {e}"


def count_exact(ncases: int, case: Callable[[int], tuple[bool, str]],
                label: Callable[[int], str]) -> tuple[int, int, str]:
    """(cases, cases ``case`` finds reproduced, the first that is not: ``case <i><label(i)>: <message>``)."""
    exact, first = 0, ""
    for i in range(ncases):
        ok, msg = case(i)
        exact += ok
        if not ok and not first:
            first = f"case {i}{label(i)}: {msg}"
    return ncases, exact, first


def case_arrays(cases: Sequence[dict], ranges: str) -> dict[str, np.ndarray]:
    """The golden arrays of one-input cases (each a dict with ``hdr``, the float32 range(s) under ``ranges`` and the
    input ``x``): ``hdr`` as int32, the ranges stacked, the inputs concatenated (``x``) and their ``x_off``."""
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), ranges: np.stack([c[ranges] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": offsets([c["x"] for c in cases])}


def flat_run(q: np.ndarray, mn: np.ndarray, mx: np.ndarray, gold: dict[str, np.ndarray],
             r: int, key: str = "codes") -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """The engine's plain result ``q`` and range against golden run ``r`` (outputs under ``key``, shapes under
    ``out_shape``): (``q``, the device's outputs shaped as its output, whether the float32 ranges are equal,
    whether the run is reproduced: device status 0, same range, same shape and values)."""
    dev = gold[key][gold["offsets"][r]:gold["offsets"][r + 1]].reshape(gold["out_shape"][r])
    same = (F(mn.reshape(-1)[0]).tobytes() == gold["out_min"][r].tobytes()
            and F(mx.reshape(-1)[0]).tobytes() == gold["out_max"][r].tobytes())
    return q, dev, same, bool(gold["status"][r] == 0 and same and q.shape == dev.shape and np.array_equal(q, dev))


def byte_run(outs: Sequence[np.ndarray], gold: dict[str, np.ndarray], r: int, ranged: bool) -> tuple[np.ndarray, bool]:
    """The engine's outputs against golden run ``r`` of a byte-record recorder (``read_byte_runs``): (the first
    output as a contiguous array, whether its shape and bytes - with ``ranged`` the float32 range the next two
    outputs hold too - equal the device's)."""
    q = np.ascontiguousarray(outs[0])
    dev = gold["out"][gold["offsets"][r]:gold["offsets"][r + 1]]
    ok = list(q.shape) == gold["out_shape"][r].tolist() and q.view(np.uint8).tobytes() == dev.tobytes()
    if ranged:
        ok = ok and (F(outs[1].reshape(-1)[0]).tobytes() == gold["out_min"][r].tobytes()
                     and F(outs[2].reshape(-1)[0]).tobytes() == gold["out_max"][r].tobytes())
    return q, ok


def d32_run(q, mn: np.ndarray, mx: np.ndarray, gold: dict[str, np.ndarray],
            r: int) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """The engine's d32 result ``q`` (its ``logical()`` view) and range against golden run ``r`` (``read_d32_run``'s
    records): (the engine's codes, the device's shaped as its output, whether the float32 ranges are equal, whether
    the run is reproduced: device status 0, same range, same shape and codes)."""
    return flat_run(q.logical(), mn, mx, gold, r)


def os_body(nnlib: pathlib.Path, functions: Sequence[str], sources: Sequence[str], mcmanager: bool = True,
            quantize: Sequence[str] = ()) -> str:
    """The C text most op modules compile: the OS stand-ins (``graph_os_standin.c``), ``functions`` of nnlib's
    src/shape_util.c verbatim, with ``mcmanager`` its run from ``nn_mcmanager_init`` to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, the ``quantize`` functions of src/quantize.c verbatim, then
    an include of each nnlib file in ``sources``."""
    shape_util = nnlib / "hexagon/src/shape_util.c"
    text = f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n' + hvx_build.extract_functions(shape_util, functions)
    if mcmanager:
        text += hvx_build.extract_span(shape_util, r"^void nn_mcmanager_init",
                                       r"^// 'actual function' version of this inline", inclusive=False)
    if quantize:
        text += hvx_build.extract_functions(nnlib / "hexagon/src/quantize.c", quantize)
    return text + "".join(f'#include "{nnlib / s}"\n' for s in sources)


def pack_cases(cases: Sequence[dict], *keys: str) -> bytes:
    """A harness's stdin: int32 the case count, then per case its int32 ``hdr`` and the bytes of its arrays
    ``keys`` in that order."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts += [struct.pack(f"<{len(c['hdr'])}i", *c["hdr"]), *(c[k].tobytes() for k in keys)]
    return b"".join(parts)


def unary_d32_pack(cases: list[dict]) -> bytes:
    """The stdin of a one-input d32 op's harness: the case count, then per case ``hdr`` (b, h, w, d), the input
    range and the input codes."""
    return pack_cases(cases, "range", "x")


def unary_d32_unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays of a one-input d32 op: per case ``hdr``, the input range, the input codes (``x`` /
    ``x_off``), the status, the output range and shape, the codes (``codes`` / ``offsets``)."""
    return {**case_arrays(cases, "range"), **read_d32_runs(out, len(cases))}


def unary_d32_case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i`` of a one-input d32 op: the input laid out as d32 with the defaults,
    its range."""
    from hexnn_import.ops.d32 import to_d32

    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(g["hdr"][i])
    return [to_d32(x), *(np.array(v, np.float32).reshape(1, 1, 1, 1) for v in g["range"][i])]
