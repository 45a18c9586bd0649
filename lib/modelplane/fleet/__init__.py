"""The fleet view: pool occupancy after a placement, and why replicas landed (or did not) where they did."""

from modelplane.fleet.gap import Blocker, Gpus, blockers, gpus
from modelplane.fleet.page import page
from modelplane.fleet.plan import DeploymentOutcome, PlanView, build_plan, plan_text
from modelplane.fleet.plan_page import plan_page
from modelplane.fleet.text import pool_table, text
from modelplane.fleet.view import Chip, ClusterView, FleetView, Origin, PoolView, Rollout, build

__all__ = [
    "Blocker",
    "Chip",
    "ClusterView",
    "DeploymentOutcome",
    "FleetView",
    "Gpus",
    "Origin",
    "PlanView",
    "PoolView",
    "Rollout",
    "blockers",
    "build",
    "build_plan",
    "gpus",
    "page",
    "plan_page",
    "plan_text",
    "pool_table",
    "text",
]
