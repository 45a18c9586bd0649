"""The fleet view as one self-contained HTML page: inline CSS, no scripts, nothing fetched.

Rows are clusters, cells are pools: a bar of used and free nodes, then one chip per replica,
coloured per deployment. Every string from the input is escaped; the only computed values put
into markup unescaped are numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from modelplane.fleet.text import chip_text, placement, rollout_text
from modelplane.fleet.view import Chip, ClusterView, FleetView, Origin, PoolView, Rollout

CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1d2430;background:#f6f7f9}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:20px 0 8px}
.summary{margin:0 0 4px;font-weight:600}.diagnosis{margin:0 0 16px;color:#3a4556;white-space:pre-wrap}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:0 0 16px;padding:0;list-style:none}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:14px;height:14px;border-radius:3px;border:1px solid #0003}
table.fleet{border-collapse:separate;border-spacing:0 8px;width:100%}
table.fleet>tbody>tr>th{width:260px;text-align:left;vertical-align:top;padding:10px 12px;background:#fff;
border-left:5px solid #3a9a5b;border-radius:6px 0 0 6px}
table.fleet>tbody>tr>td{padding:10px 12px;background:#fff;border-radius:0 6px 6px 0}
table.fleet>tbody>tr.rejected>th{border-left-color:#c0392b}
table.fleet>tbody>tr.notready>th{border-left-color:#8a8f98}
table.fleet>tbody>tr.excluded{opacity:.5}table.fleet>tbody>tr.excluded>th{border-left-color:#b8bec8}
.verdict.excluded{color:#5a6474}.verdict.full{color:#7a5a00}.pool-devices{font-size:12px;color:#5a6474}
.cluster-name{font-size:15px;overflow-wrap:anywhere}.badges{margin:4px 0;display:flex;flex-wrap:wrap;gap:4px}
.badge{font-size:11px;padding:1px 6px;border-radius:9px;background:#e3e7ee;font-weight:500}
.badge.ready{background:#d7f0de}.badge.notready{background:#f3d9d6}.badge.taint{background:#fbeccb}
.verdict{margin-top:6px;font-weight:500}.verdict small{display:block;font-weight:400;color:#5a6474}
.verdict.rejected{color:#a52a1c}.verdict.fits{color:#2c7a47}
.pools{display:flex;flex-wrap:wrap;gap:12px}
.pool{min-width:220px;flex:1 1 220px;max-width:420px;border:1px solid #dde2ea;border-radius:6px;padding:8px}
.pool-head{display:flex;justify-content:space-between;gap:8px}.pool-head span{color:#5a6474}
.bar{display:flex;height:14px;margin:6px 0;background:#e6e9ef;border-radius:3px;overflow:hidden}
.bar.over{outline:2px solid #c0392b}.seg{height:100%;border-right:1px solid #fff}
.chips{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px}
.chip{font-size:12px;color:#fff;padding:2px 7px;border-radius:10px;white-space:nowrap;overflow:hidden;
text-overflow:ellipsis;max-width:100%;box-sizing:border-box}
.chip.outdated{background-image:repeating-linear-gradient(135deg,#fff6 0 3px,#0000 3px 7px)}
.rollout{margin:0 0 4px;font-weight:600}.rollout.False{color:#a52a1c}
.chip.other{opacity:.7}.chip.new{box-shadow:0 0 0 2px #fff,0 0 0 3px #1d2430}
.chip.updated,.chip.replacing{outline:2px dashed #fff;outline-offset:-4px}
.chip.leaving{opacity:.55;text-decoration:line-through}
.empty{color:#8a8f98;font-size:12px}
table.scores{border-collapse:collapse;background:#fff}
table.scores th,table.scores td{border:1px solid #dde2ea;padding:4px 10px;text-align:left}
"""

_GOLDEN_ANGLE = 137
_BASE_HUE = 210  # this deployment is blue; the others step around the wheel from there


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def owner_colours(owners: Sequence[str]) -> dict[str, str]:
    """A CSS colour per deployment, the first blue, stable for a given list of deployments."""
    return {owner: f"hsl({(_BASE_HUE + i * _GOLDEN_ANGLE) % 360} 55% 40%)" for i, owner in enumerate(owners)}


def colours(view: FleetView) -> dict[str, str]:
    return owner_colours(view.owners)


def chip_caption(chip: Chip, *, shared: bool = False) -> str:
    """A chip's words on a page: the replica by deployment, cluster and index, what it holds, its revision."""
    text = chip_text(chip, chip.replica, shared=shared)
    if not chip.revision:
        return text
    return f"{text} rev {chip.revision}{' (old)' if chip.outdated else ''}"


def _chip(chip: Chip, colour: str, *, shared: bool = False) -> str:
    # A long name is cut short on one line (a pill broken over lines reads as two); the tip has it all.
    caption = chip_caption(chip, shared=shared)
    tip = f"{caption}: ModelReplica {chip.name}"
    cls = f"chip {chip.origin}{' outdated' if chip.outdated else ''}"
    return f'<li class="{cls}" style="background:{colour}" title="{esc(tip)}">{esc(caption)}</li>'


def _share(pool: PoolView, chip: Chip) -> float:
    """The nodes a chip's pods fill: whole nodes, or its devices' share of a node on a shared pool."""
    return chip.devices / max(pool.per_node, 1) if pool.shared else chip.nodes


def _bar(pool: PoolView, palette: dict[str, str]) -> str:
    scale = max(pool.nodes, pool.used, 1)
    segs = "".join(
        f'<span class="seg" style="width:{100 * _share(pool, c) / scale:.2f}%;background:{palette[c.owner]}"'
        f' title="{esc(c.label)}: {c.nodes}"></span>'
        for c in pool.chips
    )
    over = " over" if pool.free < 0 else ""
    label = f"{pool.used} of {pool.nodes} nodes used"
    return f'<div class="bar{over}" role="img" aria-label="{esc(label)}">{segs}</div>'


def pool_cell(pool: PoolView, palette: dict[str, str]) -> str:
    usage = f"{pool.used}/{pool.nodes} used, {pool.free} free" if pool.free >= 0 else f"overcommitted by {-pool.free}"
    chips = "".join(_chip(c, palette[c.owner], shared=pool.shared) for c in pool.chips)
    body = f'<ul class="chips">{chips}</ul>' if chips else '<p class="empty">no replicas</p>'
    return (
        f'<div class="pool"><div class="pool-head"><b>{esc(pool.name)}</b><span>{esc(usage)}</span></div>'
        f'<div class="pool-devices">{esc(pool.devices or "no devices published")} per node</div>'
        f"{_bar(pool, palette)}{body}</div>"
    )


def _details(c: ClusterView) -> str:
    every = c.verdict.every if c.verdict is not None else ()
    return "".join(f"<small>{esc(f.reason)}: {esc(f.detail)}</small>" for f in every)


def _verdict(c: ClusterView) -> str:
    if c.verdict is not None and c.excluded:
        reason = f"left out: {c.verdict.reason}"
        return f'<div class="verdict excluded">{esc(reason)}<small>{esc(c.verdict.detail)}</small></div>'
    if c.verdict is not None and c.rejected:
        return f'<div class="verdict rejected">turned down{_details(c)}</div>'
    if c.verdict is not None and not c.verdict.fits:
        head = f"hosts {c.hosts}, no room for another"
        return f'<div class="verdict full">{esc(head)}{_details(c)}</div>'
    if c.score is not None:
        return f'<div class="verdict fits">fits, score {c.score.total}</div>'
    return ""


def _row(c: ClusterView, palette: dict[str, str]) -> str:
    cls = "excluded" if c.excluded else "rejected" if c.rejected else "notready" if not c.ready else "ok"
    badges = ['<span class="badge ready">Ready</span>' if c.ready else '<span class="badge notready">not Ready</span>']
    badges += [f'<span class="badge taint">{esc(t)}</span>' for t in c.taints]
    pools = "".join(pool_cell(p, palette) for p in c.pools) or '<p class="empty">no pools published</p>'
    return (
        f'<tr class="{cls}"><th scope="row"><div class="cluster-name">{esc(c.name)}</div>'
        f'<div class="badges">{"".join(badges)}</div>{_verdict(c)}</th>'
        f'<td><div class="pools">{pools}</div></td></tr>'
    )


def _legend(view: FleetView, palette: dict[str, str]) -> str:
    items = [
        f'<li><span class="swatch" style="background:{palette[o]}"></span>{esc(o)}'
        f"{' (this deployment)' if o == view.subject else ''}</li>"
        for o in view.owners
    ]
    items += [
        f'<li><span class="chip {Origin.NEW}" style="background:{palette[view.subject]}">new</span>placed now</li>',
        *(rollout_legend(palette[view.subject]) if view.rollout is not None else []),
        '<li><span class="swatch" style="background:#e6e9ef"></span>free node</li>',
        '<li><span class="swatch" style="background:#c0392b"></span>cluster turned this deployment down</li>',
        '<li><span class="swatch" style="background:#b8bec8"></span>left out by the clusterSelector (greyed)</li>',
    ]
    return f'<ul class="legend">{"".join(items)}</ul>'


def rollout_legend(colour: str, *, leaving: bool = True) -> list[str]:
    """The marks a rollout puts on chips: updated in place, leaving (a reconcile's), on an older revision."""
    return [
        f'<li><span class="chip {Origin.UPDATED}" style="background:{colour}">updated</span>'
        "moved to the new revision in place</li>",
        f'<li><span class="chip {Origin.REPLACING}" style="background:{colour}">replacing</span>'
        "updated in place, its old objects serving until it is Ready</li>",
        *(
            [
                f'<li><span class="chip {Origin.LEAVING}" style="background:{colour}">leaving</span>'
                "kept until its successor is Ready</li>"
            ]
            if leaving
            else []
        ),
        f'<li><span class="chip outdated" style="background:{colour}">old</span>'
        "on an older revision, replaced as the rollout proceeds</li>",
    ]


def _cells(values: Iterable[object]) -> str:
    return "".join(f"<td>{esc(v)}</td>" for v in values)


def _scores(view: FleetView) -> str:
    if not view.scores:
        return ""
    keys = sorted({k for s in view.scores for k in s.scores})
    head = "".join(f"<th>{esc(k)}</th>" for k in ("cluster", "total", *keys))
    rows = "".join(
        f"<tr><td>{esc(s.cluster)}</td><td>{s.total}</td>{_cells(s.scores.get(k, '') for k in keys)}</tr>"
        for s in view.scores
    )
    title = "Scores (last round that placed a replica, best first)"
    return f'<h2>{title}</h2><table class="scores"><tr>{head}</tr>{rows}</table>'


def _rollout(rollout: Rollout | None) -> str:
    if rollout is None:
        return ""
    return (
        f'<p class="rollout {esc(rollout.status)}">{esc(rollout_text(rollout))}</p>'
        f'<p class="diagnosis">{esc(rollout.message)}</p>'
    )


def page(view: FleetView) -> str:
    """The whole HTML document."""
    palette = colours(view)
    removed = "".join(f"<li>{esc(r.name)} from {esc(r.cluster)}: {esc(r.reason)}</li>" for r in view.removed)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Fleet: {esc(view.subject)}</title><style>{CSS}</style></head><body>",
        f"<h1>Fleet for ModelDeployment {esc(view.subject)}</h1>",
        f'<p class="summary">{esc(placement(view))}</p>',
        f'<p class="diagnosis">Diagnosis: {esc(view.summary)}</p>',
        _rollout(view.rollout),
        _legend(view, palette),
        '<table class="fleet"><tbody>',
        *(_row(c, palette) for c in view.clusters),
        "</tbody></table>",
        f"<h2>Removed</h2><ul>{removed}</ul>" if removed else "",
        _scores(view),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"
