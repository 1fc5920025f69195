import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderApiReference } from './api-reference.ts';

const openapi = YAML.parse(readFileSync(new URL('../spec/openapi.yaml', import.meta.url), 'utf8'));

describe('API reference', () => {
  const page = renderApiReference(openapi);

  it('documents every operation under its resource, with its permission and every answer', () => {
    for (const [path, item] of Object.entries<any>(openapi.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (method === 'parameters') continue;
        const heading = `### \`${method.toUpperCase()} ${path}\``;
        expect(page, heading).toContain(heading);
        const section = page.slice(page.indexOf(heading)).split('\n### ')[0]!;
        expect(section).toContain(`Operation \`${op.operationId}\``);
        if (op['x-orbit-permission']) expect(section).toContain(`Permission: \`${op['x-orbit-permission']}\``);
        for (const status of Object.keys(op.responses)) expect(section).toMatch(new RegExp(`^\\| ${status} \\|`, 'm'));
      }
    }
  });

  it('lists the fields of a request body with whether each is required', () => {
    expect(page).toMatch(/\| `name` \| yes \|/);
    expect(page).toMatch(/\| `from_sequence` \| no \|/);
  });
});
