"""Hudi's asynchronous indexer (``HoodieIndexer``, the ``indexing`` action): metadata partitions
built while writers keep writing, holding the table lock only to schedule and to finish.

- Schedule (under the lock, short): the newest completed data instant is the base
  (``indexUptoInstant``); ``<t>.indexing.requested`` holds the plan, whose partitions go to
  ``hoodie.table.metadata.partitions.inflight``. From then on every write (which syncs the metadata
  table under the same lock) logs its changes in them too, on file groups fixed by the plan.
- Execute: ``<t>.indexing.inflight``, then each partition's base files from a snapshot, without
  the lock; the writers' logs sort after them. Then, under the lock, the catch-up: every data
  instant completed since the base must have its metadata delta commit (a writer that ignored the
  lock would have missed the partitions: the indexing is refused rather than completed with a
  hole). The partitions move to ``hoodie.table.metadata.partitions``, then ``<t>.indexing``
  completes with ``HoodieIndexCommitMetadata``.
- A killed indexer leaves a pending instant: readers never use its partitions, writers keep them
  in step. Running it again resumes (a half-written build is written again; a finished one is
  kept); ``rollback_indexing`` drops the partitions and the plan instead.
- ``dropindex`` (Hudi's mode of that name): drops built or pending partitions, their place in
  ``hoodie.properties`` and their definitions in index.json, as ``DROP INDEX`` does.

Partition stats, secondary indexes (``secondary_index_<name>``) and expression indexes
(``expr_index_<name>``) are planned as Hudi's ``ScheduleIndexActionExecutor`` plans them: by
partition path, a secondary or expression index's definition already in index.json (``CREATE
INDEX`` writes it first, as ``HoodieSparkIndexClient`` does).
"""
from __future__ import annotations

import logging

from ..concurrency.locks import locked_table
from ..concurrency.settings import is_occ
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..metadata_table.index_defs import (
    expression_indexes,
    is_expression_index_partition,
    is_secondary_index_partition,
    secondary_indexes,
)
from ..metadata_table.layout import (
    COLUMN_STATS,
    FILES,
    PARTITION_STATS,
    RECORD_INDEX,
    init_instant,
    open_mdt,
    set_table_partitions,
    wanted_partitions,
)
from ..table.meta_client import HoodieTable
from ..timeline.index_plan import (IndexPartition, commit_record, encode_plan, indexing_partitions,
                                   partitions_to_index, pending_indexing, plan_of, planned_paths)
from ..timeline.instant import INDEXING, Instant, State, new_instant_time
from ..transaction.commit import complete
from ..transaction.metadata.secondary_index import taken_build_instants
from ..transaction.metadata.index_ddl import drop_partitions, drop_pending_indexing
from ..transaction.metadata.writer import INDEXABLE, build_order, build_planned, current_partitions, \
    planned_file_groups, uncovered_instants

log = logging.getLogger(__name__)

MODES = ("schedule", "execute", "scheduleAndExecute", "rollback", "dropindex")
SECONDARY_INDEX_TYPE, EXPRESSION_INDEX_TYPE = "SECONDARY_INDEX", "EXPRESSION_INDEX"   # every defined one
ASYNC_MIN_VERSION = 8


def index_partitions(index_types: list[str], defined: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Hudi's ``--index-types`` as metadata partitions: ``RECORD_INDEX``, ``COLUMN_STATS``,
    ``BLOOM_FILTERS``, ``PARTITION_STATS`` (any case); a defined index's partition
    (``secondary_index_<name>``, ``expr_index_<name>``, as in index.json: ``defined``); or
    ``SECONDARY_INDEX`` / ``EXPRESSION_INDEX`` for every defined one of that kind."""
    out = []
    kinds = {SECONDARY_INDEX_TYPE: is_secondary_index_partition, EXPRESSION_INDEX_TYPE: is_expression_index_partition}
    for name in index_types:
        wanted = name.strip()
        if wanted.upper() in kinds:
            found = [p for p in defined if kinds[wanted.upper()](p)]
            if not found:
                raise HoodieConfigError(f"index type {wanted} names every defined index of that kind, and the table "
                                        "defines none: create one first (CREATE INDEX ..., or hudictl table index "
                                        "create)")
            out += found
        elif wanted.lower() in INDEXABLE:
            out.append(wanted.lower())
        elif is_secondary_index_partition(wanted) or is_expression_index_partition(wanted):
            if wanted not in defined:
                raise HoodieConfigError(f"index {wanted} is not defined in the table's index.json; define it with "
                                        "CREATE INDEX (with hoodie.metadata.index.async=true to leave its build to the "
                                        "indexer)")
            out.append(wanted)
        else:
            raise HoodieConfigError(f"index type {name!r} cannot be built by the asynchronous indexer; use one of "
                                    f"{', '.join(p.upper() for p in INDEXABLE)}, {SECONDARY_INDEX_TYPE}, "
                                    f"{EXPRESSION_INDEX_TYPE}, or a defined index's partition (secondary_index_<name>, "
                                    "expr_index_<name>)")
    return list(dict.fromkeys(out))


def check_prerequisites(todo: list[str], completed: list[str], building: list[str]) -> None:
    """Refuse an index whose upkeep reads another that is not there: partition stats fold the
    column stats of a write's untouched files (built, not being built), a secondary index's
    entries are kept with the record index's key changes (built, being built or in this plan)."""
    if PARTITION_STATS in todo and COLUMN_STATS not in completed:
        raise HoodieConfigError(f"{PARTITION_STATS} are folded from {COLUMN_STATS}, which is not built yet: index "
                                f"{COLUMN_STATS.upper()} first, then {PARTITION_STATS.upper()}")
    secondary = [p for p in todo if is_secondary_index_partition(p)]
    if secondary and RECORD_INDEX not in completed + building + todo:
        raise HoodieConfigError(f"{', '.join(secondary)} find rows through the {RECORD_INDEX}, which the table does "
                                f"not have: index {RECORD_INDEX.upper()} too")


def defined_partitions(table: HoodieTable) -> list[str]:
    """The partitions of the table's secondary and expression index definitions."""
    return [d.name for d in secondary_indexes(table) + expression_indexes(table)]


def enabled_index_types(cfg: HoodieConfig, table: HoodieTable | None = None) -> list[str]:
    """The index types the options turn on, as a writer's would (what ``index_types`` defaults
    to), and the table's defined secondary and expression indexes."""
    wanted = [p for p in wanted_partitions(cfg, ASYNC_MIN_VERSION) if p in INDEXABLE]
    if table is None:
        return [p.upper() for p in wanted]
    # What cannot be scheduled yet waits for a later run: partition stats for column stats,
    # secondary indexes for the record index.
    have = current_partitions(table)
    ready = [p for p in wanted if p != PARTITION_STATS or COLUMN_STATS in have]
    defined = [p for p in defined_partitions(table)
               if not is_secondary_index_partition(p) or RECORD_INDEX in have + wanted]
    return [p.upper() for p in ready] + defined


def _check(table: HoodieTable, cfg: HoodieConfig) -> None:
    if table.version < ASYNC_MIN_VERSION:
        raise HoodieConfigError(
            f"the asynchronous indexer needs table version {ASYNC_MIN_VERSION} or later (completion times tell "
            f"which writes it must leave to the writers); {table.name} is at version {table.version}: upgrade it "
            "(hudictl table upgrade --to-version 9), or let a write build the index (hoodie.metadata.index.async=false)")
    if not is_occ(cfg):
        raise HoodieConfigError(
            "the asynchronous indexer needs the table lock writers commit under: set "
            "hoodie.write.concurrency.mode=optimistic_concurrency_control and a hoodie.write.lock.provider, "
            "for the indexer and every writer")
    if FILES not in current_partitions(table):
        raise HoodieConfigError(f"{table.name} has no metadata table to index into: write once with "
                                "hoodie.metadata.enable=true first")


def schedule_indexing(spark, table: HoodieTable, index_types: list[str], cfg: HoodieConfig) -> Instant | None:
    """Plan the build of ``index_types``' partitions; None when all are built or being built."""
    _check(table, cfg)
    asked = index_partitions(index_types, defined_partitions(table))
    todo = partitions_to_index(asked, current_partitions(table), list(indexing_partitions(table.timeline)))
    # Sizing the record and secondary indexes counts the table's keys or entries: Spark jobs,
    # before the lock is taken.
    counts = {p: planned_file_groups(spark, table, p, cfg) for p in todo}
    with locked_table(table, cfg, "scheduling indexing") as locked:
        building = indexing_partitions(locked.timeline)
        todo = partitions_to_index(asked, current_partitions(locked), list(building))
        if not todo:
            log.info(f"nothing to index on {locked.name}: {', '.join(asked)} built or being built")
            return None
        check_prerequisites(todo, current_partitions(locked), list(building))
        defined = defined_partitions(locked)
        missing = [p for p in todo if p not in counts or (p not in INDEXABLE and p not in defined)]
        if missing:
            raise HoodieConfigError(f"{', '.join(missing)} changed while indexing {locked.name} was being scheduled "
                                    "(dropped or defined again by another process): schedule it again")
        last = locked.timeline.last_completed_write()
        if last is None:
            raise HoodieConfigError(f"{locked.name} has no completed write to index")
        mdt = open_mdt(locked)
        assert mdt is not None
        taken = taken_build_instants(mdt, locked)
        plan = []
        for partition in sorted(todo, key=lambda p: (build_order(p), p not in INDEXABLE, p)):
            build = init_instant(last.timestamp, build_order(partition), locked.version, taken)
            taken.append(build)
            plan.append(IndexPartition(partition, last.timestamp, counts[partition], build))
        timeline = locked.timeline
        instant = Instant(new_instant_time(max(filter(None, (timeline.last_instant_time,
                                                             timeline.last_completion_time)))), INDEXING, State.REQUESTED)
        timeline.create_requested(instant, encode_plan(plan))
        set_table_partitions(locked, current_partitions(locked))      # lists the plan's partitions as inflight
        log.info(f"scheduled indexing {instant.timestamp} of {locked.name}: {', '.join(todo)} "
                 f"up to {last.timestamp}")
        return instant


def _pending(table: HoodieTable, instant: str | None) -> Instant | None:
    pending = pending_indexing(table.timeline)
    if instant is None:
        return pending[0] if pending else None
    found = next((i for i in pending if i.timestamp == instant), None)
    if found is None:
        raise HoodieConfigError(f"{table.name} has no pending indexing instant {instant}; pending: "
                                f"{', '.join(i.timestamp for i in pending) or 'none'}")
    return found


def build_indexing(spark, table: HoodieTable, cfg: HoodieConfig, instant: str | None = None) -> Instant | None:
    """The long step, without the lock: mark the instant inflight and write every planned
    partition's base files (those a killed run left half written again). None: nothing pending."""
    _check(table, cfg)
    pending = _pending(table, instant)
    if pending is None:
        return None
    if pending.state == State.REQUESTED:
        pending = table.timeline.transition_to_inflight(pending)
    for planned in plan_of(table.timeline, pending):
        build_planned(spark, table.reload(), planned, pending.timestamp, cfg)
    return pending


def finish_indexing(table: HoodieTable, cfg: HoodieConfig, instant: str) -> Instant:
    """Under the lock: the catch-up check, the partitions listed as complete, the instant completed."""
    with locked_table(table, cfg, "completing indexing") as locked:
        pending = _pending(locked, instant)
        assert pending is not None
        plan = plan_of(locked.timeline, pending)
        mdt = open_mdt(locked)
        unbuilt = [p.partition for p in plan if mdt is None or not mdt.timeline.is_completed(p.build_instant)]
        if unbuilt:
            raise HoodieConfigError(f"indexing {instant} of {locked.name} has not built {', '.join(unbuilt)} yet; "
                                    "run it again with --mode execute")
        upto = min(p.upto for p in plan)
        missed = uncovered_instants(locked, upto, pending.timestamp)
        if missed:
            raise HoodieConfigError(
                f"instants {', '.join(missed)} of {locked.name} completed after indexing {instant} was scheduled "
                "without syncing the metadata table (a writer without the table lock?); roll the indexing back "
                "(--mode rollback) and schedule it again")
        set_table_partitions(locked, current_partitions(locked) + [p.partition for p in plan])
        last = locked.timeline.last_completed_write()
        caught_up = last.timestamp if last is not None else upto
        done = complete(locked, pending, commit_record(plan, caught_up))
        log.info(f"indexing {instant} of {locked.name} complete: {', '.join(p.partition for p in plan)}")
        return done


def run_indexing(spark, table: HoodieTable, cfg: HoodieConfig, instant: str | None = None) -> Instant | None:
    """Execute a pending indexing instant (the oldest by default): build, catch up, complete."""
    pending = build_indexing(spark, table, cfg, instant)
    return None if pending is None else finish_indexing(table, cfg, pending.timestamp)


def rollback_indexing(table: HoodieTable, cfg: HoodieConfig, instant: str | None = None) -> Instant | None:
    """Drop a pending indexing instant: its partitions leave the inflight list, their files and
    build instants go from the metadata table, then the plan goes. Definitions of secondary and
    expression indexes stay (schedule them again; ``dropindex`` drops them)."""
    with locked_table(table, cfg, "rolling back indexing") as locked:
        pending = _pending(locked, instant)
        if pending is None:
            return None
        drop_pending_indexing(locked, pending)
        log.info(f"rolled back indexing {pending.timestamp} of {locked.name}")
        return pending


def drop_indexes(table: HoodieTable, cfg: HoodieConfig, index_types: list[str]) -> HoodieTable:
    """Hudi's ``dropindex``: the named partitions, built or being built, with their table-config
    entries and index definitions, under the table lock (as ``DROP INDEX``)."""
    if not index_types:
        raise HoodieConfigError("dropindex needs the index types or partitions to drop (e.g. PARTITION_STATS, "
                                "secondary_index_idx_city)")
    with locked_table(table, cfg, "dropping indexes") as locked:
        pending = [p for i in pending_indexing(locked.timeline) for p in planned_paths(locked.timeline, i)]
        known = defined_partitions(locked) + [p for p in current_partitions(locked) + pending if p not in INDEXABLE]
        partitions = index_partitions(index_types, known)
        dropped = drop_partitions(locked, partitions)
        log.info(f"dropped {', '.join(partitions)} of {locked.name}")
        return dropped


def build_index(spark, table: HoodieTable | str, index_types: list[str] | str | None = None,
                mode: str = "scheduleAndExecute", options: dict | None = None,
                instant: str | None = None) -> Instant | None:
    """Hudi's ``HoodieIndexer``: ``schedule`` the build of ``index_types`` (``RECORD_INDEX``,
    ``COLUMN_STATS``, ``BLOOM_FILTERS``, ``PARTITION_STATS``, ``SECONDARY_INDEX``,
    ``EXPRESSION_INDEX`` or a defined index's partition, see :func:`index_partitions`; None: those
    ``options`` enable, as ``hoodie.metadata.record.index.enable``, and the defined indexes),
    ``execute`` a pending one (``instant``, else the oldest), both (``scheduleAndExecute``),
    ``rollback`` a pending one, or ``dropindex`` the named ones. ``options``: ``hoodie.*``
    options, the table lock's among them. The instant acted on, or None when there was none
    (always None for ``dropindex``)."""
    loaded = table if isinstance(table, HoodieTable) else HoodieTable.load(table)
    cfg = HoodieConfig({**(options or {}), **loaded.props})
    wanted = mode.lower()
    if wanted not in (m.lower() for m in MODES):
        raise HoodieConfigError(f"indexer mode {mode!r} is not one of {', '.join(MODES)}")
    if wanted == "rollback":
        return rollback_indexing(loaded, cfg, instant)
    asked = [index_types] if isinstance(index_types, str) else list(index_types or [])
    if wanted == "dropindex":
        drop_indexes(loaded, cfg, asked)
        return None
    scheduled = None
    if wanted in ("schedule", "scheduleandexecute"):
        types = asked or enabled_index_types(cfg, loaded)
        if not types:
            raise HoodieConfigError("scheduling indexing needs the index types to build (e.g. RECORD_INDEX, COLUMN_STATS), "
                                    "or options that enable them (hoodie.metadata.record.index.enable=true)")
        scheduled = schedule_indexing(spark, loaded, types, cfg)
        if wanted == "schedule" or scheduled is None:
            return scheduled
        instant = scheduled.timestamp
    return run_indexing(spark, loaded.reload(), cfg, instant)


def indexing_due(table: HoodieTable, options: dict | None = None) -> str | None:
    """Why the indexer has work on ``table`` now, or None: a pending indexing to finish, or indexes
    ``options`` enable or the table defines that are neither built nor being built (what an
    operator starts the indexing job on). A table it cannot index (version 6, no metadata table
    yet) has none."""
    pending = pending_indexing(table.timeline)
    if pending:
        return f"indexing {pending[0].timestamp} is pending"
    if table.version < ASYNC_MIN_VERSION or FILES not in current_partitions(table):
        return None
    cfg = HoodieConfig({**(options or {}), **table.props})
    todo = partitions_to_index(index_partitions(enabled_index_types(cfg, table), defined_partitions(table)),
                               current_partitions(table), list(indexing_partitions(table.timeline)))
    return f"{', '.join(todo)} enabled but not built" if todo else None
