"""freezegun's fake date classes are valid wherever the real ones are (frozen_dates.py).

A flows test freezes the wall clock: ``datetime.datetime`` *is* freezegun's class
meanwhile. Models declared inside one, with every date/time field form and with the
real classes captured before the freeze, must build, validate, dump and pickle as
on the bare runtime, and keep doing so after the test.
"""

from __future__ import annotations

import datetime as dt
import pickle
from typing import Any, Optional

import pytest
from pydantic import BaseModel, TypeAdapter, create_model

from pytest_flows._internal.identity import frozen_wall_clock
from pytest_flows._internal.runtime.loop import VirtualClock

# Captured before any freeze, as crewai's FORMAT_TYPE_MAP captures them at import.
REAL = {"date": dt.date, "datetime": dt.datetime, "time": dt.time, "timedelta": dt.timedelta}
SAMPLES: dict[str, Any] = {
    "date": dt.date(2024, 2, 29),
    "datetime": dt.datetime(2024, 2, 29, 12, 30, tzinfo=dt.UTC),
    "time": dt.time(8, 30),
    "timedelta": dt.timedelta(minutes=90),
}
JSON = {
    "date": "2024-02-29",
    "datetime": "2024-02-29T12:30:00Z",
    "time": "08:30:00",
    "timedelta": "PT1H30M",
}


def _fields(classes: dict[str, type]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, cls in classes.items():
        fields[name] = (cls, ...)
        fields[f"{name}_optional"] = (Optional[cls], None)  # noqa: UP045 - the typing form
        fields[f"{name}_union"] = (cls | None, None)
        fields[f"{name}_list"] = (list[cls], [])  # type: ignore[valid-type]
        fields[f"{name}_dict"] = (dict[str, cls], {})  # type: ignore[valid-type]
    return fields


def _exercise(model: type[BaseModel]) -> None:
    values = {
        **SAMPLES,
        **{f"{n}_optional": v for n, v in SAMPLES.items()},
        **{f"{n}_list": [v] for n, v in SAMPLES.items()},
        **{f"{n}_dict": {"k": v} for n, v in SAMPLES.items()},
    }
    made = model(**values)
    for name, value in SAMPLES.items():
        assert getattr(made, name) == value
        assert isinstance(getattr(made, name), REAL[name])
        assert isinstance(getattr(made, name), getattr(dt, name))
    dumped = made.model_dump(mode="json")
    assert {name: dumped[name] for name in SAMPLES} == JSON
    assert model.model_validate_json(made.model_dump_json()) == made
    assert model(**JSON).model_dump() == model(**SAMPLES).model_dump()
    assert model.model_json_schema()["properties"]["datetime"]["format"] == "date-time"


def _pickle_round_trip(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


class Declared(BaseModel):
    # a module-level model whose schema was built before any freeze
    when: dt.datetime
    day: dt.date


@pytest.mark.flows
def test_models_with_every_date_field_form_work_inside_a_flows_test() -> None:
    assert dt.datetime is not REAL["datetime"], "the test body runs with the frozen clock"
    for classes in (REAL, {name: getattr(dt, name) for name in REAL}):
        model = create_model("Stamped", **_fields(classes))
        _exercise(model)
    # declared here, picklable by name as a model of a module first imported now would be
    for name, classes in (
        ("StampedReal", REAL),
        ("StampedFake", {n: getattr(dt, n) for n in REAL}),
    ):
        globals()[name] = model = create_model(name, __module__=__name__, **_fields(classes))
        made = model(**SAMPLES, datetime_list=[dt.datetime.now()], date_list=[dt.date.today()])
        again = _pickle_round_trip(made)
        assert again == made
        assert type(again.datetime_list[0]) is dt.datetime
    real_date: Any = REAL["date"]
    assert TypeAdapter(list[real_date]).validate_python(["2024-02-29"]) == [SAMPLES["date"]]
    declared = Declared(when=dt.datetime.now(), day=dt.date.today())
    assert _pickle_round_trip(declared) == declared


_built_inside: list[type[BaseModel]] = []


def test_a_model_declared_while_frozen_keeps_working_after_the_freeze() -> None:
    with frozen_wall_clock(VirtualClock()):
        fake = {name: getattr(dt, name) for name in REAL}
        assert fake["datetime"] is not REAL["datetime"]
        built = create_model("Built", **_fields(fake))
        deferred = create_model("Deferred", __config__={"defer_build": True}, **_fields(fake))
        stamp = dt.datetime.now()
        pickled = pickle.dumps(stamp)
    assert dt.datetime is REAL["datetime"]
    _exercise(built)
    _exercise(deferred)  # its schema is built only now, from the fake classes
    # a pickle made while frozen names the real class
    assert type(pickle.loads(pickled)) is REAL["datetime"]


def test_a_plain_freezegun_freeze_is_unchanged() -> None:
    import freezegun

    with frozen_wall_clock(VirtualClock()):
        pass  # the fake classes now carry the real types' schema
    with freezegun.freeze_time("2024-01-01"):
        # freezegun alone, no harness: a fake annotation works as before
        model = create_model("Plain", when=(dt.datetime, ...))
        assert model(when="2024-01-01T00:00:00").when == dt.datetime(2024, 1, 1)
