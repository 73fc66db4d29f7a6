"""The bounded batching queue in front of the core, and the page's timeline geometry."""

from __future__ import annotations

import asyncio
import threading

import pytest

from factscout.errors import InputError
from factscout.serve.page import timeline_view
from factscout.serve.runner import CoreRunner, Saturated


def test_waiting_jobs_of_one_kind_and_group_run_as_one_batch():
    calls: list[list[int]] = []

    def double(items):
        calls.append(list(items))
        return [2 * i for i in items]

    runner = CoreRunner({"double": double}, max_batch=4)

    async def go():
        jobs = [runner.submit("double", i, group="g") for i in range(6)]
        jobs.append(runner.submit("double", 100, group="other"))
        return await asyncio.gather(*jobs)

    assert asyncio.run(go()) == [0, 2, 4, 6, 8, 10, 200]
    assert calls == [[0, 1, 2, 3], [4, 5], [100]]  # at most max_batch; groups never mixed
    assert runner.stats.largest_batch == 4 and runner.stats.done == 7 and runner.pending == 0


def test_a_uid_already_in_the_batch_waits_for_the_next_one():
    calls: list[list[str]] = []

    def echo(items):
        calls.append(list(items))
        return list(items)

    runner = CoreRunner({"echo": echo})

    async def go():
        return await asyncio.gather(*(runner.submit("echo", x, uid=x) for x in ["a", "b", "a", "c"]))

    assert asyncio.run(go()) == ["a", "b", "a", "c"]
    assert calls == [["a", "b", "c"], ["a"]]


def test_a_failing_item_fails_alone():
    def strict(items):
        if any(i < 0 for i in items):
            raise InputError(f"negative in {items}")
        return [i + 1 for i in items]

    runner = CoreRunner({"inc": strict})

    async def go():
        return await asyncio.gather(*(runner.submit("inc", i) for i in [1, -1, 2]), return_exceptions=True)

    one, bad, two = asyncio.run(go())
    assert (one, two) == (2, 3)
    assert isinstance(bad, InputError) and "negative in [-1]" in str(bad)


def test_the_queue_is_bounded():
    release = threading.Event()

    def slow(items):
        release.wait(10)
        return list(items)

    runner = CoreRunner({"slow": slow}, max_pending=3, retry_after=7)

    async def go():
        held = [asyncio.create_task(runner.submit("slow", i)) for i in range(3)]
        await asyncio.sleep(0.05)
        with pytest.raises(Saturated) as refused:
            await runner.submit("slow", 99)
        release.set()
        return refused.value, await asyncio.gather(*held)

    refused, served = asyncio.run(go())
    assert refused.retry_after == 7 and "3 requests queued or running" in str(refused)
    assert served == [0, 1, 2] and runner.stats.rejected == 1


def test_unknown_job_kinds_and_bad_bounds_are_errors():
    with pytest.raises(InputError, match="max_pending and max_batch"):
        CoreRunner({}, max_pending=0)
    runner = CoreRunner({"a": list})
    with pytest.raises(InputError, match="no job kind 'b'; known: _call, a"):
        asyncio.run(runner.submit("b", 1))


def test_timeline_places_dates_and_the_claim_on_one_axis():
    report = {
        "date": "2020-01-11",
        "evidence": [
            {"passage_id": "a", "stance": "supports", "rank": 2},
            {"passage_id": "b", "stance": "refutes", "rank": 1},
        ],
        "timeline": [
            {"passage_id": "a", "published": "2020-01-01", "days_from_claim": -10, "after_claim": False},
            {"passage_id": "b", "published": "2020-01-21", "days_from_claim": 10, "after_claim": True},
        ],
    }
    view = timeline_view(report)
    # 20 days span the 720 usable pixels from x=40: the claim sits in the middle
    assert [p["x"] for p in view["points"]] == [40, 760]
    assert view["claim_x"] == 400
    assert [p["after_claim"] for p in view["points"]] == [False, True]
    assert [p["rank"] for p in view["points"]] == [2, 1]
    assert timeline_view({**report, "timeline": []})["points"] == []
