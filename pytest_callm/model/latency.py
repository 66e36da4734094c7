"""Latency replay (`--callm-latency`, paper "Metrics").

Time to first token measured during a run is inflated by the run's own concurrency. So during the
run each process keeps a uniform sample of the requests its model answered (a reservoir: memory
stays bounded however long the run); after the run the samples are pooled (on the xdist
controller) and replayed streamed, one at a time, after two warm-up requests. The report gives the
median and p90 time to first spoken or tool-call token; a median over 1,000 ms is outside the
conversational AI category. A model whose endpoint does not stream (`[mode] stream = false`) is
replayed the same way, one request at a time, and each measures its full round trip (as the paper
measures Tell-1).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_callm.model.protocol import ModelRequest

CONVERSATIONAL_LIMIT_MS = 1000.0
WARMUPS = 2


class RequestSampler:
    """A uniform sample of at most `size` requests out of all offered (reservoir sampling)."""

    def __init__(self, size: int, seed: int = 0):
        self.size = size
        self.seen = 0
        self.requests: list[ModelRequest] = []
        self._rng = random.Random(seed)

    def offer(self, request: ModelRequest) -> None:
        self.seen += 1
        if len(self.requests) < self.size:
            self.requests.append(request)
        else:
            slot = self._rng.randrange(self.seen)
            if slot < self.size:
                self.requests[slot] = request

    def to_json(self) -> dict[str, Any]:
        return {"seen": self.seen, "requests": [asdict(r) for r in self.requests]}


def pool_samples(parts: list[dict[str, Any]], size: int, seed: int = 0) -> list[ModelRequest]:
    """One uniform sample of `size` from per-process samples, each weighted by what it stands for."""
    rng = random.Random(seed)
    keyed = []
    for part in parts:
        requests = part.get("requests") or []
        if not requests:
            continue
        weight = part["seen"] / len(requests)
        # Weighted sampling without replacement: keep the largest u ** (1 / w).
        keyed += [(rng.random() ** (1 / weight), i, r) for i, r in enumerate(requests)]
    keyed.sort(key=lambda k: (k[0], k[1]), reverse=True)
    return [ModelRequest(**r) for _, _, r in keyed[:size]]


def p90(values: list[float]) -> float:
    """Nearest-rank 90th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


@dataclass
class LatencyReport:
    model: str
    ttft_ms: list[float] = field(default_factory=list)
    warmups: int = 0
    failures: list[str] = field(default_factory=list)
    sampled_from: int = 0  # requests recorded during the run
    streamed: bool = True  # False: the endpoint does not stream; each time is a full round trip

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.ttft_ms) if self.ttft_ms else None

    @property
    def p90_ms(self) -> float | None:
        return p90(self.ttft_ms) if self.ttft_ms else None

    @property
    def conversational(self) -> bool | None:
        median = self.median_ms
        return None if median is None else median <= CONVERSATIONAL_LIMIT_MS

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "replayed": len(self.ttft_ms), "warmups": self.warmups,
                "sampled_from": self.sampled_from, "streamed": self.streamed, "median_ms": self.median_ms, "p90_ms": self.p90_ms,
                "conversational": self.conversational, "failures": self.failures, "ttft_ms": self.ttft_ms}

    def describe(self) -> str:
        how = "streamed" if self.streamed else "sent (the endpoint does not stream: full round trips)"
        head = (f"latency replay, model {self.model}: {len(self.ttft_ms)} request(s) sampled from "
                f"{self.sampled_from}, {how} one at a time after {self.warmups} warm-up(s)")
        if self.median_ms is None:
            lines = [head, "  no request could be replayed"]
        else:
            verdict = ("within the conversational category (median <= 1,000 ms)" if self.conversational else
                       "OUTSIDE the conversational category: median time to first token over 1,000 ms")
            what = "time to first token" if self.streamed else "round trip (taken as the time to first token)"
            lines = [head, f"  {what}: median {self.median_ms:.0f} ms, p90 {self.p90_ms:.0f} ms; {verdict}"]
        if self.failures:
            lines.append(f"  {len(self.failures)} replay(s) failed and are left out: {self.failures[0]}")
        return "\n".join(lines) + "\n"


async def replay(model, requests: list[ModelRequest], sampled_from: int, warmups: int = WARMUPS) -> LatencyReport:
    """Stream each request one at a time (after `warmups` unmeasured ones) and time its first token.

    `model` is an `OpenAIChatModel`; each replay stops reading at the first token, or, for an endpoint
    that does not stream, times the whole request.
    """
    config = getattr(model, "config", None)
    report = LatencyReport(model=model.name, sampled_from=sampled_from,
                           streamed=config.mode.stream if config is not None else True)
    if not requests:
        return report
    for i in range(warmups):
        try:
            await model.first_token_ms(requests[i % len(requests)])
            report.warmups += 1
        except Exception as e:  # a failed warm-up still warms the connection
            report.failures.append(f"warm-up: {e}")
    for request in requests:
        try:
            ttft = await model.first_token_ms(request)
        except Exception as e:
            report.failures.append(f"{type(e).__name__}: {e}")
            continue
        if ttft is not None:
            report.ttft_ms.append(round(ttft, 3))
    return report
