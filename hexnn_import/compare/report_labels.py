"""Short chart labels for tensor names: what the names share is said once, not on every label.

Exported graphs name their tensors after a path and an op, e.g.
``/layer1/layer1.0/conv1/Conv_output_0_quantized``: along a chart's x axis
only the middle tells one layer from the next. :func:`shorten` cuts the names
at separators (``/ _ . : -``) and drops, up to three times, the suffix that
the most names end with (at least half of them; the longest of those), then
prefixes the same way: ``_output_0_quantized`` (shared by 32 names of 34),
then ``_Conv`` (30 of 34); then, up to twice, a run of at least two words
that at least half of the names hold anywhere (``_output_0`` in
``/relu/Relu_output_0_QuantizeLinear_Output``, where a QDQ export's
tensors end three ways). A name that would become empty or the same as
another keeps its full form, and a label longer than :data:`MAX_CHARS`
loses its middle (a few characters less of it if that makes it read as
another). The full name
stays on the hover title.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

#: a label's most characters; longer ones keep their head and tail around an ellipsis
MAX_CHARS = 28
_TOKEN = re.compile(r"[^/_.:\-]+|[/_.:\-]")
_SEPARATORS = set("/_.:-")


@dataclass
class Labels:
    """Short labels in the order of the names, and the parts they leave out (for the chart's caption)."""

    labels: list[str]
    dropped_prefixes: list[str] = field(default_factory=list)
    dropped_suffixes: list[str] = field(default_factory=list)
    dropped_inside: list[str] = field(default_factory=list)


def _tokens(name: str) -> list[str]:
    return _TOKEN.findall(name)


def _common_run(seqs: Sequence[list[str]]) -> list[str]:
    """The run of whole tokens that starts the most of ``seqs`` (at least half of them, and three), the longest
    of those; it ends on a separator so that what remains starts on a word."""
    need = max(3, -(-len(seqs) // 2))
    best: tuple[int, int, tuple[str, ...]] = (0, 0, ())
    for k in range(1, max((len(s) for s in seqs), default=0)):
        counts: dict[tuple[str, ...], int] = {}
        for s in seqs:
            if len(s) > k:  # leave at least one token
                counts[tuple(s[:k])] = counts.get(tuple(s[:k]), 0) + 1
        run, n = max(counts.items(), key=lambda kv: kv[1], default=((), 0))
        if n < need:
            break
        if run[-1] in _SEPARATORS and (n, k) > best[:2]:
            best = (n, k, run)
    return list(best[2])


def _drop(seqs: list[list[str]], from_end: bool) -> tuple[list[list[str]], str]:
    view = [s[::-1] for s in seqs] if from_end else seqs
    run = _common_run(view)
    if not run:
        return seqs, ""
    k = len(run)
    out = [s[k:] if len(s) > k and s[:k] == run and any(t not in _SEPARATORS for t in s[k:]) else s for s in view]
    if len({"".join(s) for s in out}) < len({"".join(s) for s in view}):  # two names became one: keep them
        return seqs, ""
    text = "".join(run[::-1] if from_end else run)
    return ([s[::-1] for s in out] if from_end else out), text


def _find(seq: list[str], run: tuple[str, ...]) -> int:
    """Where ``run`` starts inside ``seq`` (not at its very start), or -1."""
    k = len(run)
    return next((i for i in range(1, len(seq) - k + 1) if tuple(seq[i:i + k]) == run), -1)


def _inside(seqs: list[list[str]]) -> tuple[list[list[str]], str]:
    """Drop the run (a separator, then at least two words) that the most names hold, at least half of them."""
    counts: dict[tuple[str, ...], int] = {}
    for seq in seqs:
        runs = {tuple(seq[i:j]) for i in range(1, len(seq)) if seq[i] in _SEPARATORS
                for j in range(i + 3, len(seq) + 1) if seq[j - 1] not in _SEPARATORS}
        for run in runs:
            if sum(t not in _SEPARATORS for t in run) >= 2:
                counts[run] = counts.get(run, 0) + 1
    need = max(3, -(-len(seqs) // 2))
    run, n = max(counts.items(), key=lambda kv: (kv[1], len(kv[0])), default=((), 0))
    if n < need:
        return seqs, ""
    out = []
    for seq in seqs:
        at = _find(seq, run)
        out.append(seq[:at] + seq[at + len(run):] if at > 0 else seq)
    if len({"".join(s) for s in out}) < len({"".join(s) for s in seqs}):
        return seqs, ""
    return out, "".join(run)


def _clip(label: str, most: int = MAX_CHARS) -> str:
    if len(label) <= most:
        return label
    head = (most - 1) // 2
    return label[:head] + "\u2026" + label[len(label) - (most - 1 - head):]


def shorten(names: Sequence[str], most: int = MAX_CHARS) -> Labels:
    """The chart labels of ``names`` (see the module docstring)."""
    seqs = [_tokens(n) or [n] for n in names]
    prefixes: list[str] = []
    suffixes: list[str] = []
    for from_end in (True, True, True, False, False, False):
        seqs, text = _drop(seqs, from_end)
        if text.strip("".join(_SEPARATORS)):
            (suffixes if from_end else prefixes).append(text)
    inside: list[str] = []
    for _ in range(2):
        seqs, text = _inside(seqs)
        if text:
            inside.append(text)
    labels = ["".join(s).strip("".join(_SEPARATORS)) or n for s, n in zip(seqs, names)]
    return Labels(_distinct_clips(labels, most), prefixes, suffixes, inside)


def _distinct_clips(labels: list[str], most: int) -> list[str]:
    """Each label clipped to ``most`` characters; labels that clipping makes read the same are clipped longer
    (by a quarter at a time) until they differ."""
    width = {s: most for s in labels}
    while True:
        clipped = {s: _clip(s, width[s]) for s in width}
        groups: dict[str, list[str]] = {}
        for s, c in clipped.items():
            groups.setdefault(c, []).append(s)
        merged = [s for group in groups.values() if len(group) > 1 for s in group]
        if not merged:
            return [clipped[s] for s in labels]
        for s in merged:
            width[s] = len(s) if width[s] >= len(s) else width[s] + max(1, most // 4)
