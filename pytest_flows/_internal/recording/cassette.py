"""One cassette: record a block's HTTP traffic, or replay it, through vcrpy."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_flows._internal.errors import FlowsUsageError, require_bool
from pytest_flows._internal.recording.cassette_file import RECORD_MODES, SERIALIZER, check_readable
from pytest_flows._internal.recording.cassette_lock import may_write, writing
from pytest_flows._internal.recording.drift import (
    CassetteMismatchError,
    PromptDriftError,
    RecordingBlockedError,
    drift_message,
    summary,
)
from pytest_flows._internal.recording.matching import (
    DEFAULT_MATCH_ON,
    canonical_body,
    describe,
    llm_body,
)
from pytest_flows._internal.recording.scrub import TEST_SCRUBBERS, Scrubber

__all__ = ["Recording", "check_options", "use_cassette"]


class Recording:
    """The cassette of one test (``llm_cassette``): what was recorded, replayed, refused."""

    def __init__(self, path: Path, record_mode: str, cassette: Any, scrubber: Scrubber) -> None:
        self.path = path
        self.record_mode = record_mode
        self.cassette = cassette  # vcrpy's Cassette
        #: The secrets known to this recording; what the cassette and reports never show.
        self.scrubber = scrubber
        self.drifts: list[PromptDriftError] = []
        self._loaded = len(cassette.data)

    @property
    def requests(self) -> list[Any]:
        """The canonical bodies of every request on the cassette (recorded earlier or now)."""
        return [canonical_body(request.body) for request in self.cassette.requests]

    @property
    def play_count(self) -> int:
        """How many responses were replayed from the cassette."""
        return int(self.cassette.play_count)

    @property
    def recorded_count(self) -> int:
        """How many interactions were recorded (sent for real) in this test."""
        return len(self.cassette.data) - self._loaded

    @property
    def replay_only(self) -> bool:
        return bool(self.cassette.write_protected)

    def unplayed(self) -> list[str]:
        """The loaded interactions this test did not replay, described by their prompt."""
        return [
            summary(describe(request))
            for index, (request, _) in enumerate(self.cassette.data[: self._loaded])
            if not self.cassette.play_counts[index]
        ]

    def __repr__(self) -> str:
        return (
            f"<Recording {self.path.name} mode={self.record_mode} played={self.play_count} "
            f"recorded={self.recorded_count}>"
        )


def _guard_request(
    recording: Recording, allow: Callable[[str], bool] | None
) -> Callable[[Any], Any]:
    cassette = recording.cassette
    original = cassette.can_play_response_for

    def can_play_response_for(request: Any) -> Any:
        playable = original(request)
        if playable or cassette.filter_request(request) is None:
            return playable
        if cassette.write_protected:
            error = PromptDriftError(drift_message(recording, request))
            recording.drifts.append(error)
            # from None: the client's own exception handling is not the story.
            raise error from None
        filtered = cassette.filter_request(request)
        host = urlsplit(str(filtered.uri)).hostname or ""
        if allow is not None and not allow(host):
            raise RecordingBlockedError(
                f"pytest-flows: recording {filtered.method} {filtered.uri} needs the network, "
                f"and flows tests only reach this machine. Allow the provider for this test - "
                f"@pytest.mark.flows(allow_hosts=[{host!r}]) - or record against a loopback "
                f"server. Cassette: {recording.path}"
            ) from None
        return playable

    return can_play_response_for


def _make_vcr(record_mode: str, match_on: Sequence[str], scrubber: Scrubber) -> Any:
    import vcr

    def before_save(request: Any, response: Any) -> tuple[Any, Any]:
        # Secrets learned after an interaction was recorded are removed from it too.
        scrubber.add_environment()
        request.uri = scrubber.text(str(request.uri))
        request.body = scrubber.value(request.body)
        request.headers = scrubber.value(dict(request.headers))
        return request, scrubber.value(response)

    recorder = vcr.VCR(
        serializer="flows",
        record_mode=record_mode,
        match_on=tuple(match_on),
        # Live requests go through this too before they are matched: matching
        # compares the scrubbed forms.
        before_record_request=scrubber.request,
        before_record_response=scrubber.response,
        before_save_interaction=before_save,
        decode_compressed_response=True,
        record_on_exception=False,
        # Re-recording drops the recordings the test no longer uses.
        drop_unused_requests=record_mode in {"new_episodes", "all"},
    )
    recorder.register_serializer("flows", SERIALIZER)
    recorder.register_matcher("llm_body", llm_body)
    return recorder


def check_options(record_mode: Any, match_on: Any) -> tuple[str, tuple[str, ...]]:
    if record_mode not in RECORD_MODES:
        raise FlowsUsageError(
            f"record_mode={record_mode!r} is not a record mode; use one of "
            f"{', '.join(RECORD_MODES)} (vcrpy's: once records a missing cassette and "
            "replays an existing one, none only replays, new_episodes records what is not "
            "on the cassette, all records everything again)."
        )
    if isinstance(match_on, str) or not all(isinstance(m, str) for m in match_on):
        raise FlowsUsageError(
            f"match_on={match_on!r} must be a sequence of matcher names, e.g. {DEFAULT_MATCH_ON!r}."
        )
    known = {"method", "uri", "url", "scheme", "host", "port", "path", "query", "headers"}
    known |= {"raw_body", "body", "llm_body"}
    unknown = sorted(set(match_on) - known)
    if unknown:
        raise FlowsUsageError(
            f"match_on: unknown matcher(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}."
        )
    return str(record_mode), tuple(match_on)


@contextlib.contextmanager
def use_cassette(
    path: str | os.PathLike[str],
    *,
    record_mode: str = "once",
    match_on: Sequence[str] = DEFAULT_MATCH_ON,
    allow_unused: bool = False,
    allow_host: Callable[[str], bool] | None = None,
    secrets: Sequence[str] = (),
) -> Iterator[Recording]:
    """Record to / replay from the cassette at ``path`` for the block.

    What the marker uses; call it yourself to record several phases of one
    test. A request the cassette cannot answer in a replay raises
    :class:`PromptDriftError` with a diff of the prompt. After a replay that
    left recorded interactions unused, the block fails with
    :class:`CassetteMismatchError` (the flow makes fewer calls than it did),
    unless ``allow_unused``. The cassette is written only if the block
    succeeds. ``secrets`` are extra values to scrub; ``allow_host(host)`` is
    asked before anything is recorded from a host.
    """
    record_mode, match_on = check_options(record_mode, match_on)
    require_bool(allow_unused, "use_cassette(allow_unused=...)")
    if not isinstance(path, str | os.PathLike):
        raise FlowsUsageError(f"use_cassette(path): expected a file path, got {path!r}.")
    where = Path(path)
    check_readable(where)
    with contextlib.ExitStack() as held:
        if may_write(where, record_mode):
            held.enter_context(writing(where))
        with _recording(where, record_mode, match_on, allow_unused, allow_host, secrets) as rec:
            yield rec


@contextlib.contextmanager
def _recording(
    where: Path,
    record_mode: str,
    match_on: tuple[str, ...],
    allow_unused: bool,
    allow_host: Callable[[str], bool] | None,
    secrets: Sequence[str],
) -> Iterator[Recording]:
    scrubber = Scrubber(secrets)
    registered = TEST_SCRUBBERS.get()
    if registered is not None:
        registered.append(scrubber)
    context = _make_vcr(record_mode, match_on, scrubber).use_cassette(str(where))
    cassette = context.__enter__()
    recording = Recording(where, record_mode, cassette, scrubber)
    cassette.can_play_response_for = _guard_request(recording, allow_host)
    try:
        yield recording
    except BaseException as exc:
        context.__exit__(type(exc), exc, exc.__traceback__)
        raise
    if recording.drifts:
        # The block swallowed the error (a framework caught BaseException): still fail.
        drift = recording.drifts[0]
        context.__exit__(type(drift), drift, None)
        raise PromptDriftError(str(drift))
    unplayed = recording.unplayed() if recording.replay_only and not allow_unused else []
    if unplayed:
        context.__exit__(None, None, None)
        raise CassetteMismatchError(
            scrubber.text(
                f"pytest-flows: {len(unplayed)} recorded interaction(s) of {where} were not "
                "replayed: the flow no longer makes these calls.\n"
                + "".join(f"  - {line}\n" for line in unplayed)
                + "Record the cassette again (pytest --flows-record-mode=all <this test>), or "
                "pass allow_unused=True (@pytest.mark.recorded(allow_unused=True)) if some calls "
                "are optional."
            )
        )
    context.__exit__(None, None, None)
