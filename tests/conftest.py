"""Root test configuration."""

from __future__ import annotations

import os

# Test webhook receivers listen on 127.0.0.1, which the egress policy refuses by default. Set before any
# fixture starts a gateway, dispatcher or `npcworld run`, so their subprocesses inherit it.
os.environ["WEBHOOK_ALLOW_HOSTS"] = "127.0.0.1,localhost"
