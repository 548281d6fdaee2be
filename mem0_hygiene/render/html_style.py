"""The stylesheet of the HTML audit report: one CSS text, every rule scoped under the report's ``<div>``.

The page (``--html FILE``) puts it in its ``<head>``; the Jupyter fragment carries it in a ``<style>`` element of
its own, so a notebook shows the same cards. Scoping keeps it from restyling the notebook around it, and the
selectors are specific enough to win over a front-end's generic ``pre``/``table`` rules (JupyterLab's fixed table
layout is what broke fix commands mid-word). Nothing is loaded from anywhere: system fonts, no images, no script.

Layout rules that keep every width readable (375 px phones to 1920 px monitors, the browser test measures it):
no element has a fixed width; long tokens (paths, ids) may break anywhere, commands wrap at spaces first; the
store map turns from a table into one block per store when the report is narrower than 52 rem (container
queries: a notebook's output area is narrower than its window).
"""

from __future__ import annotations

import re

SCOPE = ".mem0-hygiene-report .m0h"
"""What every rule is scoped under: the report's outer ``<div>`` and its content ``<div>``. Two classes deep, so a
rule here outweighs a notebook front-end's rules for ``pre``, ``code`` and tables inside its output area."""

_CSS = """
.mem0-hygiene-report { container-type: inline-size; }
.m0h {
  --m0h-fg: #1f2328; --m0h-muted: #57606a; --m0h-line: #d0d7de; --m0h-soft: #eaeef2;
  --m0h-bg: #f6f8fa; --m0h-card: #ffffff; --m0h-code: #f3f5f7;
  --m0h-error: #b42318; --m0h-error-bg: #fde8e6;
  --m0h-warning: #8a4b00; --m0h-warning-bg: #fff1d6; --m0h-warning-bar: #d98a00;
  --m0h-info: #175cd3; --m0h-info-bg: #e4edfc;
  --m0h-ok: #1a7f37; --m0h-ok-bg: #dcf3e2;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
  color: var(--m0h-fg); background: var(--m0h-bg); text-align: left;
  max-width: 68rem; margin: 0 auto; padding: 1rem; border-radius: 12px;
  overflow-wrap: break-word;
}
.m0h *, .m0h *::before, .m0h *::after { box-sizing: border-box; }
.m0h code, .m0h pre {
  font-family: ui-monospace, "SFMono-Regular", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 0.86em; background: none; color: inherit; padding: 0; border: 0;
}
.m0h h2, .m0h h3, .m0h h4 { color: inherit; line-height: 1.3; font-weight: 650; }
.m0h h3 { font-size: 1.15rem; margin: 1.75rem 0 0.6rem; padding-bottom: 0.3rem;
  border-bottom: 1px solid var(--m0h-line); }
.m0h a { color: inherit; }

.m0h .m0h-sev-error { --m0h-sev: var(--m0h-error); --m0h-sev-bg: var(--m0h-error-bg); --m0h-sev-bar: var(--m0h-error); }
.m0h .m0h-sev-warning { --m0h-sev: var(--m0h-warning); --m0h-sev-bg: var(--m0h-warning-bg);
  --m0h-sev-bar: var(--m0h-warning-bar); }
.m0h .m0h-sev-info { --m0h-sev: var(--m0h-info); --m0h-sev-bg: var(--m0h-info-bg); --m0h-sev-bar: var(--m0h-info); }
.m0h .m0h-sev-ok { --m0h-sev: var(--m0h-ok); --m0h-sev-bg: var(--m0h-ok-bg); --m0h-sev-bar: var(--m0h-ok); }
.m0h .m0h-sev-skipped { --m0h-sev: var(--m0h-warning); --m0h-sev-bg: var(--m0h-warning-bg);
  --m0h-sev-bar: var(--m0h-warning-bar); }

/* header: verdict, counts per severity, one bar per area */
.m0h .m0h-head { background: var(--m0h-card); border: 1px solid var(--m0h-line);
  border-top: 6px solid var(--m0h-sev); border-radius: 12px; padding: 1.1rem 1.4rem 1.2rem; }
.m0h .m0h-kicker { margin: 0; font-size: 0.75rem; font-weight: 600; letter-spacing: 0.08em; text-transform: uppercase;
  color: var(--m0h-muted); }
.m0h .m0h-verdict { margin: 0.15rem 0 0.7rem; font-size: 1.65rem; color: var(--m0h-sev); }
.m0h .m0h-verdict::first-letter { text-transform: uppercase; }
.m0h .m0h-meta { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.15rem 1rem;
  margin: 0 0 1rem; }
.m0h .m0h-meta dt { color: var(--m0h-muted); }
.m0h .m0h-kicker + .m0h-meta { margin-top: 0.6rem; }
.m0h .m0h-meta dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.m0h .m0h-counts { display: flex; flex-wrap: wrap; gap: 0.5rem; list-style: none; margin: 0 0 1rem; padding: 0; }
.m0h .m0h-counts li { display: flex; align-items: baseline; gap: 0.35rem; padding: 0.3rem 0.8rem; border-radius: 999px;
  background: var(--m0h-soft); color: var(--m0h-muted); }
.m0h .m0h-counts li.m0h-some { background: var(--m0h-sev-bg); color: var(--m0h-sev); }
.m0h .m0h-counts b { font-size: 1.2rem; }
.m0h .m0h-areas { display: grid; grid-template-columns: fit-content(14rem) minmax(3rem, 1fr) minmax(0, max-content);
  align-items: center; gap: 0.35rem 0.8rem; margin: 0; max-width: 36rem; }
.m0h .m0h-areas dt a { text-decoration: none; }
.m0h .m0h-areas dt a:hover { text-decoration: underline; }
.m0h .m0h-areas dt, .m0h .m0h-areas dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.m0h .m0h-bar { display: flex; height: 0.65rem; border-radius: 999px; overflow: hidden; background: var(--m0h-soft); }
.m0h .m0h-bar span { display: block; height: 100%; background: var(--m0h-sev-bar); }
.m0h .m0h-bar span + span { border-left: 2px solid var(--m0h-card); }
.m0h .m0h-areas .m0h-n { color: var(--m0h-muted); font-size: 0.85rem; }

/* findings as cards */
.m0h .m0h-card { background: var(--m0h-card); border: 1px solid var(--m0h-line);
  border-left: 5px solid var(--m0h-sev-bar); border-radius: 10px; padding: 0.9rem 1.2rem 1rem; margin: 0 0 0.8rem; }
.m0h .m0h-card-head { display: flex; flex-wrap: wrap; align-items: center; gap: 0.35rem 0.6rem; }
.m0h .m0h-badge { font-size: 0.7rem; font-weight: 700; letter-spacing: 0.06em; padding: 0.1rem 0.55rem;
  border-radius: 999px; color: var(--m0h-sev); background: var(--m0h-sev-bg); }
.m0h .m0h-code { font-weight: 600; overflow-wrap: anywhere; }
.m0h .m0h-count { margin-left: auto; font-size: 0.85rem; color: var(--m0h-muted); white-space: nowrap; }
.m0h .m0h-count b { color: var(--m0h-fg); }
.m0h .m0h-title { margin: 0.35rem 0 0.25rem; font-size: 1.05rem; }
.m0h .m0h-why { margin: 0 0 0.6rem; max-width: 50rem; color: #32383f; }
.m0h .m0h-label { margin: 0.5rem 0 0.2rem; font-size: 0.72rem; font-weight: 650; letter-spacing: 0.07em;
  text-transform: uppercase; color: var(--m0h-muted); }
.m0h pre.m0h-fix { margin: 0; padding: 0.55rem 0.8rem; background: var(--m0h-code); border: 1px solid var(--m0h-line);
  border-radius: 8px; white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; overflow: visible;
  line-height: 1.5; user-select: all; -webkit-user-select: all; cursor: text; }
.m0h pre.m0h-fix code { font-size: 1em; white-space: inherit; word-break: inherit; overflow-wrap: inherit; }
.m0h .m0h-comment { color: var(--m0h-muted); }
.m0h .m0h-tok { display: inline-block; max-width: 100%; overflow-wrap: anywhere; }
.m0h details { margin: 0.55rem 0 0; }
.m0h summary { cursor: pointer; color: var(--m0h-muted); font-size: 0.9rem; width: fit-content; }
.m0h summary:hover { color: var(--m0h-fg); }
.m0h .m0h-examples ul { margin: 0.3rem 0 0; padding-left: 1.3rem; }
.m0h .m0h-examples li { overflow-wrap: anywhere; }
.m0h .m0h-examples li code { font-size: 0.9em; }
.m0h .m0h-kv { display: grid; grid-template-columns: fit-content(16rem) minmax(0, 1fr); gap: 0.15rem 1rem;
  margin: 0.3rem 0 0; }
.m0h .m0h-kv dt { color: var(--m0h-muted); overflow-wrap: anywhere; }
.m0h .m0h-kv dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.m0h .m0h-kv ul { margin: 0; padding-left: 1.1rem; }
.m0h .m0h-none { margin: 0.5rem 0; padding: 0.8rem 1.2rem; background: var(--m0h-card);
  border: 1px solid var(--m0h-line); border-left: 5px solid var(--m0h-ok); border-radius: 10px; }

/* skipped checks and the store map */
.m0h .m0h-skipped { margin: 0; padding: 0; list-style: none; }
.m0h .m0h-skipped li { background: var(--m0h-card); border: 1px solid var(--m0h-line);
  border-left: 5px solid var(--m0h-warning-bar); border-radius: 10px; padding: 0.6rem 1.2rem; margin: 0 0 0.5rem; }
.m0h .m0h-skipped .m0h-area { color: var(--m0h-muted); font-size: 0.85rem; }
.m0h .m0h-skipped p { margin: 0.2rem 0 0; }
.m0h .m0h-table-wrap { background: var(--m0h-card); border: 1px solid var(--m0h-line); border-radius: 10px; }
.m0h table.m0h-locations { width: 100%; border-collapse: collapse; table-layout: auto; margin: 0; font-size: 0.92rem; }
.m0h table.m0h-locations th, .m0h table.m0h-locations td { padding: 0.5rem 0.8rem; text-align: left;
  vertical-align: top; border: 0; border-bottom: 1px solid var(--m0h-soft); background: none; }
.m0h table.m0h-locations tr:last-child td { border-bottom: 0; }
.m0h table.m0h-locations th { font-size: 0.75rem; font-weight: 650; letter-spacing: 0.05em; text-transform: uppercase;
  color: var(--m0h-muted); }
.m0h table.m0h-locations td.m0h-where { overflow-wrap: anywhere; word-break: normal; min-width: 12rem; }
.m0h table.m0h-locations td.m0h-num { text-align: right; white-space: nowrap; }
.m0h .m0h-flag { justify-self: start; font-weight: 650; padding: 0 0.4rem; border-radius: 4px; color: var(--m0h-sev);
  background: var(--m0h-sev-bg); }
.m0h .m0h-foot { margin: 1.5rem 0 0; font-size: 0.8rem; color: var(--m0h-muted); }

@container (max-width: 40rem) {
  .m0h { padding: 0.6rem; font-size: 14px; }
  .m0h .m0h-head { padding: 0.9rem 1rem 1rem; }
  .m0h .m0h-verdict { font-size: 1.35rem; }
  .m0h .m0h-card { padding: 0.8rem 0.9rem 0.9rem; }
  .m0h .m0h-count { margin-left: 0; }
  .m0h .m0h-kv { grid-template-columns: minmax(0, 1fr); gap: 0; }
  .m0h .m0h-kv dd { margin-bottom: 0.3rem; }
}

@container (max-width: 30rem) {
  .m0h .m0h-areas { grid-template-columns: fit-content(8rem) minmax(3rem, 1fr); row-gap: 0; }
  .m0h .m0h-areas .m0h-n { grid-column: 2; margin-bottom: 0.3rem; }
  .m0h .m0h-meta { grid-template-columns: minmax(0, 1fr); gap: 0; }
  .m0h .m0h-meta dd { margin-bottom: 0.3rem; }
}

@container (max-width: 52rem) {
  .m0h table.m0h-locations thead { display: none; }
  .m0h table.m0h-locations, .m0h table.m0h-locations tbody, .m0h table.m0h-locations tr { display: block; }
  .m0h table.m0h-locations tr { padding: 0.5rem 0.9rem; border-bottom: 1px solid var(--m0h-soft); }
  .m0h table.m0h-locations tr:last-child { border-bottom: 0; }
  .m0h table.m0h-locations td, .m0h table.m0h-locations td.m0h-num { display: grid;
    grid-template-columns: 6.5rem minmax(0, 1fr); gap: 0.6rem; padding: 0.1rem 0; border: 0; text-align: left;
    white-space: normal; min-width: 0; }
  .m0h table.m0h-locations td::before { content: attr(data-label); color: var(--m0h-muted); font-size: 0.8rem; }
}

@media print {
  .m0h { background: none; max-width: none; padding: 0; font-size: 10.5pt; }
  .m0h .m0h-head, .m0h .m0h-card, .m0h .m0h-skipped li, .m0h .m0h-table-wrap, .m0h .m0h-none { break-inside: avoid; }
  .m0h h3 { break-after: avoid; }
  .m0h details::details-content { content-visibility: visible; display: block; }
  .m0h summary { list-style: none; color: var(--m0h-muted); font-weight: 650; }
  .m0h summary::-webkit-details-marker { display: none; }
  .m0h pre.m0h-fix { user-select: auto; -webkit-user-select: auto; }
  .m0h .m0h-areas dt a { text-decoration: none; }
  .m0h, .m0h * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""

REPORT_CSS = re.sub(r"(?<![\w-])\.m0h(?![\w-])", SCOPE, _CSS)
"""The report's CSS: every rule under :data:`SCOPE`, with a narrow-screen layout and a print stylesheet."""

PAGE_CSS = """
html { background: #f6f8fa; }
body { margin: 0; padding: 1.5rem 1rem 2rem; }
@media (max-width: 40rem) { body { padding: 0.5rem 0 1rem; } }
@media print { html { background: none; } body { padding: 0; } @page { margin: 14mm 12mm; } }
"""
"""The standalone page's own few rules (the page background and margins) on top of :data:`REPORT_CSS`."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
)
"""The page's Content-Security-Policy: inline styles only. No script runs and nothing is fetched, even if a memory's
text ever got past the escaping."""
