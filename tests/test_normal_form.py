"""One normal form of run-specific values: uuids, the fake model's call ids, timestamps."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

from pytest_flows._internal.normal_form import (
    Normalizer,
    Timestamp,
    comparable,
    elide,
    normal_lines,
    normal_text,
)
from pytest_flows._internal.trace import MAX_VALUE_CHARS, render_value

A = "59df79dc-3a4b-4c5d-8e9f-0123456789ab"
B = "0e1f2a3b-4c5d-4e6f-8a9b-c0d1e2f3a4b5"


def test_uuids_are_numbered_by_first_appearance_with_or_without_dashes() -> None:
    normalizer = Normalizer()
    assert normalizer.text(f"{A} {B} {A.replace('-', '')}") == "<uuid:1> <uuid:2> <uuid:1>"
    assert normalizer.originals["<uuid:1>"] == A  # the raw value stays available


def test_the_fake_models_call_ids_are_numbered_whatever_run_made_them() -> None:
    # the same call in two runs, or two concurrent agents' calls swapped by a seed
    first = normal_lines(["request info occ-call-1-1", "result call-1-1='ok'", "occ-call-2-1"])
    second = normal_lines(["request info occ-call-3-1", "result call-3-1='ok'", "occ-call-1-1"])
    assert first == second == ["request info occ-<call:1>", "result <call:1>='ok'", "occ-<call:2>"]


def test_timestamps_become_one_placeholder() -> None:
    assert normal_text("at 2025-01-01T00:00:05.25+00:00 and 2025-01-02 10:00:00") == (
        "at <ts> and <ts>"
    )


def test_text_without_run_specific_values_is_left_alone() -> None:
    for text in ("", "ok", "recall-1-2 is a word", "a" * 40, "deadbeef" * 5):
        assert normal_text(text) == text


# -- eliding (issue 27, bug B) ---------------------------------------------------------


def test_a_uuid_at_the_cut_is_kept_whole_so_the_normalizer_sees_it() -> None:
    pad = "x" * (MAX_VALUE_CHARS - 20)
    one, two = render_value({"a": pad, "ref": A}), render_value({"a": pad, "ref": B})

    assert normal_text(one) == normal_text(two)
    assert "<uuid:1>" in normal_text(one)
    assert normal_text(one).endswith("…")


def test_the_cut_is_measured_on_the_normalized_text() -> None:
    # a uuid counts as its placeholder: what follows it is shown as far as the limit
    text = f"{A} " + "y" * 200
    cut = elide(text, 60)
    assert cut.startswith(A)
    assert len(normal_text(cut)) == 60


def test_elide_keeps_short_texts_and_cuts_plain_ones_as_before() -> None:
    assert elide("short", 10) == "short"
    assert elide("z" * 30, 10) == "z" * 9 + "…"
    # long only because of its ids: short enough once they are placeholders
    assert elide(f"{A}{' '}{B}", 20) == f"{A} {B}"


# -- values ----------------------------------------------------------------------------


@dataclasses.dataclass
class Ticket:
    ref: str
    opened: dt.datetime


def test_values_keep_their_types_and_lose_their_run_specific_parts() -> None:
    one = Normalizer().value({1: Ticket(A, dt.datetime(2025, 1, 1)), "ids": (uuid.UUID(B),)})
    two = Normalizer().value({1: Ticket(B, dt.datetime(2026, 5, 5)), "ids": (uuid.UUID(A),)})

    assert one == two
    assert one == {
        1: {"__type__": "Ticket", "ref": "<uuid:1>", "opened": Timestamp("datetime")},
        "ids": ("<uuid:2>",),
    }
    # an int key stays an int key
    assert Normalizer().value({1: "x"}) != Normalizer().value({"1": "x"})


class Response:  # no __eq__ of its own, like Agent Framework's AgentResponse
    def __init__(self, text: str, response_id: str) -> None:
        self.text, self.response_id = text, response_id


def test_objects_without_equality_compare_by_fields_with_their_ids_renumbered() -> None:
    assert Normalizer().value(Response("hi", "resp-3")) == Normalizer().value(
        Response("hi", "resp-7")
    )
    assert Normalizer().value(Response("hi", "resp-3")) != Normalizer().value(
        Response("ho", "resp-3")
    )


def test_comparable_renumbers_placeholders_and_raw_ids_alike() -> None:
    numbered_as_its_trace = "pending for flow '<uuid:4>' at 'ask'"
    raw = f"pending for flow '{A}' at 'ask'"
    assert (
        comparable(numbered_as_its_trace)
        == comparable(raw)
        == "pending for flow '<uuid:1>' at 'ask'"
    )


def test_a_copy_numbers_on_independently() -> None:
    normalizer = Normalizer()
    normalizer.text(A)
    twin = normalizer.copy()
    assert twin.text(f"{A} {B}") == "<uuid:1> <uuid:2>"
    assert normalizer.text(B) == "<uuid:2>"  # the copy's numbering did not leak back
