"""The Scrapy front end: the pipeline and everything that imports Scrapy or Twisted."""
