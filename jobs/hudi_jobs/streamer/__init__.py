"""Hudi Streamer for PySpark: pulls batches from a source (files, Kafka, Debezium, an upstream Hudi
table), transforms them and writes them into a Hudi table, keeping the source checkpoint in each
commit. ``python -m hudi_jobs.streamer --help`` (or ``hudi-streamer``) for the command line;
``config`` holds the job-config contract and imports without Spark."""
