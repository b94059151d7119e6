"""The comparator: run a tested runner and its references on the same samples, tensor by tensor.

Polygraphy's comparator in small: every runner sees every sample (each in
its own input types, :func:`hexnn_import.datasets.samples.feed_for`); each (tested, reference) pair
accumulates :class:`.tensor_stats.TensorStats` per output and, when the tested
runner is per-layer, per intermediate tensor that both runners name. The
first output that looks like class scores (:func:`.degenerate.looks_like_class_scores`:
one row of >= 2 values, not named or shaped like a regression) also gives
top-1 / top-5 agreement and, with labels, accuracy. Results that tell nothing
(constant outputs, one-class classifiers) are ``CompareResult.warnings``
(:mod:`.degenerate`). The result types are :mod:`.results`.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from hexnn_import.compare import metrics
from hexnn_import.compare.class_table import class_table, confusions
from hexnn_import.compare.degenerate import looks_like_class_scores, one_class, warnings_of
from hexnn_import.compare.matching import align
from hexnn_import.compare.results import Comparison, CompareResult, RunnerResult
from hexnn_import.compare.runners import CompareRunner
from hexnn_import.compare.tensor_stats import TensorStats
from hexnn_import.datasets.samples import Dataset, feed_for


def _classifier_rows(arr: np.ndarray) -> np.ndarray | None:
    """A classifier output as one row of logits, or None if it is not one."""
    if arr.ndim == 0 or arr.shape[-1] < 2 or int(np.prod(arr.shape[:-1])) != 1:
        return None
    return arr.reshape(1, -1)


def _output_pairs(cand: CompareRunner, ref: CompareRunner) -> list[tuple[str, str]]:
    if all(n in ref.outputs for n in cand.outputs):
        return [(n, n) for n in cand.outputs]
    if len(cand.outputs) == len(ref.outputs):  # same model, other names: by position
        return list(zip(cand.outputs, ref.outputs))
    return [(n, n) for n in cand.outputs if n in ref.outputs]


def _update(comp: Comparison, pairs: list[tuple[str, str]], cand: dict[str, np.ndarray], steps: dict[str, float],
            ref: dict[str, np.ndarray], per_layer: bool) -> None:
    for cname, rname in pairs:
        test = align(cand[cname], ref[rname])
        if test is None:
            comp.unmatched[cname] = f"shape {list(cand[cname].shape)} vs {list(ref[rname].shape)}"
            continue
        comp.outputs.setdefault(cname, TensorStats(cname)).update(ref[rname], test, steps.get(cname), spread=True)
    if not per_layer:
        return
    for name, value in cand.items():
        if name not in ref:
            comp.unmatched.setdefault(name, "not in the reference")
            continue
        test = align(value, ref[name])
        if test is None:
            comp.unmatched[name] = f"shape {list(value.shape)} vs {list(ref[name].shape)}"
            continue
        comp.layers.setdefault(name, TensorStats(name)).update(ref[name], test, steps.get(name))


def comparison_plan(candidates: Sequence[CompareRunner], references: Sequence[CompareRunner]
                    ) -> list[tuple[CompareRunner, CompareRunner]]:
    """The (tested, reference) pairs: every candidate against every reference; with several targets also the
    quantized source model against the float reference (what the converter's own quantization costs)."""
    plan = [(c, r) for c in candidates for r in references]
    if len(candidates) > 1:
        floats = [r for r in references if not getattr(r, "quantized", True)]
        plan += [(q, f) for q in references if getattr(q, "quantized", False) for f in floats]
    return plan


def run_comparison(candidate: CompareRunner, references: Sequence[CompareRunner], dataset: Dataset,
                   progress: Callable[[int], None] | None = None, model: str = "",
                   others: Sequence[CompareRunner] = (), keep_outputs: bool = False) -> CompareResult:
    """Run every runner on every sample and accumulate the comparisons of ``candidate`` (and of each of
    ``others``: more targets, ``compare --targets``) with each reference (:func:`comparison_plan`);
    ``keep_outputs``: also keep ``candidate``'s outputs of every sample."""
    cands = [candidate, *others]
    runners = [*cands, *references]
    plan = comparison_plan(cands, references)
    comps = [Comparison(c.name, r.name) for c, r in plan]
    pairs = [_output_pairs(c, r) for c, r in plan]
    logits: dict[str, list[np.ndarray]] = {r.name: [] for r in runners}
    classifier: str | None = None
    class_names: dict[str, str] = {}
    kept: dict[str, list[np.ndarray]] = {}
    for i, sample in enumerate(dataset.samples):
        results = {r.name: r.infer(feed_for(r.inputs, sample)) for r in runners}
        cand = results[candidate.name]
        if keep_outputs:
            for n in candidate.outputs:
                kept.setdefault(n, []).append(np.asarray(cand[n]))
        for comp, (c, r), pr in zip(comps, plan, pairs):
            _update(comp, pr, results[c.name], c.steps, results[r.name], c.per_layer)
        if i == 0:
            classifier = next((n for n in candidate.outputs if looks_like_class_scores(n, np.shape(cand[n]))), None)
            if classifier is not None:
                class_names[candidate.name] = classifier
                for r in runners[1:]:
                    match = next((b for a, b in _output_pairs(candidate, r) if a == classifier), None)
                    if match is not None:
                        class_names[r.name] = match
        for r in runners:
            if r.name in class_names:
                rows = _classifier_rows(results[r.name][class_names[r.name]])
                if rows is not None:
                    logits[r.name].append(rows)
        if progress is not None:
            progress(i + 1)
    stacked = {k: np.concatenate(v) for k, v in logits.items() if v and len(v) == len(dataset.samples)}
    predictions = {k: metrics.top_k(v, min(5, v.shape[1])).astype(np.int32) for k, v in stacked.items()}
    result = CompareResult(model or candidate.model, dataset.source, len(dataset.samples),
                           [RunnerResult(r.name, r.backend, r.model) for r in runners], comps, classifier,
                           candidate.per_layer, predictions, dataset.labels,
                           outputs={k: np.stack(v) for k, v in kept.items()},
                           n_classes=max((v.shape[1] for v in stacked.values()), default=0))
    score_predictions(result)
    return result


def score_predictions(result: CompareResult) -> None:
    """Top-1 / top-5 agreement of each comparison and each runner's accuracy, from ``result.predictions``
    (each sample's top-k classes; the same figures as :mod:`.metrics` gives from the logits); then the
    warnings of results that tell nothing (:func:`.degenerate.warnings_of`)."""
    preds, labels = result.predictions, result.labels
    for comp in result.comparisons:
        ref, test = preds.get(comp.reference), preds.get(comp.candidate)
        if ref is None or test is None or ref.shape != test.shape or not len(ref):
            continue
        comp.top1 = metrics.topk_agreement_of(ref[:, 0], test, 1)
        comp.top5 = metrics.topk_agreement_of(ref[:, 0], test, 5) if result.n_classes > 5 else None
    for res in result.runners:
        top = preds.get(res.name)
        if top is None or labels is None or len(labels) != len(top) or not len(top):
            continue
        res.accuracy = metrics.accuracy_of(top, labels, 1)
        res.top5_accuracy = metrics.accuracy_of(top, labels, 5) if result.n_classes > 5 else None
        res.per_class = class_table(top[:, 0], labels, result.classes)
        res.confusions = confusions(top[:, 0], labels)
    for res in result.runners:
        res.one_class = one_class(result, res.name)
    result.warnings = warnings_of(result)
