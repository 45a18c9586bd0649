"""Field paths as the API server writes them: `spec.engines[0].name`."""

from __future__ import annotations

Path = tuple[str | int, ...]


def render(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(root)"
