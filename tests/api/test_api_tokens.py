"""Tokens: revoke (API and CLI), expiry, listing by name and prefix, create-token's venue
checks; the CLI never prints a traceback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import Api
from sqlalchemy import update

from reviewer_recommender.cli.main import main
from reviewer_recommender.services.tokens import create_token
from reviewer_recommender.storage.models import ApiToken, Venue


def test_admin_lists_tokens_by_prefix_and_never_their_secrets(api: Api) -> None:
    venue, _chair, _viewer = api.new_venue()
    created = api.call(
        "POST",
        f"/venues/{venue}/tokens",
        api.admin,
        json={"name": "pc-member", "role": "viewer", "expires_in_days": 30},
    )
    assert created.status_code == 201, created.text
    token = created.json()
    assert token["token"].startswith(token["prefix"]) and len(token["prefix"]) == 12
    expires = datetime.fromisoformat(token["expires_at"])
    assert timedelta(days=29) < expires - datetime.now(UTC) <= timedelta(days=30)

    listing = api.call("GET", "/tokens", api.admin, params={"venue_id": venue}).json()
    assert {t["name"] for t in listing["items"]} == {
        f"chair@{venue}",
        f"viewer@{venue}",
        "pc-member",
    }
    assert token["token"] not in str(listing) and "token_hash" not in str(listing)
    by_prefix = api.call("GET", "/tokens", api.admin, params={"prefix": token["prefix"]}).json()
    assert [(t["id"], t["state"], t["created_by"]) for t in by_prefix["items"]] == [
        (token["id"], "active", "admin")
    ]
    by_name = api.call("GET", "/tokens", api.admin, params={"name": "pc-member"}).json()
    assert by_name["total"] == 1
    me = api.call("GET", "/me", token["token"]).json()
    assert me["token_id"] == token["id"] and me["expires_at"] is not None


def test_revoked_and_expired_tokens_are_refused(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    assert api.call("GET", f"/venues/{venue}", viewer).status_code == 200
    viewer_id = api.call("GET", "/me", viewer).json()["token_id"]
    for token in (chair, viewer):
        assert api.call("GET", "/tokens", token).status_code == 403
        assert api.call("POST", f"/tokens/{viewer_id}/revoke", token).status_code == 403
    revoked = api.call("POST", f"/tokens/{viewer_id}/revoke", api.admin)
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert revoked.json()["revoked_by"] == "admin" and revoked.json()["revoked_at"]
    refused = api.call("GET", f"/venues/{venue}", viewer)
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    again = api.call("POST", f"/tokens/{viewer_id}/revoke", api.admin)
    assert again.status_code == 200 and again.json()["state"] == "revoked"
    assert api.call("POST", "/tokens/999999/revoke", api.admin).status_code == 404
    assert api.call("POST", f"/tokens/{2**40}/revoke", api.admin).status_code == 422
    actions = [
        e["action"] for e in api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
    ]
    assert actions.count("token.revoke") == 1

    chair_id = api.call("GET", "/me", chair).json()["token_id"]
    with api.database.session() as session:
        session.execute(
            update(ApiToken)
            .where(ApiToken.id == chair_id)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
        session.commit()
    expired = api.call("GET", f"/venues/{venue}", chair)
    assert expired.status_code == 401 and "expired" in expired.json()["detail"]
    active = api.call("GET", "/tokens", api.admin, params={"venue_id": venue, "active": True})
    assert active.json()["total"] == 0
    states = {
        t["id"]: t["state"]
        for t in api.call("GET", "/tokens", api.admin, params={"venue_id": venue}).json()["items"]
    }
    assert states == {chair_id: "expired", viewer_id: "revoked"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"expires_in_days": 0}, "greater than 0"),
        ({"expires_in_days": 5000}, "less than or equal"),
        ({"expires_at": "2030-01-01T00:00:00"}, "timezone"),
        ({"expires_at": "2001-01-01T00:00:00+00:00"}, "not in the future"),
        ({"expires_at": "2030-01-01T00:00:00+00:00", "expires_in_days": 3}, "not both"),
        ({"name": "a\x00b"}, "control character"),
        ({"name": ""}, "at least 1"),
        ({"role": "admin"}, "chair"),
    ],
)
def test_token_requests_are_validated(api: Api, body: dict[str, object], message: str) -> None:
    venue, _chair, _viewer = api.new_venue()
    response = api.call(
        "POST", f"/venues/{venue}/tokens", api.admin, json={"name": "x", "role": "viewer", **body}
    )
    assert response.status_code == 422 and message in response.text, response.text
    assert api.call("GET", "/tokens", api.admin, params={"name": "x"}).json()["total"] == 0


def test_create_token_refuses_unknown_and_malformed_venues(api: Api) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        create_token(api.database, name="x", role="chair", venue_id="icml-2026")
    for bad in ("", "a\r\nb", "has space", "-lead", "x" * 101):
        with pytest.raises(ValueError, match="venue"):
            create_token(api.database, name="x", role="chair", venue_id=bad, create_venue=True)
    with api.database.session() as session:
        assert session.get(Venue, "icml-2026") is None
    create_token(api.database, name="x", role="chair", venue_id="icml-2026", create_venue=True)
    with api.database.session() as session:
        assert session.get(Venue, "icml-2026") is not None


def _cli(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str
) -> tuple[int, str, str]:
    monkeypatch.setenv("RECOMMENDER_DATABASE_URL", url)
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_creates_lists_and_revokes_tokens_without_tracebacks(
    database_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def run(*args: str) -> tuple[int, str, str]:
        return _cli(list(args), capsys, monkeypatch, database_url)

    for args, message in (
        (("--role", "chair", "--venue", ""), "needs a venue"),
        (("--role", "chair"), "needs a venue"),
        (("--role", "viewer", "--venue", "no-such-venue-xyz"), "does not exist"),
        (("--role", "chair", "--venue", "a\r\nb", "--create-venue"), "not a valid venue id"),
        (("--role", "admin", "--venue", "x"), "global"),
        (("--expires-at", "tomorrow"), "ISO 8601"),
        (("--expires-in-days", "-1"), "expires_in_days"),
        (("--expires-at", "2001-01-01"), "not in the future"),
    ):
        code, out, err = run("create-token", *args)
        assert (code, out) == (1, ""), (args, code, out, err)
        assert message in err and "Traceback" not in err, (args, err)

    code, secret, err = run(
        "create-token",
        "--role",
        "chair",
        "--venue",
        "cli-venue-1",
        "--create-venue",
        "--name",
        "pc chair",
        "--expires-in-days",
        "10",
    )
    assert code == 0, err
    secret = secret.strip()
    assert secret.startswith("rec_")
    code, out, _err = run("list-tokens", "--venue", "cli-venue-1")
    assert code == 0
    header, row = out.strip().splitlines()
    assert header.split("\t")[:6] == ["id", "prefix", "name", "role", "venue_id", "state"]
    cells = row.split("\t")
    assert cells[1] == secret[:12] and cells[2:6] == ["pc chair", "chair", "cli-venue-1", "active"]
    assert secret not in out

    code, _out, err = run("revoke-token", "--prefix", "rec_")
    assert code == 1 and "at least 8" in err
    code, _out, err = run("revoke-token", "--prefix", "rec_zzzzzzzzzz")
    assert code == 1 and "no token" in err
    code, out, err = run("revoke-token", "--prefix", secret[:12])
    assert code == 0, err
    assert out.strip() == f"revoked token {cells[0]}"
    code, out, _err = run("revoke-token", "--id", cells[0])
    assert code == 0 and "already revoked" in out
    code, out, _err = run("list-tokens", "--venue", "cli-venue-1", "--active")
    assert out.strip().splitlines()[1:] == []


def test_token_filters_with_control_characters_are_422(api: Api) -> None:
    for params in ({"prefix": "rec_\x00"}, {"venue_id": "\x00"}, {"name": "a\x1b"}):
        response = api.call("GET", "/tokens", api.admin, params=params)
        assert response.status_code == 422, (params, response.text)


def test_cli_token_commands_refuse_bad_filters_in_one_line(
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for args, message in (
        (["list-tokens", "--venue", "a\x00b"], "not a valid venue id"),
        (["list-tokens", "--venue", ""], "is empty"),
        (["revoke-token", "--id", str(2**63)], f"no token with id {2**63}"),
        (["revoke-token", "--id", "0"], "no token with id 0"),
        (["revoke-token", "--prefix", "rec_\x00abcdefgh"], "control character"),
        (["create-token", "--role", "viewer", "--venue", ""], "needs a venue"),
    ):
        code, out, err = _cli(args, capsys, monkeypatch, database_url)
        assert (code, out) == (1, ""), (args, code, out, err)
        assert message in err and len(err.strip().splitlines()) == 1, (args, err)


def test_cli_creates_person_tokens_and_lists_their_persons(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``create-token --role reviewer|area_chair --person ID`` makes a person's token (the
    person must be in the role's pool); ``list-tokens`` shows the person; bad ones exit 1
    naming the problem, nothing created."""
    from api_helpers import AREA_CHAIRS, REVIEWERS

    venue, chair, _viewer = api.new_venue()
    for pool, people in (("reviewers", REVIEWERS), ("area_chairs", AREA_CHAIRS)):
        stored = api.call(
            "POST", f"/venues/{venue}/reviewers", chair, params={"pool": pool}, json=people
        )
        assert stored.status_code == 200, stored.text
    url = str(api.database.engine.url.render_as_string(hide_password=False))

    def run(*args: str) -> tuple[int, str, str]:
        return _cli(list(args), capsys, monkeypatch, url)

    for args, message in (
        (("--role", "reviewer", "--venue", venue), "--person"),
        (("--role", "reviewer", "--venue", venue, "--person", "Nobody1"), "Nobody1"),
        (("--role", "area_chair", "--venue", venue, "--person", "~Lena_Language1"), "area_chairs"),
        (("--role", "chair", "--venue", venue, "--person", "Lena_Language1"), "no person"),
        (("--role", "reviewer", "--venue", venue, "--person", "a\x00b"), "--person"),
    ):
        code, out, err = run("create-token", *args)
        assert (code, out) == (1, ""), (args, code, out, err)
        assert message in err and "Traceback" not in err, (args, err)
    code, listing, _err = run("list-tokens", "--venue", venue)
    assert len(listing.strip().splitlines()) == 3  # the header, the chair's and viewer's

    code, secret, err = run(
        "create-token", "--role", "reviewer", "--venue", venue, "--person", "~Lena_Language1"
    )
    assert code == 0, err
    code, alan, err = run(
        "create-token", "--role", "area_chair", "--venue", venue, "--person", "Alan_Chair1"
    )
    assert code == 0, err
    code, out, _err = run("list-tokens", "--venue", venue)
    header, *rows = out.rstrip("\n").splitlines()
    assert header.split("\t")[-1] == "person_id"
    persons = {r.split("\t")[3]: r.split("\t")[-1] for r in rows}
    assert persons == {
        "reviewer": "Lena_Language1",
        "area_chair": "Alan_Chair1",
        "chair": "",
        "viewer": "",
    }
    me = api.call("GET", f"/venues/{venue}/me", secret.strip()).json()
    assert (me["person_id"], me["role"], me["pools"]) == (
        "Lena_Language1",
        "reviewer",
        ["reviewers"],
    )
    assert api.call("GET", f"/venues/{venue}/me", alan.strip()).json()["role"] == "area_chair"
