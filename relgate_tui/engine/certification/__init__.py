"""A certification from task to results (SPEC §3–5): task → sampler → run store → analysis → results.

Public names, by module:

* :mod:`.tasks` — ``load_task``, ``Task``, ``TaskError``, ``BundledTask``, ``bundled_tasks``, ``bundled_task_names``,
  ``format_task_table``, ``dump_items``: task files and the bundled tasks;
* :mod:`.certify` — ``CertifyConfig``, ``Prepared``, ``prepare``, ``open_prepared``, ``run_identity``,
  ``reference_classes``, ``analyse_prepared``, ``results_document``, ``build_document``: the config, the prepared
  run and the result document (``build_document`` is called only by :mod:`.finish`);
* :mod:`.prepared` — ``Prepared``, ``Split``, ``prepare``, ``open_prepared``, ``stopping_rule`` (re-exported by
  ``certify``): a run made ready to sample, without numpy (the split is computed on first use);
* :mod:`.calls` — ``CallCounts``: what an invocation cost in calls;
* :mod:`.options` — ``CertifyConfig`` (re-exported by ``certify``), ``Option``, ``SetupField``, ``options``,
  ``setup_fields``: the one table of a run's options, whose metadata generate ``relgate certify``'s flags, the run
  config's keys and Setup's form;
* :mod:`.run_gate` — ``RunGate``, ``run_gate``, ``RunGateViews``, ``live_gate``, ``plan_line``: the gate belongs to
  the run (what every screen decides it against) and the live panel's one decision and plan line;
* :mod:`.finish` — ``finish`` → ``RunResult``: the one end of a run (labels, judge sections, gate, document, status)
  that ``relgate certify``, the TUI session, ``review pull`` and the importer call;
* :mod:`.result` — ``RunResult`` (``to_json``/``from_json``, versioned by ``schema``), ``read_result``,
  ``write_result``: a run's result, typed — the only reader and writer of ``results.json``; its
  ``reliability_lower_bound`` is the run's bound, the one its gate decides on;
* :mod:`.assisted` — ``AssistedSection``, ``AssistedRow``, ``assisted_section``, ``section_from_rows``,
  ``recompute``, ``labelled_arrays``: the verification judge's typed section (``to_json()`` is the results'
  ``judge_assisted`` block);
* :mod:`.identity` — ``run_identity``, ``reference_classes``, ``VERIFICATION_MODES``: what a run's id hashes and
  the reference classes its verification mode gives each item (re-exported by ``certify``);
* :mod:`.analysis` — ``Analysis``, ``ItemAnalysis``, ``analyse``, ``core_input``, ``split_items``,
  ``item_rng``, ``used_sample_count``, ``used_sample_counts``: the seeded split and the replayed stopping rule;
* :mod:`.run_start` — ``needs_network``, ``check_reachable``, ``reachable_and_slots``, ``prefetch``,
  ``END_OF_RUN_MODULES``: before a run's first request;
* :mod:`.pipeline` — ``run``, ``run_certify``, ``RunControl``, ``CertifyOutcome`` and the events ``Sampling``,
  ``EndpointDown``, ``EndpointUp``, ``Judging``, ``Done``: the one pipeline every front end drives;
* :mod:`.judge_section` — ``judgement_section``, ``transitivity_sections``: the pairwise-judge section of a result,
  and ``judge_section_view`` → ``JudgeSectionView``, its typed view for front ends;
* :mod:`.setup` — ``RunSetup``, ``EndpointChoice``, ``TaskChoice``, ``Preflight``, ``preflight``, ``probe_latency``,
  ``start_demo``, ``endpoint_choices``, … : setting up a run from the TUI;
* :mod:`.views` — ``ResultsView``, ``ItemView``, ``ItemRow``, ``SamplingUpdate``, ``SpotProgress``, ``LiveTable``,
  ``build_results_view``, ``build_item_view``, …: frozen view models the screens show;
* :mod:`.session` — ``Session``: one run as the TUI works on it (it re-exports nothing);
* :mod:`.report` — ``write_report``, ``render_report``, ``FORMATS``, …: JSON, CSV and Markdown exports;
* :mod:`.paired_runs` — ``compare_runs``, ``compare_documents``, ``EXIT_CODES``: two stored runs item by item;
  ``paired_view`` → ``PairedView`` (``ItemChange``), the typed view the TUI reads.
* :mod:`.assisted_section` — the results' ``judge_assisted`` block; :mod:`.run_config` — ``certify --config``'s
  TOML file.
* :mod:`.batch_rounds` — sampling through a Batch API in rounds (issue 32); :mod:`.batch_plan` sizes and splits a
  round, :mod:`.batch_state` is the run's batch state (batch ids in flight, requests asked, failures, offline calls).
"""
