"""Record a test's real LLM HTTP traffic once, replay it offline afterwards (vcrpy).

``@pytest.mark.recorded`` (or the ``llm_cassette`` fixture) puts a test's HTTP
traffic on a cassette beside the test, ``cassettes/<module>/<test>.yaml``.
The first run records what the flow really sent and got back; later runs
replay it without a network. What makes these cassettes safe to commit and
useful to keep:

* **no secrets** - only a short allow-list of headers is stored; query
  parameters and body fields named like secrets are removed or masked; every
  secret value seen (header values, those parameters and fields, secret-looking
  environment variables) is replaced by ``<secret>`` in any spelling, and
  requests are matched in that scrubbed form (:mod:`.scrub`). Drift reports and
  the reports of recorded tests are scrubbed too;
* **prompt matching** - requests match on a canonical form of their body:
  model, messages, tools (and the other fields that shape the reply), with
  JSON key order, ids and timestamps normalized. A changed prompt is reported
  as a diff of the prompt (:class:`PromptDriftError`), not as vcrpy's
  "can't overwrite existing cassette";
* **readable files** - JSON bodies are pretty-printed, multi-line bodies
  (streams) are YAML block text.

Record modes are vcrpy's (``once``, ``new_episodes``, ``none``, ``all``).
``--flows-record-mode`` on the command line wins; otherwise, with ``CI`` set,
the mode is ``none`` (replay only); otherwise the marker's ``record_mode``,
then the ini option ``flows_record_mode``, then ``once``.

vcrpy is imported only when a test records or replays.
"""
# The package, by concern: matching (what a request is matched on), scrub (secrets),
# cassette_file (the YAML format), drift (what a failed replay says), cassette (one
# cassette through vcrpy), pytest_wiring (marker, fixture, options, provider keys).

from __future__ import annotations

from pytest_flows._internal.recording.cassette import RECORD_MODES, Recording, use_cassette
from pytest_flows._internal.recording.drift import (
    CassetteMismatchError,
    PromptDriftError,
    RecordingBlockedError,
)
from pytest_flows._internal.recording.matching import (
    DEFAULT_MATCH_ON,
    PROMPT_KEYS,
    canonical_body,
    llm_body,
    render_prompt,
)
from pytest_flows._internal.recording.pytest_wiring import (
    addoption,
    cassette_path,
    configure,
    in_ci,
    llm_cassette,
)
from pytest_flows._internal.recording.scrub import KEPT_HEADERS, PLACEHOLDER, REPLAY_KEY, Scrubber
from pytest_flows._internal.secrets import PROVIDER_KEYS, SECRET_HEADERS

#: The placeholder secrets are replaced by (the name it had before the split).
SECRET_PLACEHOLDER = PLACEHOLDER

__all__ = [
    "DEFAULT_MATCH_ON",
    "KEPT_HEADERS",
    "PROMPT_KEYS",
    "PROVIDER_KEYS",
    "RECORD_MODES",
    "REPLAY_KEY",
    "SECRET_HEADERS",
    "SECRET_PLACEHOLDER",
    "CassetteMismatchError",
    "PromptDriftError",
    "Recording",
    "RecordingBlockedError",
    "Scrubber",
    "addoption",
    "canonical_body",
    "cassette_path",
    "configure",
    "in_ci",
    "llm_body",
    "llm_cassette",
    "render_prompt",
    "use_cassette",
]
