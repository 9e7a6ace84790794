"""``neardup serve``: the entry-time check as an HTTP service, a front end beside the crawl and
the command line, on the same engine, stores and marking.

``entries`` (what a request asks of the engine and the store), ``http`` (the twisted.web
site: routes, JSON errors, token, requests in flight), ``page`` (the editors' page) and
``service`` (listening, a clean stop). The ``neardup serve`` command (``cli/serve.py``) starts it.
"""
