"""The bell wakes waiters of one key, from any thread, and never loses a ring between a
subscriber's read and its wait."""

from __future__ import annotations

import asyncio
import threading

from backend.bell import Bell


def test_a_ring_from_another_thread_wakes_only_that_key() -> None:
    bell = Bell()

    async def scenario() -> tuple[bool, bool, bool]:
        with bell.listen(("config", 1)) as one, bell.listen(("config", 2)) as two:
            ringer = threading.Thread(target=bell.ring, args=(("config", 1),))
            ringer.start()
            ringer.join()
            woke = await one.wait(5.0)
            other = await two.wait(0)
            again = await one.wait(0)  # a ring is consumed by the wait that saw it
        return woke, other, again

    assert asyncio.run(scenario()) == (True, False, False)
    assert bell.listening(("config", 1)) == 0


def test_a_ring_before_the_wait_is_kept() -> None:
    bell = Bell()

    async def scenario() -> bool:
        with bell.listen("k") as listener:
            bell.ring("k")  # e.g. a commit between the listener's read and its wait
            return await listener.wait(0)

    assert asyncio.run(scenario()) is True


def test_rings_without_listeners_and_after_leaving_are_harmless() -> None:
    bell = Bell()
    bell.ring("nobody")

    async def scenario() -> None:
        with bell.listen("k"):
            assert bell.listening("k") == 1

    asyncio.run(scenario())
    bell.ring("k")
    assert bell.listening("k") == 0
