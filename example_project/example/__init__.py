"""Example Scrapy project: crawl a local news world and keep each story once."""
