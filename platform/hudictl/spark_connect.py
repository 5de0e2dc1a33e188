"""``hudictl spark-connect``: a Spark Connect server with Hudi, for clients that have no Spark of
their own (``SparkSession.builder.remote("sc://host:15002")``): every statement of Hudi's SQL,
``df.write.format("hudi")`` and ``spark.read.format("hudi")`` work from them as from a local session.
Spark's own ``start-connect-server.sh`` has no Python driver, which Hudi's SQL runs in; this starts
the same plugin in a driver that has one."""
from __future__ import annotations

import argparse
import logging
import signal
import threading

from .compact import parse_conf

EXAMPLE = """examples:
  hudictl spark-connect                              # sc://127.0.0.1:15002, until Ctrl-C
  hudictl spark-connect --host 0.0.0.0 --port 15002 --cores 4 --memory 8g
  hudictl spark-connect --conf spark.sql.warehouse.dir=/data/warehouse --conf spark.sql.catalogImplementation=hive

then, from any Python with pyspark's Connect client:
  spark = SparkSession.builder.remote("sc://127.0.0.1:15002").getOrCreate()
  spark.sql("CREATE TABLE t (id int, name string, ts long) USING hudi TBLPROPERTIES (primaryKey = 'id')")
  spark.sql("UPDATE t SET name = 'x' WHERE id = 1")
"""
log = logging.getLogger("hudictl.spark_connect")


def add_parser(sub) -> None:
    p = sub.add_parser("spark-connect", help="run a Spark Connect server with Hudi's SQL and format('hudi')",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--port", type=int, default=15002, help="gRPC port (default 15002, Spark Connect's)")
    p.add_argument("--cores", type=int, help="local Spark cores (default: all)")
    p.add_argument("--memory", default="2g", help="driver memory (default 2g)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for the server's sessions (repeatable)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hudi_engine.spark import connect_server

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    spark = connect_server(args.port, args.host, args.cores, args.memory, parse_conf(args.conf, "--conf"))
    log.info("Spark Connect with Hudi at sc://%s:%d (Spark %s); Ctrl-C stops it", args.host, args.port,
             spark.version)
    stop.wait()
    spark.stop()
    return 0
