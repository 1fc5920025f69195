// The serving node's effective settings, read-only and in the order of the settings table
// (GET /v1/settings; spec/README.md, The credential's own view). The server replaces secrets before it
// answers (the metrics token, the database password), so nothing secret reaches this page.

import { apiRequest } from '../api.js';
import { clear, dataTable, h, loading, pageHeading } from '../dom.js';

function valueText(value) {
  if (value === null) return '— (not set)';
  if (value === '') return '— (empty)';
  return String(value);
}

export async function settingsView(ctx) {
  const body = h('div', { class: 'results', 'aria-busy': 'true' }, loading());
  ctx.main.append(pageHeading('Settings'), body);
  const { data } = await apiRequest('GET', '/v1/settings', { signal: ctx.signal });
  const columns = ['Setting', 'Value'];
  clear(body).append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'settings-title' },
      h('h2', { id: 'settings-title' }, 'Effective settings of this node'),
      h(
        'p',
        { class: 'help' },
        'Read-only: the values this node runs with after flags, environment, config file and defaults (docs/operations.md has the table ' +
          'of every setting). Each node of a deployment answers with its own. Secrets are replaced by the server.',
      ),
      dataTable('settings-table', 'Effective settings', columns, data.items, (setting) =>
        h(
          'tr',
          { dataset: { setting: setting.name } },
          h('th', { scope: 'row', 'data-label': columns[0] }, h('code', null, setting.name)),
          h('td', { 'data-label': columns[1] }, h('code', { class: 'setting-value' }, valueText(setting.value))),
        ),
      ),
    ),
  );
  body.setAttribute('aria-busy', 'false');
}
