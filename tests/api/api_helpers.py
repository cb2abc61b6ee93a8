"""Shared test data and helpers for the API tests."""

from __future__ import annotations

from typing import Any

REVIEWERS = [
    {
        "id": "~Grace_Graph1",
        "name": "Grace Graph",
        "email": "grace@graphs.example.org",
        "affiliation": "Graph University",
        "publications": [
            {
                "title": "Graph neural networks for molecules",
                "abstract": "Message passing graph neural networks predict molecular properties.",
                "year": 2024,
            },
            {
                "title": "Spectral graph convolutions",
                "abstract": "Graph convolution in the spectral domain of the graph Laplacian.",
                "year": 2023,
            },
        ],
    },
    {
        "id": "~Victor_Vision1",
        "name": "Victor Vision",
        "email": "victor@vision.example.com",
        "affiliation": "Vision Institute",
        "publications": [
            {
                "title": "Convolutional networks for image segmentation",
                "abstract": "Pixel-wise image segmentation with convolutional encoder-decoders.",
                "year": 2024,
            },
            {
                "title": "Self-supervised visual features",
                "abstract": "Contrastive learning of image representations without labels.",
                "year": 2022,
            },
        ],
    },
    {
        "id": "~Rita_Reinforce1",
        "name": "Rita Reinforce",
        "email": "rita@rl.example.net",
        "affiliation": "Agents Lab",
        "publications": [
            {
                "title": "Policy gradients with baselines",
                "abstract": "Variance reduction for policy gradient reinforcement learning agents.",
                "year": 2024,
            },
            {
                "title": "Offline reinforcement learning",
                "abstract": "Learning policies from logged data with conservative value estimates.",
                "year": 2023,
            },
        ],
    },
    {
        "id": "~Lena_Language1",
        "name": "Lena Language",
        "email": "lena@nlp.example.edu",
        "affiliation": "Language Center",
        "publications": [
            {
                "title": "Transformers for machine translation",
                "abstract": "Attention-based transformer language models translate text.",
                "year": 2024,
            },
        ],
    },
]

SUBMISSIONS = [
    {
        "id": "P1",
        "title": "Graph neural networks on molecular graphs",
        "abstract": "We improve message passing graph networks for molecules.",
        "authors": ["Ann Author"],
    },
    {
        "id": "P2",
        "title": "Image segmentation with convolutional decoders",
        "abstract": "A convolutional decoder improves image segmentation.",
        "authors": ["Bob Author"],
    },
    {
        "id": "P3",
        "title": "Offline policy learning",
        "abstract": "Conservative reinforcement learning from logged data for agents.",
        "authors": ["Rita Reinforce"],
    },
    {
        "id": "P4",
        "title": "Language model translation with attention",
        "abstract": "Transformer language models for translation of text.",
        "authors": ["Cy Author"],
    },
]

TFIDF = {"method": "tfidf", "aggregation": "max"}


def load_venue(api: Any, venue_id: str, chair: str) -> None:
    """Upload the tiny corpus and compute affinities (inline jobs)."""
    response = api.call("POST", f"/venues/{venue_id}/reviewers", chair, json=REVIEWERS)
    assert response.status_code == 200, response.text
    response = api.call("POST", f"/venues/{venue_id}/submissions", chair, json=SUBMISSIONS)
    assert response.status_code == 200, response.text
    response = api.call("POST", f"/venues/{venue_id}/affinity/jobs", chair, json={"config": TFIDF})
    assert response.status_code == 202, response.text
    assert response.json()["state"] == "succeeded", response.json()


# ---- levels: area chairs and senior area chairs ------------------------------------------

AREA_CHAIRS = [
    {
        "id": "~Alan_Chair1",
        "name": "Alan Chair",
        "email": "alan@graphs.example.org",
        "affiliation": "Graph University",
        "publications": [
            {
                "title": "Convolutional networks for images and graphs",
                "abstract": "Image segmentation with convolutional decoders and graph networks.",
                "year": 2024,
            }
        ],
    },
    {
        "id": "~Bea_Chair1",
        "name": "Bea Chair",
        "email": "bea@agents.example.net",
        "affiliation": "Agents Lab",
        "publications": [
            {
                "title": "Agents that translate",
                "abstract": "Reinforcement learning agents and transformer translation of text.",
                "year": 2024,
            }
        ],
    },
]
SENIOR_AREA_CHAIRS = [
    {
        "id": "~Sam_Senior1",
        "name": "Sam Senior",
        "email": "sam@senior.example.com",
        "affiliation": "Senior College",
        "publications": [
            {
                "title": "A survey of learning",
                "abstract": "Graph networks, image segmentation, reinforcement learning, language.",
                "year": 2020,
            }
        ],
    },
    {
        "id": "~Sue_Senior1",
        "name": "Sue Senior",
        "email": "sue@senior.example.com",
        "affiliation": "Senior College",
        "publications": [
            {
                "title": "Language and agents",
                "abstract": "Policy learning for agents and transformer language models.",
                "year": 2021,
            }
        ],
    },
]


def load_levels(api: Any, venue_id: str, chair: str) -> None:
    """Upload the area chairs (and Grace Graph, a reviewer too) and the senior area chairs
    into their pools and compute each pool's affinities (the reviewers' with
    :func:`load_venue` first)."""
    base = f"/venues/{venue_id}"
    for pool, people in (
        ("area_chairs", [*AREA_CHAIRS, REVIEWERS[0]]),
        ("senior_area_chairs", SENIOR_AREA_CHAIRS),
    ):
        response = api.call("POST", f"{base}/reviewers", chair, params={"pool": pool}, json=people)
        assert response.status_code == 200, response.text
        response = api.call(
            "POST", f"{base}/affinity/jobs", chair, json={"config": TFIDF, "pool": pool}
        )
        assert response.status_code == 202 and response.json()["state"] == "succeeded", (
            response.text
        )


def solve(api: Any, venue_id: str, chair: str, **params: Any) -> int:
    """Solve (inline job) and return the new run's id."""
    response = api.call("POST", f"/venues/{venue_id}/assignments", chair, json=params)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"])


def publish(api: Any, venue_id: str, chair: str, run: int) -> None:
    response = api.call(
        "POST",
        f"/venues/{venue_id}/assignments/{run}/deploy",
        chair,
        json={"assignment_id": run, "version": 1},
    )
    assert response.status_code == 200, response.text


def person_token(api: Any, venue_id: str, chair: str, role: str, person_id: str) -> str:
    response = api.call(
        "POST",
        f"/venues/{venue_id}/tokens",
        chair,
        json={"name": f"{role} {person_id}", "role": role, "person_id": person_id},
    )
    assert response.status_code == 201, response.text
    return str(response.json()["token"])
