"""The standard Ready/Progressing/Degraded conditions (metav1.Condition), so `kubectl wait
--for=condition=Ready` and dashboards read both kinds the same way. A condition keeps its
lastTransitionTime while its status does not change: that time says since when it has held."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Iterable

READY, PROGRESSING, DEGRADED = "Ready", "Progressing", "Degraded"
TYPES = (READY, PROGRESSING, DEGRADED)


@dataclass(frozen=True)
class Condition:
    """One condition as decided from the observed state; time and generation are added on merge."""
    type: str
    status: bool
    reason: str
    message: str = ""


def timestamp(now: _dt.datetime) -> str:
    """RFC 3339 in UTC with seconds, the form Kubernetes writes."""
    return now.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge(previous: Iterable[dict[str, Any]] | None, decided: Iterable[Condition], generation: int | None,
          now: _dt.datetime) -> list[dict[str, Any]]:
    """The conditions to write: the decided ones, each keeping the previous lastTransitionTime when
    its status is unchanged; conditions of other types (written by someone else) are kept."""
    old = {c.get("type"): c for c in previous or ()}
    merged = []
    for cond in decided:
        status = "True" if cond.status else "False"
        before = old.pop(cond.type, None)
        since = (before.get("lastTransitionTime") if before and before.get("status") == status
                 and before.get("lastTransitionTime") else timestamp(now))
        entry = {"type": cond.type, "status": status, "reason": cond.reason, "message": cond.message,
                 "lastTransitionTime": since}
        if generation is not None:
            entry["observedGeneration"] = generation
        merged.append(entry)
    return merged + [c for t, c in old.items() if t not in TYPES]


def find(conditions: Iterable[dict[str, Any]] | None, type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions or () if c.get("type") == type_), None)


def is_true(conditions: Iterable[dict[str, Any]] | None, type_: str) -> bool:
    found = find(conditions, type_)
    return bool(found and found.get("status") == "True")


def degraded_status(status: dict[str, Any] | None, reason: str, message: str, generation: int | None,
                    now: _dt.datetime) -> dict[str, Any]:
    """The status for what only the operator can detect (a missing table, a spec it cannot plan, an
    unreadable base path): phase Degraded and conditions saying what is wrong and what to do; the
    rest of the status (a pipeline's reconciliation record, a table's last commit) is left as it was."""
    conditions = merge((status or {}).get("conditions"), (Condition(READY, False, reason, message),
                                                          Condition(PROGRESSING, False, reason, message),
                                                          Condition(DEGRADED, True, reason, message)),
                       generation, now)
    return {"observedGeneration": generation, "phase": "Degraded", "message": message, "conditions": conditions}


def of_phase(phase: str, reason: str, message: str, ready_phases: tuple[str, ...],
             progressing_phases: tuple[str, ...], degraded_phases: tuple[str, ...]) -> tuple[Condition, ...]:
    """The three conditions a phase implies; the reason and message explain the phase and go on the
    condition that is True (Ready's own reason is the phase when it holds)."""
    ready = phase in ready_phases
    progressing = phase in progressing_phases
    degraded = phase in degraded_phases
    return (
        Condition(READY, ready, phase if ready else reason, message),
        Condition(PROGRESSING, progressing, reason if progressing else "Stable",
                  message if progressing else ""),
        Condition(DEGRADED, degraded, reason if degraded else "Healthy", message if degraded else ""),
    )
