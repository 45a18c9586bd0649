"""What a composed Object says is failing, whatever shape its observed status has."""

from typing import Any

import pytest
from modelplane_function.handlers.failures import object_failure

FAILING = {"type": "Ready", "status": "False", "reason": "ConfigNotFound", "message": "no config"}
LLMIS = {"kind": "LLMInferenceService", "metadata": {"name": "x"}, "status": {"conditions": [FAILING]}}


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (
            {"atProvider": {"manifest": LLMIS}},
            "llmis (LLMInferenceService x) reports Ready=False ConfigNotFound: no config",
        ),
        ({"atProvider": {"manifest": {"kind": "LLMInferenceService"}}}, None),
        ("junk", None),
        (["junk"], None),
        ({"atProvider": "junk"}, None),
        (None, None),
    ],
    ids=["a failing wrapped object", "a healthy one", "a string", "a list", "atProvider a string", "no status"],
)
def test_object_failure(status: Any, want: str | None) -> None:
    assert object_failure("llmis", {"status": status}) == want
