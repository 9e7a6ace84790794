"""Code the tests share: corpora, the local news site, Redis servers, the serve process.

pytest puts tests/ on sys.path (``pythonpath`` in pyproject.toml), so test modules import
``support.<module>``.
"""
