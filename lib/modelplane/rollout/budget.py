"""The disruption budget: maxSurge and maxUnavailable resolved against spec.replicas.

Kubernetes Deployment arithmetic: an int is taken as is; a percent of spec.replicas rounds up for
maxSurge and down for maxUnavailable, so a percent never blocks a rollout by rounding surge to
zero nor takes more down than asked. When both resolve to 0 no replica could ever change, so
maxUnavailable becomes 1 (as the Deployment controller does).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from modelplane.errors import SpecError
from modelplane.model import RolloutStrategy

_PERCENT = re.compile(r"^(0|[1-9][0-9]{0,2})%$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    surge: int  # replicas allowed above spec.replicas while a change rolls out
    unavailable: int  # Ready replicas a reconcile may take below spec.replicas


def _resolve(value: int | str, replicas: int, *, round_up: bool, field: str) -> int:
    if isinstance(value, int):
        if value < 0:
            msg = f"spec.rollout.{field}: must not be negative, got {value}"
            raise SpecError(msg)
        return value
    match = _PERCENT.match(value)
    if match is None or int(match.group(1)) > 100:  # noqa: PLR2004 - a percent
        msg = f"spec.rollout.{field}: must be an integer or a percent from 0% to 100%, got {value!r}"
        raise SpecError(msg)
    share = int(match.group(1)) * replicas
    return math.ceil(share / 100) if round_up else share // 100


def resolve_budget(strategy: RolloutStrategy, replicas: int) -> Budget:
    """The strategy's surge and unavailability for `replicas` desired replicas."""
    surge = _resolve(strategy.max_surge, replicas, round_up=True, field="maxSurge")
    unavailable = _resolve(strategy.max_unavailable, replicas, round_up=False, field="maxUnavailable")
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return Budget(surge=surge, unavailable=unavailable)
