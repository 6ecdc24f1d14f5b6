"""The built-in demo endpoint (SPEC §4.6): clearly labelled *simulated* models behind a real OpenAI-compatible
HTTP server on 127.0.0.1, for the demo, the tests and the benchmarks.

Modules, one job each: :mod:`~relgate_tui.demo.hashing` (stable hashes, request RNGs), :mod:`~.items` (what a
question is), :mod:`~.answers` (answer models and their exact distributions), :mod:`~.forms` (surface forms),
:mod:`~.catalogue` (recognising bundled items and human scores), :mod:`~.tokens` (completions and token
log-probs), :mod:`~.judge` (``sim-judge``), :mod:`~.jury` and :mod:`~.recognise` (the judge pool),
:mod:`~.paraphraser`, :mod:`~.simulate` (the model registry, one chat request),
:mod:`~.embeddings` (``sim-embed``), :mod:`~.faults`, :mod:`~.responses`, :mod:`~.server` (HTTP),
:mod:`~.process` (the server in a child process), :mod:`~.cli` (``relgate demo-server``).

Models (``GET /v1/models``; every name starts with ``sim-``):

=====================  ===================================================================================
``sim-strong``,        answer models with known per-item p* (:mod:`~.answers`)
``sim-mid``,
``sim-weak``
``sim-judge``          pairwise / Likert / certification judge (:mod:`~.judge`), exact prompts of
                       ``engine.judging.prompts`` only
``sim-judge-long``,    a pool of judges whose reliability depends on features of the item's text, and one
``-short``,            whose scores shift under prompt perturbations (:mod:`~.jury`); they also read
``-numbers``,          perturbed and other direct-scoring prompts (:mod:`~.recognise`)
``-hedges``,
``-sensitive``
``sim-paraphraser``    meaning-preserving rewrites of the prompt it is given (:mod:`~.paraphraser`)
``sim-embed``          ``POST /v1/embeddings`` only (:mod:`~.embeddings`)
=====================  ===================================================================================

Every judge reports exact token log-probabilities (``logprobs``/``top_logprobs``) consistent with its sampled
verdict or score (:mod:`~.tokens`).

This package sits beside ``engine``: it uses ``engine`` (prompts, tasks, judge data) and ``core`` (canonicalizers);
``engine`` imports it only lazily, to start the embedded demo.

:mod:`.batches` serves the Batch API (files, batches, output and error files) for the demo server.
"""

from __future__ import annotations

from relgate_tui.demo.answers import (
    ANSWER_MODELS,
    PROFILES,
    AnswerDistribution,
    ModelProfile,
    answer_distribution,
    distractor_values,
    sample_completion,
    true_invalid_prob,
    true_p_star,
)
from relgate_tui.demo.catalogue import ItemCatalogue, bundled_catalogue, human_quality_index
from relgate_tui.demo.cli import main
from relgate_tui.demo.embeddings import EMBED_MODEL, embed
from relgate_tui.demo.faults import FAULT_KINDS, FaultPlan
from relgate_tui.demo.forms import render_answer
from relgate_tui.demo.hashing import request_rng
from relgate_tui.demo.items import SimItem, sim_item_from_task_item, unknown_item, unknown_item_id
from relgate_tui.demo.judge import JUDGE_MODEL, JudgeKnobs, judge_completion, judge_reply, latent_quality
from relgate_tui.demo.jury import POOL_JUDGES, item_features, reliability
from relgate_tui.demo.paraphraser import PARAPHRASER_MODEL, paraphrase
from relgate_tui.demo.process import DemoServerProcess
from relgate_tui.demo.server import DemoServer, RequestRecord
from relgate_tui.demo.simulate import CHAT_MODELS, JUDGE_MODELS, MODEL_DESCRIPTIONS, SIM_MODELS, simulate_chat
from relgate_tui.demo.tokens import SimCompletion, TokenChoice

__all__ = [
    "ANSWER_MODELS",
    "CHAT_MODELS",
    "EMBED_MODEL",
    "FAULT_KINDS",
    "JUDGE_MODEL",
    "JUDGE_MODELS",
    "MODEL_DESCRIPTIONS",
    "PARAPHRASER_MODEL",
    "POOL_JUDGES",
    "PROFILES",
    "SIM_MODELS",
    "AnswerDistribution",
    "DemoServer",
    "DemoServerProcess",
    "FaultPlan",
    "ItemCatalogue",
    "JudgeKnobs",
    "ModelProfile",
    "RequestRecord",
    "SimCompletion",
    "SimItem",
    "TokenChoice",
    "answer_distribution",
    "bundled_catalogue",
    "distractor_values",
    "embed",
    "human_quality_index",
    "item_features",
    "judge_completion",
    "judge_reply",
    "latent_quality",
    "main",
    "paraphrase",
    "reliability",
    "render_answer",
    "request_rng",
    "sample_completion",
    "sim_item_from_task_item",
    "simulate_chat",
    "true_invalid_prob",
    "true_p_star",
    "unknown_item",
    "unknown_item_id",
]
