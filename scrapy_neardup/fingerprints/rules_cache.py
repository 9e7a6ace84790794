"""A tokenizer's rules (:func:`.text.token_rules`) without loading its dictionary.

Naming the rules means cutting the probe text, and so loading the tokenizer's dictionary
(a fifth of a second), in every process that resolves a recipe: ``neardup info`` and
``list``, and crawls that stop before their first page. The rules depend only on the
tokenizer's files and the probe, so they are cached like the prepared tables
(:mod:`.tables`), keyed by the tokenizer's name and version, the size, time and content hash
of the files that decide its cut (its dictionary, code and HMM model; rjieba compiles its
dictionary into its extension module), and the code that names the rules. Any change to
those gives another key, and the tokenizer is loaded to name its rules again.
"""

from __future__ import annotations

import os

import numpy as np

from . import text
from .tables import cached_arrays, code_signature, file_signature, package_version
from .text import package_dir

# Folders of each tokenizer's package whose files decide its cut ("" is the package itself).
_CUT_FOLDERS = {"jieba": ("", "finalseg"), "rjieba": ("",)}


def tokenizer_rules(name: str) -> str:
    """The rules of the tokenizer called ``name``, as loading it would name them."""
    loaded = text.loaded_tokenizer(name)
    if loaded is not None:
        return loaded.rules
    key = rules_key(name)
    if key is None:  # unknown or not installed: loading it says so
        return text.get_tokenizer(name).rules
    arrays = cached_arrays(f"token-rules-{name}", key, lambda: {"rules": np.array(text.get_tokenizer(name).rules)})
    return str(arrays["rules"])


def rules_key(name: str) -> dict | None:
    """Everything the rules of tokenizer ``name`` come from; None when it is not installed."""
    package = package_dir(name) if name in _CUT_FOLDERS else ""
    if not package:
        return None
    files = {}
    for folder in _CUT_FOLDERS[name]:
        directory = os.path.join(package, folder)
        for entry in sorted(os.listdir(directory)):
            path = os.path.join(directory, entry)
            if os.path.isfile(path):
                files[os.path.join(folder, entry)] = file_signature(path)
    return {
        "tokenizer": name,
        "version": package_version(package, name),
        "files": files,
        "code": code_signature(text.__file__, __file__),
    }
