// A write form's outcome area: runs one operation through ops.js and shows its answer or error.

import { clear, h } from '../dom.js';
import { errorPanel } from '../errors.js';
import { retryOperation, runOperation } from '../ops.js';

/**
 * Runs `operation` (see runOperation) and calls `onDone(answer)` on success. Errors go into
 * `outlet`, with a reload for STATE_CONFLICT and a same-key retry when the answer was lost.
 */
export async function perform(ctx, outlet, operation, onDone, button) {
  ctx.announce('');
  clear(outlet).append(h('p', { class: 'loading' }, 'Sending…'));
  if (button) button.disabled = true;
  const show = (error) => {
    const panel = errorPanel(error, {
      onReload: () => ctx.reload(),
      onForgetToken: ctx.forgetToken,
      onRetry: () => attempt(() => retryOperation(error.operation.id)),
    });
    clear(outlet).append(panel);
    panel.focus();
  };
  const attempt = async (send) => {
    try {
      const answer = await send();
      clear(outlet);
      await onDone(answer);
    } catch (error) {
      show(error);
    } finally {
      if (button) button.disabled = false;
    }
  };
  await attempt(() => runOperation(operation));
}

/** The labelled reason field every write of the API requires (1–1024 characters). */
export function reasonField(idValue, label, placeholder) {
  const input = h('textarea', { id: idValue, name: 'reason', required: true, maxlength: '1024', rows: '2', placeholder });
  return { input, row: h('div', { class: 'form-row' }, h('label', { for: idValue }, label), input) };
}
