"""Judge-independent item features for reliability prediction (paper 003, §3.2 and App. A, Table 3).

Each text component (``input``: the source/context; ``output``: the judged text) gets the same features, prefixed
with its name; the compression ratios compare output to input. Groups (the JSON says which were used):

- ``size`` — COUNT_WORD, COUNT_CHAR, COUNT_SENTENCE, COUNT_PARAGRAPH, NUM_WORD_SENTENCE, NUM_CHAR_WORD, and
  CHAR_COMPRESSION / WORD_COMPRESSION (output over input).
- ``special`` — DIFFICULT_WORD (> 2 syllables), STOP_WORDS, MODALITY (modal verbs), HEDGES, NUMBER_COUNT,
  NAMED_ENTITY (capitalised words not starting a sentence: a tagger-free proxy), FACTUAL_DENSITY (entities and numbers
  per word), NGRAM_COUNT (distinct 3-grams), NEGATION_SENTENCE, COUNT_QUESTION.
- ``complexity`` — TOKEN_ENTROPY (Shannon entropy of the word distribution, bits), LEXICAL_DIVERSITY (type–token
  ratio), READING_INDEX (Flesch reading ease, syllables by a vowel-group heuristic), NGRAM_REPETITION (share of
  repeated 3-grams), COREFERENCE_CHAIN (pronouns per sentence), COREFERENCE_AMBIGUOUS (sentences with more than one
  pronoun), RHETORICAL_STRUCTURE (sentences with discourse markers).
- ``embedding`` — top-10 PCA components of each text's embedding and its cosine similarity to topic anchors; from an
  embeddings endpoint when the user gives one, else the documented text-only fallback: TF-IDF (word 1–2-grams) reduced
  by truncated SVD, fitted on the training split only.

Not computed (the paper uses NLTK/WordNet taggers and sentiment tools that relgate does not ship; no data downloads at
run time): SYNTACTIC_AMBIGUITY, SEMANTIC_AMBIGUITY, SYNTACTIC_ANOMALY, POLARITY, SUBJECTIVITY.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*")
SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)|\n+")
STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being it its this
that these those i you he she we they me him her us them my your his our their not no so than then there here what which
who whom whose when where why how all any both each few more most other some such only own same too very can will just
do does did have has had""".split())
MODAL = frozenset("can could may might must shall should will would ought".split())
HEDGE = frozenset("""maybe perhaps possibly probably likely unlikely apparently seemingly somewhat arguably roughly
approximately about around suggest suggests suggested seem seems seemed appear appears appeared believe believes
think thinks guess""".split())
NEGATION = frozenset("no not never none nothing nobody neither nor cannot without n't don't doesn't didn't isn't "
                     "wasn't aren't weren't won't wouldn't can't couldn't shouldn't".split())
PRONOUN = frozenset("he she it they him her them his hers its their theirs this that these those".split())
MARKERS = frozenset("""however therefore moreover furthermore thus instead hence consequently nevertheless nonetheless
although though whereas meanwhile besides additionally""".split())
TOPICS = ("market", "bank", "business", "tech", "education", "politics", "legal", "sports", "media", "science")

SIZE = ("COUNT_WORD", "COUNT_CHAR", "COUNT_SENTENCE", "COUNT_PARAGRAPH", "NUM_WORD_SENTENCE", "NUM_CHAR_WORD")
SPECIAL = ("DIFFICULT_WORD", "STOP_WORDS", "MODALITY", "HEDGES", "NUMBER_COUNT", "NAMED_ENTITY", "FACTUAL_DENSITY",
           "NGRAM_COUNT", "NEGATION_SENTENCE", "COUNT_QUESTION")
COMPLEXITY = ("TOKEN_ENTROPY", "LEXICAL_DIVERSITY", "READING_INDEX", "NGRAM_REPETITION", "COREFERENCE_CHAIN",
              "COREFERENCE_AMBIGUOUS", "RHETORICAL_STRUCTURE")
GROUPS = ("size", "special", "complexity", "embedding", "logprob")


_VOWELS = re.compile(r"[aeiouy]+")


@functools.lru_cache(maxsize=1 << 16)
def syllables(word: str) -> int:
    """Vowel groups, minus a silent final 'e', at least one (the usual Flesch heuristic). Remembered per word: a
    corpus repeats its words, and the count is a function of the word alone."""
    w = word.lower()
    groups = len(_VOWELS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee")) and groups > 1:
        groups -= 1
    return max(1, groups)


def _sentences(text: str) -> list[str]:
    parts = [s.strip() for s in SENTENCE_END.split(text)]
    return [s for s in parts if s] or ([text.strip()] if text.strip() else [])


def text_features(text: str) -> dict[str, float]:
    """The ``size``, ``special`` and ``complexity`` features of one text (see the module docstring)."""
    text = text or ""
    tokens = WORD.findall(text)
    words = [t for t in tokens if t[0].isalpha()]
    lower = [w.lower() for w in words]
    sents = _sentences(text)
    n_w, n_s = len(words), max(1, len(sents))
    syl = [syllables(w) for w in words]
    trigrams = list(zip(lower, lower[1:], lower[2:], strict=False))
    counts = Counter(lower)
    entropy = -sum(c / n_w * math.log2(c / n_w) for c in counts.values()) if n_w else 0.0
    sent_tokens = [WORD.findall(s) for s in sents]
    entities = sum(1 for st in sent_tokens for w in st[1:] if w[0].isupper() and w.lower() not in STOP)
    numbers = sum(1 for t in tokens if t[0].isdigit())
    sent_words = [[w.lower() for w in st] for st in sent_tokens]
    pronouns = [sum(1 for w in sw if w in PRONOUN) for sw in sent_words]
    flesch = (206.835 - 1.015 * (n_w / n_s) - 84.6 * (sum(syl) / n_w)) if n_w else 0.0
    return {
        "COUNT_WORD": float(n_w), "COUNT_CHAR": float(len(text)), "COUNT_SENTENCE": float(len(sents)),
        "COUNT_PARAGRAPH": float(len([p for p in re.split(r"\n\s*\n", text) if p.strip()])),
        "NUM_WORD_SENTENCE": n_w / n_s, "NUM_CHAR_WORD": (sum(map(len, words)) / n_w) if n_w else 0.0,
        "DIFFICULT_WORD": float(sum(1 for s in syl if s > 2)), "STOP_WORDS": float(sum(w in STOP for w in lower)),
        "MODALITY": float(sum(w in MODAL for w in lower)), "HEDGES": float(sum(w in HEDGE for w in lower)),
        "NUMBER_COUNT": float(numbers), "NAMED_ENTITY": float(entities),
        "FACTUAL_DENSITY": (entities + numbers) / n_w if n_w else 0.0, "NGRAM_COUNT": float(len(set(trigrams))),
        "NEGATION_SENTENCE": float(sum(any(w in NEGATION for w in sw) for sw in sent_words)),
        "COUNT_QUESTION": float(text.count("?")),
        "TOKEN_ENTROPY": entropy, "LEXICAL_DIVERSITY": len(counts) / n_w if n_w else 0.0, "READING_INDEX": flesch,
        "NGRAM_REPETITION": (1 - len(set(trigrams)) / len(trigrams)) if trigrams else 0.0,
        "COREFERENCE_CHAIN": sum(pronouns) / n_s, "COREFERENCE_AMBIGUOUS": float(sum(p > 1 for p in pronouns)),
        "RHETORICAL_STRUCTURE": float(sum(any(w in MARKERS for w in sw) for sw in sent_words)),
    }


def item_feature_matrix(inputs: Sequence[str | None], outputs: Sequence[str | None]) -> tuple[np.ndarray, list[str]]:
    """The text-feature matrix of the items (rows) and the column names, ``input_…``/``output_…`` prefixed, plus the
    compression ratios. A missing text contributes zeros (and a missing input gives compression ratios of 0)."""
    names: list[str] = []
    rows = []
    has_input = any(t for t in inputs)
    for src, out in zip(inputs, outputs, strict=True):
        fo = text_features(out or "")
        row = [fo[k] for k in SIZE + SPECIAL + COMPLEXITY]
        if has_input:
            fi = text_features(src or "")
            row += [fi[k] for k in SIZE + SPECIAL + COMPLEXITY]
            row += [fo["COUNT_CHAR"] / fi["COUNT_CHAR"] if fi["COUNT_CHAR"] else 0.0,
                    fo["COUNT_WORD"] / fi["COUNT_WORD"] if fi["COUNT_WORD"] else 0.0]
        rows.append(row)
    names = [f"output_{k}" for k in SIZE + SPECIAL + COMPLEXITY]
    if has_input:
        names += [f"input_{k}" for k in SIZE + SPECIAL + COMPLEXITY] + ["CHAR_COMPRESSION", "WORD_COMPRESSION"]
    return np.asarray(rows, dtype=float).reshape(len(outputs), len(names)), names


def group_of(name: str) -> str:
    """The feature group a column belongs to."""
    base = name.split("_", 1)[1] if name.startswith(("input_", "output_")) else name
    if base in SPECIAL:
        return "special"
    if base in COMPLEXITY:
        return "complexity"
    if base.startswith(("pca_", "topic_")):
        return "embedding"
    if base.startswith("logprob_"):
        return "logprob"
    return "size"


class EmbeddingFeatures:
    """Top-10 PCA components of text embeddings and cosine similarity to topic anchors, fitted on training rows.

    ``embeddings`` (items × dims) come from an embeddings endpoint, or — the text-only fallback — from TF-IDF (word 1–2
    grams, sublinear tf) reduced to 64 dims by truncated SVD; ``anchors`` (topics × dims) are the embeddings of the topic
    words (for the fallback: the topic words through the same TF-IDF/SVD)."""

    def __init__(self, n_components: int = 10) -> None:
        self.n_components = n_components

    def fit_transform(self, embeddings: np.ndarray, anchors: np.ndarray | None, train: np.ndarray,
                      prefix: str) -> tuple[np.ndarray, list[str]]:
        from sklearn.decomposition import PCA

        k = int(min(self.n_components, embeddings.shape[1], max(1, train.size - 1)))
        pca = PCA(n_components=k, random_state=0).fit(embeddings[train])
        cols = [pca.transform(embeddings)]
        names = [f"{prefix}_pca_{i + 1}" for i in range(k)]
        if anchors is not None and anchors.size:
            e = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
            a = anchors / np.maximum(np.linalg.norm(anchors, axis=1, keepdims=True), 1e-12)
            cols.append(e @ a.T)
            names += [f"{prefix}_topic_{t}" for t in TOPICS[: anchors.shape[0]]]
        return np.hstack(cols), names


class TfidfCorpus:
    """The texts' word 1–2-gram counts, tokenised once for every split: each split's TF-IDF is cut from them.

    ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=20_000)`` fitted on a split's training
    texts keeps the terms of those texts (alphabetical), at most the 20,000 most frequent there; its matrix of every
    text is their counts of those terms, weighted by (1 + log tf)·idf (idf from the training texts) and L2-normalised.
    Counting every text once over the vocabulary of all texts and keeping, per split, the columns the vectorizer would
    keep gives the same counts in the same order, so :func:`tfidf_embeddings` returns the same numbers; only the
    tokenising and counting (most of the cost on long texts) is no longer repeated per split."""

    MAX_FEATURES = 20_000

    def __init__(self, texts: Sequence[str], extra: Sequence[str] = ()) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self.n_texts = len(texts)
        vec = CountVectorizer(ngram_range=(1, 2), dtype=np.float64)
        try:
            counts = vec.fit_transform(list(texts))
        except ValueError:  # no text has a term: every split's vocabulary is empty (the vectorizer's error)
            self.counts = self.extra = None
            return
        counts.sort_indices()
        self.counts = counts
        self.extra = vec.transform(list(extra)) if extra else None

    def split(self, train: np.ndarray) -> tuple[Any, Any]:
        """The TF-IDF matrices (all texts, the extra texts) of the vectorizer fitted on the ``train`` texts."""
        from sklearn.feature_extraction.text import TfidfTransformer

        if self.counts is None:
            raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
        x_train = self.counts[train]
        vocab = np.flatnonzero(np.diff(x_train.tocsc().indptr) > 0)  # the training texts' terms, alphabetical
        if vocab.size == 0:
            raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
        if vocab.size > self.MAX_FEATURES:  # the vectorizer's cut, with its (unstable) sort of the same numbers
            tfs = np.asarray(x_train[:, vocab].sum(axis=0)).ravel()
            vocab = vocab[np.sort((-tfs).argsort()[: self.MAX_FEATURES])]
        tfidf = TfidfTransformer(sublinear_tf=True).fit(_columns(x_train, vocab))
        x = tfidf.transform(_columns(self.counts, vocab))
        return x, (tfidf.transform(_columns(self.extra, vocab)) if self.extra is not None else None)


def _columns(m: Any, cols: np.ndarray) -> Any:
    out = m[:, cols]
    out.sort_indices()
    return out


def tfidf_embeddings(corpus: TfidfCorpus, train: np.ndarray, dims: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The text-only fallback: TF-IDF fitted on the training texts (:class:`TfidfCorpus`), truncated SVD to ``dims``;
    returns the embeddings of the texts and of the corpus's extra texts (the topic anchors)."""
    from sklearn.decomposition import TruncatedSVD

    x, x_extra = corpus.split(train)
    k = int(min(dims, x.shape[1] - 1, max(1, train.size - 1)))
    n_extra = x_extra.shape[0] if x_extra is not None else 0
    if k < 1:
        return np.zeros((corpus.n_texts, 1)), np.zeros((n_extra, 1))
    svd = TruncatedSVD(n_components=k, random_state=0).fit(x[train])
    return svd.transform(x), (svd.transform(x_extra) if x_extra is not None else np.zeros((0, k)))
