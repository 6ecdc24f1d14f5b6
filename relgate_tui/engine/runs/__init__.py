"""What is stored on disk for a run (SPEC §4.5, §7): crash-safe, append-only, viewable without a lock. Imports no
:mod:`~relgate_tui.engine.transport`.

Public names, by module:

* :mod:`.store` — ``RunStore``, ``RunStatus`` (from :mod:`.status`), ``RunStoreError``, ``json_object``: one directory
  per run;
* :mod:`.files` — ``make_run_id``, ``canonical_json``, ``read_jsonl``, ``jsonl_objects``, ``atomic_write_json``,
  ``atomic_write_bytes``: file-level helpers (the one atomic write, the one JSONL reader);
* :mod:`.labels` — ``Label``, ``LABEL_SOURCES``, ``replay_labels``: verification verdicts and their replay;
* :mod:`.labels_file` — ``parse_labels_file``, ``check_label_ranks``, ``apply_labels``, ``CRASH_AFTER_LABELS_ENV``:
  the labels file of ``certify --labels``;
* :mod:`.sampleindex` — ``ItemSamples``, ``prefix_stats``, ``group_parsed``, ``extend_grouped``, ``stamp``,
  ``load_index``, ``write_index``, ``INDEX``: the derived per-item sample index;
* :mod:`.listing` — ``RunSummary``, ``summarise``, ``list_runs``, ``open_run``, ``repair_run``;
* :mod:`.lock` — ``write_lock``: one writer per stored directory (runs and audits);
* :mod:`.paths` — ``data_dir``, ``cache_dir``, ``runs_dir``, ``HOME_ENV``, ``APP_NAME``.
* :mod:`.inputs` — the one way relgate opens a file it reads; :mod:`.outputs` — the one way it writes one.
* :mod:`.fsync` — the run store's periodic fsync on its own thread.
"""
