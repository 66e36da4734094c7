"""The latency replay: a bounded sample of the run's requests, replayed one at a time after warm-ups."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model.client import OpenAIChatModel
from pytest_callm.model.latency import LatencyReport, RequestSampler, p90, pool_samples, replay
from pytest_callm.model.protocol import ModelRequest
from pytest_callm.model.config import Mode, ModelConfig
from test_client import FAST, REQUEST


def numbered(i: int) -> ModelRequest:
    return ModelRequest("reception", "prompt", [{"role": "user", "content": str(i)}], [])


def test_the_sample_is_bounded_and_uniform_over_everything_offered():
    counts = [0] * 100
    for seed in range(300):
        sampler = RequestSampler(size=10, seed=seed)
        for i in range(100):
            sampler.offer(numbered(i))
        assert sampler.seen == 100 and len(sampler.requests) == 10
        for r in sampler.requests:
            counts[int(r.messages[0]["content"])] += 1
    first, last = sum(counts[:50]), sum(counts[50:])
    assert abs(first - last) < 0.15 * (first + last)  # a plain "keep the first ten" would give 3000 to 0


def test_pooled_samples_weigh_each_process_by_the_requests_it_saw():
    busy = {"seen": 900, "requests": [asdict(numbered(i)) for i in range(10)]}
    idle = {"seen": 10, "requests": [asdict(numbered(1000 + i)) for i in range(10)]}
    picked = [r for seed in range(50) for r in pool_samples([busy, idle], 10, seed)]
    from_idle = sum(int(r.messages[0]["content"]) >= 1000 for r in picked)
    assert len(picked) == 500 and from_idle < 40  # about 10/910 of them, not half
    assert pool_samples([{"seen": 0, "requests": []}], 5) == []


def test_replay_streams_two_warm_ups_then_each_sample_one_at_a_time(openai_server):
    openai_server.reset(delay_ms=60)
    config = ModelConfig(name="local", model="scripted", base_url=openai_server.base_url, api_key_env=None)
    model = OpenAIChatModel(config, None, FAST)

    async def go():
        try:
            return await replay(model, [REQUEST, numbered(1), numbered(2)], sampled_from=40)
        finally:
            await model.aclose()

    report = asyncio.run(go())
    log = openai_server.log
    assert len(log) == 5 and report.warmups == 2
    assert [r["body"]["messages"][-1] for r in log[2:]] == [REQUEST.messages[-1], *(numbered(i).messages[0] for i in (1, 2))]
    for before, after in zip(log, log[1:]):
        assert after["start"] >= before["end"]  # one at a time
    assert len(report.ttft_ms) == 3 and all(60 <= t < 310 for t in report.ttft_ms)
    assert report.conversational and report.sampled_from == 40


def test_a_median_over_a_second_is_outside_the_conversational_category():
    slow = LatencyReport("slow-model", ttft_ms=[900.0, 1200.0, 1300.0], warmups=2, sampled_from=50)
    assert slow.median_ms == 1200.0 and slow.conversational is False
    assert "OUTSIDE the conversational category" in slow.describe()
    fast = LatencyReport("fast-model", ttft_ms=[400.0, 1000.0, 3000.0], warmups=2, sampled_from=50)
    assert fast.conversational is True
    assert "median 1000 ms, p90 3000 ms; within the conversational category" in fast.describe()


def test_p90_is_the_nearest_rank():
    assert p90(list(range(1, 11))) == 9
    assert p90([5.0]) == 5.0
    assert p90(list(range(1, 101))) == 90


def replay_one_at_a_time(server, config):
    model = OpenAIChatModel(config, None, FAST)

    async def go():
        try:
            return await replay(model, [REQUEST, numbered(1)], sampled_from=2)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_a_non_streaming_endpoint_is_replayed_as_full_round_trips(openai_server):
    openai_server.reset(no_stream=True, delay_ms=10, total_ms=200)
    config = ModelConfig(name="whole", model="scripted", base_url=openai_server.base_url, api_key_env=None,
                         mode=Mode(stream=False))
    report = replay_one_at_a_time(openai_server, config)
    log = openai_server.log
    assert len(log) == 4 and all(r["body"]["stream"] is False for r in log)
    assert len(report.ttft_ms) == 2 and all(200 <= t < 450 for t in report.ttft_ms)
    assert report.streamed is False and report.to_json()["streamed"] is False
    assert "does not stream: full round trips" in report.describe()


def test_a_microthinking_model_is_replayed_to_its_first_spoken_token(openai_server):
    openai_server.reset()
    thought = {"text": "<think>The caller wants a booking, so I ask which day.</think>Which day?", "piece_ms": 15}
    openai_server.script(*[thought] * 4)
    config = ModelConfig(name="micro", model="scripted", base_url=openai_server.base_url, api_key_env=None,
                         mode=Mode(microthinking=True))
    report = replay_one_at_a_time(openai_server, config)
    assert len(report.ttft_ms) == 2 and all(t >= 15 * 15 for t in report.ttft_ms)  # 15 pieces of thought first
