"""Many files, one job: the runner `transcribe` and `align` share for a corpus, on this machine or a Ray cluster.

A job is a list of FileJobs (an input and the output it writes).  A worker is built once per process (or per Ray
actor) from picklable settings: it loads the model once, then turns one FileJob into a FileResult; it never raises
for a user's file (the message comes back instead), and it writes its output whole or not at all (a temporary file
renamed), so an output that exists is a finished one.  That makes every job resumable: run it again and the files
whose output exists are skipped (`pending`), whatever stopped the first run (Ctrl-C, a killed worker, a lost node).

  processes  --jobs N: N worker processes on this machine (concurrent.futures), one onnxruntime thread each;
             N = 1 runs in this process.  A worker that dies (killed, out of memory) ends the job: the files not
             finished are reported as failed and the next run does them.
  Ray        --ray ADDRESS: Ray Data over the job list, an actor pool of workers (each loads the model once), so
             scheduling, retries of a lost task and restarts of a lost actor are Ray's own.  Outputs go to a folder
             every node sees (a shared file system).  ray is an optional extra: pip install '.[cluster]'.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from speechattn.errors import SpeechattnError, one_line
from speechattn.files import exists


@dataclass(frozen=True)
class FileJob:
    source: str  # the audio file
    target: str  # the output it writes
    text: str | None = None  # align: the words, a file
    words: str | None = None  # align: the words themselves (a manifest's supervisions)
    language: str | None = None  # align: the words' language as the manifest's supervisions name it (es, Spanish)


@dataclass(frozen=True)
class FileResult:
    source: str
    seconds: float  # of audio done
    error: str | None = None  # one line, when the file failed
    not_heard: int = 0  # align: words of the script not heard


def pending(jobs: Iterable[FileJob], overwrite: bool) -> tuple[list[FileJob], int]:
    """(the jobs still to do, how many are done): a job is done when its output exists."""
    todo, done = [], 0
    for job in jobs:
        if not overwrite and exists(job.target):
            done += 1
        else:
            todo.append(job)
    return todo, done


def audio_seconds(path: str) -> float:
    """The duration the file's header gives (0 when it gives none): sizes the progress bar."""
    import soundfile as sf

    try:
        return float(sf.info(path).duration)
    except Exception:  # noqa: BLE001  (any format soundfile cannot read: the bar just counts it as 0)
        return 0.0


# A worker: make_worker(settings) -> a callable FileJob -> FileResult.  Module-level so that processes and Ray
# actors can build it from its name.
_local: dict = {}


def _init_process(make_worker: Callable, settings, parent: int | None) -> None:
    die_with_parent(parent)
    try:
        _local["worker"] = make_worker(settings)
    except (SpeechattnError, ValueError, OSError) as error:  # one line per file, not a traceback per worker
        _local["error"] = one_line(error)


def die_with_parent(parent: int | None) -> None:
    """End this worker process when its parent ends, even by SIGKILL (which gives the parent no chance to end it):
    the kernel's parent-death signal on Linux, elsewhere a thread that watches the parent.  `parent`: the process id
    this one was started by, or None when that is a fork server (which ends with the main process)."""
    import os
    import signal

    try:
        import ctypes

        PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
        signalled = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux: no prctl
        signalled = False
    if parent is None:
        return
    if os.getppid() != parent:  # it died before the signal was asked for: this process was handed to another
        os._exit(1)
    if not signalled:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _run_in_process(job: FileJob) -> FileResult:
    if "error" in _local:  # the worker could not be built (its one line, for every file it was handed)
        return FileResult(job.source, 0.0, _local["error"])
    return _local["worker"](job)


def run_processes(jobs: list[FileJob], make_worker: Callable, settings, processes: int) -> Iterator[FileResult]:
    """The results in the jobs' order, from `processes` worker processes (1: here; never more than the jobs, each
    loading the model)."""
    if not jobs:
        return
    processes = min(processes, len(jobs))
    if processes == 1:
        worker = make_worker(settings)
        for job in jobs:
            yield worker(job)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import multiprocessing
    import os

    parent = os.getpid() if multiprocessing.get_start_method() in ("fork", "spawn") else None
    pool = ProcessPoolExecutor(processes, initializer=_init_process, initargs=(make_worker, settings, parent))
    futures = [pool.submit(_run_in_process, job) for job in jobs]
    broken = False
    try:
        for job, future in zip(jobs, futures):
            try:
                yield future.result()
            except BrokenProcessPool:
                broken = True
                yield FileResult(job.source, 0.0, "a worker process died (killed, or out of memory); this file was "
                                                  "not finished: run the same command again to do it")
    finally:
        if broken:  # the survivors may wait on a queue whose lock died with the dead one: end them, wait for none
            for process in list((pool._processes or {}).values()):
                process.kill()
        pool.shutdown(wait=not broken, cancel_futures=True)


class _RayWorker:
    """A Ray Data actor: one worker (one model) for its life; a batch of jobs in, their results out."""

    make_worker: Callable
    settings = None
    folder = ""  # the command's working folder: relative paths mean there what they mean to the command

    def __init__(self) -> None:
        import os

        try:  # a node sees it when it shares the file system; where it does not, a relative path fails by its file
            os.chdir(self.folder or ".")
        except OSError:
            pass
        self.worker = self.make_worker(self.settings)

    def __call__(self, batch: dict) -> dict:
        results = [self.worker(FileJob(source, target, text or None, words or None))
                   for source, target, text, words in zip(batch["source"], batch["target"], batch["text"],
                                                          batch["words"])]
        return {"source": [r.source for r in results], "seconds": [r.seconds for r in results],
                "error": [r.error or "" for r in results], "not_heard": [r.not_heard for r in results]}


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


RAY_CONNECT_SECONDS = 30  # --ray HOST:PORT gives up when no Ray head answers within this (a host down, a firewall)


def _ray_token_here() -> tuple[str, str]:
    """(this machine's Ray token or "", where it was looked for), from where Ray reads it, in Ray's order: the
    RAY_AUTH_TOKEN variable, the file RAY_AUTH_TOKEN_PATH names, ~/.ray/auth_token (the file `ray start --head`
    uses, and `ray get-auth-token --generate` or a first `ray.init()` writes)."""
    import os

    from speechattn.files import read_bounded

    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return os.environ["RAY_AUTH_TOKEN"].strip(), "RAY_AUTH_TOKEN"
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    if not path.is_file():
        return "", str(path)
    lines = read_bounded(path, "Ray token", 64 * 1024).decode("utf-8", errors="replace").splitlines()
    return (lines[0].strip() if lines else ""), str(path)


def _ask_ray_head(address: str, token: str) -> tuple[str, str]:
    """(gRPC status name, its detail) of one request to the head's GCS (its cluster id), RAY_CONNECT_SECONDS at most:
    OK, UNAUTHENTICATED (the cluster takes a token: `ray start` found one), UNAVAILABLE (nothing listens, or no
    such host), DEADLINE_EXCEEDED (no answer), or another (something that is not a Ray head)."""
    try:
        import grpc
    except ImportError:
        raise SpeechattnError(f"--ray {address} needs grpcio: pip install '.[cluster]' again in a clone of speechattn "
                              "(or pip install 'ray[data,client]')") from None
    with grpc.insecure_channel(address) as channel:
        ask = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetClusterId", request_serializer=lambda _: b"",
                                  response_deserializer=lambda reply: reply)  # an empty request: the message's defaults
        try:
            ask(None, timeout=RAY_CONNECT_SECONDS, metadata=[("authorization", f"Bearer {token}")] if token else None)
        except grpc.RpcError as error:
            return error.code().name, (error.details() or "").rsplit(": ", 1)[-1][:200]
    return "OK", ""


def _check_ray_head(address: str) -> None:
    """One line, within RAY_CONNECT_SECONDS, for a HOST:PORT where no Ray head answers, or whose token this machine
    lacks; ray.init itself retries such an address for minutes, printing Ray's warnings.  A cluster that `ray start
    --head` started with a token (~/.ray/auth_token was there) is joined with this machine's token, which Ray sends
    to an explicit address only under RAY_AUTH_MODE=token; RAY_AUTH_MODE, when set, decides."""
    import os

    mode = os.environ.get("RAY_AUTH_MODE", "").lower()
    token, where = _ray_token_here() if mode != "disabled" else ("", "")
    status, detail = _ask_ray_head(address, token if mode == "token" else "")
    if status == "UNAUTHENTICATED" and not mode and token:
        status, detail = _ask_ray_head(address, token)
        if status == "OK":
            os.environ["RAY_AUTH_MODE"] = "token"  # read by Ray when imported, so before `import ray`
    if status == "OK":
        return
    head = "the head's ~/.ray/auth_token"
    if status == "UNAUTHENTICATED" and mode == "disabled":
        raise SpeechattnError(f"--ray {address}: the cluster takes a token and RAY_AUTH_MODE=disabled here: unset it, "
                              f"with {head} copied to this machine's ~/.ray/auth_token (or in RAY_AUTH_TOKEN)")
    if status == "UNAUTHENTICATED" and not token:
        raise SpeechattnError(f"--ray {address}: the cluster takes a token (`ray start` found one) and this machine "
                              f"has none: copy {head} to this machine's ~/.ray/auth_token (or set RAY_AUTH_TOKEN)")
    if status == "UNAUTHENTICATED":
        raise SpeechattnError(f"--ray {address}: the cluster refuses this machine's Ray token ({where}): it must be "
                              f"{head}")
    if status == "UNAVAILABLE":
        raise SpeechattnError(f"--ray {address}: no Ray cluster answers there ({detail}); start its head with "
                              "`ray start --head`, or give the address it printed (port 6379 unless --port said "
                              "otherwise)")
    if status == "DEADLINE_EXCEEDED":
        raise SpeechattnError(f"--ray {address}: no answer within {RAY_CONNECT_SECONDS} s (the host is down, or a "
                              "firewall drops the port)")
    raise SpeechattnError(f"--ray {address}: something answers there, but not a Ray cluster's head ({status.lower()}): "
                          "give the address `ray start --head` printed (port 6379 unless --port said otherwise)")


@contextmanager
def _stderr_silenced():
    """Standard error (the descriptor, which Ray's C++ core writes to) sent to /dev/null for a while: ray.init's C++
    core prints a line of its own on every start (the log level it read from RAY_BACKEND_LOG_LEVEL) before it
    applies that level.  Ray's errors come back as exceptions, and its logs are in its log files."""
    import os

    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no standard error at all: nothing to silence
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def run_ray(jobs: list[FileJob], make_worker: Callable, settings, address: str,
            actors: int | None = None) -> Iterator[FileResult]:
    """The results (in the order they finish) from an actor pool on the Ray cluster at `address` ("auto": the one
    this machine belongs to, `ray start`'s; "local": a Ray started here for this job; HOST:PORT: a head's address,
    checked first so that a wrong one fails within RAY_CONNECT_SECONDS)."""
    import logging
    import os

    from speechattn.errors import UsageError

    named = (os.environ.get("RAY_ADDRESS") or address) if address == "auto" else address  # as ray.init reads "auto"
    if "://" in named:  # ray.init would go through Ray Client, under which Ray Data's executor cannot run
        raise UsageError(f"--ray {named}: Ray Data, which runs the job, does not work through Ray Client (ray://); run "
                         "the command on a node of the cluster (--ray auto), or hand it to the cluster: ray job submit "
                         "--address http://HEAD:8265 -- speechattn ... --ray auto")
    if not ray_available():
        raise SpeechattnError("--ray needs Ray, which is not installed: pip install '.[cluster]' in a clone of "
                              "speechattn (or pip install 'ray[data,client]')")  # exit 1, as any missing package
    if named not in ("auto", "local"):
        _check_ray_head(named)
    # Ray Data's own actors take their constructor arguments from the object store, which Ray's C++ core notes as
    # an error line on every run; the notes stay in Ray's log files (/tmp/ray/session_latest/logs).  A level the
    # user set wins.
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    import ray

    try:
        if not ray.is_initialized():
            with _stderr_silenced():
                ray.init(address=None if address == "local" else address, logging_level=logging.ERROR,
                         log_to_driver=False, include_dashboard=False)
    except (ConnectionError, RuntimeError, ValueError, ray.exceptions.RayError) as error:
        if address == "auto" and not os.environ.get("RAY_ADDRESS"):  # Ray's own words name its --address flag
            raise SpeechattnError("--ray auto: no Ray cluster runs on this machine; start one (ray start --head) or "
                                  "give its head: --ray HEAD:6379, or --ray local for one of this command's own") \
                from None
        raise SpeechattnError(f"--ray {address}: cannot connect to a Ray cluster ({str(error).splitlines()[0][:200]})") \
            from None
    if not jobs:
        return
    from ray.data import ActorPoolStrategy, DataContext

    # Ray's own log lines (its executor's INFO, notes on defaults) would break our progress bar and summary; they stay
    # in Ray's log files (/tmp/ray/session_latest/logs).  ray.init set the "ray" logger's level; Ray Data sets its own
    # when imported, so both are set here, after that import
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    context = DataContext.get_current()
    context.enable_progress_bars = False  # ours counts audio seconds over the whole job
    context.print_on_execution_start = False
    cpus = int(ray.cluster_resources().get("CPU", 1))
    size = max(1, min(actors or cpus, cpus, len(jobs)))
    items = [{"source": job.source, "target": job.target, "text": job.text or "", "words": job.words or ""}
             for job in jobs]
    dataset = ray.data.from_items(items, override_num_blocks=min(len(items), max(size * 4, 1)))
    # the settings ride in the actor class itself (pickled with it), not as constructor arguments in the object
    # store, so an actor Ray restarts after losing it (or its node) is built again from the class alone
    actor = type("SpeechattnWorker", (_RayWorker,), {"make_worker": make_worker, "settings": settings,
                                                      "folder": os.getcwd()})
    # Ray Data's actor pool restarts a lost actor and retries its tasks (max_restarts and max_task_retries -1 by
    # default); a lost node's blocks are made again from their lineage
    results = dataset.map_batches(actor, batch_size=4, compute=ActorPoolStrategy(size=size), num_cpus=1)
    for row in results.iter_rows():
        yield FileResult(row["source"], float(row["seconds"]), row["error"] or None, int(row["not_heard"]))


def run_job(jobs: list[FileJob], make_worker: Callable, settings, processes: int = 1, ray: str | None = None,
            progress: bool = True, description: str = "working",
            on_result: Callable[[FileResult], None] | None = None) -> list[FileResult]:
    """Run every job with a progress bar over the whole job's audio (time left included); each result is handed to
    on_result as it comes (errors are printed above the bar by the caller's on_result)."""
    from tqdm import tqdm

    durations = {job.source: audio_seconds(job.source) for job in jobs} if progress else {}
    results = []
    with tqdm(total=sum(durations.values()), unit="s", disable=not progress, desc=description, file=sys.stderr,
              bar_format="{desc}: {n:.0f} of {total:.0f} s of audio |{bar}| [{elapsed} < {remaining}]") as bar:
        stream = (run_ray(jobs, make_worker, settings, ray, processes if processes > 1 else None) if ray
                  else run_processes(jobs, make_worker, settings, processes))
        for result in stream:
            results.append(result)
            if on_result is not None:
                on_result(result)
            bar.update(durations.get(result.source, 0.0))
    return results


MAX_LIST_LINES = 10_000_000  # a file list or manifest longer than this is not a list of recordings


def files_from(list_path: Path) -> list[Path]:
    """--files-from LIST: one audio path per line (blank lines and lines starting with # skipped); a relative path
    is relative to the list's folder, as a playlist's are."""
    from speechattn.files import refuse_special

    refuse_special(list_path, "file list")
    paths = []
    try:
        with open(list_path, encoding="utf-8") as lines:  # line by line: a huge file stops at the bound, unread
            for number, line in enumerate(lines, 1):
                if number > MAX_LIST_LINES:
                    raise SpeechattnError(f"--files-from {list_path}: more than {MAX_LIST_LINES:,} lines")
                if line.strip() and not line.lstrip().startswith("#"):
                    paths.append(Path(line.strip()))
    except (OSError, UnicodeDecodeError) as error:
        raise SpeechattnError(f"--files-from {list_path}: cannot read ({getattr(error, 'strerror', None) or error})") from None
    if not paths:
        raise SpeechattnError(f"--files-from {list_path}: lists no file")
    return [p if p.is_absolute() else Path(list_path).parent / p for p in paths]


def is_manifest(path: Path) -> bool:
    return path.name.endswith((".jsonl.gz", ".jsonl")) and path.is_file()


def _json_lines(path: Path):
    """(line number, item) of a lhotse manifest (.jsonl or .jsonl.gz), bounded; one line for a file that is none."""
    import gzip
    import json
    import zlib

    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if number > MAX_LIST_LINES:
                    raise SpeechattnError(f"{path}: more than {MAX_LIST_LINES:,} lines")
                if line.strip():
                    item = json.loads(line)
                    if not isinstance(item, dict):
                        raise SpeechattnError(f"{path}:{number}: not a lhotse manifest item")
                    yield number, item
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as error:  # zlib: corrupt gzip
        reason = "corrupt gzip data" if isinstance(error, zlib.error) else type(error).__name__
        raise SpeechattnError(f"{path}: not a readable lhotse manifest ({reason})") from None


def manifest_texts(path: Path) -> list[tuple[str, Path, str, str | None]]:
    """align's corpus from a lhotse supervisions manifest: (recording id, its audio file, its words, their language)
    per recording, the texts of its supervisions in time order, one per line (each a sentence start), and the
    language its supervisions name (lhotse's `language`: es, Spanish; None where none does; supervisions of one
    recording naming two are an error: its words are aligned as one text).  The recordings manifest beside it gives
    the files (`speechattn prepare` names them so)."""
    from speechattn.files import refuse_special

    refuse_special(path, "manifest")
    if "_supervisions_" not in path.name:
        raise SpeechattnError(f"{path}: align takes a supervisions manifest (its texts), with its recordings "
                              "manifest beside it")
    texts: dict[str, list[tuple[float, str]]] = {}
    languages: dict[str, set[str]] = {}
    for number, item in _json_lines(path):
        recording, text = item.get("recording_id"), item.get("text")
        if not isinstance(recording, str) or not isinstance(text, str) or not text.strip():
            raise SpeechattnError(f"{path}:{number}: {item.get('id', '?')}: a supervision with a recording_id and "
                                  "its text is needed")
        start = item.get("start", 0.0)
        texts.setdefault(recording, []).append((float(start) if isinstance(start, (int, float)) else 0.0, text))
        if isinstance(item.get("language"), str) and item["language"].strip():
            languages.setdefault(recording, set()).add(item["language"].strip())
    mixed = next((r for r, named in languages.items() if len(named) > 1), None)
    if mixed is not None:
        raise SpeechattnError(f"{path}: recording {mixed}: its supervisions name {len(languages[mixed])} languages "
                              f"({', '.join(sorted(languages[mixed]))}); align takes one a recording")
    audio = dict(zip(*_manifest_recordings(path))) if texts else {}
    missing = [r for r in texts if r not in audio]
    if missing:
        raise SpeechattnError(f"{path}: {len(missing)} recording(s) not in the recordings manifest beside it, "
                              f"e.g. {missing[0]}")
    if not texts:
        raise SpeechattnError(f"{path}: no supervisions")
    return [(recording, audio[recording], "\n".join(t for _, t in sorted(parts, key=lambda p: p[0])),
             next(iter(languages.get(recording, {None}))))
            for recording, parts in texts.items()]


def _manifest_recordings(path: Path) -> tuple[list[str], list[Path]]:
    """(ids, files) of a recordings manifest, or of the one beside a supervisions manifest."""
    if "_supervisions_" in path.name:
        beside = path.with_name(path.name.replace("_supervisions_", "_recordings_"))  # as `prepare` names them
        if not beside.is_file():
            raise SpeechattnError(f"{path}: a supervisions manifest; its recordings manifest ({beside}) is not "
                                  "beside it")
        path = beside
    ids, files = [], []
    for number, item in _json_lines(path):
        sources = item.get("sources")
        found = [s.get("source") for s in sources or [] if isinstance(s, dict) and s.get("type") == "file"]
        if not found or not isinstance(found[0], str):
            raise SpeechattnError(f"{path}:{number}: not a lhotse recording with a file source (speechattn reads "
                                  "recordings stored as files)")
        ids.append(str(item.get("id", number)))
        files.append(Path(found[0]))
    return ids, files


def manifest_audio(path: Path) -> list[Path]:
    """The audio files of a lhotse manifest: a recordings manifest's file sources, or, for a supervisions manifest
    (`speechattn prepare`'s *_supervisions_*), those of the recordings manifest beside it (each recording once)."""
    from speechattn.files import refuse_special

    refuse_special(path, "manifest")
    _, files = _manifest_recordings(path)
    if not files:
        raise SpeechattnError(f"{path}: no recordings")
    return list(dict.fromkeys(files))
