"""The blocked-demand benchmark's inputs are what it says: valid statements on the deployment's own pools."""

from __future__ import annotations

from modelplane import api
from modelplane.stated import pool_kind

from tests.benchmarks.blocked import others
from tests.benchmarks.cases import Size, case


def test_the_benchmarks_statements_parse_and_name_only_the_pool_kinds_the_deployment_holds() -> None:
    c = case(Size(clusters=10, existing=0, new=10))
    pools = {(cl.name, p.name): p for cl in c.world.clusters for p in cl.pools}
    held = {pool_kind(pools[(r.cluster, p)]) for r in c.own for p in r.node_cost_by_pool()}
    stated = [api.parse_demand(obj) for obj in others(c, 6)]
    kinds = {o.kind for s in stated for e in s.engines for o in e.options}
    costs = [s.engines[0].options[0].cost for s in stated]
    assert (len(stated), kinds <= held, bool(kinds), costs) == (6, True, True, [64, 1, 64, 1, 64, 1])
