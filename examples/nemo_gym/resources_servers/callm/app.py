"""CALLM's calls as a NeMo Gym resources server, started as NeMo Gym starts one: `python app.py` in
this folder, with the merged config in `NEMO_GYM_CONFIG_DICT` and this server's name in
`NEMO_GYM_CONFIG_PATH` (what `ng_run` does after building or, with `+skip_venv_if_present=true`,
sourcing the folder's `.venv`). `requirements.txt` beside it is how `ng_run` finds this folder.

It reads its host, port and CALLM's own fields (`packs`, `tasks`, `line`, `max_live_calls`, `shaped`,
`caller`, `caller_base_url`, `caller_api_key_env`, `offline_caller`; paths relative to the checkout
this file is in) from that config, and serves the routes of
`pytest_callm.rl.nemo_gym_server` until stopped. The venv: the one `bash tests/nemo_gym/make_venv.sh`
builds, linked as this folder's `.venv` (NeMo Gym pins an openai our model client refuses; the script
says why this server does not care). See docs/rl.md, "With NeMo Gym's `ng_run`".
"""

import ipaddress
import os
import sys
from pathlib import Path

from nemo_gym.global_config import NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME, get_first_server_config_dict, get_global_config_dict
from omegaconf import OmegaConf

from pytest_callm.rl.caller_choice import caller_arguments
from pytest_callm.rl.nemo_gym_server import main

CHECKOUT = Path(__file__).resolve().parents[4]  # examples/nemo_gym/resources_servers/callm/app.py


def arguments(config: dict) -> list[str]:
    host = config.get("host") or "127.0.0.1"
    if not (host == "localhost" or ipaddress.ip_address(host).is_loopback):
        # The server binds loopback only: it has no authentication (docs/rl.md, "Who can reach what").
        sys.exit(f"callm resources server: host {host!r} is not loopback; serve it behind a proxy that authenticates")
    args = ["--port", str(config["port"]), "--line", str(config.get("line") or "default")]
    for pack in config.get("packs") or []:
        args += ["--pack", str(CHECKOUT / pack)]
    for task in config.get("tasks") or []:
        args += ["--task", str(CHECKOUT / task)]
    if config.get("max_live_calls"):
        args += ["--max-live-calls", str(config["max_live_calls"])]
    if config.get("shaped"):
        args.append("--shaped")
    # The caller: a model config (played through the plain httpx client, which NeMo Gym's openai does
    # not disturb), or without one the offline caller.
    args += caller_arguments(config.get("caller"), config.get("caller_base_url"), config.get("caller_api_key_env"),
                             str(config.get("offline_caller") or "script"))
    return args


if __name__ == "__main__":
    name = os.environ[NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME]
    own = OmegaConf.to_container(get_first_server_config_dict(get_global_config_dict(), name), resolve=True)
    main(arguments(own), watch_stdin=False)
