"""The project's own exception types.

Every error a user can provoke (a bad model file, an unsupported op, a range
that makes no sense) is raised as a subclass of :class:`HexnnError`, with the
node and op named, so the CLI can print one line and exit with code 2
(docs/architecture.md, "Habits").
"""
from __future__ import annotations


class HexnnError(Exception):
    """Base class of every error the toolkit raises on purpose."""


class ModelFormatError(HexnnError):
    """A model file is missing, empty, truncated or not a model at all."""


#: the reason given for an op no handler maps (and no handler explained)
NO_MAPPING = "no mapping for this op"


class UnsupportedOpsError(HexnnError):
    """The source model uses ops the importer cannot map.

    ``ops`` maps a key, ``"OP"`` or ``"OP (reason)"``, to the node/tensor
    names that hit it; ``notes`` adds a remark per key. The message is one
    line grouped by op type: each type with its node count, its distinct
    reasons and at most three example names (long names shortened);
    :meth:`as_dict` holds every node, for ``--json``.
    """

    def __reduce__(self):  # type: ignore[no-untyped-def]
        """Rebuilt from its arguments (a worker process's error reaches the main process: ``compare --jobs``)."""
        return (type(self), (self.fmt, self.ops, self.notes))

    def __init__(self, fmt: str, ops: dict[str, list[str]], notes: dict[str, str] | None = None):
        self.fmt = fmt
        self.ops = ops
        self.notes = notes or {}
        self.groups = _group_unsupported(ops, self.notes)
        total = sum(len(g["nodes"]) for g in self.groups)
        parts = []
        for g in self.groups:
            why = ("; ".join(g["reasons"][:2]) + (f"; +{len(g['reasons']) - 2} more" if len(g["reasons"]) > 2 else "")
                   or (NO_MAPPING if " " not in g["op"] else ""))  # a key that is a sentence says why itself
            shown = ", ".join(_short(n) for n in g["nodes"][:3]) + (", ..." if len(g["nodes"]) > 3 else "")
            parts.append(f"{g['op']} x{len(g['nodes'])}" + (f" [{why}]" if why else "") + f" (e.g. {shown})")
        head = f"unsupported {fmt} op(s)"
        if total > 3 or len(self.groups) > 1:
            head += f" ({len(self.groups)} type{'s' * (len(self.groups) != 1)}, {total} node{'s' * (total != 1)}"
            head += "; --json lists every node)" if total > 3 else ")"
        super().__init__(head + ": " + " | ".join(parts))

    def listing(self) -> str:
        """Every key with all its names, ``"OP (reason) xN (a, b) [note]"`` joined by ``"; "`` (for logs and tests)."""
        return "; ".join(f"{k} x{len(v)} ({', '.join(v)})" + (f" [{self.notes[k]}]" if k in self.notes else "")
                         for k, v in sorted(self.ops.items()))

    def as_dict(self) -> dict[str, object]:
        """Every unsupported node, grouped by op type with the reasons (the CLI's ``--json``)."""
        return {"error": "unsupported ops", "format": self.fmt, "message": str(self),
                "unsupported": [dict(g, count=len(g["nodes"])) for g in self.groups]}


def _short(name: str, keep: int = 48) -> str:
    return name if len(name) <= keep else name[: keep // 2 - 1] + "..." + name[-(keep // 2 - 2):]


def _group_unsupported(ops: dict[str, list[str]], notes: dict[str, str]) -> list[dict]:
    """``{"OP (reason)": names}`` -> one group per op type, most frequent first."""
    groups: dict[str, dict] = {}
    for key, names in ops.items():
        op, sep, rest = key.partition(" (")
        reason = rest[:-1] if sep and rest.endswith(")") else (rest if sep else "")
        if not sep:
            op = key
        g = groups.setdefault(op, {"op": op, "reasons": [], "nodes": [], "by_reason": {}})
        g["by_reason"].setdefault(reason or NO_MAPPING, []).extend(names)
        for r in (reason, notes.get(key, "")):
            if r and r not in g["reasons"]:
                g["reasons"].append(r)
        g["nodes"].extend(names)
    return sorted(groups.values(), key=lambda g: (-len(g["nodes"]), g["op"]))


class GraphError(HexnnError):
    """The graph breaks an invariant of the prepare notes (refs, ids, indexes)."""


class OpError(HexnnError):
    """An op was given inputs that break its rules; names the node and op."""

    def __init__(self, node: str, op: str, message: str):
        self.node = node
        self.op = op
        self.detail = message
        super().__init__(f"node {node} ({op}): {message}")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        """Rebuilt from its arguments (a worker process's error reaches the main process: ``compare --jobs``)."""
        return (type(self), (self.node, self.op, self.detail))


class InputDataError(HexnnError):
    """Run-time input data has the wrong names, shapes, dtypes or values."""


class ResourceError(HexnnError):
    """A file, tensor or run would need more memory than the budget allows (:mod:`hexnn_import.memory`)."""


class DeviceDefectWarning(UserWarning):
    """A node whose answer on the DSP is off, or which the DSP refuses, because of hexagon_nn's device code
    (issue 36; docs/verification.md "The device-code cases")."""
