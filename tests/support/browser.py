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


SHOTS = 4  # screenshots taken at most until two in a row agree


def screenshot(page, tmp_path):
    """The page rendered at 1200x1600 by headless Chromium, as a Pillow image (RGB), once two
    screenshots in a row agree: on a loaded machine Chromium has taken one before every part
    of the page was drawn (a column's text missing), and what a person sees is the page drawn
    whole. A page that draws wrong draws wrong every time, so this hides no fault of its own."""
    from PIL import Image

    last = None
    for _ in range(SHOTS):
        image = Image.open(_shot(page, tmp_path)).convert("RGB")
        if last is not None and image.tobytes() == last.tobytes():
            break
        last = image
    return image


def _shot(page, tmp_path):
    """One screenshot of ``page`` by headless Chromium: the PNG's path."""
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
    shot.unlink(missing_ok=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert shot.exists(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    return shot


def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
