"""Paper 003: jury-on-demand — per-item reliability predictors choose and weight a jury of LLM judges.

- :mod:`.features` — judge-independent text features (size, special words, complexity, embeddings).
- :mod:`.predictors` — per-judge gradient-boosted reliability classifiers.
- :mod:`.protocol` — the jury score, baselines and statistics; :mod:`.study` runs the 60/20/20 protocol.
- :mod:`.simulate` — a simulated pool whose judges' reliability depends on the item.
- :mod:`.groups` — grouped splits: no group in both the training and the test part.
"""

from relgate_tui.core.jury.protocol import BASELINES, JuryData, JuryStudy, jury_scores, kendall
from relgate_tui.core.jury.study import JuryInputError, run_jury_study

__all__ = ["BASELINES", "JuryData", "JuryInputError", "JuryStudy", "jury_scores", "kendall", "run_jury_study"]
