"""frontend.session_store: private files, named by a digest, gone after logout or age."""

from __future__ import annotations

import os
import time

from frontend.session_store import SessionStore, new_session_id


def test_a_record_is_private_and_not_named_by_its_id(tmp_path):
    store = SessionStore.under(tmp_path, max_age_s=60)
    session_id = new_session_id()
    store.save(session_id, {"username": "ops", "token": "t-1"})
    (path,) = store.directory.iterdir()
    assert session_id not in path.name
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(store.directory.stat().st_mode & 0o777) == "0o700"
    assert store.load(session_id) == {"username": "ops", "token": "t-1"}
    store.delete(session_id)
    assert store.load(session_id) is None and list(store.directory.iterdir()) == []


def test_a_record_older_than_the_token_lifetime_is_gone_and_pruned(tmp_path):
    store = SessionStore.under(tmp_path, max_age_s=60)
    old, fresh = new_session_id(), new_session_id()
    store.save(old, {"token": "old"})
    store.save(fresh, {"token": "fresh"})
    long_ago = time.time() - 61
    os.utime(store._path(old), (long_ago, long_ago))
    assert store.load(old) is None and store.load(fresh) == {"token": "fresh"}
    store.prune()
    assert list(store.directory.iterdir()) == [store._path(fresh)]


def test_an_unknown_or_damaged_record_is_no_session(tmp_path):
    store = SessionStore.under(tmp_path, max_age_s=60)
    assert store.load("never-issued") is None
    store.prune()  # no directory yet: nothing to do
    session_id = new_session_id()
    store.save(session_id, {"token": "t"})
    store._path(session_id).write_text("{not json")
    assert store.load(session_id) is None
