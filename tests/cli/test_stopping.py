"""Ctrl-C stops a command even when Python drops the interrupt it raised."""

import os
import signal

import pytest

from scrapy_neardup.cli.stopping import stops_as_interrupt, until_stopped


class _SignalledWhileFinalized:
    """Sends SIGINT to this process from its finalizer, where Python drops the exception."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):  # the handler runs in here, and its KeyboardInterrupt is dropped
            pass


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_dropped_in_a_finalizer_still_stops_the_reading():
    for wrapped in (False, True):
        read = []
        lines = iter(["first", "second", "third"])
        with stops_as_interrupt():
            try:
                for line in until_stopped(lines) if wrapped else lines:
                    read.append(line)
                    if line == "first":
                        _SignalledWhileFinalized()  # released at once
            except KeyboardInterrupt:
                pass
        # Read directly, the run goes on past the interrupt; through until_stopped it stops.
        assert read == (["first"] if wrapped else ["first", "second", "third"])


def test_the_handlers_are_restored_after_a_command():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with stops_as_interrupt():
        assert signal.getsignal(signal.SIGINT) is not before[0]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
