"""``python -m hudi_jobs.streamer ...``: the same as the ``hudi-streamer`` command."""
from .cli import main

raise SystemExit(main())
