"""``otel-prov status``: what the SPARQL exporters report in their spool directory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from otel_prov.exporters._reports import live_reports

__all__ = ["delivery_status", "render_status"]


def delivery_status(spool: Path) -> dict[str, Any]:
    """Exporter reports (``status-<pid>.json``) of processes that run, spooled batches
    and dead letters."""
    exporters = live_reports(spool)  # a killed exporter's report is removed, not shown
    batches = [p for p in (*spool.glob("*.nq"), *spool.glob("pid-*/*.nq"))]
    letters = sorted((spool / "dead-letter").glob("*.reason"))
    return {
        "spool": str(spool),
        "exporters": exporters,
        "spooled_batches": len(batches),
        "spooled_bytes": sum(p.stat().st_size for p in batches),
        "dead_letters": len(letters),
        "dead_letter_reasons": [
            {"file": str(p.with_suffix(".nq")), "reason": p.read_text(encoding="utf-8")[:300]}
            for p in letters[-5:]
        ],
    }


def render_status(report: dict[str, Any]) -> str:
    lines = [f"spool          {report['spool']}"]
    for exporter in report["exporters"]:
        age = time.time() - float(exporter.get("updated", 0))
        counts = exporter.get("batches", {})
        lines += [
            f"exporter       pid {exporter.get('pid')} -> {exporter.get('endpoint')} "
            f"(updated {age:.0f} s ago)",
            "  batches      "
            + ", ".join(f"{name.replace('_', ' ')} {count}" for name, count in counts.items()),
            f"  triples      {exporter.get('triples_exported', 0)} exported, "
            f"{exporter.get('queued_triples', 0)} queued, batch size {exporter.get('batch_size')}",
        ]
        if exporter.get("last_error"):
            lines.append(f"  last error   {exporter['last_error'][:200]}")
    lines.append(
        f"spooled        {report['spooled_batches']} batches, {report['spooled_bytes']} bytes"
    )
    lines.append(f"dead letters   {report['dead_letters']}")
    for letter in report["dead_letter_reasons"]:
        lines.append(
            f"  {letter['file']}: {letter['reason'].splitlines()[0] if letter['reason'] else ''}"
        )
    return "\n".join(lines)
