"""Readers: every input format, and every bad input reported with file, line and field."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from recommender.corpus import InputError, Problem
from recommender.io import (
    parse_reviewers_upload,
    parse_submissions_upload,
    read_bids,
    read_custom_max_papers,
    read_openreview_archives,
    read_openreview_archives_zip,
    read_pair_constraints,
    read_reviewers,
    read_reviewers_csv,
    read_reviewers_json,
    read_submissions,
)


def note(
    pub_id: str, title: str = "A title", abstract: str = "An abstract.", **extra: object
) -> str:
    return json.dumps({"id": pub_id, "content": {"title": title, "abstract": abstract, **extra}})


def problems_of(excinfo: pytest.ExceptionInfo[InputError]) -> list[Problem]:
    return list(excinfo.value.problems)


def has_problem(
    problems: list[Problem], file_end: str, line: int | None, field: str | None, words: str
) -> bool:
    return any(
        p.file.endswith(file_end)
        and p.line == line
        and p.field == field
        and words.lower() in p.message.lower()
        for p in problems
    )


# --- OpenReview archives ------------------------------------------------------------------------


def write_archives(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def test_archives_read_ids_fields_and_wrapped_values(tmp_path: Path) -> None:
    wrapped = json.dumps(
        {
            "id": "p2",
            "content": {
                "title": {"value": "  Wrapped\n title "},
                "abstract": {"value": "Body."},
                "year": {"value": "2021"},
                "authors": {"value": ["Ann Lee", " Bo  Chen "]},
            },
        }
    )
    root = write_archives(
        tmp_path / "archives",
        {
            "~Ann_Lee1.jsonl": note("p1", year=2020, authors=["Ann Lee"]) + "\n\n" + wrapped + "\n",
            "bob.jsonl": note("q1"),
            "~Empty1.jsonl": "",
            "notes.txt": "ignored",
        },
    )
    reviewers = read_openreview_archives(root)
    assert [r.id for r in reviewers] == ["Ann_Lee1", "Empty1", "bob"]
    ann = reviewers[0]
    assert [p.id for p in ann.publications] == ["p1", "p2"]
    assert ann.publications[0].year == 2020
    second = ann.publications[1]
    assert (second.title, second.abstract, second.year) == ("Wrapped title", "Body.", 2021)
    assert second.authors == ("Ann Lee", "Bo Chen")
    assert reviewers[1].publications == ()  # empty archive: a reviewer with no publications


def test_archives_report_every_problem_with_line_and_field(tmp_path: Path) -> None:
    root = write_archives(
        tmp_path / "archives",
        {
            "~a.jsonl": note("p1") + "\n" + '{"id": "p2", "content": {"title": "tru',
            "~b.jsonl": note("p1", title="", abstract="") + "\n" + note("p2", year="20x2"),
            "~c.jsonl": b'{"id": "p1", "content": {"title": "caf\xe9"}}\n',
            "~d.jsonl": note("p1", title="One") + "\n" + note("p1", title="Two"),
            "~e.jsonl": note("p1", title="Same") + "\n" + note("p1", title="Same"),
        },
    )
    with pytest.raises(InputError) as excinfo:
        read_openreview_archives(root)
    problems = problems_of(excinfo)
    assert has_problem(problems, "~a.jsonl", 2, None, "invalid JSON")
    assert has_problem(problems, "~b.jsonl", 1, "title", "neither title nor abstract")
    assert has_problem(problems, "~b.jsonl", 2, "year", "not a year")
    assert has_problem(problems, "~c.jsonl", 1, None, "at byte offset 38")
    assert has_problem(problems, "~d.jsonl", 2, "id", "different content")
    assert not any(p.file.endswith("~e.jsonl") for p in problems)  # identical repeat: deduped
    assert "~a.jsonl:2" in str(excinfo.value)


def test_archives_same_reviewer_twice_and_empty_directory(tmp_path: Path) -> None:
    root = write_archives(tmp_path / "a", {"~x.jsonl": note("p"), "x.jsonl": note("q")})
    with pytest.raises(InputError, match="also has archive"):
        read_openreview_archives(root)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no \.jsonl"):
        read_openreview_archives(tmp_path / "empty")


def make_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def test_zip_of_archives_and_its_rejections() -> None:
    content = make_zip(
        {"archives/~r1.jsonl": note("p1").encode(), "__MACOSX/._x.jsonl": b"\x00", "README": b"x"}
    )
    reviewers = parse_reviewers_upload("profiles.zip", content)
    assert [r.id for r in reviewers] == ["r1"]
    flat = parse_reviewers_upload("flat.zip", make_zip({"~r2.jsonl": note("p2").encode()}))
    assert [r.id for r in flat] == ["r2"]

    with pytest.raises(InputError) as excinfo:
        parse_reviewers_upload("evil.zip", make_zip({"../../etc/~x.jsonl": note("p").encode()}))
    assert has_problem(problems_of(excinfo), "evil.zip:../../etc/~x.jsonl", None, None, "unsafe")

    bomb = make_zip({"~big.jsonl": b" " * (4 * 1024 * 1024)})
    with pytest.raises(InputError, match="zip bomb"):
        read_openreview_archives_zip("bomb.zip", bomb)
    with pytest.raises(InputError, match="at most 1000 allowed"):
        read_openreview_archives_zip("big.zip", bomb, max_uncompressed_bytes=1000)
    with pytest.raises(InputError, match="not a readable zip"):
        parse_reviewers_upload("broken.zip", b"PK not really")

    with pytest.raises(InputError) as excinfo:
        parse_reviewers_upload("up.zip", make_zip({"~r.jsonl": b"{bad\n"}))
    assert has_problem(problems_of(excinfo), "up.zip:~r.jsonl", 1, None, "invalid JSON")


# --- reviewers CSV / JSON -----------------------------------------------------------------------

REVIEWERS_CSV = (
    "id,name,email,affiliation,seniority\n~r1,Ann Lee,ann@uni.edu,Uni,senior\nr2,Bo,,,\n"
)


def test_reviewers_csv_with_publications(tmp_path: Path) -> None:
    (tmp_path / "reviewers.csv").write_text(REVIEWERS_CSV)
    (tmp_path / "publications.csv").write_text(
        "reviewer_id,title,abstract,year,authors\n"
        'r1,Paper one,"About, things",2019,Ann Lee; Cy Do\n'
        "~r1,Paper two,,,\n"
        "r2,,Only abstract,2020,\n"
    )
    reviewers = read_reviewers(tmp_path / "reviewers.csv", tmp_path / "publications.csv")
    assert [r.id for r in reviewers] == ["r1", "r2"]
    ann, bo = reviewers
    assert (ann.name, ann.email, ann.affiliation) == ("Ann Lee", "ann@uni.edu", "Uni")
    assert dict(ann.attributes) == {"seniority": "senior"}
    assert dict(bo.attributes) == {}
    assert [p.title for p in ann.publications] == ["Paper one", "Paper two"]
    assert ann.publications[0].authors == ("Ann Lee", "Cy Do")
    assert ann.publications[0].year == 2019 and ann.publications[1].year is None
    assert ann.publications[0].id.startswith("pub-")
    again = read_reviewers_csv(tmp_path / "reviewers.csv", tmp_path / "publications.csv")
    assert [p.id for p in again[0].publications] == [p.id for p in ann.publications]  # stable


def test_reviewers_csv_problems(tmp_path: Path) -> None:
    (tmp_path / "reviewers.csv").write_text(
        "id,name,email\nr1,Ann,ann@x.org\nr1,Ann again,\n,No id,\n"
        "r3,Cy,not-an-email\nr4,too,many,cols\n"
    )
    (tmp_path / "publications.csv").write_text(
        "reviewer_id,title,year\nr1,Fine,2020\nghost,Orphan,2020\nr1,,2020\nr1,Bad year,20x2\n"
    )
    with pytest.raises(InputError) as excinfo:
        read_reviewers_csv(tmp_path / "reviewers.csv", tmp_path / "publications.csv")
    problems = problems_of(excinfo)
    assert has_problem(problems, "reviewers.csv", 3, "id", "duplicate reviewer id 'r1'")
    assert has_problem(problems, "reviewers.csv", 4, "id", "empty reviewer id")
    assert has_problem(problems, "reviewers.csv", 5, "email", "not an email")
    assert has_problem(problems, "reviewers.csv", 6, None, "4 fields, the header has 3")
    assert has_problem(problems, "publications.csv", 3, "reviewer_id", "unknown reviewer 'ghost'")
    assert has_problem(problems, "publications.csv", 4, "title", "neither title nor abstract")
    assert has_problem(problems, "publications.csv", 5, "year", "not a year: '20x2'")


def test_reviewers_csv_missing_columns_and_bad_utf8(tmp_path: Path) -> None:
    (tmp_path / "reviewers.csv").write_text("name,email\nAnn,a@b.org\n")
    (tmp_path / "publications.csv").write_text("reviewer,title\nr1,x\n")
    with pytest.raises(InputError) as excinfo:
        read_reviewers_csv(tmp_path / "reviewers.csv", tmp_path / "publications.csv")
    problems = problems_of(excinfo)
    assert has_problem(problems, "reviewers.csv", 1, "id", "required column 'id' is missing")
    assert has_problem(problems, "publications.csv", 1, "reviewer_id", "required column")

    with pytest.raises(InputError) as excinfo:
        parse_reviewers_upload("mine.csv", b"id,name\nr1,Ren\xe9\n")
    assert has_problem(problems_of(excinfo), "mine.csv", 2, None, "0xe9 at byte offset 14")


def test_reviewers_json_and_jsonl() -> None:
    data = [
        {
            "id": "~r1",
            "name": "Ann",
            "email": "ann@uni.edu",
            "attributes": {"seniority": "senior", "max": 4},
            "publications": [
                {"id": "p1", "title": "T", "abstract": "A", "year": 2021, "authors": ["Ann"]},
                {"id": "p2", "content": {"title": {"value": "Note shaped"}}},
            ],
        },
        {"id": "r2"},
    ]
    reviewers = parse_reviewers_upload("reviewers.json", json.dumps(data).encode())
    assert [r.id for r in reviewers] == ["r1", "r2"]
    assert dict(reviewers[0].attributes) == {"seniority": "senior", "max": "4"}
    assert [p.title for p in reviewers[0].publications] == ["T", "Note shaped"]
    lines = "\n".join(json.dumps(r) for r in data).encode()
    assert read_reviewers_json(lines, "reviewers.jsonl") == reviewers


def test_reviewers_json_problems() -> None:
    data = [
        {"id": "r1", "publications": [{"id": "p1", "title": "", "year": "soon"}]},
        {"id": "r1"},
        {"name": "no id", "attributes": ["x"]},
        "not an object",
    ]
    with pytest.raises(InputError) as excinfo:
        read_reviewers_json(json.dumps(data).encode(), "up.json")
    problems = problems_of(excinfo)
    assert has_problem(problems, "up.json", None, "[0].publications[0].title", "neither title")
    assert has_problem(problems, "up.json", None, "[0].publications[0].year", "not a year")
    assert has_problem(problems, "up.json", None, "[2].id", "missing or empty")
    assert has_problem(problems, "up.json", None, "[2].attributes", "expected a JSON object")
    assert has_problem(problems, "up.json", None, "[3]", "expected a JSON object")

    with pytest.raises(InputError) as excinfo:
        read_reviewers_json(b'{"id": "a"}\n{"id": "b"\n{"id": "a"}\n', "r.jsonl")
    problems = problems_of(excinfo)
    assert has_problem(problems, "r.jsonl", 2, None, "invalid JSON")
    assert has_problem(problems, "r.jsonl", 3, "id", "duplicate reviewer id 'a'")

    with pytest.raises(InputError) as excinfo:
        read_reviewers_json(b'[\n {"id": "a"},\n {"id": \n', "cut.json")
    assert problems_of(excinfo)[0].line == 4 and "invalid JSON" in problems_of(excinfo)[0].message


def test_reviewers_dispatch_rejections(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unsupported reviewers format"):
        parse_reviewers_upload("people.xlsx", b"")
    with pytest.raises(InputError, match=r"only goes with reviewers\.csv"):
        parse_reviewers_upload("r.json", b"[]", ("publications.csv", b""))
    single = parse_reviewers_upload("~solo.jsonl", note("p1").encode())
    assert [(r.id, len(r.publications)) for r in single] == [("solo", 1)]
    with pytest.raises(InputError, match="cannot read file"):
        read_reviewers(tmp_path / "missing.csv")


# --- submissions --------------------------------------------------------------------------------


def test_submissions_openreview_dict_list_jsonl_csv(tmp_path: Path) -> None:
    openreview = {
        "s1": {
            "id": "s1",
            "content": {
                "title": {"value": "Paper  one"},
                "abstract": {"value": "Text."},
                "authors": {"value": ["Ann Lee", "Bo Chen"]},
                "authorids": {"value": ["~Ann_Lee1", "BO@Lab.org"]},
            },
        },
        "s2": {"content": {"abstract": "Only abstract."}},
    }
    path = tmp_path / "submissions.json"
    path.write_text(json.dumps(openreview))
    s1, s2 = read_submissions(path)
    assert (s1.id, s1.title, s1.authors) == ("s1", "Paper one", ("Ann Lee", "Bo Chen"))
    assert s1.author_ids == ("Ann_Lee1",) and s1.author_emails == ("bo@lab.org",)
    assert (s2.id, s2.title, s2.abstract) == ("s2", "", "Only abstract.")

    as_list = [{"id": "s1", "title": "T", "abstract": "A", "authors": "Ann; Bo"}]
    (listed,) = parse_submissions_upload("s.json", json.dumps(as_list).encode())
    assert listed.authors == ("Ann", "Bo")
    assert parse_submissions_upload(
        "s.jsonl", "\n".join(json.dumps(x) for x in as_list).encode()
    ) == (listed,)
    csv_bytes = (
        b"id,title,abstract,authors,author_emails,author_affiliations,extra\n"
        b's1,T,A,Ann; Bo,ann@uni.edu,"Uni, Dept",ignored\n'
    )
    (from_csv,) = parse_submissions_upload("s.csv", csv_bytes)
    assert from_csv.authors == ("Ann", "Bo")
    assert from_csv.author_emails == ("ann@uni.edu",)
    assert from_csv.author_affiliations == ("Uni, Dept",)


def test_submissions_problems_in_every_format() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload(
            "subs.jsonl",
            b'{"id": "s1", "title": "ok"}\n{"id": "s2", "title": "cut\n{"id": "s1", "title": "x"}\n'
            b'{"id": "s3", "title": "", "abstract": null}\n{"id": "s4", "title": 7}\n',
        )
    problems = problems_of(excinfo)
    assert has_problem(problems, "subs.jsonl", 2, None, "invalid JSON")
    assert has_problem(problems, "subs.jsonl", 3, "id", "duplicate submission id 's1'")
    assert has_problem(problems, "subs.jsonl", 4, "title", "neither title nor abstract")
    assert has_problem(problems, "subs.jsonl", 5, "title", "expected text, got int")

    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.json", b'{"s1": {"id": "other", "content": {"title": "T"}}}')
    assert has_problem(problems_of(excinfo), "s.json", None, "['s1'].id", "differs from its key")

    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.csv", b"id,title\ns1,T\ns1,U\n,V\ns4,\ns5\n")
    problems = problems_of(excinfo)
    assert has_problem(problems, "s.csv", 3, "id", "duplicate submission id 's1' (first on line 2)")
    assert has_problem(problems, "s.csv", 4, "id", "empty submission id")
    assert has_problem(problems, "s.csv", 5, "title", "neither title nor abstract")
    assert has_problem(problems, "s.csv", 6, None, "1 fields, the header has 2")

    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.csv", b"paper,text\np,t\n")
    assert has_problem(problems_of(excinfo), "s.csv", 1, "id", "required column 'id'")

    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.json", b'{"s1": {"title": "ok"}}\n\xff\xfe')
    assert has_problem(problems_of(excinfo), "s.json", 2, None, "byte offset 24")

    with pytest.raises(InputError, match="no submissions"):
        parse_submissions_upload("s.json", b"[]")
    with pytest.raises(InputError, match="unsupported submissions format"):
        parse_submissions_upload("s.pdf", b"%PDF")


def test_error_message_lists_every_problem_and_to_dicts() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.csv", b"id,title\n,a\n,b\n,c\n")
    assert len(excinfo.value.problems) == 3
    assert excinfo.value.to_dicts()[0] == {
        "file": "s.csv",
        "line": 2,
        "field": "id",
        "message": "empty submission id",
    }


# --- bids, constraints, custom loads ------------------------------------------------------------


def test_bids_labels_numbers_and_headers() -> None:
    bids = read_bids(
        b"paper_id,reviewer_id,bid\np1,~r1,Very High\np1,r2,very low\np2,r1,0.25\np2,r2,Conflict\n",
        "bids.csv",
    )
    assert list(bids.columns) == ["paper_id", "reviewer_id", "label", "bid", "conflict"]
    assert bids["reviewer_id"].tolist() == ["r1", "r2", "r1", "r2"]
    assert bids["bid"].tolist() == [1.0, -1.0, 0.25, -1.0]
    assert bids["label"].tolist() == ["Very High", "very low", "0.25", "Conflict"]
    assert bids["conflict"].tolist() == [False, False, False, True]
    headerless = read_bids(b"p1,r1,High\n", "bids.csv")
    assert headerless.iloc[0].to_dict() == {
        "paper_id": "p1",
        "reviewer_id": "r1",
        "label": "High",
        "bid": 0.5,
        "conflict": False,
    }
    openreview_edges = read_bids(b"head,tail,label,weight\np1,~r1,Neutral,0\n", "edges.csv")
    assert openreview_edges["bid"].tolist() == [0.0]


def test_bids_problems(tmp_path: Path) -> None:
    path = tmp_path / "bids.csv"
    path.write_text("paper_id,reviewer_id,bid\np1,r1,Eager\np1,r2,High\np1,r2,Low\n,r3,High\np,r\n")
    with pytest.raises(InputError) as excinfo:
        read_bids(path)
    problems = problems_of(excinfo)
    assert has_problem(problems, "bids.csv", 2, "bid", "unknown bid 'Eager'")
    assert has_problem(problems, "bids.csv", 4, "bid", "different bid")
    assert has_problem(problems, "bids.csv", 5, "paper_id", "empty paper id")
    assert has_problem(problems, "bids.csv", 6, None, "2 fields, expected 3")
    with pytest.raises(InputError) as excinfo:
        read_bids(b"paper_id,who,bid\n", "b.csv")
    assert has_problem(problems_of(excinfo), "b.csv", 1, "reviewer_id", "required column")


def test_pair_constraints() -> None:
    frame = read_pair_constraints(b"paper_id,reviewer_id,value\np1,~r1,-1\np2,r1,1\np2,r1,1\n", "c")
    assert frame.to_dict("list") == {
        "paper_id": ["p1", "p2"],
        "reviewer_id": ["r1", "r1"],
        "value": [-1, 1],
    }
    assert frame["value"].dtype == "int8"
    with pytest.raises(InputError) as excinfo:
        read_pair_constraints(b"p1,r1,2\np1,r2,yes\np1,r3,1\np1,r3,-1\n", "constraints.csv")
    problems = problems_of(excinfo)
    assert has_problem(problems, "constraints.csv", 1, "value", "must be -1 (conflict), 1")
    assert has_problem(problems, "constraints.csv", 2, "value", "got 'yes'")
    assert has_problem(problems, "constraints.csv", 4, "value", "different value")
    # OpenReview's 0 means "no effect": read and dropped; lines kept for later messages
    lined = read_pair_constraints(
        b"p1,r1,0\np1,r2,-1\n\np1,r3,1,reason text\n", "c.csv", with_lines=True
    )
    assert lined.to_dict("list") == {
        "paper_id": ["p1", "p1"],
        "reviewer_id": ["r2", "r3"],
        "value": [-1, 1],
        "line": [2, 4],
    }


def test_custom_max_papers(tmp_path: Path) -> None:
    path = tmp_path / "max.csv"
    path.write_text("reviewer_id,max\n~r1,3\nr2,0\n")
    frame = read_custom_max_papers(path)
    pd.testing.assert_frame_equal(
        frame,
        pd.DataFrame({"reviewer_id": ["r1", "r2"], "max": [3, 0]}).astype({"max": "int64"}),
    )
    path.write_text("r1,-2\nr2,2.5\nr3,many\nr4,2\nr4,3\n")
    with pytest.raises(InputError) as excinfo:
        read_custom_max_papers(path)
    problems = problems_of(excinfo)
    assert [p.line for p in problems] == [1, 2, 3, 5]
    assert all(p.field == "max" and p.file.endswith("max.csv") for p in problems)


def test_archive_year_from_openreview_timestamp_and_line_separators(tmp_path: Path) -> None:
    # 1609459200000 ms = 2021-01-01 UTC; U+2028 inside a JSON string is not a line break.
    dated = json.dumps({"id": "p1", "cdate": 1609459200000, "content": {"title": "A\u2028B"}})
    root = write_archives(tmp_path / "a", {"~r.jsonl": dated + "\n"})
    (reviewer,) = read_openreview_archives(root)
    assert reviewer.publications[0].year == 2021
    assert reviewer.publications[0].title == "A B"
    bad = json.dumps({"id": "p1", "cdate": "yesterday", "content": {"title": "T"}})
    with pytest.raises(InputError) as excinfo:
        parse_reviewers_upload("~r.jsonl", bad.encode())
    assert has_problem(problems_of(excinfo), "~r.jsonl", 1, "cdate", "not a timestamp")


def test_encoding_problems_are_summarized() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.csv", "id,title\ns1,T\n".encode("utf-16"))
    assert [p.message for p in problems_of(excinfo)] == ["file is UTF-16 encoded; save it as UTF-8"]
    latin1 = ("id,title\n" + "".join(f"s{i},Caf\xe9\n" for i in range(30))).encode("latin-1")
    with pytest.raises(InputError) as excinfo:
        parse_submissions_upload("s.csv", latin1)
    problems = problems_of(excinfo)
    assert [p.line for p in problems[:10]] == list(range(2, 12))
    assert problems[-1].message == "30 lines in all are not valid UTF-8"


def test_broken_reviewers_csv_does_not_flood_publication_problems() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_reviewers_upload(
            "reviewers.csv", b"name\nAnn\n", ("publications.csv", b"reviewer_id,title\nr1,T\n")
        )
    assert [(p.file, p.field) for p in problems_of(excinfo)] == [("reviewers.csv", "id")]
