"""Spiders of the distributed crawl (settings_distributed.py); they need scrapy-redis."""
