"""Pure statistics and algorithms. No IO, no Textual, no httpx.

* :mod:`.certification` — paper 004 (conformal certification, gates, stopping, intervals);
* :mod:`.canon` — canonicalizers (answer → class);
* :mod:`.judge` — paper 000 (tournaments, cycles, Likert sets); :mod:`.judge_intervals` — paper 001;
  :mod:`.irt` — paper 002; :mod:`.jury` — paper 003;
* :mod:`.types`, :mod:`.jsonsafe`, :mod:`.text`, :mod:`.redact`, :mod:`.perturb` — shared small pieces.
"""
