"""The fleet scheduler: retain -> scale down -> filter -> score -> bind, a pure function of state."""

from modelplane.scheduler.result import (
    ClusterScore,
    Code,
    Diagnosis,
    RemovedReplica,
    ScheduleResult,
    Status,
)
from modelplane.scheduler.schedule import schedule

__all__ = ["ClusterScore", "Code", "Diagnosis", "RemovedReplica", "ScheduleResult", "Status", "schedule"]
