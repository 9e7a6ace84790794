import pytest
from support.corpus import ARTICLES, DISCLAIMER, SIGNATURE, full_width, quoting, reprint, text, with_disclaimer
from support.two_feeds import EAST, WEST, feed, reprinted

from scrapy_neardup import DUPLICATE, REVISIT, SHORT, UNIQUE, Detector, Recipe, Thresholds, open_store
from scrapy_neardup.engine.prefer import prefer_longest
from scrapy_neardup.fingerprints.fingerprint import is_sketch_key
from scrapy_neardup.newsworld import transforms

NAMES = list(ARTICLES)


@pytest.fixture
def store(store_uri):
    """Every detector test runs on each backend (memory, LevelDB, Redis)."""
    opened = open_store(store_uri)
    yield opened
    opened.close()


def test_first_seen_wins_and_copies_share_its_story(store):
    detector = Detector(store)
    first = detector.check("a", text("library"))
    second = detector.check("b", reprint("library"))
    third = detector.check("c", reprint("library", cut=0.9))
    assert first.status == UNIQUE and first.similar_id is not None
    assert second.status == DUPLICATE and second.duplicate_of == "a"
    assert third.status == DUPLICATE and third.duplicate_of == "a"
    assert first.similar_id == second.similar_id == third.similar_id
    assert second.method and 0 < second.jaccard <= 1 and 0 < second.containment <= 1


@pytest.mark.parametrize("name", NAMES)
def test_a_reprint_cut_to_75_percent_is_a_duplicate(store, name):
    detector = Detector(store)
    detector.check("original", text(name))
    verdict = detector.check("reprint", reprint(name, cut=0.75))
    assert verdict.status == DUPLICATE, verdict


def test_articles_quoting_long_sentences_of_another_are_not_duplicates(store):
    detector = Detector(store)
    detector.check("quoted", text("battery"))
    for count, name in enumerate(["reservoir", "library", "marathon", "rice", "museum"]):
        verdict = detector.check(f"quoting-{name}", quoting(name, "battery", sentences=1 + count % 2))
        assert verdict.status == UNIQUE, verdict


def test_articles_ending_with_the_same_long_disclaimer_are_not_duplicates(store):
    detector = Detector(store)
    verdicts = [detector.check(name, with_disclaimer(name)) for name in NAMES]
    assert [v.status for v in verdicts] == [UNIQUE] * len(NAMES)


def test_different_short_leads_with_one_long_disclaimer_are_not_duplicates(store):
    """Each story is one paragraph and the site's disclaimer twice as long: counted as text,
    the disclaimer would make them alike."""
    detector = Detector(store)
    names = ["library", "marathon", "battery", "museum"]
    verdicts = [detector.check(name, ARTICLES[name][0] + "\n" + DISCLAIMER) for name in names]
    assert [v.status for v in verdicts] == [UNIQUE] * len(names)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kept", [(0, 1, 3), (1, 2, 4), (0, 2, 3, 4)])
def test_an_excerpt_under_a_source_line_is_a_duplicate(store, name, kept):
    """Some of the paragraphs (here 60% or 80%), a source line on top, the reprinting site's
    own disclaimer below."""
    detector = Detector(store)
    detector.check("original", text(name))
    paragraphs = [ARTICLES[name][i] for i in kept]
    excerpt = "\n".join(["来源：滨海新闻网  原标题：" + name, *paragraphs, DISCLAIMER])
    verdict = detector.check("excerpt", excerpt)
    assert verdict.status == DUPLICATE and verdict.duplicate_of == "original", verdict


def test_boilerplate_sentence_stops_being_a_key(store):
    """After a few stories share a long sentence, it is neither filed nor looked up."""
    detector = Detector(store, boilerplate_limit=3)
    fingerprint = detector.fingerprint(SIGNATURE)
    signature_key = fingerprint.sentence_keys[0]
    for name in NAMES:
        detector.check(name, text(name) + "\n" + SIGNATURE)
    filed = [store.get(i) for i in range(1, len(NAMES) + 1)]
    with_key = [r for r in filed if r is not None and signature_key in r.sentence_keys]
    assert len(with_key) == 3  # the first three filed it; the rest saw a boilerplate sentence


def test_short_texts_are_not_judged(store):
    detector = Detector(store)
    assert detector.check("a", "今天下雨。").status == SHORT
    assert detector.check("b", "今天下雨。").status == SHORT
    assert store.count() == 0


# Lines of a script library (written for these tests): 30 to 60 characters each.
LINES = {
    "refund": "退款申请提交后，款项将在三到五个工作日内原路退回您的支付账户，请注意查收。",
    "delivery": "您的订单已经从杭州仓库发出，预计后天下午送达，快递员会提前电话联系您。",
    "password": "如果忘记登录密码，可以在登录页面点击找回密码，通过绑定的手机号重新设置。",
    "invoice": "电子发票会在订单完成后的二十四小时内发送到您预留的电子邮箱里。",
}
STOCK = "您好，感谢您的耐心等待，"


def test_a_short_line_edited_in_every_clause_is_found_and_lines_sharing_a_phrase_are_not(store):
    """The short-entry rule (neardup serve's threshold): a line of 20 to 50 content characters
    is judged, and under more sketch keys than a long text, so a copy whose every clause was
    edited keeps a candidate."""
    detector = Detector(store, Thresholds(min_chars=Thresholds.entry_min_chars))
    for key, line in LINES.items():
        assert detector.check(key, STOCK + line).status == UNIQUE
    # Its one sentence edited (no sentence key left), a clause dropped, punctuation half-width.
    copy = "您好,感谢您的耐心等待,退款申请提交后,款项将在三到五个工作日内原路返回您的支付帐户。"
    verdict = detector.check("copy", copy)
    assert verdict.status == DUPLICATE and verdict.duplicate_of == "refund", verdict
    assert detector.query(copy)[0].key == "refund"
    other = STOCK + "会员积分可以在下次购物时抵扣现金，一百积分抵扣一元，不设上限。"
    assert detector.check("points", other).status == UNIQUE
    short_record = store.stored_under("points")[0]
    assert sum(1 for k in short_record.sentence_keys if is_sketch_key(k)) == Thresholds().short_sketch_keys
    detector.check("long", text("library"))
    long_record = store.stored_under("long")[0]
    assert sum(1 for k in long_record.sentence_keys if is_sketch_key(k)) == Recipe().sketch_keys


def test_reservation_catches_a_concurrent_copy_and_release_forgets_it(store):
    detector = Detector(store)
    pending = detector.check("a", text("rice"), reserve=True)
    assert pending.status == UNIQUE and pending.stored
    copy = detector.check("b", reprint("rice"), reserve=True)
    assert copy.status == DUPLICATE and copy.duplicate_of == "a"
    detector.release(pending)
    again = detector.check("c", reprint("rice"), reserve=True)
    assert again.status == UNIQUE
    detector.commit(again)
    assert store.get(again.doc_id).state == 0


def test_the_same_key_seen_again_is_a_revisit_not_its_own_duplicate(store):
    detector = Detector(store)
    first = detector.check("url-1", text("museum"))
    # Re-rendered: other bytes (full-width digits and punctuation, spacing), the same text.
    again = detector.check("url-1", " " + full_width(text("museum")).replace("\n", "\n\n"))
    assert again.status == REVISIT and again.similar_id == first.similar_id and not again.stored
    assert again.duplicate_of is None and not again.is_duplicate
    assert store.count() == 1


# The museum article as its site updated it: two sentences added at the end.
MUSEUM_UPDATED = (
    text("museum")
    + "\n记者从当地文物部门获悉，窑址出土的部分青瓷将在明年春节前后与公众见面。展览期间博物馆将延长开放时间。"
)


def test_a_page_whose_text_changed_at_all_is_an_update_never_a_revisit(store):
    """Two sentences added, the end cut, a figure corrected, the headline rewritten: the same
    story, but not the text stored, so it takes the stored text's place and says what changed."""
    detector = Detector(store)
    first = detector.check("url-1", text("museum"))
    corrected = text("museum").replace("残长三十八米", "残长四十八米")
    changes = [
        MUSEUM_UPDATED,
        reprint("museum", cut=0.9, promotion=False),
        corrected,
        "城南遗址发现宋代龙窑 出土青瓷残片千余件\n" + corrected,
        "考古新发现：城南遗址清理出保存完整的宋代窑址\n" + corrected,
    ]
    for changed in changes:
        verdict = detector.check("url-1", changed)
        assert verdict.status == UNIQUE and verdict.updated and verdict.stored, (changed[:40], verdict)
        assert not verdict.key_collision
        assert verdict.similar_id == first.similar_id and store.count() == 1
        assert verdict.change.startswith("text changed:") and "the same story" in verdict.change
        assert detector.check("url-1", changed).status == REVISIT  # now the stored text


def test_a_forced_duplicate_is_stored_as_a_story_of_its_own_related_to_the_original(store):
    """An editor's "add anyway": filed with its own similar_id, and a later copy is still
    the duplicate of the first copy, not of the forced one."""
    detector = Detector(store)
    first = detector.check("original", text("library"))
    forced = detector.check_fingerprint("forced", detector.fingerprint(reprint("library")), force=True)
    assert forced.status == UNIQUE and forced.stored and forced.relative_of == "original"
    assert forced.similar_id not in (None, first.similar_id) and forced.duplicate_of is None
    assert [record.key for record in store.stored_under("forced")] == ["forced"]
    later = detector.check("later", reprint("library", cut=0.9))
    assert later.status == DUPLICATE and later.duplicate_of == "original"
    again = detector.check_fingerprint("original", detector.fingerprint(text("library")), force=True)
    assert again.status == REVISIT and len(store.stored_under("original")) == 1


def test_another_story_under_a_stored_key_is_a_key_collision_and_both_stories_are_kept(store):
    """The key now holds another story (two sources numbering their items alike, a reused
    URL): not an update. The new text is filed beside the stored one as a story of its own;
    either text under the key again is a revisit, and copies of both are caught."""
    detector = Detector(store)
    first = detector.check("url-1", text("museum"))
    other = detector.check("url-1", text("rice"))
    assert other.status == UNIQUE and other.stored and other.key_collision and not other.updated
    assert other.similar_id not in (None, first.similar_id) and other.duplicate_of is None
    assert "no longer the same story" in other.change
    assert [(r.doc_id, r.story_id) for r in store.stored_under("url-1")] == [
        (first.doc_id, first.similar_id),
        (other.doc_id, other.similar_id),
    ]
    assert detector.check("url-1", text("rice")).status == REVISIT
    assert detector.check("url-1", text("museum")).status == REVISIT
    copy = detector.check("url-2", reprint("rice"))
    assert copy.status == DUPLICATE and copy.duplicate_of == "url-1" and copy.similar_id == other.similar_id
    copy = detector.check("url-3", reprint("museum"))
    assert copy.status == DUPLICATE and copy.duplicate_of == "url-1" and copy.similar_id == first.similar_id
    # An update of one of them replaces that one only.
    updated = detector.check("url-1", MUSEUM_UPDATED)
    assert updated.updated and updated.similar_id == first.similar_id and not updated.key_collision
    assert [(r.doc_id, r.story_id) for r in store.stored_under("url-1")] == [
        (other.doc_id, other.similar_id),
        (updated.doc_id, first.similar_id),
    ]


@pytest.mark.parametrize("order", ["east first", "west first"])
def test_two_feeds_numbering_their_items_alike_keep_every_story(store, order):
    """Two feeds with ids 0-9 run into one store: the second feed's items are key collisions,
    filed beside the first feed's stories, which are not forgotten: reprints of either feed
    are caught, and each feed seen again is revisits. The second feed and the reruns come in
    batches (Redis: one round trip each, verified after filing)."""
    first_feed, second_feed = (EAST, WEST) if order == "east first" else (WEST, EAST)
    detector = Detector(store)
    first = [detector.check(key, body) for key, body in feed(first_feed)]
    assert [(v.status, v.key_collision) for v in first] == [(UNIQUE, False)] * 10
    second = detector.check_many([(key, detector.fingerprint(body)) for key, body in feed(second_feed)])
    assert [(v.status, v.key_collision, v.updated) for v in second] == [(UNIQUE, True, False)] * 10
    assert len({v.similar_id for v in first + second}) == 20 and store.count() == 20
    for number in range(10):
        stored = [record.story_id for record in store.stored_under(str(number))]
        assert stored == [first[number].similar_id, second[number].similar_id]
    # Reprints of both feeds under the portal's own keys: one by one, then in a batch.
    stories = {first_feed[n]: first[n].similar_id for n in range(10)} | {
        second_feed[n]: second[n].similar_id for n in range(10)
    }
    for number, body in enumerate(first_feed[:5] + second_feed[:5]):
        copy = detector.check(f"portal/{number}", reprinted(body))
        assert copy.status == DUPLICATE and copy.duplicate_of == str(number % 5), copy
        assert copy.similar_id == stories[body]
    rest = first_feed[5:] + second_feed[5:]
    copies = detector.check_many(
        [(f"portal/b{n}", detector.fingerprint(reprinted(body))) for n, body in enumerate(rest)]
    )
    assert [(v.status, v.duplicate_of, v.similar_id) for v in copies] == [
        (DUPLICATE, str(5 + n % 5), stories[body]) for n, body in enumerate(rest)
    ]
    again = detector.check_many(
        [(key, detector.fingerprint(body)) for key, body in feed(second_feed) + feed(first_feed)]
    )
    assert [(v.status, v.similar_id) for v in again] == [(REVISIT, v.similar_id) for v in second + first]
    store.count()  # Redis takes a batch's duplicates out with its next call
    assert store.count() == 20


def test_two_feeds_in_one_batch_keep_every_story(store):
    """Both feeds in one file (one batch): each id's second item collides with the first,
    filed in the same round trip."""
    detector = Detector(store)
    both = feed(EAST) + feed(WEST)
    verdicts = detector.check_many([(key, detector.fingerprint(body)) for key, body in both])
    assert [(v.status, v.key_collision) for v in verdicts] == [(UNIQUE, False)] * 10 + [(UNIQUE, True)] * 10
    assert store.count() == 20 and len({v.similar_id for v in verdicts}) == 20
    assert detector.check("portal/7", reprinted(WEST[7])).similar_id == verdicts[17].similar_id


@pytest.mark.parametrize("prefer", [None, prefer_longest], ids=["first", "longest"])
@pytest.mark.parametrize("story", [WEST[2], WEST[8]], ids=["west-2", "west-8"])
def test_a_reprint_joins_the_story_holding_its_closest_copy_not_an_excerpt_it_also_holds(store, prefer, story):
    """A portal's excerpt (the first sentence, under a source line) is stored, then its source,
    which the rule finds another story (the excerpt is under half of it and its rest goes on to
    other things); then a reprint of the source, cut to 90%: the excerpt is half of it, and the
    rule would join them. The reprint's closest copy is the source: it is the source's duplicate,
    and with ``longest`` it does not replace the excerpt, leaving two full copies stored."""
    sentences = [sentence + "。" for sentence in story.split("。") if sentence]
    excerpt = "来源：门户网\n" + sentences[0]
    reprint_of_source = "\n".join(transforms.cut_chars(sentences, 0.9)) + "\n（责任编辑：李明）"
    detector = Detector(store, prefer=prefer)
    portal = detector.check("portal", excerpt)
    source = detector.check("source", "\n".join(sentences))
    assert source.status == UNIQUE and source.similar_id != portal.similar_id
    third = detector.check("third", reprint_of_source)
    assert (third.status, third.duplicate_of, third.similar_id) == (DUPLICATE, "source", source.similar_id)
    assert third.replaces is None
    store.count()  # Redis takes a duplicate out with its next call
    assert sorted(record.key for record in store.records()) == ["portal", "source"]


def test_a_reserved_update_replaces_the_stored_document_at_its_commit(store):
    detector = Detector(store)
    detector.check("url-1", text("museum"))
    dropped = detector.check("url-1", MUSEUM_UPDATED, reserve=True)
    assert dropped.updated
    detector.release(dropped)  # its item was dropped later: the old text stays
    assert [r.key for r in store.records()] == ["url-1"]
    assert detector.check("url-1", text("museum")).status == REVISIT
    kept = detector.check("url-1", MUSEUM_UPDATED, reserve=True)
    detector.commit(kept)
    assert [(r.key, r.doc_id) for r in store.records()] == [("url-1", kept.doc_id)]
    assert detector.check("url-1", MUSEUM_UPDATED).status == REVISIT


def test_time_window_ignores_and_purges_old_documents(store):
    now = [1_000_000.0]
    detector = Detector(store, ttl=3600, clock=lambda: now[0])
    detector.check("old", text("marathon"))
    now[0] += 7200
    assert detector.check("new", reprint("marathon")).status == UNIQUE
    assert detector.purge() == 1
    assert store.count() == 1


@pytest.mark.parametrize("methods", [("nshash",), ("simhash",), ("sketch",)])
def test_each_method_alone_still_verifies(store, methods):
    detector = Detector(store, methods=methods)
    detector.check("a", "\n".join(text(n) for n in NAMES))
    verdict = detector.check("b", "\n".join(text(n) for n in NAMES).replace("，", "，据悉", 1))
    assert verdict.status == DUPLICATE and methods[0] in verdict.method


def test_invalid_settings_are_rejected_with_their_name():
    store = open_store("memory://")
    with pytest.raises(ValueError, match="methods"):
        Detector(store, methods=("minhash",))
    with pytest.raises(ValueError, match="ttl"):
        Detector(store, ttl=-1)
    with pytest.raises(ValueError, match="containment"):
        Thresholds(containment=1.5)
    with pytest.raises(ValueError, match="nshash n"):
        Recipe(nshash_n=0)


def test_check_texts_gives_the_verdicts_of_checks_one_by_one_in_order():
    from scrapy_neardup.engine.batching import check_texts

    documents = [(f"https://s{i % 3}.example/{name}/{i}", text(name)) for i, name in enumerate(list(ARTICLES) * 3)]
    with open_store("memory://", "one", Recipe()) as store:
        expected = [Detector(store).check(key, body).as_dict() for key, body in documents]
    with open_store("memory://", "batched", Recipe()) as store:
        got = [v.as_dict() for v in check_texts(Detector(store), iter(documents), size=4)]
    assert got == expected
    assert [v["status"] for v in got].count("unique") == len(ARTICLES)


def test_lone_surrogates_in_text_are_judged_not_failed():
    """Decoding debris (lone surrogates) used to make rjieba refuse the text; it is dropped by
    normalisation, and the article is judged like any other."""
    debris = "\ud800\udfff\udc00"
    body = text(next(iter(ARTICLES)))
    with open_store("memory://", "surrogates", Recipe()) as store:
        detector = Detector(store)
        first = detector.check("https://a.example/1", body.replace("，", "，" + debris, 3))
        again = detector.check("https://b.example/1", body)
    assert first.status == UNIQUE
    assert again.status == DUPLICATE and again.duplicate_of == "https://a.example/1"


def test_a_short_reprint_with_several_edits_is_a_duplicate(store):
    """Under 200 characters a reprint's banner and edits weigh more: its Jaccard with the first
    copy falls below one half while its containment stays high."""
    from support.corpus import BANNER, EDITOR

    from scrapy_neardup.newsworld import transforms

    detector = Detector(store)
    short = ARTICLES["library"][:2]
    first = detector.check("first", "\n".join(short))
    copy = "\n".join([BANNER, *transforms.spread_edits(list(short), 8), EDITOR])
    verdict = detector.check("copy", copy)
    assert first.chars < 200 and verdict.status == DUPLICATE, verdict
    assert verdict.jaccard < 0.5
