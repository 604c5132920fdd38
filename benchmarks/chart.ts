/**
 * Hand-written SVG line charts: one panel per suite, context length (log scale) on x, a metric on y, one
 * series per method. No chart library: the output is small, deterministic and diff-friendly.
 */
import type { MethodName } from './methods.ts';
import type { SummaryRow } from './summary.ts';
import { sizeLabel } from './tasks/text.ts';

/** What a chart plots. */
export interface ChartSpec {
  metric: 'meanScore' | 'meanCostUsd' | 'accuracy' | 'medianElapsedMs';
  title: string;
  yLabel: string;
}

/** A fixed colour per method, so every chart of a report agrees. */
const METHOD_COLORS: Record<MethodName, string> = {
  rlm: '#1f77b4',
  'rlm-no-sub': '#17becf',
  direct: '#d62728',
  bm25: '#ff7f0e',
};

const PANEL_W = 300;
const PANEL_H = 220;
const PAD = { left: 52, right: 14, top: 28, bottom: 40 };
const COLUMNS = 3;
const LEGEND_H = 28;
const TITLE_H = 30;

/** Escapes text for XML content and attributes. */
function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const fmt = (n: number): string => String(Math.round(n * 100) / 100);

function tickLabel(metric: ChartSpec['metric'], v: number): string {
  if (metric === 'meanCostUsd') return v === 0 ? '$0' : `$${v < 0.01 ? v.toExponential(1) : v.toFixed(2)}`;
  if (metric === 'medianElapsedMs') return v >= 1000 ? `${fmt(v / 1000)}s` : `${Math.round(v)}ms`;
  return fmt(v);
}

/** Renders the chart as a standalone SVG document. */
export function renderChart(summary: readonly SummaryRow[], spec: ChartSpec): string {
  const suites = [...new Set(summary.map((r) => r.suite))];
  const methods = [...new Set(summary.map((r) => r.method))];
  const sizes = [...new Set(summary.map((r) => r.size))].sort((a, b) => a - b);
  const columns = Math.max(1, Math.min(COLUMNS, suites.length));
  const rows = Math.max(1, Math.ceil(suites.length / columns));
  const width = columns * PANEL_W;
  const height = TITLE_H + LEGEND_H + rows * PANEL_H;
  const bounded = spec.metric === 'meanScore' || spec.metric === 'accuracy';
  const top = bounded
    ? 1
    : Math.max(0, ...summary.filter((r) => r.tasks > 0).map((r) => r[spec.metric])) * 1.1 || 1;
  const lo = Math.log2(sizes[0] ?? 1);
  const hi = Math.log2(sizes[sizes.length - 1] ?? 1);
  const plotW = PANEL_W - PAD.left - PAD.right;
  const plotH = PANEL_H - PAD.top - PAD.bottom;
  const x = (size: number) =>
    PAD.left + (hi === lo ? plotW / 2 : ((Math.log2(size) - lo) / (hi - lo)) * plotW);
  const y = (v: number) => PAD.top + plotH - (Math.min(v, top) / top) * plotH;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${xmlEscape(spec.title)}</text>`,
    '<g class="legend">',
  ];
  methods.forEach((m, i) => {
    const lx = 12 + i * 110;
    const ly = TITLE_H + 10;
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 18}" y2="${ly}" stroke="${METHOD_COLORS[m]}" stroke-width="2.5"/>`,
      `<text x="${lx + 24}" y="${ly + 4}">${xmlEscape(m)}</text>`,
    );
  });
  out.push('</g>');

  suites.forEach((suite, si) => {
    const ox = (si % columns) * PANEL_W;
    const oy = TITLE_H + LEGEND_H + Math.floor(si / columns) * PANEL_H;
    out.push(`<g class="panel" data-suite="${xmlEscape(suite)}" transform="translate(${ox},${oy})">`);
    out.push(
      `<text x="${PANEL_W / 2}" y="16" text-anchor="middle" font-weight="bold">${xmlEscape(suite)}</text>`,
    );
    for (let t = 0; t <= 4; t++) {
      const v = (top * t) / 4;
      const ty = y(v);
      out.push(
        `<line x1="${PAD.left}" y1="${fmt(ty)}" x2="${PAD.left + plotW}" y2="${fmt(ty)}" stroke="#e5e5e5"/>`,
        `<text x="${PAD.left - 6}" y="${fmt(ty + 4)}" text-anchor="end">${xmlEscape(tickLabel(spec.metric, v))}</text>`,
      );
    }
    for (const s of sizes) {
      out.push(
        `<text x="${fmt(x(s))}" y="${PAD.top + plotH + 16}" text-anchor="middle">${sizeLabel(s)}</text>`,
      );
    }
    out.push(
      `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${PAD.top + plotH}" stroke="#333"/>`,
      `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}" stroke="#333"/>`,
      `<text x="${PAD.left + plotW / 2}" y="${PANEL_H - 8}" text-anchor="middle">context tokens</text>`,
      `<text x="12" y="${PAD.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 12 ${PAD.top + plotH / 2})">${xmlEscape(spec.yLabel)}</text>`,
    );
    for (const m of methods) {
      const points = summary
        .filter((r) => r.suite === suite && r.method === m && r.tasks > 0)
        .sort((a, b) => a.size - b.size)
        .map((r) => [x(r.size), y(r[spec.metric])] as const);
      if (points.length === 0) continue;
      const color = METHOD_COLORS[m];
      out.push(`<g class="series" data-method="${xmlEscape(m)}">`);
      out.push(
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map(([px, py]) => `${fmt(px)},${fmt(py)}`).join(' ')}"/>`,
      );
      for (const [px, py] of points)
        out.push(`<circle cx="${fmt(px)}" cy="${fmt(py)}" r="3" fill="${color}"/>`);
      out.push('</g>');
    }
    out.push('</g>');
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
