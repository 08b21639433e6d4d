"""How a golden of an earlier format is compared with today's run (issue 44)."""

from __future__ import annotations

from pytest_flows._internal.golden.versions import FORMAT, same_lines, same_text

OLD = 1


def test_todays_format_is_compared_exactly() -> None:
    assert same_lines(["a <uuid:1>"], ["a <uuid:1>"], FORMAT)
    assert not same_lines(["a <uuid:1>"], ["a <uuid:2>"], FORMAT)
    assert not same_lines(["x"], ["x", "  inner"], FORMAT)


def test_an_old_golden_agrees_on_ids_inner_lines_cuts_and_a_repeated_restore() -> None:
    recorded = [
        "request info occ-call-2-1 executor=hotels",
        "checkpoint restored n=1 branch=main",
        "checkpoint restored n=1 branch=main",
        "message sent v data=Msg(request_id='69df2edd-7c82-4d63-901d-a3daa1d1f…",
        "request info <uuid:1> executor=coordinator",
    ]
    today = [
        "request info occ-<call:1> executor=hotels",
        "checkpoint restored n=1 branch=main",
        "  workflow started inner input='x'",
        "message sent v data=Msg(request_id='<uuid:2>', data=DomainCheck(domai…",
        "request info <uuid:5> executor=coordinator",
    ]
    assert same_lines(recorded, today, OLD)


def test_an_old_golden_still_sees_a_changed_value_order_or_line() -> None:
    recorded = ["method finished price output=1200", "method started order"]
    assert not same_lines(
        recorded, ["method finished price output=2400", "method started order"], OLD
    )
    assert not same_lines(recorded, list(reversed(recorded)), OLD)
    assert not same_lines(recorded, [*recorded, "method started decline"], OLD)
    assert not same_lines(["a data=Msg(x='ab…"], ["a data=Msg(y='ab', z=1"], OLD)


def test_an_old_golden_output_stored_raw_is_todays_normal_output() -> None:
    raw = "HumanFeedbackPending(\"pending for flow 'd431eace-4dfe-4dde-b7b8-1e7664e70cfa'\")"
    assert same_text(raw, "HumanFeedbackPending(\"pending for flow '<uuid:1>'\")", OLD)
    assert not same_text("'ordered laptop'", "'declined laptop'", OLD)
