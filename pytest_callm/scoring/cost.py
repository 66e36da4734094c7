"""Tokens, cost and estimated call duration (paper, "Metrics").

Cost applies the config's list prices to the tokens of every request of a call: uncached input,
cached input and output (reasoning included). A text call has no clock, so its duration is
estimated from the words both sides spoke at 0.605 s per word (the median pace of real voice calls
on the same tasks, dead air and tool time included); cost per hour is total cost over those hours.
Latency here is the time to first token measured during the run (under the run's concurrency); the
replay of `--callm-latency` measures it one request at a time (latency.py).

Some servers report no usage (llama.cpp's streams send no usage chunk). Tokens then count only the
requests that reported them, and are None where none did; cost is None whenever any request went
unreported, because a cost over part of the tokens would read as a low price, not as a gap.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Iterable

from pytest_callm.model.config import Prices
from pytest_callm.call.trajectory import Trajectory

SECONDS_PER_WORD = 0.605
TOKEN_KINDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")


def spoken_words(trajectory: Trajectory) -> int:
    """Words spoken by both sides: what the agent said and what the caller said."""
    return sum(len(turn.said.split()) for turn in trajectory.transcript)


def attempt_usage(trajectory: Trajectory, prices: Prices | None) -> dict[str, Any]:
    """The JSON-safe usage record of one call: timing, tokens, cost, estimated duration."""
    ttfts = [r.ttft_ms for r in trajectory.requests if r.ttft_ms is not None]
    unreported = sum(1 for r in trajectory.requests if r.usage is None)
    reported = len(trajectory.requests) - unreported
    tokens = {kind: sum((r.usage or {}).get(kind, 0) for r in trajectory.requests) if reported or not unreported
              else None for kind in TOKEN_KINDS}
    words = spoken_words(trajectory)
    cost = None
    if prices is not None and not unreported:
        cost = prices.cost(tokens["input_tokens"], tokens["cached_input_tokens"], tokens["output_tokens"])
    return {
        "requests": len(trajectory.requests),
        "requests_without_usage": unreported,
        "ttft_ms": [round(t, 3) for t in ttfts],
        "ttft_median_ms": round(statistics.median(ttfts), 3) if ttfts else None,
        **tokens,
        "cost_usd": round(cost, 8) if cost is not None else None,
        "spoken_words": words,
        "est_duration_s": round(words * SECONDS_PER_WORD, 3),
    }


@dataclass
class UsageGroup:
    label: str
    calls: int
    requests: int
    ttft_median_ms: float | None
    input_tokens: int | None  # each token count None when no request reported usage
    cached_input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cost_usd: float | None  # None when the model has no prices, or a request reported no usage
    est_hours: float
    requests_without_usage: int = 0

    @property
    def usage_reported(self) -> bool:
        return not self.requests_without_usage

    @property
    def cost_per_call(self) -> float | None:
        return self.cost_usd / self.calls if self.cost_usd is not None and self.calls else None

    @property
    def cost_per_hour(self) -> float | None:
        return self.cost_usd / self.est_hours if self.cost_usd is not None and self.est_hours else None

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "cost_per_call": self.cost_per_call, "cost_per_hour": self.cost_per_hour}


def _sum_reported(values: list[int | None]) -> int | None:
    reported = [v for v in values if v is not None]
    return sum(reported) if reported or not values else None


def usage_group(label: str, usages: Iterable[dict[str, Any]]) -> UsageGroup:
    usages = list(usages)
    ttfts = [t for u in usages for t in u["ttft_ms"]]
    costs = [u["cost_usd"] for u in usages]
    return UsageGroup(
        label, len(usages), sum(u["requests"] for u in usages),
        statistics.median(ttfts) if ttfts else None,
        *(_sum_reported([u[kind] for u in usages]) for kind in TOKEN_KINDS),
        sum(costs) if costs and None not in costs else None,
        sum(u["est_duration_s"] for u in usages) / 3600,
        sum(u.get("requests_without_usage", 0) for u in usages))


def usage_by_industry(results: list[dict[str, Any]]) -> tuple[dict[str, UsageGroup], UsageGroup | None]:
    """Per-industry groups and the run total, from attempt payloads that carry `usage`."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r.get("usage"):
            by.setdefault(r["industry"], []).append(r["usage"])
    groups = {industry: usage_group(industry, us) for industry, us in sorted(by.items())}
    total = usage_group("all industries", [u for us in by.values() for u in us]) if by else None
    return groups, total
