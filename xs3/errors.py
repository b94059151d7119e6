"""Errors of the XS3 lowering: a constraint of a lib_nn kernel, or quantization it cannot express."""
from __future__ import annotations

from hexnn_import.errors import HexnnError, ModelFormatError


class XS3Error(HexnnError):
    """A layer, tensor or parameter breaks a lib_nn kernel's documented constraints."""


class BSOError(XS3Error):
    """Quantization parameters that the BSO (or BSS) output stage cannot represent."""


class XS3ModelError(ModelFormatError):
    """A layer's own data contradicts itself (declared shapes that its weights and window cannot produce):
    the file is damaged, so no kernel is exported for it and the command stops, naming the layer."""
