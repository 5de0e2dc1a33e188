"""The driver's side of the ``hudi`` data source: for each session this process registers it in,
the source class the session gets and the server that writes what its commits hand over. Kept
apart from ``datasource``, which Spark's workers import: they need none of the write path."""
from __future__ import annotations

import threading
from functools import partial

from pyspark.sql import SparkSession

from .dataframe_write import write_staged
from .datasource import HudiDataSource
from .handoff import WriteServer
from .staging import StagedWrite

_servers: dict[int, tuple[SparkSession, WriteServer]] = {}
_servers_lock = threading.Lock()


def session_source(spark: SparkSession, settings: dict[str, str]) -> type[HudiDataSource]:
    """The source to register in ``spark``: a subclass carrying the session's storage settings and
    where this process writes for the session; made here, it is pickled by value, attributes and
    all, into the workers that plan reads and writes and commit them."""
    with _servers_lock:
        if id(spark) not in _servers:
            _servers[id(spark)] = (spark, WriteServer(partial(_write, spark)))
        server = _servers[id(spark)][1]
    return type("HudiDataSource", (HudiDataSource,), {"session_settings": settings,
                                                      "driver_address": server.address})


def _write(spark: SparkSession, request: dict) -> str:
    return write_staged(spark, StagedWrite.from_dict(request))
