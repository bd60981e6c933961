"""Row-wise L2 normalisation shared by the embedder adapters."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def l2_normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Scale each row to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    normalised: npt.NDArray[np.float32] = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return normalised
