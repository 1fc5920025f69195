/**
 * Renders the API reference (generated/api.md) from openapi.yaml: one section per resource (tag),
 * each operation with its permission, parameters, body fields and answers. Part of
 * `npm run generate`, so `--check` fails when the page and the contract disagree.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function obj(value: Json | undefined): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
}

function oneLine(text: Json | undefined): string {
  return typeof text === 'string' ? text.replace(/\s+/g, ' ').trim() : '';
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** Follows a local `#/components/...` reference (external ones are named, not followed). */
function resolve(root: Obj, value: Json | undefined): Obj {
  const ref = obj(value).$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return obj(value);
  let node: Json | undefined = root;
  for (const part of ref.slice(2).split('/')) node = obj(node)[part];
  return resolve(root, node);
}

/** A short human description of a schema: a named reference, a type, an enum or a pattern. */
function typeOf(root: Obj, schema: Json | undefined): string {
  const s = obj(schema);
  if (typeof s.$ref === 'string') return `\`${s.$ref.split('/').pop()}\``;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) return (s[key] as Json[]).map((x) => typeOf(root, x)).join(' or ');
  }
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(', ');
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.type === 'array') return `array of ${typeOf(root, s.items)}`;
  const bounds = [
    s.minimum !== undefined ? `≥ ${s.minimum}` : '',
    s.maximum !== undefined ? `≤ ${s.maximum}` : '',
    s.minLength !== undefined ? `length ≥ ${s.minLength}` : '',
    s.maxLength !== undefined ? `length ≤ ${s.maxLength}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const type = typeof s.type === 'string' ? s.type : Object.keys(s).length === 0 ? 'any JSON' : 'object';
  return bounds ? `${type} (${bounds})` : type;
}

function fieldsTable(root: Obj, schema: Json | undefined): string[] {
  const s = resolve(root, schema);
  const properties = obj(s.properties);
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const names = Object.keys(properties);
  if (names.length === 0) return [];
  const rows = names.map((name) => {
    const p = obj(properties[name]);
    return `| \`${name}\` | ${required.has(name) ? 'yes' : 'no'} | ${cell(typeOf(root, p))} | ${cell(oneLine(p.description))} |`;
  });
  return ['| field | required | type | meaning |', '| --- | --- | --- | --- |', ...rows];
}

function operation(root: Obj, method: string, path: string, op: Obj, shared: Json[]): string[] {
  const out = [`### \`${method.toUpperCase()} ${path}\` — ${oneLine(op.summary)}`, ''];
  const permission = op['x-orbit-permission'];
  out.push(`Operation \`${String(op.operationId)}\`. Permission: ${typeof permission === 'string' ? `\`${permission}\`` : 'none'}.`, '');
  if (typeof op.description === 'string') out.push(op.description.trim(), '');
  const params = [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])].map((p) => resolve(root, p));
  if (params.length > 0) {
    out.push('| parameter | in | required | type | meaning |', '| --- | --- | --- | --- | --- |');
    for (const p of params)
      out.push(
        `| \`${String(p.name)}\` | ${String(p.in)} | ${p.required ? 'yes' : 'no'} | ${cell(typeOf(root, p.schema))} | ${cell(oneLine(p.description))} |`,
      );
    out.push('');
  }
  const body = obj(obj(obj(resolve(root, op.requestBody).content)['application/json']).schema);
  if (Object.keys(body).length > 0) {
    out.push(`Request body: ${typeOf(root, body)}.`, '');
    const table = fieldsTable(root, body);
    if (table.length > 0) out.push(...table, '');
  }
  out.push('| status | answer |', '| --- | --- |');
  for (const [status, raw] of Object.entries(obj(op.responses))) {
    const response = resolve(root, raw);
    const schema = obj(obj(obj(response.content)['application/json']).schema);
    const codes = response['x-orbit-error-codes'];
    const what = [
      oneLine(response.description).replace(/\.$/, ''),
      Array.isArray(codes) ? `codes: ${codes.map((c) => `\`${String(c)}\``).join(', ')}` : '',
      Object.keys(schema).length ? `body: ${typeOf(root, schema)}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    out.push(`| ${status} | ${cell(what)} |`);
  }
  out.push('');
  return out;
}

export function renderApiReference(openapi: Obj): string {
  const info = obj(openapi.info);
  const tags = (Array.isArray(openapi.tags) ? openapi.tags : []).map(obj);
  const byTag = new Map<string, string[]>(tags.map((t) => [String(t.name), []]));
  for (const [path, rawItem] of Object.entries(obj(openapi.paths))) {
    const item = obj(rawItem);
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = obj(item[method]);
      if (Object.keys(op).length === 0) continue;
      const tag = Array.isArray(op.tags) && typeof op.tags[0] === 'string' ? op.tags[0] : 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(...operation(openapi, method, path, op, shared));
    }
  }
  const out = [
    '<!-- Generated by scripts/generate.ts from spec/. Do not edit. -->',
    '',
    `# ${String(info.title ?? 'API')} — API reference (version ${String(info.version ?? '')})`,
    '',
    'Every answer is the envelope `{request_id, data}` or `{request_id, error: {code, message}}` with',
    '`X-Request-ID` and `Cache-Control: no-store`. Semantics and choices: `spec/README.md`; the',
    'machine-readable contract: `spec/openapi.yaml` and `spec/events.schema.json`.',
    '',
  ];
  for (const tag of tags) {
    const name = String(tag.name);
    out.push(`## ${name}`, '', oneLine(tag.description), '', ...(byTag.get(name) ?? []));
    byTag.delete(name);
  }
  for (const [name, lines] of byTag) out.push(`## ${name}`, '', ...lines);
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
