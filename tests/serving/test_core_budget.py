"""`CoreBudget`: a query alone gets every core, one beside another query of the server
(in any of its processes), with OpenBLAS and the second encoder held to that."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np  # noqa: F401 - OpenBLAS loaded, so its limit can be read
import pytest
from threadpoolctl import ThreadpoolController

from memory.serving.core_budget import CoreBudget
from transforms.embedding import ENCODER_THREADS


@pytest.fixture
def budget() -> Iterator[CoreBudget]:
    made = CoreBudget.create(cores=4)
    yield made
    made.remove()


def blas_threads() -> set[int]:
    return {
        lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers
    }


def test_a_query_alone_gets_every_core_and_one_beside_another(budget: CoreBudget) -> None:
    other_process = CoreBudget(budget.path, cores=4)  # its own descriptor, as a worker has
    with budget.share() as alone:
        assert alone == 4
        with other_process.share() as beside:
            assert beside == 1
    with other_process.share() as again:
        assert again == 4


def test_the_encoder_and_blas_get_the_share_while_the_query_runs(budget: CoreBudget) -> None:
    before = blas_threads()
    assert ENCODER_THREADS.get() is None
    with budget.share() as threads:
        assert ENCODER_THREADS.get() == threads == 4
        assert blas_threads() == {4} or not before  # no OpenBLAS found: nothing to limit
    assert ENCODER_THREADS.get() is None
    assert blas_threads() == before


def test_the_count_is_released_when_the_query_fails(budget: CoreBudget) -> None:
    with pytest.raises(RuntimeError), budget.share():
        raise RuntimeError("query failed")
    with budget.share() as threads:
        assert threads == 4


def test_the_file_is_removed() -> None:
    made = CoreBudget.create(cores=2)
    assert made.path.exists()
    made.remove()
    made.remove()  # twice is fine
    assert not made.path.exists()


def test_requests_of_one_worker_at_once_leave_the_count_where_it_was(budget: CoreBudget) -> None:
    import sys
    import threading

    def queries() -> None:
        for _ in range(300):
            with budget.share():
                pass

    threads = [threading.Thread(target=queries) for _ in range(6)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads interleave between the count's read and write
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    with budget.share() as threads_now:
        assert threads_now == 4
