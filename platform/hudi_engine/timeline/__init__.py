"""Timeline: instants, their files and their metadata (hudi-rs's `timeline` module)."""
