"""The Redis Cluster store's own behaviour, on a real local cluster (three masters, three
replicas): the URI, keys spread over every master, a master killed mid-run, a master that lost
its data. The store contract (test_stores.py) and the races (test_redis_race.py) run on it too."""

from __future__ import annotations

import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from urllib.parse import quote

import pytest
import redis
from redis.crc import key_slot
from support import news_corpus
from support.passwords import SECRET, WRONG
from support.processes import racing_processes
from support.redis_cluster import RedisClusterGroup, start_cluster
from test_redis_faults import _refusal
from test_redis_race import _copies, _Precomputed, _story

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Fingerprinter, StoreFormatError, StoreUnavailable, open_store
from scrapy_neardup.engine.prefer import prefer_longest
from scrapy_neardup.stores import redact
from scrapy_neardup.stores.base import StoreLost
from scrapy_neardup.stores.redis import RedisClusterStore
from scrapy_neardup.stores.redis.cluster import parse_cluster_uri


@pytest.fixture(scope="module")
def own_cluster():
    """A cluster of this module's own, for tests that kill or flush a master."""
    group = start_cluster()
    yield group
    group.stop()


def stories(count: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """(key, story, text): ``count`` distinct stories, each followed later by two reprints."""
    rng = random.Random(seed)
    texts = [_story(rng) for _ in range(count)]
    stream = [(f"https://a.example/{n}", f"s{n}", text) for n, text in enumerate(texts)]
    for n, text in enumerate(texts):
        copies = _copies(text, rng)
        stream.insert(min(len(stream), 2 * n + 3), (f"https://b.example/{n}", f"s{n}", copies[0]))
        stream.append((f"https://c.example/{n}", f"s{n}", copies[2]))
    return stream


def _on_an_empty_cluster(group: RedisClusterGroup, count: int, seed: int) -> list:
    """``count`` distinct stories as (key, fingerprint), once ``group`` is ok and emptied."""
    group.wait_ok()
    group.flush()
    fingerprinter = Fingerprinter()
    rng = random.Random(seed)
    return [(f"https://a.example/{n}", fingerprinter.fingerprint(_story(rng))) for n in range(count)]


def test_the_uri_names_any_nodes_and_the_store_finds_the_rest(redis_cluster, cluster_url):
    one, three = redis_cluster.url(0), redis_cluster.url(1, 3, 5)
    with open_store(one, "uri") as store:
        Detector(store).check("https://a.example/1", news_corpus.ARTICLES["rail"])
    with open_store(three, "uri") as store:  # other nodes, replicas among them: the same store
        assert Detector(store).check("https://b.example/1", news_corpus.ARTICLES["rail"]).status == DUPLICATE
    target = parse_cluster_uri("redis+cluster://u:p%23w@h1:7000,[::1]:7001,h3/?shards=4096")
    assert target.nodes == (("h1", 7000), ("::1", 7001), ("h3", 6379))
    assert (target.username, target.password, target.shards) == ("u", "p#w", 4096)
    assert redact("redis+cluster://:secret@h1:7000,h2:7001/") == "redis+cluster://:***@h1:7000,h2:7001/"
    for bad, said in [
        ("redis+cluster://h1:7000/3", "one database"),
        ("redis+cluster://h1:7000/?db=1", "takes only shards and slots"),
        ("redis+cluster://h1:x/", "not a number"),
    ]:
        with pytest.raises(StoreUnavailable, match=said):
            open_store(bad)


def test_the_slots_a_namespace_uses_are_fixed_when_it_is_made(redis_cluster, cluster_url):
    """``slots`` spreads a new namespace over that many evenly spaced hash slots; later opens
    read it from the namespace, and one that asks for another number is refused."""
    few = redis_cluster.url(0, query="slots=4")
    with open_store(few, "few") as store:
        Detector(store).check("https://a.example/1", news_corpus.ARTICLES["rail"])
    client = redis_cluster.client()
    used = {client.keyslot(key) for key in client.keys(target_nodes=client.ALL_NODES) if b":few:" in key}
    assert used == {0, 4096, 8192, 12288}  # the record's and buckets' keys, in the four slots
    with open_store(cluster_url, "few") as store:  # no slots given: the namespace's own
        assert Detector(store).check("https://b.example/1", news_corpus.ARTICLES["rail"]).status == DUPLICATE
    with pytest.raises(StoreFormatError, match=r"and 4 slots, this process asks for .* and 8 slots"):
        open_store(redis_cluster.url(0, query="slots=8"), "few")
    with pytest.raises(StoreUnavailable, match="power of two"):
        open_store(redis_cluster.url(0, query="slots=3"), "other")


def test_a_call_with_more_shard_hashes_than_one_byte_indexes_is_split(redis_cluster, cluster_url):
    """A namespace in one slot: a batch files under far more than 254 shard hashes of that slot,
    and a purge takes them all out again, each in as many calls as the hashes need."""
    fingerprinter = Fingerprinter()
    rng = random.Random(11)
    texts = [_story(rng) for _ in range(40)]
    with open_store(redis_cluster.url(0, query="slots=1"), "one-slot") as store:
        detector = Detector(store)
        assert all(
            v.status == UNIQUE
            for v in detector.check_many(
                [(f"https://a.example/{n}", fingerprinter.fingerprint(t)) for n, t in enumerate(texts)]
            )
        )
        copies = [
            (f"https://b.example/{n}", fingerprinter.fingerprint(_copies(t, rng)[0])) for n, t in enumerate(texts)
        ]
        assert all(v.status == DUPLICATE for v in detector.check_many(copies))
        assert store.purge(time.time() + 1) == len(texts) and store.count() == 0
        assert all(v.status == UNIQUE for v in detector.check_many(copies))  # nothing of them is left


def test_a_purge_of_documents_spread_thin_over_the_slots_takes_them_in_one_batch(own_cluster: RedisClusterGroup):
    """A batch of purge is counted in documents, not slots: 300 documents, a few in each
    slot's time index, go out in one batch, whose bucket entries take one script call in each
    of the 1,024 slots at most, and whose records one in each of their slots. Batches of 32
    slots' few documents each called most slots again, for every batch."""
    documents = _on_an_empty_cluster(own_cluster, 300, seed=5)
    with open_store(own_cluster.url(0, 1, 2, 3, 4, 5), "thin") as store:
        assert all(v.status == UNIQUE for v in Detector(store).check_many(documents))
        masters = [node.kept_client() for node in own_cluster.masters()]
        for master in masters:
            master.config_resetstat()
        assert store.purge(time.time() + 1) == len(documents)
        # Calls that ran (a master refuses each call of a script it has not loaded yet, once)
        stats = [master.info("commandstats").get("cmdstat_evalsha", {}) for master in masters]
        assert sum(s.get("calls", 0) - s.get("failed_calls", 0) for s in stats) <= 1024 + len(documents)
        assert store.count() == 0
        assert all(v.status == UNIQUE for v in Detector(store).check_many(documents))  # nothing of them is left


def test_calls_a_master_without_their_script_refused_are_made_again_in_their_order(redis_cluster, cluster_url):
    """A replica promoted in a failover has none of the scripts (they are not replicated), and
    the batch's writes are sent to it again in their order: record written undecided, then kept.
    When it refuses the first call's script but runs the second's, both go again, in order,
    rather than the first alone after the second (a kept record turned undecided, lost when its
    lease ends)."""
    with open_store(cluster_url, "noscript") as store:
        router = store._router
        written = router.script("redis.call('SET', KEYS[1], 'u') return 1")
        kept = router.script("redis.call('APPEND', KEYS[1], 'k') return 1")
        key = b"{noscript}record"
        slot = key_slot(key)
        host, _, port = router.master_of(slot).rpartition(":")
        with redis.Redis(host=host, port=int(port), password=redis_cluster.password) as master:
            master.script_flush()
            master.script_load("redis.call('APPEND', KEYS[1], 'k') return 1")  # the second only
            router.run([(slot, ("EVALSHA", written, 1, key)), (slot, ("EVALSHA", kept, 1, key))])
            assert master.get(key) == b"uk"


def test_calls_after_one_refused_while_its_slot_moves_are_made_again_in_their_order(redis_cluster, cluster_url):
    """While a slot migrates, its master refuses a call whose keys it holds only in part
    (TRYAGAIN) yet runs a later call to a key it holds. The refused call goes again once the
    slot is settled, and the later one after it, as they were sent: the last write stands."""
    with open_store(cluster_url, "moving") as store:
        router = store._router
        held, gone = b"{moving}record", b"{moving}elsewhere"
        slot = key_slot(held)
        source = router.master_of(slot)
        target = next(node for node in redis_cluster.masters() if f"127.0.0.1:{node.port}" != source)
        host, _, port = source.rpartition(":")
        with redis.Redis(host=host, port=int(port), password=redis_cluster.password) as master:
            master.set(held, b"old")
            with target.client() as client:
                target_id = client.execute_command("CLUSTER", "MYID").decode()
            master.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
            settled = threading.Timer(0.3, master.execute_command, ("CLUSTER", "SETSLOT", slot, "STABLE"))
            settled.start()
            try:
                router.run([(slot, ("MSET", held, b"first", gone, b"first")), (slot, ("SET", held, b"last"))])
            finally:
                settled.join()
                master.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
            assert master.get(held) == b"last"
            master.delete(held, gone)


def test_unreachable_nodes_are_named(capsys):
    with pytest.raises(StoreUnavailable, match=r"cluster nodes 127\.0\.0\.1:1,127\.0\.0\.1:2"):
        open_store("redis+cluster://:pw@127.0.0.1:1,127.0.0.1:2/")


@pytest.fixture(scope="module")
def secured_cluster():
    """A cluster whose nodes require a password (requirepass, masterauth)."""
    group = start_cluster(password=SECRET)
    yield group
    group.stop()


def test_a_wrong_or_missing_password_says_so_in_one_line(secured_cluster, capsys):
    host = f"127.0.0.1:{secured_cluster.nodes[0].port}"
    nodes = f"cluster nodes {host}"
    wrong = _refusal(f"redis+cluster://:{quote(WRONG, safe='')}@{host}/", capsys)
    assert f"authentication failed at {nodes}: wrong password or user" in wrong and "\n" not in wrong, wrong
    missing = _refusal(f"redis+cluster://{host}/", capsys)
    assert f"{nodes} requires a password, and the URI gives none" in missing and "\n" not in missing, missing
    with open_store(f"redis+cluster://:{quote(SECRET, safe='')}@{host}/", "secured") as store:
        detector = Detector(store)
        text = news_corpus.ARTICLES["rail"]
        assert [detector.check(key, text).status for key in ("a", "b")] == [UNIQUE, DUPLICATE]


@pytest.mark.parametrize("user", ["", "default"])
def test_a_password_sent_to_a_cluster_without_one_is_refused(redis_cluster, capsys, user):
    """The bare AUTH is refused by such a node, the form with a user accepted: both are told
    as one Redis tells a password it has no use for."""
    host = f"127.0.0.1:{redis_cluster.nodes[0].port}"
    message = _refusal(f"redis+cluster://{user}:{quote(SECRET, safe='')}@{host}/", capsys)
    assert f"gives a password, but cluster nodes {host} requires none and accepts any" in message, message
    assert "\n" not in message


def test_keys_spread_over_every_master(redis_cluster, cluster_url):
    """No namespace-wide hash tag: each master holds a share of the keys and of the memory
    within 25% of the mean (benchmarks/redis_cluster.py measures it at 100,000 documents)."""
    masters = redis_cluster.masters()
    before = {node.port: node.client().info("memory")["used_memory"] for node in masters}
    with open_store(cluster_url, "spread") as store:
        detector = Detector(store)
        fingerprinter = Fingerprinter()
        rng = random.Random(3)
        documents = [(f"https://a.example/{n}", fingerprinter.fingerprint(_story(rng))) for n in range(1500)]
        for start in range(0, len(documents), 100):
            assert all(v.status == UNIQUE for v in detector.check_many(documents[start : start + 100]))
    keys = {node.port: node.client().dbsize() for node in masters}
    grown = {node.port: node.client().info("memory")["used_memory"] - before[node.port] for node in masters}
    for figures in (keys, grown):
        mean = sum(figures.values()) / len(figures)
        assert all(abs(value - mean) <= 0.25 * mean for value in figures.values()), figures


RACERS = 4
RACE_BATCH = 8


def _stream_racer(uri: str, share: list, barrier, results) -> None:
    """Checks its share of the stream in batches, from the moment every racer is ready."""
    with open_store(uri, "stream") as store:
        detector = Detector(store, fingerprinter=_Precomputed())
        barrier.wait(timeout=120)
        verdicts = []
        for start in range(0, len(share), RACE_BATCH):
            verdicts += [
                (v.key, v.status, v.duplicate_of) for v in detector.check_many(share[start : start + RACE_BATCH])
            ]
        results.put(verdicts)


def test_four_processes_on_one_stream_keep_what_one_redis_keeps(redis_url, cluster_url):
    """One stream of stories and their reprints, dealt round-robin to four processes that check
    their shares at once on the cluster (a story and its reprint are often in flight in two
    processes together): every story is kept exactly once, no document is called a duplicate
    of another story, and each story is kept as many times as by one process reading the
    stream alone on one Redis (within 0.5% of the documents; which copy of a story comes first
    may differ in a race)."""
    stream = stories(120)
    fingerprinter = Fingerprinter()
    documents = [(key, fingerprinter.fingerprint(text)) for key, _, text in stream]
    story_of = {key: story for key, story, _ in stream}
    with open_store(redis_url, "stream") as store:
        alone = {v.key: v.status for v in Detector(store).check_many(documents)}
    context = racing_processes()
    barrier, results = context.Barrier(RACERS), context.Queue()
    racers = [
        context.Process(target=_stream_racer, args=(cluster_url, documents[n::RACERS], barrier, results))
        for n in range(RACERS)
    ]
    for racer in racers:
        racer.start()
    verdicts = [verdict for _ in racers for verdict in results.get(timeout=300)]
    for racer in racers:
        racer.join(60)
        assert racer.exitcode == 0
    assert len(verdicts) == len(documents)
    kept = Counter(story_of[key] for key, status, _ in verdicts if status == UNIQUE)
    assert set(kept) == set(story_of.values()) and set(kept.values()) == {1}  # each story once, none lost
    assert all(story_of[of] == story_of[key] for key, status, of in verdicts if status == DUPLICATE)
    kept_alone = Counter(story_of[key] for key, status in alone.items() if status == UNIQUE)
    differ = sum(abs(kept[story] - kept_alone[story]) for story in set(story_of.values()))
    assert differ <= 0.005 * len(documents), f"{differ} of {len(documents)} verdicts differ from one Redis"
    with open_store(cluster_url, "stream") as store:
        assert store.count() == len(kept)


class _StepByStep(RedisClusterStore):
    """The cluster store with a hook between the one-slot steps of a replacement: ``before_mark``
    runs after the claim, before the record is marked as replacing the copy; ``waiting`` is set
    when this store's copy, having lost a claim, waits for the claimer's mark."""

    before_mark: Callable[[], None] | None = None
    waiting: threading.Event | None = None

    def _rewrite(self, record, log):
        if record.replaces and self.before_mark is not None:
            self.before_mark()
        return super()._rewrite(record, log)

    def _wait_for_mark(self, holder, old_id, deadline):
        if self.waiting is not None:
            self.waiting.set()
        super()._wait_for_mark(holder, old_id, deadline)


def test_a_copy_that_loses_the_claim_between_the_steps_of_a_replacement_joins_the_winner(cluster_url):
    """Two longer copies replace a portal's excerpt (``NEARDUP_PREFER = "longest"``); the second
    claims the excerpt after the first claimed it but before the first is marked as its
    replacement. Judged again, the second is a duplicate of the first, with the story's id: the
    first's story, not a story of its own, and never a duplicate of the excerpt on its way out."""
    text = _story(random.Random(11), names=3)
    excerpt = "来源：门户网\n" + "\n".join(text.split("\n")[:2])
    fingerprinter = Fingerprinter()
    classes = {"redis+cluster": _StepByStep}
    with (
        open_store(cluster_url, "steps", stores=classes) as first_store,
        open_store(cluster_url, "steps", stores=classes) as second_store,
    ):
        story = Detector(first_store, fingerprinter=fingerprinter).check("portal/a", excerpt)
        second_store.waiting = threading.Event()
        late: list = []

        def second_copy_claims() -> None:
            detector = Detector(second_store, fingerprinter=fingerprinter, prefer=prefer_longest)
            thread = threading.Thread(target=lambda: late.append(detector.check("site-b/a", text)))
            thread.start()
            assert second_store.waiting.wait(30), "the second copy did not lose a claim to the first"
            late.append(thread)

        first_store.before_mark = second_copy_claims
        detector = Detector(first_store, fingerprinter=fingerprinter, prefer=prefer_longest)
        won = detector.check("site-a/a", f"来源：新华网\n{text}\n（编辑：张华）")
        first_store.before_mark = None
        late.pop().join(60)
        lost = late.pop()
        assert won.status == UNIQUE and won.replaces == "portal/a" and won.similar_id == story.doc_id
        assert lost.status == DUPLICATE and lost.duplicate_of == "site-a/a" and lost.similar_id == story.doc_id
        assert [r.key for r in first_store.records()] == ["site-a/a"]


def test_a_master_killed_mid_run_loses_no_story_and_keeps_none_twice(own_cluster: RedisClusterGroup):
    """A master is killed (SIGKILL) while a batch run is under way; its replica is promoted,
    the run goes on, and every story is kept exactly once: none lost, none stored twice."""
    own_cluster.wait_ok()
    own_cluster.flush()
    stream = stories(150)
    fingerprinter = Fingerprinter()
    documents = [(key, fingerprinter.fingerprint(body)) for key, _, body in stream]
    story_of = {key: story for key, story, _ in stream}
    verdicts = []
    checked = threading.Event()

    def run() -> None:
        with open_store(own_cluster.url(0, 1, 2, 3, 4, 5), "failover") as store:
            detector = Detector(store)
            for start in range(0, len(documents), 10):
                verdicts.extend(detector.check_many(documents[start : start + 10]))
                if len(verdicts) >= len(documents) // 3:
                    checked.set()
                time.sleep(0.05)

    worker = threading.Thread(target=run)
    worker.start()
    assert checked.wait(300)
    victim = own_cluster.masters()[1]
    victim.kill()
    worker.join(600)
    assert not worker.is_alive() and len(verdicts) == len(documents)
    kept = [story_of[v.key] for v in verdicts if v.status == UNIQUE]
    assert sorted(kept) == sorted(set(story_of.values()))  # each story once
    assert all(story_of[v.duplicate_of] == story_of[v.key] for v in verdicts if v.status == DUPLICATE)
    with open_store(own_cluster.url(0, 1, 2, 3, 4, 5), "failover") as store:
        # No record is left undecided: it would vanish when its lease ends, a kept story too.
        deadlines = [(slot, ("ZCARD", store._in_slot(slot, b"p"))) for slot in store._used_slots()]
        assert sum(store._router.run(deadlines)) == 0
        assert store.count() == len(kept)
        assert {record.key for record in store.records()} == {v.key for v in verdicts if v.status == UNIQUE}
        detector = Detector(store)
        again = detector.check_many([(f"https://d.example/{n}", fp) for n, (_, fp) in enumerate(documents)])
        assert all(v.status == DUPLICATE for v in again)  # every stored story still catches its copies
    victim.start()  # it comes back as a replica of the master that took its place
    own_cluster.wait_ok(60)


def test_a_master_killed_while_it_waits_for_its_replica_loses_no_story(own_cluster: RedisClusterGroup):
    """A master is killed while the batch WAITs for its replica, which has not got the batch's
    writes (its link to the master is cut, and it is stopped, before the batch). Once the
    replica is promoted, the batch's writes to that master's slots are sent to it again: every
    story the batch kept is stored, and decided, and the ids it took are not handed out again
    (the master is the one serving the namespace's id counter)."""
    documents = _on_an_empty_cluster(own_cluster, 31, seed=11)
    _, warm = documents.pop()  # a story more, to warm the connections
    with open_store(own_cluster.url(0, 1, 2, 3, 4, 5), "waited") as store:
        counter = store._router.master_of(store._control_slot())
    victim = next(node for node in own_cluster.nodes if f"127.0.0.1:{node.port}" == counter)
    replica = next(
        node
        for node in own_cluster.nodes
        if node is not victim and node.answers() and node.client().info("replication").get("master_port") == victim.port
    )
    verdicts = []
    with open_store(own_cluster.url(0, 1, 2, 3, 4, 5), "waited") as store:
        detector = Detector(store)
        detector.check_many([("https://warm.example/", warm)])
        assert replica.process is not None
        replica.process.send_signal(signal.SIGSTOP)
        try:
            with victim.client() as client:
                client.client_kill_filter(_type="replica")
                worker = threading.Thread(target=lambda: verdicts.extend(detector.check_many(documents)))
                worker.start()
                deadline = time.monotonic() + 30
                while client.info("clients")["blocked_clients"] < 1:  # the batch's WAIT
                    assert time.monotonic() < deadline and worker.is_alive()
                    time.sleep(0.002)
            victim.kill()
        finally:
            replica.process.send_signal(signal.SIGCONT)
        worker.join(120)
    assert not worker.is_alive() and [v.status for v in verdicts] == [UNIQUE] * len(documents)
    deadline = time.monotonic() + 60
    while replica.client().info("replication").get("role") != "master":  # promoted, before the victim is back
        assert time.monotonic() < deadline
        time.sleep(0.1)
    victim.start()  # it comes back as a replica of the master that took its place
    own_cluster.wait_ok(60)
    with open_store(own_cluster.url(0, 1, 2, 3, 4, 5), "waited") as store:
        deadlines = [(slot, ("ZCARD", store._in_slot(slot, b"p"))) for slot in store._used_slots()]
        assert sum(store._router.run(deadlines)) == 0
        assert {record.key for record in store.records()} >= {key for key, _ in documents}
        assert int(store._router.run([(store._control_slot(), ("GET", store._key("n")))])[0]) == 1 + len(documents)


def test_a_master_that_lost_its_data_stops_the_store(own_cluster: RedisClusterGroup):
    """A master flushed (or restarted without persistence) has lost its slots' markers: the
    process using the store stops when it next writes there, and a new open is refused."""
    own_cluster.wait_ok()
    own_cluster.flush()
    with open_store(own_cluster.url(0), "lost") as store:
        detector = Detector(store)
        fingerprinter = Fingerprinter()
        rng = random.Random(5)
        detector.check_many([(f"https://a.example/{n}", fingerprinter.fingerprint(_story(rng))) for n in range(20)])
        with own_cluster.masters()[0].client() as client:
            client.flushall()
        with pytest.raises(StoreLost, match="lost its data"):
            detector.check_many([(f"https://b.example/{n}", fingerprinter.fingerprint(_story(rng))) for n in range(20)])
    with pytest.raises(
        StoreLost, match=r"masters? .* lost the namespace's marker|master serving its meta lost its data"
    ):
        open_store(own_cluster.url(0), "lost")


def test_a_node_that_keeps_nothing_across_a_restart_is_refused_unless_allowed(redis_cluster, cluster_url):
    """Every node is checked, replicas too: one that would come back empty is named."""
    replica = next(node for node in redis_cluster.nodes if node not in redis_cluster.masters())
    with replica.client() as client:
        client.config_set("appendonly", "no")
        client.config_set("save", "")
    try:
        with pytest.raises(StoreUnavailable, match=rf"127\.0\.0\.1:{replica.port} keeps no data across a restart"):
            open_store(cluster_url, "persistence")
        open_store(cluster_url, "persistence", redis_allow_no_persistence=True).close()
    finally:
        with replica.client() as client:
            client.config_set("appendonly", "yes")
