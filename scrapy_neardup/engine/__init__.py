"""Verdicts: the detector that checks fingerprints against a store, its thresholds, and the
policies that choose which copy of a story to keep. No Scrapy."""
