"""PySpark jobs of the lakehouse (ingest streamer, table services, catalog sync) and the job-config
contract they accept. Importing this package needs no Spark; running a job does."""
