"""freezegun's fake date classes, valid wherever the real ones are.

While the wall clock is frozen, ``datetime.datetime`` and ``datetime.date`` *are*
freezegun's ``FakeDatetime``/``FakeDate`` (subclasses of the real ones whose
metaclass makes ``isinstance`` accept real instances). Code that compares a class
by identity then tells the two apart, and pydantic does exactly that when it picks
a field's schema (``obj is datetime.datetime``):

- a real class captured before the freeze (a module-level ``{"date-time":
  datetime.datetime}`` table, a name imported before the test) no longer matches
  while frozen: ``PydanticSchemaGenerationError`` for a field the bare runtime
  validates;
- a fake class captured during the freeze (a module first imported, or a model
  declared, inside a flows test) would not match after it.

So, while frozen, pydantic's schema generator compares annotations with the real
classes, and the fake classes carry the real types' pydantic core schema
(``__get_pydantic_core_schema__``), which holds frozen or not. Pickles name the
real classes (see ``identity._pickled_as_real``). ``time`` and ``timedelta`` are
never faked.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["fakes_valid_as_real"]


class _RealDatetimeNames(types.ModuleType):
    """Stands in for ``datetime`` inside pydantic's schema generator only: its
    ``date`` and ``datetime`` are the real classes, everything else the module's."""

    def __init__(self, real_module: types.ModuleType, real: dict[str, type]) -> None:
        super().__init__("datetime")
        self._real_module = real_module
        vars(self).update(real)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real_module, name)


def _schema_of(kind: str) -> Any:
    def __get_pydantic_core_schema__(cls: type, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        # What pydantic's own match_type gives the real class (frozen or not).
        return core_schema.date_schema() if kind == "date" else core_schema.datetime_schema()

    return classmethod(__get_pydantic_core_schema__)


def _give_fakes_real_schemas(fz_api: Any) -> None:
    # Kept after the test: a model built later from a fake annotation must still validate.
    for cls, kind in ((fz_api.FakeDate, "date"), (fz_api.FakeDatetime, "datetime")):
        if "__get_pydantic_core_schema__" not in vars(cls):
            cls.__get_pydantic_core_schema__ = _schema_of(kind)


@contextlib.contextmanager
def fakes_valid_as_real(fz_api: Any) -> Iterator[None]:
    """Inside an active freeze: pydantic treats the fake and the real date classes alike."""
    import datetime

    from pytest_flows._internal.runtime.stdlib_seams import PYDANTIC

    _give_fakes_real_schemas(fz_api)
    names = _RealDatetimeNames(
        datetime, {"date": fz_api.real_date, "datetime": fz_api.real_datetime}
    )
    with PYDANTIC["pydantic._internal._generate_schema:datetime"].replace(names):
        yield
