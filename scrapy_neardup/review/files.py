"""The files of a run: no file named twice, and a page never written over a file neardup did not write.

A run reads and writes several files: its input and output, review pages, a LevelDB store's
folder, a crawl's feeds. Two of them naming one file would have the report overwrite the input
it reads, or a feed hold a page instead of its items; so they are compared before anything is
read or written (:func:`check_distinct`).

A review page replaces a file only when neardup wrote it (its head says so, :func:`is_own_page`)
or when the file is empty. Its further pages (``PAGE-2.html``, ...) are named by the page, not by
the user: the first page lists them (its manifest, :func:`listed_pages`), and a later run
replaces or removes a file only when that list names it and the file is a page neardup wrote.
A name held by anything else is left alone, and the page takes the next free name.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from collections.abc import Iterable, Sequence

# The head every page begins with: what tells a page neardup wrote from any other file.
PREAMBLE = '<!DOCTYPE html>\n<html lang="zh">\n<head>\n<meta charset="utf-8">\n'
GENERATOR = '<meta name="generator" content="scrapy-neardup">\n'
_EARLIER = "<title>neardup "  # pages of versions before the generator line began with their title
_MANIFEST = re.compile(r'<meta name="neardup-pages" content="([^"]*)">')
_HEAD_BYTES = 1 << 20  # a manifest of thousands of pages fits


def manifest(paths: Iterable[str]) -> str:
    """The head line listing a run's further pages (file names in the first page's folder)."""
    names = "/".join(html.escape(os.path.basename(path), quote=True) for path in paths)
    return f'<meta name="neardup-pages" content="{names}">\n' if names else ""


def _head(path: str, size: int = 4096) -> str:
    try:
        with open(path, "rb") as stream:
            return stream.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def is_own_page(path: str) -> bool:
    """``path`` is a regular file that neardup wrote as a page (a review or explain page)."""
    if not os.path.isfile(path):
        return False
    head = _head(path, len(PREAMBLE) + len(GENERATOR))
    return head.startswith(PREAMBLE) and head[len(PREAMBLE) :].startswith((GENERATOR, _EARLIER))


def may_replace(path: str) -> bool:
    """A page may be written at ``path``: nothing is there, an empty file, or a page neardup wrote."""
    if not os.path.lexists(path):
        return True
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    return os.path.getsize(path) == 0 or is_own_page(path)


def listed_pages(path: str) -> list[str]:
    """The further pages the page at ``path`` lists as its own (paths in its folder); none
    when it is not a page neardup wrote."""
    if not is_own_page(path):
        return []
    found = _MANIFEST.search(_head(path, _HEAD_BYTES).split("<title>", 1)[0])
    if not found or not found.group(1):
        return []
    folder = os.path.dirname(os.path.abspath(path))
    names = html.unescape(found.group(1)).split("/")
    return [os.path.join(folder, name) for name in names if name not in ("", ".", "..")]


def same_file(one: str, other: str) -> bool:
    """Both paths name one file: the same path once links are resolved, or the same file."""
    if os.path.realpath(one) == os.path.realpath(other):
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it, once links are resolved."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_distinct(files: Sequence[tuple[str, str | None]], folders: Sequence[tuple[str, str | None]] = ()) -> None:
    """Refuse two of ``files`` naming one file, or one inside a folder of ``folders`` (a LevelDB
    store's): ValueError naming both. Each is (what names it, such as "the input", its path);
    ``-`` (stdin, stdout) and unset ones are left out."""
    named = [(what, path) for what, path in files if path and path != "-"]
    for index, (what, path) in enumerate(named):
        for other, other_path in named[:index]:
            if same_file(path, other_path):
                also = f" ({other_path})" if other_path != path else ""
                raise ValueError(f"{what} {path} is {other} file{also}: name another file")
        for other, folder in folders:
            if folder and within(path, folder):
                raise ValueError(f"{what} {path} is inside {other} ({folder}): name a file outside it")


def check_page(path: str, what: str) -> None:
    """A page can be written at ``path``: a file in an existing folder this process may write
    in, not a folder, device or file that neardup did not write. ValueError saying why not."""
    if os.path.isdir(path):
        raise ValueError(f"{what} {path} is a folder: name a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"the folder of {what} {path} does not exist")
    try:  # permissions, a read-only mount, a full disk: the way to know is to try
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".neardup-report-", suffix=".partial")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    if not may_replace(path):
        raise ValueError(
            f"{what} {path} exists and is not a page neardup wrote: it is left as it is; "
            "name another file, or remove it first"
        )
