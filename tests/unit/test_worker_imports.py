"""Spark Python workers on Python < 3.12 re-read a zip archive's directory on invalidation only
when the archive changed. Run in a fresh interpreter: the change is process-wide."""
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import os, sys, zipfile, zipimport
    import pyspark.worker                      # what makes this process a Spark Python worker
    import hudi_engine                         # installs the lazy invalidation
    path = sys.argv[1]
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("one.py", "X = 1")
    reads = []
    original = zipimport._read_directory
    zipimport._read_directory = lambda archive: reads.append(archive) or original(archive)
    importer = zipimport.zipimporter(path)
    importer.invalidate_caches()               # first sight: read
    first = len(reads)
    importer.invalidate_caches()               # unchanged: not read again
    importer.invalidate_caches()
    unchanged = len(reads) - first
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("two.py", "Y = 2")
    os.utime(path, ns=(1, 1))                  # a new stamp even within the clock's resolution
    importer.invalidate_caches()
    print(unchanged, len(reads) - first, importer.find_spec("two") is not None)
""")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 invalidates zip importers lazily itself")
def test_a_worker_rereads_a_zip_only_when_it_changed(tmp_path):
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "lib.zip")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "1", "True"]


def test_other_processes_keep_pythons_own_invalidation():
    script = "import zipimport; before = zipimport.zipimporter.invalidate_caches; import hudi_engine; " \
             "print(zipimport.zipimporter.invalidate_caches is before)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
