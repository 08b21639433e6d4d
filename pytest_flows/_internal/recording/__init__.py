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

May import: ``secrets``, ``snapshot``, ``identity``, ``runtime`` (the network guard),
``markers``, ``file_names``, ``stash``, ``errors``.
"""
# The package, by concern: matching (what a request is matched on), scrub (secrets),
# cassette_file (the YAML format), drift (what a failed replay says), cassette (one
# cassette through vcrpy), pytest_wiring (marker, fixture, options, provider keys).
# Nothing is re-exported: the plugin imports pytest_wiring at start-up, and the rest
# (vcrpy included) must load only when a test records or replays.
