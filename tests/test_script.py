"""The scripted-reply engine on its own: choosing, counting, ledger, messages."""

from __future__ import annotations

import re

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.script import (
    ALWAYS,
    Match,
    Request,
    Script,
    ScriptError,
    UnscriptedRequest,
    UnusedReplies,
)


def make_script() -> Script:
    return Script(
        fixture="fake",
        noun="call",
        reply_noun="reply",
        suggest=lambda r: f'fake.on(method="{r.caller.get("method")}").reply("...")',
        describe=lambda r: [f"prompt: {r.prompt!r}"],
    )


def ask(script: Script, prompt: str = "", **caller: object) -> object:
    exchange = script.take(Request(caller=dict(caller), prompt=prompt))
    return exchange.resolve()


def add(script: Script, reply: object, match: Match | None = None, **kw: object) -> None:
    script.add(reply, match=match, label=f"fake.reply({reply!r})", **kw)  # type: ignore[arg-type]


def test_plain_replies_answer_in_order() -> None:
    script = make_script()
    add(script, "a")
    add(script, "b")
    assert [ask(script), ask(script)] == ["a", "b"]


def test_a_rule_beats_plain_replies_whatever_the_order() -> None:
    script = make_script()
    add(script, "plain")
    add(script, "rule", Match(caller=(("method", "router"),)))
    assert ask(script, method="router") == "rule"
    assert ask(script, method="other") == "plain"


def test_counted_entries_beat_always_entries() -> None:
    script = make_script()
    add(script, "default", Match(caller=(("method", "m"),)), times=ALWAYS)
    add(script, "first", Match(caller=(("method", "m"),)), times=2)
    assert [ask(script, method="m") for _ in range(4)] == ["first", "first", "default", "default"]


def test_more_conditions_beat_fewer_whatever_the_order() -> None:
    script = make_script()
    add(script, "method", Match(caller=(("method", "m"),)), times=ALWAYS)
    add(script, "method+agent", Match(caller=(("method", "m"), ("agent", "a"))), times=ALWAYS)
    add(script, "method+prompt", Match(caller=(("method", "m"),), prompt="x"), times=ALWAYS)
    assert ask(script, method="m", agent="a") == "method+agent"
    assert ask(script, "x", method="m") == "method+prompt"
    assert ask(script, "y", method="m") == "method"


def test_an_always_rule_with_more_conditions_beats_a_counted_one_with_fewer() -> None:
    script = make_script()
    add(script, "counted", Match(caller=(("method", "m"),)), times=1)
    add(script, "always", Match(caller=(("method", "m"), ("agent", "a"))), times=ALWAYS)
    assert ask(script, method="m", agent="a") == "always"
    assert ask(script, method="m") == "counted"


def test_equally_specific_rules_answer_in_the_order_written() -> None:
    script = make_script()
    add(script, "first", Match(caller=(("agent", "a"),)))
    add(script, "second", Match(caller=(("method", "m"),)))
    assert ask(script, method="m", agent="a") == "first"
    assert ask(script, method="m", agent="a") == "second"


def test_conditions_value_regex_mapping_predicate_and_list_membership() -> None:
    script = make_script()
    add(script, "regex", Match(caller=(("agent", re.compile("^Res")),)))
    add(script, "subset", Match(caller=(("inputs", {"topic": "ai"}),)))
    add(script, "pred", Match(caller=(("n", lambda n: n > 2),)))
    add(script, "member", Match(caller=(("roles", "Writer"),)))
    add(script, "prompt", Match(prompt=r"refund \d+"))
    assert ask(script, agent="Researcher") == "regex"
    assert ask(script, inputs={"topic": "ai", "extra": 1}) == "subset"
    assert ask(script, n=3) == "pred"
    assert ask(script, roles=["Editor", "Writer"]) == "member"
    assert ask(script, "please refund 42 now") == "prompt"


def test_a_missing_caller_key_does_not_match() -> None:
    script = make_script()
    add(script, "x", Match(caller=(("agent", "A"),)))
    with pytest.raises(UnscriptedRequest):
        ask(script)


def test_callable_replies_see_the_request_and_errors_are_raised() -> None:
    script = make_script()
    add(script, lambda request: request.prompt.upper())
    add(script, ValueError("boom"))
    add(script, KeyError)
    assert ask(script, "hi") == "HI"
    with pytest.raises(ValueError, match="boom"):
        ask(script)
    with pytest.raises(KeyError):
        ask(script)
    assert isinstance(script.exchanges[1].error, ValueError)


def test_every_request_is_recorded_with_its_number_and_entry() -> None:
    script = make_script()
    add(script, "a")
    ask(script, "first", method="m")
    with pytest.raises(UnscriptedRequest):
        ask(script, "second")
    assert [e.request.number for e in script.exchanges] == [1, 2]
    assert script.exchanges[0].entry is script.entries[0]
    assert script.exchanges[1].entry is None
    assert script.exchanges[0].caller == {"method": "m"}


def test_unscripted_request_is_a_base_exception_so_no_except_exception_swallows_it() -> None:
    script = make_script()
    with pytest.raises(UnscriptedRequest):
        try:
            ask(script)
        except Exception:  # what frameworks do around providers
            pytest.fail("an Exception handler caught the script error")
    assert issubclass(UnscriptedRequest, ScriptError)
    assert not issubclass(ScriptError, Exception)


def test_unscripted_message_for_an_empty_script() -> None:
    script = make_script()
    with pytest.raises(UnscriptedRequest) as caught:
        ask(script, "What now?", flow="F", method="m")
    assert str(caught.value) == (
        "pytest-flows: unscripted call #1: no scripted reply matches it.\n"
        "  caller: flow=F method=m\n"
        "  prompt: 'What now?'\n"
        "  script: empty (nothing was scripted on fake)\n"
        "Add this line to the test to answer it:\n"
        '    fake.on(method="m").reply("...")'
    )


def test_unscripted_message_lists_the_waiting_entries_that_did_not_match() -> None:
    script = make_script()
    script.add("x", match=Match(caller=(("method", "other"),)), label='fake.on(method="other")')
    with pytest.raises(UnscriptedRequest) as caught:
        ask(script, "q", method="m")
    lines = str(caught.value).splitlines()
    assert lines[3] == "  script: 1 waiting reply(s), none matches:"
    assert re.fullmatch(
        r'    fake\.on\(method="other"\)  \[test_script\.py:\d+, used 0 of 1\]', lines[4]
    )


def test_unscripted_message_when_the_plain_replies_are_used_up() -> None:
    script = make_script()
    add(script, "only")
    ask(script)
    with pytest.raises(UnscriptedRequest) as caught:
        ask(script, method="m")
    assert "  script: all 1 scripted reply(s) used up" in str(caught.value).splitlines()


def test_verify_names_each_unused_entry_with_its_line() -> None:
    script = make_script()
    script.add("a", label='fake.reply("a")')
    script.add("b", label='fake.reply("b")', times=2)
    ask(script)
    ask(script)
    with pytest.raises(UnusedReplies) as caught:
        script.verify()
    lines = str(caught.value).splitlines()
    assert lines[0] == "pytest-flows: 1 scripted reply on fake never used:"
    assert re.fullmatch(r'  fake\.reply\("b"\)  \[test_script\.py:\d+, used 1 of 2\]', lines[1])
    assert lines[2] == (
        "The flow never asked for it. Remove it, fix the condition, or pass optional=True "
        "(fake.allow_unused() relaxes this check for the whole test)."
    )


def test_optional_entries_and_used_always_entries_are_not_reported() -> None:
    script = make_script()
    script.add("a", label="a", optional=True)
    script.add("b", label="b", times=ALWAYS)
    with pytest.raises(UnusedReplies) as caught:
        script.verify()
    assert [entry.label for entry in caught.value.entries] == ["b"]
    assert ask(script) == "a"  # counted before always
    assert ask(script) == "b"
    script.verify()


def test_check_unused_can_be_switched_off_for_a_test() -> None:
    script = make_script()
    script.add("a", label="a")
    script.check_unused = False
    script.verify()


@pytest.mark.parametrize("times", [0, -1, 1.5, True, "twice"])
def test_times_must_be_a_count_or_always(times: object) -> None:
    with pytest.raises(FlowsUsageError, match=r"times=.* is not a count"):
        make_script().add("a", label="a", times=times)  # type: ignore[arg-type]


def test_an_invalid_prompt_regex_is_a_usage_error_that_says_how_to_match_literally() -> None:
    with pytest.raises(FlowsUsageError, match=r"re\.escape"):
        Match(prompt="(unclosed")


# -- arguments the script refuses (named, with the fix) ----------------------------------
@pytest.mark.parametrize("prompt", [123, 4.5, ["hi"], b"hi"])
def test_a_prompt_condition_that_is_no_pattern_is_refused(prompt: object) -> None:
    from pytest_flows._internal.fakes.llm_script import LLMScript

    with pytest.raises(FlowsUsageError) as info:
        LLMScript().on(prompt=prompt)  # type: ignore[arg-type]
    message = str(info.value)
    assert f"on(prompt={prompt!r})" in message
    assert "regular expression" in message and "re.escape(" in message


def test_a_where_condition_that_is_not_callable_is_refused() -> None:
    with pytest.raises(FlowsUsageError, match=r"on\(where='tools'\): where is a predicate"):
        Match(where="tools")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "named"),
    [(42, "reply(42 (int))"), (1.5, "reply(1.5 (float))"), (True, "reply(True (bool))")],
)
def test_a_number_is_no_reply_and_the_error_shows_the_text_to_write(
    value: object, named: str
) -> None:
    from pytest_flows._internal.fakes.llm_script import LLMScript

    with pytest.raises(FlowsUsageError) as info:
        LLMScript().reply("fine", value)
    assert f"fake_llm.{named}" in str(info.value)
    assert f'write reply("{value}")' in str(info.value)


def test_a_plain_object_or_none_is_no_reply() -> None:
    from pytest_flows._internal.fakes.llm_script import LLMScript

    script = LLMScript()
    with pytest.raises(FlowsUsageError, match=r"fake_llm.reply\(<object object at .*\(object\)\)"):
        script.reply(object())
    with pytest.raises(FlowsUsageError, match=r"fake_llm.reply\(None\): a model replies with"):
        script.on(method="m").reply(None)
    assert script.script.entries == []  # nothing half-added


def test_every_documented_reply_kind_is_accepted() -> None:
    from pydantic import BaseModel

    from pytest_flows._internal.fakes.llm_script import LLMScript
    from pytest_flows._internal.fakes.replies import ProviderError, call_tool, stream

    class Answer(BaseModel):
        text: str

    script = LLMScript().reply(
        "text",
        {"field": 1},
        [{"a": 1}],
        Answer(text="x"),
        call_tool("search", q="x"),
        [call_tool("a"), call_tool("b")],
        stream(["Hel", "lo"]),
        ProviderError("down"),
        TimeoutError,
        lambda request: "computed",
    )
    assert len(script.script.entries) == 10


@pytest.mark.parametrize(
    ("usage", "message"),
    [
        ({"prompt_tokens": "ten"}, "reply(usage={'prompt_tokens': 'ten'}): a token count is a"),
        ({"prompt_tokens": -1}, "reply(usage={'prompt_tokens': -1}): a token count is a"),
        ({"prompt_tokens": True}, "reply(usage={'prompt_tokens': True}): a token count is a"),
        ({"prompt_token": 3}, "'prompt_token' is not a token count the fake sets; use "),
        ({"total_tokens": 3}, "(it is always prompt_tokens + completion_tokens)"),
        ([("prompt_tokens", 3)], "usage is a dict of token counts"),
    ],
)
def test_usage_that_is_not_token_counts_is_refused(usage: object, message: str) -> None:
    from pytest_flows._internal.fakes.llm_script import LLMScript

    with pytest.raises(FlowsUsageError) as info:
        LLMScript().reply("x", usage=usage)  # type: ignore[arg-type]
    assert message in str(info.value)
    assert 'usage={"prompt_tokens": 10, "completion_tokens": 5}' in str(info.value)


def test_token_counts_are_accepted() -> None:
    from pytest_flows._internal.fakes.llm_script import LLMScript

    script = LLMScript().reply("x", usage={"prompt_tokens": 7, "completion_tokens": 0})
    assert script.script.entries[0].options["usage"] == {"prompt_tokens": 7, "completion_tokens": 0}
