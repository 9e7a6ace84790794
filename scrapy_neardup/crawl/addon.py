"""One-line activation: ``ADDONS = {"scrapy_neardup.Addon": 0}``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.logformatter import LogFormatter
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from .compat import DROP_LOG_LEVEL_HONOURED
from .workerstart import EXTENSION_ORDER, EXTENSION_PATH

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.http import Response
    from twisted.python.failure import Failure

PIPELINE_PATH = "scrapy_neardup.NearDupPipeline"  # the one documented path
# Before typical storage pipelines (300 and up in Scrapy's examples), after cleaning ones.
PIPELINE_PRIORITY = 200
_DEFAULT_LOG_FORMATTER = "scrapy.logformatter.LogFormatter"

__all__ = ["PIPELINE_PRIORITY", "Addon", "NearDupLogFormatter"]


class NearDupLogFormatter(LogFormatter):
    """Logs a drop at the level its exception asks for (``DropItem.log_level``).

    Scrapy >= 2.13 does this itself; on older versions it logs every drop at WARNING.
    """

    def dropped(self, item: Any, exception: BaseException, response: Response | Failure | None, spider: Spider) -> Any:
        result = super().dropped(item, exception, response, spider)
        level = getattr(exception, "log_level", None)
        if result is not None and level is not None:
            result["level"] = logging.getLevelName(level) if isinstance(level, str) else level
        return result


class Addon:
    """Adds :class:`~scrapy_neardup.NearDupPipeline` to ``ITEM_PIPELINES`` at priority 200,
    unless it is there already (then the user's priority stays), and
    :class:`~.workerstart.StartWorkers` first in ``EXTENSIONS``, which starts the worker
    processes before Scrapy builds the rest of its start (the first item comes sooner)."""

    def update_settings(self, settings: BaseSettings) -> None:
        from .pipeline import NearDupPipeline

        present = False
        for component in list(settings["ITEM_PIPELINES"] or {}):
            try:
                loaded = load_object(component) if isinstance(component, str) else component
            except (ImportError, NameError, ValueError, AttributeError):
                continue
            if isinstance(loaded, type) and issubclass(loaded, NearDupPipeline):
                present = True
        if not present:
            _add_component(settings, "ITEM_PIPELINES", PIPELINE_PATH, PIPELINE_PRIORITY)
        if EXTENSION_PATH not in (settings["EXTENSIONS"] or {}):  # the user's None or order stays
            _add_component(settings, "EXTENSIONS", EXTENSION_PATH, EXTENSION_ORDER)
        if not DROP_LOG_LEVEL_HONOURED and settings.get("LOG_FORMATTER") == _DEFAULT_LOG_FORMATTER:
            settings.set("LOG_FORMATTER", f"{__name__}.NearDupLogFormatter", "addon")


def _add_component(settings: BaseSettings, name: str, path: str, order: int) -> None:
    """``path`` at ``order`` in the component dictionary setting ``name``, at the add-on's priority."""
    components = settings[name]
    if isinstance(components, BaseSettings):
        components.set(path, order, "addon")
    else:
        settings.set(name, {**(components or {}), path: order}, "addon")
