"""Team review in the terminal UI (issue 21): connect and pick a session (Home → Review (team)), label what the
queue hands this reviewer (the spot-check's keys), the adjudicator's queue, and Runs → Publish for review.

Modules: :mod:`.connect`, :mod:`.label`, :mod:`.adjudicate`, :mod:`.publish`, :mod:`.app` (``review open``),
:mod:`.notice` (Results' review line), :mod:`.dbwork` (every store call in a thread worker).
"""
