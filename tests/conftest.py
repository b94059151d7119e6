"""Shared test setup: the helpers in hexnn_import.testing find this checkout's ``models/``
even when the package is installed from a wheel (as CI does) rather than editable."""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HEXNN_MODELS_DIR", str(Path(__file__).resolve().parents[1] / "models"))
