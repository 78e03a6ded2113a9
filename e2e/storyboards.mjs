// Runs official AdCP storyboards against a running storefront with an
// @adcp/sdk storyboard runner, and fails on any failed check except the
// ones storyboards.json excuses for this runner (the fixed runner excuses
// none).
//
// Each storyboard file is loaded the way `adcp storyboard run --file` loads
// it (loadStoryboardFile) and run with runStoryboard, because the CLI's
// --file mode cannot be given a test kit, a webhook receiver or
// allow_http, all of which these storyboards need against a local agent.
//
// Each storyboard runs as its own sandbox principal (the test kit's key
// with the runner's label and the storyboard's id appended; any demo- key
// is a sandbox principal):
// the runner seeds fixtures with no run id, and a principal's seeds are its
// sandbox catalogue and media buys, so storyboards sharing one would see
// each other's fixtures. Two labels running one storyboard against one
// server are two principals seeding the same fixture ids.
//
// usage: node storyboards.mjs --url http://127.0.0.1:PORT/mcp --token KEY
//        --spec ../../shared/adcp-spec/compliance [--runner DIR] [--strict]
//        [--label NAME] [--report] [--jwks URL] --out result.json
//        (--select stock|fixed|again|all | FILE...)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  if (i < 0) return def;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const flag = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return false;
  args.splice(i, 1);
  return true;
};
// --runner DIR loads the runner installed in DIR (the fixed copy that
// ../shared/tools/adcp-runner-fixes/build.sh makes) instead of the one
// pinned in this folder.
const runnerDir = opt('--runner');
const url = opt('--url');
const token = opt('--token');
const spec = opt('--spec');
const out = opt('--out', 'storyboards-result.json');
const protocol = opt('--protocol', 'mcp');
// The seller's JWKS, which the runner's webhook_signing option verifies
// webhook signatures against (by default the origin's JWKS).
const jwks = opt('--jwks', new URL('/.well-known/jwks.json', url ?? 'http://invalid').href);
const label = opt('--label', runnerDir ? 'fixed' : 'stock');
// --strict: no failure is tolerated (the fixed runner's list) but the
// conditional ones below, each while its cause shows.
const strict = flag('--strict');
// --report: print and record the results, but exit 0 whatever they are
// (for the README's table).
const report = flag('--report');
// --select NAME runs the storyboards.json list NAME: stock or fixed (what
// the test command runs on that runner), again (the seeded media-buy
// storyboards a second principal runs against the same server), or all
// (every storyboard --report runs).
const select = opt('--select');
// runner is the runner whose excuses apply: the fixed copy excuses none.
const runner = runnerDir ? 'fixed' : 'stock';
const here = path.dirname(new URL(import.meta.url).pathname);
const catalogue = JSON.parse(readFileSync(path.join(here, 'storyboards.json'), 'utf8'));
const selected = (name) => catalogue.storyboards.filter(e => e.file && ({
  stock: e.run === 'stock' || e.run === 'both',
  fixed: e.run === 'fixed' || e.run === 'both',
  again: e.again === true,
  all: e.run !== 'none' || e.report === true,
})[name]);
const files = select ? selected(select).map(e => path.join(spec, e.file)) : args;
if (!url || !token || !spec || files.length === 0 || (select && !['stock', 'fixed', 'again', 'all'].includes(select))) {
  console.error('usage: node storyboards.mjs --url URL --token KEY --spec DIR [--runner DIR] [--strict] [--label NAME] [--report] [--jwks URL] [--out FILE] [--protocol mcp|a2a] (--select stock|fixed|again|all | FILE...)');
  process.exit(2);
}

const require = createRequire(runnerDir ? path.resolve(runnerDir, 'package.json') : import.meta.url);
const { loadStoryboardFile, runStoryboard } = require('@adcp/sdk/testing');
const { HttpsJwksResolver } = require('@adcp/sdk/signing/server');
const YAML = require('yaml');

// The failure keys storyboards.json excuses on this runner, each with the
// defect that causes it (none on the fixed runner, nor with --strict).
const ALLOWED = new Map(strict || runner !== 'stock' ? [] : catalogue.storyboards.flatMap(e =>
  (e.stock_excuses?.keys ?? []).map(k => [k, e.stock_excuses.defect])));

// What the test kits leave to the agent under test. webhook-emission
// drives "the operation the agent emits webhooks from"
// ($test_kit.operations.primary_webhook_emitter, create_media_buy by
// default): here get_products in brief mode, which the storefront run with
// --async-discovery answers submitted and finishes by a signed webhook.
// security_baseline probes credentials with "an auth-required, read-only
// task the agent supports" from the runner's allowlist (list_creatives,
// get_media_buy_delivery, list_authorized_properties, get_signals,
// list_si_sessions); of those this seller's is get_media_buy_delivery.
const KIT_OVERRIDES = {
  webhook_emission: { operations: { primary_webhook_emitter: 'get_products' } },
  security_baseline: { auth: { probe_task: 'get_media_buy_delivery' } },
};

// Steps that must run, not be skipped: what a storyboard exists to grade
// here. A skip (a missing receiver, a missing webhook_signing option, a
// seller that stopped emitting) fails the run.
const MUST_RUN = new Set([
  'webhook_emission|idempotency_key_presence|expect_webhook_presence',
  'webhook_emission|operation_id_echo|expect_operation_id_echo',
  'webhook_emission|idempotency_replay_side_effects|expect_no_duplicate_webhook_on_replay',
  'webhook_emission|idempotency_key_stability|expect_key_stable_across_retries',
  'webhook_emission|signature_validity|expect_signature_valid',
]);

// Failures excused only while the run itself shows their cause, so that
// an excuse lapses the moment its cause does (storyboards.json names them
// under conditional). scenarios-enum: a get_adcp_capabilities
// response_schema check failed by 6.11.0's bundled 3.0.6 schema on
// compliance_testing.scenarios items alone, for an answer served at a later
// release, whose schema lists any scenario.
const CONDITIONS = {
  'scenarios-enum': (step, v) => {
    if (step.task !== 'get_adcp_capabilities' || v.check !== 'response_schema') return false;
    const served = (v.response?.payload ?? step.response)?.adcp_version;
    const errs = Array.isArray(v.actual) ? v.actual : [];
    return typeof served === 'string' && !/^3\.0(-|$)/.test(served) && errs.length > 0 &&
      errs.every(e => /^\/compliance_testing\/scenarios\/\d+$/.test(e.instance_path ?? ''));
  },
};
const conditional = strict ? [] : (catalogue.conditional ?? []).filter(c => c.runner === runner);
const conditionOf = (step, v) => conditional.find(c => CONDITIONS[c.defect]?.(step, v))?.defect;

function testKit(sb) {
  const rel = sb?.prerequisites?.test_kit;
  const kit = rel ? YAML.parse(readFileSync(path.join(spec, rel), 'utf8')) : undefined;
  const override = KIT_OVERRIDES[sb.id];
  if (!override) return kit;
  const merged = { ...kit, ...override };
  if (override.auth) merged.auth = { ...kit?.auth, ...override.auth };
  return merged;
}

// principal is the storyboard's own sandbox key on this runner.
const principal = (id) => `${token}-${label}-${id}`.replace(/[^A-Za-z0-9-]+/g, '-').slice(0, 128);

const summary = [];
const unexpected = [];
const allowedSeen = [];
for (const file of files) {
  const sb = loadStoryboardFile(file);
  const result = await runStoryboard(url, sb, {
    protocol,
    allow_http: true,
    auth: { type: 'bearer', token: principal(sb.id) },
    test_kit: testKit(sb),
    webhook_receiver: { mode: 'loopback_mock' },
    contracts: ['webhook_receiver_runner'],
    // A loopback seller's JWKS: http and a private address are allowed,
    // and no refetch cooldown, so a rotated key is found at once.
    webhook_signing: { jwks: new HttpsJwksResolver(jwks, { allowPrivateIp: true, minCooldownSeconds: 0 }) },
  });
  const row = { runner: label, file: path.relative(spec, file), storyboard: result.storyboard_id, passed: 0, failed: 0, skipped: 0, skips: {}, failures: [], excused: [] };
  const rowUnexpected = [];
  const fail = (k, defect) => {
    row.failures.push(k.key);
    if (defect) {
      row.excused.push({ key: k.key, defect });
      allowedSeen.push({ ...k, defect });
    } else {
      rowUnexpected.push(k);
    }
  };
  for (const phase of result.phases ?? []) {
    for (const step of phase.steps ?? []) {
      if (step.skipped) {
        row.skipped++;
        const why = step.skip_reason ?? step.skip?.reason ?? 'skipped';
        row.skips[why] = (row.skips[why] ?? 0) + 1;
        const id = `${result.storyboard_id}|${phase.phase_id}|${step.step_id}`;
        if (MUST_RUN.has(id)) {
          fail({ key: `${id}|<skipped>`, detail: `skipped (${why}) but must run: ${step.skip?.detail ?? ''}` });
        }
        continue;
      }
      if (step.passed) {
        row.passed++;
        continue;
      }
      row.failed++;
      const base = `${result.storyboard_id}|${phase.phase_id}|${step.step_id}`;
      const bad = (step.validations ?? []).filter(v => !v.passed && v.severity !== 'advisory' && !v.not_applicable);
      if (!bad.length) {
        const key = `${base}|<step>`;
        fail({ key, detail: step.error ?? 'step failed with no failed check' }, ALLOWED.get(key));
      }
      for (const v of bad) {
        const key = `${base}|${v.check}`;
        fail({ key, detail: v.error ?? v.description ?? '' }, ALLOWED.get(key) ?? conditionOf(step, v));
      }
    }
  }
  for (const a of result.assertions ?? []) {
    if (!a.passed) {
      fail({ key: `${result.storyboard_id}|assertion|${a.step_id ?? ''}|${a.assertion_id}`, detail: a.description ?? '' });
    }
  }
  summary.push(row);
  unexpected.push(...rowUnexpected);
  const skips = Object.entries(row.skips).map(([k, v]) => `${k}:${v}`).join(', ');
  const verdict = rowUnexpected.length ? 'FAIL' : row.excused.length ? 'EXCUSED' : 'PASS';
  console.log(`[${label}] ${verdict} ${row.storyboard} (${row.file}): ${row.passed} passed, ${row.failed} failed, ${row.skipped} skipped${skips ? ' [' + skips + ']' : ''}`);
  for (const d of new Set(row.excused.map(e => e.defect))) console.log(`[${label}]   excused: ${d}`);
}

writeFileSync(out, JSON.stringify({ runner: label, summary, unexpected, allowed: allowedSeen }, null, 2));
for (const k of allowedSeen) console.log(`[${label}] excused failure (${k.defect}): ${k.key}`);
if (unexpected.length) {
  console.log(`\n[${label}] ${unexpected.length} unexpected failure(s):`);
  for (const k of unexpected) console.log(`  ${k.key}: ${String(k.detail).slice(0, 400)}`);
  process.exit(report ? 0 : 1);
}
console.log(`\n[${label}] all storyboards passed${allowedSeen.length ? ' (apart from the excused failures above)' : ''}`);
