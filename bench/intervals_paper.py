"""Paper 001's Tables 1–2 (SummEval evaluated with G-Eval), as printed: width / coverage per judge, method and
criterion, before (Table 1) and after (Table 2) boundary adjustment. Copied from the paper's source text
(``shared/papers/001_…txt``; the notes' Appendix T) for ``bench/intervals.py``, which prints them beside relgate's."""

from __future__ import annotations

CRITERIA = ("consistency", "coherence", "fluency", "relevance")
JUDGES = ("GPT-4o mini", "DeepSeek-R1-32B", "Qwen2.5-72B")
_NAMES = {"CQR": "cqr", "Asym CQR": "asym-cqr", "CHR": "chr", "LVD": "lvd", "Boosted CQR": "boosted-cqr",
          "Boosted LCP": "boosted-lcp", "R2CCP": "r2ccp", "OrdinalAPS": "ordinal-aps", "OrdinalRC": "ordinal-rc"}

# one block per judge; rows "Method | consistency | coherence | fluency | relevance" (the SummEval columns)
_TABLE1 = """
GPT-4o mini
CQR | 1.15 / 94.16% | 2.87 / 93.15% | 1.44 / 92.92% | 2.09 / 90.92%
Asym CQR | 1.25 / 94.97% | 2.91 / 93.76% | 1.60 / 93.75% | 2.13 / 91.42%
CHR | 0.67 / 88.99% | 2.41 / 82.96% | 0.94 / 88.86% | 1.74 / 82.62%
LVD | 1.01 / 92.35% | 2.73 / 89.76% | 1.11 / 90.59% | 2.02 / 89.55%
Boosted CQR | 1.01 / 87.75% | 2.73 / 87.80% | 1.54 / 88.68% | 2.00 / 87.42%
Boosted LCP | 0.76 / 89.22% | 2.67 / 87.34% | 0.92 / 89.18% | 1.91 / 87.19%
R2CCP | 0.69 / 90.88% | 2.62 / 89.63% | 0.92 / 89.36% | 1.97 / 89.70%
DeepSeek-R1-32B
CQR | 1.16 / 93.88% | 2.67 / 92.50% | 1.31 / 93.01% | 2.13 / 91.05%
Asym CQR | 1.30 / 95.13% | 2.72 / 92.86% | 1.49 / 94.52% | 2.21 / 92.06%
CHR | 0.82 / 91.17% | 2.23 / 87.07% | 0.90 / 89.24% | 1.87 / 86.38%
LVD | 0.97 / 92.93% | 2.43 / 91.10% | 1.00 / 91.10% | 2.04 / 90.14%
Boosted CQR | 1.10 / 89.30% | 2.36 / 88.98% | 1.16 / 89.46% | 2.00 / 88.98%
Boosted LCP | 0.77 / 89.20% | 2.32 / 86.70% | 0.93 / 89.10% | 1.91 / 86.89%
R2CCP | 0.69 / 90.44% | 2.30 / 90.12% | 0.89 / 90.09% | 2.00 / 89.84%
Qwen2.5-72B
CQR | 0.98 / 93.10% | 2.73 / 92.25% | 1.44 / 93.73% | 2.11 / 91.30%
Asym CQR | 1.11 / 94.47% | 2.80 / 93.13% | 1.63 / 94.79% | 2.17 / 92.21%
CHR | 0.61 / 89.04% | 2.14 / 80.93% | 0.98 / 88.93% | 1.61 / 79.61%
LVD | 0.85 / 92.82% | 2.55 / 90.49% | 1.09 / 90.94% | 1.94 / 89.27%
Boosted CQR | 0.80 / 88.28% | 2.46 / 87.82% | 1.24 / 89.22% | 1.88 / 87.17%
Boosted LCP | 0.67 / 88.81% | 2.43 / 86.92% | 0.94 / 89.26% | 1.86 / 87.51%
R2CCP | 0.61 / 90.73% | 2.44 / 89.54% | 0.95 / 90.18% | 1.98 / 90.45%
"""

_TABLE2 = """
GPT-4o mini
CQR | 1.15 / 95.45% | 2.87 / 94.94% | 1.44 / 93.80% | 2.09 / 93.56%
Asym CQR | 1.25 / 96.02% | 2.90 / 95.41% | 1.60 / 94.57% | 2.14 / 94.14%
CHR | 0.70 / 91.79% | 2.41 / 87.78% | 0.94 / 90.60% | 1.74 / 88.10%
LVD | 1.01 / 94.11% | 2.73 / 93.72% | 1.12 / 92.70% | 2.03 / 93.82%
Boosted CQR | 0.99 / 92.81% | 2.73 / 93.02% | 1.54 / 94.38% | 2.00 / 92.93%
Boosted LCP | 0.74 / 91.90% | 2.68 / 93.53% | 0.90 / 90.88% | 1.91 / 92.70%
R2CCP | 0.68 / 92.15% | 2.62 / 92.81% | 0.91 / 90.99% | 1.97 / 93.38%
OrdinalAPS | 2.28 / 71.48% | 1.88 / 64.84% | 1.78 / 13.65% | 2.36 / 87.94%
OrdinalRC | 2.41 / 75.19% | 2.02 / 67.38% | 1.93 / 14.58% | 2.51 / 90.30%
DeepSeek-R1-32B
CQR | 1.15 / 95.02% | 2.67 / 94.34% | 1.32 / 94.44% | 2.13 / 93.67%
Asym CQR | 1.31 / 95.99% | 2.72 / 94.83% | 1.49 / 95.57% | 2.21 / 94.53%
CHR | 0.87 / 93.96% | 2.23 / 91.42% | 0.91 / 91.98% | 1.87 / 90.84%
LVD | 0.97 / 95.01% | 2.44 / 94.58% | 1.00 / 93.21% | 2.04 / 94.12%
Boosted CQR | 1.08 / 93.55% | 2.37 / 93.96% | 1.15 / 93.48% | 2.01 / 93.72%
Boosted LCP | 0.76 / 92.03% | 2.32 / 92.37% | 0.93 / 91.34% | 1.92 / 92.81%
R2CCP | 0.68 / 91.57% | 2.30 / 93.22% | 0.89 / 91.80% | 1.99 / 92.96%
OrdinalAPS | 2.51 / 90.06% | 2.52 / 90.64% | 3.76 / 91.08% | 2.13 / 89.98%
OrdinalRC | 2.54 / 90.11% | 2.56 / 91.18% | 3.73 / 89.53% | 2.14 / 90.07%
Qwen2.5-72B
CQR | 0.98 / 94.35% | 2.72 / 94.18% | 1.45 / 94.79% | 2.10 / 94.02%
Asym CQR | 1.10 / 95.47% | 2.79 / 94.70% | 1.64 / 95.63% | 2.17 / 94.85%
CHR | 0.66 / 92.21% | 2.14 / 86.10% | 0.98 / 91.16% | 1.61 / 85.78%
LVD | 0.85 / 95.11% | 2.56 / 94.05% | 1.09 / 93.45% | 1.95 / 93.86%
Boosted CQR | 0.81 / 92.36% | 2.47 / 93.06% | 1.25 / 93.66% | 1.88 / 92.81%
Boosted LCP | 0.65 / 91.26% | 2.44 / 92.26% | 0.93 / 91.20% | 1.86 / 92.57%
R2CCP | 0.59 / 91.83% | 2.43 / 92.78% | 0.95 / 92.12% | 1.98 / 93.72%
OrdinalAPS | 2.86 / 90.18% | 3.01 / 90.59% | 3.05 / 45.43% | 2.75 / 90.29%
OrdinalRC | 2.85 / 90.00% | 2.96 / 89.35% | 3.21 / 53.31% | 2.75 / 90.14%
"""
# (the paper prints OrdinalAPS DeepSeek coherence as "90.64" without %; read as 90.64%)


def _parse(text: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    out: dict[tuple[str, str, str], tuple[float, float]] = {}
    judge = ""
    for line in text.strip().splitlines():
        if "|" not in line:
            judge = line.strip()
            continue
        name, *cells = (c.strip() for c in line.split("|"))
        for crit, cell in zip(CRITERIA, cells, strict=True):
            width, cov = cell.split("/")
            out[(judge, _NAMES[name], crit)] = (float(width), float(cov.strip().rstrip("%")) / 100)
    return out


TABLE1, TABLE2 = _parse(_TABLE1), _parse(_TABLE2)


def paper_cell(judge: str, method: str, criterion: str, table: str) -> str:
    """``width / coverage`` as printed (``raw``: Table 1, ``adj``: Table 2), ✓ when coverage ≥ 90%; "—" if absent."""
    got = (TABLE1 if table == "raw" else TABLE2).get((judge, method, criterion))
    if got is None:
        return "—"
    return f"{got[0]:.2f} / {100 * got[1]:.1f}%" + (" ✓" if got[1] >= 0.9 else "  ")
