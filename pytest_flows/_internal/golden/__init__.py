"""Golden replay: what yesterday's run persisted must still restore and resume on today's code.

``@pytest.mark.golden`` on a flows test; ``pytest --flows-golden-update``
records, beside the test (``__goldens__/<module>/<test>.json``), every save and
checkpoint the run persisted (in its encoded form, through the production
codec), the normalized trace, and the scripted replies it used. Every later run
runs the test as usual and then checks the recording against today's code; a
break is one of :data:`BREAK_KINDS`:

* ``codec``: today's code cannot decode the stored bytes;
* ``schema``: a stored state does not fit today's state model;
* ``topology``: the stored run names methods, routes, listeners or
  executors/edges that are gone or changed;
* ``behaviour``: everything restores, but a resumed run (or the test's run)
  differs in trace or output.

May import: ``contract``, ``fakes``, ``state``, ``secret_check``, ``normal_form``,
``trace``, ``markers``, ``file_names``, ``stash``, ``errors``.
"""
