// A horizontal SVG bar chart. Bars may be stacked from segments; every bar carries its value as
// text (colour is never the only cue), and the chart has a title and a description for assistive
// technology. Values are numbers for layout; `display` is the exact text to print.

import { s } from './dom.js';

const ROW = 34;
const LABEL_WIDTH = 190;
const VALUE_WIDTH = 120;
const WIDTH = 720;

/**
 * `rows`: [{label, display, segments: [{value, className, label}]}]. `scaleMax` defaults to the
 * largest row total; `scaleLabel` is the exact text of the scale's end.
 */
export function barChart({ idPrefix, title, description, rows, scaleMax, scaleLabel }) {
  const totals = rows.map((row) => row.segments.reduce((sum, seg) => sum + seg.value, 0));
  const max = Math.max(scaleMax ?? 0, ...totals, 1);
  const plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
  const height = rows.length * ROW + 28;
  const titleId = `${idPrefix}-title`;
  const descId = `${idPrefix}-desc`;
  const svg = s(
    'svg',
    { class: 'chart', viewBox: `0 0 ${WIDTH} ${height}`, role: 'img', 'aria-labelledby': `${titleId} ${descId}`, id: idPrefix },
    s('title', { id: titleId }, title),
    s('desc', { id: descId }, description),
  );

  rows.forEach((row, index) => {
    const y = index * ROW + 6;
    const group = s('g', { class: 'chart-row', dataset: { label: row.label } });
    group.append(s('text', { x: LABEL_WIDTH - 10, y: y + 17, class: 'chart-label', 'text-anchor': 'end' }, row.label));
    group.append(s('rect', { x: LABEL_WIDTH, y, width: plot, height: ROW - 12, class: 'chart-track' }));
    let x = LABEL_WIDTH;
    for (const segment of row.segments) {
      const width = segment.value <= 0 ? 0 : Math.max(2, (segment.value / max) * plot);
      group.append(s('rect', { x, y, width, height: ROW - 12, class: `chart-bar ${segment.className}` }, s('title', null, segment.label)));
      x += width;
    }
    group.append(s('text', { x: LABEL_WIDTH + plot + 8, y: y + 17, class: 'chart-value' }, row.display));
    svg.append(group);
  });
  const axisY = rows.length * ROW + 4;
  svg.append(
    s('line', { x1: LABEL_WIDTH, x2: LABEL_WIDTH + plot, y1: axisY, y2: axisY, class: 'chart-axis' }),
    s('text', { x: LABEL_WIDTH, y: axisY + 18, class: 'chart-tick' }, '0'),
    s('text', { x: LABEL_WIDTH + plot, y: axisY + 18, class: 'chart-tick', 'text-anchor': 'end' }, scaleLabel ?? String(Math.round(max))),
  );
  return svg;
}
