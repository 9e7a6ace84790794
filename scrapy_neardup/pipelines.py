"""An alias kept working: ``scrapy_neardup.pipelines.NearDupPipeline`` is the same class as
``scrapy_neardup.NearDupPipeline``, the documented path."""

from .pipeline import NearDupPipeline, NearDuplicateItem  # noqa: F401
