"""``scrapy_neardup.pipelines.NearDupPipeline``, the path Scrapy users expect."""

from .pipeline import NearDupPipeline, NearDuplicateItem  # noqa: F401
