/**
 * @module
 * generated/fields.ts: the tables that code needs from the contract and that the generated types
 * cannot carry, derived here so that no package writes them again:
 * - the patterns of the shared string types (`Id`, `Uint64`, `LeaseSecret`, `Timestamp`) and of
 *   the `Idempotency-Key` header;
 * - the permissions, and the one each operation needs (`x-orbit-permission` in openapi.yaml);
 * - the member names whose values are uint64 decimal strings (whose range the schema cannot say);
 * - per schema, the paths of members kept as exact JSON text (`x-orbit-raw-json: true`; `*` for
 *   every element of an array);
 * - the members of each client frame type (its envelope), and the values of each string enum.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

function at(root: JsonObject, ...keys: string[]): JsonObject {
  let value: Json | undefined = root;
  for (const key of keys) {
    value = isObject(value) ? value[key] : undefined;
    if (!isObject(value)) throw new Error(`the contract has no object at ${keys.join('/')}`);
  }
  return value as JsonObject;
}

function pattern(schema: JsonObject, where: string): string {
  if (typeof schema.pattern !== 'string') throw new Error(`${where} has no pattern`);
  return schema.pattern;
}

/** Every named schema of both documents, events' $defs first; a component that inlines a def keeps its own name. */
function namedSchemas(events: JsonObject, openapi: JsonObject): Map<string, JsonObject> {
  const named = new Map<string, JsonObject>();
  for (const [name, schema] of Object.entries(at(events, '$defs'))) if (isObject(schema)) named.set(name, schema);
  for (const [name, schema] of Object.entries(at(openapi, 'components', 'schemas'))) if (isObject(schema)) named.set(name, schema);
  return named;
}

/** The name a `$ref` points at, in either document (`#/$defs/X`, `./events.schema.json#/$defs/X`, `#/components/schemas/X`). */
const refName = (ref: Json | undefined): string | null => (typeof ref === 'string' ? (ref.split('/').pop() ?? null) : null);

/** The schemas a member schema can be: itself, or the members of its anyOf/oneOf/allOf. */
function alternatives(schema: JsonObject): JsonObject[] {
  const parts = [schema];
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = schema[key];
    if (Array.isArray(list)) for (const item of list) if (isObject(item)) parts.push(item);
  }
  return parts;
}

function uint64Members(schemas: Map<string, JsonObject>): string[] {
  const names = new Set<string>();
  const visit = (value: Json): void => {
    if (Array.isArray(value)) value.forEach(visit);
    if (!isObject(value)) return;
    const properties = value.properties;
    if (isObject(properties)) {
      for (const [member, schema] of Object.entries(properties)) {
        if (isObject(schema) && alternatives(schema).some((s) => refName(s.$ref) === 'Uint64')) names.add(member);
      }
    }
    for (const child of Object.values(value)) visit(child);
  };
  for (const schema of schemas.values()) visit(schema);
  return [...names].sort();
}

function rawJsonPaths(schemas: Map<string, JsonObject>): Record<string, string[][]> {
  const pathsOf = (schema: JsonObject, seen: readonly string[]): string[][] => {
    const found: string[][] = [];
    for (const part of alternatives(schema)) {
      const target = refName(part.$ref);
      if (target !== null && schemas.has(target) && !seen.includes(target)) found.push(...pathsOf(schemas.get(target)!, [...seen, target]));
      // The elements of an array: '*' is the codec's segment for every index (parseStrict).
      if (isObject(part.items)) for (const path of pathsOf(part.items, seen)) found.push(['*', ...path]);
      const properties = part.properties;
      if (!isObject(properties)) continue;
      for (const [member, child] of Object.entries(properties)) {
        if (!isObject(child)) continue;
        if (child['x-orbit-raw-json'] === true) found.push([member]);
        else for (const path of pathsOf(child, seen)) found.push([member, ...path]);
      }
    }
    return found;
  };
  const table: Record<string, string[][]> = {};
  for (const [name, schema] of schemas) {
    const paths = pathsOf(schema, [name]);
    // Envelopes wrap these schemas again; the table lists where raw JSON sits in each contract shape itself.
    if (paths.length > 0 && !name.endsWith('Envelope')) table[name] = paths;
  }
  return table;
}

function operationPermissions(openapi: JsonObject): Record<string, string> {
  const table: Record<string, string> = {};
  for (const item of Object.values(at(openapi, 'paths'))) {
    if (!isObject(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isObject(operation) || typeof operation.operationId !== 'string') continue;
      const permission = operation['x-orbit-permission'];
      if (typeof permission === 'string') table[operation.operationId] = permission;
    }
  }
  return Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)));
}

/** Each client frame type's members, in schema order (its envelope: every member is required). */
function clientFrameKeys(defs: JsonObject): Record<string, string[]> {
  const table: Record<string, string[]> = {};
  const members = at(defs, 'clientFrame').oneOf;
  for (const member of Array.isArray(members) ? members : []) {
    const name = isObject(member) ? refName(member.$ref) : null;
    const frame = name === null ? undefined : defs[name];
    if (!isObject(frame) || !isObject(frame.properties)) throw new Error(`clientFrame member ${String(name)} is not a frame schema`);
    const type = frame.properties.type;
    if (!isObject(type) || typeof type.const !== 'string') throw new Error(`${name} has no constant type`);
    table[type.const] = Object.keys(frame.properties);
  }
  return table;
}

/** The values of every string enum among the events schema's $defs, in schema order. */
function enumValues(defs: JsonObject): Record<string, string[]> {
  const table: Record<string, string[]> = {};
  for (const [name, schema] of Object.entries(defs)) {
    if (isObject(schema) && schema.type === 'string' && Array.isArray(schema.enum)) table[name] = schema.enum.map(String);
  }
  return table;
}

export function generateFields(header: string, events: JsonObject, openapi: JsonObject): string {
  const defs = at(events, '$defs');
  const schemas = namedSchemas(events, openapi);
  const permissionOf = operationPermissions(openapi);
  const permissions = [...new Set(Object.values(permissionOf))].sort();
  const idempotencyKey = at(openapi, 'components', 'parameters', 'IdempotencyKey', 'schema');
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const regex = (source: string) => `new RegExp(${JSON.stringify(source)})`;
  return [
    header,
    '',
    "/** The patterns of the contract's shared string types and of the `Idempotency-Key` header. */",
    'export const PATTERNS = {',
    `  id: ${regex(pattern(at(defs, 'Id'), 'Id'))},`,
    `  uint64: ${regex(pattern(at(defs, 'Uint64'), 'Uint64'))},`,
    `  leaseSecret: ${regex(pattern(at(defs, 'LeaseSecret'), 'LeaseSecret'))},`,
    `  timestamp: ${regex(pattern(at(defs, 'Timestamp'), 'Timestamp'))},`,
    `  idempotencyKey: ${regex(pattern(idempotencyKey, 'the IdempotencyKey parameter'))},`,
    '} as const;',
    '',
    '/** Every permission a credential can hold. */',
    `export const PERMISSIONS = ${json(permissions)} as const;`,
    'export type Permission = (typeof PERMISSIONS)[number];',
    '',
    '/** The permission each operation needs (`x-orbit-permission`), by operationId. */',
    `export const OPERATION_PERMISSIONS = ${json(permissionOf)} as const satisfies Record<string, Permission>;`,
    'export type GuardedOperation = keyof typeof OPERATION_PERMISSIONS;',
    '',
    '/** Member names whose string values are uint64 decimal strings, wherever they occur in the contract. */',
    `export const UINT64_MEMBERS: ReadonlySet<string> = new Set(${json(uint64Members(schemas))});`,
    '',
    '/** The values of each string enum of the events schema (`ResultType`, `EventType`, `DeliveryState`, ...), in schema order. */',
    `export const ENUM_VALUES = ${JSON.stringify(enumValues(defs))} as const;`,
    '',
    '/** The members of each client frame, by its `type`: an envelope with other members is refused. */',
    `export const CLIENT_FRAME_KEYS: Readonly<Record<string, readonly string[]>> = ${JSON.stringify(clientFrameKeys(defs))};`,
    '',
    '/** Per schema, the paths of the members kept as the exact JSON text that was published (`x-orbit-raw-json`). */',
    `export const RAW_JSON_PATHS = ${json(rawJsonPaths(schemas))} as const;`,
    '',
  ].join('\n');
}
