"""The float64 shortcut of the exact quint8 tables (``exact_q8.quantize_approx``) against the exact rationals.

:func:`hexnn_import.ops.kernels.activation.prelu_table` computes PReLU's
256x256 (x code, alpha code) table in float64 and recomputes with exact
rationals only the entries float64 cannot round. The reference here is the
table computed entirely with exact rationals (``code_values`` / ``combine``
/ ``quantize_values``, Python integers): every entry must be equal, over
ranges that include 0, exclude it, have zero width, are tiny, and output
ranges on which many products fall exactly on a half (ties).
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops.exact_q8 import code_values, combine, quantize_values
from hexnn_import.ops.kernels.activation import prelu_table


def exact_prelu_table(in_min: float, in_max: float, al: tuple[float, float], out: tuple[float, float]) -> np.ndarray:
    xv, av = code_values(in_min, in_max), code_values(*al)
    prod, den = combine(xv, av, "mul")
    ident = np.multiply.outer(xv[0] * av[1], np.ones(256, dtype=object))
    return quantize_values((np.where((xv[0] >= 0)[:, None], ident, prod), den), *out)


def _cases() -> list[tuple[float, float, tuple[float, float], tuple[float, float]]]:
    rng = np.random.default_rng(7)
    f = lambda v: float(np.float32(v))  # noqa: E731 - ranges are float32 in the graph
    cases = [(-1.0, 1.0, (0.0, 1.0), (-0.5, 0.5)),            # ties: products of halves on a 1/255 grid
             (-16.0, 15.875, (-1.0, 1.0), (-16.0, 15.875)),
             (-0.25, -0.25, (0.0, 1.0), (-1.0, 1.0)),          # zero-width input range
             (0.5, 2.0, (0.0, 1.0), (0.0, 2.0)),               # input range excluding 0
             (-1e-7, 1e-7, (-0.5, 0.5), (-1e-7, 1e-7))]        # tiny ranges
    for k in range(60):
        a, b = f(-rng.uniform(0, 10)), f(rng.uniform(0, 10))
        al = (f(-rng.uniform(0, 1)), f(rng.uniform(0, 1)))
        out = (f(rng.uniform(-20, 0)), f(rng.uniform(0, 20))) if k % 2 else (a, b)
        cases.append((a, b, al, out))
    return cases


@pytest.mark.parametrize("case", _cases())
def test_prelu_table_equals_the_exact_rational_table(case: tuple) -> None:
    np.testing.assert_array_equal(prelu_table(*case), exact_prelu_table(*case))
