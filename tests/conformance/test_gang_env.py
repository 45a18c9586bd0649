"""A gang's args see the leader's address and their own rank through KServe's real multi-node presets.

The leader and the worker of a rendered gang run the data-parallel preset script with LWS's env
(put ahead of the container's, as LWS does), the kubelet's expansion modelled in order: vLLM must
receive `$(MODELPLANE_LEADER_ADDRESS)` and `$(MODELPLANE_RANK)` resolved to LWS's values.
"""

from pathlib import Path

import pytest

from tests.conformance import kserve
from tests.conformance.shapes import real_argv, rendered_llmis, replica_shapes

ARGS = ("--head-address=$(MODELPLANE_LEADER_ADDRESS)", "--node-rank=$(MODELPLANE_RANK)")


@pytest.mark.parametrize(("path", "rank"), [("template", "0"), ("worker", "1")])
def test_a_gang_member_is_told_the_leader_and_its_rank(path: str, rank: str, tmp_path: Path) -> None:
    kserve.require_presets()
    llmis = rendered_llmis(replica_shapes(ARGS)["multi-node data parallel"])
    argv = real_argv(llmis, path, tmp_path)
    got = {f: kserve.flag_values(argv, f) for f in ("--head-address", "--node-rank")}
    assert got == {"--head-address": ["localhost"], "--node-rank": [rank]}
