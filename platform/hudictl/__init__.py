"""hudictl: the platform's command line."""
