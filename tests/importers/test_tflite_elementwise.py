"""TFLite elementwise builtins against LiteRT: ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, comparisons, SELECT.

Quantized models must meet the issue's bar (>= 99% within 1 LSB, none off
by more than 2); float models imported without calibration must reach
30 dB SQNR (they measure 40-48 dB), calibrated ones too.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.testing import TFLiteBuilder, run_litert
from hexnn_import.testing.tflite_checks import unsupported_listing
from hexnn_import.testing.tflite_compare import assert_agrees, compare_tflite

DTYPES = [np.int8, np.uint8, np.float32]


def q(dt: type, scale: float, zp: int) -> dict:
    """Quantization kwargs for add_tensor (zero point given as int8; +128 for uint8), none for float."""
    if dt is np.float32:
        return {}
    return {"scale": scale, "zero_point": zp if dt is np.int8 else zp + 128}


def version(dt: type) -> int:
    return 2 if dt is np.int8 else 1


def check(model: bytes, float_model: bool, **kw) -> None:  # type: ignore[no-untyped-def]
    res = assert_agrees(model, n=3, **kw)
    if float_model:
        for a in res.values():
            assert a.sqnr >= 30.0, a


def binary_model(op: str, dt: type, b_shape: tuple[int, ...], act: str = "NONE", same_params: bool = False,
                 b_const: bool = False, out_q: tuple[float, int] = (0.06, 1)) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 3), dt, **q(dt, 0.05, 3))
    zq = q(dt, 0.05, 3) if same_params else q(dt, 0.04, -2)
    if b_const:
        vals = np.random.default_rng(5).uniform(0.5, 2.0, size=b_shape)
        z = b.add_const("z", vals.astype(np.float32)) if dt is np.float32 else b.add_const(
            "z", (np.round(vals / 0.04) + zq["zero_point"]).astype(dt), **zq)
    else:
        z = b.add_tensor("z", b_shape, dt, **zq)
    y = b.add_tensor("y", (1, 4, 4, 3), dt, **(q(dt, 0.05, 3) if same_params else q(dt, *out_q)))
    b.add_operator(op, [x, z], [y], {}, fused_activation=act if op in ("ADD", "SUB", "MUL", "DIV") else None,
                   version=version(dt))
    b.set_io([x] if b_const else [x, z], [y])
    return b.build()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("b_shape,act", [((1, 4, 4, 3), "NONE"), ((3,), "RELU"), ((4, 1, 3), "RELU6"),
                                         ((1, 1, 1, 1), "RELU_N1_TO_1")])
def test_add_sub_mul(op, dt, b_shape, act) -> None:
    check(binary_model(op, dt, b_shape, act), dt is np.float32)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act,out_q", [("RELU", (0.03, -128)), ("RELU6", (6 / 255, -128))])
def test_fused_activation_folded_into_range(op, act, out_q) -> None:
    """The output range starts at 0 (as the converter writes it after RELU/RELU6): saturation clips."""
    for dt in (np.int8, np.uint8):
        check(binary_model(op, dt, (3,), act, out_q=out_q), False)


@pytest.mark.parametrize("op", ["ADD", "MUL"])
def test_constant_operand(op) -> None:
    for dt in DTYPES:
        check(binary_model(op, dt, (3,), b_const=True), dt is np.float32)


def _div_feed(dt: type, b_shape: tuple[int, ...]):  # type: ignore[no-untyped-def]
    """Divisors away from 0; quantized divisor codes within 60 of the zero point.

    LiteRT's quantized DIV returns the type's minimum where ``|a - a_zp| <= 2``
    and ``|b - b_zp| >= 64`` (an overflow in its fixed-point reciprocal;
    found by an exhaustive 256x256 sweep), so those divisors are left out.
    """
    def feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
        if dt is np.float32:
            return {"x": rng.uniform(-1, 1, (1, 4, 4, 3)).astype(dt),
                    "z": (rng.uniform(0.3, 2, b_shape) * rng.choice([-1, 1], b_shape)).astype(dt)}
        zp = q(dt, 0.04, -2)["zero_point"]
        mag = rng.integers(3, 60, b_shape) * rng.choice([-1, 1], b_shape)
        info = np.iinfo(dt)
        return {"x": rng.integers(info.min, info.max + 1, (1, 4, 4, 3)).astype(dt), "z": (zp + mag).astype(dt)}
    return feed


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("b_shape,act", [((3,), "NONE"), ((1,), "RELU"), ((), "NONE")])
def test_div(dt, b_shape, act) -> None:
    check(binary_model("DIV", dt, b_shape, act), dt is np.float32, feed_fn=_div_feed(dt, b_shape))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("b_shape", [(1, 4, 4, 3), (4, 1, 3)])
def test_maximum_minimum(op, dt, b_shape) -> None:
    # the converter gives MAXIMUM/MINIMUM inputs the output's parameters (LiteRT compares raw codes)
    check(binary_model(op, dt, b_shape, same_params=True), dt is np.float32)


def test_add_calibrated_float() -> None:
    rng = np.random.default_rng(3)
    calib = {k: rng.uniform(-1, 1, (8, 1, 4, 4, 3)).astype(np.float32) for k in ("x", "z")}  # [N, *input shape]
    res = compare_tflite(binary_model("ADD", np.float32, (1, 4, 4, 3), "RELU"), n=3, calibration=calib)
    assert res["y"].sqnr >= 30.0, res


# ---- comparisons and select ----------------------------------------------------------------------
def _few_codes_feed(dt: type, shapes: dict[str, tuple[int, ...]]):  # type: ignore[no-untyped-def]
    """Inputs drawn from a few values so that equal operands occur often."""
    def feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
        if dt is np.float32:
            return {k: rng.choice([-0.5, 0.0, 0.25, 0.5], s).astype(dt) for k, s in shapes.items()}
        base = q(dt, 0.05, 3)["zero_point"]
        return {k: (base + rng.choice([-10, 0, 5, 10], s)).astype(dt) for k, s in shapes.items()}
    return feed


def compare_model(rel: str, dt: type, z_shape: tuple[int, ...], select: str | None) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 3), dt, **q(dt, 0.05, 3))
    z = b.add_tensor("z", z_shape, dt, **q(dt, 0.05, 3))
    c = b.add_tensor("c", (1, 4, 4, 3), np.bool_)
    b.add_operator(rel, [x, z], [c], {}, version=version(dt))
    outs = [c]
    if select:
        y = b.add_tensor("y", (1, 4, 4, 3), dt, **q(dt, 0.05, 3))
        b.add_operator(select, [c, x, z], [y], {}, version=1)
        outs.append(y)
    b.set_io([x, z], outs)
    return b.build()


def run_both(model: bytes, feed_fn, n: int = 3, calibration=None) -> list[tuple[dict, dict]]:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.tflite"
        path.write_bytes(model)
        runner = hx.Runner(hx.prepare(hx.import_model(path, calibration=calibration)))
    rng = np.random.default_rng(0)
    return [(runner.run(f), run_litert(model, f, as_dict=True)) for f in (feed_fn(rng) for _ in range(n))]


def _same_grid(dt: type, shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray] | None:
    """Float models: calibration giving every operand the range [-0.5, 0.5], so equal floats get equal codes.

    Float operands are compared after their quantization; on different run-time
    grids two equal floats can land on different reals (see tflite.handlers.elementwise).
    """
    if dt is not np.float32:
        return None
    return {k: np.stack([np.full(s, -0.5), np.full(s, 0.5)]).astype(np.float32) for k, s in shapes.items()}


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("rel", ["EQUAL", "NOT_EQUAL", "LESS", "GREATER"])
def test_comparison_bool_output(rel, dt) -> None:
    """A bool graph output comes back as uint8 0/1 (the comparison ops' type); values equal LiteRT's."""
    shapes = {"x": (1, 4, 4, 3), "z": (4, 1, 3)}
    feed = _few_codes_feed(dt, shapes)
    for ours, ref in run_both(compare_model(rel, dt, (4, 1, 3), None), feed, calibration=_same_grid(dt, shapes)):
        assert ours["c"].shape == ref["c"].shape
        np.testing.assert_array_equal(ours["c"].astype(bool), ref["c"])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("select,z_shape", [("SELECT", (1, 4, 4, 3)), ("SELECT_V2", (4, 1, 3))])
def test_select(select, z_shape, dt) -> None:
    shapes = {"x": (1, 4, 4, 3), "z": z_shape}
    feed = _few_codes_feed(dt, shapes)
    for ours, ref in run_both(compare_model("GREATER", dt, z_shape, select), feed, calibration=_same_grid(dt, shapes)):
        if dt is np.float32:
            np.testing.assert_allclose(ours["y"], ref["y"], atol=0.01)
        else:
            np.testing.assert_array_equal(ours["y"], ref["y"])


def test_select_rank1_condition() -> None:
    """SELECT with a rank-1 condition picks whole rows along the first axis."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", (3, 4), np.int8, scale=0.05, zero_point=3)
    z = b.add_tensor("z", (3, 4), np.int8, scale=0.05, zero_point=3)
    xs = b.add_tensor("xs", (3,), np.int8, scale=0.05, zero_point=3)
    zs = b.add_tensor("zs", (3,), np.int8, scale=0.05, zero_point=3)
    c = b.add_tensor("c", (3,), np.bool_)
    y = b.add_tensor("y", (3, 4), np.int8, scale=0.05, zero_point=3)
    b.add_operator("LESS", [xs, zs], [c], {}, version=2)
    b.add_operator("SELECT", [c, x, z], [y], {}, version=2)
    b.set_io([x, z, xs, zs], [y])
    assert_agrees(b.build(), n=3, min_within1=1.0, max_worst=0)


# ---- unsupported instances -------------------------------------------------------------------------
def test_unsupported_instances_are_listed(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 3), np.int8, scale=0.05, zero_point=0)
    z = b.add_tensor("z", (1, 4, 4, 3), np.int8, scale=0.05, zero_point=0)
    d = b.add_tensor("d", (1, 4, 4, 3), np.int8, scale=0.05, zero_point=0)
    i = b.add_const("i", np.ones((1, 4, 4, 3), np.int32))
    j = b.add_const("j", np.ones((1, 4, 4, 3), np.int32))
    s = b.add_tensor("s", (1, 4, 4, 3), np.int32)
    x5 = b.add_tensor("x5", (1, 1, 4, 4, 3), np.int8, scale=0.05, zero_point=0)
    y5 = b.add_tensor("y5", (1, 1, 4, 4, 3), np.int8, scale=0.05, zero_point=0)
    b.add_operator("DIV", [x, z], [d], {}, version=2)             # full-shape divisor
    b.add_operator("ADD", [i, j], [s], {}, version=1)             # int32 arithmetic on constants: folded
    b.add_operator("ADD", [x5, x5], [y5], {}, version=2)          # rank 5
    b.set_io([x, z, x5], [d, s, y5])
    msg = unsupported_listing(b, tmp_path)
    assert "DIV (divisor of shape [1, 4, 4, 3]" in msg and "(d)" in msg
    assert "(s)" not in msg  # folded before op mapping (tflite.fold)
    assert "rank 5 > 4" in msg and "(y5)" in msg
