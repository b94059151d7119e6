"""xs3/gc_pause.fewer_collections: the young threshold raised inside the block, the caller's thresholds back after
it (on an error too), a caller's own setting (collection off, or already relaxed) left alone."""
from __future__ import annotations

import gc
from typing import Iterator

import pytest

from hexnn_import.xs3.gc_pause import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture()
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_raised_inside_and_restored_after(thresholds: None) -> None:
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        with fewer_collections():  # nested: the outer block's setting, restored to it
            assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_error(thresholds: None) -> None:
    gc.set_threshold(500, 7, 3)
    with pytest.raises(ValueError):
        with fewer_collections():
            raise ValueError("x")
    assert gc.get_threshold() == (500, 7, 3)


@pytest.mark.parametrize("setting", [(0, 10, 10), (YOUNG_THRESHOLD * 2, 10, 10)])
def test_callers_own_setting_kept(thresholds: None, setting: tuple[int, int, int]) -> None:
    gc.set_threshold(*setting)
    with fewer_collections():
        assert gc.get_threshold() == setting
    assert gc.get_threshold() == setting
