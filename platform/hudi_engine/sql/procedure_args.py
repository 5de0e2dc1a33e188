"""What a CALL procedure is (its parameters and output columns) and how a call's arguments bind
to its parameters, as Hudi's ``ProcedureParameter``/``ProcedureArgs`` do: positional arguments in
parameter order, named ones by name, defaults for the rest; each value checked against its
parameter's type. Pure: no Spark session here, so errors come back before any work starts."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pyspark.sql.types import BooleanType, DataType, DoubleType, IntegerType, LongType, StringType, StructField, \
    StructType

from ..errors import HoodieConfigError

# Hudi's parameter and column types, by the names its ``help`` procedure prints.
SPARK_TYPES: dict[str, DataType] = {"string": StringType(), "integer": IntegerType(), "long": LongType(),
                                    "boolean": BooleanType(), "double": DoubleType()}
_INT_RANGE = {"integer": 2 ** 31, "long": 2 ** 63}


@dataclass(frozen=True)
class Param:
    name: str
    type: str                     # a key of SPARK_TYPES
    default: Any = None           # None: no value unless given
    required: bool = False

    @property
    def default_text(self) -> str:
        """The default as Hudi's ``help`` prints it (Scala's spelling)."""
        if self.default is None:
            return "None"
        return str(self.default).lower() if isinstance(self.default, bool) else repr(self.default)

    def describe(self) -> str:
        if self.required:
            return f"{self.name} ({self.type}, required)"
        return f"{self.name} ({self.type}" + (f", default {self.default_text})" if self.default is not None else ")")


def required(name: str, type_: str) -> Param:
    return Param(name, type_, required=True)


def optional(name: str, type_: str, default: Any = None) -> Param:
    return Param(name, type_, default)


def columns(spec: str) -> StructType:
    """An output schema from ``"name type, name type"`` (Hudi's procedures make every column nullable)."""
    fields = []
    for item in spec.split(","):
        name, type_ = item.split()
        fields.append(StructField(name, SPARK_TYPES[type_], True))
    return StructType(fields)


@dataclass(frozen=True)
class Procedure:
    """One row of the registry: everything a call, its errors and ``help`` need to know."""
    name: str
    params: tuple[Param, ...]
    output: StructType
    run: Callable[..., list[tuple]]   # (Invocation) -> rows in ``output``'s column order
    doc: str

    def signature(self) -> str:
        return ", ".join(p.describe() for p in self.params) or "no arguments"


@dataclass(frozen=True)
class Args:
    """A call's values by parameter name (defaults filled in), and which ones the caller gave."""
    values: Mapping[str, Any]
    given: frozenset[str]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


def bind(proc: Procedure, named: Mapping[str, Any], positional: tuple = ()) -> Args:
    """The arguments of ``CALL proc(...)`` by parameter name; a NULL counts as not given."""
    if len(positional) > len(proc.params):
        raise HoodieConfigError(f"CALL {proc.name} takes at most {len(proc.params)} arguments, got "
                                f"{len(positional)}; its arguments are: {proc.signature()}")
    by_name = {p.name: p for p in proc.params}
    raw = dict(zip((p.name for p in proc.params), positional))
    for name, value in named.items():
        if name not in by_name:
            raise HoodieConfigError(f"CALL {proc.name}: unknown argument {name!r}; "
                                    f"its arguments are: {proc.signature()}")
        if name in raw:
            raise HoodieConfigError(f"CALL {proc.name}: argument {name!r} is given twice (by position and by name)")
        raw[name] = value
    given = {name for name, value in raw.items() if value is not None}
    values = {}
    for p in proc.params:
        if p.name not in given:
            if p.required:
                raise HoodieConfigError(f"CALL {proc.name}: missing required argument {p.name!r}; "
                                        f"its arguments are: {proc.signature()}")
            values[p.name] = p.default
        else:
            values[p.name] = _convert(proc, p, raw[p.name])
    return Args(values, frozenset(given))


def _convert(proc: Procedure, p: Param, value: Any) -> Any:
    """``value`` as ``p``'s type, the way Spark casts a literal (an unquoted instant time is a
    string; '10' is an integer), or an error naming the argument."""
    if p.type == "string":
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    elif p.type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
    elif p.type in _INT_RANGE:
        number = value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            number = int(value)
        if isinstance(number, int) and not isinstance(number, bool) and \
                -_INT_RANGE[p.type] <= number < _INT_RANGE[p.type]:
            return number
    raise HoodieConfigError(f"CALL {proc.name}: argument {p.name!r} must be {p.type}, got {value!r}")
