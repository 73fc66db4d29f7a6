"""The bounded batching queue in front of the core, and the page's timeline geometry."""

from __future__ import annotations

import asyncio
import threading

import pytest

from factscout.errors import InputError
from factscout.render.view import timeline_view
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


def _gate_and_log():
    """A core whose first call blocks until released, and which logs each batch it runs."""
    gate, started, calls = threading.Event(), threading.Event(), []

    def handler(kind):
        def run(items):
            started.set()
            gate.wait(10)
            calls.append((kind, list(items)))
            return list(items)

        return run

    return gate, started, calls, handler


def test_an_interactive_job_queued_behind_batch_claims_runs_next():
    gate, started, calls, handler = _gate_and_log()
    runner = CoreRunner({"check": handler("check"), "job": handler("job")}, background=("job",), max_background_batch=2)

    async def go():
        batch = [asyncio.create_task(runner.submit("job", i, uid=i)) for i in range(7)]
        await asyncio.to_thread(started.wait, 10)  # the first batch claims are running
        interactive = asyncio.create_task(runner.submit("check", "now"))
        await asyncio.sleep(0.05)
        assert runner.pending == 1 and runner.background_pending == 7
        gate.set()
        return await interactive, await asyncio.gather(*batch)

    now, done = asyncio.run(go())
    assert now == "now" and done == list(range(7))
    # the running batch finishes; the interactive check goes next; batch order is otherwise kept
    assert calls == [("job", [0, 1]), ("check", ["now"]), ("job", [2, 3]), ("job", [4, 5]), ("job", [6])]
    assert runner.stats.background_done == 7 and runner.stats.done == 8


def test_batch_claims_are_not_starved_by_a_stream_of_interactive_requests():
    gate, started, calls, handler = _gate_and_log()
    runner = CoreRunner(
        {"check": handler("check"), "job": handler("job")},
        background=("job",),
        max_batch=1,
        max_background_batch=1,
        starve_after=3,
    )

    async def go():
        first = asyncio.create_task(runner.submit("check", "first"))
        await asyncio.to_thread(started.wait, 10)
        batch = [asyncio.create_task(runner.submit("job", i)) for i in range(2)]
        interactive = [asyncio.create_task(runner.submit("check", f"c{i}")) for i in range(8)]
        await asyncio.sleep(0.05)
        gate.set()
        await asyncio.gather(first, *batch, *interactive)

    asyncio.run(go())
    order = [kind if kind == "job" else items[0] for kind, items in calls]
    # one batch claim after every 3 interactive batches while batch work waits
    assert order == ["first", "c0", "c1", "c2", "job", "c3", "c4", "c5", "job", "c6", "c7"]


def test_batch_claims_never_make_interactive_requests_busy():
    gate, started, _, handler = _gate_and_log()
    runner = CoreRunner({"check": handler("check"), "job": handler("job")}, background=("job",), max_pending=2)

    async def go():
        batch = [asyncio.create_task(runner.submit("job", i)) for i in range(10)]  # beyond max_pending
        await asyncio.to_thread(started.wait, 10)
        checks = [asyncio.create_task(runner.submit("check", i)) for i in range(2)]
        await asyncio.sleep(0.05)
        with pytest.raises(Saturated):  # the third interactive request is the one refused
            await runner.submit("check", 2)
        gate.set()
        return await asyncio.gather(*batch), await asyncio.gather(*checks)

    assert asyncio.run(go()) == (list(range(10)), [0, 1])
    with pytest.raises(InputError, match="background kinds without a handler: nope"):
        CoreRunner({"check": list}, background=("nope",))


def test_unknown_job_kinds_and_bad_bounds_are_errors():
    with pytest.raises(InputError, match="max_pending, max_batch"):
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
