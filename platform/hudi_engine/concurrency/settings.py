"""Which concurrency regime a write runs under, read once from its options (no Spark, no I/O)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError

EAGER, LAZY, NEVER = "EAGER", "LAZY", "NEVER"


@dataclass(frozen=True)
class Concurrency:
    occ: bool = False
    nbcc: bool = False          # several writers that never conflict (their logs merge on read)
    failed_writes: str = EAGER
    heartbeat_interval_ms: int = 60000
    heartbeat_misses: int = 2
    early_detection: bool = False
    early_check_commits: bool = False

    @property
    def lazy(self) -> bool:
        return self.failed_writes == LAZY

    @property
    def heartbeats(self) -> bool:
        """Writers keep heartbeats whenever failed writes are found by them (Hudi: LAZY)."""
        return self.failed_writes == LAZY

    @property
    def heartbeat_expiry_ms(self) -> int:
        return self.heartbeat_interval_ms * self.heartbeat_misses


def is_occ(cfg: HoodieConfig) -> bool:
    """Whether several writers may write the table (optimistic or non-blocking concurrency control):
    instants start and complete under the table lock."""
    return cfg.get_str(C.WRITE_CONCURRENCY_MODE).upper() in (C.OPTIMISTIC_CONCURRENCY_CONTROL,
                                                             C.NON_BLOCKING_CONCURRENCY_CONTROL)


def concurrency(cfg: HoodieConfig) -> Concurrency:
    mode = cfg.get_str(C.WRITE_CONCURRENCY_MODE).upper()
    occ = is_occ(cfg)
    policy = cfg.get_str(C.FAILED_WRITES_CLEANER_POLICY).upper()
    if occ:
        if cfg.contains(C.FAILED_WRITES_CLEANER_POLICY) and policy != LAZY:
            raise HoodieConfigError(
                f"{C.WRITE_CONCURRENCY_MODE.key}={mode} needs {C.FAILED_WRITES_CLEANER_POLICY.key}=LAZY "
                f"(got {policy}): with several writers a write may only roll back instants whose "
                "heartbeat expired, never another live writer's. Remove the option or set it to LAZY")
        policy = LAZY
    interval = cfg.get(C.HEARTBEAT_INTERVAL_MS)
    if interval < 1000:
        raise HoodieConfigError(f"{C.HEARTBEAT_INTERVAL_MS.key}={interval}: heartbeats cannot be more "
                                "frequent than once a second")
    misses = cfg.get(C.HEARTBEAT_TOLERABLE_MISSES)
    if misses < 1:
        raise HoodieConfigError(f"{C.HEARTBEAT_TOLERABLE_MISSES.key}={misses} must be at least 1")
    early = cfg.get(C.EARLY_CONFLICT_DETECTION_ENABLE)
    if early and not occ:
        raise HoodieConfigError(
            f"{C.EARLY_CONFLICT_DETECTION_ENABLE.key}=true needs "
            f"{C.WRITE_CONCURRENCY_MODE.key}={C.OPTIMISTIC_CONCURRENCY_CONTROL}")
    cfg.get_str(C.CONFLICT_RESOLUTION_STRATEGY)       # validates the choice
    cfg.get_str(C.EARLY_CONFLICT_DETECTION_STRATEGY)
    return Concurrency(occ, mode == C.NON_BLOCKING_CONCURRENCY_CONTROL, policy, interval, misses, early,
                       cfg.get(C.EARLY_CONFLICT_CHECK_COMMIT_CONFLICT))
