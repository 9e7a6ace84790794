"""``neardup serve``: the entry-time check as an HTTP service, a front end beside the crawl and
the command line, on the same engine, stores and marking.

``entries`` (what a request asks of the engine and the store), ``http`` (the HTTP front end,
a Twisted protocol reading requests with httptools: routes, JSON errors, token, requests in
flight), ``fingerprinting`` (the worker processes that fingerprint checked texts), ``page``
(the editors' page) and ``service`` (listening, a clean stop). The ``neardup serve`` command (``cli/serve.py``) starts it.
"""
