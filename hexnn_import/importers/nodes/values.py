"""What an importer knows about one source tensor once it is in the graph.

A quantized tensor is three refs (quint8 data, float min, float max) as the
op documents pass them; a float or int tensor is one ref. ``range`` is the
static (min, max) when the importer fixed it (from the source model's
scale/zero point), None when it is only known at run time.
"""
from __future__ import annotations

from dataclasses import dataclass

from hexnn_import.graph import Ref


@dataclass
class Value:
    """A source tensor as graph refs."""

    data: Ref
    shape: tuple[int, int, int, int]
    etype: str  # graph element type: quint8, float, int32, qint32
    mn: Ref | None = None
    mx: Ref | None = None
    range: tuple[float, float] | None = None

    @property
    def quantized(self) -> bool:
        return self.mn is not None

    def triple(self) -> list[Ref]:
        """``[data, min, max]`` refs of a quantized value."""
        assert self.mn is not None and self.mx is not None
        return [self.data, self.mn, self.mx]
