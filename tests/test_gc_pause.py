"""The cycle collector's pause: back on after the block, however it ends, and only once."""

from __future__ import annotations

import gc

import pytest

from lineagegraph import gc_pause


def test_paused_for_the_block_and_running_after_it() -> None:
    assert gc.isenabled()
    with gc_pause.paused():
        assert not gc.isenabled()
        with gc_pause.paused():  # nested: the inner one leaves it to the outer
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_running_again_after_an_error_and_as_a_decorator() -> None:
    @gc_pause.paused()
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()


def test_a_pause_someone_else_made_is_theirs_to_end() -> None:
    gc.disable()
    try:
        with gc_pause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
