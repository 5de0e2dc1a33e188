"""``hudictl run``'s reading of the services' cron schedules (as the Spark operator's scheduler)."""
from __future__ import annotations

import datetime as dt

import pytest

from hudictl.cron import CronError, parse

T = dt.datetime(2025, 1, 1, 12, 7, 30)      # a Wednesday


@pytest.mark.parametrize("schedule, expected", [
    ("*/15 * * * *", dt.datetime(2025, 1, 1, 12, 15)),
    ("0 * * * *", dt.datetime(2025, 1, 1, 13, 0)),
    ("@hourly", dt.datetime(2025, 1, 1, 13, 0)),
    ("@daily", dt.datetime(2025, 1, 2, 0, 0)),
    ("@weekly", dt.datetime(2025, 1, 5, 0, 0)),                  # Sunday
    ("@yearly", dt.datetime(2026, 1, 1, 0, 0)),
    ("30 2 * * MON-FRI", dt.datetime(2025, 1, 2, 2, 30)),
    ("0 0 * * 7", dt.datetime(2025, 1, 5, 0, 0)),                # 7 is Sunday too
    ("5,50 12 * * *", dt.datetime(2025, 1, 1, 12, 50)),
    ("0 9-17/4 * * *", dt.datetime(2025, 1, 1, 13, 0)),
    ("0 0 29 2 *", dt.datetime(2028, 2, 29, 0, 0)),
    ("0 0 1 JUN ?", dt.datetime(2025, 6, 1, 0, 0)),
    # both day fields restricted: either one fires (the 15th, or a Friday)
    ("0 0 15 * FRI", dt.datetime(2025, 1, 3, 0, 0)),
    ("@every 90s", dt.datetime(2025, 1, 1, 12, 9, 0)),
    ("@every 1h30m", dt.datetime(2025, 1, 1, 13, 37, 30)),
    ("@every 200ms", dt.datetime(2025, 1, 1, 12, 7, 31)),
])
def test_next_fire(schedule, expected):
    assert parse(schedule).next_after(T) == expected


def test_a_fire_time_is_strictly_after():
    exact = dt.datetime(2025, 1, 1, 13, 0)
    assert parse("0 * * * *").next_after(exact) == dt.datetime(2025, 1, 1, 14, 0)


@pytest.mark.parametrize("schedule, words", [
    ("* * * *", "expected five fields"), ("61 * * * *", "minute field '61' is outside 0-59"),
    ("* * * FOO *", "month field 'FOO' is not a number"), ("@every soon", "@every needs a duration"),
    ("0 0 30 2 *", "never fires"),
])
def test_bad_schedules_are_named(schedule, words):
    with pytest.raises(CronError, match=words):
        parse(schedule).next_after(T)
