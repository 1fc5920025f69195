// Raw JSON text access. `JSON.parse` turns 123456789012345678901234567890 into 1.2345678901234568e29;
// the console must show `result` exactly as the server sent it, so it slices the value's text out of
// the response body instead of re-serializing a parsed value.

const WHITESPACE = ' \t\n\r';

function skipWhitespace(text, i) {
  while (i < text.length && WHITESPACE.includes(text[i])) i += 1;
  return i;
}

function endOfString(text, i) {
  for (i += 1; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i + 1;
  }
  throw new SyntaxError('unterminated string in JSON text');
}

/** The index just after the JSON value that starts at `i`. */
function endOfValue(text, i) {
  const first = text[i];
  if (first === '"') return endOfString(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (; i < text.length; i += 1) {
      const c = text[i];
      if (c === '"') i = endOfString(text, i) - 1;
      else if (c === '{' || c === '[') depth += 1;
      else if (c === '}' || c === ']') {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    throw new SyntaxError('unterminated container in JSON text');
  }
  let j = i;
  while (j < text.length && !',}]'.includes(text[j]) && !WHITESPACE.includes(text[j])) j += 1;
  if (j === i) throw new SyntaxError(`unexpected character at ${i} in JSON text`);
  return j;
}

/**
 * The exact text of the value at `path` (object keys from the root) in the JSON document `text`,
 * or undefined when a key is absent or a step is not an object.
 */
export function rawValueAt(text, path) {
  let i = skipWhitespace(text, 0);
  for (const key of path) {
    if (text[i] !== '{') return undefined;
    i = skipWhitespace(text, i + 1);
    let found = false;
    while (i < text.length && text[i] !== '}') {
      const keyEnd = endOfString(text, i);
      const name = JSON.parse(text.slice(i, keyEnd));
      i = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
      if (name === key) {
        found = true;
        break;
      }
      i = skipWhitespace(text, endOfValue(text, i));
      if (text[i] === ',') i = skipWhitespace(text, i + 1);
    }
    if (!found) return undefined;
  }
  return text.slice(i, endOfValue(text, i));
}

/**
 * Re-indents JSON text, changing whitespace between tokens only: every string, number and literal
 * keeps its exact characters.
 */
export function reindent(raw, unit = '  ') {
  let out = '';
  let depth = 0;
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw[i];
    if (WHITESPACE.includes(c)) continue;
    if (c === '"') {
      const end = endOfString(raw, i);
      out += raw.slice(i, end);
      i = end - 1;
    } else if (c === '{' || c === '[') {
      const next = skipWhitespace(raw, i + 1);
      if (raw[next] === '}' || raw[next] === ']') {
        out += c + raw[next];
        i = next;
      } else {
        depth += 1;
        out += `${c}\n${unit.repeat(depth)}`;
      }
    } else if (c === '}' || c === ']') {
      depth -= 1;
      out += `\n${unit.repeat(depth)}${c}`;
    } else if (c === ',') {
      out += `,\n${unit.repeat(depth)}`;
    } else if (c === ':') {
      out += ': ';
    } else {
      out += c;
    }
  }
  return out;
}
