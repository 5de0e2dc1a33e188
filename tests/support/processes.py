"""Killing real processes the way a node failure would: the whole process tree at once."""
import os
import signal
import subprocess
import time
from pathlib import Path


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo, tree = [pid], []
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def kill_tree(pid: int) -> None:
    """SIGKILL a process and every descendant, as losing the machine would: Spark's Python
    workers run in process groups of their own, so a group kill alone would spare them. The
    tree is frozen first (SIGSTOP) until it stops growing, so no fork escapes the kill."""
    frozen: set[int] = set()
    while True:
        tree = set(_descendants(pid))
        if tree <= frozen:
            break
        for member in tree - frozen:
            try:
                os.kill(member, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        frozen |= tree
    for member in frozen:
        try:
            os.kill(member, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_when(proc: subprocess.Popen, ready, what: str, poll: float = 0.05, timeout: float = 240) -> None:
    """Poll until ``ready()`` holds, then kill the process tree; fails if ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert proc.poll() is None, f"the {what} finished before it could be killed"
            assert time.monotonic() < deadline, f"the {what} never got far enough to be killed"
            time.sleep(poll)
    finally:
        kill_tree(proc.pid)
        proc.wait()
