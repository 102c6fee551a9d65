// Judges a run of the official conformance suite against the list of checks that do not
// apply to rtn (docs/tools.md, "Conformance"): every FAILURE or WARNING must be listed, and a
// listed scenario that ran and passed whole is a stale row. Prints one line per problem and a
// summary; exit 0 when there is none. tests/integration/serve_conformance.sh.
//
//   node conformance-check.mjs DOCS/tools.md RESULTS-DIR
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [docs, results] = process.argv.slice(2);

// scenario -> Set of check ids, or '*' for all
const na = new Map();
const text = readFileSync(docs, 'utf8');
const section = text.split(/^## /m).find((s) => s.startsWith('Conformance\n'));
if (!section) {
  console.log(`${docs}: no "Conformance" section`);
  process.exit(1);
}
for (const line of section.split('\n')) {
  const cells = line.split('|').map((c) => c.trim());
  if (cells.length < 5 || !cells[1].startsWith('`')) continue;
  const names = [...cells[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  const checks = cells[2] === 'all' ? '*' : [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  for (const n of names) {
    if (checks === '*') na.set(n, '*');
    else if (na.get(n) !== '*') na.set(n, new Set([...(na.get(n) ?? []), ...checks]));
  }
}

let problems = 0, passed = 0, excused = 0, scenarios = 0;
for (const dir of readdirSync(results)) {
  const file = join(results, dir, 'checks.json');
  if (!existsSync(file)) continue;
  const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
  const checks = JSON.parse(readFileSync(file, 'utf8'));
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const rule = na.get(scenario);
  scenarios++;
  passed += checks.length - bad.length;
  for (const c of bad) {
    if (rule === '*' || rule?.has(c.id)) {
      excused++;
      continue;
    }
    problems++;
    const why = String(c.errorMessage ?? '').replace(/\s+/g, ' ').slice(0, 300);
    console.log(`${scenario}: ${c.status} ${c.id}: ${why}`);
  }
  if (rule && bad.length === 0) {
    problems++;
    console.log(`${scenario}: passes whole but docs/tools.md lists it as not applicable`);
  }
}
if (scenarios === 0) {
  console.log(`${results}: no scenario results`);
  process.exit(1);
}
console.log(`${scenarios} scenarios: ${passed} checks passed, ${excused} not applicable, ${problems} problems`);
process.exit(problems ? 1 : 0);
