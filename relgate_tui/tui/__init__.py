"""The Textual application. Builds on ``relgate_tui.engine`` and ``relgate_tui.core``.

The app (:mod:`.app`, :mod:`.services`, :mod:`.registry`: every screen by name), the screens (:mod:`.home`,
:mod:`.setup` with :mod:`.judge_fields`, :mod:`.option_fields`, :mod:`.preflight_text` and
:mod:`.setup_probe`, :mod:`.sampling`, :mod:`.spotcheck`,
:mod:`.results` with :mod:`.results_judges`, :mod:`.runs`, :mod:`.compare`, :mod:`.importer`, :mod:`.settings` with
:mod:`.settings_file`, :mod:`.itemsamples`, :mod:`.confirm`, :mod:`.help`), the packages :mod:`.judge` (judge audit),
:mod:`.studies` (papers 001–003), :mod:`.review` (team review) and :mod:`.widgets`; :mod:`.forms` (form fields),
:mod:`.demo_endpoint` (the embedded demo), :mod:`.screenshots` (the README's screenshots).
"""
