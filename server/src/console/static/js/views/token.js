// Token entry. The token goes to sessionStorage only (this tab, until it closes); it is sent as
// `Authorization: Bearer` and never put in a URL, a cookie or a log.

import { setToken } from '../api.js';
import { h, pageHeading } from '../dom.js';

export function tokenView(ctx) {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    autocapitalize: 'off',
    'aria-describedby': 'token-help',
  });
  const problem = h('p', { class: 'field-error', id: 'token-error', role: 'alert' });
  const form = h(
    'form',
    {
      class: 'card form',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        try {
          setToken(input.value.trim());
        } catch (error) {
          problem.textContent = error.message;
          input.setAttribute('aria-invalid', 'true');
          input.focus();
          return;
        }
        input.value = '';
        ctx.reload('Token saved for this tab.');
      },
    },
    h(
      'div',
      { class: 'form-row' },
      h('label', { for: 'token' }, 'API token'),
      input,
      h(
        'p',
        { id: 'token-help', class: 'help' },
        // A command that works wherever the server is installed (`npm start` exists only in the
        // repository); server/test/console.test.ts runs it as shown.
        'A bearer token of this server. Make one where the server is installed: ',
        h('code', null, 'npx orbit bootstrap --namespace NAMESPACE --application APP --queue QUEUE --event-access --json'),
        ", with the server's --database URL or --config FILE. ",
        "It needs events:read to look and events:manage to act. It is kept in this tab's sessionStorage only and forgotten when the tab closes.",
      ),
    ),
    problem,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button' }, 'Use token')),
  );
  ctx.main.append(pageHeading('Enter an API token'), form);
}
