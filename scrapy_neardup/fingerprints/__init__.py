"""Text to fingerprint: extraction, folding, sentences, nshash keys, SimHash and sketches.

The lowest floor: no Scrapy, no store. Both front ends (the crawl and the CLI) and the stores
build on it.
"""
