"""How each kernel is verified (issue 19): the ``verified`` field of ``hexnn-import ops --json``.

- ``nnlib-exact``: every golden case taken from hexagon_nn's own C code (nnlib 2.14.1, compiled on x86 by the
  oracle harness; ``tools/golden_nnlib.py``) is reproduced bit for bit: codes and output min/max. A ``_d32``
  op does not inherit its flat twin's label (nnlib's d32 code is HVX, a different path): it is ``hand-worked``
  and names its twin's label in ``flat_twin``, since the engine's d32 kernels run the flat arithmetic.
- ``nnlib-partial``: golden C cases exist and some differ; ``nnlib_exact_pct`` says how many agree.
- ``libnn-exact``: an XS3 kernel reproducing XMOS lib_nn's C (``tools/golden_libnn.py``) bit for bit.
- ``hand-worked``: no vendor C path is compiled for it (HVX/asm only, or not yet extracted); its tests check
  values worked by hand from the op text and the nnlib source, and properties.
- ``reference-tolerance``: a float op, checked against a float reference (numpy, onnxruntime, LiteRT) within
  float tolerance.

The figures come from :mod:`hexnn_import.ops.verified_data`, written by ``tools/golden_nnlib.py --summarize``
from a replay of the golden files; tests/ops/test_nnlib_golden.py and tests/xs3/test_libnn_golden.py replay
them again and fail when a claim is stale.
"""
from __future__ import annotations

from typing import Any

from hexnn_import.ops.catalog import CATALOG
from hexnn_import.ops.verified_data import LIBNN, NNLIB
from hexnn_import.xs3.kernel_table import KERNELS, SIMULATED

#: the lib_nn kernel names, as the XS3 kernel table has them: those layers lower to, then those only simulated
XS3_KERNELS = (*KERNELS, *SIMULATED)


def verification(op: str) -> dict[str, Any]:
    """``{"verified": ..., ...}`` for a catalog op or an XS3 kernel name."""
    if op in XS3_KERNELS:
        cases, exact = LIBNN.get(op, (0, 0))
        if cases and exact == cases:
            return {"verified": "libnn-exact", "libnn_cases": cases}
        return {"verified": "hand-worked", "libnn_cases": cases, "libnn_exact_pct": round(100 * exact / max(1, cases), 1)}
    if op in NNLIB:
        cases, exact = NNLIB[op]
        if exact == cases:
            return {"verified": "nnlib-exact", "nnlib_cases": cases}
        return {"verified": "nnlib-partial", "nnlib_cases": cases, "nnlib_exact_pct": round(100 * exact / cases, 1)}
    if op.endswith("_d32") and op[:-4] in NNLIB:
        return {"verified": "hand-worked", "flat_twin": f"{op[:-4]}: {verification(op[:-4])['verified']}"}
    spec = CATALOG.get(op)
    if spec is not None and spec.inputs and all(set(s.types) <= {"float", "int32", "shape", "any"} for s in spec.inputs) \
            and any("float" in s.types for s in spec.outputs):
        return {"verified": "reference-tolerance"}
    return {"verified": "hand-worked"}
