"""Corpus jobs (speechattn/runtime/batch.py): the same outputs from one process, two worker processes and a local
two-node Ray cluster; a killed worker process or a lost Ray node loses nothing (the rerun does only what is missing
and ends equal to a clean run); an unreadable file is listed as failed and the rest complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal

ROOT = Path(__file__).resolve().parent.parent
FILES = 240


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """240 short recordings in two folders (0.4-1.2 s, 16 and 8 kHz), one of them not audio at all."""
    folder = tmp_path_factory.mktemp("corpus")
    rng = np.random.default_rng(0)
    for number in range(FILES):
        part = folder / ("a" if number % 2 else "b")
        part.mkdir(exist_ok=True)
        seconds = float(rng.uniform(0.4, 1.2))
        audio = speechlike_signal(seconds, seed=number)
        rate = 8000 if number % 7 == 0 else 16000
        sf.write(part / f"u{number:04d}.wav", audio[:: 16000 // rate], rate, subtype="PCM_16")
    (folder / "b" / "u9999.wav").write_bytes(b"RIFF, but no audio in it")
    return folder


def transcribe(corpus: Path, out: Path, *options, wait: bool = True, model: str = "default-int8"):
    command = [sys.executable, "-X", "faulthandler", "-m", "speechattn", "transcribe", str(corpus), "--output-dir", str(out),
               "--format", "json", "--model", model, *map(str, options)]
    if not wait:
        return subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def outputs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}


def wait_for_outputs(out: Path, count: int, process: subprocess.Popen, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if out.exists() and sum(1 for p in out.iterdir() if not p.name.startswith(".")) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"the job ended or stalled before {count} outputs (status {process.poll()})")


@pytest.fixture(scope="module")
def clean_run(corpus, tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("clean") / "out"
    result = transcribe(corpus, out)
    assert result.returncode == 1, result.stderr  # the one unreadable file
    assert "u9999.wav" in result.stderr and "1 of 241 file(s) could not be transcribed" in result.stderr, result.stderr
    done = outputs(out)
    assert len(done) == FILES and "u9999.json" not in done
    return done


def test_one_process_lists_the_unreadable_file_and_completes_the_rest(clean_run):
    assert all(b'"segments"' in text for text in clean_run.values())


def test_two_worker_processes_write_what_one_process_writes(corpus, clean_run, tmp_path):
    result = transcribe(corpus, tmp_path / "out", "--jobs", 2)
    assert result.returncode == 1 and "u9999.wav" in result.stderr, result.stderr
    assert outputs(tmp_path / "out") == clean_run


def test_a_killed_worker_process_loses_nothing_and_the_rerun_does_only_what_is_missing(corpus, clean_run, tmp_path):
    out = tmp_path / "out"
    job = transcribe(corpus, out, "--jobs", 2, wait=False)
    wait_for_outputs(out, 40, job)
    workers = Path(f"/proc/{job.pid}/task/{job.pid}/children").read_text().split()
    assert len(workers) >= 2, workers  # the pool's two processes (and perhaps its resource tracker)
    os.kill(int(workers[-1]), signal.SIGKILL)
    try:
        _, err = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # say where it hangs: the threads' stacks (python -X faulthandler)
        os.kill(job.pid, signal.SIGABRT)
        raise AssertionError("the job hung after its worker was killed:\n" + job.communicate(timeout=30)[1][-4000:])
    assert job.returncode == 1 and "a worker process died" in err, err
    survived = outputs(out)
    assert 40 <= len(survived) < FILES
    assert all(clean_run[name] == text for name, text in survived.items())  # whole files only, none cut short
    again = transcribe(corpus, out, "--jobs", 2, "--resume")
    assert again.returncode == 1 and f"1 failed, {len(survived)} skipped as done" in again.stderr, again.stderr
    assert outputs(out) == clean_run


def test_resume_and_overwrite_together_are_refused(corpus, tmp_path):
    result = transcribe(corpus, tmp_path / "out", "--resume", "--overwrite")
    assert result.returncode == 2 and "give one of them" in result.stderr and not (tmp_path / "out").exists()


def test_resume_reports_what_it_skipped(corpus, clean_run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in list(clean_run)[:100]:
        (out / name).write_bytes(clean_run[name])
    result = transcribe(corpus, out, "--resume")
    assert "100 file(s) already in" in result.stderr and "140 files," in result.stderr, result.stderr
    assert "1 failed, 100 skipped as done" in result.stderr
    assert outputs(out) == clean_run


@pytest.fixture(scope="module")
def ray_cluster():
    """A head and a second node, one CPU each, on this machine (Ray's own multi-node test cluster)."""
    pytest.importorskip("ray", reason="the cluster extra: pip install '.[cluster]'")
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    cluster.shutdown()


def test_a_local_two_node_ray_cluster_writes_what_one_process_writes(corpus, clean_run, ray_cluster, tmp_path):
    result = transcribe(corpus, tmp_path / "out", "--ray", ray_cluster.address)
    assert result.returncode == 1 and "u9999.wav" in result.stderr, result.stderr
    assert outputs(tmp_path / "out") == clean_run


def test_a_ray_node_lost_mid_job_loses_nothing(corpus, clean_run, ray_cluster, tmp_path):
    out = tmp_path / "out"
    job = transcribe(corpus, out, "--ray", ray_cluster.address, wait=False)
    wait_for_outputs(out, 30, job)
    worker_nodes = [node for node in ray_cluster.worker_nodes]
    ray_cluster.remove_node(worker_nodes[0])  # the second node, with its actor, goes
    _, err = job.communicate(timeout=600)
    survived = outputs(out)
    assert all(clean_run[name] == text for name, text in survived.items())  # whole files only
    if job.returncode == 1 and len(survived) == FILES:  # Ray moved the lost actor's work to the head: all done
        assert "1 of 241 file(s) could not be transcribed" in err, err
    else:  # the job ended short: the rerun does the rest
        again = transcribe(corpus, out, "--ray", ray_cluster.address, "--resume")
        assert again.returncode == 1 and f"{len(survived)} skipped as done" in again.stderr, again.stderr
    assert outputs(out) == clean_run
    ray_cluster.add_node(num_cpus=1)  # as it was, for any later test


def test_a_manifest_and_a_file_list_name_the_same_job_as_the_folder(tmp_path, capsys):
    """A lhotse recordings manifest (or a supervisions manifest, read through the recordings beside it) and
    --files-from LIST give the outputs the folder gives."""
    import gzip
    import json

    from speechattn.cli import main

    folder = tmp_path / "c"
    folder.mkdir()
    recordings = []
    for number in range(3):
        path = folder / f"r{number}.wav"
        sf.write(path, speechlike_signal(0.5, seed=number), 16000, subtype="PCM_16")
        recordings.append({"id": f"r{number}", "sources": [{"type": "file", "channels": [0], "source": str(path)}],
                           "sampling_rate": 16000, "num_samples": 8000, "duration": 0.5, "channel_ids": [0]})
    with gzip.open(tmp_path / "x_recordings_dev.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in recordings)
    with gzip.open(tmp_path / "x_supervisions_dev.jsonl.gz", "wt") as f:
        f.writelines(json.dumps({"id": r["id"], "recording_id": r["id"], "start": 0, "duration": 0.5}) + "\n"
                     for r in recordings)
    (tmp_path / "list.txt").write_text("# the corpus\nc/r0.wav\n\nc/r1.wav\n" + str(folder / "r2.wav") + "\n")
    results = {}
    for name, given in {"folder": [str(folder)], "recordings": [str(tmp_path / "x_recordings_dev.jsonl.gz")],
                        "supervisions": [str(tmp_path / "x_supervisions_dev.jsonl.gz")],
                        "list": ["--files-from", str(tmp_path / "list.txt")]}.items():
        assert main(["transcribe", *given, "--output-dir", str(tmp_path / name), "--format", "json", "--jobs", "1",
                     "--resume"]) == 0, capsys.readouterr().err
        results[name] = outputs(tmp_path / name)
    assert sorted(results["folder"]) == ["r0.json", "r1.json", "r2.json"]
    assert all(result == results["folder"] for result in results.values())


@pytest.mark.parametrize("given, status, message", [
    (["--files-from", "/dev/zero"], 1, "/dev/zero: a device"),
    (["--files-from", "{tmp}/empty.txt"], 1, "lists no file"),
    (["{tmp}/y_recordings_dev.jsonl.gz"], 1, "not a lhotse recording with a file source"),
    (["{tmp}/z_supervisions_dev.jsonl.gz"], 1, "its recordings manifest"),
    ([], 2, "give the audio"),
])
def test_a_bad_file_list_or_manifest_is_one_line(tmp_path, capsys, given, status, message):
    import gzip

    from speechattn.cli import main

    (tmp_path / "empty.txt").write_text("# nothing\n")
    with gzip.open(tmp_path / "y_recordings_dev.jsonl.gz", "wt") as f:
        f.write('{"id": "a", "sources": [{"type": "url", "source": "http://x"}]}\n')
    with gzip.open(tmp_path / "z_supervisions_dev.jsonl.gz", "wt") as f:
        f.write('{"id": "a", "recording_id": "a"}\n')
    code = main(["transcribe", *[g.format(tmp=tmp_path) for g in given], "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == status and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()
