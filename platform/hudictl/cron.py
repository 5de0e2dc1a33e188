"""When a cron schedule fires next, as the Spark operator's scheduler (robfig/cron) reads the
schedules a HudiTable's services carry: five fields (minute hour day-of-month month day-of-week, with
``*``, ``?``, ``a-b``, ``*/n``, ``a-b/n``, lists and month/day names), the ``@hourly``-style
descriptors, and ``@every <duration>`` (Go's syntax: ``90s``, ``1h30m``). A schedule restricting both
day of month and day of week fires on either, as cron does. Pure, in the caller's time zone."""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
               "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_MONTHS = {n: i for i, n in enumerate(("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC").split(), start=1)}
_DAYS = {n: i for i, n in enumerate(("SUN MON TUE WED THU FRI SAT").split())}
_FIELDS = (("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}), ("month", 1, 12, _MONTHS),
           ("day of week", 0, 6, _DAYS))
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
_SEARCH_DAYS = 366 * 5       # a schedule that never fires within this (Feb 30th) is refused


class CronError(ValueError):
    """A schedule this module cannot read; the message names the schedule and the field."""


@dataclass(frozen=True)
class Schedule:
    text: str
    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    any_day: bool = True          # day of month is * (or ?)
    any_weekday: bool = True      # day of week is * (or ?)
    every: _dt.timedelta | None = None

    def next_after(self, after: _dt.datetime) -> _dt.datetime:
        """The first time strictly after ``after`` the schedule fires (whole minutes; @every: whole
        seconds after ``after``)."""
        if self.every is not None:
            return after.replace(microsecond=0) + self.every
        start = after.replace(second=0, microsecond=0) + _dt.timedelta(minutes=1)
        day = start.replace(hour=0, minute=0)
        for offset in range(_SEARCH_DAYS):
            candidate = day + _dt.timedelta(days=offset)
            if candidate.month not in self.months or not self._day_matches(candidate):
                continue
            for hour in sorted(self.hours):
                for minute in sorted(self.minutes):
                    fire = candidate.replace(hour=hour, minute=minute)
                    if fire >= start:
                        return fire
        raise CronError(f"schedule {self.text!r} never fires")

    def _day_matches(self, day: _dt.datetime) -> bool:
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week


def parse(text: str) -> Schedule:
    """The schedule of a cron expression (see the module's docstring for what is read)."""
    spec = text.strip()
    if spec.startswith("@every"):
        return Schedule(spec, every=_duration(spec, spec[len("@every"):].strip()))
    fields = DESCRIPTORS.get(spec, spec).split()
    if len(fields) != 5:
        raise CronError(f"schedule {text!r}: expected five fields (minute hour day-of-month month day-of-week) "
                        f"or one of {', '.join(DESCRIPTORS)}, @every <duration>")
    values = [_field(text, raw, *meta) for raw, meta in zip(fields, _FIELDS)]
    weekdays = frozenset(d % 7 for d in values[4])
    return Schedule(spec, values[0], values[1], values[2], values[3], weekdays,
                    any_day=fields[2] in ("*", "?"), any_weekday=fields[4] in ("*", "?"))


def _duration(text: str, raw: str) -> _dt.timedelta:
    parts = _DURATION.findall(raw)
    if not parts or "".join(n + u for n, u in parts) != raw:
        raise CronError(f"schedule {text!r}: @every needs a duration such as 30s, 5m or 1h30m")
    seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    return _dt.timedelta(seconds=max(int(seconds), 1))         # whole seconds, at least one, as robfig/cron


def _field(text: str, raw: str, name: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    found: set[int] = set()
    top = 7 if name == "day of week" else high          # 7 is Sunday too
    for part in raw.split(","):
        body, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if body in ("*", "?"):
                first, last = low, high
            elif "-" in body:
                first, last = (_value(v, names) for v in body.split("-", 1))
            else:
                first = _value(body, names)
                last = high if step_text else first
        except ValueError:
            raise CronError(f"schedule {text!r}: {name} field {raw!r} is not a number, range or list") from None
        if step < 1 or not (low <= first <= top and low <= last <= top and first <= last):
            raise CronError(f"schedule {text!r}: {name} field {raw!r} is outside {low}-{top}")
        found.update(range(first, last + 1, step))
    return frozenset(found)


def _value(text: str, names: dict[str, int]) -> int:
    return names[text.upper()] if text.upper() in names else int(text)
