"""Hudi's key generators, split by what each part formats; import them from here."""
from .date_patterns import JavaDatePattern
from .generators import KeyGenerator, key_generator_from_config, partition_field_names
from .paths import DEFAULT_PARTITION_PATH, escape_path_name, partition_values_from_path
from .timestamps import TimestampSpec
from .values import java_strings

__all__ = [
    "DEFAULT_PARTITION_PATH",
    "JavaDatePattern",
    "KeyGenerator",
    "TimestampSpec",
    "escape_path_name",
    "java_strings",
    "key_generator_from_config",
    "partition_field_names",
    "partition_values_from_path",
]
