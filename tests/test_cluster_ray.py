"""--ray as people start Ray: two `ray start` nodes on this machine, joined by HOST:PORT, write what one process
writes, with no Ray line on the terminal, whether the cluster took a token (as Ray does when ~/.ray/auth_token is
there) or not; a missing or wrong token, an address where nothing listens, a head that never answers and Ray Client
(ray://) are one line each, within RAY_CONNECT_SECONDS.

Every Ray here runs with its own HOME (its token) and temp folder, and is ended by its process group: `ray stop`
would end every Ray on the machine."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("ray", reason="the cluster extra: pip install '.[cluster]'")
pytest.importorskip("grpc", reason="the cluster extra: pip install '.[cluster]'")

from speechattn.runtime.batch import RAY_CONNECT_SECONDS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ["speechattn/runtime/samples/please-enter-your-password.wav",  # relative: the nodes' folders differ
           "speechattn/runtime/samples/this-no-longer-appears-to-be-the-case.wav"]
RAY = Path(sys.executable).parent / "ray"
STARTUP_SECONDS = 20  # python, click and onnxruntime starting on a busy 2-core machine, before --ray is reached


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
    return {**env, "HOME": str(home), **extra}


def speechattn(*args, home: Path, timeout: float = 300, **extra: str) -> SimpleNamespace:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "speechattn", *map(str, args)], cwd=ROOT, capture_output=True,
                            text=True, timeout=timeout, env=environment(home, **extra))
    return SimpleNamespace(status=result.returncode, err=result.stderr, lines=result.stderr.splitlines(),
                           seconds=time.monotonic() - started)


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def one_line(result: SimpleNamespace, status: int) -> str:
    assert result.status == status and len(result.lines) == 1, result.err
    assert result.lines[0].startswith("speechattn transcribe: error: --ray "), result.err
    return result.lines[0]


def start_node(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """`ray start ... --block` in a process group of its own; returns once it says it started."""
    ports = [f"--{name}={free_port()}" for name in ("dashboard-agent-listen-port", "dashboard-agent-grpc-port",
                                                     "runtime-env-agent-port", "metrics-export-port")]
    with open(log, "w") as out:
        node = subprocess.Popen([str(RAY), "start", "--block", "--num-cpus=1", "--disable-usage-stats", *ports, *args],
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=log.parent)  # not the command's folder: the actors must not depend on it
    deadline = time.monotonic() + 120
    while "Ray runtime started" not in log.read_text():
        if node.poll() is not None or time.monotonic() > deadline:
            end_nodes([node])
            raise AssertionError(f"ray start failed:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return node


def end_nodes(nodes: list[subprocess.Popen]) -> None:
    for node in nodes:  # a throwaway cluster: its whole process group, at once (what `ray stop --force` sends)
        try:
            os.killpg(node.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        node.wait(timeout=30)


@pytest.fixture(scope="module", params=["token", "no token"])
def cluster(request, tmp_path_factory):
    """A head (`ray start --head --port P`) and a second node (`ray start --address 127.0.0.1:P`), one CPU each, as
    docs/cluster.md starts them; "token": ~/.ray/auth_token was there, so Ray turned token authentication on (the
    second node joins with RAY_AUTH_MODE=token, which `ray start --address` needs, and speechattn with nothing
    set); "no token": none was, so the cluster has no authentication, while the machine that runs speechattn has
    a token of its own (which must not be sent)."""
    home = tmp_path_factory.mktemp("home")
    started_with = environment(home)
    if request.param == "token":
        subprocess.run([str(RAY), "get-auth-token", "--generate"], env=started_with, check=True, capture_output=True,
                       timeout=120)
    temp = Path(tempfile.mkdtemp(prefix="sa-ray-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    port, nodes = free_port(), []
    try:
        nodes.append(start_node(["--head", f"--port={port}", f"--temp-dir={temp}", "--include-dashboard=false",
                                 f"--ray-client-server-port={free_port()}", f"--dashboard-port={free_port()}"],
                                started_with, temp / "head.log"))
        joins_with = {**started_with, "RAY_AUTH_MODE": "token"} if request.param == "token" else started_with
        nodes.append(start_node([f"--address=127.0.0.1:{port}"], joins_with, temp / "node.log"))  # as the docs say
        if request.param == "no token":
            subprocess.run([str(RAY), "get-auth-token", "--generate"], env=started_with, check=True,
                           capture_output=True, timeout=120)
        yield SimpleNamespace(address=f"127.0.0.1:{port}", home=home)
    finally:
        end_nodes(nodes)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_two_ray_start_nodes_joined_by_host_port_write_what_one_process_writes_and_no_ray_line(cluster, tmp_path):
    alone = speechattn("transcribe", *SAMPLES, "--output-dir", tmp_path / "alone", "--format", "json", "--jobs", 1,
                       home=cluster.home)
    assert alone.status == 0, alone.err
    joined = speechattn("transcribe", *SAMPLES, "--output-dir", tmp_path / "ray", "--format", "json", "--ray",
                        cluster.address, home=cluster.home)
    assert joined.status == 0, joined.err
    assert len(joined.lines) == 1 and joined.lines[0].startswith("speechattn transcribe: 2 files,"), joined.err
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "alone") and len(outputs(tmp_path / "alone")) == 2


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["token"], indirect=True)
@pytest.mark.parametrize("token", ["none here", "a wrong one"])
def test_a_token_cluster_joined_without_its_token_is_one_line_at_once(cluster, token, tmp_path):
    home = tmp_path / "elsewhere"
    home.mkdir()
    extra = {"RAY_AUTH_TOKEN": "0" * 64} if token == "a wrong one" else {}
    result = speechattn("transcribe", SAMPLES[0], "--output-dir", tmp_path / "out", "--ray", cluster.address,
                        home=home, **extra)
    line = one_line(result, 1)
    assert ("refuses this machine's Ray token" if extra else "this machine has none") in line, line
    assert "~/.ray/auth_token" in line and result.seconds < STARTUP_SECONDS, result.seconds


def test_an_address_where_nothing_listens_is_one_line_at_once(tmp_path):
    result = speechattn("transcribe", SAMPLES[0], "--output-dir", tmp_path / "out", "--ray", f"127.0.0.1:{free_port()}",
                        home=tmp_path, timeout=RAY_CONNECT_SECONDS + STARTUP_SECONDS)
    assert "no Ray cluster answers there (Connection refused)" in one_line(result, 1), result.err
    assert result.seconds < STARTUP_SECONDS, result.seconds  # not Ray's 20 retries of 40 s


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="needs root and unshare: a machine of its own (a PID namespace) with no Ray cluster in it")
def test_auto_with_no_cluster_on_this_machine_says_how_to_start_one(tmp_path):
    """Ray's own words named its --address flag, which speechattn does not have.  `--ray auto` finds any cluster
    this machine runs (Ray looks for its processes, and other tests here start some): the command runs in a PID
    namespace of its own, which has none, and TMPDIR hides Ray's address file."""
    (tmp_path / "tmp").mkdir()
    started = time.monotonic()
    result = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "speechattn",
                             "transcribe", str(SAMPLES[0]), "--output-dir", str(tmp_path / "out"), "--ray", "auto"],
                            cwd=ROOT, capture_output=True, text=True, timeout=RAY_CONNECT_SECONDS + STARTUP_SECONDS,
                            env=environment(tmp_path, TMPDIR=str(tmp_path / "tmp")))
    line = one_line(SimpleNamespace(status=result.returncode, err=result.stderr, lines=result.stderr.splitlines(),
                                    seconds=time.monotonic() - started), 1)
    assert "--ray auto: no Ray cluster runs on this machine; start one (ray start --head)" in line, line
    assert "--address" not in line


@pytest.mark.slow
def test_a_head_that_never_answers_is_given_up_within_the_stated_bound(tmp_path):
    with socket.socket() as silent:  # takes the connection (the kernel's backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        result = speechattn("transcribe", SAMPLES[0], "--output-dir", tmp_path / "out", "--ray",
                            f"127.0.0.1:{silent.getsockname()[1]}", home=tmp_path,
                            timeout=RAY_CONNECT_SECONDS + 2 * STARTUP_SECONDS)
    line = one_line(result, 1)
    assert "no Ray cluster answers there" in line or f"no answer within {RAY_CONNECT_SECONDS} s" in line, line
    assert result.seconds < RAY_CONNECT_SECONDS + STARTUP_SECONDS, result.seconds


@pytest.mark.parametrize("how", ["--ray ray://", "RAY_ADDRESS=ray:// with --ray auto"])
def test_ray_client_is_refused_in_one_line_with_the_way_that_works(how, tmp_path):
    """Ray Data's executor cannot run through Ray Client (ray-project/ray#48682): said before connecting."""
    client = f"ray://127.0.0.1:{free_port()}"
    address, extra = (client, {}) if how == "--ray ray://" else ("auto", {"RAY_ADDRESS": client})
    result = speechattn("transcribe", SAMPLES[0], "--output-dir", tmp_path / "out", "--ray", address, home=tmp_path,
                        **extra)
    line = one_line(result, 2)
    assert "does not work through Ray Client" in line and "ray job submit" in line, line


def test_transcribe_help_states_the_bound_on_the_wait():
    result = subprocess.run([sys.executable, "-m", "speechattn", "transcribe", "--help"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert f"within {RAY_CONNECT_SECONDS} s" in " ".join(result.stdout.split()), result.stdout
