"""Pages rendered by headless Chromium, as a person sees them.

Skipped when chromium is missing, unless ``NEARDUP_REQUIRE_CHROMIUM=1`` (CI sets it).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

REQUIRE_ENV = "NEARDUP_REQUIRE_CHROMIUM"
WIDTH, HEIGHT = 1200, 1600


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "chromium is not installed (apt-get install chromium)"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message}, and {REQUIRE_ENV}=1 requires it")
    pytest.skip(message)


def screenshot(page, tmp_path):
    """The page rendered at 1200x1600 by headless Chromium, as a Pillow image (RGB)."""
    from PIL import Image

    shot = tmp_path / "page.png"
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={WIDTH},{HEIGHT}",
        # The screenshot waits for the page to load and draw: without these, a busy machine
        # could have it taken before the first paint (a blank page).
        "--run-all-compositor-stages-before-draw",
        "--virtual-time-budget=10000",
        f"--screenshot={shot}",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert shot.exists(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    return Image.open(shot).convert("RGB")


def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
