"""PPrint_8_d32, PPrintWithPadding_8_d32 and Close_d32 (op texts)."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.d32 import to_d32
from hexnn_import.testing.opcheck import assert_op_error, f4, i32, u8

# [1,1,2,2] = [[1, 2], [3, 4]] with top 1, bottom 0, left 1, right 1 (w_total 4), before 1; padding bytes 9
T = to_d32(u8([1, 2, 3, 4], (1, 1, 2, 2)), top=1, bottom=0, left=1, right=1, before=1).fill_padding(9)
HEADER = ("d32 tensor [1, 1, 2, 2] uint8; padding top/bottom 1/0, left/right 1/1, depth before/after 1/29; "
          "columns d = ")


def pprint(op: str, *limits: int) -> str:
    state: dict = {}
    assert run_op(op, [T, *[i32([v]) for v in limits]], state=state) == ()
    return state["text"]


def test_pprint_by_hand():
    assert pprint("PPrint_8_d32") == "\n".join([HEADER + "0..1", "[b=0, h=0]", "  w=  0:   1   2", "  w=  1:   3   4"])
    # dim 3 (D), start 1, stop defaults to 2: only channel 1
    assert pprint("PPrint_8_d32", 3, 1) == "\n".join([HEADER + "1..1", "[b=0, h=0]", "  w=  0:   2", "  w=  1:   4"])


def test_pprint_with_padding_by_hand():
    # channels -1..0 (before padding at index -1) of every stored row and column:
    # h=-1 is top padding and w=-1, w=2 are left/right padding (all 9); at h=0, w=0 / w=1 the
    # before byte is 9 and channel 0 holds 1 / 3.
    nines = "   9   9"
    assert pprint("PPrintWithPadding_8_d32", 3, -1, 1) == "\n".join([
        HEADER + "-1..0",
        "[b=0, h=-1]", "  w= -1:" + nines, "  w=  0:" + nines, "  w=  1:" + nines, "  w=  2:" + nines,
        "[b=0, h=0]", "  w= -1:" + nines, "  w=  0:   9   1", "  w=  1:   9   3", "  w=  2:" + nines])
    # the text's example {2, -100, 0}: only the width-left padding (-100..-1 truncated to -1), all 32 lanes
    text = pprint("PPrintWithPadding_8_d32", 2, -100, 0)
    lane_row = "  w= -1:" + "   9" * 32
    assert text == "\n".join([HEADER + "-1..30", "[b=0, h=-1]", lane_row, "[b=0, h=0]", lane_row])


def test_pprint_errors():
    assert_op_error("PPrint_8_d32", [T, i32([4])], "dimension (input 1) is 4")
    assert_op_error("PPrint_8_d32", [T.logical()], "must be a d32 tensor")


# Close_d32 worked example. Range [-128, 127]: 255 / (max - min) = 1, so ref_q = ref + 128.
# ref_q = [13.375, 13.375, 7.5, 100, 50.25], DUT codes [13, 14, 8, 101, 50]:
# excess = |q - ref_q| - |round(ref_q) - ref_q|:
#   13 vs 13.375: 0.375 - 0.375 = 0;   14 vs 13.375: 0.625 - 0.375 = 0.25;
#   8 vs 7.5 (round half away -> 8): 0.5 - 0.5 = 0;   101 vs 100: 1 - 0 = 1;   50 vs 50.25: 0.25 - 0.25 = 0
# -> largest excess 1.0 at index 3, 2 points non-zero (fraction 0.4).
# errors q - ref_q = [-0.375, 0.625, 0.5, 1, -0.25]: mean 1.5 / 5 = 0.3;
# squares 0.140625 + 0.390625 + 0.25 + 1 + 0.0625 = 1.84375 -> rms sqrt(1.84375 / 5) = sqrt(0.36875)
REF_Q = [13.375, 13.375, 7.5, 100.0, 50.25]
DUT = [13, 14, 8, 101, 50]
DATA = to_d32(u8(DUT, (1, 1, 5, 1)), left=3, before=7).fill_padding(0)
REF = f4([r - 128 for r in REF_Q], (1, 1, 5, 1))


def close(*extra, node: str = "c1", state: dict | None = None):
    return run_op("Close_d32", [DATA, -128.0, 127.0, REF, *extra], node=node, state=state)


def test_close_d32_worked_example_statistics():
    state: dict = {}
    assert close(f4([1.0]), f4([0.4]), state=state) == ()  # 1.0 <= 1.0 and 2 <= 0.4 * 5
    s = state["stats"]
    assert (s.count, s.n_excess, s.worst_index) == (5, 2, 3)
    assert s.max_excess == 1.0 and s.mean_error == pytest.approx(0.3, abs=1e-12)
    assert s.rms_error == pytest.approx(math.sqrt(0.36875), abs=1e-12)
    # Pearson correlation, from its formula
    d, r = np.array(DUT, float), np.array(REF_Q)
    corr = ((d - d.mean()) * (r - r.mean())).sum() / math.sqrt(((d - d.mean()) ** 2).sum() * ((r - r.mean()) ** 2).sum())
    assert s.correlation == pytest.approx(corr, abs=1e-12)


def test_close_d32_limits():
    # defaults 0.2 / 0.05: excess 1.0 > 0.2 -> error with the statistics and the worst point
    msg = assert_op_error("Close_d32", [DATA, -128.0, 127.0, REF], "not close", "largest excess err 1.0000",
                          "(2 non-zero)", "[0, 0, 3, 0]", "dut 101", "reference -28")
    assert "mean err 0.3000" in msg
    assert_op_error("Close_d32", [DATA, -128.0, 127.0, REF, f4([1.0]), f4([0.39])], "not close")  # 2 > 1.95
    assert_op_error("Close_d32", [DATA, -128.0, 127.0, REF, f4([0.9]), f4([1.0])], "not close")  # 1.0 > 0.9
    assert_op_error("Close_d32", [DATA, -128.0, 127.0, REF[..., :4, :]], "reference has shape")
    assert_op_error("Close_d32", [DATA, 1.0, 127.0, REF], "does not contain 0")


def test_close_d32_negative_limit_forces_the_report(caplog):
    with caplog.at_level(logging.INFO, logger="hexnn_import.ops.kernels.d32_debug"):
        close(f4([1.0]), f4([0.4]), node="quiet")
        close(f4([-1.0]), f4([0.4]), node="loud")
    levels = {r.getMessage().split(" ")[0]: r.levelno for r in caplog.records}
    assert levels == {"quiet": logging.INFO, "loud": logging.WARNING}


def test_close_d32_exact_codes_pass():
    # DUT = the nearest code of every reference value -> no excess error anywhere, correlation 1
    # values on the codes of [-1, 127/128] (step 2**-7, zero 128), so no rounding is involved
    rng = np.random.default_rng(5)
    ref = (rng.integers(-128, 128, (2, 3, 5, 40)) / 128).astype(np.float32)
    ref.flat[0], ref.flat[-1] = -1.0, 127 / 128
    q, mn, mx = run_op("AutoQuantize_d32", [ref])
    state: dict = {}
    run_op("Close_d32", [q, mn, mx, ref], state=state)
    assert state["stats"].n_excess == 0 and state["stats"].correlation == pytest.approx(1.0, abs=1e-4)
