"""The fleet view as aligned plain-text tables, for terminals and logs."""

from __future__ import annotations

from collections.abc import Sequence

from modelplane.fleet.view import Chip, ClusterView, FleetView, Origin, Rollout


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns two spaces apart, indented two spaces, no trailing blanks."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _nodes(n: int) -> str:
    return f"{n} node" if n == 1 else f"{n} nodes"


def chip_text(chip: Chip, label: str = "", *, shared: bool = False) -> str:
    """The chip in words, led by `label` (default: the replica within its cluster's row).

    On a shared pool (`packing: Devices`) it says the devices the replica's pods claim, else its nodes.
    """
    where = f"{label or chip.label} {','.join(chip.engines)}"
    held = f"{chip.devices} {'device' if chip.devices == 1 else 'devices'}" if shared else _nodes(chip.nodes)
    if chip.origin is Origin.OTHER:
        return f"{where} ({held})"
    return f"{where} ({chip.origin}, {held})"


def _chip_row(chip: Chip, *, shared: bool) -> str:
    # Only a replica a rollout has yet to reach names its revision: a table of current ones stays as it was.
    said = chip_text(chip, shared=shared)
    return f"{said} old rev {chip.revision}" if chip.outdated else said


def rollout_text(r: Rollout) -> str:
    """The rollout's progress in one line, as status.replicas and the Progressing condition say it."""
    return (
        f"Rollout to revision {r.revision}: {r.updated} of {r.desired} updated, {r.available} available, "
        f"{r.total} in all. Progressing {r.status}: {r.reason}."
    )


def rollout_line(view: FleetView) -> str:
    """The rollout's progress while old-revision replicas or superseded objects remain or it is halted; else "".

    A deployment coming up for the first time, or whose old replicas are all gone, has nothing to
    tell apart: the table says it, and tables of a fleet at rest stay as they were.
    """
    r = view.rollout
    under_way = r is not None and (r.updated < r.total or r.renaming > 0 or r.status == "False")
    return rollout_text(r) if r is not None and under_way else ""


def cluster_rows(c: ClusterView) -> list[tuple[str, ...]]:
    head = (c.name, "yes" if c.ready else "no", ",".join(c.taints) or "-")
    blank = ("", "", "")
    rows: list[tuple[str, ...]] = []
    if not c.pools:
        return [(*head, "-", "", "", "", "", "")]
    for pool in c.pools:
        counts = (pool.name, pool.devices or "-", str(pool.nodes), str(pool.used), str(pool.free))
        chips = [_chip_row(chip, shared=pool.shared) for chip in pool.chips] or ["-"]
        rows.append((*(blank if rows else head), *counts, chips[0]))
        rows += [(*blank, "", "", "", "", "", more) for more in chips[1:]]
    return rows


POOL_HEADER = ("CLUSTER", "READY", "TAINTS", "POOL", "DEVICES PER NODE", "NODES", "USED", "FREE", "REPLICAS")


def pool_table(view: FleetView) -> list[str]:
    """One row per pool (then one per further replica on it): capacity after this placement."""
    rows: list[tuple[str, ...]] = [POOL_HEADER]
    for c in view.clusters:
        rows += cluster_rows(c)
    return table(rows)


def placement(view: FleetView) -> str:
    """How many replicas are placed: '3 of 6 replicas placed, 3 unplaced.'"""
    if not view.scheduled:
        return f"Not scheduled; {view.placed} observed replicas kept."
    rest = f", {view.unplaced} unplaced" if view.unplaced else ""
    return f"{view.placed} of {view.desired} replicas placed{rest}."


def headline(view: FleetView) -> str:
    return f"ModelDeployment {view.subject}: {placement(view)}"


def _failures(c: ClusterView) -> list[tuple[str, str, str]]:
    """(cluster, reason, detail) for every filter that failed on the cluster, the name on the first."""
    every = c.verdict.every if c.verdict is not None else ()
    return [(c.name if i == 0 else "", f.reason, f.detail or "-") for i, f in enumerate(every)]


def rejection_table(view: FleetView) -> list[str]:
    """Why each rejected cluster turned the deployment down in the scheduler's last round: every failing filter."""
    rows = [("CLUSTER", "REASON", "DETAIL")]
    rows += [row for c in view.clusters if c.rejected for row in _failures(c)]
    return table(rows) if len(rows) > 1 else []


def excluded_table(view: FleetView) -> list[str]:
    """Clusters the deployment's clusterSelector leaves out, and their labels."""
    rows = [("CLUSTER", "DETAIL")]
    rows += [(c.name, c.verdict.detail or "-") for c in view.clusters if c.verdict and c.excluded]
    return table(rows) if len(rows) > 1 else []


def full_table(view: FleetView) -> list[str]:
    """Clusters hosting the deployment that had no room for another of its replicas."""
    rows = [("CLUSTER", "HOSTS", "REASON", "DETAIL")]
    for c in view.clusters:
        if c.verdict and not c.verdict.fits and not c.excluded and c.hosts:
            rows += [(name, str(c.hosts) if name else "", r, d) for name, r, d in _failures(c)]
    return table(rows) if len(rows) > 1 else []


def rejection_heading(view: FleetView) -> str:
    if not view.unplaced:
        return "Clusters passed over in the last round:"
    noun = "replica fits" if view.unplaced == 1 else "replicas fit"
    return f"Why {view.unplaced} unplaced {noun} nowhere:"


def score_table(view: FleetView) -> list[str]:
    """The ranking of the last round that placed a replica, best first."""
    if not view.scores:
        return []
    keys = sorted({k for s in view.scores for k in s.scores})
    rows = [("CLUSTER", "TOTAL", *(k.upper() for k in keys))]
    rows += [(s.cluster, str(s.total), *(str(s.scores.get(k, "")) for k in keys)) for s in view.scores]
    return table(rows)


def text(view: FleetView) -> str:
    """The whole view: headline, pools, rejections, scores, removals, diagnosis."""
    rollout = rollout_line(view)
    out = [headline(view), *([rollout] if rollout else []), *pool_table(view)]
    rejections = rejection_table(view)
    if rejections:
        out += [rejection_heading(view), *rejections]
    full = full_table(view)
    if full:
        out += ["Hosting this deployment, with no room for another replica:", *full]
    excluded = excluded_table(view)
    if excluded:
        out += ["Left out by the clusterSelector:", *excluded]
    scores = score_table(view)
    if scores:
        out += ["Scores (last round that placed a replica, best first):", *scores]
    out += [f"Removed {r.name} from {r.cluster}: {r.reason}." for r in view.removed]
    out.append(f"Diagnosis: {view.summary}")
    return "\n".join(out) + "\n"
