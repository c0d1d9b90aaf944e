"""What ``verify`` and ``import`` report, as text for people or JSON for programs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from otel_prov.cli._terminal import printable
from otel_prov.ingest._import import ImportSummary
from otel_prov.read._retention import PrunePlan, Unfinished, ranges
from otel_prov.read._verify import SessionCheck

__all__ = ["render_checks", "render_import", "render_prune"]


def render_checks(checks: Sequence[SessionCheck], fmt: str) -> str:
    """Each session's verdict and problems, then the totals (``text``), or a JSON list."""
    if fmt == "json":
        report = [
            {
                "session": c.session,
                "bundle": c.bundle,
                "ok": c.ok,
                "gates": c.gates,
                "problems": c.problems,
                "warnings": c.warnings,
                "revised": c.revised,
                "notes": c.notes,
            }
            for c in checks
        ]
        return json.dumps(report, indent=2) + "\n"
    lines = []
    for check in checks:
        lines.append(f"{'ok' if check.ok else 'FAILED'}  {check.session}")
        lines.extend(f"    {problem}" for problem in check.problems)
        lines.extend(f"    warning: {warning}" for warning in check.warnings)
        lines.extend(f"    {note}" for note in check.notes)
        if check.revised:
            lines.append(f"    revised after sealing ({'; '.join(check.revised)})")
    failed = sum(not c.ok for c in checks)
    lines.append(f"{len(checks) - failed} verified, {failed} failed")
    return printable("\n".join(lines)) + "\n"


def render_import(
    summary: ImportSummary, problems: Sequence[str], files: Sequence[str], fmt: str
) -> str:
    """One line of counts (``text``), or the summary with the skipped parts as JSON."""
    if fmt == "json":
        report = {**dataclasses.asdict(summary), "problems": list(problems), "files": list(files)}
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    line = (
        f"imported {summary.spans} spans from {summary.traces} traces: {summary.sessions} sessions"
    )
    notes = [
        f"{summary.already_stored} already stored, {summary.revised} of them revised"
        if summary.already_stored
        else "",
        f"{summary.left_out_spans} spans of {summary.left_out_traces} traces without an "
        "agent session left out"
        if summary.left_out_traces
        else "",
        f"{len(problems)} unreadable parts skipped, listed above" if problems else "",
    ]
    notes = [note for note in notes if note]
    return (f"{line} ({'; '.join(notes)})" if notes else line) + "\n"


def render_prune(
    plan: PrunePlan,
    tombstones: Sequence[str],
    dry_run: bool,
    fmt: str,
    finished: Sequence[Unfinished] = (),
) -> str:
    """What a prune removed (or would, ``dry_run``) and the tombstones it left, after the
    interrupted prunes it ``finished`` first: one line each (``text``) or a JSON object."""
    if fmt == "json":
        report = {
            "dry_run": dry_run,
            "cutoff": plan.cutoff,
            "policy": plan.policy,
            "runs": len(plan.runs),
            "entries": len(plan.entries),
            "ranges": ranges(plan),
            "tombstones": list(tombstones),
            "sessions": list(plan.runs),
            "finished": [
                {"intent": each.node, "policy": each.policy, "time": each.time,
                 "traces": len(each.traces)}
                for each in finished
            ],
        }  # fmt: skip
        return json.dumps(report, indent=2) + "\n"
    lines = [
        f"{'would finish' if dry_run else 'finished'} an interrupted prune ({each.policy}, "
        f"at {each.time}): what was left of its {len(each.traces)} traces "
        f"{'would be' if dry_run else 'is'} removed\n"
        for each in finished
    ]
    if not plan.runs:
        return "".join(lines) + (
            f"nothing to prune: no run ended before {plan.cutoff} ({plan.policy})\n"
        )
    chains = len({entry.chain for entry in plan.entries})
    what = (
        f"{len(plan.runs)} runs that ended before {plan.cutoff} ({plan.policy}; "
        f"{len(plan.entries)} entries of {chains} chains in {len(plan.tombstones)} ranges)"
    )
    if dry_run:
        return "".join(lines) + f"would prune {what}\n"
    left = f": tombstones {', '.join(tombstones)}" if tombstones else ""
    return "".join(lines) + f"pruned {what}{left}\n"
