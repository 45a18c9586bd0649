"""The fleet view: pool occupancy after a placement, and why replicas landed (or did not) where they did."""

from modelplane.fleet.page import page
from modelplane.fleet.plan import DeploymentOutcome, PlanView, build_plan, plan_text
from modelplane.fleet.plan_page import plan_page
from modelplane.fleet.text import pool_table, text
from modelplane.fleet.view import Chip, ClusterView, FleetView, Origin, PoolView, build

__all__ = [
    "Chip",
    "ClusterView",
    "DeploymentOutcome",
    "FleetView",
    "Origin",
    "PlanView",
    "PoolView",
    "build",
    "build_plan",
    "page",
    "plan_page",
    "plan_text",
    "pool_table",
    "text",
]
