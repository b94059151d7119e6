"""Results that tell nothing, said so (issue 34, finding 4): constant outputs, one-class classifiers, and
which outputs are class scores at all.

* **Constant output.** An output that is the same on every sample (bit for bit, in every element) makes
  its agreement ("exact", 100% top-1) and accuracy meaningless: a randomly initialised int8 classifier
  whose softmax rounds to one code on every input agrees perfectly with LiteRT running the same file.
  :class:`.tensor_stats.TensorStats` keeps a fingerprint (:func:`.tensor_stats.fingerprint`) of the first sample of each
  output on both sides and whether a later sample differed; shards merge by comparing fingerprints
  (:mod:`.merge`), so ``--jobs N`` and ``--resume`` flag the same outputs as one process.
* **One class.** A classifier whose top-1 class is the same for every sample: with labels (of two
  classes or more) whatever the number of samples, without labels from :data:`MIN_ONE_CLASS_SAMPLES`.
* **Class scores** (:func:`looks_like_class_scores`): top-1 / top-5 agreement and accuracy are computed,
  and ``hexnn-import run`` lists the top classes, only for an output that looks like class scores.

The warnings are one line each, naming the output and the runners (:func:`warnings_of`); they are
``CompareResult.warnings``, the JSON's ``warnings``, and yellow lines before the terminal's tables.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from hexnn_import.compare.results import CompareResult

#: without labels, a classifier predicting one class is flagged from this many samples (10: ``--random``'s
#: default; fewer samples of random data often fall into one class by chance)
MIN_ONE_CLASS_SAMPLES = 10

#: words in an output's name that name a regression quantity, not class scores
REGRESSION_WORDS = ("landmark", "keypoint", "kpt", "box", "coord", "pose", "regress", "offset", "embed",
                    "feature", "mesh", "depth", "mask", "anchor", "heatmap", "location", "bbox")
#: words that name class scores: they override :data:`REGRESSION_WIDTHS` (not :data:`REGRESSION_WORDS`)
SCORE_WORDS = ("logit", "prob", "softmax", "class", "score", "label")
#: widths of one-row landmark regressions (points x coordinates) that are not class counts in practice:
#: 21 hand points x 2 / 3 (MediaPipe Hands), 33 pose points x 3 / 5 and 39 x 5 (BlazePose), 468 / 478
#: face-mesh points x 3 (MediaPipe Face Mesh, with irises), 68 x 2 (iBUG 300-W), 98 x 2 (WFLW), 106 x 2
REGRESSION_WIDTHS = frozenset({42, 63, 99, 165, 195, 1404, 1434, 136, 196, 212})


def _words(name: str, words: Sequence[str]) -> bool:
    low = re.sub(r"[^a-z]", " ", name.lower())
    return any(w in low for w in words)


def looks_like_class_scores(name: str, shape: Sequence[int], rows: bool = False) -> bool:
    """Whether output ``name`` of ``shape`` looks like class scores (docs/compare.md, "Degenerate results").

    The rule: one row of C >= 2 values (every dimension 1 but the last; with ``rows``, as ``run`` prints a
    batch, also ``[N, C]``); the name names no regression quantity (:data:`REGRESSION_WORDS`); and either
    the name names scores (:data:`SCORE_WORDS`) or C is not a landmark-regression width
    (:data:`REGRESSION_WIDTHS`). The rule reads the shape and name only, so every shard of a run decides
    alike.
    """
    dims = [int(d) for d in shape]
    if not dims or dims[-1] < 2:
        return False
    if int(np.prod(dims[:-1])) != 1 and not (rows and len(dims) == 2):
        return False
    if _words(name, REGRESSION_WORDS):
        return False
    return _words(name, SCORE_WORDS) or dims[-1] not in REGRESSION_WIDTHS


def constant_outputs(result: CompareResult) -> dict[str, list[str]]:
    """``{output: [runners]}``: the runners on which each output (not empty) was the same on every sample (two
    or more samples), in the order of the comparisons."""
    found: dict[str, list[str]] = {}
    for comp in result.comparisons:
        for name, s in comp.outputs.items():
            if not s.count:  # an empty output is trivially the same
                continue
            for runner, const in ((comp.candidate, s.test_constant), (comp.reference, s.ref_constant)):
                if const and runner not in found.setdefault(name, []):
                    found[name].append(runner)
    return {k: v for k, v in found.items() if v}


def one_class(result: CompareResult, runner: str) -> int | None:
    """The class ``runner`` predicts for every sample, when it predicts one class only and that says
    something (module doc), else None."""
    top = result.predictions.get(runner)
    if top is None or len(top) < 2 or result.n_classes < 2:
        return None
    first = top[:, 0]
    if np.any(first != first[0]):
        return None
    labels = result.labels
    several = labels is not None and len(np.unique(np.asarray(labels))) >= 2
    return int(first[0]) if several or len(first) >= MIN_ONE_CLASS_SAMPLES else None


def _class_name(result: CompareResult, k: int) -> str:
    names = result.classes or ()
    return f"{k} ({names[k]})" if 0 <= k < len(names) and names[k] != str(k) else str(k)


def warnings_of(result: CompareResult) -> list[str]:
    """One line per degenerate finding (module doc): constant outputs first, then one-class classifiers."""
    out: list[str] = []
    constant = constant_outputs(result)
    for name, runners in constant.items():
        out.append(f"constant output: '{name}' is the same on all {result.samples} samples in "
                   f"{', '.join(runners)}: agreement and accuracy tell nothing")
    by_class: dict[int, list[str]] = {}
    for r in result.runners:  # a constant classifier output is said above
        if r.one_class is not None and r.name not in constant.get(result.classifier or "", []):
            by_class.setdefault(r.one_class, []).append(r.name)
    for k, runners in by_class.items():
        acc = [r.accuracy for r in result.runners if r.name in runners and r.accuracy is not None]
        share = f" (accuracy {100.0 * acc[0]:.2f}% is that class's share of the labels)" if acc else ""
        out.append(f"one class: {', '.join(runners)} {'predicts' if len(runners) == 1 else 'predict'} class "
                   f"{_class_name(result, k)} of '{result.classifier}' for all {result.samples} samples{share}: "
                   f"agreement and accuracy tell nothing")
    return out
