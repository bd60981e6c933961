"""launcher: what starts and runs the npcworld system, above ``services/`` and the shared core ``npcworld``.

The ``npcworld`` command (``cli``), the supervised backend of ``npcworld run`` (``supervisor``, its guardian
``run_guard``, ``process_group``, ``stack_health``, ``run_progress``), the demo tenant and town (``demo``),
headless runs (``simulation/``), the embedded PostgreSQL + broker stack and its broker rotation
(``embedded/``), the relay process (``relay_process``) and ``npcworld why`` (``why``). It may import
``services.*`` and ``npcworld.*``; neither imports it (``tests/unit/test_layering.py``).
"""
