"""xs3/manifest_json.py writes ``json.dumps(obj, indent=N)``'s text byte for byte (the standard library is the
reference), for what a manifest holds and for the values it hands back to json.dumps."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hexnn_import.xs3.manifest_json import dumps_indented


class Name(str):
    """A str subclass: a key or value json.dumps encodes as a plain string."""


DOCS: list[Any] = [
    {"format": "hexnn-xs3-manifest", "version": 3, "arrays": "layers.npz", "options": {"symmetric_output": False},
     "layers": [{"name": "conv1/relu", "inputs": ["input", "é\n\"q\""], "outputs": [], "shape": [1, 24, 24, 3],
                 "params": {"m0": 16384, "shr0": -7}, "exact_fraction": 0.921875, "reason": None, "nested": [[1, 2], []],
                 "mixed": [1, "a", None, 2.5, True], "tuple": (1, 2), "empty": {}}],
     "floats": [float("nan"), float("inf"), -float("inf"), 1e-300, -0.0]},
    [], {}, "plain", 3, None, [["a", "b"], ("c",)],
    {Name("sub"): Name("value"), "x": [Name("n1"), "n2"]},   # str subclasses
    {"np": np.int64(3)},                                      # a numpy scalar: json.dumps's own TypeError
    {1: "int key", "k": [True, False]},                       # a non-string key: json.dumps turns it into "1"
]


@pytest.mark.parametrize("indent", [1, 2])
@pytest.mark.parametrize("k", range(len(DOCS)))
def test_dumps_indented_is_json_dumps(k: int, indent: int) -> None:
    doc = DOCS[k]
    try:
        want = json.dumps(doc, indent=indent)
    except TypeError as exc:
        with pytest.raises(TypeError, match=str(exc).split(" is ")[0]):
            dumps_indented(doc, indent)
        return
    assert dumps_indented(doc, indent) == want
    assert dumps_indented(doc, indent) == want  # again, with every key's text remembered
