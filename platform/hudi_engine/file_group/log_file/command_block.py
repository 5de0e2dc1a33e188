"""Command blocks (HoodieCommandBlock): an empty content and a header that says what to do. The
only command is a rollback, which Hudi appends to a log file when rolling back a delta commit
whose blocks it cannot delete (table version 6): readers then drop that instant's earlier blocks.
"""
from __future__ import annotations

from .block import LogBlock
from .format import BlockType, CommandType, HeaderKey


def rollback_command_block(target_instant: str, instant: str) -> LogBlock:
    """The block the rollback at ``instant`` appends to cancel the blocks of ``target_instant``."""
    return LogBlock(BlockType.COMMAND_BLOCK, {
        HeaderKey.INSTANT_TIME: instant,
        HeaderKey.TARGET_INSTANT_TIME: target_instant,
        HeaderKey.COMMAND_BLOCK_TYPE: str(int(CommandType.ROLLBACK_BLOCK)),
    })


def command_block_target(block: LogBlock) -> str:
    """The instant whose blocks a rollback command block cancels."""
    if block.block_type != BlockType.COMMAND_BLOCK or block.command_type != CommandType.ROLLBACK_BLOCK:
        raise ValueError(f"not a rollback command block: {block.block_type.name}")
    return block.target_instant_time
