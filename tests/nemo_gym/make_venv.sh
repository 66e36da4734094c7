#!/usr/bin/env bash
# A Python 3.12 venv holding NeMo Gym 0.4.0 and the resources-server side of pytest-callm, for
# tests/test_rl_nemo_gym_real.py (NeMo Gym's own code against our server) and for `ng_run` (docs/rl.md).
#
#   bash tests/nemo_gym/make_venv.sh [VENV]      # default VENV: .nemo-gym-venv at the repo root
#
# NeMo Gym pins openai<=2.7.2 and our model client needs openai 3.x, so pytest-callm goes in with
# --no-deps, beside every other dependency pyproject.toml names. The resources server never imports
# openai (tests/test_rl_optional_imports.py), so it runs on NeMo Gym's openai; the model client is
# not for this venv. A user's `pip install -e .` is unchanged. About 10 minutes the first time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-$repo/.nemo-gym-venv}

python=""
for candidate in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python; do
    # a pyenv shim may exist and still refuse to run: ask the interpreter itself
    if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then
        python=$candidate; break
    fi
done
[ -n "$python" ] || { echo "make_venv.sh: no Python 3.12 found (NeMo Gym needs it)" >&2; exit 1; }

"$python" -m venv "$venv"
pip=("$venv/bin/pip" install -q --disable-pip-version-check)
"${pip[@]}" 'nemo-gym==0.4.0'
requirements=$(mktemp)
trap 'rm -f "$requirements"' EXIT
"$venv/bin/python" - "$repo/pyproject.toml" >"$requirements" <<'PY'
import re, sys, tomllib
with open(sys.argv[1], "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
print("\n".join(d for d in deps if re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0].lower() != "openai"))
PY
"${pip[@]}" -r "$requirements"
"${pip[@]}" --no-deps -e "$repo"
"$venv/bin/python" -c "import nemo_gym, openai, pytest_callm.rl.nemo_gym_server; print('NeMo Gym venv ready:', '$venv', 'openai', openai.__version__)"
