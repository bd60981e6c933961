"""Offline importance from the anchor bank: sentences it has never seen land where a person would put them."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import numpy as np
import numpy.typing as npt

from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.llm.offline.anchors import IMPORTANCE_ANCHORS
from npcworld.llm.offline.importance import AnchorScorer, default_scorer

# None of these is in the anchor bank (checked below); names and places are made up for this test.
EVERYDAY = (
    "a crow landed on the fence",
    "Bertram is tying his apron before the shift",
    "the kettle is in use: boiling water for tea",
    "Odile is sweeping the porch",
    "Quentin is standing in line at the post office",
    "Yara is folding towels in the laundry room",
    "the curtains are drawn",
    "Hector is eating a sandwich on the bench",
)
DRAMATIC = (
    "a huge red dragon burned the watchtower",
    "Odile's husband passed away in the night",
    "Quentin was caught stealing from the church and taken away by the police",
    "Yara told Hector she is leaving him for good",
    "the bridge collapsed while the school bus was crossing it",
    "Bertram is standing for mayor against the sitting councillor",
    "Hector proposed to Yara by the lake",
    "a stranger pulled a knife on Bertram in the alley",
)


def test_the_held_out_sentences_are_not_anchors() -> None:
    anchors = {text.lower() for text, _ in IMPORTANCE_ANCHORS}
    assert not anchors & {s.lower() for s in EVERYDAY + DRAMATIC}
    assert {level for _, level in IMPORTANCE_ANCHORS} == set(range(1, 11))


def test_dramatic_events_outrank_everyday_ones_it_has_never_seen() -> None:
    scorer = default_scorer()
    everyday = scorer.scores(EVERYDAY)
    dramatic = scorer.scores(DRAMATIC)
    assert max(everyday) <= 4 and min(dramatic) >= 6, (everyday, dramatic)
    pairs = list(product(everyday, dramatic))
    assert sum(e < d for e, d in pairs) / len(pairs) >= 0.95
    dragon, crow = scorer.scores(["a huge red dragon burned the watchtower", "a crow landed on the fence"])
    assert dragon >= crow + 5


def test_a_score_is_the_same_alone_in_a_batch_and_in_a_fresh_scorer() -> None:
    texts = [*EVERYDAY[:3], *DRAMATIC[:3]]
    batch = default_scorer().scores(texts)
    alone = [default_scorer().scores([t])[0] for t in texts]
    fresh = AnchorScorer(LocalMiniLMEmbedder().embed_sync).scores(list(reversed(texts)))
    assert batch == alone == list(reversed(fresh))


def test_anchors_are_embedded_once_and_a_repeated_text_is_not_embedded_again() -> None:
    model = LocalMiniLMEmbedder()
    calls: list[int] = []

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        return model.embed_sync(texts)

    scorer = AnchorScorer(embed)
    first = scorer.scores(["Odile is sweeping the porch", "Odile is sweeping the porch", DRAMATIC[0]])
    again = scorer.scores([DRAMATIC[0], EVERYDAY[0]])
    assert first[0] == first[1] and again[0] == first[2]
    assert calls == [2, len(IMPORTANCE_ANCHORS), 1]


def test_a_line_is_rated_by_what_it_tells_and_pleasantries_alone_rate_as_everyday() -> None:
    scorer = default_scorer()
    news = 'Odile said to Bertram: "A fire broke out at the mill and two workers are hurt."'
    padded = ('Odile said to Bertram: "Hi Bertram! Thanks for telling me! That reminds me: A fire broke out'
              ' at the mill and two workers are hurt. Good talking to you. Goodbye!"')
    small_talk = ('Odile said to Bertram: "Hello Bertram, I\'m Odile. Nice to meet you. See you then.'
                  ' Goodbye!"')
    assert scorer.scores([news, padded, small_talk]) == [scorer.scores([news])[0]] * 2 + [1]
    assert scorer.scores([news])[0] >= 7
