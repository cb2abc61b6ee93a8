"""Before an affinity job starts: how long it would take (texts not yet cached x the
model's texts/s), a warning with the faster model above ten minutes, refused as the job
would be."""

from __future__ import annotations

from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF
from conftest import Api

MINILM = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"


def _estimate(api: Api, venue: str, token: str, body: dict) -> dict:
    response = api.call("POST", f"/venues/{venue}/affinity/estimate", token, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_estimate_counts_texts_not_cached_and_starts_nothing(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    empty = api.call("POST", f"/venues/{venue}/affinity/estimate", chair, json={})
    assert empty.status_code == 409 and "has no reviewers" in empty.json()["detail"]
    for kind, items in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
        assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
    texts = sum(len(r["publications"]) for r in REVIEWERS) + len(SUBMISSIONS)
    mpnet = _estimate(api, venue, chair, {"config": {"method": "embedding", "model": MPNET}})
    assert (mpnet["model"], mpnet["texts_total"], mpnet["texts_to_embed"]) == (MPNET, texts, texts)
    assert mpnet["rate_source"] == "known" and mpnet["texts_per_second"] > 0
    assert mpnet["seconds"] == round(texts / mpnet["texts_per_second"], 1)
    assert mpnet["warn"] is False and mpnet["warning"] is None and mpnet["faster_model"] is None
    assert mpnet["alternatives"][MINILM] < mpnet["seconds"]
    tfidf = _estimate(api, venue, chair, {"config": TFIDF})
    assert tfidf["seconds"] == 0 and tfidf["model"] is None and "TF-IDF only" in tfidf["message"]
    assert api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"] == 0
    # what a job embedded is cached: the same estimate then has nothing left to embed
    minilm = {"config": {"method": "embedding", "model": MINILM}}
    assert _estimate(api, venue, chair, minilm)["texts_to_embed"] == texts
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json=minilm).json()
    assert job["state"] == "succeeded", job
    again = _estimate(api, venue, chair, minilm)
    assert (again["texts_cached"], again["texts_to_embed"], again["seconds"]) == (texts, 0, 0)
    # chairs only, refused as the job would be
    assert (
        api.call("POST", f"/venues/{venue}/affinity/estimate", viewer, json={}).status_code == 403
    )
    for body, field in (
        ({"config": {"model": "my-model"}}, "config.model"),
        ({"config": {"temperature": -1}}, "temperature"),
        ({"config": {}, "pool": "everyone"}, "pool"),
        ({"config": {"device": "cuda"}}, "device"),
    ):
        response = api.call("POST", f"/venues/{venue}/affinity/estimate", chair, json=body)
        assert response.status_code == 422 and field in response.text, (body, response.text)


def test_above_ten_minutes_the_estimate_warns_and_names_the_faster_model(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    reviewers = [
        {
            "id": f"~Many_Papers{i}",
            "name": f"Many Papers {i}",
            "email": f"many{i}@example.org",
            "publications": [
                {"title": f"Study {i}-{j} of graphs", "abstract": f"Graph {i} {j}.", "year": 2020}
                for j in range(150)
            ],
        }
        for i in range(10)
    ]
    for kind, items in (("reviewers", reviewers), ("submissions", SUBMISSIONS)):
        response = api.call("POST", f"/venues/{venue}/{kind}", chair, json=items)
        assert response.is_success, response.text
    slow = _estimate(api, venue, chair, {"config": {"method": "embedding", "model": MPNET}})
    assert slow["texts_to_embed"] == 1504 and slow["seconds"] > slow["warn_above_seconds"] == 600
    assert slow["warn"] is True and slow["warning"] == slow["message"]
    assert slow["faster_model"]["name"] == MINILM
    assert slow["faster_model"]["seconds"] < 600
    assert f"{MINILM} would take about" in slow["message"]
    fast = _estimate(api, venue, chair, {"config": {"method": "embedding", "model": MINILM}})
    assert fast["warn"] is False and fast["faster_model"] is None


def test_estimate_reads_the_texts_a_job_embeds_without_building_the_corpus(api: Api) -> None:
    """The estimate's column-only read gives venue_texts of the loaded corpus, string for
    string (unicode, empty and padded abstracts, titles ending in punctuation, duplicates)."""
    from recommender.affinity.estimate import estimate_scoring, estimate_texts, venue_texts
    from reviewer_recommender.storage.repository import load_corpus, load_corpus_texts

    venue, chair, _ = api.new_venue()
    shared = {"title": "Graphes  et réseaux ", "abstract": "Ünïcödé 中文 abstract. ", "year": 2020}
    reviewers = [
        {
            "id": "~Zoë_Z1",
            "name": "Zoë",
            "publications": [shared, {"title": "Why?", "abstract": "Because."}],
        },
        {
            "id": "~Al_A1",
            "name": "Al",
            "publications": [shared, {"title": "Only a title", "abstract": ""}],
        },
        {"id": "~No_Pubs1", "name": "No Pubs", "publications": []},
        {"id": "~Ab_B1", "name": "Ab", "publications": [{"title": "", "abstract": " body only"}]},
    ]
    submissions = [
        {"id": "P2", "title": "Graphes  et réseaux ", "abstract": "Ünïcödé 中文 abstract. "},
        {"id": "P1", "title": "Empty abstract:", "abstract": ""},
        {"id": "P3", "title": "Colon:", "abstract": "then text"},
    ]
    for kind, items in (("reviewers", reviewers), ("submissions", submissions)):
        assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
    with api.database.session() as session:
        corpus = load_corpus(session, venue)
        n_reviewers, n_submissions, texts = load_corpus_texts(session, venue)
        assert (n_reviewers, n_submissions) == (4, 3)
        assert texts == venue_texts(*corpus)
        assert "Graphes et réseaux. Ünïcödé 中文 abstract." in texts and "Why? Because." in texts
        assert estimate_texts(texts) == estimate_scoring(*corpus)
        assert load_corpus_texts(session, venue, "area_chairs") == (0, 3, texts[-3:])
    body = {"config": {"method": "embedding", "model": MINILM}}
    assert _estimate(api, venue, chair, body)["texts_total"] == len(set(texts)) == 6
