"""Every ``NEARDUP_*`` setting, parsed and validated in one place.

A wrong value fails when the crawl starts, with a message naming the setting, rather than
half-way through a crawl. Spider arguments (``-a neardup_action=tag``) are run-time
switches on top of the settings and follow the same rules.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from ..engine.fields import OutputFields, check_fields
from ..engine.prefer import PREFER_CHOICES, Policy, policy_from
from ..engine.verdicts import METHODS, REVISITS, Thresholds, methods_from
from ..fingerprints.extract import DEFAULT_EXTRACTOR
from ..fingerprints.recipe import Recipe
from ..seconds import seconds
from ..stores import STORES_BASE, redact, scheme_of

if TYPE_CHECKING:
    from scrapy import Spider

ACTIONS = ("drop", "tag")
TOKENIZERS = ("auto", "jieba", "rjieba")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def default_workers() -> int:
    """One worker process per spare core, at most 4; none on a one-core machine.

    The reactor thread keeps one core busy with Scrapy itself; extraction and
    fingerprinting go to the others.
    """
    return max(0, min(4, (os.cpu_count() or 1) - 1))


@dataclass(frozen=True)
class NearDupConfig:
    """The pipeline's configuration; field ``foo`` comes from setting ``NEARDUP_FOO``."""

    enabled: bool = True
    store: str = ""  # "" = LevelDB under the project's .scrapy/ data dir, see store_uri()
    namespace: str = "default"
    action: str = "drop"
    text_field: str = "text"
    html_field: str = "html"
    key_field: str = "url"
    nshash_n: int = 5
    simhash_distance: int = 3
    threshold: float = Thresholds().containment
    min_chars: int = Thresholds().min_chars
    ttl: float = 0.0  # seconds; 0 = compare with every stored document
    tokenizer: str = "auto"
    duplicate_of_field: str = "duplicate_of"
    similar_id_field: str = "similar_id"
    extractor: str | Callable[[Any], str] = DEFAULT_EXTRACTOR
    max_html_size: int = 5 * 1024 * 1024  # bytes (characters for str); 0 = no cap
    workers: int = field(default_factory=default_workers)
    worker_niceness: int = 0  # added to the workers' nice value
    extract_timeout: float = 20.0  # seconds a page may take a worker; 0 = no bound
    drop_log_level: str = "DEBUG"
    debug: bool = False
    redis_params: dict = field(default_factory=dict)
    redis_allow_eviction: bool = False  # open a Redis whose maxmemory-policy may evict keys
    redis_allow_no_persistence: bool = False  # open a Redis that keeps nothing across a restart
    stores: dict = field(default_factory=lambda: dict(STORES_BASE))  # URI scheme -> store class
    methods: tuple = METHODS  # candidate indexes; verification decides either way
    text_out_field: str = ""  # item field that receives the body extracted from HTML; "" = off
    store_thread: bool = False  # store calls on a thread of their own (True) or inline
    store_down_timeout: float = 60.0  # seconds items wait for a store that went down; then the crawl stops
    related: bool = False  # list the other stored stories sharing a long passage with each item
    related_field: str = "related"
    prefer: str | Callable = "first"  # which copy of a story to keep: first, longest, source, a callable
    prefer_sources: tuple = ()  # sites best first, for prefer = "source"
    source_field: str = ""  # item field naming the site; "" = the key's host
    replaces_field: str = "replaces"  # receives the key of the copy a preferred copy replaces
    revisit: str = "pass"  # a key seen again with the text stored under it: pass or drop
    keep_text: bool = False  # store each new story's text beside its record (compressed)
    report: str = ""  # path of the review page written when the spider closes; "" = none
    title_field: str = "title"  # item field holding the headline, shown on the review page; "" = none
    freeze_gc: bool = True  # Python's full collections skip what the process held at the open (gcfreeze)

    @classmethod
    def from_settings(cls, settings: BaseSettings, spider: Spider | None = None) -> NearDupConfig:
        """Read ``NEARDUP_*`` from ``settings`` and ``neardup_*`` attributes of ``spider``.

        Raises ``ValueError`` naming the setting (and the spider argument) on a bad value.
        """
        merged = BaseSettings()
        for name in [*SETTINGS, *OTHER_SETTINGS]:
            if settings.get(name) is not None:
                merged.set(name, settings.get(name))
        origin = {name: name for name in SETTINGS}
        if spider is not None:
            for name in SETTINGS:
                attr = name.lower()
                value = getattr(spider, attr, None)
                if value is not None:
                    merged.set(name, value)
                    origin[name] = f"{name} (spider argument {attr})"
        parsed: dict[str, Any] = {}
        for name, parse in SETTINGS.items():
            if merged.get(name) is None and merged.get(f"{name}_BASE") is None:
                continue
            try:
                parsed[name[len("NEARDUP_") :].lower()] = parse(merged, name)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{origin[name]}: {exc}") from None
        config = cls(**parsed)
        config._check_together(origin)
        return config

    def _check_together(self, origin: dict[str, str]) -> None:
        """Each field the pipeline writes is a field of its own (:func:`.fields.check_fields`);
        the extracted body may go to the text field, which was empty (the HTML was read)."""
        check_fields(
            read={
                origin["NEARDUP_TEXT_FIELD"]: self.text_field,
                origin["NEARDUP_HTML_FIELD"]: self.html_field,
                origin["NEARDUP_KEY_FIELD"]: self.key_field,
            },
            written={
                origin["NEARDUP_DUPLICATE_OF_FIELD"]: self.duplicate_of_field,
                origin["NEARDUP_SIMILAR_ID_FIELD"]: self.similar_id_field,
                origin["NEARDUP_RELATED_FIELD"]: self.related_field if self.related else None,
                origin["NEARDUP_REPLACES_FIELD"]: self.replaces_field,
                origin["NEARDUP_TEXT_OUT_FIELD"]: self.text_out_field,
            },
            may_share=[(origin["NEARDUP_TEXT_OUT_FIELD"], origin["NEARDUP_TEXT_FIELD"])],
        )

    def output_fields(self) -> OutputFields:
        return OutputFields(self.duplicate_of_field, self.similar_id_field, self.replaces_field, self.related_field)

    # -- derived objects -------------------------------------------------------------

    def recipe(self) -> Recipe:
        return Recipe(tokenizer=self.tokenizer, nshash_n=self.nshash_n, simhash_k=self.simhash_distance)

    def policy(self) -> Policy | None:
        """The NEARDUP_PREFER policy; None for first seen wins."""
        return policy_from(self.prefer, self.prefer_sources)

    def thresholds(self) -> Thresholds:
        return Thresholds.from_options(self.threshold, self.min_chars)

    def store_options(self) -> dict[str, Any]:
        """What a store's ``from_uri`` may read: the whole configuration (each backend takes
        the options it understands, such as ``ttl`` and ``redis_params``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("store", "stores", "namespace")}

    def store_uri(self) -> str:
        """The configured store, or the default LevelDB under the project's ``.scrapy/``."""
        if self.store:
            return self.store
        from scrapy.utils.project import data_path

        return "leveldb://" + os.path.abspath(data_path("neardup", createdir=True))

    def extractor_callable(self) -> Callable[[Any], str]:
        return load_object(self.extractor) if isinstance(self.extractor, str) else self.extractor


# -- parsers: each takes the merged settings and the name, returns the value or raises -----


def _bool(settings: BaseSettings, name: str) -> bool:
    try:
        return settings.getbool(name)
    except ValueError:
        raise ValueError(f"must be a boolean (1/0, true/false), got {settings.get(name)!r}") from None


def _int(low: int, high: int | None = None) -> Callable[[BaseSettings, str], int]:
    def parse(settings: BaseSettings, name: str) -> int:
        raw = settings.get(name)
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise ValueError(f"must be an integer, got {raw!r}")
        try:
            value = settings.getint(name)
        except (ValueError, TypeError):
            raise ValueError(f"must be an integer, got {raw!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ValueError(f"must be {bound}, got {value}")
        return value

    return parse


def _fraction(settings: BaseSettings, name: str) -> float:
    raw = settings.get(name)
    try:
        value = settings.getfloat(name)
    except (ValueError, TypeError):
        raise ValueError(f"must be a number in (0, 1], got {raw!r}") from None
    if isinstance(raw, bool) or not 0.0 < value <= 1.0:
        raise ValueError(f"must be a number in (0, 1], got {raw!r}")
    return value


def _seconds(zero: str) -> Callable[[BaseSettings, str], float]:
    """Seconds by the one rule of :func:`~scrapy_neardup.seconds.seconds`; ``zero`` says what 0 means."""

    def parse(settings: BaseSettings, name: str) -> float:
        return seconds(settings.get(name), zero)

    return parse


def _name(settings: BaseSettings, name: str) -> str:
    value = settings.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a non-empty string, got {value!r}")
    return value.strip()


def _optional_name(settings: BaseSettings, name: str) -> str:
    value = settings.get(name)
    if not isinstance(value, str):
        raise ValueError(f"must be a field name (a string; empty = off), got {value!r}")
    return value.strip()


def _report_path(settings: BaseSettings, name: str) -> str:
    """The path as given (``%(name)s`` in it is the spider's name); where it points is checked
    when the spider opens, with the crawl's other files (:mod:`.runfiles`)."""
    value = settings.get(name)
    if not isinstance(value, str):
        raise ValueError(f"must be the path of an HTML file to write (a string; empty = none), got {value!r}")
    return value.strip()


def _choice(choices: tuple[str, ...], upper: bool = False) -> Callable[[BaseSettings, str], str]:
    def parse(settings: BaseSettings, name: str) -> str:
        value = settings.get(name)
        text = str(value).strip()
        text = text.upper() if upper else text.lower()
        if not isinstance(value, str) or text not in choices:
            raise ValueError(f"must be one of {', '.join(map(repr, choices))}, got {value!r}")
        return text

    return parse


def _store(settings: BaseSettings, name: str) -> str:
    value = settings.get(name)
    if not isinstance(value, str):
        raise ValueError(f"must be a store URI string, got {value!r}")
    value = value.strip()
    if not value:
        return ""
    registry = _stores(settings, "NEARDUP_STORES")
    if scheme_of(value) not in registry:
        known = ", ".join(f"{scheme}://" for scheme in sorted(registry))
        raise ValueError(f"unknown store {redact(value)!r}: the known schemes are {known} (NEARDUP_STORES adds one)")
    if value.lower() == "leveldb://":
        raise ValueError("names no directory: use leveldb:///path/to/dir")
    return value


def _stores(settings: BaseSettings, name: str) -> dict:
    """The built-in stores, updated by NEARDUP_STORES_BASE and then NEARDUP_STORES; a scheme
    set to None is removed."""
    merged: dict[str, Any] = dict(STORES_BASE)
    try:
        merged.update(settings.getwithbase(name))
    except (ValueError, TypeError):
        raise ValueError("must be a dict of URI scheme -> store class (a dotted path)") from None
    for scheme, path in merged.items():
        if path is not None and not isinstance(path, (str, type)):
            raise ValueError(f"scheme {scheme!r} must name a store class by dotted path, got {path!r}")
    return {scheme.lower(): path for scheme, path in merged.items() if path is not None}


def _methods(settings: BaseSettings, name: str) -> tuple[str, ...]:
    return methods_from(settings.get(name))


def _extractor(settings: BaseSettings, name: str) -> str | Callable[[Any], str]:
    value = settings.get(name)
    if callable(value):
        return value
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a dotted path to a callable html -> text, got {value!r}")
    try:
        found = load_object(value.strip())
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        raise ValueError(f"cannot import {value!r}: {exc}") from None
    if not callable(found):
        raise ValueError(f"{value!r} is not callable")
    return value.strip()


def _prefer(settings: BaseSettings, name: str) -> str | Callable:
    """A policy name or a callable (new, stored) -> bool; ``source`` needs its sources."""
    value = settings.get(name)
    policy_from(value, _names(settings, "NEARDUP_PREFER_SOURCES") if settings.get("NEARDUP_PREFER_SOURCES") else ())
    if callable(value):
        return value
    text = value.strip()
    return text.lower() if text.lower() in PREFER_CHOICES else text


def _names(settings: BaseSettings, name: str) -> tuple[str, ...]:
    """A list of names (or a comma-separated string of them)."""
    value = settings.get(name)
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of domains or site names, best first, got {value!r}")
    return tuple(v.strip() for v in value if v.strip())


def _dict(settings: BaseSettings, name: str) -> dict:
    try:
        return dict(settings.getdict(name))
    except (ValueError, TypeError):
        raise ValueError(
            "must be a dict or a JSON object string (the value is not shown: it may hold a password)"
        ) from None


SETTINGS: dict[str, Callable[[BaseSettings, str], Any]] = {
    "NEARDUP_ENABLED": _bool,
    "NEARDUP_STORE": _store,
    "NEARDUP_NAMESPACE": _name,
    "NEARDUP_ACTION": _choice(ACTIONS),
    "NEARDUP_TEXT_FIELD": _name,
    "NEARDUP_HTML_FIELD": _name,
    "NEARDUP_KEY_FIELD": _name,
    "NEARDUP_NSHASH_N": _int(1, 32),
    "NEARDUP_SIMHASH_DISTANCE": _int(0, 15),
    "NEARDUP_THRESHOLD": _fraction,
    "NEARDUP_MIN_CHARS": _int(1),
    "NEARDUP_TTL": _seconds("no time window"),
    "NEARDUP_TOKENIZER": _choice(TOKENIZERS),
    "NEARDUP_DUPLICATE_OF_FIELD": _name,
    "NEARDUP_SIMILAR_ID_FIELD": _name,
    "NEARDUP_EXTRACTOR": _extractor,
    "NEARDUP_MAX_HTML_SIZE": _int(0),
    "NEARDUP_WORKERS": _int(0, 64),
    "NEARDUP_WORKER_NICENESS": _int(0, 19),
    "NEARDUP_EXTRACT_TIMEOUT": _seconds("no bound"),
    "NEARDUP_DROP_LOG_LEVEL": _choice(LOG_LEVELS, upper=True),
    "NEARDUP_DEBUG": _bool,
    "NEARDUP_REDIS_PARAMS": _dict,
    "NEARDUP_REDIS_ALLOW_EVICTION": _bool,
    "NEARDUP_REDIS_ALLOW_NO_PERSISTENCE": _bool,
    "NEARDUP_STORES": _stores,
    "NEARDUP_METHODS": _methods,
    "NEARDUP_TEXT_OUT_FIELD": _optional_name,
    "NEARDUP_STORE_THREAD": _bool,
    "NEARDUP_STORE_DOWN_TIMEOUT": _seconds("stop at the first failure"),
    "NEARDUP_RELATED": _bool,
    "NEARDUP_RELATED_FIELD": _name,
    "NEARDUP_PREFER": _prefer,
    "NEARDUP_PREFER_SOURCES": _names,
    "NEARDUP_SOURCE_FIELD": _optional_name,
    "NEARDUP_REPLACES_FIELD": _name,
    "NEARDUP_REVISIT": _choice(REVISITS),
    "NEARDUP_KEEP_TEXT": _bool,
    "NEARDUP_REPORT": _report_path,
    "NEARDUP_TITLE_FIELD": _optional_name,
    "NEARDUP_FREEZE_GC": _bool,
}

assert {f"NEARDUP_{f.name.upper()}" for f in fields(NearDupConfig)} == set(SETTINGS)


def typos(settings: BaseSettings, spider: Spider | None = None) -> list[str]:
    """Warnings for ``NEARDUP_*`` settings and ``neardup_*`` spider attributes (``-a``
    arguments) that nothing reads, each naming the closest real name: usually a typo."""
    warnings = []
    for name in sorted(settings):
        if name.startswith("NEARDUP_") and name not in SETTINGS and name not in OTHER_SETTINGS:
            warnings.append(f"Unknown setting {name}{_closest(name, [*SETTINGS, *OTHER_SETTINGS])}")
    if spider is not None:
        switches = [name.lower() for name in SETTINGS]
        for name in sorted(n for n in dir(spider) if n.startswith("neardup_") and n not in switches):
            warnings.append(f"Unknown spider argument {name}{_closest(name, switches)}")
    return warnings


def _closest(name: str, known: list[str]) -> str:
    """Compared without the shared ``neardup_`` prefix, which would make every name look close."""
    start = len("neardup_")
    by_rest = {other[start:]: other for other in known}
    found = difflib.get_close_matches(name[start:], list(by_rest), n=1, cutoff=0.7)
    return f" (a typo of {by_rest[found[0]]}?), ignored" if found else " (not a scrapy-neardup name), ignored"


# The base of NEARDUP_STORES (Scrapy's getwithbase merges the two), so not a typo.
OTHER_SETTINGS = frozenset({"NEARDUP_STORES_BASE"})
