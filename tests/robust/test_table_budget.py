"""Per-node tables count against the memory budget and are shared between nodes with the same ranges (issue 38,
finding 1: each QuantizedAdd kept its own 256x256 tables outside the budget, 10,000 ADDs took 2.37 GB under
``--max-memory 64M``). The hostile chains come from :mod:`hexnn_import.testing.hostile_chains`; the 10,000-ADD
replay with its peak memory is ``bench/table_budget.py``."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hexnn_import import memory
from hexnn_import.api import import_model, prepare
from hexnn_import.errors import ResourceError
from hexnn_import.runner import Runner
from hexnn_import.testing.hostile_chains import add_chain_tflite
from hexnn_import.testing.tflite_compare import assert_agrees

TABLES = 3 * 256 * 256  # one scaling's uint8 codes + int16 intermediates (op_add.c's addsub tables)
BUDGET = 16 << 20


@pytest.fixture
def budget() -> Iterator[int]:
    memory.set_budget(BUDGET)
    try:
        yield BUDGET
    finally:
        memory.set_budget(None)


def _runner(tmp_path: Path, model: bytes) -> Runner:
    path = tmp_path / "chain.tflite"
    path.write_bytes(model)
    return Runner(prepare(import_model(path)))


def _feed() -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(0).integers(0, 256, (1, 4, 4, 8), dtype=np.uint8)}


def test_distinct_tables_past_the_budget_are_refused_before_they_are_built(tmp_path: Path, budget: int) -> None:
    runner = _runner(tmp_path, add_chain_tflite(200, distinct_ranges=True))  # 200 tables: 37.5 MiB > 16 MiB
    with pytest.raises(ResourceError) as err:
        runner.run(_feed())
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("node add") and "(QuantizedAdd_8p8to8)" in msg, msg
    assert "256x256 tables" in msg and "--max-memory" in msg, msg
    kept = runner.engine.tables
    assert kept.total <= budget < kept.total + TABLES  # refused at the table that would not fit, none built past it
    assert len(kept.shared_tables) >= BUDGET // TABLES // 2  # the earlier distinct tables were built and counted


def test_nodes_with_the_same_ranges_share_one_table(tmp_path: Path, budget: int) -> None:
    runner = _runner(tmp_path, add_chain_tflite(200))
    runner.run(_feed())
    kept = runner.engine.tables
    # the first ADD (x + x) and the 199 others (prev + x, every prev at the same scale) need two scalings
    assert len(kept.shared_tables) <= 2 and kept.shared_bytes <= 2 * TABLES + 1024
    assert kept.total <= budget


def test_shared_tables_give_litert_s_results() -> None:
    assert_agrees(add_chain_tflite(2), n=2)  # the two scalings the 200-ADD chain shares (longer chains drift
    # from LiteRT by rounding, with or without sharing)
