"""Settings of the example project.

The two lines that matter for scrapy-neardup are the ITEM_PIPELINES entry (the near-duplicate
pipeline runs before the storage pipeline, so reprints never reach storage) and, if you want
to change them, the NEARDUP_* defaults below.
"""

BOT_NAME = "example"
SPIDER_MODULES = ["example.spiders"]
NEWSPIDER_MODULE = "example.spiders"

# Where the news world runs (`python -m scrapy_neardup.newsworld --port 8000`); `-a base_url=...` overrides it.
NEWS_BASE_URL = "http://127.0.0.1:8000/"

ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"  # readable Chinese in the output, not \uXXXX escapes
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"  # quiets Scrapy 2.11-2.12; ignored by newer versions

ITEM_PIPELINES = {
    "scrapy_neardup.NearDupPipeline": 300,  # drop (or tag) reprints ...
    "example.pipelines.ArticleStorePipeline": 800,  # ... before they reach storage
}

# scrapy-neardup. These are the defaults, written out to show what there is to change.
NEARDUP_ENABLED = True
# NEARDUP_STORE = "leveldb:///var/lib/crawl/neardup"  # unset: a LevelDB in .scrapy/neardup
NEARDUP_NAMESPACE = "default"  # spiders sharing a namespace catch each other's reprints
NEARDUP_ACTION = "drop"  # or "tag": keep the item, set duplicate_of / similar_id
NEARDUP_TEXT_FIELD = "text"  # used when the item has it; these items don't ...
NEARDUP_HTML_FIELD = "html"  # ... so the page HTML goes through readability-lxml
NEARDUP_KEY_FIELD = "url"  # what `duplicate_of` points at
# Not the default ("first"): keep the complete article when a portal posted an excerpt of it
# first. The complete copy then arrives with `replaces` (the excerpt's url), and the storage
# pipeline (example.pipelines) deletes the excerpt's row.
NEARDUP_PREFER = "longest"

# The kept articles (url and title; the HTML is in output/news.sqlite3).
FEEDS = {
    "output/articles.jsonl": {
        "format": "jsonlines",
        "encoding": "utf-8",
        "overwrite": True,
        "fields": ["url", "title", "replaces"],
    },
}
ARTICLE_STORE_DIR = "output"
