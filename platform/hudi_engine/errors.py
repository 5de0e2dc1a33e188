"""Errors users can act on: each names what was wrong, where, and what to do."""


class HoodieError(Exception):
    """Base of every error the engine raises on purpose."""


class HoodieConfigError(HoodieError, ValueError):
    """An option is missing, unknown or has a bad value."""


class HoodieValidationError(HoodieError, ValueError):
    """Input records cannot be written (null key, missing ordering field, incompatible schema)."""


class HoodieTableNotFoundError(HoodieError, FileNotFoundError):
    """No Hudi table (no .hoodie/hoodie.properties) at the given path."""


class HoodieTimelineError(HoodieError):
    """The timeline cannot answer: unknown instant, instant outside the active timeline, ..."""


class HoodieWriteConflictError(HoodieError):
    """Optimistic concurrency control: another writer changed a file group this write changed."""


class HoodieLockError(HoodieError):
    """The table's lock could not be acquired (or was lost) in time."""


class HoodieLockLostError(HoodieLockError):
    """The table's lock was lost while held (expired, session ended), so what was decided under it
    was not published: the action was rolled back and can be run again."""


class HoodieClusteringUpdateError(HoodieError):
    """A write updates file groups that a pending clustering is rewriting: ``clusterings`` are those
    instants of the table at ``base_path``; once they complete, the same write can be retried."""

    def __init__(self, message: str, base_path: str = "", clusterings: tuple[str, ...] = ()):
        super().__init__(message)
        self.base_path, self.clusterings = base_path, clusterings


class HoodieCorruptFileError(HoodieError, ValueError):
    """A data file (an HFile, ...) is truncated or not in its format; the message names the file
    and the offset where reading failed."""


class HoodieStorageError(HoodieError, OSError):
    """Storage refused or could not be reached: the message names the URI and what to check
    (endpoint, bucket, credentials)."""
