"""`npcworld replay --service S` reaches every read model a service keeps, including those of a service that
has no consumer handlers (the webhooks dispatcher's subscriptions)."""

from __future__ import annotations

from click.testing import CliRunner

from launcher.cli import REPLAYABLE, SERVICES, _projection, main
from services.webhooks.subscriptions import PROJECTION as SUBSCRIPTIONS


def test_the_webhooks_subscriptions_are_replayable_beside_every_consumers_projection() -> None:
    assert set(SERVICES) < set(REPLAYABLE) and "webhooks" in REPLAYABLE
    assert _projection("webhooks") is SUBSCRIPTIONS


def test_an_unknown_service_is_refused_with_the_choices_named() -> None:
    result = CliRunner().invoke(main, ["replay", "--service", "nobody"])
    assert result.exit_code == 2 and "webhooks" in result.output
