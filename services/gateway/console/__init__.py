"""The ops console: server-rendered pages at ``/console`` for a tenant's worlds, NPCs, the why of any event
and the deployment's operations, signed in with an API key (see ``session``)."""

from services.gateway.console.pages import router

__all__ = ["router"]
