/**
 * @module json-pointer
 * JSON Pointer (RFC 6901) formatting and human-readable source locations, used to say
 * where a strict JSON text was refused.
 */

/** Escapes one reference token: `~` becomes `~0`, `/` becomes `~1`. */
export function escapePointerToken(token: string | number): string {
  const s = String(token);
  if (s.indexOf('~') === -1 && s.indexOf('/') === -1) return s;
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Formats the first `count` segments as a JSON Pointer (`''` is the whole document). */
export function formatPointer(segments: ReadonlyArray<string | number>, count = segments.length): string {
  let out = '';
  for (let i = 0; i < count; i++) out += `/${escapePointerToken(segments[i] as string | number)}`;
  return out;
}

/** `"offset 12 (line 1, column 13)"`: lines and columns are 1-based; LF starts a line. */
export function describeOffset(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `offset ${offset} (line ${line}, column ${offset - lineStart + 1})`;
}
