"""NeMo Gym's own `ng_run` starting CALLM's resources server from the config we ship, then its
`ng_collect_rollouts` against the servers `ng_run` started: the commands of docs/rl.md, "With NeMo
Gym's `ng_run`", with Ray, NeMo Gym's head server, its simple agent and its vLLM model server, all
started by `ng_run` itself. Offline: `+skip_venv_if_present=true` and a `.venv` per server, each a
link to the NeMo Gym venv (tests/nemo_gym/make_venv.sh), so nothing is built from the network.

Two policies, both the scripted OpenAI-compatible server (tests/openai_server.py) following
legal/C4-H3's answer key: the shipped `callm_simple_agent` on `policy_model` as it is, and a second
agent and model server from an extra config file, with the intake packet sent by text. The caller is
a model too: a third scripted server playing a caller (its lines in order, then `hang_up`), reached
by the resources server through its plain httpx client inside NeMo Gym's venv (`caller` and
`caller_base_url` in the server's config). Slow (Ray and
five NeMo Gym processes on 2 cores): CI runs it in a step of its own after building the venv.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from openai_server import AnswerKeyAgent, ScriptCaller, ScriptedServer
from process_tree import session_pids
from pytest_callm.rl.nemo_gym_server import dataset_rows

from conftest import REPO

VENV = Path(os.environ.get("CALLM_NEMO_GYM_VENV", REPO / ".nemo-gym-venv"))
BIN = VENV / "bin"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (BIN / "ng_run").exists(), reason=f"no NeMo Gym venv at {VENV} (Python 3.12, nemo-gym 0.4 "
                                                              "with its ng_run): bash tests/nemo_gym/make_venv.sh"),
]

TASK = "legal/C4-H3"  # reception -> screening -> intake: two handoffs
TASK_PATH = REPO / "tasks" / TASK / "task.json"
SERVER_DIR = REPO / "examples" / "nemo_gym" / "resources_servers" / "callm"
PACKET_BY_TEXT = {"calls": [{"set": 9, "parameters": {"channel": "text"}}]}  # the task's trap: one value changed
SEEDS, REPEATS = (1, 2), 2
RIGHT, WRONG = "callm_simple_agent", "callm_wrong_agent"  # the shipped agent; the one the extra config adds
CALLER_LINES = ["Hi, I was hurt at work and I want to know my options.", "Sure, go ahead.", "Okay.", "Thanks, bye."]
SERVERS = 5  # callm_resources_server, 2 agents, 2 model servers (ng_run's head server is not one of them)
# ng_run sources `<uv_venv_dir>/<kind>/<name>/.venv` for each server it starts
VENV_LINKS = ("resources_servers/callm", "responses_api_agents/simple_agent", "responses_api_models/vllm_model")


def follower(**edit) -> ScriptedServer:
    # The agent loop ends at a reply without a function call: the policy calls the key's tools one per
    # request and speaks once, at the end (as in tests/test_rl_nemo_gym_real.py).
    return ScriptedServer(agent=AnswerKeyAgent(TASK_PATH, REPO / "industries", max_requests_per_turn=10**6, **edit))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def workspace(root: Path, wrong_base_url: str) -> Path:
    """The folder ng_run runs in: our server folder where ng_run looks for it first (cwd), the venv
    links under a folder of their own (`+uv_venv_dir`, so none lands in the checkout), and the extra
    config with the wrong policy's model server and agent."""
    (root / "resources_servers").mkdir(parents=True)
    (root / "resources_servers" / "callm").symlink_to(SERVER_DIR, target_is_directory=True)
    for server in VENV_LINKS:
        (root / "venvs" / server).mkdir(parents=True)
        (root / "venvs" / server / ".venv").symlink_to(VENV, target_is_directory=True)
    # the shipped agent and NeMo Gym's own model config, read by the NeMo Gym venv (this venv need not
    # have yaml); the extra config is written as JSON, which is YAML
    ours, models = json.loads(subprocess.check_output([str(BIN / "python"), "-c", """if True:
        import json, sys, yaml
        from nemo_gym import PARENT_DIR
        files = [sys.argv[1], PARENT_DIR / "responses_api_models/vllm_model/configs/vllm_model.yaml"]
        print(json.dumps([yaml.safe_load(open(f)) for f in files]))""", str(SERVER_DIR / "configs" / "callm.yaml")],
        text=True))
    agent = ours["callm_simple_agent"]
    agent["responses_api_agents"]["simple_agent"]["model_server"]["name"] = "wrong_policy_model"
    model = models["policy_model"]
    model["responses_api_models"]["vllm_model"].update(base_url=wrong_base_url, api_key="unused", model="scripted")
    extra = {WRONG: agent, "wrong_policy_model": model}
    (root / "wrong_policy.yaml").write_text(json.dumps(extra, indent=1))
    return root


def rss_mib(pids) -> float:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total / 2**20


def wait_for(what: str, check, ng_run: subprocess.Popen, log: Path, timeout: float):
    """Until `check()` answers something true: a server answering, a file written. Fails at once when
    ng_run exits first (it stops when a server it started dies)."""
    deadline = time.monotonic() + timeout
    while not (answer := check()):
        if ng_run.poll() is not None:
            raise AssertionError(f"ng_run exited ({ng_run.returncode}) before {what}:\n{log.read_text()[-6000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s\n{log.read_text()[-6000:]}")
        time.sleep(0.2)
    return answer


def answers(url: str, path: str = "/"):
    try:
        return httpx.get(url + path, timeout=5)
    except httpx.TransportError:
        return None


def gone(sid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while session_pids(sid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def signal_all(pids, signum) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def stop(ng_run: subprocess.Popen) -> list[str]:
    """ng_run's own shutdown (Ctrl-C: it interrupts its servers, and Ray shuts down as it exits), then
    whatever of its session outlives it by 10 s, by pid (a failed start-up leaves its servers running).
    Returns the command lines that had to be ended so."""
    if ng_run.poll() is None:
        ng_run.send_signal(signal.SIGINT)
        try:
            ng_run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            ng_run.kill()
            ng_run.wait()
    if gone(ng_run.pid, within=10):  # Ray's dashboard processes take a few seconds after ng_run
        return []
    left = session_pids(ng_run.pid)
    signal_all(left, signal.SIGTERM)
    if not gone(ng_run.pid, within=15):
        signal_all(session_pids(ng_run.pid), signal.SIGKILL)  # a server stuck in ray.init ignores SIGTERM
        gone(ng_run.pid, within=10)
    return sorted(left.values())


def test_ng_run_starts_our_config_and_ng_collect_rollouts_scores_every_rollout(tmp_path, capsys):
    began, load = time.monotonic(), os.getloadavg()[0]
    head = free_port()  # not NeMo Gym's default 11000, which tests/nemo_gym/drive.py's head server takes
    head_args = ["+head_server.host=127.0.0.1", f"+head_server.port={head}"]
    env = {**os.environ, "PYTHONPATH": str(REPO),  # our code from this checkout, whichever the venv was built from
           "RAY_USAGE_STATS_ENABLED": "0"}  # offline: no usage report
    log = tmp_path / "ng_run.log"
    with follower() as right, follower(edit=PACKET_BY_TEXT) as wrong, \
            ScriptedServer(caller=ScriptCaller(CALLER_LINES)) as caller:
        root = workspace(tmp_path / "gym", wrong.base_url)
        command = [str(BIN / "ng_run"),
                   "+config_paths=[resources_servers/callm/configs/callm.yaml,"
                   "responses_api_models/vllm_model/configs/vllm_model.yaml,wrong_policy.yaml]",
                   f"+policy_base_url={right.base_url}", "+policy_api_key=unused", "+policy_model_name=scripted",
                   "+skip_venv_if_present=true", f"+uv_venv_dir={root / 'venvs'}", *head_args,
                   # one pack and task: the shipped config loads three packs and the training split
                   f"++callm_resources_server.resources_servers.callm.tasks=[tasks/{TASK}]",
                   "++callm_resources_server.resources_servers.callm.packs=[industries/legal]",
                   # the caller: a model (the scripted caller server), not the offline caller
                   "++callm_resources_server.resources_servers.callm.caller=scripted",
                   f"++callm_resources_server.resources_servers.callm.caller_base_url={caller.base_url}",
                   "++callm_resources_server.resources_servers.callm.caller_api_key_env=none"]
        with log.open("w") as out:
            ng_run = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        killed: list[str] = []
        try:
            # NeMo Gym's head server lists the servers ng_run started once it has started them all
            head_url = f"http://127.0.0.1:{head}"
            instances = wait_for("ng_run's head server listing its servers",
                                 lambda: (r := answers(head_url, "/server_instances")) and r.status_code == 200
                                 and len(r.json()) == SERVERS and r.json(), ng_run, log, 300)
            urls = {i["config_path"]: i["url"] for i in instances}
            for name, url in urls.items():
                wait_for(f"{name} answering", lambda: answers(url), ng_run, log, 300)
            up, held = time.monotonic() - began, rss_mib(session_pids(ng_run.pid))
            assert answers(urls["callm_resources_server"], "/health").status_code == 200

            rows = dataset_rows(urls["callm_resources_server"], [TASK], SEEDS)
            rows_path = root / "rows.jsonl"
            rows_path.write_text("".join(json.dumps({**row, "agent_ref": {"name": agent}}) + "\n"
                                         for agent in (RIGHT, WRONG) for row in rows))
            collecting = time.monotonic()
            done = subprocess.run([str(BIN / "ng_collect_rollouts"), f"+input_jsonl_fpath={rows_path}",
                                   f"+output_jsonl_fpath={root / 'rollouts.jsonl'}", f"+num_repeats={REPEATS}",
                                   *head_args], cwd=root, env=env, capture_output=True, text=True, timeout=300)
            collected = time.monotonic() - collecting
            assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
            rollouts = [json.loads(line) for line in (root / "rollouts.jsonl").read_text().splitlines()]
            metrics = json.loads((root / "rollouts_aggregate_metrics.json").read_text())
        finally:
            stopping = time.monotonic()
            killed = stop(ng_run)
            stopped = time.monotonic() - stopping
            assert not session_pids(ng_run.pid), f"left running: {session_pids(ng_run.pid)}"
        # the rollouts went through ng_run's model servers to the two scripted policies, and the
        # caller's turns through the resources server to the caller model
        assert right.requests and wrong.requests
        assert caller.requests and all(ScriptCaller.is_caller_request(b) for b in caller.requests)
        assert all(b["stream"] is False for b in caller.requests)  # the plain client: one JSON body each

    # Every rollout scored: 2 agents x 2 seeds x 2 repeats, each its own session, each call ended by the policy.
    assert len(rollouts) == 2 * len(SEEDS) * REPEATS
    assert len({r["session_id"] for r in rollouts}) == len(rollouts)
    for r in rollouts:
        assert r["task"] == TASK and r["end_reason"] == "agent_end_call", r
    by_agent = {name: [r for r in rollouts if r["agent_ref"]["name"] == name] for name in (RIGHT, WRONG)}
    assert [r["reward"] for r in by_agent[RIGHT]] == [1.0] * len(SEEDS) * REPEATS, \
        [r["explanation"] for r in by_agent[RIGHT]]
    assert sorted(r["seed"] for r in by_agent[RIGHT]) == sorted(list(SEEDS) * REPEATS)
    assert [r["reward"] for r in by_agent[WRONG]] == [0.0] * len(SEEDS) * REPEATS
    for r in by_agent[WRONG]:
        assert r["reward_components"] == {"tools": 0.0, "handoff": 1.0, "database": 0.0, "words": 1.0}
        assert "send_intake_packet" in r["explanation"]
    # each rollout opened with the caller model's first line (the row's, and the rollout's own)
    assert all(row["responses_create_params"]["input"][2]["content"] == CALLER_LINES[0] for row in rows)

    # /aggregate_metrics answered NeMo Gym's call through each agent.
    entries = {m["agent_ref"]["name"]: m for m in metrics}
    assert set(entries) == {RIGHT, WRONG}
    for name, reward in ((RIGHT, 1.0), (WRONG, 0.0)):
        assert entries[name]["key_metrics"] == {"mean/reward": reward, "pass^k": reward}
        assert entries[name]["agent_metrics"]["rollouts"] == len(SEEDS) * REPEATS
        assert [g["rollouts"] for g in entries[name]["group_level_metrics"]] == [REPEATS] * len(SEEDS)

    with capsys.disabled():
        print(f"\nng_run: servers answering after {up:.1f} s ({held:.0f} MiB in its processes), "
              f"{len(rollouts)} rollouts collected in {collected:.1f} s, stopped in {stopped:.1f} s "
              f"(still running 10 s after ng_run exited, ended by the test: {killed or 'none'}), "
              f"{time.monotonic() - began:.1f} s in all; "
              f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
