"""Metrics reporting (Hudi's HoodieMetricsConfig and HoodieMetricsPrometheusConfig), with Hudi's
keys and defaults. Only the two Prometheus reporters exist here."""
from hudi_engine.config import define

PUSHGATEWAY = "PROMETHEUS_PUSHGATEWAY"
PROMETHEUS = "PROMETHEUS"

METRICS_ON = define("hoodie.metrics.on", False, "Report the streamer's metrics.")
REPORTER_TYPE = define(
    "hoodie.metrics.reporter.type", "GRAPHITE",
    "How metrics are reported: PROMETHEUS_PUSHGATEWAY pushes them to a Pushgateway, PROMETHEUS "
    "serves them for scraping. Hudi's default (GRAPHITE) is not available here, so set it when "
    "metrics are on.",
    choices=(PUSHGATEWAY, PROMETHEUS))
PUSHGATEWAY_HOST = define("hoodie.metrics.pushgateway.host", "localhost", "Host of the Pushgateway.")
PUSHGATEWAY_PORT = define("hoodie.metrics.pushgateway.port", 9091,
                          "Port of the Pushgateway; 443 is spoken to over https.")
PUSHGATEWAY_REPORT_PERIOD = define(
    "hoodie.metrics.pushgateway.report.period.seconds", 30,
    "Seconds between background pushes while the streamer runs (it also pushes after every batch).")
PUSHGATEWAY_JOB_NAME = define(
    "hoodie.metrics.pushgateway.job.name", "",
    "Pushgateway job the metrics are grouped under; empty means hudi-streamer-<table name>.")
PUSHGATEWAY_DELETE_ON_SHUTDOWN = define(
    "hoodie.metrics.pushgateway.delete.on.shutdown", True,
    "Delete the job's group from the Pushgateway when the streamer stops.")
PUSHGATEWAY_RANDOM_JOB_NAME_SUFFIX = define(
    "hoodie.metrics.pushgateway.random.job.name.suffix", True,
    "Append a random suffix to the job name, so concurrent runs do not overwrite each other.")
PUSHGATEWAY_LABELS = define(
    "hoodie.metrics.pushgateway.report.labels", "",
    "Labels added to every series, as key1:value1,key2:value2 (also the Pushgateway grouping key).")
PROMETHEUS_PORT = define(
    "hoodie.metrics.prometheus.port", 9090,
    "Port the PROMETHEUS reporter serves /metrics on; 0 picks a free one.")
