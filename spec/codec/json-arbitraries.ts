/**
 * @module json-arbitraries
 * Test support (not part of the public API): fast-check arbitraries for JSON documents as
 * syntax trees, a renderer that writes them with varying whitespace and key escapes while
 * recording where chosen keys and values land, and duplicate-key injection.
 */

import fc from 'fast-check';

/** A JSON document as written: scalars keep their exact source text. */
export type JsonNode =
  | { readonly kind: 'scalar'; readonly text: string }
  | { readonly kind: 'array'; readonly items: readonly JsonNode[] }
  | { readonly kind: 'object'; readonly members: readonly JsonMember[] };

export interface JsonMember {
  readonly key: string;
  readonly value: JsonNode;
  /** Code unit of the key to write as a `\uXXXX` escape (whatever the layout says). */
  readonly escapeAt?: number;
  /** Record where this member's key is written (see {@link Rendered.marks}). */
  readonly mark?: boolean;
}

/**
 * How to write a document: whitespace pieces used in turn between tokens, and numbers used
 * in turn to decide key escapes (n % 3 === 0: escape code unit (n / 3) % length).
 */
export interface Layout {
  readonly spaces: readonly string[];
  readonly escapes: readonly number[];
  readonly upperHex: boolean;
}

export interface Rendered {
  readonly text: string;
  /** Offsets of the opening quotes of the keys of members with `mark`. */
  readonly marks: readonly number[];
}

/** The syntax tree of a JS value produced by `JSON.parse` (or any JSON-compatible value). */
export function nodeFromValue(value: unknown): JsonNode {
  if (Array.isArray(value)) return { kind: 'array', items: value.map(nodeFromValue) };
  if (typeof value === 'object' && value !== null) {
    return {
      kind: 'object',
      members: Object.keys(value).map((key) => ({ key, value: nodeFromValue((value as Record<string, unknown>)[key]) })),
    };
  }
  return { kind: 'scalar', text: JSON.stringify(value) };
}

function hex4(unit: number, upper: boolean): string {
  const digits = unit.toString(16).padStart(4, '0');
  return `\\u${upper ? digits.toUpperCase() : digits}`;
}

/** Writes `key` as a JSON string, with the code unit at `escapeAt` as a `\uXXXX` escape. */
export function renderKey(key: string, escapeAt: number | undefined, upperHex: boolean): string {
  if (escapeAt === undefined || key.length === 0) return JSON.stringify(key);
  const at = escapeAt % key.length;
  let out = '"';
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    // One code unit at a time: each half of a surrogate pair comes out as its own escape.
    out += i === at ? hex4(unit, upperHex) : JSON.stringify(key[i]).slice(1, -1);
  }
  return `${out}"`;
}

/** Writes `node` following `layout`. */
export function render(node: JsonNode, layout: Layout): Rendered {
  let text = '';
  let space = 0;
  let escapeIndex = 0;
  const marks: number[] = [];
  const ws = (): void => {
    if (layout.spaces.length > 0) text += layout.spaces[space++ % layout.spaces.length];
  };
  const nextEscape = (): number | undefined => {
    if (layout.escapes.length === 0) return undefined;
    const n = layout.escapes[escapeIndex++ % layout.escapes.length] as number;
    return n % 3 === 0 ? n / 3 : undefined;
  };
  const write = (n: JsonNode): void => {
    if (n.kind === 'scalar') {
      text += n.text;
    } else if (n.kind === 'array') {
      text += '[';
      n.items.forEach((item, i) => {
        if (i > 0) text += ',';
        ws();
        write(item);
        ws();
      });
      if (n.items.length === 0) ws();
      text += ']';
    } else {
      text += '{';
      n.members.forEach((member, i) => {
        if (i > 0) text += ',';
        ws();
        if (member.mark === true) marks.push(text.length);
        text += renderKey(member.key, member.escapeAt ?? nextEscape(), layout.upperHex);
        ws();
        text += ':';
        ws();
        write(member.value);
        ws();
      });
      if (n.members.length === 0) ws();
      text += '}';
    }
  };
  ws();
  write(node);
  ws();
  return { text, marks };
}

/** Member names: arbitrary code points, look-alikes that need escaping, and awkward names. */
export const keyArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ unit: fc.constantFrom('a', 'b', '"', '\\', '/', '\n', '\u0000', '\u2028', 'é', '😀'), maxLength: 4 }),
  fc.constantFrom('', 'a', '__proto__', 'constructor', 'toString', '0', '1', '-1', 'result'),
);

/** Numbers as JSON text, including values no double holds exactly. */
export const numberTextArb: fc.Arbitrary<string> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.integer().map(String),
  fc.stringMatching(/^-?(?:0|[1-9][0-9]{0,34})(?:\.[0-9]{1,36})?(?:[eE][+-]?[0-9]{1,3})?$/),
  fc.constantFrom('123456789012345678901234567890', '0.1000000000000000055511151231257827', '-0', '1E400', '18446744073709551616'),
);

/** Strings as JSON text, sometimes with optional escapes (`\/`, `\u00e9`, ...). */
export const stringTextArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.tuple(fc.string({ unit: 'binary', maxLength: 6 }), fc.nat(), fc.boolean()).map(([s, at, upper]) => renderKey(s, at, upper)),
  fc.constantFrom('"\\/"', '"\\b\\f\\n\\r\\t"', '"\\ud800"', '"\\uDBFF\\uDFFF"', '"\u2028\u2029"', '"\\"\\\\"'),
);

export const scalarArb: fc.Arbitrary<JsonNode> = fc
  .oneof(fc.constantFrom('null', 'true', 'false'), numberTextArb, stringTextArb)
  .map((text) => ({ kind: 'scalar', text }) as const);

/** Documents with unique keys per object: from `fc.jsonValue()` and from random trees. */
export const documentArb: fc.Arbitrary<JsonNode> = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }).map(nodeFromValue),
  fc.letrec<{ node: JsonNode; array: JsonNode; object: JsonNode }>((tie) => ({
    node: fc.oneof({ depthSize: 'medium', withCrossShrink: true }, scalarArb, tie('array'), tie('object')),
    array: fc.array(tie('node'), { maxLength: 5 }).map((items) => ({ kind: 'array', items }) as const),
    object: fc
      .uniqueArray(fc.record({ key: keyArb, value: tie('node') }), { selector: (m) => m.key, maxLength: 5 })
      .map((members) => ({ kind: 'object', members }) as const),
  })).node,
);

export const layoutArb: fc.Arbitrary<Layout> = fc.record({
  spaces: fc.array(fc.constantFrom('', '', '', ' ', '\n', '\t', '\r', ' \r\n\t '), { maxLength: 12 }),
  escapes: fc.array(fc.nat({ max: 60 }), { maxLength: 8 }),
  upperHex: fc.boolean(),
});

/** JSON Pointer of a location given as its segments. */
export function pointer(segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** Every object of `node` in document order, with its JSON Pointer segments. */
export function objectsOf(node: JsonNode, at: Array<string | number> = []): Array<{ node: JsonNode; at: Array<string | number> }> {
  if (node.kind === 'array') return node.items.flatMap((item, i) => objectsOf(item, [...at, i]));
  if (node.kind === 'object') {
    return [{ node, at }, ...node.members.flatMap((m) => objectsOf(m.value, [...at, m.key]))];
  }
  return [];
}

export interface DuplicateChoice {
  readonly objectIndex: number;
  readonly memberIndex: number;
  readonly position: number;
  readonly value: JsonNode;
  readonly freshKey: string;
  /** Write the duplicate with the code unit at this index escaped (when it has one). */
  readonly escapeAt: number | undefined;
}

export const duplicateChoiceArb = (escaped: boolean): fc.Arbitrary<DuplicateChoice> =>
  fc.record({
    objectIndex: fc.nat(),
    memberIndex: fc.nat(),
    position: fc.nat(),
    value: scalarArb,
    freshKey: escaped ? keyArb.filter((k) => k.length > 0) : keyArb,
    escapeAt: escaped ? fc.nat() : fc.constant(undefined),
  });

export interface Injected {
  readonly document: JsonNode;
  readonly path: string;
  readonly key: string;
}

function replaceNode(node: JsonNode, target: JsonNode, replacement: JsonNode): JsonNode {
  if (node === target) return replacement;
  if (node.kind === 'array') return { kind: 'array', items: node.items.map((i) => replaceNode(i, target, replacement)) };
  if (node.kind === 'object') {
    return {
      kind: 'object',
      members: node.members.map((m) => ({ ...m, value: replaceNode(m.value, target, replacement) })),
    };
  }
  return node;
}

/**
 * Adds one duplicate member to one object of `document` (wrapping the document in an object
 * when it has none). The duplicate comes after the original and is marked for rendering.
 * When `choice.escapeAt` is set, the duplicate's name is written with an escape.
 */
export function injectDuplicate(document: JsonNode, choice: DuplicateChoice): Injected {
  const root: JsonNode =
    objectsOf(document).length > 0 ? document : { kind: 'object', members: [{ key: choice.freshKey, value: document }] };
  const objects = objectsOf(root);
  const { node: target, at } = objects[choice.objectIndex % objects.length]!;
  if (target.kind !== 'object') throw new Error('unreachable');
  const members = [...target.members];
  const candidates = members.map((m, i) => ({ m, i })).filter(({ m }) => choice.escapeAt === undefined || m.key.length > 0);
  let key: string;
  if (candidates.length === 0) {
    key = choice.freshKey;
    const at0 = choice.position % (members.length + 1);
    members.splice(at0, 0, { key, value: choice.value });
    members.splice(at0 + 1 + (choice.memberIndex % (members.length - at0)), 0, {
      key,
      value: choice.value,
      escapeAt: choice.escapeAt,
      mark: true,
    });
  } else {
    const { m, i } = candidates[choice.memberIndex % candidates.length]!;
    key = m.key;
    const insertAt = i + 1 + (choice.position % (members.length - i));
    members.splice(insertAt, 0, { key, value: choice.value, escapeAt: choice.escapeAt, mark: true });
  }
  return { document: replaceNode(root, target, { kind: 'object', members }), path: pointer(at), key };
}

/** Nesting depth of a document: 0 for a scalar, 1 for `[]` or `{}`. */
export function depthOf(node: JsonNode): number {
  if (node.kind === 'array') return 1 + Math.max(0, ...node.items.map(depthOf));
  if (node.kind === 'object') return 1 + Math.max(0, ...node.members.map((m) => depthOf(m.value)));
  return 0;
}

/**
 * Whether two parsed JSON values are identical: same prototypes, same own keys in the same
 * order, `Object.is` on scalars (so `-0` differs from `0`). Unlike a generic deep equality it
 * is not confused by members named `constructor` or `__proto__`.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keysA = Reflect.ownKeys(a);
  const keysB = Reflect.ownKeys(b);
  if (Array.isArray(a)) keysA.splice(keysA.indexOf('length'), 1);
  if (Array.isArray(b)) keysB.splice(keysB.indexOf('length'), 1);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key, i) => {
    if (key !== keysB[i]) return false;
    const da = Object.getOwnPropertyDescriptor(a, key);
    const db = Object.getOwnPropertyDescriptor(b, key);
    return da?.enumerable === db?.enumerable && sameJson(da?.value, db?.value);
  });
}
