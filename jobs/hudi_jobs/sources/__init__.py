"""Where a streamer batch comes from: files on storage, Kafka, Debezium, an upstream Hudi table."""
