"""Seed labels shared by the pipeline fuzz's seed set (:mod:`hexnn_import.testing.fuzz_seeds`) and compare's
finding rows (:mod:`hexnn_import.testing.fuzz_compare_cases`): a seed whose label starts with
:data:`MALFORMED_PREFIX` must be refused (issue 38)."""
from __future__ import annotations

#: the label prefix of a seed that must be refused at convert or load
MALFORMED_PREFIX = "malformed_"
