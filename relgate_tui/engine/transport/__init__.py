"""Talking to model servers (SPEC §4.1–4.4). Imports neither :mod:`~relgate_tui.engine.runs` nor
:mod:`~relgate_tui.engine.certification`; its data types are :mod:`relgate_tui.engine.records`'.

Public names, by module:

* :mod:`.httpx_import` — ``install``: httpx imported without its own command-line client (installed by
  :mod:`relgate_tui.engine`);
* :mod:`.http11` — ``LeanHTTPTransport``, ``ResponseTooLarge``: a lean HTTP/1.1 keep-alive transport for httpx;
* :mod:`.httpread` — ``BodyTooLarge``, ``inflate``, ``status_of``, ``status_of_sync``, ``get_bounded``,
  ``get_bounded_sync``: bounded reads of small responses (probes, model lists);
* :mod:`.endpoints` — ``EndpointConfig``, ``Completion``, ``RequestFailed``, ``complete``, ``request_body``,
  ``request_fingerprint``, ``fingerprinter``, ``body_encoder``, ``sample_seed``, ``parse_response``,
  ``parse_retry_after``: OpenAI-compatible and generic JSON endpoints;
* :mod:`.discovery` — ``DiscoveredServer``, ``discover``, ``discover_local_servers``, ``list_models``;
* :mod:`.logprobs` — ``TokenLogprob``, ``parse_logprobs``, ``to_json``, ``from_json``;
* :mod:`.embeddings` — ``embed_texts``;
* :mod:`.prompts` — ``item_messages``, ``user_content``: how a task item becomes chat messages;
* :mod:`.cache` — ``SampleCache``: completed samples by request fingerprint, on disk;
* :mod:`.concurrency` — ``AdaptiveLimit``, ``advertised_slots``: how many requests to keep in flight (AIMD);
* :mod:`.tls` — ``tls_context``: one verified TLS context for every client of the process;
* :mod:`.probe` — ``probe``: the pre-flight latency probe at a run's concurrency;
* :mod:`.sampler` — ``Sampler``, the events ``SampleDone``, ``SampleFailed``, ``ItemDone``, ``EndpointDown``,
  ``EndpointUp``, ``EndpointUnreachable``, and ``run_sampling`` (``SamplingJob``, ``RetryPolicy``, ``SamplingTotals``
  and ``class_counts`` re-exported);
* :mod:`.jobs` — ``SamplingJob``, ``RetryPolicy``, ``SamplingTotals``, ``class_counts``: what a sampler is asked and
  what it cost;
* :mod:`.itemwork` — ``ItemWork``: one item's claimed, returned and delivered samples while it is sampled;
* :mod:`.batch` — the Batch API client (upload, create, poll, read the output and error files).
"""
