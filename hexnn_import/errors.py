"""The project's own exception types.

Every error a user can provoke (a bad model file, an unsupported op, a range
that makes no sense) is raised as a subclass of :class:`HexnnError`, with the
node and op named, so the CLI can print one line and exit with code 2
(ARCHITECTURE.md, "Habits").
"""
from __future__ import annotations


class HexnnError(Exception):
    """Base class of every error the toolkit raises on purpose."""


class ModelFormatError(HexnnError):
    """A model file is missing, empty, truncated or not a model at all."""


class UnsupportedOpsError(HexnnError):
    """The source model uses ops the importer cannot map.

    ``ops`` maps an op name to the list of node/tensor names that use it, so
    the message can list *all* of them at once.
    """

    def __init__(self, fmt: str, ops: dict[str, list[str]], notes: dict[str, str] | None = None):
        self.ops = ops
        self.notes = notes or {}
        parts = []
        for name, where in sorted(ops.items()):
            note = f" [{self.notes[name]}]" if name in self.notes else ""
            shown = ", ".join(where[:3]) + (", ..." if len(where) > 3 else "")
            parts.append(f"{name} x{len(where)} ({shown}){note}")
        super().__init__(f"unsupported {fmt} op(s): " + "; ".join(parts))


class GraphError(HexnnError):
    """The graph breaks an invariant of the prepare notes (refs, ids, indexes)."""


class OpError(HexnnError):
    """An op was given inputs that break its rules; names the node and op."""

    def __init__(self, node: str, op: str, message: str):
        self.node = node
        self.op = op
        self.detail = message
        super().__init__(f"node {node} ({op}): {message}")


class InputDataError(HexnnError):
    """Run-time input data has the wrong names, shapes, dtypes or values."""
