/**
 * Writes conformance/CASES.md and conformance/case-ids.json from the case catalogue, and
 * conformance/src/seed-rules.ts from spec/rules.md. `--check` writes nothing and exits 1 when any
 * of them is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSeedRules, renderSeedRulesModule } from '../src/seed-rules-source.ts';
import { biomeFormat } from './biome-format.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // missing: stale
  }
}

let stale = 0;
function write(path: string, text: string): void {
  if (read(path) === text) return;
  stale++;
  if (check) console.error(`${path} is out of date; run npm run -w conformance catalogue`);
  else writeFileSync(path, text);
}

// The rules module first: the cases import it, so the catalogue is rendered from the new one.
const rulesModule = join(root, 'src/seed-rules.ts');
write(rulesModule, biomeFormat(rulesModule, renderSeedRulesModule(parseSeedRules(read(join(root, '../spec/rules.md'))))));
if (check && stale > 0) process.exit(1);
const { ALL_CASES } = await import('../src/cases/index.ts');
const { CLIENT_CASES } = await import('../src/client/index.ts');
const { renderCatalogueJson, renderCatalogueMarkdown } = await import('../src/catalogue.ts');
write(join(root, 'CASES.md'), renderCatalogueMarkdown(ALL_CASES, CLIENT_CASES));
write(join(root, 'case-ids.json'), renderCatalogueJson(ALL_CASES, CLIENT_CASES));
if (!check) console.log(`${ALL_CASES.length} server and ${CLIENT_CASES.length} client cases; ${stale} file(s) written`);
process.exitCode = check && stale > 0 ? 1 : 0;
