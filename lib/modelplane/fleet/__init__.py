"""The fleet view: pool occupancy after a placement, and why replicas landed (or did not) where they did."""

from modelplane.fleet.page import page
from modelplane.fleet.text import pool_table, text
from modelplane.fleet.view import Chip, ClusterView, FleetView, Origin, PoolView, build

__all__ = ["Chip", "ClusterView", "FleetView", "Origin", "PoolView", "build", "page", "pool_table", "text"]
