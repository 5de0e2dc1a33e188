"""The one error the planner raises: a spec that loads but cannot become a job here."""
from __future__ import annotations

PLAN_FAILED, UNSAFE_CONCURRENCY = "PlanFailed", "UnsafeConcurrency"


class PlanError(ValueError):
    """``path`` is the field at fault (``spec.services.cleaning.mode``); the message says what to do.
    ``resource`` (``HudiTable/orders``) is filled in by the entry points of :mod:`.plan`; ``reason``
    is the status condition's reason the operator reports it with."""

    def __init__(self, path: str, message: str, resource: str | None = None, reason: str = PLAN_FAILED):
        self.path, self.message, self.resource, self.reason = path, message, resource, reason
        super().__init__(f"{resource + ' ' if resource else ''}{path}: {message}")

    def of(self, resource: str) -> PlanError:
        return PlanError(self.path, self.message, resource, self.reason)
