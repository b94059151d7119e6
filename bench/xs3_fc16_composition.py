"""Is there an exact lib_nn composition of a fully-connected layer? fully_connected_8 against fully_connected_16
followed by a rounding shift by 8 (lib_nn's 16-to-8 reduction), both against LiteRT (issue 39).

Every layer lowered to ``fully_connected_8`` is lowered a second time as ``fully_connected_16`` (output scale /
256, zero point x 256) and reduced as ``(y + 128) >> 8`` (then its fused clamp); both run on LiteRT's own input
for the layer (builtin kernels, seeded random inputs) and are compared with LiteRT's output codes. Both go
through lib_nn's int16 stage (the accumulator rounded to 16 bits by shift1, a 16-bit scale), so neither is one
rounding of the exact product as LiteRT's 31-bit multiplier gives: measured here, neither is exact.

    python bench/xs3_fc16_composition.py [MODEL.tflite] [N_INPUTS]
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np

from hexnn_import.api import import_model
from hexnn_import.xs3.layer_agreement import litert_codes, random_inputs
from hexnn_import.xs3.legalize import legalize
from hexnn_import.xs3.lower import lower_model

DEFAULT = Path(__file__).resolve().parents[1] / "models/real/keras_mobilenet_v3_small_int8.tflite"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    n = int(argv[1]) if len(argv) > 1 else 8
    plan = lower_model(import_model(path))
    fcs = [r for r in plan.lowered if r.lowered is not None and r.lowered.kernel == "fully_connected_8"]
    alts = {}
    for r in fcs:
        op = copy.copy(r.lowered.op)
        op.kernel, op.out_bits, op.clamp = "fully_connected_16", 16, None
        alts[r.name] = legalize(op)
    same8 = same16 = total = worst16 = 0
    for codes in litert_codes(plan, path.read_bytes(), random_inputs(plan, n), "builtin"):
        for r in fcs:
            x = codes(r.layer.x, r.name, "")
            want = codes(r.layer.y, r.name, "").astype(np.int64).reshape(-1)
            got8 = r.lowered.run([x]).astype(np.int64).reshape(-1)
            got16 = np.clip((alts[r.name].run16(x).astype(np.int64).reshape(-1) + 128) >> 8, -128, 127)
            if r.lowered.op.clamp is not None:
                got16 = np.clip(got16, *r.lowered.op.clamp)
            same8 += int(np.sum(got8 == want))
            same16 += int(np.sum(got16 == want))
            worst16 = max(worst16, int(np.abs(got16 - want).max()))
            total += want.size
    print(f"{path.name}: {len(fcs)} fully-connected layers, {n} inputs, {total} outputs")
    print(f"  fully_connected_8:                  {same8 / total:.4%} exact")
    print(f"  fully_connected_16 + (y + 128) >> 8: {same16 / total:.4%} exact, at most {worst16} off")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
