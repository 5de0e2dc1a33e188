"""Hudi's SQL in every session of an application started with the session extension
(``jvm_extension``), not only the one ``register`` patched: ``spark.newSession()``, and the session
Spark Connect makes for each client. Spark's parser, in the JVM, calls :class:`Handler` back through
py4j; the handler runs the same :class:`~.router.Router` in this process, over a Python session
wrapping the JVM's. A failure goes back to the JVM as the exception it should throw there: Spark's
own, or a ``HudiSqlException`` with the engine's message, which a Connect client sees as it is."""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any, Callable

from py4j.protocol import Py4JJavaError
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import SparkSession

from .router import BRIDGED, Router

log = logging.getLogger(__name__)
_SESSIONS_KEPT = 64         # Python wrappers of JVM sessions, most recently used


class Handler:
    """``lakehouse.hudi.HudiSqlHandler``, for the JVM of ``spark``'s application."""

    class Java:
        implements = ["lakehouse.hudi.HudiSqlHandler"]

    def __init__(self, spark: SparkSession):
        self._sc = spark.sparkContext
        self._sessions: OrderedDict[str, SparkSession] = OrderedDict()
        self._lock = threading.Lock()

    def route(self, jsession, text: str) -> Any:
        return self._answer(jsession, lambda router: router.route(text))

    def query(self, jsession, text: str) -> Any:
        return self._answer(jsession, lambda router: router.query(text)._jdf)

    def execute(self, jsession, text: str) -> Any:
        return self._answer(jsession, lambda router: router.run(text)._jdf)

    def _answer(self, jsession, work: Callable[[Router], Any]) -> Any:
        session = self._session(jsession)
        try:
            return work(Router(session, session.sql))
        except Py4JJavaError as e:
            return e.java_exception
        except Exception as e:
            origin = getattr(e, "_origin", None)        # pyspark's copy of a JVM exception
            if origin is not None:
                return origin
            log.debug("Hudi SQL failed", exc_info=True)
            return self._sc._jvm.lakehouse.hudi.HudiSqlException(f"{type(e).__name__}: {e}")

    def _session(self, jsession) -> SparkSession:
        key = jsession.sessionUUID()
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = SparkSession(self._sc, jsession)
                while len(self._sessions) > _SESSIONS_KEPT:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(key)
            return session


def install(spark: SparkSession) -> None:
    """Answer the extension's calls from this process, and give every session of the application
    the ``hudi`` data source registered in ``spark``."""
    jvm = spark.sparkContext._jvm
    ensure_callback_server_started(spark.sparkContext._gateway)
    source = spark._jsparkSession.sessionState().dataSourceManager().lookupDataSource("hudi")
    bridge = jvm.lakehouse.hudi.HudiSql
    bridge.install(Handler(spark), source)
    BRIDGED[id(jvm)] = bridge
