"""The worker of ``wwho serve``: requests run one at a time on one thread, in a fair order by cost
between client addresses, with a bound on the work waiting and time limits (:class:`Worker`).

A small text waits only for the request running, and a flood of cheap requests holds a costlier
one up by about its own cost, not until it gives up. The queue is bounded, one client address may
have only a few requests in it, and a request has a time limit while it waits and while it runs; a
request whose client has gone is dropped, and one that runs too long is told to stop. A refusal is
raised at once, without doing any of the work.

This module does not know what a job computes (:mod:`wwho.serve.app` hands it the work) or read
requests (:mod:`wwho.serve.body`).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from starlette.requests import Request

from wwho.serve.limits import Limits
from wwho.serve.refusals import Busy, ClientGone

#: What a request costs the worker besides its text, in the units of a job's cost (characters times
#: tokenizers): its layout, comparison and answer. The fair order counts it, so that requests of empty
#: texts are not free.
REQUEST_COST = 100


class Worker:
    """Runs jobs one at a time on one thread, in a weighted fair order between client addresses, with
    bounded waiting.

    Fair queuing by cost: each job is tagged with the cost its client has had run or queued since it
    last had nothing waiting or running, counted from where the worker's virtual time stood (the start
    tag of the job running) when it came, and the job with the lowest tag goes next. Between clients
    that have had nothing for a while, that is the cheapest job first (a small text waits only for the
    job running); a client queueing job after job waits its share, so a flood of cheap requests from a
    few addresses holds a costlier request of another up by about its own cost in work, not forever.
    :meth:`run` refuses at once (:class:`Busy`) a large job of a client that has ``per_client`` large
    jobs admitted, and any job of a client that has ``per_client_requests`` jobs admitted (429). When
    more than ``queue_cost`` of work waits, the jobs tagged last give their places up (503), the new one
    first where it is tagged last: a client with jobs queued already is tagged further on with each. A
    job waits at most ``wait_seconds`` and runs at most ``work_seconds`` (then 503); a job whose client
    disconnects is dropped while it waits and told to stop while it runs. A job that is told to stop
    keeps the thread until it does: at most one job ever runs."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wwho-serve")
        self._busy = False
        self._waiting: list[tuple[int, int, int, asyncio.Future]] = []  # a heap: (finish tag, arrival, start tag, granted)
        self._work_waiting = 0  # what the jobs waiting cost, REQUEST_COST each included
        self._arrivals = itertools.count()
        self._virtual = 0  # the start tag of the job running last
        self._finish: dict[str, int] = {}  # by client address, while it has jobs admitted: its last job's tag
        self._large: Counter[str] = Counter()  # large jobs admitted, by client address
        self._all: Counter[str] = Counter()  # all jobs admitted, by client address

    async def run(self, job, *, cost: int, client: str, large: bool, request: Request) -> bytes:
        """``job(stop)`` on the worker thread (``stop``: a :class:`threading.Event` it checks), its result."""
        limits = self.limits
        if large and self._large[client] >= limits.per_client:
            raise Busy(429, f"this client already has {limits.per_client} texts of more than "
                            f"{limits.small_chars:,} characters waiting or running; try again when they are answered")
        if self._all[client] >= limits.per_client_requests:
            raise Busy(429, f"this client already has {limits.per_client_requests} requests waiting or running; "
                            "try again when they are answered")
        gone = asyncio.ensure_future(_disconnected(request))
        counts = (self._all, self._large) if large else (self._all,)
        for count in counts:
            count[client] += 1
        try:
            await self._admit(cost, client, gone)
            return await self._work(job, gone)
        finally:
            gone.cancel()
            for count in counts:
                count[client] -= 1
                if not count[client]:
                    del count[client]
            if client not in self._all:
                self._finish.pop(client, None)  # nothing left: its next job is tagged from the present

    async def _admit(self, cost: int, client: str, gone: asyncio.Future) -> None:
        before = self._finish.get(client)
        start = max(self._virtual, before or 0)
        finish = self._finish[client] = start + cost + REQUEST_COST
        if not self._busy:
            self._busy = True
            self._virtual = start
            return
        limits = self.limits
        entry = (finish, next(self._arrivals), start, asyncio.get_running_loop().create_future())
        heapq.heappush(self._waiting, entry)
        self._work_waiting += entry[0] - entry[2]
        while self._work_waiting > limits.queue_cost:  # the jobs tagged last give their places up
            last = max(self._waiting)
            self._drop(last)
            if last is entry:
                if before is None:
                    del self._finish[client]
                else:
                    self._finish[client] = before
                raise Busy(503, "the server is busy (more requests are waiting than it does in a few seconds); "
                                "try again shortly")
            last[3].set_exception(Busy(503, "the server is busy with other requests; try again shortly"))
        granted = entry[3]
        try:
            await asyncio.wait({granted, gone}, timeout=limits.wait_seconds, return_when=asyncio.FIRST_COMPLETED)
            if granted.done():
                granted.result()  # Busy when another request took the place
                if not gone.done():
                    return
                raise ClientGone
            if gone.done():
                raise ClientGone
            raise Busy(503, f"the server was busy for {limits.wait_seconds:g} seconds; try again shortly")
        except BaseException:  # refused, gone, timed out, or cancelled: give up the place or the thread
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._release()  # the thread was handed to this request: hand it on
            else:
                granted.cancel()
                self._drop(entry)
            raise

    def _drop(self, entry: tuple) -> None:
        if entry in self._waiting:
            self._waiting.remove(entry)
            heapq.heapify(self._waiting)
            self._work_waiting -= entry[0] - entry[2]

    async def _work(self, job, gone: asyncio.Future) -> bytes:
        stop = threading.Event()
        running = asyncio.get_running_loop().run_in_executor(self._executor, job, stop)
        running.add_done_callback(self._finished)  # the thread is free only when the job has returned
        try:
            await asyncio.wait({running, gone}, timeout=self.limits.work_seconds, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            stop.set()
            raise
        if running.done():
            return running.result()
        stop.set()
        if gone.done():
            raise ClientGone
        raise Busy(503, f"the text took more than {self.limits.work_seconds:g} seconds; "
                        "try a shorter text or fewer tokenizers", retry_after=5)

    def _finished(self, running: asyncio.Future) -> None:
        if not running.cancelled():
            running.exception()  # retrieved here when nobody waits for it any more (a stopped job)
        self._release()

    def _release(self) -> None:
        while self._waiting:
            finish, _, start, granted = heapq.heappop(self._waiting)
            self._work_waiting -= finish - start
            if not granted.done():
                self._virtual = max(self._virtual, start)
                granted.set_result(None)
                return
        self._busy = False


async def _disconnected(request: Request) -> None:
    """Returns when the client has closed the connection (the body has been read: the next message
    is the disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
