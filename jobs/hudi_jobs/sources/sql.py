"""Hudi's SqlSource: the batch is the rows of a Spark SQL query. Gold tables are built this way
from silver.

With views (``hoodie.streamer.sql.view.<name>``), this platform adds what a scheduled aggregate
needs: the checkpoint is each view table's last commit, so a batch runs only after one of them
committed, and the query also sees ``<name>_changes``: every row image the table's commits since
the last batch wrote, and, when the table keeps a change feed, every image they took away (before
images of updates and deletes, flagged ``_hoodie_is_deleted``). An aggregate can then be recomputed
only for the groups its inputs touched, those a row left included:

    SELECT day, category, sum(amount) AS revenue FROM order_lines
    WHERE day IN (SELECT day FROM order_lines_changes) GROUP BY day, category

Without views it is Hudi's: every run is a batch, and the checkpoint stays as it was.
"""
from __future__ import annotations

import logging
from typing import Mapping

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import SparkSession

from hudi_engine.config import HoodieConfig
from hudi_engine.errors import HoodieConfigError

from ..keys import streamer as K
from .base import Batch
from .hudi_incr import change_images, commit_positions
from .hudi_views import declared_views, load_tables, register, register_frame

log = logging.getLogger(__name__)
CHANGES_SUFFIX = "_changes"


def parse_checkpoint(checkpoint: str | None) -> dict[str, str]:
    """``name=position,...`` → {name: position}; anything else (no checkpoint yet, or one another
    source wrote) → {}."""
    if not checkpoint or "=" not in checkpoint:
        return {}
    return dict(part.split("=", 1) for part in checkpoint.split(",") if "=" in part)


def format_checkpoint(positions: Mapping[str, str]) -> str:
    return ",".join(f"{name}={position}" for name, position in sorted(positions.items()))


class SqlSource:
    registers_views = True          # the streamer leaves the views to this source

    def __init__(self, props: Mapping[str, str], schema_avro: str | None = None):
        self.query = HoodieConfig(props).require(K.SOURCE_SQL, "SqlSource runs that query")
        self.views = declared_views(props)

    def fetch(self, spark: SparkSession, checkpoint: str | None, limit: int) -> Batch:
        """``limit`` is ignored: the query decides the batch."""
        if not self.views:
            return Batch(self._run(spark), checkpoint, position="the SQL source's query")
        tables, missing = load_tables(self.views)
        if missing:
            log.info(f"waiting for the first commit of {', '.join(missing)} (views of the query)")
            return Batch(None, checkpoint, position=f"views {', '.join(missing)} not written yet")
        latest = {name: commit_positions(table)[-1] for name, table in tables.items()}
        previous = parse_checkpoint(checkpoint)
        if all(previous.get(name) == position for name, position in latest.items()):
            return Batch(None, checkpoint, lag_records=0, lag_seconds=0.0, position="no view table committed")
        for name, table in tables.items():
            register(spark, name, table.base_path, as_of=latest[name])
            register_frame(spark, name + CHANGES_SUFFIX, change_images(spark, table, previous.get(name, "0"),
                                                                      latest[name]))
        grown = [name for name in latest if previous.get(name) != latest[name]]
        return Batch(self._run(spark), format_checkpoint(latest), lag_records=0, lag_seconds=0.0,
                     position=f"the SQL source's query after commits of {', '.join(grown)}")

    def _run(self, spark: SparkSession):
        try:
            return spark.sql(self.query)
        except (AnalysisException, ParseException) as exc:
            views = ", ".join(f"{v}, {v}{CHANGES_SUFFIX}" for v in self.views) or "none declared"
            raise HoodieConfigError(f"{K.SOURCE_SQL.key}: Spark cannot run the query ({str(exc).splitlines()[0]}); "
                                    f"views: {views}") from None
