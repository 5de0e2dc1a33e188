"""Why a catalog sync stopped, in words an operator can act on."""
from ..errors import HoodieError


class HiveSyncError(HoodieError):
    """The metastore refused a change, or the table cannot be described to Hive as asked."""


class MetastoreUnavailableError(HiveSyncError):
    """No metastore answered at any configured URI, even after retries."""


class TableOwnershipError(HiveSyncError):
    """The metastore table at the target name is not this Hudi table's to change."""
