"""The CLI's view of the engine's logging: messages of any engine module on stderr as ``[hudi]``."""
import logging

from hudi_engine import logs


def test_show_progress_prints_engine_messages_on_the_current_stderr(capsys):
    logger = logging.getLogger(logs.ENGINE_LOGGER)
    before = (logger.level, list(logger.handlers))
    try:
        logs.show_progress()
        logs.show_progress()        # once: a second call adds no second handler
        logging.getLogger("hudi_engine.services.clean").info("clean 1 completed: 3 files deleted")
        logging.getLogger("hudi_engine.write.writer").debug("not shown at INFO")
        logging.getLogger("someone.else").info("not the engine's")
        assert capsys.readouterr().err == "[hudi] clean 1 completed: 3 files deleted\n"
    finally:
        logger.setLevel(before[0])
        logger.handlers[:] = before[1]
