"""Python's full collections skip what the crawl's process held when the pipeline opened."""

from __future__ import annotations

import gc

import pytest
import pytest_twisted
from support.crawls import PIPELINE, run, settings_for
from support.local_site import NewsSpider
from support.pipelines import FreezeWatch

from scrapy_neardup.crawl import gcfreeze


def test_the_last_holder_gives_the_objects_back():
    before = gc.get_freeze_count()
    assert before == 0  # no crawl of this process left anything frozen
    gcfreeze.freeze()
    gcfreeze.freeze()
    assert gc.get_freeze_count() > 0
    gcfreeze.unfreeze()
    assert gc.get_freeze_count() > 0  # another holder is still open
    gcfreeze.unfreeze()
    assert gc.get_freeze_count() == 0
    gcfreeze.unfreeze()  # one too many: nothing to give back, no error
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("freeze", [True, False])
@pytest_twisted.inlineCallbacks
def test_a_crawl_freezes_while_the_pipeline_is_open_and_gives_back_at_the_close(local_site, tmp_path, freeze):
    FreezeWatch.seen = []
    extra = {} if freeze else {"NEARDUP_FREEZE_GC": False}  # the default freezes
    settings = settings_for(tmp_path / "store", **extra)
    settings["ITEM_PIPELINES"] = {PIPELINE: 200, "support.pipelines.FreezeWatch": 300}
    result = yield run(settings, NewsSpider, root=local_site.root, paths=["/a/metro.html", "/b/canteen.html"])
    assert len(result.items) == 2 and len(FreezeWatch.seen) == 2
    if freeze:
        assert all(count > 1000 for count in FreezeWatch.seen)  # the modules, Scrapy's engine, the store
    else:
        assert FreezeWatch.seen == [0, 0]
    assert gc.get_freeze_count() == 0
