"""Tests for the refund desk. Run with --flows-cov to see which paths they leave untested:

pytest examples/coverage --flows-cov
"""

from __future__ import annotations

from refund_flow import RefundFlow


def test_small_refunds_are_paid_at_once(flows):
    run = flows.run(RefundFlow, inputs={"amount": 20.0})

    assert run.output == "Your refund was paid."
    assert "router chose check label=auto_approve" in run.trace.lines()


def test_a_reviewer_approves_a_large_refund(flows, human):
    human.on(method="review").answer("fine by me", outcome="approved")

    run = flows.run(RefundFlow, inputs={"amount": 480.0})

    assert run.output == "Your refund was paid."
    assert human.requests[0].prompt == "Approve this refund?"
