"""CPU of the C kernel's functions on a check's path a news text, and their ratio to another build.

The texts are speed.py's batch (People's Daily articles joined to news length, each followed by
a reprint). Each function gets what ``Fingerprinter._fingerprint`` hands it: ``fold`` the text,
``notice_spans`` its folded code points, ``parts`` and ``story_words`` those stripped of
notices, ``weigh`` the SimHash text's lines as the tokenizer's cache keeps them. Each kernel
function is timed over the whole batch (process CPU), ``--passes`` times; printed: the best
pass in microseconds a text. With ``--base`` (another tree with its kernel built in place, or
that kernel's .so) the two builds alternate in one process, pass by pass (A B A B ...), so that
both see the same load, and the ratio new/base of their best passes is printed, with whether
both gave the same outputs, byte for byte, on every text. Each build reads the pair table as
its own tree lays it out (a child process of the base tree builds the base's).

    python benchmarks/kernel_parts.py --base /tmp/main-tree --passes 30
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import corpus
import numpy as np
from speed import make_batch

from scrapy_neardup.fingerprints import fingerprint as fingerprint_module
from scrapy_neardup.fingerprints.fingerprint import Fingerprinter
from scrapy_neardup.fingerprints.kernel import kernel
from scrapy_neardup.fingerprints.notices import CREDIT_LINE_CHARS, _kernel_words, strip_notices
from scrapy_neardup.fingerprints.segment import SEPARATOR
from scrapy_neardup.fingerprints.storywords import BINS, FIGURES, TF_FACTORS, WORDS, pair_table
from scrapy_neardup.fingerprints.text import MIN_SENTENCE_CHARS, fold_codes, text_tables

FUNCTIONS = ("fold", "notice_spans", "parts", "story_words", "weigh")


def load_kernel(path: Path) -> tuple[ModuleType, Path]:
    """The kernel built at ``path`` (its .so, or a source tree with the kernel built in place)
    and its tree."""
    if path.is_dir():
        folder = path / "scrapy_neardup" / "fingerprints"
        found = [folder / f"_kernel{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
        found = [candidate for candidate in found if candidate.exists()]
        if not found:
            sys.exit(f"--base {path}: no built kernel in {folder} (python setup.py build_ext --inplace)")
        path = found[0]
    tree = path.resolve().parents[2]
    spec = importlib.util.spec_from_file_location("_kernel", path)
    if spec is None or spec.loader is None:
        sys.exit(f"--base {path}: not an extension module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, tree


_TREE_TABLE = """
import sys, numpy as np
import scrapy_neardup.fingerprints.storywords as storywords
if not storywords.__file__.startswith(sys.argv[1]):
    sys.exit(f"imported {storywords.__file__}, not the tree's (an editable install of another tree first on the path)")
np.save(sys.argv[2], storywords.pair_table().slot_bytes)
"""


def tree_pair_table(tree: Path) -> np.ndarray:
    """The pair table's slots as ``tree`` lays them out for its kernel, built by that tree."""
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "slots.npy"
        env = dict(os.environ, PYTHONPATH=str(tree))
        command = [sys.executable, "-c", _TREE_TABLE, str(tree), str(saved)]
        done = subprocess.run(command, env=env, cwd=tree, check=False)
        if done.returncode:
            sys.exit(f"--base {tree}: its pair table could not be built")
        return np.load(saved)


def parts_args(fingerprinter: Fingerprinter, codes: list[np.ndarray]) -> list[tuple]:
    """The arguments of ``kernel.parts`` for each text, as ``Fingerprinter`` gives them."""
    recipe, tables = fingerprinter.recipe, text_tables()
    fixed = (
        MIN_SENTENCE_CHARS,
        recipe.simhash_sentences,
        2 * recipe.nshash_n,
        recipe.sketch_size,
        recipe.shingle_width,
        fingerprinter.sketch_keys,
    )
    return [(folded, tables.ends, tables.content, *fixed) for folded in codes]


def story_args(contents: list[bytes], slot_bytes: np.ndarray) -> list[tuple]:
    """The arguments of ``kernel.story_words`` for each text's content characters."""
    function = pair_table().function
    return [
        (np.frombuffer(content, dtype=np.uint32), slot_bytes, function, TF_FACTORS, WORDS, BINS, FIGURES)
        for content in contents
    ]


def weigh_args(fingerprinter: Fingerprinter, simhash_texts: list[str]) -> list[tuple]:
    """The arguments of ``kernel.weigh`` for each SimHash text, as ``simhash_of_lines`` gives them."""
    features = fingerprinter.features
    separator = ord(SEPARATOR)
    fixed = (features._table_bytes, features.rare_idf, fingerprint_module.TF_FACTORS, fingerprint_module.WEIGHT_SCALE)
    return [(fingerprinter.cut_lines(text), *fixed, separator) for text in simhash_texts]


def timed(function: Any, calls: list[tuple]) -> float:
    """Process CPU seconds of ``function`` over every call, a call."""
    start = time.process_time()
    for args in calls:
        function(*args)
    return (time.process_time() - start) / len(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another tree with its kernel built in place, or a kernel .so")
    parser.add_argument("--passes", type=int, default=20, help="timed passes over the batch, each build")
    parser.add_argument("--texts", type=int, default=2000, help="texts of the batch timed")
    corpus.add_data_option(parser)
    args = parser.parse_args()
    if kernel is None:
        sys.exit("the C kernel of this tree is not built")

    articles = corpus.load_articles(args.data)
    texts = make_batch(corpus.news_length_docs(articles[: len(articles) // 2])).texts[: args.texts]
    folded = [fold_codes(text, True) for text in texts]
    codes = [strip_notices(one, True) for one in folded]
    fingerprinter = Fingerprinter()
    parts_calls = parts_args(fingerprinter, codes)
    parts = [kernel.parts(*call) for call in parts_calls]
    contents = [found[7] for found in parts]
    chars = sum(len(content) for content in contents) // 4 / len(contents)
    print(
        f"{len(texts)} texts, {sum(len(c) for c in codes) / len(codes):.0f} folded, {chars:.0f} content characters a text"
    )
    fold_table, words = text_tables().fold, _kernel_words()
    shared = {
        "fold": [(text, fold_table) for text in texts],
        "notice_spans": [(one, *words, CREDIT_LINE_CHARS) for one in folded],
        "parts": parts_calls,
        "weigh": weigh_args(fingerprinter, [found[0] for found in parts]),
    }
    calls = {"this": dict(shared, story_words=story_args(contents, pair_table().slot_bytes))}

    builds = {"this": kernel}
    if args.base is not None:
        builds["base"], tree = load_kernel(args.base)
        calls["base"] = dict(shared, story_words=story_args(contents, tree_pair_table(tree)))
        same = {
            function: all(
                getattr(kernel, function)(*this) == getattr(builds["base"], function)(*other)
                for this, other in zip(calls["this"][function], calls["base"][function])
            )
            for function in FUNCTIONS
        }
        print("same outputs as the base on every text:", ", ".join(f"{name} {value}" for name, value in same.items()))
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.passes):
        for name, module in builds.items():
            for function in FUNCTIONS:
                cost = timed(getattr(module, function), calls[name][function])
                best[name, function] = min(best.get((name, function), cost), cost)
    for function in FUNCTIONS:
        line = f"{function:>12}: this {best['this', function] * 1e6:6.2f} us a text (best of {args.passes})"
        if args.base is not None:
            base = best["base", function]
            line += f", base {base * 1e6:6.2f} us, this/base {best['this', function] / base:.3f}"
        print(line)


if __name__ == "__main__":
    main()
