"""The editors' page at ``/``: one HTML file with its style and script inside (no CDN, no build
step), read from the package. Its script calls the JSON API of the same service."""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources


class Page:
    """The page's bytes and its Content-Security-Policy: only its own script (by hash) runs, and
    it talks only to this service."""

    def __init__(self, auth: bool):
        source = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
        source = source.replace('data-auth="AUTH"', f'data-auth="{int(auth)}"')
        scripts = re.findall(r"<script>(.*?)</script>", source, flags=re.DOTALL)
        hashes = " ".join(
            "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"
            for script in scripts
        )
        self.body = source.encode("utf-8")
        self.policy = (
            f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; connect-src 'self'; "
            "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
