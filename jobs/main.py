"""The one file the Spark image runs (``mainApplicationFile: local:///opt/hudi/jobs/main.py``):
``main.py streamer --job-config F`` or ``main.py table-service --job-config F``. spark-submit needs a
file; the jobs themselves live in the installed ``hudi_jobs`` package."""
import sys

JOBS = {"streamer": "hudi_jobs.streamer.cli", "table-service": "hudi_jobs.table_service"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in JOBS:
        print(f"usage: main.py {{{','.join(JOBS)}}} --job-config FILE", file=sys.stderr)
        return 2
    from hudi_engine.logs import show_progress

    show_progress("hudi_jobs")
    module = __import__(JOBS[argv[0]], fromlist=["main"])
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
