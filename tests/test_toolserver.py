"""The tool server and the per-call databases, exercised over real loopback HTTP.

Every HTTP test talks to a real `ToolServer` child process (the session-scoped `tool_server`
fixture of conftest, or a module-scoped server for a modified copy of the example pack). Only the
tests about the call database itself (`CallStore`, `run_tool`) run in-process.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from pytest_callm.toolserver.calldb import CallStore, snapshot
from pytest_callm.task.digest import pack_hash
from pytest_callm.task.pack import load_pack
from pytest_callm.toolkit import SESSION_TABLE
from pytest_callm.toolserver.client import ToolClient, ToolServerError
from pytest_callm.toolserver.server import CALL_ID_HEADER, MAX_BODY_BYTES, ToolServer, run_tool

PACK = "vet_clinic"
DANA = {"full_name": "Dana Whitfield", "phone": "5035550142"}  # o1: Biscuit (p1), Pepper (p2), has email
MARCUS = {"full_name": "Marcus Oyelaran", "phone": "5035550187"}  # o2: Juniper (p3), no email
LENA = {"full_name": "Lena Fischer", "phone": "9715550110"}  # o3: Moose (p4), has email


def new_id(tag: str = "t") -> str:
    return f"{tag}-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def http(tool_server):
    with httpx.Client(base_url=tool_server.url, timeout=10.0) as client:
        yield client


def call(http: httpx.Client, call_id: str, tool: str, args=None, pack: str = PACK) -> httpx.Response:
    body = b"" if args is None else json.dumps(args).encode()
    return http.post(f"/packs/{pack}/tools/{tool}", content=body,
                     headers={CALL_ID_HEADER: call_id, "Content-Type": "application/json"})


def ok(http: httpx.Client, call_id: str, tool: str, args=None) -> dict:
    """Call a tool that must succeed; return its data."""
    r = call(http, call_id, tool, args)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True, body
    assert body["error_code"] is None
    return body["data"]


def refused(http: httpx.Client, call_id: str, tool: str, args=None) -> dict:
    """Call a tool that must be refused with a business error (HTTP 200, ok false)."""
    r = call(http, call_id, tool, args)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False, body
    assert set(body) == {"ok", "data", "error_code", "caller_safe_message"}
    return body


def start(http: httpx.Client, call_id: str, pack: str = PACK) -> None:
    r = http.post(f"/packs/{pack}/call", headers={CALL_ID_HEADER: call_id})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text


def state(http: httpx.Client, call_id: str, pack: str = PACK) -> dict:
    r = http.get(f"/packs/{pack}/state", headers={CALL_ID_HEADER: call_id})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"ok", "data", "error_code", "caller_safe_message"} and body["ok"] is True, body
    return body["data"]


@pytest.fixture(scope="module")
def seed_state(vet_pack) -> dict:
    """The compared tables of the pack's seed, built independently of the server."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript(vet_pack.schema_sql)
    db.executescript(vet_pack.seed_sql)
    try:
        return snapshot(db, vet_pack.compared_tables)
    finally:
        db.close()


# --- a modified copy of the example pack: one tool that crashes, one that fails half-way -------

EXTRA_TOOLS = '''

@tools.tool
def explode(ctx: ToolContext, note: str) -> dict:
    ctx.db.execute("INSERT INTO record_requests (pet_id, channel, destination, created_at) "
                   "VALUES ('p1', 'text', ?, '2026-05-12T09:00')", (note,))
    raise RuntimeError(f"kaboom {note}")


@tools.tool
def half_write(ctx: ToolContext, note: str) -> dict:
    ctx.db.execute("UPDATE slots SET available = 0 WHERE id = 'S-101'")
    ctx.db.execute("INSERT INTO record_requests (pet_id, channel, destination, created_at) "
                   "VALUES ('p1', 'text', ?, '2026-05-12T09:00')", (note,))
    ctx.session["owner_id"] = "o1"
    raise ToolError("half_done", "That did not work out.")
'''


def _note_tool(name: str) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": f"Test tool {name}.",
        "parameters": {"type": "object", "properties": {"note": {"type": "string"}},
                       "required": ["note"], "additionalProperties": False}}}


@pytest.fixture(scope="module")
def quirky_pack(vet_pack, tmp_path_factory):
    root = tmp_path_factory.mktemp("packs") / "quirky_clinic"
    shutil.copytree(vet_pack.root, root)
    with open(root / "tools.py", "a", encoding="utf-8") as f:
        f.write(EXTRA_TOOLS)
    tools = json.loads((root / "tools.json").read_text())
    tools += [_note_tool("explode"), _note_tool("half_write")]
    (root / "tools.json").write_text(json.dumps(tools))
    blueprint = json.loads((root / "agent_blueprint.json").read_text())
    blueprint["agents"]["records"]["tools"] += ["explode", "half_write"]
    (root / "agent_blueprint.json").write_text(json.dumps(blueprint))
    return load_pack(root)


@pytest.fixture(scope="module")
def quirky_server(quirky_pack):
    with ToolServer({quirky_pack.name: quirky_pack}) as server:
        yield server


@pytest.fixture(scope="module")
def quirky_http(quirky_server):
    with httpx.Client(base_url=quirky_server.url, timeout=10.0) as client:
        yield client


# --- health ------------------------------------------------------------------------------------

SERVED = ["customer_support", "healthcare", "legal", PACK]  # the session's server: the example and shipped packs


def test_health_lists_the_served_packs_with_their_content_hashes(http, vet_pack):
    r = http.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["packs"] == SERVED and sorted(body["pack_digests"]) == SERVED
    assert body["pack_digests"][PACK] == pack_hash(vet_pack)  # what a run's manifest records of the pack


# --- 1. isolation under load -------------------------------------------------------------------

OWNERS = [(DANA, ["Biscuit", "Pepper"], {"Biscuit": "p1", "Pepper": "p2"}),
          (MARCUS, ["Juniper"], {"Juniper": "p3"}),
          (LENA, ["Moose"], {"Moose": "p4"})]


@pytest.mark.asyncio  # pytest-asyncio's loop: the same client shared by forty calls at once
async def test_concurrent_calls_only_see_their_own_writes(tool_server, seed_state):
    n = 40
    tag = uuid.uuid4().hex[:8]
    ids = [f"load-{tag}-{i}" for i in range(n)]
    plans = []
    for i in range(n):
        who, pets, pet_ids = OWNERS[i % 3]
        pet = pets[i % len(pets)]
        plans.append({"owner": who, "pet": pet, "pet_id": pet_ids[pet], "books": i % 2 == 0})

    async def one_call(client: ToolClient, call_id: str, plan: dict) -> list[dict]:
        results = [await client.call(PACK, call_id, "verify_owner", plan["owner"])]
        if plan["books"]:  # every booking call takes the same slot: only isolation lets all succeed
            results.append(await client.call(PACK, call_id, "book_appointment",
                                             {"pet_name": plan["pet"], "slot_id": "S-101"}))
        else:
            results.append(await client.call(PACK, call_id, "send_records",
                                             {"pet_name": plan["pet"], "channel": "text"}))
        return results

    async def main():
        client = ToolClient(tool_server.url)
        try:
            results = await asyncio.gather(*(one_call(client, c, p) for c, p in zip(ids, plans)))
            states = await asyncio.gather(*(client.state(PACK, c) for c in ids))
            untouched_id = new_id("untouched")
            await client.start_call(PACK, untouched_id)
            untouched = await client.state(PACK, untouched_id)
            return results, states, untouched
        finally:
            await client.aclose()

    results, states, untouched = await main()

    for call_id, plan, res, st in zip(ids, plans, results, states):
        assert [r["ok"] for r in res] == [True, True], (call_id, res)
        if plan["books"]:
            assert st["record_requests"] == [], call_id
            new = [a for a in st["appointments"] if a["id"] not in (1, 2)]
            assert len(new) == 1, (call_id, st["appointments"])
            assert new[0]["pet_id"] == plan["pet_id"] and new[0]["slot_id"] == "S-101"
            assert st["appointments"][:2] == seed_state["appointments"]
            s101 = next(s for s in st["slots"] if s["id"] == "S-101")
            assert s101["available"] == 0
        else:
            assert len(st["record_requests"]) == 1, (call_id, st["record_requests"])
            assert st["record_requests"][0]["pet_id"] == plan["pet_id"]
            assert st["appointments"] == seed_state["appointments"]
            assert st["slots"] == seed_state["slots"]
    assert untouched == seed_state


def verified_only(state: dict, seed: dict) -> dict:
    """`state` less the one verification row a verified caller leaves: what must equal the seed."""
    assert [r["outcome"] for r in state["verifications"]] == ["verified"]
    return {**state, "verifications": seed["verifications"]}


def test_state_of_a_started_call_is_the_seed(http, seed_state):
    call_id = new_id("fresh")
    start(http, call_id)
    assert state(http, call_id) == seed_state


def test_state_of_an_unknown_call_is_an_error_and_creates_nothing(http):
    call_id = new_id("typo")
    for _ in range(2):  # the first request made no database the second one could find
        r = http.get(f"/packs/{PACK}/state", headers={CALL_ID_HEADER: call_id})
        assert r.status_code == 404 and r.json()["error_code"] == "unknown_call", r.text


def test_a_removed_call_is_gone(http, seed_state):
    call_id = new_id("gone")
    ok(http, call_id, "verify_owner", DANA)
    assert http.delete(f"/packs/{PACK}/call", headers={CALL_ID_HEADER: call_id}).status_code == 200
    assert http.get(f"/packs/{PACK}/state", headers={CALL_ID_HEADER: call_id}).status_code == 404
    r = http.delete(f"/packs/{PACK}/call", headers={CALL_ID_HEADER: call_id})
    assert r.status_code == 404 and r.json()["error_code"] == "unknown_call"


# --- 2. call ids -------------------------------------------------------------------------------

BAD_IDS = ["../x", "", "a" * 65, "a.b", "a b", "x/y", "é"]


def _send_with_id(http: httpx.Client, method: str, path: str, call_id):
    headers = {} if call_id is None else {CALL_ID_HEADER: call_id}
    if method == "POST":
        headers["Content-Type"] = "application/json"
        return http.post(path, content=json.dumps(DANA), headers=headers)
    return http.get(path, headers=headers)


ROUTES = [("POST", f"/packs/{PACK}/tools/verify_owner"), ("GET", f"/packs/{PACK}/state")]


@pytest.mark.parametrize("method,path", ROUTES, ids=["tool", "state"])
@pytest.mark.parametrize("call_id", [None, *BAD_IDS],
                         ids=["missing", "dotdot", "empty", "65chars", "dot", "space", "slash", "non_ascii"])
def test_malformed_call_id_is_rejected_with_400(http, method, path, call_id):
    if call_id == "é":
        headers = {CALL_ID_HEADER: "é".encode()}  # raw UTF-8 header bytes
        r = http.request(method, path, headers=headers,
                         content=json.dumps(DANA) if method == "POST" else None)
    else:
        r = _send_with_id(http, method, path, call_id)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["ok"] is False
    assert body["error_code"] == "bad_call_id"
    assert set(body) == {"ok", "data", "error_code", "caller_safe_message"}


@pytest.mark.parametrize("method,path", ROUTES, ids=["tool", "state"])
def test_64_char_call_id_is_accepted(http, method, path):
    call_id = (uuid.uuid4().hex * 2)[:62] + "_-"
    assert len(call_id) == 64
    if method == "GET":
        start(http, call_id)
    r = _send_with_id(http, method, path, call_id)
    assert r.status_code == 200, r.text
    if method == "POST":
        assert r.json()["ok"] is True


def test_call_id_is_case_sensitive(http):
    base = "Case" + uuid.uuid4().hex
    ok(http, base, "verify_owner", DANA)
    ok(http, base, "list_appointments", {})
    assert refused(http, base.lower(), "list_appointments", {})["error_code"] == "not_verified"


# --- 3. schema-invalid arguments ---------------------------------------------------------------

def _invalid(http, tool, args, raw: bytes | None = None) -> list[str]:
    call_id = new_id("inv")
    if raw is not None:
        r = http.post(f"/packs/{PACK}/tools/{tool}", content=raw,
                      headers={CALL_ID_HEADER: call_id, "Content-Type": "application/json"})
    else:
        r = call(http, call_id, tool, args)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False
    assert body["error_code"] == "invalid_arguments"
    assert body["caller_safe_message"]
    problems = body["data"]["problems"]
    assert problems and all(isinstance(p, str) for p in problems)
    return problems


def test_wrong_argument_type_is_invalid_arguments(http):
    problems = _invalid(http, "verify_owner", {"full_name": 123, "phone": "5035550142"})
    assert any(p.startswith("full_name:") and "string" in p for p in problems), problems


def test_missing_required_argument_is_invalid_arguments(http):
    problems = _invalid(http, "verify_owner", {"full_name": "Dana Whitfield"})
    assert any("'phone'" in p and "required" in p for p in problems), problems


def test_unexpected_extra_argument_is_invalid_arguments(http):
    problems = _invalid(http, "verify_owner", {**DANA, "date_of_birth": "1980-01-01"})
    assert "date_of_birth: unexpected argument" in problems, problems


def test_enum_violation_is_invalid_arguments(http):
    problems = _invalid(http, "send_records", {"pet_name": "Biscuit", "channel": "fax"})
    assert any(p.startswith("channel:") for p in problems), problems


def test_date_format_violation_is_invalid_arguments(http):
    problems = _invalid(http, "find_open_slots", {"service": "dental", "on_or_after": "next tuesday"})
    assert any(p.startswith("on_or_after:") for p in problems), problems


@pytest.mark.parametrize("written", ["2026-05-14T16:00", "2026-05-14 16:00:59", "2026-05-14T16:00:00Z",
                                     "2026-05-14t16:00-07:00"])
def test_a_date_time_where_a_date_is_asked_is_its_day_to_the_server_and_the_verifier(http, vet_pack, written):
    # DESIGN §7: accepted by both or refused by both. Both read it through the `date` kind.
    by_day = ok(http, new_id("day"), "find_open_slots", {"service": "wellness", "on_or_after": "2026-05-14"})
    assert ok(http, new_id("dt"), "find_open_slots", {"service": "wellness", "on_or_after": written}) == by_day
    assert [s["id"] for s in by_day["slots"]] == ["S-102", "S-106"]  # 15:30 on the day counts
    kind = vet_pack.tools["find_open_slots"].kinds.get("on_or_after")
    assert vet_pack.values.same(kind, "2026-05-14", written)


@pytest.mark.parametrize("written", ["2026-05-14xyz", "2026-05-14 or 15", "2026-02-30T10:00", "next tuesday"])
def test_text_that_is_no_date_is_refused_by_the_server_and_the_verifier(http, vet_pack, written):
    problems = _invalid(http, "find_open_slots", {"service": "wellness", "on_or_after": written})
    assert any(p.startswith("on_or_after:") for p in problems), problems
    kind = vet_pack.tools["find_open_slots"].kinds.get("on_or_after")
    assert not vet_pack.values.same(kind, written[:10], written)


def test_integer_argument_given_as_string_is_invalid_arguments(http):
    problems = _invalid(http, "cancel_appointment", {"appointment_id": "2"})
    assert any(p.startswith("appointment_id:") for p in problems), problems


def test_json_array_body_is_invalid_arguments(http):
    problems = _invalid(http, "verify_owner", None, raw=json.dumps(["Dana Whitfield", "5035550142"]).encode())
    assert any("expected a JSON object" in p and "list" in p for p in problems), problems


@pytest.mark.parametrize("raw", [b"null", b"42", b'"Dana"'], ids=["null", "number", "string"])
def test_json_scalar_body_is_invalid_arguments(http, raw):
    problems = _invalid(http, "verify_owner", None, raw=raw)
    assert any("expected a JSON object" in p for p in problems), problems


def test_invalid_arguments_write_nothing(http, seed_state):
    call_id = new_id("inv")
    ok(http, call_id, "verify_owner", DANA)
    r = call(http, call_id, "book_appointment", {"pet_name": "Biscuit", "slot_id": "S-101", "urgent": True})
    assert r.status_code == 200 and r.json()["error_code"] == "invalid_arguments"
    assert verified_only(state(http, call_id), seed_state) == seed_state


def test_empty_body_means_no_arguments(http):
    call_id = new_id("empty")
    ok(http, call_id, "verify_owner", DANA)
    r = call(http, call_id, "list_appointments", None)  # no body at all
    assert r.status_code == 200 and r.json()["ok"] is True, r.text


@pytest.mark.parametrize("raw", [b"{not json", b"full_name=Dana", b"\xff\xfe\x00"], ids=["broken", "form", "binary"])
def test_non_json_body_is_400_bad_request(http, raw):
    r = http.post(f"/packs/{PACK}/tools/verify_owner", content=raw,
                  headers={CALL_ID_HEADER: new_id("nj"), "Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["ok"] is False and body["error_code"] == "bad_request"


def _raw_request(server: ToolServer, head: str, chunks=()) -> bytes:
    """Send a request head (and body chunks) on a raw socket; the response as far as it came in 10 s."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())
        for chunk in chunks:
            sock.sendall(chunk)
        data = b""
        while b"}" not in data:  # the envelope's end: the whole (small) response is in
            try:
                more = sock.recv(65536)
            except TimeoutError:
                break
            if not more:
                break
            data += more
        return data


def test_an_oversized_body_is_refused_on_its_length_before_it_is_read(tool_server, http):
    call_id = new_id("huge")
    # Not a byte of the announced body is sent: a server that read it first would never answer.
    answer = _raw_request(tool_server, f"POST /packs/{PACK}/tools/verify_owner HTTP/1.1\r\nHost: x\r\n"
                                       f"{CALL_ID_HEADER}: {call_id}\r\nContent-Type: application/json\r\n"
                                       f"Content-Length: {30_000_000}\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413"), answer
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["ok"] is False and body["error_code"] == "body_too_large", body
    assert "30,000,000" in body["caller_safe_message"] and body["data"] == {"max_bytes": MAX_BODY_BYTES}
    assert http.get(f"/packs/{PACK}/state", headers={CALL_ID_HEADER: call_id}).status_code == 404  # no call made


def test_a_streamed_body_is_cut_once_it_passes_the_limit(tool_server):
    chunk = b"x" * 1_000_000
    sent = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * (MAX_BODY_BYTES // len(chunk) + 2)
    # Chunked, with no length and no last chunk: only a server that stops reading at the limit answers.
    answer = _raw_request(tool_server, f"POST /packs/{PACK}/tools/verify_owner HTTP/1.1\r\nHost: x\r\n"
                                       f"{CALL_ID_HEADER}: {new_id('stream')}\r\nContent-Type: application/json\r\n"
                                       "Transfer-Encoding: chunked\r\n\r\n", sent)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error_code"] == "body_too_large"


def test_live_call_databases_are_capped_and_a_removed_call_frees_its_place(vet_pack):
    with ToolServer({vet_pack.name: vet_pack}, extra_args=["--max-live-calls", "2"]) as server, \
            httpx.Client(base_url=server.url, timeout=10) as http:
        first, second, third = new_id("cap"), new_id("cap"), new_id("cap")
        start(http, first)
        ok(http, second, "verify_owner", DANA)  # a first tool request makes a call too
        headers = {CALL_ID_HEADER: third}
        for refused_request in (http.post(f"/packs/{PACK}/call", headers=headers),
                                http.post(f"/packs/{PACK}/tools/verify_owner", json=DANA, headers=headers)):
            assert refused_request.status_code == 429, refused_request.text
            body = refused_request.json()
            assert body["error_code"] == "too_many_calls" and "(2)" in body["caller_safe_message"], body
        assert http.get(f"/packs/{PACK}/state", headers={CALL_ID_HEADER: third}).status_code == 404
        ok(http, first, "verify_owner", DANA)  # a live call still works when the server is full

        async def through_the_engine_client():
            client = ToolClient(server.url)
            try:
                with pytest.raises(ToolServerError, match="429.*remove finished calls"):
                    await client.start_call(PACK, third)
                await client.remove_call(PACK, first)
                await client.start_call(PACK, third)
                return await client.state(PACK, third)
            finally:
                await client.aclose()

        assert set(asyncio.run(through_the_engine_client())) == set(vet_pack.compared_tables)


SLOW_ENTRY = """
import sys, time
from pytest_callm.toolserver.server import main

args = sys.argv[1:]
delay = float(args.pop(args.index("--startup") + 1)); args.remove("--startup")
time.sleep(delay)  # a busy machine, where the child takes this long to come up
if "--exit" in args:
    raise SystemExit(3)
main(args)
"""


@pytest.fixture
def slow_entry(tmp_path, monkeypatch) -> str:
    """A tool server entry that sleeps `--startup S` seconds first (and with `--exit`, then dies)."""
    (tmp_path / "slow_tool_server.py").write_text(SLOW_ENTRY)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    return "slow_tool_server"


def test_a_tool_server_that_starts_slowly_is_waited_for(vet_pack, slow_entry):
    with ToolServer({vet_pack.name: vet_pack}, entry=slow_entry, extra_args=["--startup", "1"]) as server:
        assert httpx.get(server.url + "/health", timeout=10).json()["packs"] == [PACK]


def test_a_tool_server_that_dies_fails_at_once_and_one_that_hangs_fails_at_the_timeout(vet_pack, slow_entry):
    began = time.monotonic()
    with pytest.raises(ToolServerError, match=r"exited with code 3 before it was ready.*slow_tool_server"):
        ToolServer({vet_pack.name: vet_pack}, entry=slow_entry, extra_args=["--startup", "0", "--exit"]).start()
    assert time.monotonic() - began < 30  # not after the (300 s) timeout
    hanging = ToolServer({vet_pack.name: vet_pack}, entry=slow_entry, extra_args=["--startup", "60"])
    with pytest.raises(ToolServerError, match=r"still starting after 1s.*it was stopped"):
        hanging.start(timeout=1)
    assert hanging._proc is None  # stopped, not left behind


# --- 4. unknown tools and packs ----------------------------------------------------------------

def test_unknown_tool_is_404_unknown_tool(http):
    r = call(http, new_id("unk"), "delete_everything", {})
    assert r.status_code == 404
    body = r.json()
    assert body["ok"] is False and body["error_code"] == "unknown_tool"
    assert "delete_everything" in body["caller_safe_message"]


@pytest.mark.parametrize("tool,args", [("transfer_to_records", {"handoff_summary": "Dana wants records."}),
                                       ("transfer_to_appointments", {"handoff_summary": "Dana wants a visit."}),
                                       ("end_call", {"reason": "done"})])
def test_engine_tools_are_not_served(http, tool, args):
    r = call(http, new_id("eng"), tool, args)
    assert r.status_code == 404, r.text
    body = r.json()
    assert body["error_code"] == "unknown_tool"
    assert "engine" in body["caller_safe_message"]


def test_unknown_pack_is_404_on_tool_route(http):
    r = call(http, new_id("pk"), "verify_owner", DANA, pack="dental_office")
    assert r.status_code == 404
    body = r.json()
    assert body["error_code"] == "unknown_pack"
    assert body["data"] == {"packs": SERVED}


def test_unknown_pack_is_404_on_state_route(http):
    r = http.get("/packs/dental_office/state", headers={CALL_ID_HEADER: new_id("pk")})
    assert r.status_code == 404
    assert r.json()["error_code"] == "unknown_pack"


def test_tool_client_raises_for_unknown_tool(tool_server):
    async def main():
        client = ToolClient(tool_server.url)
        try:
            await client.call(PACK, new_id("cl"), "transfer_to_records", {"handoff_summary": "x"})
        finally:
            await client.aclose()

    with pytest.raises(ToolServerError, match="404"):
        asyncio.run(main())


def test_a_runtime_on_a_named_server_is_refused_unless_it_serves_the_runs_very_packs(tool_server, vet_pack, tmp_path):
    """A run that names a running server (--callm-tool-server) would be scored against whatever packs
    that server loaded: it goes on only if each of its packs is served from the same files."""
    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.toolserver.client import ToolServerMismatch

    Runtime("oracle", {PACK: vet_pack}, tool_server.url).close()
    changed = tmp_path / "changed" / PACK
    shutil.copytree(vet_pack.root, changed)
    seed = changed / "db" / "seed.sql"
    seed.write_text(seed.read_text() + "\n-- one line more: other files, whatever they change\n")
    with pytest.raises(ToolServerMismatch, match=f"serves a '{PACK}' pack whose files differ from this run's"):
        Runtime("oracle", {PACK: load_pack(changed)}, tool_server.url)
    other = tmp_path / "dental_office"
    shutil.copytree(vet_pack.root, other)
    with pytest.raises(ToolServerMismatch, match="does not serve the 'dental_office' pack this run plays"):
        Runtime("oracle", {"dental_office": load_pack(other)}, tool_server.url)


# --- 5. gating state lives in the call database ------------------------------------------------

def test_verification_is_stored_in_the_call_file_and_survives_a_restart(vet_pack, tmp_path):
    store = CallStore(vet_pack, tmp_path)
    call_id = new_id("gate")
    res = run_tool(vet_pack, store, call_id, "verify_owner", dict(DANA))
    assert res["ok"] is True, res

    path = tmp_path / vet_pack.name / f"{call_id}.sqlite"
    assert path.is_file()
    db = sqlite3.connect(path)
    try:
        rows = db.execute(f"SELECT key, value FROM {SESSION_TABLE}").fetchall()
    finally:
        db.close()
    assert rows == [("identity_verified", json.dumps("o1"))]

    restarted = CallStore(vet_pack, tmp_path)
    res = run_tool(vet_pack, restarted, call_id, "list_appointments", {})
    assert res["ok"] is True, res
    assert [a["appointment_id"] for a in res["data"]["appointments"]] == [2]
    # and a different call in the restarted store is not verified
    other = run_tool(vet_pack, restarted, new_id("gate"), "list_appointments", {})
    assert other["error_code"] == "not_verified"


def test_session_table_is_not_part_of_the_state_dump(http):
    call_id = new_id("sess")
    ok(http, call_id, "verify_owner", DANA)
    assert SESSION_TABLE not in state(http, call_id)


# --- 6. failing business rules roll back -------------------------------------------------------

def test_booking_an_unavailable_slot_changes_nothing(http, seed_state):
    call_id = new_id("rb")
    ok(http, call_id, "verify_owner", DANA)
    assert refused(http, call_id, "book_appointment",
                   {"pet_name": "Biscuit", "slot_id": "S-107"})["error_code"] == "slot_unavailable"
    assert verified_only(state(http, call_id), seed_state) == seed_state


def test_tool_error_after_writes_rolls_back_every_write(quirky_http, quirky_pack):
    call_id = new_id("rb")
    start(quirky_http, call_id, pack=quirky_pack.name)
    before = state(quirky_http, call_id, pack=quirky_pack.name)
    r = call(quirky_http, call_id, "half_write", {"note": "partial"}, pack=quirky_pack.name)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body == {"ok": False, "data": None, "error_code": "half_done",
                    "caller_safe_message": "That did not work out."}
    assert state(quirky_http, call_id, pack=quirky_pack.name) == before
    # the session write was rolled back too: the call is still not verified
    r = call(quirky_http, call_id, "list_appointments", {}, pack=quirky_pack.name)
    assert r.json()["error_code"] == "not_verified"


def test_tool_error_after_writes_rolls_back_in_run_tool(quirky_pack, tmp_path):
    store = CallStore(quirky_pack, tmp_path)
    call_id = new_id("rb")
    res = run_tool(quirky_pack, store, call_id, "half_write", {"note": "partial"})
    assert res["error_code"] == "half_done"
    db = sqlite3.connect(store.path(call_id))
    try:
        assert db.execute("SELECT COUNT(*) FROM record_requests").fetchone()[0] == 0
        assert db.execute("SELECT available FROM slots WHERE id = 'S-101'").fetchone()[0] == 1
        assert db.execute(f"SELECT COUNT(*) FROM {SESSION_TABLE}").fetchone()[0] == 0
    finally:
        db.close()


# --- 7. atomic creation of call files ----------------------------------------------------------

def _race_open(make_store, call_id: str, n: int) -> list:
    barrier = threading.Barrier(n)
    seen: list = [None] * n
    errors: list = []

    def worker(i: int) -> None:
        try:
            barrier.wait()
            store = make_store()
            db = store.open(call_id)
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO record_requests (pet_id, channel, destination, created_at) "
                           "VALUES ('p1', 'text', ?, '2026-05-12T09:00')", (f"thread-{i}",))
                db.execute("COMMIT")
                seen[i] = sorted(r[0] for r in db.execute("SELECT id FROM owners"))
            finally:
                db.close()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    return seen


def _check_call_file(path: Path, n: int) -> None:
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert sorted(r[0] for r in db.execute("SELECT id FROM owners")) == ["o1", "o2", "o3"]
        assert db.execute("SELECT COUNT(*) FROM appointments").fetchone()[0] == 2
        dests = sorted(r[0] for r in db.execute("SELECT destination FROM record_requests"))
        assert dests == sorted(f"thread-{i}" for i in range(n))
    finally:
        db.close()


def test_concurrent_open_of_one_call_id_keeps_one_intact_seeded_file(vet_pack, tmp_path):
    store = CallStore(vet_pack, tmp_path)
    n = 16
    for _ in range(5):
        call_id = new_id("race")
        seen = _race_open(lambda: store, call_id, n)
        assert seen == [["o1", "o2", "o3"]] * n
        _check_call_file(store.path(call_id), n)
    leftovers = [p.name for p in store.root.iterdir() if p.suffix == ".tmp"]
    assert leftovers == []


def test_concurrent_stores_racing_on_template_and_call_file(vet_pack, tmp_path):
    n = 16
    call_id = new_id("race")
    seen = _race_open(lambda: CallStore(vet_pack, tmp_path), call_id, n)
    assert seen == [["o1", "o2", "o3"]] * n
    root = tmp_path / vet_pack.name
    _check_call_file(root / f"{call_id}.sqlite", n)
    assert sorted(p.name for p in root.iterdir()) == sorted([".seed.sqlite", f"{call_id}.sqlite"])


def test_call_store_rejects_malformed_ids(vet_pack, tmp_path):
    store = CallStore(vet_pack, tmp_path)
    for bad in ["../x", "", "a" * 65, "a/b"]:
        with pytest.raises(ValueError):
            store.open(bad)
    assert sorted(p.name for p in store.root.iterdir()) == [".seed.sqlite"]


def test_every_call_in_flight_keeps_its_connection_between_tool_calls(vet_pack, tmp_path):
    """An RL environment holds 256 calls at once, taking turns: a store that kept 64 connections
    reopened a call's file on nearly every tool call (a fifth of the environment's CPU)."""
    store = CallStore(vet_pack, tmp_path)
    calls = [new_id(f"turn{i}") for i in range(300)]
    first = {c: store.connection(c) for c in calls}
    assert all(store.connection(c) is first[c] for c in calls)  # the second round reopens none
    store.remove(calls[0])
    assert len(store._recent) == 299


def test_a_store_that_keeps_its_files_closes_a_finished_call_and_leaves_its_file(vet_pack, tmp_path):
    """--callm-keep-calls: the file stays for debugging, but its connection (about 250 KB) does not."""
    store = CallStore(vet_pack, tmp_path, keep_files=True)
    call_id = new_id("kept")
    assert run_tool(vet_pack, store, call_id, "verify_owner", dict(DANA))["ok"] is True
    store.remove(call_id)
    assert call_id not in store._recent and store.path(call_id).is_file()
    assert CallStore(vet_pack, tmp_path).snapshot(call_id) == store.snapshot(call_id)


@pytest.mark.parametrize("call_id", ["_seed", "seed", "-seed"])
def test_call_id_named_like_the_template_cannot_touch_the_seed(vet_pack, tmp_path, call_id):
    store = CallStore(vet_pack, tmp_path)
    assert run_tool(vet_pack, store, call_id, "verify_owner", dict(DANA))["ok"] is True
    run_tool(vet_pack, store, call_id, "book_appointment", {"pet_name": "Biscuit", "slot_id": "S-101"})
    fresh = new_id("fresh")
    assert run_tool(vet_pack, store, fresh, "list_appointments", {})["error_code"] == "not_verified"
    assert len(store.snapshot(fresh)["appointments"]) == 2


# --- 8. a crashing tool ------------------------------------------------------------------------

def test_crashing_tool_gives_500_tool_crashed(quirky_http, quirky_pack):
    call_id = new_id("crash")
    r = call(quirky_http, call_id, "explode", {"note": "n1"}, pack=quirky_pack.name)
    assert r.status_code == 500, r.text
    body = r.json()
    assert body["ok"] is False
    assert body["error_code"] == "tool_crashed"
    assert "RuntimeError" in body["caller_safe_message"]
    assert "kaboom n1" in body["caller_safe_message"]
    assert f"{quirky_pack.name}.explode" in body["caller_safe_message"]
    # The traceback is the server's business (its stderr): it holds the server's file paths.
    assert body["data"] is None and "Traceback" not in r.text and str(quirky_pack.root) not in r.text


def test_crashing_tool_rolls_back_its_writes(quirky_http, quirky_pack):
    call_id = new_id("crash")
    r = call(quirky_http, call_id, "explode", {"note": "n2"}, pack=quirky_pack.name)
    assert r.status_code == 500
    assert state(quirky_http, call_id, pack=quirky_pack.name)["record_requests"] == []


def test_server_keeps_serving_after_a_crash(quirky_http, quirky_pack):
    call_id = new_id("crash")
    assert call(quirky_http, call_id, "explode", {"note": "n3"}, pack=quirky_pack.name).status_code == 500
    r = call(quirky_http, call_id, "verify_owner", DANA, pack=quirky_pack.name)
    assert r.status_code == 200 and r.json()["ok"] is True


def test_tool_client_raises_tool_server_error_for_a_crash(quirky_server, quirky_pack):
    async def main():
        client = ToolClient(quirky_server.url)
        try:
            await client.call(quirky_pack.name, new_id("crash"), "explode", {"note": "n4"})
        finally:
            await client.aclose()

    with pytest.raises(ToolServerError) as info:
        asyncio.run(main())
    msg = str(info.value)
    assert "500" in msg and "RuntimeError" in msg and "kaboom n4" in msg


def test_run_tool_propagates_a_crash(quirky_pack, tmp_path):
    store = CallStore(quirky_pack, tmp_path)
    call_id = new_id("crash")
    with pytest.raises(RuntimeError, match="kaboom n5"):
        run_tool(quirky_pack, store, call_id, "explode", {"note": "n5"})
    assert store.snapshot(call_id)["record_requests"] == []


# --- 9. vet clinic business rules through the real server --------------------------------------

def test_pet_data_requires_verification_first(http):
    call_id = new_id("vet")
    body = refused(http, call_id, "get_vaccination_status", {"pet_name": "Biscuit"})
    assert body["error_code"] == "not_verified"
    ok(http, call_id, "verify_owner", DANA)
    data = ok(http, call_id, "get_vaccination_status", {"pet_name": "Biscuit"})
    assert data["rabies_due"] == "2026-09-01" and data["rabies_current"] is True


def test_verification_is_per_call(http):
    verified, other = new_id("vet"), new_id("vet")
    ok(http, verified, "verify_owner", DANA)
    assert refused(http, other, "get_vaccination_status", {"pet_name": "Biscuit"})["error_code"] == "not_verified"


def test_verify_owner_tolerates_phone_formatting_and_name_case(http):
    call_id = new_id("vet")
    data = ok(http, call_id, "verify_owner", {"full_name": "  dana   WHITFIELD ", "phone": "(503) 555-0142"})
    assert data == {"owner_id": "o1", "verified": True, "pets": ["Biscuit", "Pepper"], "email_on_file": True}


def test_verify_owner_with_wrong_phone_is_refused(http):
    call_id = new_id("vet")
    body = refused(http, call_id, "verify_owner", {"full_name": "Dana Whitfield", "phone": "5035550143"})
    assert body["error_code"] == "identity_not_verified"
    assert refused(http, call_id, "list_appointments", {})["error_code"] == "not_verified"


def test_verified_owner_cannot_reach_another_owners_pet(http):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", DANA)
    assert refused(http, call_id, "get_vaccination_status", {"pet_name": "Juniper"})["error_code"] == "pet_not_found"


def test_records_go_to_the_email_on_file(http):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", DANA)
    data = ok(http, call_id, "send_records", {"pet_name": "pepper", "channel": "email"})
    assert data["status"] == "sent"
    rows = state(http, call_id)["record_requests"]
    assert len(rows) == 1
    assert rows[0]["pet_id"] == "p2"
    assert rows[0]["channel"] == "email"
    assert rows[0]["destination"] == "dana.whitfield@example.com"
    assert rows[0]["id"] == data["request_id"]


def test_records_without_email_on_file_are_refused(http, seed_state):
    call_id = new_id("vet")
    assert ok(http, call_id, "verify_owner", MARCUS)["email_on_file"] is False
    body = refused(http, call_id, "send_records", {"pet_name": "Juniper", "channel": "email"})
    assert body["error_code"] == "no_email_on_file"
    assert verified_only(state(http, call_id), seed_state) == seed_state
    ok(http, call_id, "send_records", {"pet_name": "Juniper", "channel": "text"})
    rows = state(http, call_id)["record_requests"]
    assert [(r["channel"], r["destination"]) for r in rows] == [("text", "5035550187")]


def test_late_cancellation_is_refused_and_writes_nothing(http, seed_state):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", MARCUS)
    body = refused(http, call_id, "cancel_appointment", {"appointment_id": 1})
    assert body["error_code"] == "late_cancellation"
    assert verified_only(state(http, call_id), seed_state) == seed_state


def test_cancelling_another_owners_appointment_is_refused(http, seed_state):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", DANA)
    assert refused(http, call_id, "cancel_appointment", {"appointment_id": 1})["error_code"] == "appointment_not_found"
    assert verified_only(state(http, call_id), seed_state) == seed_state


def test_cancelling_a_future_appointment_frees_its_slot(http):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", DANA)
    assert ok(http, call_id, "cancel_appointment", {"appointment_id": 2}) == {"appointment_id": 2,
                                                                              "status": "cancelled"}
    st = state(http, call_id)
    appt = {a["id"]: a for a in st["appointments"]}
    assert appt[2]["status"] == "cancelled"
    assert appt[1]["status"] == "booked"
    slots = {s["id"]: s["available"] for s in st["slots"]}
    assert slots["S-108"] == 1
    assert slots["S-107"] == 0
    assert ok(http, call_id, "list_appointments", {}) == {"appointments": []}
    # cancelling it again is refused
    assert refused(http, call_id, "cancel_appointment", {"appointment_id": 2})["error_code"] == "appointment_not_found"


def test_booking_a_taken_slot_is_refused(http, seed_state):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", DANA)
    assert refused(http, call_id, "book_appointment",
                   {"pet_name": "Biscuit", "slot_id": "S-108"})["error_code"] == "slot_unavailable"
    assert verified_only(state(http, call_id), seed_state) == seed_state


def test_a_slot_booked_in_a_call_is_taken_for_the_rest_of_that_call(http):
    call_id = new_id("vet")
    ok(http, call_id, "verify_owner", DANA)
    data = ok(http, call_id, "book_appointment", {"pet_name": "Biscuit", "slot_id": " s-101 "})
    assert data["starts_at"] == "2026-05-13T10:00" and data["vet"] == "Dr. Patel"
    assert refused(http, call_id, "book_appointment",
                   {"pet_name": "Pepper", "slot_id": "S-101"})["error_code"] == "slot_unavailable"
    slots = ok(http, call_id, "find_open_slots", {"service": "wellness"})["slots"]
    assert "S-101" not in [s["id"] for s in slots]
    booked = [a for a in state(http, call_id)["appointments"] if a["id"] not in (1, 2)]
    assert [(a["pet_id"], a["slot_id"], a["status"]) for a in booked] == [("p1", "S-101", "booked")]
