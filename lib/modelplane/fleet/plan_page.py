"""The fleet plan as one self-contained HTML page, in the fleet view's style (see page.py)."""

from __future__ import annotations

from modelplane.fleet.page import CSS, esc, owner_colours, pool_cell, rollout_legend
from modelplane.fleet.plan import BLOCKED_BY, DeploymentOutcome, PlanView, gpu_line, headline
from modelplane.fleet.view import ClusterView, Origin

_PLAN_CSS = """
table.deployments{border-collapse:collapse;background:#fff;margin:0 0 16px}
table.deployments th,table.deployments td{border:1px solid #dde2ea;padding:4px 10px;text-align:left;vertical-align:top}
tr.trouble td{background:#fdf1ef}.why{margin:2px 0 0;padding-left:18px;color:#5a6474;font-size:12px}
.gpus{margin:0 0 12px;color:#3a4556}.blocked{margin:6px 0 0}
td.subject div{display:flex;gap:6px;align-items:baseline}td.subject .swatch{flex:none}.nowrap{white-space:nowrap}
"""


def _deployment(d: DeploymentOutcome, colour: str) -> str:
    view = d.view
    why = [
        f"{c.name}: {f.reason} ({f.detail})" for c in view.clusters if c.verdict and c.rejected for f in c.verdict.every
    ]
    why += [f"{c.name}: left out by the clusterSelector" for c in view.clusters if c.verdict and c.excluded]
    why += [f"replica {f}" for f in d.failures]
    trouble = bool(view.unplaced or d.failures or not view.scheduled)
    details = f"<p>{esc(d.message)}</p>" if trouble else ""
    if trouble and why:
        details += '<ul class="why">' + "".join(f"<li>{esc(w)}</li>" for w in why) + "</ul>"
    if view.unplaced and d.blocked_by:  # moving one of these is what would make room
        details += f'<p class="blocked">{esc(BLOCKED_BY.capitalize())}:</p><ul class="why">'
        details += "".join(f'<li class="blocker">{esc(b.text())}</li>' for b in d.blocked_by) + "</ul>"
    hosts = [f"{c.name} x{c.hosts}" if c.hosts > 1 else c.name for c in view.clusters if c.hosts]
    where = ", ".join(_unbroken(h) for h in hosts) or "-"
    # The swatch stays beside the name; a line breaks after the namespace's "/" only, never inside a
    # name at its hyphens (which is where a browser breaks "team-research/deepseek-v3" by default).
    subject = f"{_unbroken(view.namespace + '/')}<wbr>{_unbroken(view.name)}"
    return (
        f'<tr class="{"trouble" if trouble else "ok"}">'
        f'<td class="subject"><div><span class="swatch" style="background:{colour}"></span>'
        f"<span>{subject}</span></div></td>"
        f"<td>{view.placed} of {view.desired}</td><td>{where}</td>"
        f"<td>{esc(d.reason)}{details}</td></tr>"
    )


def _unbroken(text: str) -> str:
    return f'<span class="nowrap">{esc(text)}</span>'


def _row(c: ClusterView, colours: dict[str, str]) -> str:
    badges = ['<span class="badge ready">Ready</span>' if c.ready else '<span class="badge notready">not Ready</span>']
    badges += [f'<span class="badge taint">{esc(t)}</span>' for t in c.taints]
    pools = "".join(pool_cell(p, colours) for p in c.pools) or '<p class="empty">no pools published</p>'
    return (
        f'<tr class="{"ok" if c.ready else "notready"}"><th scope="row">'
        f'<div class="cluster-name">{esc(c.name)}</div><div class="badges">{"".join(badges)}</div></th>'
        f'<td><div class="pools">{pools}</div></td></tr>'
    )


def _rolling(plan: PlanView) -> bool:
    """Whether any replica the plan leaves was updated in place or runs an older revision."""
    chips = (chip for c in plan.clusters for p in c.pools for chip in p.chips)
    return any(chip.outdated or chip.origin is Origin.UPDATED for chip in chips)


def _legend(plan: PlanView, colours: dict[str, str]) -> str:
    """What the colours and marks mean: one swatch per deployment, then the chips, bars and badges."""
    planned = {d.view.subject for d in plan.deployments}
    items = [
        f'<li><span class="swatch" style="background:{colours[o]}"></span>{esc(o)}'
        f"{'' if o in planned else ' (not in the plan: its nodes are charged)'}</li>"
        for o in plan.owners
    ]
    sample = colours[plan.owners[0]] if plan.owners else "#3a6ea5"
    items += [
        f'<li><span class="chip {Origin.NEW}" style="background:{sample}">new</span>placed by this plan</li>',
        f'<li><span class="chip {Origin.RETAINED}" style="background:{sample}">retained</span>kept where it was</li>',
        *(rollout_legend(sample, leaving=False) if _rolling(plan) else []),
        f'<li><span class="chip {Origin.OTHER}" style="background:{sample}">other</span>'
        "a replica of a deployment outside the plan</li>",
        "<li>chip: deployment, cluster#index, engines (nodes)</li>",
        '<li><span class="swatch" style="background:#e6e9ef"></span>free node</li>',
        '<li><span class="badge notready">not Ready</span>takes no new replica</li>',
        '<li><span class="badge taint">taint</span>only tolerating deployments land there</li>',
    ]
    return f'<ul class="legend">{"".join(items)}</ul>'


def plan_page(plan: PlanView) -> str:
    """The whole HTML document: the GPUs, the deployments and why (with what holds their pools), then every pool."""
    colours = owner_colours(plan.owners)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Fleet plan</title><style>{CSS}{_PLAN_CSS}</style></head><body>",
        "<h1>Fleet plan</h1>",
        f'<p class="summary">{esc(headline(plan))}</p>',
        f'<p class="gpus">{esc(gpu_line(plan))}</p>',
        _legend(plan, colours),
        '<table class="deployments"><tr><th>deployment</th><th>placed</th><th>clusters</th><th>status</th></tr>',
        *(_deployment(d, colours[d.view.subject]) for d in plan.deployments),
        "</table>",
        "<h2>Fleet after the plan</h2>",
        '<table class="fleet"><tbody>',
        *(_row(c, colours) for c in plan.clusters),
        "</tbody></table>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
