"""bench/guest_bench.py runs each store's usual sides, or those --side
names, and sizes the file system for the LUN files it needs."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import guest_bench


def test_without_side_every_store_runs_its_usual_sides():
    assert guest_bench.pick_sides(None) == {
        "file": ("ours", "lio", "lio-aio"),
        "bdev": ("ours", "lio"),
    }


def test_side_picks_per_store_in_the_order_given():
    got = guest_bench.pick_sides(["lio-aio", "ours-wb", "ours"])
    assert got == {"file": ("lio-aio", "ours-wb", "ours"), "bdev": ("ours",)}


def test_a_side_named_twice_runs_once():
    assert guest_bench.pick_sides(["ours", "lio", "ours"])["file"] == ("ours", "lio")


def test_an_extra_side_runs_only_where_it_belongs():
    assert guest_bench.pick_sides(["ours-wb"]) == {"file": ("ours-wb",), "bdev": ()}


def test_an_unknown_side_is_refused():
    assert guest_bench.pick_sides(["ours", "lio-buffered"]) is None


def test_the_file_system_holds_every_file_with_one_to_spare():
    lun_kib = guest_bench.LUN_BYTES // 1024
    assert guest_bench.fs_kib(3) == 4 * lun_kib == 1024 * 1024
    assert guest_bench.fs_kib(1) == 4 * lun_kib
    assert guest_bench.fs_kib(4) == 5 * lun_kib


def test_every_side_run_has_its_text_but_ours():
    for store, sides in guest_bench.SIDES.items():
        extra = guest_bench.EXTRA_SIDES.get(store, ())
        assert set(guest_bench.SIDE_TEXT[store]) == set(sides + extra) - {"ours"}
