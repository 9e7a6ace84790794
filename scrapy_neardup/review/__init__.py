"""What a person reads to review verdicts: the review page, shared passages marked, and the
explanation of one pair. No Scrapy."""
