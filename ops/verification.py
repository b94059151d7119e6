"""How each hexagon_nn kernel is verified (issue 19): the ``verified`` field of ``hexnn-import ops --json``.

- ``nnlib-exact``: every golden case taken from hexagon_nn's own C code (nnlib 2.14.1, compiled on x86 by the
  oracle harness; ``tools/golden_nnlib.py``) is reproduced bit for bit: codes and output min/max. A ``_d32``
  op does not inherit its flat twin's label (nnlib's d32 code is HVX, a different path): it is ``hand-worked``
  and names its twin's label in ``flat_twin``, since the engine's d32 kernels run the flat arithmetic.
- ``nnlib-partial``: golden C cases exist and some differ; ``nnlib_exact_pct`` says how many agree.
- ``hand-worked``: no vendor C path is compiled for it (HVX/asm only, or not yet extracted); its tests check
  values worked by hand from the op text and the nnlib source, and properties.
- ``reference-tolerance``: a float op, checked against a float reference (numpy, onnxruntime, LiteRT) within
  float tolerance.
- ``device-exact`` / ``device-partial``: no portable C row, or one the engine departs from on purpose to
  compute what the device computes (``nnlib_exact_pct`` stays), checked against nnlib's own device code (HVX,
  assembly) run under ``qemu-hexagon`` (issue 36). Any op with such a row also carries ``device``: the golden row, its
  cases, how many the engine reproduces bit for bit, and, where they differ, the traced reason.

The figures come from :mod:`hexnn_import.ops.verified_data`, written by ``tools/golden_nnlib.py --summarize``
from a replay of the golden files; tests/ops/test_nnlib_golden.py replays them again and fails when a claim is
stale. The XS3 kernels' rows (``libnn-exact``: lib_nn's C reproduced bit for bit) are
:mod:`hexnn_import.xs3.verification`'s.
"""
from __future__ import annotations

from typing import Any

from hexnn_import.ops.catalog import CATALOG
from hexnn_import.ops.verified_data import NNLIB
from hexnn_import.ops.verified_device import DEVICE


def verification(op: str) -> dict[str, Any]:
    """``{"verified": ..., ...}`` for a catalog op, with ``device`` (its row of nnlib's device code under
    emulation, :mod:`hexnn_import.ops.verified_device`) where one exists; an op with no portable C row but a
    device row is ``device-exact`` / ``device-partial``."""
    out = _portable(op)
    if op in DEVICE:
        row, cases, exact, why = DEVICE[op]
        out["device"] = {"golden": f"tests/data/golden/hvx/{row}.npz", "cases": cases, "exact": exact,
                         "exact_pct": round(100 * exact / cases, 1), **({"differs": why} if why else {})}
        if out["verified"] in ("hand-worked", "reference-tolerance", "nnlib-partial"):
            # nnlib-partial: the engine follows the device where it and the portable C differ (issue 36)
            out["verified"] = "device-exact" if exact == cases else "device-partial"
    return out


def _portable(op: str) -> dict[str, Any]:
    """The label from nnlib's portable C (the x86 oracle), or hand-worked / reference-tolerance."""
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
