"""Credentials for the model download, as KServe's storage initializer takes them.

KServe downloads `spec.model.uri` in its `storage-initializer` init container before vLLM starts;
vLLM reads /mnt/models and never talks to the hub. Env on `main` (an HF_TOKEN for a gated model)
does not reach that init container. What does, in every KServe from v0.16 to v0.20 (KS
pkg/controller/v1alpha2/llmisvc/workload_storage.go `attachHfModelArtifact` ->
pkg/credentials `CreateSecretVolumeAndEnvFromServiceAccount`): an LLMIS annotation naming the
Secret, under the one key the install's credentials config names (`storageSecretNameAnnotation`,
read at pkg/credentials/service_account_credentials.go:250). That key differs by install method
(KServe v0.16.0 to v0.20.0): kustomize installs set `serving.kserve.io/storageSecretName`
(config/configmap/inferenceservice.yaml), the Helm charts `serving.kserve.io/secretName`
(charts/kserve-resources/values.yaml, and charts/kserve-llmisvc-resources/values.yaml from v0.17).
Both are written, with the same Secret: each install reads its own and ignores the other. The
Secret lives in the LLMIS's namespace; its key HF_TOKEN becomes
the init container's HF_TOKEN (S3 and GCS keys work alike), and the reconcile fails, visibly, while
the Secret is missing. The `initContainers[name=storage-initializer]` override is not used: it is
merged only from v0.20, dropped by v0.19 and duplicates the init container on v0.18.

The Secret is `spec.model.storageSecretName`; for an hf:// model without one, the Secret the
engine's own HF_TOKEN env var reads, when that reference uses the key HF_TOKEN (another key would
not be found by KServe, so nothing is guessed).
"""

from __future__ import annotations

from collections.abc import Iterable

from modelplane.model import ModelRef, PlacedMember
from modelplane.render.pod import as_list, as_mapping

STORAGE_SECRET_ANNOTATIONS = ("serving.kserve.io/secretName", "serving.kserve.io/storageSecretName")
HF_TOKEN = "HF_TOKEN"


def _hf_token_secret(member: PlacedMember) -> str | None:
    for container in as_list(as_mapping(member.template.get("spec")).get("containers")):
        for env in as_list(as_mapping(container).get("env")):
            ref = as_mapping(as_mapping(as_mapping(env).get("valueFrom")).get("secretKeyRef"))
            if as_mapping(env).get("name") == HF_TOKEN and ref.get("key") == HF_TOKEN and ref.get("name"):
                return str(ref["name"])
    return None


def storage_secret_annotations(secret: str | None) -> dict[str, str]:
    """The LLMIS annotations naming the storage Secret for every KServe install method (none without one)."""
    return dict.fromkeys(STORAGE_SECRET_ANNOTATIONS, secret) if secret else {}


def storage_secret(model: ModelRef, members: Iterable[PlacedMember]) -> str | None:
    """The Secret the storage initializer should read, or None."""
    if model.storage_secret_name:
        return model.storage_secret_name
    if not model.uri.startswith("hf://"):
        return None
    return next((s for s in map(_hf_token_secret, members) if s), None)
