"""Paper 004: conformal certification of self-consistency answers (pure statistics).

Public names, by module: :mod:`.base` (``ItemRecord``, ``item_record``, ``m_star_sorted``, ``validated_scores``,
``readonly``, ``n_covered``: what the others share), :mod:`.certify` (``CertificationInput``, ``build_input``,
``CertificationResult``, ``compute_results``, ``CoverageCurve``, ``coverage_curve``), :mod:`.readouts`
(``bootstrap_summary``, ``split_stability``, ``split_permutations``, ``readout_json``), :mod:`.conformal`,
:mod:`.quantile`, :mod:`.watched` (the human-only bound when watched: anytime or one-look), :mod:`.scores`, :mod:`.ranking`, :mod:`.adaptive_sets`, :mod:`.weighted_sets`, :mod:`.intervals`,
:mod:`.gate` (its names, numpy-free, in :mod:`.gate_names`), :mod:`.stopping` (its batch decisions read :mod:`.grids`' ``IntegerGrid``; what every rule shares, and the ``none`` rule, numpy-free in :mod:`.stopping_base`), :mod:`.paired` and
:mod:`.synthetic` (each module's ``__all__``).
"""
