"""nvmedb.collector: the cycle collector waits while a bundle is validated or a summary rebuilt, comes back as it was
(after an error too, and only at the outermost of nested blocks), and a worker's long-lived objects are frozen."""

import gc

import pytest

from nvmedb import collector


def test_paused_inside_restored_after_even_when_the_work_fails(collector_on):
    with pytest.raises(RuntimeError), collector.cycle_collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("the work failed")
    assert gc.isenabled()


def test_a_nested_pause_leaves_the_collector_to_the_outermost(collector_on):
    with collector.cycle_collector_paused():
        with collector.cycle_collector_paused():
            pass
        assert not gc.isenabled(), "the inner block must not turn the collector back on"
    assert gc.isenabled()


def test_a_pause_started_with_the_collector_off_leaves_it_off(collector_on):
    gc.disable()
    with collector.cycle_collector_paused():
        pass
    assert not gc.isenabled()


def test_freezing_moves_every_live_object_out_of_the_collectors_reach():
    kept = [[i] for i in range(1000)]  # alive at the freeze; lists are always tracked (a dict of ints is not)
    watched = {id(item) for item in kept[:3]}
    assert watched <= {id(obj) for obj in gc.get_objects()}, "the collector sees them before the freeze"
    try:
        collector.freeze_long_lived()
        assert gc.get_freeze_count() >= len(kept)
        assert not watched & {id(obj) for obj in gc.get_objects()}
    finally:
        gc.unfreeze()


def test_a_celery_worker_freezes_what_it_imported_at_start():
    from nvmedb.celery import import_the_fit_libraries

    try:
        import_the_fit_libraries()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
