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
