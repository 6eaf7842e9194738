"""deploy/kubernetes.yaml: valid for Kubernetes (kubernetes-validate, offline, strict), and consistent with the
server it runs: the container's arguments parse with the real `speechattn serve`, the probes ask the paths and port
the server answers, the Service and the autoscaler point at the Deployment."""

from __future__ import annotations

from pathlib import Path

import pytest

kubernetes_validate = pytest.importorskip("kubernetes_validate")
yaml = pytest.importorskip("yaml")

MANIFEST = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes.yaml"
VERSIONS = ("1.30.0", kubernetes_validate.latest_version())  # the oldest release still patched upstream, the newest


def documents() -> dict[str, dict]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc}


@pytest.mark.parametrize("version", VERSIONS)
def test_the_kubernetes_manifest_validates_strictly_offline(version):
    docs = documents()
    assert set(docs) == {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"}
    for doc in docs.values():
        kubernetes_validate.validate(doc, version, strict=True)  # raises ValidationError naming the field


def test_the_kubernetes_manifest_fits_the_server_it_runs():
    from speechattn.cli.serve import serve

    docs = documents()
    deployment, service, autoscaler = docs["Deployment"], docs["Service"], docs["HorizontalPodAutoscaler"]
    pod = deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    context = serve.make_context("serve", list(container["args"][1:]))  # the real command's options parse them
    assert container["command"] == ["speechattn"] and container["args"][0] == "serve"
    assert context.params["host"] == "0.0.0.0"
    (port,) = container["ports"]
    assert port["containerPort"] == context.params["port"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert {"cpu", "memory"} <= set(container["resources"]["requests"]) <= set(container["resources"]["limits"])
    assert container["env"][0]["name"] == "SPEECHATTN_TOKEN"  # the token from a Secret, never in the file
    # The grace period covers the preStop sleep and the server's drain (ServeOptions.drain_seconds).
    from speechattn.runtime.serve import ServeOptions

    grace = pod["spec"]["terminationGracePeriodSeconds"]
    assert grace >= container["lifecycle"]["preStop"]["sleep"]["seconds"] + ServeOptions().drain_seconds
    labels = pod["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    target = autoscaler["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert autoscaler["spec"]["metrics"][0]["resource"]["name"] == "cpu"


def test_the_nginx_configuration_in_docs_server_md_passes_nginx_t_as_written(tmp_path):
    """It had `listen 443 ssl` and no certificate: `nginx -t` refused it.  The block is included, unchanged, in an
    http block as Debian's nginx.conf includes conf.d/*.conf, beside a self-signed certificate where it says."""
    import re
    import shutil
    import subprocess

    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None or shutil.which("openssl") is None:
        pytest.skip("nginx and openssl are not installed (the README's test command installs nginx)")
    server_md = (MANIFEST.parent.parent / "docs" / "server.md").read_text()
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```$", server_md, re.S | re.M)
    (block,) = [b for b in blocks if "upstream speechattn" in b]
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "speechattn.conf").write_text(block)
    (tmp_path / "tls").mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=speech.example.com", "-keyout", str(tmp_path / "tls" / "speechattn.key"),
                    "-out", str(tmp_path / "tls" / "speechattn.crt")], check=True, capture_output=True, timeout=60)
    (tmp_path / "nginx.conf").write_text(f"pid {tmp_path / 'nginx.pid'};\nerror_log stderr;\nevents {{}}\n"
                                         "http { include conf.d/*.conf; }\n")
    checked = subprocess.run([nginx, "-t", "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and "test is successful" in checked.stderr, checked.stderr


DOCKER_INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
                       "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, backslash continuations joined."""
    instructions, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, arguments = pending.strip().partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    assert not pending, "a continuation runs off the end"
    return instructions


def test_the_dockerfile_parses_copies_what_exists_and_runs_the_server_the_manifest_runs():
    """No hadolint here (not packaged for Debian or PyPI): the file is parsed, every COPY source is in the build
    context and not left out by .dockerignore, the wheel's sources (pyproject's package folders, readme, licence)
    are all copied, and the image's command is the manifest's server on the port it exposes."""
    import fnmatch
    import json
    import tomllib

    from speechattn.cli.serve import serve

    root = MANIFEST.parent.parent
    instructions = dockerfile_instructions((MANIFEST.parent / "Dockerfile").read_text())
    assert all(keyword in DOCKER_INSTRUCTIONS for keyword, _ in instructions), instructions
    assert instructions[0][0] == "FROM" and sum(keyword == "FROM" for keyword, _ in instructions) == 2
    ignored = [line.strip().rstrip("/") for line in (root / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    copied = []
    for keyword, arguments in instructions:
        if keyword != "COPY" or arguments.startswith("--from="):
            continue
        *sources, _destination = arguments.split()
        for source in sources:
            assert (root / source).exists(), f"COPY {source}: not in the build context"
            parts = Path(source.rstrip("/")).parts
            assert not any(fnmatch.fnmatch("/".join(parts[:n]), pattern) for pattern in ignored
                           for n in range(1, len(parts) + 1)), f"COPY {source}: left out by .dockerignore"
            copied.append(source.rstrip("/"))
    project = tomllib.loads((root / "pyproject.toml").read_text())
    needed = {*project["tool"]["setuptools"]["package-dir"].values(), project["project"]["readme"],
              *project["project"]["license-files"], "pyproject.toml", "setup.py"}
    assert needed <= set(copied), needed - set(copied)
    commands = {keyword: json.loads(arguments) for keyword, arguments in instructions if keyword in ("ENTRYPOINT", "CMD")}
    assert commands["ENTRYPOINT"] == ["speechattn"] and commands["CMD"][0] == "serve"
    context = serve.make_context("serve", commands["CMD"][1:])
    assert context.params["host"] == "0.0.0.0"
    assert [arguments for keyword, arguments in instructions if keyword == "EXPOSE"] == [str(context.params["port"])]
    assert [arguments for keyword, arguments in instructions if keyword == "USER"] != ["root"]
    (container,) = documents()["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert container["command"] == commands["ENTRYPOINT"] and container["ports"][0]["containerPort"] == \
        context.params["port"]
    assert "deploy/Dockerfile" in MANIFEST.read_text()  # the manifest says where its image comes from
