"""StoreCalls against a real redis-server that stops and starts again: the circuit breaker,
the back-off, and calls on the store's own thread kept in order."""

from __future__ import annotations

import signal

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from support.redis_server import start_redis

from scrapy_neardup import open_store
from scrapy_neardup.crawl.compat import wait
from scrapy_neardup.crawl.storecalls import FIRST_BACKOFF, MAX_BACKOFF, StoreCalls, StoreDown
from scrapy_neardup.stores import StoreUnavailable


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server():
    server = start_redis()
    yield server
    server.stop()


def test_a_store_found_down_is_not_called_until_its_back_off_has_passed(server):
    """The server is stopped (SIGSTOP: calls time out) and goes on later with its data (SIGCONT)."""
    params = {"retries": 0, "socket_timeout": 0.3, "socket_connect_timeout": 0.3, "health_check_interval": 0}
    store = open_store(server.url(0), redis_params=params)
    clock = Clock()
    calls = StoreCalls(store.describe(), threaded=False, clock=clock)
    assert calls.run(store.count) == 0
    server.process.send_signal(signal.SIGSTOP)
    with pytest.raises(StoreUnavailable) as lost:
        calls.run(store.count)
    assert not isinstance(lost.value, StoreDown) and calls.down and calls.outages == 1
    called = []
    with pytest.raises(StoreDown):
        calls.run(lambda: called.append(1))
    assert called == []  # not even tried
    clock.now += FIRST_BACKOFF
    with pytest.raises(StoreUnavailable):  # one try after the back-off; still down
        calls.run(store.count)
    clock.now += FIRST_BACKOFF  # the back-off doubled: not yet
    with pytest.raises(StoreDown):
        calls.run(store.count)
    server.process.send_signal(signal.SIGCONT)
    clock.now += FIRST_BACKOFF
    assert calls.run(store.count) == 0  # back: calls go through again
    assert not calls.down and calls.outages == 1
    store.close()


def test_the_back_off_stops_growing(server):
    store = open_store(server.url(0), redis_params={"retries": 0})
    clock = Clock()
    calls = StoreCalls(store.describe(), threaded=False, clock=clock)
    server.process.kill()
    server.process.wait()
    waits = []
    for _ in range(8):
        with pytest.raises(StoreUnavailable):
            calls.run(store.count)
        start = clock.now
        while calls.down:
            clock.now += 0.5
        waits.append(clock.now - start)
    assert waits[:3] == [FIRST_BACKOFF, 2 * FIRST_BACKOFF, 4 * FIRST_BACKOFF]
    assert max(waits) == MAX_BACKOFF
    store.close()


@deferred_f_from_coro_f
async def test_calls_on_the_store_thread_keep_their_order_and_fail_fast_once_down(server):
    import threading

    store = open_store(server.url(0), redis_params={"retries": 0})
    calls = StoreCalls(store.describe(), threaded=True)
    threads, order = set(), []

    def step(n: int) -> int:
        threads.add(threading.get_ident())
        order.append(n)
        return store.count()

    results = [calls.run(step, n) for n in range(20)]
    assert [await wait(r) for r in results] == [0] * 20
    assert order == list(range(20)) and threading.get_ident() not in threads and len(threads) == 1
    server.process.kill()
    server.process.wait()
    pending = [calls.run(step, n) for n in range(20, 25)]
    outcomes = []
    for deferred in pending:
        try:
            await wait(deferred)
        except StoreUnavailable as exc:
            outcomes.append(type(exc).__name__)
    assert outcomes == ["StoreUnavailable"] + ["StoreDown"] * 4  # queued calls did not wait on the server
    assert order == list(range(21))
    await wait(calls.close(store.close))


@deferred_f_from_coro_f
async def test_a_waiting_caller_is_told_to_retry_after_the_back_off_and_to_give_up_past_the_bound(server):
    store = open_store(server.url(0), redis_params={"retries": 0})
    clock = Clock()
    calls = StoreCalls(store.describe(), threaded=False, down_timeout=10.0, clock=clock)
    assert await calls.wait_to_retry() is True and not calls.given_up  # not down: no wait
    server.process.kill()
    server.process.wait()
    with pytest.raises(StoreUnavailable):
        calls.run(store.count)
    assert await calls.wait_to_retry(closing=lambda: True) is False  # the crawl is closing
    clock.now += FIRST_BACKOFF
    assert await calls.wait_to_retry() is True  # the back-off has passed: try again
    clock.now += 10.0
    assert calls.given_up and calls.down_for() == 10.0 + FIRST_BACKOFF
    assert await calls.wait_to_retry() is False
    store.close()
