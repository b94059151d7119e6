"""The open input dimensions of an ONNX model the user did not size: what fixes each, or one error naming all.

:mod:`onnx.inputs` writes the user's ``--input-shape`` values; every other open dimension is settled here, in
this order (docs/cli.md, "Input shapes"):

1. an open dim 0 (the batch) becomes 1 (or the size of the same ``dim_param`` on a given input);
2. a ``dim_param`` shared with a known dimension takes its size;
3. the model's metadata (ultralytics ``imgsz``) and then its first layers imply a size
   (:mod:`onnx.implied_shapes`); 2 and 3 repeat while they settle new dimensions, then the layers are asked
   once more for sizes that hold whatever the remaining open dimensions are.

Where every dimension is settled, the model converts with no flags and each input adds a note saying what
was chosen and why. Otherwise :meth:`Plan.missing_message` names every input at once, one line: the open
dimensions, the sizes already settled and where from, and a ``--input-shape`` value per input ready to paste
with ``?`` only where nothing in the file implies a size.
"""
from __future__ import annotations

import onnx

from hexnn_import.importers.onnx.implied_shapes import (Implied, Probe, from_layers, from_layers_whatever_the_rest,
                                                   from_metadata)
from hexnn_import.importers.onnx.reader import printable
from hexnn_import.importers.onnx.size_hints import BASE, fits, size_hint

HINTED = 4  # size hints for at most this many open dimensions (at most 14 strict inferences each)
ROUNDS = 3  # shared dim_params and layer rules alternate at most this often (each round settles more)


def is_open(d: onnx.TensorShapeProto.Dimension, axis: int = 0) -> bool:
    """No value, a negative one, or 0 on the batch axis (elsewhere 0 is a real, empty dimension)."""
    return not d.HasField("dim_value") or d.dim_value < 0 or (d.dim_value == 0 and axis == 0)


def shown(dims) -> str:  # type: ignore[no-untyped-def]
    """``1,3,H,?``: the declared dims, a ``dim_param`` by its name and any other open one as ``?``."""
    return ",".join(str(d.dim_value) if not is_open(d, k) else (printable(d.dim_param) or "?")
                    for k, d in enumerate(dims))


class Plan:
    """Sizes for the open dimensions of ``inputs`` (module doc); ``known`` maps dim_param -> size."""

    def __init__(self, model: onnx.ModelProto, inputs: list[onnx.ValueInfoProto], known: dict[str, int]):
        self.model = model
        self.known = known
        self.rankless = [vi for vi in inputs if not vi.type.tensor_type.HasField("shape")]
        self.inputs = [vi for vi in inputs if vi.type.tensor_type.HasField("shape")
                       and any(is_open(d, k) for k, d in enumerate(vi.type.tensor_type.shape.dim))]
        self.values: dict[str, list[int | None]] = {
            vi.name: [None if is_open(d, k) else int(d.dim_value) for k, d in enumerate(vi.type.tensor_type.shape.dim)]
            for vi in self.inputs}
        self.said: dict[str, list[str]] = {vi.name: [] for vi in self.inputs}
        self._why: dict[str, dict[str, list[tuple[int, int]]]] = {vi.name: {} for vi in self.inputs}
        self._probe: Probe | None = None
        self._tried: set[tuple[str, int]] = set()  # open dimensions size_hint was asked about

    @property
    def probe(self) -> Probe:
        """The light copy the layer rules and hints infer shapes on, made on first use."""
        if self._probe is None:
            self._probe = Probe(self.model)
        return self._probe

    def _dims(self, vi: onnx.ValueInfoProto) -> list:  # type: ignore[type-arg]
        return list(vi.type.tensor_type.shape.dim)

    def _settle(self, vi: onnx.ValueInfoProto, k: int, v: int, why: str) -> None:
        self.values[vi.name][k] = int(v)
        param = self._dims(vi)[k].dim_param
        if param:
            self.known.setdefault(param, int(v))
        if why == "batch":
            self.said[vi.name].append(f"dynamic batch set to {v}")
        elif why == "shared":
            self.said[vi.name].append(f"dim {k} ({printable(param)}) set to {v} as on another input")
        else:
            self._why[vi.name].setdefault(why, []).append((k, int(v)))

    def _shared(self) -> bool:
        """Step 2 of the module doc; True when it settled something."""
        done = False
        for vi in self.inputs:
            for k, d in enumerate(self._dims(vi)):
                if self.values[vi.name][k] is None and d.dim_param and d.dim_param in self.known:
                    self._settle(vi, k, self.known[d.dim_param], "shared")
                    done = True
        return done

    def pending(self) -> dict[str, list[int]]:
        """Input -> the axes still without a size."""
        out = {n: [k for k, v in enumerate(vals) if v is None] for n, vals in self.values.items()}
        return {n: axes for n, axes in out.items() if axes}

    def _apply(self, found: Implied) -> bool:
        done = False
        for vi in self.inputs:
            for k in range(len(self.values[vi.name])):
                if self.values[vi.name][k] is None and (vi.name, k) in found:
                    v, where = found[(vi.name, k)]
                    self._settle(vi, k, v, where)
                    done = True
        return done

    def _all_values(self) -> dict[str, list[int | None]]:
        """Every sized graph input's dims (None where open), for the layer probe."""
        inits = {t.name for t in self.model.graph.initializer}
        out: dict[str, list[int | None]] = {}
        for vi in self.model.graph.input:
            if vi.name in inits or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
                continue
            out[vi.name] = self.values.get(vi.name) or [
                None if is_open(d, k) else int(d.dim_value) for k, d in enumerate(vi.type.tensor_type.shape.dim)]
        return out

    def resolve(self) -> dict[str, list[int]]:
        """Settle what the module doc's steps settle; returns the axes still open (input -> axes)."""
        for vi in self.inputs:
            d = self._dims(vi)
            if d and self.values[vi.name][0] is None:
                self._settle(vi, 0, self.known.get(d[0].dim_param, 1) if d[0].dim_param else 1, "batch")
        self._shared()
        if self.pending():
            ranks = {vi.name: len(self.values[vi.name]) for vi in self.inputs}
            self._apply(from_metadata(self.probe, self.pending(), ranks))
        for _ in range(ROUNDS):
            self._shared()
            if not self.pending() or not self._apply(from_layers(self.probe, self._all_values())):
                break
        if self.pending() and self._apply(from_layers_whatever_the_rest(self.probe, self._all_values())):
            self._shared()
        for vi in self.inputs:
            for why, dims in self._why[vi.name].items():
                axes = ", ".join(str(k) for k, _ in dims)
                sizes = ", ".join(str(v) for _, v in dims)
                self.said[vi.name].append(f"dim{'s' * (len(dims) > 1)} {axes} set to {sizes} {why}")
        return self.pending()

    def example(self, vi: onnx.ValueInfoProto) -> list[int]:
        """The settled shape for a note's "change with": batch 4 where the batch was open, to show it can vary."""
        values = [int(v) for v in self.values[vi.name] if v is not None]
        dims = self._dims(vi)
        return [4] + values[1:] if dims and is_open(dims[0], 0) else values

    def _hint(self, name: str, axes: list[int], held: dict[tuple[str, int], int],
              hinted: set[tuple[str, int]]) -> str:
        """" (a multiple of 32 fits its layers, e.g. 320)": what :mod:`onnx.size_hints` tells of each open axis
        (the axes it tells of join ``hinted``)."""
        hints = {}
        for k in axes:
            asked = len(self._tried) < HINTED
            hints[k] = size_hint(self.probe, self._all_values(), name, k, held) if asked else None
            self._tried.add((name, k))
        hinted.update((name, k) for k, h in hints.items() if h)
        said = {h for h in hints.values() if h}
        if not said:
            return ""
        if len(said) == 1 and all(hints.values()):
            return f" ({said.pop()})"
        return " (" + "; ".join(f"dim {k}: {h}" for k, h in hints.items() if h) + ")"

    def _example(self, held: dict[tuple[str, int], int]) -> str:
        """"; e.g. --input-shape x=1,3,320,320 fits its layers" where every open size has a hint and the
        sizes the hints name fit together (:func:`onnx.size_hints.fits`); else ""."""
        values = {n: [held.get((n, k), BASE) if v is None else v for k, v in enumerate(dims)]
                  for n, dims in self._all_values().items()}
        if not fits(self.probe, values):  # type: ignore[arg-type]
            return ""
        return "; e.g. " + " ".join(f"--input-shape {printable(vi.name)}=" + ",".join(map(str, values[vi.name]))
                                    for vi in self.inputs) + " fits its layers"

    def missing_message(self, label: str) -> str:
        """One line naming every input whose size is open (module doc)."""
        pending = self.pending()
        parts, line = [], []
        held: dict[tuple[str, int], int] = {}
        hinted: set[tuple[str, int]] = set()
        for vi in self.inputs:
            name = printable(vi.name)
            axes = pending.get(vi.name, [])
            text = f"input {name} [{shown(self._dims(vi))}]"
            if axes:
                text += (f" dim{'s' * (len(axes) > 1)} {', '.join(map(str, axes))} open"
                         + self._hint(vi.name, axes, held, hinted))
            if self.said[vi.name]:
                text += (", " if axes else ": ") + ", ".join(self.said[vi.name])
            parts.append(text)
            line.append(f"--input-shape {name}=" + ",".join("?" if v is None else str(v)
                                                             for v in self.values[vi.name]))
        for vi in self.rankless:
            parts.append(f"input {printable(vi.name)} has no declared rank")
            line.append(f"--input-shape {printable(vi.name)}=D1,D2,...")
        count = sum(len(a) for a in pending.values())
        head = (f"{count} input dimension{'s' * (count != 1)} of the model {'have' if count != 1 else 'has'} no "
                f"size, and nothing in its metadata or first layers implies one" if count else
                "an input has no declared rank")
        every = count and not self.rankless and hinted == {(n, k) for n, axes in pending.items() for k in axes}
        return (f"{label}: {head}: " + "; ".join(parts) + "; convert with " + " ".join(line)
                + (" (each ? replaced by the size to use)" if count else "") + (self._example(held) if every else ""))


__all__ = ["Plan", "is_open", "shown"]
