"""Cost and estimated duration: list prices on recorded usage, 0.605 s per spoken word."""

from __future__ import annotations

import pytest

from pytest_callm.scoring.cost import SECONDS_PER_WORD, attempt_usage, usage_by_industry
from pytest_callm.model.config import Prices
from pytest_callm.call.trajectory import RequestRecord, Trajectory, TranscriptTurn


def call(ttfts=(100.0, 300.0), usage=None, said=("Hello, thanks for calling.", "Hi, I need my records.")):
    usage = usage or {"input_tokens": 1000, "cached_input_tokens": 3000, "output_tokens": 200, "reasoning_tokens": 50}
    t = Trajectory(call_id="c", task_id="T", industry="vet_clinic", attempt=1, model="m")
    t.requests = [RequestRecord(i, "reception", 1, 0.0, 1.0, ttft, "", [], usage=dict(usage))
                  for i, ttft in enumerate(ttfts)]
    t.transcript = [TranscriptTurn("agent" if i % 2 == 0 else "caller", s, 0.0) for i, s in enumerate(said)]
    return t


def test_cost_applies_list_prices_to_uncached_cached_and_output_tokens():
    usage = attempt_usage(call(), Prices(input=2.0, output=8.0, cached_input=0.5))
    # two requests: 2000 uncached, 6000 cached, 400 output (reasoning included)
    assert usage["cost_usd"] == pytest.approx((2000 * 2.0 + 6000 * 0.5 + 400 * 8.0) / 1e6)
    assert (usage["input_tokens"], usage["cached_input_tokens"], usage["output_tokens"], usage["reasoning_tokens"]) == \
        (2000, 6000, 400, 100)


def test_duration_is_estimated_from_words_spoken_by_both_sides():
    usage = attempt_usage(call(), None)
    assert usage["spoken_words"] == 9
    assert usage["est_duration_s"] == pytest.approx(9 * SECONDS_PER_WORD)
    assert SECONDS_PER_WORD == 0.605


def test_a_model_without_prices_has_no_cost_rather_than_zero():
    assert attempt_usage(call(), None)["cost_usd"] is None


def test_each_attempt_records_its_request_timings():
    usage = attempt_usage(call(ttfts=(100.0, None, 300.0, 500.0)), None)
    assert usage["requests"] == 4 and usage["ttft_ms"] == [100.0, 300.0, 500.0] and usage["ttft_median_ms"] == 300.0


def test_per_industry_groups_give_median_ttft_tokens_cost_and_cost_per_hour():
    prices = Prices(input=2.0, output=8.0, cached_input=0.5)
    results = [{"industry": "vet_clinic", "usage": attempt_usage(call(ttfts=t), prices)}
               for t in ((100.0, 200.0), (300.0, 400.0, 500.0))]
    results.append({"industry": "legal", "usage": attempt_usage(call(ttfts=(900.0,)), prices)})
    results.append({"industry": "legal", "passed": None})  # an infrastructure error carries no usage
    groups, total = usage_by_industry(results)
    vet = groups["vet_clinic"]
    assert (vet.calls, vet.requests, vet.ttft_median_ms) == (2, 5, 300.0)
    assert vet.input_tokens == 5000 and vet.cost_usd == pytest.approx(sum(r["usage"]["cost_usd"] for r in results[:2]))
    assert vet.est_hours == pytest.approx(2 * 9 * 0.605 / 3600)
    assert vet.cost_per_hour == pytest.approx(vet.cost_usd / vet.est_hours)
    assert vet.cost_per_call == pytest.approx(vet.cost_usd / 2)
    assert groups["legal"].calls == 1 and total.calls == 3 and total.ttft_median_ms == 350.0


def test_without_prices_the_groups_have_no_cost():
    groups, total = usage_by_industry([{"industry": "x", "usage": attempt_usage(call(), None)}])
    assert total.cost_usd is None and total.cost_per_hour is None and total.input_tokens == 2000


def unreported_call(reported: int, unreported: int) -> Trajectory:
    t = call(ttfts=(100.0,) * (reported + unreported))
    for r in t.requests[reported:]:
        r.usage = None  # a server that sends no usage (llama.cpp's streams)
    return t


def test_a_server_that_reports_no_usage_gives_no_tokens_and_no_cost_rather_than_zero():
    prices = Prices(input=2.0, output=8.0)
    usage = attempt_usage(unreported_call(0, 3), prices)
    assert usage["requests_without_usage"] == 3
    assert usage["input_tokens"] is None and usage["output_tokens"] is None and usage["cost_usd"] is None
    groups, total = usage_by_industry([{"industry": "x", "usage": usage}])
    assert total.input_tokens is None and total.cost_usd is None and total.cost_per_hour is None
    assert total.requests_without_usage == 3 and not total.usage_reported


def test_usage_reported_for_some_requests_counts_their_tokens_but_gives_no_cost():
    prices = Prices(input=2.0, output=8.0)
    usage = attempt_usage(unreported_call(1, 2), prices)
    assert usage["input_tokens"] == 1000 and usage["cost_usd"] is None
    both = [{"industry": "x", "usage": usage}, {"industry": "x", "usage": attempt_usage(call(), prices)}]
    _, total = usage_by_industry(both)
    assert total.input_tokens == 3000 and total.cost_usd is None and total.requests_without_usage == 2


def test_the_usage_table_says_not_reported():
    from pytest_callm.report.summary import render_usage

    groups, total = usage_by_industry([{"industry": "x", "usage": attempt_usage(unreported_call(0, 2), None)}])
    text = render_usage(groups, total, "smollm2-local")
    assert "not reported" in text and "Usage not reported by the server for 2 of 2 requests" in text
