/**
 * Writes conformance/CASES.md and conformance/case-ids.json from the case catalogue.
 * `--check` writes nothing and exits 1 when either file is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALL_CASES } from '../src/cases/index.ts';
import { renderCatalogueJson, renderCatalogueMarkdown } from '../src/catalogue.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = {
  [join(root, 'CASES.md')]: renderCatalogueMarkdown(ALL_CASES),
  [join(root, 'case-ids.json')]: renderCatalogueJson(ALL_CASES),
};
const check = process.argv.includes('--check');
let stale = 0;
for (const [path, text] of Object.entries(files)) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // missing: stale
  }
  if (current === text) continue;
  stale++;
  if (check) console.error(`${path} is out of date; run npm run -w conformance catalogue`);
  else writeFileSync(path, text);
}
if (!check) console.log(`${ALL_CASES.length} cases; ${stale} file(s) written`);
process.exitCode = check && stale > 0 ? 1 : 0;
