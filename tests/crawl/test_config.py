"""NEARDUP_* settings: defaults, parsing with Scrapy's rules, errors that name the setting."""

from __future__ import annotations

import os

import pytest
from scrapy.settings import Settings

from scrapy_neardup import Recipe, Thresholds
from scrapy_neardup.crawl.settings import SETTINGS, NearDupConfig, default_workers, typos
from scrapy_neardup.engine.prefer import prefer_longest
from scrapy_neardup.fingerprints.extract import html_to_text


def parse(spider=None, **values):
    return NearDupConfig.from_settings(Settings(values), spider)


def test_defaults():
    config = parse()
    assert config.enabled is True
    assert config.store == ""
    assert config.namespace == "default"
    assert config.action == "drop"
    assert (config.text_field, config.html_field, config.key_field) == ("text", "html", "url")
    assert (config.nshash_n, config.simhash_distance) == (5, 3)
    assert config.threshold == Thresholds().containment
    assert config.min_chars == Thresholds().min_chars
    assert config.ttl == 0
    assert config.tokenizer == "auto"
    assert (config.duplicate_of_field, config.similar_id_field) == ("duplicate_of", "similar_id")
    assert config.extractor_callable() is html_to_text
    assert config.max_html_size == 5 * 1024 * 1024
    assert config.workers == default_workers()
    assert config.drop_log_level == "DEBUG"
    assert config.debug is False
    assert config.redis_params == {}


def test_default_workers_leave_one_core_to_the_reactor():
    assert default_workers() == max(0, min(4, (os.cpu_count() or 1) - 1))


def test_every_setting_is_parsed():
    config = parse(
        NEARDUP_ENABLED="False",
        NEARDUP_STORE="redis://:secret@127.0.0.1:6379/2",
        NEARDUP_NAMESPACE="news",
        NEARDUP_ACTION="TAG",
        NEARDUP_TEXT_FIELD="body",
        NEARDUP_HTML_FIELD="page",
        NEARDUP_KEY_FIELD="link",
        NEARDUP_NSHASH_N="4",
        NEARDUP_SIMHASH_DISTANCE=2,
        NEARDUP_THRESHOLD="0.9",
        NEARDUP_MIN_CHARS=100,
        NEARDUP_TTL="86400",
        NEARDUP_TOKENIZER="jieba",
        NEARDUP_DUPLICATE_OF_FIELD="copy_of",
        NEARDUP_SIMILAR_ID_FIELD="story",
        NEARDUP_EXTRACTOR="support.local_site.exploding_extractor",
        NEARDUP_MAX_HTML_SIZE=1000,
        NEARDUP_WORKERS="2",
        NEARDUP_WORKER_NICENESS="5",
        NEARDUP_DROP_LOG_LEVEL="info",
        NEARDUP_DEBUG="1",
        NEARDUP_REDIS_PARAMS='{"socket_timeout": 5}',
        NEARDUP_REDIS_ALLOW_EVICTION="true",
        NEARDUP_REVISIT="Drop",
    )
    assert config.enabled is False
    assert config.revisit == "drop"
    assert config.store == "redis://:secret@127.0.0.1:6379/2"
    assert config.namespace == "news" and config.action == "tag"
    assert (config.text_field, config.html_field, config.key_field) == ("body", "page", "link")
    assert (config.nshash_n, config.simhash_distance, config.threshold) == (4, 2, 0.9)
    assert (config.min_chars, config.ttl, config.tokenizer) == (100, 86400.0, "jieba")
    assert (config.duplicate_of_field, config.similar_id_field) == ("copy_of", "story")
    assert config.extractor_callable().__name__ == "exploding_extractor"
    assert (config.max_html_size, config.workers, config.drop_log_level) == (1000, 2, "INFO")
    assert config.worker_niceness == 5
    assert config.debug is True and config.redis_params == {"socket_timeout": 5}
    assert config.redis_allow_eviction is True
    assert config.recipe() == Recipe(tokenizer="jieba", nshash_n=4, simhash_k=2)
    assert config.thresholds().containment == 0.9 and config.thresholds().min_chars == 100
    assert config.thresholds().short_containment >= 0.9  # short texts are never judged more loosely


def test_every_config_field_has_a_setting():
    assert set(SETTINGS) == {f"NEARDUP_{name.upper()}" for name in NearDupConfig.__dataclass_fields__}


def test_stores_merge_the_base_and_the_users_registry():
    config = NearDupConfig.from_settings(
        Settings(
            {
                "NEARDUP_STORES": {"sqlite": "myproject.stores.SQLiteStore", "redis": None},
                "NEARDUP_STORE": "sqlite:///x.db",
            }
        )
    )
    assert config.stores["sqlite"] == "myproject.stores.SQLiteStore"
    assert "redis" not in config.stores and config.stores["leveldb"].endswith("LevelDBStore")
    based = NearDupConfig.from_settings(Settings({"NEARDUP_STORES_BASE": {"sqlite": "x.SQLiteStore"}}))
    assert based.stores["sqlite"] == "x.SQLiteStore" and "memory" in based.stores
    with pytest.raises(
        ValueError, match=r"NEARDUP_STORE: unknown store 'redis://h/0': the known schemes are .*sqlite://"
    ):
        NearDupConfig.from_settings(
            Settings({"NEARDUP_STORES": {"redis": None, "sqlite": "x.S"}, "NEARDUP_STORE": "redis://h/0"})
        )
    with pytest.raises(ValueError, match="NEARDUP_STORES: scheme 'x' must name a store class"):
        NearDupConfig.from_settings(Settings({"NEARDUP_STORES": {"x": 3}}))


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("NEARDUP_ENABLED", "maybe", "NEARDUP_ENABLED: must be a boolean"),
        ("NEARDUP_ACTION", "delete", "NEARDUP_ACTION: must be one of 'drop', 'tag', got 'delete'"),
        ("NEARDUP_REVISIT", "keep", "NEARDUP_REVISIT: must be one of 'pass', 'drop', got 'keep'"),
        ("NEARDUP_NSHASH_N", 0, "NEARDUP_NSHASH_N: must be between 1 and 32, got 0"),
        ("NEARDUP_NSHASH_N", "five", "NEARDUP_NSHASH_N: must be an integer, got 'five'"),
        ("NEARDUP_NSHASH_N", 2.5, "NEARDUP_NSHASH_N: must be an integer, got 2.5"),
        ("NEARDUP_SIMHASH_DISTANCE", 40, "NEARDUP_SIMHASH_DISTANCE: must be between 0 and 15, got 40"),
        ("NEARDUP_THRESHOLD", 1.5, "NEARDUP_THRESHOLD: must be a number in (0, 1], got 1.5"),
        ("NEARDUP_THRESHOLD", 0, "NEARDUP_THRESHOLD: must be a number in (0, 1], got 0"),
        ("NEARDUP_THRESHOLD", "high", "NEARDUP_THRESHOLD: must be a number in (0, 1], got 'high'"),
        ("NEARDUP_MIN_CHARS", 0, "NEARDUP_MIN_CHARS: must be at least 1, got 0"),
        ("NEARDUP_TTL", -1, "NEARDUP_TTL: must be a number of seconds >= 0"),
        ("NEARDUP_TTL", "a day", "NEARDUP_TTL: must be a number of seconds"),
        ("NEARDUP_TOKENIZER", "pkuseg", "NEARDUP_TOKENIZER: must be one of 'auto', 'jieba', 'rjieba'"),
        ("NEARDUP_TEXT_FIELD", "", "NEARDUP_TEXT_FIELD: must be a non-empty string"),
        ("NEARDUP_KEY_FIELD", 3, "NEARDUP_KEY_FIELD: must be a non-empty string, got 3"),
        ("NEARDUP_EXTRACTOR", "no.such.module.extract", "NEARDUP_EXTRACTOR: cannot import 'no.such.module.extract'"),
        (
            "NEARDUP_EXTRACTOR",
            "scrapy_neardup.fingerprints.extract.DEFAULT_EXTRACTOR",
            "NEARDUP_EXTRACTOR: 'scrapy_neardup.fingerprints.extract.DEFAULT_EXTRACTOR' is not callable",
        ),
        ("NEARDUP_MAX_HTML_SIZE", -5, "NEARDUP_MAX_HTML_SIZE: must be at least 0, got -5"),
        ("NEARDUP_WORKERS", 100, "NEARDUP_WORKERS: must be between 0 and 64, got 100"),
        ("NEARDUP_WORKER_NICENESS", 20, "NEARDUP_WORKER_NICENESS: must be between 0 and 19, got 20"),
        ("NEARDUP_DROP_LOG_LEVEL", "LOUD", "NEARDUP_DROP_LOG_LEVEL: must be one of 'DEBUG'"),
        ("NEARDUP_STORE", "mysql://db/x", "NEARDUP_STORE: unknown store 'mysql://db/x'"),
        ("NEARDUP_STORE", "leveldb://", "NEARDUP_STORE: names no directory"),
        ("NEARDUP_STORE", 5, "NEARDUP_STORE: must be a store URI string, got 5"),
        ("NEARDUP_REDIS_PARAMS", "not json", "NEARDUP_REDIS_PARAMS: must be a dict"),
        ("NEARDUP_PREFER", "newest", "NEARDUP_PREFER: must be one of first, longest, source or a dotted path"),
        ("NEARDUP_PREFER", "source", "NEARDUP_PREFER: the source policy needs a list of domains"),
        ("NEARDUP_PREFER", "no.such.policy", "NEARDUP_PREFER: cannot import 'no.such.policy'"),
        (
            "NEARDUP_PREFER",
            "scrapy_neardup.engine.prefer.PREFER_CHOICES",
            "NEARDUP_PREFER: 'scrapy_neardup.engine.prefer.PREFER_CHOICES' is not callable",
        ),
        ("NEARDUP_PREFER_SOURCES", [1, 2], "NEARDUP_PREFER_SOURCES: must be a list of domains or site names"),
        ("NEARDUP_REPLACES_FIELD", "", "NEARDUP_REPLACES_FIELD: must be a non-empty string"),
        ("NEARDUP_REPLACES_FIELD", "text", "NEARDUP_REPLACES_FIELD 'text' is also NEARDUP_TEXT_FIELD"),
    ],
)
def test_invalid_values_name_the_setting(name, value, message):
    with pytest.raises(ValueError) as error:
        parse(**{name: value})
    assert message in str(error.value)


def test_store_password_is_not_echoed_in_errors():
    with pytest.raises(ValueError) as error:
        parse(NEARDUP_STORE="mongodb://user:hunter2@host/db")
    assert "hunter2" not in str(error.value)


def test_tag_fields_must_not_overwrite_item_data():
    with pytest.raises(ValueError, match="NEARDUP_DUPLICATE_OF_FIELD 'url' is also NEARDUP_KEY_FIELD"):
        parse(NEARDUP_DUPLICATE_OF_FIELD="url")
    with pytest.raises(ValueError, match="NEARDUP_SIMILAR_ID_FIELD 'x' is also NEARDUP_DUPLICATE_OF_FIELD"):
        parse(NEARDUP_DUPLICATE_OF_FIELD="x", NEARDUP_SIMILAR_ID_FIELD="x")


class Spider:
    name = "s"


@pytest.mark.parametrize(
    "value, enabled", [("0", False), ("1", True), ("false", False), ("True", True), (False, False)]
)
def test_spider_argument_enabled_uses_scrapy_boolean_rules(value, enabled):
    spider = Spider()
    spider.neardup_enabled = value
    assert parse(spider, NEARDUP_ENABLED=True).enabled is enabled


def test_spider_arguments_override_settings_and_errors_name_both():
    spider = Spider()
    spider.neardup_action = "tag"
    spider.neardup_namespace = "site-b"
    config = parse(spider, NEARDUP_ACTION="drop")
    assert (config.action, config.namespace) == ("tag", "site-b")
    spider.neardup_action = "keep"
    with pytest.raises(ValueError, match=r"NEARDUP_ACTION \(spider argument neardup_action\): must be one of"):
        parse(spider)


def test_default_store_is_leveldb_in_the_scrapy_data_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    assert parse().store_uri() == f"leveldb://{tmp_path}/.scrapy/neardup"
    assert (tmp_path / ".scrapy" / "neardup").is_dir()
    assert parse(NEARDUP_STORE="memory://").store_uri() == "memory://"


def test_default_store_inside_a_project_uses_its_data_dir(tmp_path, monkeypatch):
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    monkeypatch.chdir(tmp_path / "proj")
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    assert parse().store_uri() == f"leveldb://{tmp_path}/.scrapy/neardup"


def test_unknown_neardup_settings_are_reported_with_the_closest_name():
    settings = Settings(
        {"NEARDUP_TRESHOLD": 0.9, "NEARDUP_THRESHOLD": 0.9, "NEARDUP_STORES": {}, "NEARDUP_COLOUR": 1, "OTHER": 1}
    )
    assert typos(settings) == [
        "Unknown setting NEARDUP_COLOUR (not a scrapy-neardup name), ignored",
        "Unknown setting NEARDUP_TRESHOLD (a typo of NEARDUP_THRESHOLD?), ignored",
    ]


def test_unknown_neardup_spider_arguments_are_reported_with_the_closest_name():
    class Spider:
        neardup_action = "tag"  # a real switch, as a class attribute
        neardup_namespce = "typo"  # a misspelt one, as a class attribute

        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)  # what scrapy.Spider does with -a arguments

    spider = Spider(neardup_acton="tag", neardup_enabled="0", neardup_xyz="1", other_argument="1")
    assert typos(Settings(), spider) == [
        "Unknown spider argument neardup_acton (a typo of neardup_action?), ignored",
        "Unknown spider argument neardup_namespce (a typo of neardup_namespace?), ignored",
        "Unknown spider argument neardup_xyz (not a scrapy-neardup name), ignored",
    ]
    assert parse(spider).action == "tag" and parse(spider).enabled is False


def test_methods_and_the_text_out_field():
    config = NearDupConfig.from_settings(
        Settings({"NEARDUP_METHODS": "sketch, nshash", "NEARDUP_TEXT_OUT_FIELD": "text"})
    )
    assert config.methods == ("nshash", "sketch") and config.text_out_field == "text"
    assert NearDupConfig.from_settings(Settings({"NEARDUP_METHODS": ["simhash"]})).methods == ("simhash",)
    assert NearDupConfig().methods == ("nshash", "simhash", "sketch") and NearDupConfig().text_out_field == ""
    for bad in ("minhash", "", []):
        with pytest.raises(ValueError, match="NEARDUP_METHODS: must"):
            NearDupConfig.from_settings(Settings({"NEARDUP_METHODS": bad}))
    with pytest.raises(ValueError, match="NEARDUP_TEXT_OUT_FIELD 'html' is also NEARDUP_HTML_FIELD"):
        NearDupConfig.from_settings(Settings({"NEARDUP_TEXT_OUT_FIELD": "html"}))


def test_prefer_policies_and_their_fields():
    assert parse().policy() is None and parse().replaces_field == "replaces"
    longest = parse(NEARDUP_PREFER=" Longest ")
    assert longest.prefer == "longest" and longest.policy() is prefer_longest
    ranked = parse(
        NEARDUP_PREFER="source",
        NEARDUP_PREFER_SOURCES="xinhuanet.com, people.com.cn",
        NEARDUP_SOURCE_FIELD="site",
        NEARDUP_REPLACES_FIELD="supersedes",
    )
    assert ranked.prefer_sources == ("xinhuanet.com", "people.com.cn") and ranked.source_field == "site"
    assert ranked.policy().rank("www.news.xinhuanet.com") == 0 and ranked.replaces_field == "supersedes"
    assert parse(NEARDUP_PREFER="scrapy_neardup.engine.prefer.prefer_longest").policy() is prefer_longest
