"""The typed result of a judge audit and its two renderings: ``to_json()`` and Markdown (issue 9 item 2).

``AuditResult.to_json()`` is the document of ``relgate judge audit --json``. Its top level is the one it always was,
for the **first** judge under the **first** prompt variant (``endpoint``, ``model``, ``pairwise``, ``direct``), so
readers of single-judge audits see no change; ``calls`` sums every judge. With more than one judge or variant it
adds ``judges`` (each judge's settings and calls), ``variants`` (names) and ``studies`` (one entry per judge ×
variant: ``judge``, ``variant``, ``pairwise``, ``direct``). Every non-finite number is written as ``null`` by
:mod:`relgate_tui.core.jsonsafe`, the one place that decides it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relgate_tui import __version__
from relgate_tui.core.jsonsafe import dumps, jsonable
from relgate_tui.core.redact import public_url
from relgate_tui.core.text import counted
from relgate_tui.engine.judging import direct, pairwise


@dataclass(frozen=True)
class StudyCell:
    """One judge under one prompt variant: its pairwise and/or direct study result."""

    judge: str
    variant: str
    pairwise: pairwise.PairwiseResult | None = None
    direct: direct.DirectResult | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"judge": self.judge, "variant": self.variant}
        if self.pairwise is not None:
            d["pairwise"] = self.pairwise.to_json()
        if self.direct is not None:
            d["direct"] = self.direct.to_json()
        return d


@dataclass(frozen=True)
class AuditResult:
    """Every study of an audit. ``judges``: each judge's settings (``Judge.to_json``, or the scores file's
    identity); ``calls``: per judge label, ``{made, cached, failed}``."""

    data: str
    criterion: str
    protocol: str
    reps: int
    seed: int
    alpha: float
    n_inputs: int
    candidates_per_input: tuple[int, ...]
    judges: tuple[Mapping[str, Any], ...]
    cells: tuple[StudyCell, ...]
    calls: Mapping[str, Mapping[str, int]]
    wall_seconds: float = 0.0

    def cell(self, judge: str, variant: str = "original") -> StudyCell:
        for c in self.cells:
            if c.judge == judge and c.variant == variant:
                return c
        raise KeyError((judge, variant))

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(c.variant for c in self.cells))

    @property
    def total_calls(self) -> dict[str, int]:
        return {k: sum(int(c.get(k, 0)) for c in self.calls.values()) for k in ("made", "cached", "failed")}

    def to_json(self) -> dict[str, Any]:
        first, judge = self.cells[0], self.judges[0]
        doc: dict[str, Any] = {
            "relgate_version": __version__, "data": self.data, "criterion": self.criterion,
            "endpoint": public_url(str(judge["endpoint"])) if judge.get("endpoint") else None, "model": judge.get("model"), "protocol": self.protocol,
            "reps": self.reps, "seed": self.seed, "alpha": self.alpha, "n_inputs": self.n_inputs,
            "candidates_per_input": list(self.candidates_per_input),
        }
        doc.update({k: v for k, v in first.to_json().items() if k in ("pairwise", "direct")})
        doc["calls"] = self.total_calls
        doc["wall_seconds"] = round(self.wall_seconds, 3)
        if len(self.cells) > 1:
            doc["judges"] = [{**j, "endpoint": public_url(str(j["endpoint"])) if j.get("endpoint") else None,
                              "calls": dict(self.calls.get(str(j.get("name")), {}))} for j in self.judges]
            doc["variants"] = self.variants
            doc["studies"] = [c.to_json() for c in self.cells]
        return jsonable(doc)


def _cell_markdown(cell: StudyCell) -> list[str]:
    lines: list[str] = []
    if cell.pairwise is not None:
        lines += pairwise.markdown(cell.pairwise)
    if cell.direct is not None:
        lines += direct.markdown(cell.direct)
    return lines


def markdown_report(result: AuditResult) -> str:
    """A short Markdown report: per judge × variant, cycles, position bias, ranking methods, the inputs with
    cycles, the Likert conformal table."""
    sizes = sorted(set(result.candidates_per_input))
    calls = result.total_calls
    names = ", ".join(str(j.get("model") or j.get("name")) for j in result.judges)
    lines = [
        f"# Judge audit: {names} on {result.data} / {result.criterion}",
        "",
        f"- protocol {result.protocol}, k = {result.reps} repetitions, {result.n_inputs} inputs "
        f"({'/'.join(map(str, sizes))} candidates each), α = {result.alpha:.2f}, seed {result.seed}",
        f"- calls: {calls['made']} made, {calls['cached']} cached, {calls['failed']} failed",
        f"- relgate {__version__}",
    ]
    if len(result.cells) == 1:
        return "\n".join(lines + _cell_markdown(result.cells[0])) + "\n"
    for cell in result.cells:
        lines += ["", f"# Judge {cell.judge}, prompt variant {cell.variant}"]
        lines += [("#" + line) if line.startswith("## ") else line for line in _cell_markdown(cell)]
    return "\n".join(lines) + "\n"


def unparseable_share(doc: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """(unparseable, total) judge answers per protocol of one judge × variant document (its ``pairwise`` verdicts
    and ``direct`` score answers); a protocol the cell did not ask is absent."""
    out: dict[str, tuple[int, int]] = {}
    pw, di = doc.get("pairwise"), doc.get("direct")
    if isinstance(pw, Mapping) and isinstance(pw.get("verdicts"), Mapping):
        out["verdicts"] = (int(pw["verdicts"].get("invalid", 0)), int(pw["verdicts"].get("total", 0)))
    if isinstance(di, Mapping) and isinstance(di.get("answers"), Mapping):
        out["scores"] = (int(di["answers"].get("unparseable", 0)), int(di["answers"].get("total", 0)))
    return out


def unparseable_text(doc: Mapping[str, Any]) -> str:
    """"unparseable: 990 of 990 verdicts (100%), 1 of 198 scores" — "" when every answer parsed."""
    parts = [f"{bad:,} of {total:,} {what}" + (f" ({bad / total:.0%})" if bad / total >= 0.01 else "")
             for what, (bad, total) in unparseable_share(doc).items() if total and bad]
    return "unparseable: " + ", ".join(parts) if parts else ""


def unparseable_line(cell: Any) -> str:
    doc = {"pairwise": None if cell.pairwise is None else {"verdicts": {"invalid": cell.pairwise.n_invalid,
                                                                      "total": cell.pairwise.n_verdicts}},
           "direct": None if cell.direct is None else {"answers": cell.direct.answer_counts()}}
    return unparseable_text(doc)


def summary_lines(result: AuditResult) -> list[str]:
    """The CLI's few lines: per judge × variant, cycles, position bias, Kendall τ, Likert coverage; the calls."""
    lines = [f"judge audit: {result.data} / {result.criterion} ({result.n_inputs} inputs, {result.protocol}, "
             f"k = {result.reps}, {counted(len(result.judges), 'judge')}, {counted(len(result.variants), 'variant')})"]
    for cell in result.cells:
        lines.append(f"  {cell.judge} [{cell.variant}]")
        share = unparseable_line(cell)
        if share:
            lines.append(f"    {share}")
        if cell.pairwise is not None:
            j = cell.pairwise.to_json()
            cyc, bias = j["cycles"], j["position_bias"]
            if bias["n_valid_verdicts"] == 0:
                lines.append("    pairwise: no valid verdicts — no cycles, no position bias, no Kendall tau")
            else:
                if cyc["mean_rho"] is not None:
                    lines.append(f"    cycles: mean rho {cyc['mean_rho']:.3f}, inputs with >=1 cycle "
                                 f"{cyc['share_inputs_with_cycle']:.0%}, max rho {cyc['max_rho']:.3f}")
                fs = bias["first_shown_share"]
                lines.append(f"    position bias: first-shown wins {fs:.1%}" if fs is not None
                             else "    position bias: —")
                taus = ", ".join(f"{m} {v['mean_kendall_tau']:+.3f}" for m, v in j["rankings"].items()
                                 if v["mean_kendall_tau"] is not None)
                lines.append(f"    Kendall tau vs human: {taus or '—'}")
        if cell.direct is not None:
            if cell.direct.note:
                lines.append(f"    direct scores: {cell.direct.note}")
            for row in cell.direct.table:
                cov = "—" if not math.isfinite(row.coverage) else f"{row.coverage:.3f}"
                width = "—" if not math.isfinite(row.mean_width) else f"{row.mean_width:.2f}"
                lines.append(f"    Likert sets alpha {row.alpha:.2f}: coverage {cov} "
                             f"(target {row.target_coverage:.2f}), mean width {width}")
    c = result.total_calls
    lines.append(f"  calls: {c['made']} made, {c['cached']} cached, {c['failed']} failed; {result.wall_seconds:.1f} s")
    return lines


def audit_json(result: AuditResult) -> str:
    return dumps(result.to_json())


EXPORT_FORMATS = {"json": audit_json, "md": markdown_report}


def export_name(result: AuditResult, fmt: str) -> str:
    """A file name that tells audits apart: model(s), data, criterion, protocol, k, inputs × candidates, seed."""
    models = "+".join(str(j.get("model") or j.get("name")) for j in result.judges)
    parts = [models, result.data, result.criterion, result.protocol, f"k{result.reps}",
             f"n{result.n_inputs}x{max(result.candidates_per_input, default=0)}", f"seed{result.seed}"]
    if result.variants != ["original"]:
        parts.append("v-" + "+".join(result.variants))
    stem = "-".join(re.sub(r"[^A-Za-z0-9._-]+", "_", str(p)).strip("_.") or "x" for p in parts)
    return f"judge-audit-{stem[:180]}.{fmt}"


def export_result(result: AuditResult, fmt: str, folder: Path) -> Path:
    """Write the audit as JSON (the ``--json`` document) or Markdown into ``folder``; returns the path."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    from relgate_tui.engine.runs.outputs import write_display, write_output

    write = write_display if fmt == "md" else write_output
    return write(folder / export_name(result, fmt), EXPORT_FORMATS[fmt](result), mkdir=True)
