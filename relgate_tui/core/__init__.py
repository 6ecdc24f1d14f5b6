"""Pure statistics and algorithms. No IO, no Textual, no httpx.

* :mod:`.certification` — paper 004 (conformal certification, gates, stopping, intervals);
* :mod:`.canon` — canonicalizers (answer → class);
* :mod:`.judge` — paper 000 (tournaments, cycles, Likert sets); :mod:`.judge_intervals` — paper 001;
  :mod:`.irt` — paper 002; :mod:`.jury` — paper 003;
* :mod:`.types`, :mod:`.jsonsafe`, :mod:`.text`, :mod:`.redact`, :mod:`.perturb`, :mod:`.special` (scipy's special functions, imported on first call) — shared small pieces.

Also: :mod:`.agreement` (judge-vs-human agreement), :mod:`.ppi` (the judge-assisted bound), :mod:`.label_prefix` (the labelled prefix it may use), :mod:`.label_limits` (the
fewest labels any valid bound can clear a gate with), :mod:`.rating_scale` (a rating scale read from a file),
:mod:`.review` (team review's pure part), :mod:`.judge_certificate` (the judge certificate: selective verification by
fixed-sequence exact tests, agreement bounds) with :mod:`.judge_certificate_plan` (its sequence and the planner:
P(PASS) of the whole procedure) and :mod:`.judge_certificate_checks` (units and random-sample checks),
:mod:`.typed_json` (typed JSON round trips of result dataclasses), :mod:`.judge_cascade` (a cascade of judges, cheapest
first, certified as one: a path of threshold vectors tested as one fixed sequence).
"""
