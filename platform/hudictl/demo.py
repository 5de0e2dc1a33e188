"""``hudictl demo``: the retail lakehouse of "Apache Hudi: The Definitive Guide", chapter 10, on this
machine: a PostgreSQL shop whose changes are captured into bronze Hudi tables, refined into silver
and aggregated into gold, all declared as the HudiTable and HudiPipeline resources in
examples/lakehouse/ and run by ``hudictl run``, the local executor, exactly as they would run in a
cluster.

While a generator keeps changing the shop (orders placed, paid, shipped and cancelled, lines
changed, customers moving, products recategorized, a column added, a type widened), the pipelines
run continuously. When the generator stops, the demo waits until gold agrees with the same
aggregates computed in PostgreSQL, stops the pipelines (each finishes its batch), and summarizes
what each layer holds, with a time-travel query, silver's change feed and hudi-rs reading gold.

Beside PostgreSQL the demo starts the platform's other services on this machine: a Hive Metastore,
where every table is registered after each commit (queried by name from Spark SQL at the end), and
Prometheus, scraping every pipeline's metrics.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

from . import local_metastore, local_postgres, local_prometheus, retail

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "lakehouse"
PASSWORD = "hudi-demo"          # the pipelines' database password, handed over as a Secret file
LAYERS = (("bronze", ("customers", "products", "orders", "order_items")), ("silver", ("order_lines",)),
          ("gold", ("daily_revenue", "customer_value")))
EXAMPLE = """examples:
  hudictl demo                              # two minutes of changes; the lake in ./demo-lakehouse
  hudictl demo --seconds 30 --path /tmp/lakehouse-demo
  hudictl demo --keep-running               # leave the shop, the metastore and Prometheus up afterwards
"""


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="run the retail lakehouse on this machine: PostgreSQL CDC to bronze, silver, gold",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--path", default="demo-lakehouse", help="folder of the demo: the lake, PostgreSQL's data, "
                                                             "the pipelines' log (default ./demo-lakehouse)")
    p.add_argument("--seconds", type=float, default=120, help="how long the shop keeps changing (default 120)")
    p.add_argument("--pg-port", type=int, default=55432, help="PostgreSQL's port on 127.0.0.1 (default 55432)")
    p.add_argument("--metastore-port", type=int, default=59083,
                   help="the Hive Metastore's port on 127.0.0.1 (default 59083)")
    p.add_argument("--prometheus-port", type=int, default=59090, help="Prometheus' port on 127.0.0.1 (default 59090)")
    p.add_argument("--catch-up-timeout", type=float, default=600,
                   help="most seconds to wait for gold to agree with PostgreSQL after the last change")
    p.add_argument("--keep-running", action="store_true",
                   help="leave PostgreSQL, the metastore and Prometheus running at the end (Ctrl-C stops them)")
    p.set_defaults(run=run)


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(args: argparse.Namespace) -> int:
    root = Path(args.path).resolve()
    lake = root / "lake"
    for folder in (lake, root / "postgres", root / "metastore", root / "prometheus", root / "secrets"):
        shutil.rmtree(folder, ignore_errors=True)
    (root / "secrets" / "retail-db").mkdir(parents=True)
    (root / "secrets" / "retail-db" / "password").write_text(PASSWORD)
    services = Services(root, args)
    try:
        try:
            services.start()
        except RuntimeError as exc:              # not installed, a port taken, a server that did not start
            print(f"hudictl demo: {exc}", file=sys.stderr)
            return 1
        return _demo(args, root, lake, services)
    finally:
        if args.keep_running and services.running():
            _say("the services keep running (Ctrl-C stops them): " + services.where())
            _wait_for_ctrl_c()
        services.stop()


class Services:
    """PostgreSQL, the Hive Metastore and Prometheus of the demo, on 127.0.0.1, data under ``root``."""

    def __init__(self, root: Path, args: argparse.Namespace):
        self.root, self.args = root, args
        self.postgres: local_postgres.LocalPostgres | None = None
        self.metastore: local_metastore.LocalMetastore | None = None
        self.prometheus: local_prometheus.LocalService | None = None

    @property
    def targets(self) -> Path:
        return self.root / "prometheus" / "pipelines.json"

    def start(self) -> None:
        args = self.args
        _say(f"the Hive Metastore (Hive 2.3, Derby) starting on 127.0.0.1:{args.metastore_port}")
        self.metastore = local_metastore.start(self.root / "metastore", args.metastore_port)
        _say(f"PostgreSQL 15 on 127.0.0.1:{args.pg_port} with wal_level=logical, data in {self.root / 'postgres'}")
        self.postgres = local_postgres.start(self.root / "postgres", args.pg_port, "postgres", wal_level="logical",
                                             max_replication_slots="16", max_wal_senders="16")
        # the pipelines' endpoints, labelled as the chart's PodMonitor labels them, from `hudictl run`
        self.targets.parent.mkdir(parents=True)
        self.targets.write_text("[]")
        config = {"global": {"scrape_interval": "5s"},
                  "scrape_configs": [{"job_name": "hudi-pipelines",
                                      "file_sd_configs": [{"files": [str(self.targets)], "refresh_interval": "5s"}]}]}
        self.prometheus = local_prometheus.start(self.root / "prometheus", args.prometheus_port, config)
        _say(f"Prometheus on {self.prometheus.url}, scraping the pipelines' metrics")
        self.metastore.wait_until_listening()
        _say(f"the Hive Metastore listens on {self.metastore.address}")

    def running(self) -> bool:
        return self.postgres is not None and self.postgres.running()

    def where(self) -> str:
        assert self.postgres and self.metastore and self.prometheus
        return (f"PostgreSQL {self.postgres.url('retail')}, the metastore {self.metastore.address}, "
                f"Prometheus {self.prometheus.url}")

    def stop(self) -> None:
        for service in (self.prometheus, self.metastore):
            if service is not None:
                service.stop()
        if self.postgres is not None and self.postgres.running():
            self.postgres.stop()
        _say("the services stopped")


def _wait_for_ctrl_c() -> None:
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass


def _demo(args, root: Path, lake: Path, services: Services) -> int:
    server = services.postgres
    assert server is not None and services.metastore is not None
    server.psql("postgres", "CREATE DATABASE retail")
    connect = _connector(server.url("retail"))
    with connect() as conn:
        retail.create_schema(conn, PASSWORD)
    shop = retail.RetailGenerator(connect)
    shop.seed()
    _say("the shop: " + ", ".join(f"{server.psql('retail', f'SELECT count(*) FROM {t}')} {t}"
                                   for t in retail.TABLES))
    env = {**os.environ, "LAKEHOUSE_PATH": str(lake), "RETAIL_DB_URL": f"postgresql://127.0.0.1:{args.pg_port}/retail",
           "HIVE_METASTORE_URIS": services.metastore.address}
    log_path = root / "pipelines.log"
    _say(f"starting the 7 pipelines of {EXAMPLES} with `hudictl run` (their output: {log_path})")
    with open(log_path, "w") as log:
        pipelines = subprocess.Popen([sys.executable, "-m", "hudictl.cli", "run", "-f", str(EXAMPLES),
                                      "--namespace", "lakehouse", "--secrets-dir", str(root / "secrets"),
                                      "--metrics-targets", str(services.targets)],
                                     env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not _wait_for_snapshots(lake, pipelines, args.catch_up_timeout):
            return _pipelines_failed(pipelines, log_path) if pipelines.poll() is not None else _timed_out(args)
        changes = _change_the_shop(shop, args.seconds, lake, pipelines)
        if changes is None:
            return _pipelines_failed(pipelines, log_path)
        stopped = time.monotonic()
        _say(f"the shop stopped changing ({sum(changes.values())} changes); waiting for gold to agree with "
             "PostgreSQL")
        lag = _catch_up(server, lake, pipelines, stopped, args.catch_up_timeout)
        if lag is None:
            return _pipelines_failed(pipelines, log_path) if pipelines.poll() is not None else _timed_out(args)
        metrics = _metrics(services.prometheus)          # before the pipelines stop serving them
    finally:
        _stop(pipelines)
    _summary(lake, changes, lag, root)
    _print_metrics(metrics, services.prometheus)
    _catalog(services.metastore.address, root)
    _look_further(lake, root)
    return 0


def _connector(url: str):
    from hudi_jobs.sources.postgres_connection import parse_url

    settings = parse_url(url, "the demo's database")
    return settings.connect


def _wait_for_snapshots(lake: Path, pipelines: subprocess.Popen, timeout: float) -> bool:
    """Until every bronze table holds its first commit (the snapshot of its PostgreSQL table), so
    that what the shop does next reaches bronze as captured changes."""
    started = time.monotonic()
    bronze = [lake / "bronze" / name for name in LAYERS[0][1]]
    while pipelines.poll() is None and time.monotonic() - started < timeout:
        if all(_commit_count(path) for path in bronze):
            _say(f"bronze holds the snapshot of every shop table ({time.monotonic() - started:.0f}s); "
                 "from now on its changes are captured")
            return True
        time.sleep(2)
    return False


def _commit_count(path: Path) -> int | None:
    from hudi_engine.api import HoodieTable

    return len(HoodieTable.load(str(path)).timeline.completed_writes()) if HoodieTable.exists(str(path)) else None


def _change_the_shop(shop: retail.RetailGenerator, seconds: float, lake: Path, pipelines: subprocess.Popen):
    """The generator in a thread, with a progress line every 10 s; None if the pipelines died."""
    stop = threading.Event()
    worker = threading.Thread(target=shop.run, args=(seconds, stop), daemon=True)
    started = time.monotonic()
    worker.start()
    while worker.is_alive():
        worker.join(10)
        if pipelines.poll() is not None:
            stop.set()
            worker.join()
            return None
        _say(f"{time.monotonic() - started:4.0f}s: {sum(shop.counts.values())} changes | commits " + _commits(lake))
    return shop.counts


def _commits(lake: Path) -> str:
    parts = []
    for layer, tables in LAYERS:
        counts = [_commit_count(lake / layer / name) for name in tables]
        parts.append(f"{layer} {'/'.join('-' if n is None else str(n) for n in counts)}")
    return " | ".join(parts)


def _catch_up(server, lake: Path, pipelines: subprocess.Popen, since: float, timeout: float) -> float | None:
    """Seconds from the last change until gold equals PostgreSQL's aggregates; None if it did not
    within ``timeout`` or the pipelines ended."""
    expected = (_pg_rows(server, retail.REVENUE_BY_DAY_AND_CATEGORY), _pg_rows(server, retail.CUSTOMER_LIFETIME_VALUE))
    while time.monotonic() - since < timeout and pipelines.poll() is None:
        if _gold(lake) == expected:
            return time.monotonic() - since
        time.sleep(3)
    return None


def _pg_rows(server, query: str) -> list[tuple[str, ...]]:
    return sorted(tuple(line.split("|")) for line in server.psql("retail", query).splitlines())


def _gold(lake: Path) -> tuple[list, list] | None:
    from hudi_engine.api import HoodieTable, read_arrow

    paths = [str(lake / "gold" / name) for name in ("daily_revenue", "customer_value")]
    if not all(HoodieTable.exists(p) and HoodieTable.load(p).timeline.last_completed_write() for p in paths):
        return None
    revenue = read_arrow(paths[0], columns=["order_date", "category", "revenue"]).to_pylist()
    value = read_arrow(paths[1], columns=["customer_id", "lifetime_value"]).to_pylist()
    return (sorted((str(r["order_date"]), r["category"], _money(r["revenue"])) for r in revenue),
            sorted((str(r["customer_id"]), _money(r["lifetime_value"])) for r in value))


def _money(value) -> str:
    return str(Decimal(value).quantize(Decimal("0.01")))


def _stop(pipelines: subprocess.Popen) -> None:
    if pipelines.poll() is not None:
        return
    _say("stopping the pipelines: each finishes its batch and commits it")
    pipelines.send_signal(signal.SIGTERM)
    try:
        pipelines.wait(300)
    except subprocess.TimeoutExpired:
        os.killpg(pipelines.pid, signal.SIGKILL)
        pipelines.wait()


def _pipelines_failed(pipelines: subprocess.Popen, log_path: Path) -> int:
    print(f"hudictl demo: the pipelines stopped (exit code {pipelines.returncode}); the last lines of "
          f"{log_path}:", file=sys.stderr)
    for line in log_path.read_text().splitlines()[-25:]:
        print(f"  {line}", file=sys.stderr)
    return 1


def _timed_out(args) -> int:
    print(f"hudictl demo: gold did not agree with PostgreSQL within {args.catch_up_timeout:.0f}s of the last "
          "change; see the pipelines' log. A slower machine may need --catch-up-timeout", file=sys.stderr)
    return 1


def _summary(lake: Path, changes, lag: float, root: Path) -> None:
    from hudi_engine.api import HoodieTable, read_arrow

    print("\n== What the shop did")
    print("   " + ", ".join(f"{n} {kind}" for kind, n in sorted(changes.items(), key=lambda kv: -kv[1])))
    print("\n== The lakehouse")
    print(f"   {'layer':<7} {'table':<15} {'rows':>6} {'commits':>8}  services")
    for layer, tables in LAYERS:
        for name in tables:
            path = str(lake / layer / name)
            timeline = HoodieTable.load(path).timeline
            rows = read_arrow(path, columns=["_hoodie_record_key"]).num_rows
            # A completed compaction is a commit on a merge-on-read table (whose writes are delta commits).
            services = {"compactions": len(timeline.filter(["commit"], completed=True)) if layer == "bronze" else 0,
                        "clusterings": len(timeline.filter(["replacecommit"], completed=True)),
                        "cleans": len(timeline.filter(["clean"], completed=True))}
            done = ", ".join(f"{kind} {n}" for kind, n in services.items() if n)
            print(f"   {layer:<7} {name:<15} {rows:>6} {len(timeline.completed_writes()):>8}  {done}")
    errors = lake / "silver" / "order_lines_errors"
    if HoodieTable.exists(str(errors)):
        print(f"   {'':<7} order_lines_errors: {read_arrow(str(errors)).num_rows} lines set aside by the quality rule")
    print(f"\n== End to end: gold agreed with PostgreSQL {lag:.0f}s after the last change")
    _time_travel(str(lake / "gold" / "daily_revenue"))
    _silver_changes(str(lake / "silver" / "order_lines"))
    _outside_reader(str(lake / "gold" / "daily_revenue"))


def _metrics(prometheus) -> dict[str, dict[str, float]]:
    """Per pipeline, what Prometheus scraped of its metrics (after one more scrape interval, so the
    last batches are in)."""
    time.sleep(6)
    found: dict[str, dict[str, float]] = {}
    for name, promql in METRICS.items():
        for sample in local_prometheus.query(prometheus, promql):
            found.setdefault(sample["metric"].get("pipeline", "?"), {})[name] = float(sample["value"][1])
    return found


# what the summary shows of each pipeline's metrics, as PromQL over the scraped series
METRICS = {"up": "up{job='hudi-pipelines'}",
           "batches": "sum by (pipeline) (hudi_streamer_batches_total)",
           "written": "sum by (pipeline) (hudi_streamer_records_written_total)",
           "errored": "sum by (pipeline) (hudi_streamer_records_errored_total)",
           "s/batch": "sum by (pipeline) (hudi_streamer_batch_duration_seconds_sum) / "
                      "sum by (pipeline) (hudi_streamer_batch_duration_seconds_count)"}


def _print_metrics(found: dict[str, dict[str, float]], prometheus) -> None:
    print(f"\n== Prometheus ({prometheus.url}) scraped every pipeline's metrics")
    print(f"   {'pipeline':<22}" + "".join(f"{name:>12}" for name in METRICS))
    for pipeline in sorted(found):
        values = found[pipeline]
        print(f"   {pipeline:<22}" + "".join(f"{values[name]:>12.4g}" if name in values else f"{'-':>12}"
                                          for name in METRICS))


def _catalog(metastore_uri: str, root: Path) -> None:
    """The tables as the Hive Metastore holds them, and one queried by name from Spark SQL."""
    from hudi_engine.spark import local_spark

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with _stderr_to(root / "spark-sql.log"):               # the JVM's start-up chatter
        spark = local_spark("hudictl-demo-sql", cores=1, extra_conf={
            "spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": metastore_uri,
            "spark.sql.warehouse.dir": str(root / "warehouse")})
    try:
        print(f"\n== The Hive Metastore ({metastore_uri}): every table registered after each commit")
        for layer, _ in LAYERS:
            tables = sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN retail_{layer}").collect())
            print(f"   retail_{layer}: {', '.join(tables)}")
        print(f"   Spark SQL, by name:\n     {CATALOG_QUERY}")
        for row in spark.sql(CATALOG_QUERY).collect():
            print(f"     {row['category']:<12} {_money(row['revenue']):>12}")
    finally:
        spark.stop()


@contextlib.contextmanager
def _stderr_to(path: Path):
    """File descriptor 2 (where a child JVM writes too) into ``path`` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as target:
        os.dup2(target.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


CATALOG_QUERY = ("SELECT category, sum(revenue) AS revenue FROM retail_gold.daily_revenue "
                 "GROUP BY category ORDER BY revenue DESC LIMIT 3")


def _look_further(lake: Path, root: Path) -> None:
    print("\n== Look further")
    print(f"   export LAKEHOUSE_PATH={lake}")
    print("   hudictl status -f examples/lakehouse/")
    print(f"   hudictl table timeline --base-path {lake / 'silver' / 'order_lines'} --limit 10")
    print(f"   hudictl table files --base-path {lake / 'bronze' / 'orders'}")
    print("   hudictl demo --keep-running   # then Prometheus, the metastore and the shop stay up to query")
    print(f"   the pipelines' output: {root / 'pipelines.log'}")


def _time_travel(path: str) -> None:
    from hudi_engine.api import HoodieTable, read_arrow

    first = HoodieTable.load(path).timeline.completed_writes()[0].timestamp
    then = read_arrow(path, {"as.of.instant": first}, columns=["revenue"]).column("revenue").to_pylist()
    now = read_arrow(path, columns=["revenue"]).column("revenue").to_pylist()
    print(f"\n== Time travel: daily_revenue as of its first commit {first}: {len(then)} groups, revenue "
          f"{_money(sum(then))}; now: {len(now)} groups, revenue {_money(sum(now))}")


def _silver_changes(path: str) -> None:
    from collections import Counter

    from hudi_engine.api import read_arrow

    feed = read_arrow(path, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime":
                             "0", "hoodie.datasource.query.incremental.format": "cdc"}, columns=["op"])
    ops = Counter(feed.column("op").to_pylist())
    print(f"\n== Silver's change feed over the run (CDC): {ops.get('i', 0)} inserts, {ops.get('u', 0)} updates, "
          f"{ops.get('d', 0)} deletes")


def _outside_reader(path: str) -> None:
    import pyarrow as pa
    from hudi import HudiReadOptions, HudiTableBuilder

    from hudi_engine.api import read_arrow

    theirs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read(HudiReadOptions()))
    ours = read_arrow(path)
    key = ["order_date", "category", "revenue"]
    same = sorted(map(str, theirs.select(key).to_pylist())) == sorted(map(str, ours.select(key).to_pylist()))
    print(f"\n== hudi-rs (Apache Hudi's Rust reader) reads gold daily_revenue: {theirs.num_rows} rows, "
          f"{'the same as' if same else 'DIFFERENT from'} this engine's reader")
