"""Settings of the distributed crawl: several ``scrapy crawl news_distributed`` processes,
on one machine or many, share scrapy-redis's request queue and one Redis neardup store.

Used by ``run_distributed.py`` and by ``SCRAPY_PROJECT=distributed scrapy crawl
news_distributed`` (``scrapy.cfg`` names this module). Everything else is the example's.
"""

from example.settings import *  # noqa: F403  (the example's pipelines, feeds and NEARDUP_* defaults)

SPIDER_MODULES = ["example.distributed"]
NEWSPIDER_MODULE = "example.distributed"

# One Redis for both jobs: the shared request queue (scrapy-redis) and the shared store (scrapy-neardup).
REDIS_URL = "redis://127.0.0.1:6379/0"
NEARDUP_STORE = REDIS_URL
NEARDUP_NAMESPACE = "distributed"
# First seen wins: each process stores its own rows, so a copy replacing another process's row
# (NEARDUP_PREFER = "longest", the example's) could not take it out.
NEARDUP_PREFER = "first"

# scrapy-redis: requests and the seen-requests filter live in Redis, so every process takes
# pages from one queue and no page is fetched twice.
SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
# Keep the queue and the filter when a process closes: with False, the first process to finish
# deletes them under the others' feet (pages lost or fetched again). run_distributed.py clears
# them before a crawl instead.
SCHEDULER_PERSIST = True
MAX_IDLE_TIME_BEFORE_CLOSE = 5  # seconds a process waits without work before it closes

# Each process writes its own feed and table (run_distributed.py gives -O per process).
FEEDS = {}
EXTENSIONS = {"example.extensions.StatsFile": 500}  # STATS_FILE: where a process leaves its stats
