"""A tiny storage pipeline: what a real project would have after NearDupPipeline."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from itemadapter import ItemAdapter


class ArticleStorePipeline:
    """Stores each article that got this far in ``<ARTICLE_STORE_DIR>/<spider>.sqlite3``.

    Reprints dropped by NearDupPipeline never arrive here; tagged ones arrive with their
    ``duplicate_of`` and ``similar_id``, which are stored alongside. A copy that replaced the
    story's stored copy (NEARDUP_PREFER: the complete article after a portal's excerpt)
    arrives with ``replaces``, the url of that copy: its row goes, the new copy takes its place
    (the recipe of docs/items.md, "Storage that honours replaces").
    """

    def __init__(self, crawler: Any):
        self.crawler = crawler
        self.directory = crawler.settings.get("ARTICLE_STORE_DIR", "output")
        self.db: sqlite3.Connection | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> ArticleStorePipeline:
        return cls(crawler)

    def open_spider(self, spider: Any = None) -> None:
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, f"{self.crawler.spider.name}.sqlite3")
        if os.path.exists(path):
            os.remove(path)  # one crawl, one database
        self.db = sqlite3.connect(path)
        self.db.execute(
            "CREATE TABLE articles (url TEXT PRIMARY KEY, title TEXT, html TEXT, duplicate_of TEXT, similar_id INTEGER)"
        )

    def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        assert self.db is not None
        with self.db:  # one transaction: the replaced row goes and the new one comes, or neither
            if adapter.get("replaces"):
                self.db.execute("DELETE FROM articles WHERE url = ?", (adapter["replaces"],))
            self.db.execute(
                "INSERT OR REPLACE INTO articles VALUES (?, ?, ?, ?, ?)",
                (
                    adapter.get("url"),
                    adapter.get("title"),
                    adapter.get("html"),
                    adapter.get("duplicate_of"),
                    adapter.get("similar_id"),
                ),
            )
        return item

    def close_spider(self, spider: Any = None) -> None:
        if self.db is not None:
            self.db.commit()
            self.db.close()
            self.db = None
