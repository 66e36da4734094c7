"""NeMo Gym's own code collecting rollouts against CALLM's resources server (run by the NeMo Gym venv's
Python: `tests/nemo_gym/make_venv.sh`; driven by tests/test_rl_nemo_gym_real.py).

What is NeMo Gym's here, as `ng_run` plus `ng_collect_rollouts` would run it: its config parser
(merging and validating our shipped `callm.yaml` with its own `vllm_model.yaml`, ports filled in), its
head server, its simple agent and its vLLM model server (Responses API to Chat Completions, against
the scripted policy server the test runs), its rollout collection with `/aggregate_metrics`. Our
resources server starts as `ng_run` starts one: `python app.py` in its folder with the config in the
environment, and each of NeMo Gym's servers in a process of its own, as `ng_run` runs them (they share
one aiohttp client per process). What is left out: `ng_run`'s building of a venv per server (uv, from
the network) and Ray, which none of these servers uses (`python drive.py --serve NAME` builds and
serves one as `run_webserver` does, less its start of a Ray cluster). `ng_run` itself, Ray and all,
is tests/test_rl_ng_run.py's.

    python drive.py --config CALLM_YAML --policy NAME=URL ... --task legal/C4-H3 --seeds 1 2
                    --repeats 2 --out DIR

Each `--policy` gets a model server (`policy_NAME`) and an agent (`callm_agent_NAME`) of its own; the
rows are every task x seed for every agent. Prints one JSON line: the rollouts' verify responses
(without their bodies) and each agent's aggregate metrics, as NeMo Gym wrote them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from copy import deepcopy
from pathlib import Path

import uvicorn
from nemo_gym import PARENT_DIR
from nemo_gym.global_config import (NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME, NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME,
                                    GlobalConfigDictParserConfig, get_first_server_config_dict,
                                    get_global_config_dict)
from nemo_gym.rollout_collection import RolloutCollectionConfig, RolloutCollectionHelper
from nemo_gym.server_utils import HeadServer, ServerClient
from omegaconf import OmegaConf
from responses_api_agents.simple_agent.app import SimpleAgent
from responses_api_models.vllm_model.app import VLLMModel

from pytest_callm.rl.nemo_gym_server import dataset_rows

RESOURCES = "callm_resources_server"
AGENT = "callm_simple_agent"  # the agent block of the shipped config, copied once per policy


def global_config(shipped: Path, policies: dict[str, str], tasks: list[str], packs: list[str]) -> dict:
    """The merged, validated config: NeMo Gym's parser over our file and its vLLM model file."""
    ours = OmegaConf.to_container(OmegaConf.load(shipped))
    model = OmegaConf.to_container(OmegaConf.load(PARENT_DIR / "responses_api_models/vllm_model/configs/vllm_model.yaml"))
    extra: dict = {}
    for name, url in policies.items():
        block = deepcopy(model["policy_model"])
        block["responses_api_models"]["vllm_model"].update(base_url=url, api_key="unused", model="scripted",
                                                            uses_reasoning_parser=False)
        extra[f"policy_{name}"] = block
        agent = deepcopy(ours[AGENT])
        agent["responses_api_agents"]["simple_agent"]["model_server"]["name"] = f"policy_{name}"
        extra[f"callm_agent_{name}"] = agent
    resources = {RESOURCES: {"resources_servers": {"callm": {"tasks": tasks, "packs": packs}}},
                 "global_aiohttp_client_request_debug": bool(os.environ.get("CALLM_DRIVE_LOG"))}
    initial = OmegaConf.merge(OmegaConf.create({k: v for k, v in ours.items() if k != AGENT}),
                              OmegaConf.create(extra), OmegaConf.create(resources))
    parsed = get_global_config_dict(GlobalConfigDictParserConfig(
        initial_global_config_dict=initial, skip_load_from_cli=True, skip_load_from_dotenv=True))
    return parsed


def start(config, name: str, command: list[str], folder: Path) -> subprocess.Popen:
    """As `ng_run` does: the server's command in its folder, the config and its name in the environment."""
    env = {**os.environ, NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME: OmegaConf.to_yaml(config),
           NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME: name,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, *command], cwd=folder, env=env, stdin=subprocess.DEVNULL)


def serve_one(name: str) -> None:
    """One NeMo Gym server (`SimpleAgent` or `VLLMModel`), built from the config in the environment as
    `run_webserver` builds it, and served until stopped."""
    config = get_global_config_dict()
    cls = SimpleAgent if name.startswith("callm_agent_") else VLLMModel
    config_cls = cls.model_fields["config"].annotation
    own = OmegaConf.to_container(get_first_server_config_dict(config, name), resolve=True) | {"name": name}
    client = ServerClient(head_server_config=ServerClient.load_head_server_config(), global_config_dict=config)
    server = cls(config=config_cls.model_validate(own), server_client=client)
    app = server.setup_webserver()
    server.setup_liveness(app)
    server.setup_exception_middleware(app)
    uvicorn.run(app, host=own["host"], port=own["port"], log_level=os.environ.get("CALLM_DRIVE_LOG", "warning"),
                timeout_keep_alive=30)  # run_webserver's: longer than its clients' 15 s


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        return serve_one(sys.argv[2])
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--policy", action="append", required=True, help="NAME=BASE_URL of a Chat Completions server")
    parser.add_argument("--task", action="append", required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    policies = dict(p.split("=", 1) for p in args.policy)
    industries = sorted({f"industries/{t.split('/')[0]}" for t in args.task})
    config = global_config(args.config.resolve(), policies, [f"tasks/{t}" for t in args.task], industries)

    head, _, _ = HeadServer.run_webserver()
    client = ServerClient(head_server_config=ServerClient.load_head_server_config(), global_config_dict=config)
    names = [f"{kind}_{name}" for name in policies for kind in ("policy", "callm_agent")]
    servers = {RESOURCES: start(config, RESOURCES, ["app.py"], args.config.resolve().parent.parent)}
    try:
        for name in names:
            servers[name] = start(config, name, [str(Path(__file__).resolve()), "--serve", name], Path.cwd())
        deadline = time.monotonic() + 120
        while any(client.poll_for_status(n) != "success" for n in servers):  # NeMo Gym's own spin-up check
            dead = {n: p.returncode for n, p in servers.items() if p.poll() is not None}
            if dead or time.monotonic() > deadline:
                raise SystemExit(f"servers did not come up (exited: {dead})")
            time.sleep(0.2)

        own = get_first_server_config_dict(config, RESOURCES)
        first = dataset_rows(f"http://{own.host}:{own.port}", args.task, args.seeds)
        args.out.mkdir(parents=True, exist_ok=True)
        rows_path = args.out / "rows.jsonl"
        with rows_path.open("w") as f:
            for name in policies:
                for row in first:
                    f.write(json.dumps({**row, "agent_ref": {"name": f"callm_agent_{name}"}}) + "\n")
        collection = RolloutCollectionConfig(input_jsonl_fpath=str(rows_path),
                                             output_jsonl_fpath=str(args.out / "rollouts.jsonl"),
                                             num_repeats=args.repeats, num_samples_in_parallel=4,
                                             upload_rollouts_to_wandb=False)
        results = asyncio.run(RolloutCollectionHelper().run_from_config(collection))
        metrics = json.loads((args.out / "rollouts_aggregate_metrics.json").read_text())
        slim = [{k: v for k, v in r.items() if k not in ("response", "responses_create_params")} for r in results]
        print("CALLM_NEMO_GYM_RESULT " + json.dumps({"rollouts": slim, "rows": len(first) * len(policies),
                                                    "aggregate_metrics": metrics}), flush=True)
    finally:
        head.should_exit = True
        for process in servers.values():
            process.terminate()
        for process in servers.values():
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
