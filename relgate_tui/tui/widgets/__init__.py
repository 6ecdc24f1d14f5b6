"""Widgets the screens share: :mod:`.progress` (the one progress panel of a long pass), :mod:`.plots` (charts
through ``textual-plotext``), :mod:`.cycles` (what the cycle viewers show behind an edge), :mod:`.filetree` (a
suffix-filtered directory tree), :mod:`.safetext` (untrusted text as plain ``Text``), :mod:`.footer` (a footer whose
keys always fit, or say ``? more keys``)."""
