"""Run directories: everything a run produced, saved as it happens, so nothing of it is lost.

    <run>/manifest.json                                   what was run, and with what (no secrets)
    <run>/trajectories/<industry>/<task>/attempt-<n>.json one file per finished attempt
    <run>/seeds/<industry>/<id>.json                      the seed state the attempts' final states are
                                                          saved against (seed_state.py)
    <run>/report.json                                     every figure of the summary
    <run>/.lock                                           the pid of the run writing here

Files are written atomically (a temporary file, then a rename), by whichever process ran the
attempt, as soon as it finishes: a killed run leaves only whole files behind. The manifest's
`comparable` part (model and caller configs, line, attempts, and content hashes of the task set,
the packs and the verifier) decides whether a later run may add to the same folder: resuming a run
into a folder made by another setup is refused. The report holds no timestamp, so rescoring the
same trajectories with the same verifier reproduces it byte for byte.

One run writes to a folder at a time: it holds an advisory lock on `.lock` (which names its pid)
for as long as it runs, and removes the file as it ends. The kernel drops the lock when its holder
dies, so the lock of a killed run is simply taken over.
"""

from __future__ import annotations

import dataclasses
import functools
import datetime as dt
import hashlib
import json
import os
import re
import tempfile
import uuid
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent runs into one folder are not caught there
    fcntl = None
from typing import Any

from pytest_callm import __version__
from pytest_callm.model import redact
from pytest_callm.model.config import ORACLE
from pytest_callm.saved import files
from pytest_callm.saved.seed_state import compress, rebuild_state
from pytest_callm.saved.slim import fill, slim
from pytest_callm.task.benchmark import benchmark_root
from pytest_callm.task.digest import digest_of_contents, digest_of_files, pack_hash
from pytest_callm.task.pack import Pack

FORMAT = "callm-run/1"
# /2: the final state as a difference from the pack's seed; /3: fields their reader rebuilds left out (slim.py)
TRAJECTORY_FORMAT = "callm-trajectory/3"
READABLE_TRAJECTORY_FORMATS = ("callm-trajectory/1", "callm-trajectory/2", TRAJECTORY_FORMAT)  # /1: full final state
REPORT_FORMAT = "callm-report/1"
VERIFIER_MODULES = ("scoring/verify.py", "scoring/verdict.py", "scoring/heard.py", "scoring/free_text.py",
                    "scoring/words.py", "scoring/grounding.py", "scoring/disclosure.py", "scoring/vocabulary.py",
                    "scoring/attempts.py", "task/refusals.py", "task/words_spec.py", "task/terms.py",
                    "normalize.py", "scoring/metrics.py", "scoring/stats.py")  # everything that scores


class RunDirError(Exception):
    pass


class RunDirWriteError(OSError):
    """The run folder took no more (a full disk, a read-only folder): the run stops there, what it
    saved before is intact, and a resume plays the rest."""

    def __init__(self, folder: Path, error: OSError):
        super().__init__(error.errno, f"cannot write to {folder} ({error.strerror or error})")
        self.folder = folder
        self.cause = error

    def __str__(self) -> str:
        return self.strerror


@functools.lru_cache(maxsize=16)
def _read_seed(path: str) -> dict[str, Any]:
    """A saved seed state, read once a process (it never changes: its name is its content's hash)."""
    return json.loads(files.read_text(Path(path)))


def write_json(path: Path, data: Any, *, indent: int | None = 2) -> None:
    """Write JSON atomically: a reader sees the old file or the new one, never half of one.
    `indent=None` writes one compact line with the C encoder (indenting forces json's pure-Python one,
    several times slower): for the trajectories, written once per attempt."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(redact.value(data), indent=indent, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":") if indent is None else None) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a run directory is for people to read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def default_run_dir(root: Path, model: str | None) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", model or "run")
    # A short random tail: two runs started in the same second never share a folder by accident.
    return root / "callm-runs" / f"{stamp}-{safe}-{uuid.uuid4().hex[:4]}"


def task_file_name(path: Path, root: Path) -> str:
    """A task file's name in the task-set hash: relative to the rootdir when below it, else to the
    installed benchmark's folder (`tasks/legal/...`, as in a checkout: one task set, one hash)."""
    for base in (lambda: root, benchmark_root):
        try:
            return str(path.resolve().relative_to(base().resolve()))
        except (ValueError, FileNotFoundError):  # not below it; or no benchmark installed
            continue
    return str(path.resolve())


def task_set_hash(task_files: list[Path], root: Path) -> str:
    return digest_of_contents([(task_file_name(path, root), path.read_bytes()) for path in task_files])


def verifier_hash() -> str:
    here = Path(__file__).resolve().parent.parent  # the package root
    return digest_of_contents([(m, (here / m).read_bytes()) for m in VERIFIER_MODULES])


def line_identity(spec: str) -> dict[str, Any]:
    """The phone line as a run used it: its spec, the hash of its profile and the seed of its draws."""
    from pytest_callm.phone.line import SEED_TAG, is_clean
    from pytest_callm.phone.error_profile import default_profile_path

    if is_clean(spec):
        return {"spec": "clean"}
    path = default_profile_path() if spec.strip() == "default" else Path(spec)
    return {"spec": spec, "profile_sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "seed": SEED_TAG}


def public_config(config) -> dict[str, Any] | None:
    """A model config as the manifest shows it: the key's variable name at most, never a key."""
    if config is None:
        return None
    shown = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    shown["base_url"] = redact.public_url(shown.get("base_url"))
    return shown


CALLER_KINDS = ("none", "offline", "plugin", "self", "model")
OFFLINE_CALLER = "offline"  # the offline caller: it answers from the task's script


def caller_record(model_config, caller_config, custom_caller: str | None, model: str | None = None) -> dict[str, str]:
    """Who played the caller, as the manifest records it: `kind` is offline (the oracle: the offline
    caller answers from the task's script), none (a run saved before the oracle had one), plugin (a
    caller of the project's own: `custom_caller` names the hook or fixture), self (the model under test
    on both sides) or model (the simulated caller on its own model), and `name`."""
    if model == ORACLE:
        return {"kind": "offline", "name": OFFLINE_CALLER}
    if model_config is None or caller_config is None:
        return {"kind": "none", "name": "none"}
    if custom_caller:
        return {"kind": "plugin", "name": custom_caller}
    if caller_config.name == model_config.name or caller_config.model == model_config.model:
        return {"kind": "self", "name": caller_config.name}
    return {"kind": "model", "name": caller_config.name}


def make_manifest(*, model: str, model_config, caller_config, line: str, attempts: int, k: int,
                  task_files: list[Path], packs: dict[str, Pack], root: Path,
                  python_tasks: dict[str, str] | None = None, custom_caller: str | None = None) -> dict[str, Any]:
    """`python_tasks`: the sha256 of each task written in Python, by name (test and task id);
    `custom_caller`: the hook or fixture that plugs in a caller of the project's own, if any."""
    comparable = {
        "model": model,
        "model_config": public_config(model_config),
        "caller_config": public_config(caller_config),
        "line": line_identity(line),
        "attempts": attempts,
        "hashes": {
            "tasks": task_set_hash(task_files, root),
            "packs": {name: pack_hash(pack) for name, pack in sorted(packs.items())},
            "verifier": verifier_hash(),
        },
    }
    counts = {"task_files": len(task_files)}
    if python_tasks:  # absent otherwise: a run of task files alone keeps the manifest it always had
        comparable["hashes"]["python_tasks"] = digest_of_files(list(python_tasks.items()))
        counts["python_tasks"] = len(python_tasks)
    from pytest_callm.scoring.stats import DEFAULT_SEED

    return {"format": FORMAT, "package_version": __version__, "k": k, "bootstrap_seed": DEFAULT_SEED,
            "created_at": dt.datetime.now().isoformat(timespec="seconds"), **counts, "comparable": comparable,
            # Beside `comparable`, not in it: runs saved before it was recorded still resume.
            "caller": caller_record(model_config, caller_config, custom_caller, model)}


# What a manifest records of a model config but no result depends on: where its file lies, how many
# calls its server carries at once, how long it may take to start. Never compared (below).
CONFIG_FIELDS_NOT_RESULTS = ("source", "calls_in_flight")
SERVE_FIELDS_NOT_RESULTS = ("ready_timeout_s",)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _without_loopback_port(url: Any) -> Any:
    """A model server on this machine is the same server on any port (--callm-serve takes a free one
    each run): its URL without the port."""
    if not isinstance(url, str):
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if parts.hostname not in LOOPBACK_HOSTS or parts.port is None:
            return url
    except ValueError:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return urlunsplit(parts._replace(netloc=host))


def results_part(comparable: dict[str, Any]) -> dict[str, Any]:
    """The settings of a `comparable` part that can change a result. Ports, paths and counts of
    workers or calls in flight change none, so they never block a resume, a merge or a comparison:
    every check of two runs' settings compares this part (`result_differences`)."""
    out = dict(comparable)
    for key in ("model_config", "caller_config"):
        config = out.get(key)
        if isinstance(config, dict):
            config = {k: v for k, v in config.items() if k not in CONFIG_FIELDS_NOT_RESULTS}
            config["base_url"] = _without_loopback_port(config.get("base_url"))
            if isinstance(config.get("serve"), dict):
                config["serve"] = {k: v for k, v in config["serve"].items() if k not in SERVE_FIELDS_NOT_RESULTS}
            out[key] = config
    line = out.get("line")
    if isinstance(line, dict) and line.get("profile_sha256"):  # the profile's content, wherever its file lies
        out["line"] = {k: v for k, v in line.items() if k != "spec"}
    return out


def result_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Where two runs' `comparable` parts differ in a setting that can change a result, as dotted paths."""
    return differences(results_part(old), results_part(new))


def differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Where two `comparable` parts differ, as dotted paths."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        where = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(differences(a, b, where + "."))
        elif a != b:
            out.append(where)
    return out


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._seeds_saved: set[tuple[str, str]] = set()  # (industry, seed id) known to be on disk

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    def manifest(self) -> dict[str, Any] | None:
        """The saved manifest, None when there is none. Raises RunDirError for one that is not a manifest."""
        try:
            data = json.loads(files.read_text(self.manifest_path))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise RunDirError(f"{self.manifest_path}: not a readable run manifest ({e}); "
                              "use another --callm-out, or remove the folder") from None
        if not isinstance(data, dict) or not isinstance(data.get("comparable", {}), dict):
            raise RunDirError(f"{self.manifest_path}: not a run manifest (expected a JSON object with a "
                              "`comparable` object); use another --callm-out, or remove the folder")
        return data

    def lock(self) -> None:
        """Hold this folder for the run, or raise RunDirError naming the run that holds it."""
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(f"{self.path} is a file, not a run directory")
        self.path.mkdir(parents=True, exist_ok=True)
        if fcntl is None or getattr(self, "_lock", None) is not None:
            return
        path = self.path / ".lock"
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise RunDirError(f"{self.path} is in use by another run (pid {owner}); wait for it to finish, "
                                  "or use another --callm-out") from None
            try:
                current = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if current:
                break
            os.close(fd)  # its holder removed it as it ended, after we opened it: lock the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock = fd

    def unlock(self) -> None:
        """Let the folder go: the lock file is removed (still held, so no one locks it meanwhile)."""
        fd, self._lock = getattr(self, "_lock", None), None
        if fd is not None:
            try:
                os.unlink(self.path / ".lock")
            except OSError:
                pass  # the folder was removed under us: nothing to clean
            os.close(fd)  # closing drops the lock

    def start(self, manifest: dict[str, Any]) -> bool:
        """Write the manifest of a new run, or check that of a run being resumed.

        Returns True when resuming. Raises RunDirError when the folder holds an incomparable run.
        """
        if self.check(manifest):
            return True
        write_json(self.manifest_path, manifest)
        return False

    def open_run(self, manifest: dict[str, Any], rescored_from: RunDir | None = None) -> bool:
        """Take the folder for a run with this manifest before any attempt runs; True when resuming.

        A run that cannot be resumed here is refused before the folder is touched (lock file
        included), checked again once locked, and then its manifest written (a new run) or kept (a
        resume). A rescore writes the manifest of the run it rescores, with today's verifier beside it.
        Raises RunDirError, naming why."""
        if rescored_from is None:
            self.check(manifest)
        self.lock()  # one run writes to a folder at a time
        if rescored_from is not None:
            original = rescored_from.manifest()
            rescored = {**manifest, "rescored_from": str(rescored_from.path), "comparable": original["comparable"],
                        "verifier_now": verifier_hash()}
            rescored.pop("caller", None)  # the rescore plays no caller: the played run's record stands
            if "caller" in original:
                rescored["caller"] = original["caller"]
            write_json(self.manifest_path, rescored)
            return False
        return self.start(manifest)  # again, now that the folder is ours

    def check(self, manifest: dict[str, Any]) -> bool:
        """Whether the folder holds a run comparable with `manifest` (False: none), writing nothing.
        Raises RunDirError when it holds an incomparable run."""
        old = self.manifest()
        if old is None:
            return False
        changed = result_differences(old.get("comparable", {}), manifest["comparable"])
        if changed:
            raise RunDirError(
                f"{self.path} holds a run made with other settings or inputs ({', '.join(changed)}); "
                "a resumed run must use the same model, caller, line, attempts, tasks, packs and verifier. "
                "Use another --callm-out for a new run.")
        return True

    def remove_if_unused(self) -> bool:
        """Remove a folder this run made and never used (no attempt saved, no report): a run stopped
        before it played anything leaves no folder that looks like a run. True when removed.
        Called while the folder is still locked (no other run can open it meanwhile); the lock goes last."""
        if any((self.path / "trajectories").glob("*/*/attempt-*.json")) or (self.path / "report.json").exists():
            return False
        for name in ("manifest.json", "shard.json", "report/style.css"):
            try:
                (self.path / name).unlink(missing_ok=True)
            except OSError:  # a read-only folder: it holds nothing of this run either
                return False
        for folder in sorted((p for p in self.path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            try:
                folder.rmdir()
            except OSError:
                pass
        self.unlock()
        try:
            self.path.rmdir()
        except OSError:
            return False  # something else is in it: not ours to remove
        return True

    def trajectory_path(self, industry: str, task_id: str, attempt: int) -> Path:
        return self.path / "trajectories" / industry / task_id / f"attempt-{attempt}.json"

    def save_attempt(self, industry: str, task_id: str, attempt: int, record: dict[str, Any],
                     seed: tuple[str, dict[str, Any]] | None = None,
                     keys: dict[str, str | None] | None = None) -> None:
        """Save a finished attempt; with the pack's `seed` (seed_state.seed_state), its final state is
        saved as the difference from that seed (`keys`: the compared tables' key columns)."""
        trajectory = record.get("trajectory") or {}
        if seed is not None and "final_state" in trajectory:
            diff = compress(seed, trajectory["final_state"], keys)
            if diff is not None:
                # Under the industry `expand` reads it from; before the attempt: no saved attempt lacks its seed.
                self._save_seed(trajectory.get("industry") or industry, seed)
                trajectory = {k: v for k, v in trajectory.items() if k != "final_state"}
                record = {**record, "trajectory": {**trajectory, "final_state_diff": diff}}
        try:
            write_json(self.trajectory_path(industry, task_id, attempt),
                       {"format": TRAJECTORY_FORMAT, "complete": True, **slim(record)}, indent=None)
        except OSError as e:
            raise RunDirWriteError(self.path, e) from None

    def seed_path(self, industry: str, seed_id: str) -> Path:
        return self.path / "seeds" / industry / f"{seed_id}.json"

    def _save_seed(self, industry: str, seed: tuple[str, dict[str, Any]]) -> None:
        if (industry, seed[0]) in self._seeds_saved:
            return
        path = self.seed_path(industry, seed[0])
        if not path.is_file():  # a racing worker writes the same bytes: either rename wins whole
            try:
                write_json(path, seed[1], indent=None)
            except OSError as e:
                raise RunDirWriteError(self.path, e) from None
        self._seeds_saved.add((industry, seed[0]))

    def _seed(self, industry: str, seed_id: str) -> dict[str, Any]:
        return _read_seed(str(self.seed_path(industry, seed_id)))

    def expand(self, data: dict[str, Any]) -> dict[str, Any]:
        """A saved attempt with its final state rebuilt in full and every field it left out put back,
        whichever format saved it."""
        if data.get("format") == TRAJECTORY_FORMAT:
            data = fill(data)
        trajectory = data.get("trajectory") or {}
        diff = trajectory.get("final_state_diff")
        if diff is None:
            return data
        industry = trajectory.get("industry") or (data.get("task") or {}).get("industry")
        try:
            seed = self._seed(industry, diff["seed"])
        except FileNotFoundError:
            raise RunDirError(f"{self.seed_path(industry, diff['seed'])} is missing: the saved final states of "
                              f"{industry} cannot be rebuilt without it") from None
        except (OSError, ValueError, RecursionError) as e:  # a FIFO, a torn or hand-edited file
            raise RunDirError(f"{self.seed_path(industry, diff['seed'])}: cannot be read ({e}): the saved final "
                              f"states of {industry} cannot be rebuilt without it") from None
        full = {k: v for k, v in trajectory.items() if k != "final_state_diff"}
        full["final_state"] = rebuild_state(seed, diff["tables"])
        return {**data, "trajectory": full}

    def load_attempt(self, industry: str, task_id: str, attempt: int) -> dict[str, Any] | None:
        """A complete saved attempt, or None (missing, torn or unfinished files count as missing),
        with its final state in full."""
        return self.read_attempt(self.trajectory_path(industry, task_id, attempt))

    def read_attempt(self, path: Path) -> dict[str, Any] | None:
        try:
            data = json.loads(files.read_text(path))
        except (OSError, ValueError, RecursionError):  # missing, a FIFO, torn: not a saved attempt
            return None
        if not isinstance(data, dict) or data.get("format") not in READABLE_TRAJECTORY_FORMATS \
                or not data.get("complete") or not isinstance(data.get("trajectory"), dict):
            return None  # `null`, a list, a torn or foreign file: not a saved attempt, so it is played again
        return self.expand(data)

    def saved_attempts(self) -> list[dict[str, Any]]:
        """Every complete saved attempt of the run, in path order."""
        out = []
        for path in sorted((self.path / "trajectories").glob("*/*/attempt-*.json")):
            data = self.read_attempt(path)
            if data is not None:
                out.append(data)
        return out

    def write_report(self, report: dict[str, Any]) -> Path:
        path = self.path / "report.json"
        try:
            write_json(path, {"format": REPORT_FORMAT, **report})
        except OSError as e:
            raise RunDirWriteError(self.path, e) from None
        return path
