"""Reflection settings: the Celery broker defaults to kombu's SQLAlchemy transport on the database."""

from __future__ import annotations

import pydantic
import pytest

from npcworld.errors import ConfigError
from services.reflection.settings import ReflectionSettings, Settings, sqlalchemy_broker_url


def test_the_broker_defaults_to_the_sqlalchemy_transport_on_postgres_with_psycopg() -> None:
    assert sqlalchemy_broker_url("postgresql://npc:pw@db:5432/npcworld") == (
        "sqla+postgresql+psycopg://npc:pw@db:5432/npcworld"
    )
    embedded = "postgresql://postgres:@/npcworld?host=/home/x/.npcworld/pg"
    assert sqlalchemy_broker_url(embedded) == "sqla+postgresql+psycopg://postgres:@/npcworld?host=/home/x/.npcworld/pg"


def test_celery_broker_url_wins_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://redis:6379/0")
    assert Settings().broker_url("postgresql://db/npcworld") == "redis://redis:6379/0"


def test_a_database_url_that_is_not_postgres_is_refused() -> None:
    with pytest.raises(ConfigError, match="DATABASE_URL"):
        sqlalchemy_broker_url("mysql://db/npcworld")


def test_a_bad_threshold_fails_at_start_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFLECTION_THRESHOLD", "0")
    with pytest.raises(pydantic.ValidationError, match="REFLECTION_THRESHOLD"):
        ReflectionSettings()


def test_defaults_follow_the_paper() -> None:
    s = ReflectionSettings()
    assert (s.reflection_threshold, s.reflection_recent, s.reflection_retrieve_k) == (150, 100, 30)
    assert s.reflection_counted_kinds == ("observation", "dialogue")
