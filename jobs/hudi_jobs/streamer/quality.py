"""Record checks before the write: quality rules (``hoodie.streamer.quality.rule.<name>=<SQL
boolean>``) and a usable record key. Records that fail go to the error table, so one bad record
never holds back the rest of the batch. A delete (``_hoodie_is_deleted``) needs only its key: the
rules judge the values a record writes, and a delete writes none."""
from __future__ import annotations

from typing import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from hudi_engine.api import IS_DELETED
from hudi_engine.errors import HoodieConfigError

from ..keys import streamer as K
from ..sources.base import MESSAGE, RAW_RECORD, REASON, SOURCE_POSITION, ErrorReason

_FAILED = "_hoodie_streamer_failed"


def quality_rules(props: Mapping[str, str]) -> dict[str, str]:
    """name → SQL boolean expression, from the ``hoodie.streamer.quality.rule.`` options."""
    return {k[len(K.QUALITY_RULE_PREFIX):]: v for k, v in sorted(props.items())
            if k.startswith(K.QUALITY_RULE_PREFIX)}


def check_records(df: DataFrame, rules: Mapping[str, str], key_fields: list[str],
                  ordering_field: str | None, position: str) -> tuple[DataFrame, DataFrame | None]:
    """(records that pass, error rows or None). Every failed rule of a record is named."""
    checks: list[tuple[Column, str, ErrorReason]] = []
    missing = [f for f in key_fields if f.split(".")[0] not in df.columns]
    if missing:
        raise HoodieConfigError(
            f"record key field(s) {missing} are not in the transformed records (columns: {df.columns}); "
            "fix hoodie.datasource.write.recordkey.field or the transformer")
    if key_fields:
        empty = [F.col(f).isNull() | (F.col(f).cast("string") == "") for f in key_fields]
        no_key = empty[0] if len(empty) == 1 else _all(empty)
        checks.append((no_key, f"record key {'/'.join(key_fields)} is null or empty", ErrorReason.RECORD_CREATION))
    if ordering_field and ordering_field.split(".")[0] in df.columns:
        checks.append((F.col(ordering_field).isNull(), f"ordering field {ordering_field} is null",
                       ErrorReason.RECORD_CREATION))
    writes = ~F.coalesce(F.col(IS_DELETED).cast("boolean"), F.lit(False)) if IS_DELETED in df.columns else F.lit(True)
    for name, expression in rules.items():
        try:
            passed = F.expr(expression)
            df.select(passed)                      # analysis only: unknown columns fail here
        except Exception as exc:
            raise HoodieConfigError(f"quality rule {K.QUALITY_RULE_PREFIX}{name}={expression!r} is not "
                                    f"a valid SQL expression: {exc}") from exc
        checks.append((writes & ~F.coalesce(passed.cast("boolean"), F.lit(False)),
                       f"quality rule '{name}' ({expression}) failed", ErrorReason.QUALITY_RULE_FAILURE))
    if not checks:
        return df, None
    failed = F.filter(F.array(*[F.when(cond, F.struct(F.lit(reason.value).alias("reason"), F.lit(text).alias("text")))
                                for cond, text, reason in checks]), lambda x: x.isNotNull())
    flagged = df.withColumn(_FAILED, failed)
    good = flagged.where(F.size(_FAILED) == 0).drop(_FAILED)
    bad = flagged.where(F.size(_FAILED) > 0)
    errors = bad.select(
        F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns])).alias(RAW_RECORD),
        F.col(_FAILED)[0]["reason"].alias(REASON),
        F.array_join(F.transform(_FAILED, lambda x: x["text"]), "; ").alias(MESSAGE),
        F.lit(position).alias(SOURCE_POSITION))
    return good, errors


def _all(columns: list[Column]) -> Column:
    result = columns[0]
    for column in columns[1:]:
        result = result & column
    return result
