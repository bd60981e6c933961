"""``npcworld eval``: interviews graded against the event log, the paper's ablations ranked with TrueSkill,
and SmartPlay-style games, all through the public API of a private backend."""
