"""The tool server against hostile input: every request answered with the envelope, nothing leaked.

A property-based fuzz of every legal tool (hypothesis, bounded in examples and time) over real
loopback HTTP, plus the specific inputs that used to give a 500, and a raw socket that must
survive a refused request. The call databases stay sound (`PRAGMA integrity_check`).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import uuid
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from pytest_callm.toolserver.calldb import CALL_ID_HEADER
from pytest_callm.task.pack import load_pack
from pytest_callm.task.task_file import read_task_json
from pytest_callm.toolkit import envelope
from pytest_callm.toolserver.server import ToolServer

LEGAL = load_pack(REPO / "industries" / "legal")
TOOLS = sorted(name for name, spec in LEGAL.tools.items() if spec.kind == "industry")
ENVELOPE = set(envelope(True))
LEAKS = ("Traceback", 'File "', str(REPO), "/tmp/", "site-packages")


def _answer_key_values() -> dict[str, dict[str, list]]:
    """Every argument value the locked legal tasks use, per tool and parameter: realistic input."""
    values: dict[str, dict[str, list]] = {}
    for path in sorted((REPO / "tasks" / "legal").glob("*/task.json")):
        for call in read_task_json(path)["exp_tool_calls"]:
            for key, value in (call.get("parameters") or {}).items():
                values.setdefault(call["name"], {}).setdefault(key, []).append(value)
    return values


KEY_VALUES = _answer_key_values()
any_text = st.text(st.characters(exclude_categories=()), max_size=12)  # lone surrogates included
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
                           max_leaves=8)


def _value_for(tool: str, name: str, schema: dict):
    pool = KEY_VALUES.get(tool, {}).get(name, [])
    options = [json_values]
    if pool:
        options.append(st.sampled_from(pool))
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    return st.one_of(*options)


@st.composite
def tool_requests(draw):
    tool = draw(st.sampled_from(TOOLS))
    props = LEGAL.tools[tool].parameters.get("properties", {})
    shape = draw(st.sampled_from(["schema", "schema", "junk", "raw"]))
    if shape == "schema":  # mostly right: the tool's own logic runs
        names = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
        args = {n: draw(_value_for(tool, n, props[n])) for n in names}
        body = json.dumps(args).encode()
    elif shape == "junk":
        body = json.dumps(draw(st.dictionaries(any_text, json_values, max_size=4) | json_values)).encode()
    else:
        body = draw(st.sampled_from([b"[" * 200_000 + b"]" * 200_000, b'{"a":' * 3000 + b"1" + b"}" * 3000,
                                     b'{"\\udfff": 1}', b"\xed\xbf\xbf", b"{", b"", b"null"])) + draw(st.binary(max_size=8))
    call = draw(st.sampled_from(["a", "b", "c"]))  # a few calls, so gating state builds up across requests
    return tool, body, call


@pytest.fixture(scope="module")
def legal_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("legal-calls")
    with ToolServer({LEGAL.name: LEGAL}, data_dir=data) as server:
        yield server, data / LEGAL.name


def assert_envelope(response: httpx.Response) -> dict:
    assert response.status_code < 500, response.text
    body = response.json()
    assert set(body) == ENVELOPE, body
    for leak in LEAKS:
        assert leak not in response.text, response.text
    return body


def test_every_legal_tool_answers_any_input_with_the_envelope(legal_server):
    server, calls = legal_server
    tag = uuid.uuid4().hex[:8]
    seen = set()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        @settings(max_examples=400, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(tool_requests())
        def fuzz(request):
            tool, body, call = request
            r = http.post(f"/packs/{LEGAL.name}/tools/{tool}", content=body,
                          headers={CALL_ID_HEADER: f"fuzz-{tag}-{call}", "Content-Type": "application/json"})
            seen.add(assert_envelope(r)["error_code"])
            if r.json()["error_code"] is None:  # what a tool wrote reads back, its tables in the envelope
                dump = http.get(f"/packs/{LEGAL.name}/state", headers={CALL_ID_HEADER: f"fuzz-{tag}-{call}"})
                assert set(assert_envelope(dump)["data"]) == set(LEGAL.compared_tables), dump.text

        fuzz()
    assert None in seen and "invalid_arguments" in seen  # the fuzz reached the tools' logic, not only refusals
    files = sorted(calls.glob("*.sqlite"))
    assert files
    for path in files:
        db = sqlite3.connect(path)
        try:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", path
        finally:
            db.close()


HOSTILE = {
    "200k-deep": b"[" * 200_000 + b"]" * 200_000,
    "3k-deep": b'{"a":' * 3000 + b"1" + b"}" * 3000,
    "surrogate-key": b'{"\\udfff": 1}',
    "surrogate-value": b'{"full_name": "\\ud800", "phone": "1"}',
    "not-utf8": b"\xed\xbf\xbf",
    "20MB": b'{"full_name": "' + b"x" * 20_000_000 + b'", "phone": "1"}',
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_bodies_are_refused_with_the_envelope(legal_server, body):
    server, _ = legal_server
    r = httpx.post(f"{server.url}/packs/{LEGAL.name}/tools/lookup_caller", content=body, timeout=30,
                   headers={CALL_ID_HEADER: "hostile-" + uuid.uuid4().hex, "Content-Type": "application/json"})
    assert assert_envelope(r)["error_code"] in ("invalid_arguments", "bad_request", "body_too_large")


def _exchange(sock: socket.socket, method: str, path: str, body: bytes, call_id: str) -> bytes:
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\n{CALL_ID_HEADER}: {call_id}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    sock.sendall(head + body)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, rest = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(rest) < length:
        rest += sock.recv(65536)
    assert b"connection: close" not in head.lower()
    return head.split(b"\r\n")[0] + b" " + rest


def test_the_connection_survives_refused_requests(legal_server):
    server, _ = legal_server
    host, port = server.url.removeprefix("http://").split(":")
    call_id = "conn-" + uuid.uuid4().hex
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        tool = f"/packs/{LEGAL.name}/tools/lookup_caller"
        for body in HOSTILE.values():
            _exchange(sock, "POST", tool, body, call_id)
        _exchange(sock, "POST", tool, b"{}", "bad id!")
        _exchange(sock, "GET", f"/packs/{LEGAL.name}/state", b"", "never-started")
        _exchange(sock, "POST", "/no/such/route", b"{}", call_id)
        last = _exchange(sock, "POST", f"/packs/{LEGAL.name}/tools/get_office_info", b'{"topic": "hours"}', call_id)
    assert last.startswith(b"HTTP/1.1 200") and b'"ok":true' in last
