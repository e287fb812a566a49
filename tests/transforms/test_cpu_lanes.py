"""A hold keeps OpenBLAS on one thread until the process's last hold ends, and the lanes
run side by side only where the caller's limit allowed them; the results are the same."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from transforms.cpu_lanes import (
    LANES,
    blas_controller,
    lane_product,
    map_lanes,
    on_lane,
    one_blas_thread,
)


def _blas_threads() -> list[int]:
    return [lib.num_threads for lib in blas_controller().select(user_api="blas").lib_controllers]


def _thread_name(_: object) -> str:
    return threading.current_thread().name


def test_a_hold_limits_blas_and_gives_the_callers_limit_back() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        with one_blas_thread() as lanes:
            assert lanes == LANES == 2
            assert _blas_threads() == [1] * len(_blas_threads())
            with one_blas_thread() as inner:  # nested: the outer hold's lanes, no restore
                assert inner == lanes
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {2}
    with threadpool_limits(limits=1, user_api="blas"), one_blas_thread() as lanes:
        assert lanes == 1  # the caller allowed one thread: the lanes run in turn


def test_concurrent_holds_restore_only_when_the_last_ends() -> None:
    first_in, second_done, results = threading.Event(), threading.Event(), {}

    def second() -> None:
        first_in.wait()
        with one_blas_thread() as lanes:
            results["second lanes"] = lanes
        results["after second"] = set(_blas_threads())
        second_done.set()

    with threadpool_limits(limits=2, user_api="blas"):
        worker = threading.Thread(target=second)
        worker.start()
        with one_blas_thread() as lanes:
            first_in.set()
            second_done.wait(10)
            assert lanes == 2
        worker.join()
        assert results == {"second lanes": 1, "after second": {1}}
        assert set(_blas_threads()) == {2}


def test_lanes_run_side_by_side_only_inside_a_hold_that_allows_them() -> None:
    parts = list(range(LANES))
    with threadpool_limits(limits=2, user_api="blas"):
        outside = map_lanes(_thread_name, parts)
        with one_blas_thread():
            inside = map_lanes(_thread_name, parts)
    with threadpool_limits(limits=1, user_api="blas"), one_blas_thread():
        limited = map_lanes(_thread_name, parts)
    caller = threading.current_thread().name
    assert outside == limited == [caller] * LANES
    assert inside[0] == caller and all(n.startswith("kgmem-lane-") for n in inside[1:])


@pytest.mark.parametrize("limit", [1, 2])
def test_results_are_in_order_and_the_same_bits_either_way(limit: int) -> None:
    rng = np.random.default_rng(7)
    blocks = np.array_split(rng.standard_normal((3001, 384)).astype(np.float32), LANES)
    query = rng.standard_normal(384).astype(np.float32)
    with threadpool_limits(limits=1, user_api="blas"), one_blas_thread():
        expected = [block @ query for block in blocks]
    with threadpool_limits(limits=limit, user_api="blas"), one_blas_thread():
        found = map_lanes(lambda block: block @ query, blocks)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))


def test_lane_product_is_the_product_with_the_same_bits_under_any_limit() -> None:
    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((2049, 96)).astype(np.float32)
    vector = rng.standard_normal(96).astype(np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        one = lane_product(matrix, vector)
    with threadpool_limits(limits=2, user_api="blas"):
        two = lane_product(matrix, vector)
    assert one.shape == (2049,) and np.array_equal(one, two)
    assert np.allclose(one, matrix.astype(np.float64) @ vector, rtol=1e-5, atol=1e-4)


def test_work_on_the_lane_runs_beside_a_body_whose_own_lanes_run_in_turn() -> None:
    """`on_lane` inside a hold that allows lanes: the work runs on the lane thread, the
    body's `map_lanes` on the caller's thread alone, and the work's product has the bits
    of `lane_product` anywhere; without lanes the work runs when its result is asked."""
    rng = np.random.default_rng(13)
    matrix = rng.standard_normal((2049, 96)).astype(np.float32)
    vector = rng.standard_normal(96).astype(np.float32)
    expected = lane_product(matrix, vector)
    caller = threading.current_thread().name

    def product_and_thread() -> tuple[np.ndarray, str]:
        return lane_product(matrix, vector), threading.current_thread().name

    with threadpool_limits(limits=2, user_api="blas"), one_blas_thread():
        with on_lane(product_and_thread) as result:
            body = map_lanes(_thread_name, list(range(LANES)))
        found, thread = result()
        after = map_lanes(_thread_name, list(range(LANES)))
    assert body == [caller] * LANES and thread.startswith("kgmem-lane-")
    assert after[0] == caller and after[1].startswith("kgmem-lane-")  # the lanes are back
    assert np.array_equal(found, expected)
    ran = []
    with threadpool_limits(limits=1, user_api="blas"), one_blas_thread():
        with on_lane(lambda: ran.append(threading.current_thread().name) or 7) as result:
            assert ran == []
        assert result() == 7 and result() == 7 and ran == [caller]
