// Runs official AdCP storyboards against a running storefront with an
// @adcp/sdk storyboard runner, and fails on any failed check except the
// ones named below.
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
// sandbox catalogue, so storyboards sharing one would see each other's
// fixtures.
//
// usage: node storyboards.mjs --url http://127.0.0.1:PORT/mcp --token KEY
//        --spec ../../shared/adcp-spec/compliance [--runner DIR] [--strict]
//        [--label NAME] [--report] [--jwks URL] --out result.json FILE...
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
const files = args;
if (!url || !token || !spec || files.length === 0) {
  console.error('usage: node storyboards.mjs --url URL --token KEY --spec DIR [--runner DIR] [--strict] [--label NAME] [--report] [--jwks URL] [--out FILE] [--protocol mcp|a2a] FILE...');
  process.exit(2);
}

const require = createRequire(runnerDir ? path.resolve(runnerDir, 'package.json') : import.meta.url);
const { loadStoryboardFile, runStoryboard } = require('@adcp/sdk/testing');
const { HttpsJwksResolver } = require('@adcp/sdk/signing/server');
const YAML = require('yaml');

// Tolerated failures of the stock runner, each named exactly. @adcp/sdk
// 6.11.0 decides response_schema with its bundled AdCP 3.0.6 get_products
// schema, which requires products[] on every arm:
//  - the 3.2 GetProductsRejected payload has no products (it must not);
//  - the async Submitted envelope has no products (it must not either;
//    get-products-async-response-submitted.json forbids them). The runner
//    then skips the storyboard's later, stateful steps, which the Go tests
//    (agent/async_test.go) and e2e/async_test.go cover instead.
// The Go tests validate both payloads against the official 3.2 schemas.
//
// Media buys, where 6.11.0 cannot grade what the storyboard asks:
//  - it ignores a phase's requires_capability, so the media_buy_seller
//    baseline runs its buyer_selected phases against a seller that
//    declares seller-assigned account timezones; their first step looks
//    for account.timezone.supported_timezones, which such a seller must
//    not declare (core/account-timezone-capability.json), and the rest of
//    those phases cascade-skip;
//  - its create_media_buy request builder replaces the storyboard's
//    account with the test kit's default, so the submitted task lands
//    under another account than the one create_media_buy_async_lifecycle
//    polls (tasks are visible to their account and principal only, as the
//    controller contract requires), and it has no schema for
//    get_task_status; agent/mediabuy_test.go runs that lifecycle with one
//    account instead;
//  - it treats the storyboard product and pricing ids test-product and
//    test-pricing as placeholders to fill from discovery, and the
//    deterministic-testing media-buy phases discover nothing, so it sends
//    pricing_option_id "default" for the fixture it seeded as
//    test-pricing; the buy is rightly refused and those phases' later
//    steps cascade-skip (they would go on to force_media_buy_status and
//    simulate_budget_spend, which this seller does not implement, and
//    to simulate_delivery, which compliance/mediabuys_test.go covers);
//  - read_filter_behavior's reject_empty_delivery_range expects the
//    VALIDATION_ERROR answer but does not mark the step expect_error, so
//    the runner counts the error it asked for as a failed step; its own
//    checks (response_schema, errors[0].code, errors[0].field) pass.
//  - idempotency's create_media_buy steps name the seeded fixture
//    test-product / test-pricing, which the runner's request builder treats
//    as placeholders as above and sends with pricing_option_id "default";
//    the first buy is rightly refused, so no media_buy_id is captured and
//    the replay, conflict and fresh-key phases cascade-skip (the missing-key
//    phase passes; agent/mediabuy_test.go TestMediaBuyIdempotency and
//    storetest cover the rest);
//  - invalid_transitions' setup buys a fixed 5000 of whatever product its
//    discovery ranks first; for its brief (outdoor lifestyle display,
//    fixed price) the demo catalogue's first match is the homepage
//    takeover, whose pricing needs 15000 per package, so the buy is rightly
//    refused BUDGET_TOO_LOW and the later probes cascade-skip (the first
//    probe, MEDIA_BUY_NOT_FOUND, passes; mediabuy/buy_test.go covers
//    PACKAGE_NOT_FOUND and NOT_CANCELLABLE);
//  - billing_gate_dispatch: the runner ignores a phase's
//    requires_capability, so it runs capability_gate_operator (gated on
//    supported_billing not containing operator, which this seller offers:
//    the sync rightly succeeds) and per_agent_gate_reject (gated on
//    supported_billing containing agent, which this seller does not offer:
//    agent billing is rightly refused at the capability gate,
//    BILLING_NOT_SUPPORTED with scope capability, which the
//    capability_gate_agent phase grades and passes).
const ALLOWED = new Set(strict ? [] : [
  'media_buy_seller/get_products_rejected|rejected_discovery_response|get_products_rejected|response_schema',
  'media_buy_seller/get_products_async|submitted_discovery_response|get_products_submitted|response_schema',
  'media_buy_seller|buyer_selected_account_setup|discover_buyer_selected_timezone|field_present',
  'media_buy_seller|buyer_selected_account_setup|discover_buyer_selected_timezone|capture_path_not_resolvable',
  'media_buy_seller/create_media_buy_async_lifecycle|reconcile_submitted_task|get_submitted_media_buy_task|response_schema',
  'media_buy_seller/create_media_buy_async_lifecycle|reconcile_submitted_task|get_submitted_media_buy_task|field_value',
  'media_buy_seller/read_filter_behavior|delivery_boundaries|reject_empty_delivery_range|<step>',
  'deterministic_testing|deterministic_media_buy|create_media_buy|capture_path_not_resolvable',
  'deterministic_testing|deterministic_delivery|create_media_buy_for_delivery|capture_path_not_resolvable',
  'deterministic_testing|deterministic_budget|create_media_buy_for_budget|capture_path_not_resolvable',
  'media_buy_seller/invalid_transitions|setup|create_buy|field_present',
  'media_buy_seller/invalid_transitions|setup|create_buy|capture_path_not_resolvable',
  'idempotency|replay_same_payload|create_media_buy_initial|field_present',
  'idempotency|replay_same_payload|create_media_buy_initial|capture_path_not_resolvable',
  'billing_gate_dispatch|capability_gate_operator|sync_accounts_unsupported_operator_billing|field_value',
  'billing_gate_dispatch|per_agent_gate_reject|sync_accounts_passthrough_rejects_agent|field_value',
  'billing_gate_dispatch|per_agent_gate_reject|sync_accounts_passthrough_rejects_agent|field_present',
  'billing_gate_dispatch|per_agent_gate_reject|sync_accounts_passthrough_rejects_agent|capture_path_not_resolvable',
]);

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

// Failures excused only while a named cause is observed in the run
// itself, so that an excuse lapses the moment its cause does.
//  - webhook_emission: 6.11.0 does not know the 3.2 step expect_no_webhook
//    (it is not in WEBHOOK_ASSERTION_TASKS,
//    dist/lib/testing/storyboard/webhook-assertions.js; the fixed copy
//    keeps that), so runner.js dispatches it as an agent tool and skips it
//    missing_tool. It is the success branch's contributing step, so no
//    branch of synchronous_completion_handled contributes: the rejection
//    branch, which this seller rightly does not take (it answers the
//    wholesale read synchronously with products), stays failed, and so
//    does the assertion over the branches. agent/curate_test.go checks what
//    expect_no_webhook would (the read stays synchronous and sends none).
const CONDITIONAL = [
  {
    keys: [
      'webhook_emission|synchronous_completion_rejection_path|sync_get_products_with_webhook_config_reject|error_code',
      'webhook_emission|synchronous_completion_assertion|assert_synchronous_completion_handled|any_of',
    ],
    steps: ['expect_sync_get_products_silence'],
    why: '6.11.0 does not know the expect_no_webhook step, so the success branch cannot contribute',
  },
];

// causes lists the conditional excuses whose cause this result shows:
// every one of their steps skipped as missing_tool.
const causes = (result) => {
  const steps = (result.phases ?? []).flatMap(p => p.steps ?? []);
  return CONDITIONAL.filter(c => {
    const found = steps.filter(s => c.steps.includes(s.step_id));
    return found.length === c.steps.length && found.every(s => s.skipped && (s.skip_reason ?? s.skip?.reason) === 'missing_tool');
  });
};

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
  const observed = causes(result);
  const row = { runner: label, file: path.relative(spec, file), storyboard: result.storyboard_id, passed: 0, failed: 0, skipped: 0, skips: {}, failures: [], excused: [] };
  const excused = (key) => ALLOWED.has(key) || observed.some(c => c.keys.includes(key));
  for (const phase of result.phases ?? []) {
    for (const step of phase.steps ?? []) {
      if (step.skipped) {
        row.skipped++;
        const why = step.skip_reason ?? step.skip?.reason ?? 'skipped';
        row.skips[why] = (row.skips[why] ?? 0) + 1;
        const id = `${result.storyboard_id}|${phase.phase_id}|${step.step_id}`;
        if (MUST_RUN.has(id)) {
          const k = { key: `${id}|<skipped>`, detail: `skipped (${why}) but must run: ${step.skip?.detail ?? ''}` };
          row.failures.push(k.key);
          unexpected.push(k);
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
      const keys = bad.length ? bad.map(v => ({ key: `${base}|${v.check}`, detail: v.error ?? v.description ?? '' }))
        : [{ key: `${base}|<step>`, detail: step.error ?? 'step failed with no failed check' }];
      for (const k of keys) {
        row.failures.push(k.key);
        if (excused(k.key)) {
          row.excused.push(k.key);
          allowedSeen.push(k);
        } else {
          unexpected.push(k);
        }
      }
    }
  }
  for (const a of result.assertions ?? []) {
    if (!a.passed) {
      const k = { key: `${result.storyboard_id}|assertion|${a.step_id ?? ''}|${a.assertion_id}`, detail: a.description ?? '' };
      row.failures.push(k.key);
      unexpected.push(k);
    }
  }
  summary.push(row);
  const skips = Object.entries(row.skips).map(([k, v]) => `${k}:${v}`).join(', ');
  const excusedByCause = observed.filter(c => c.keys.some(k => row.failures.includes(k)));
  const verdict = !row.failures.every(excused) ? 'FAIL' : excusedByCause.length ? 'EXCUSED' : 'PASS';
  console.log(`[${label}] ${verdict} ${row.storyboard} (${row.file}): ${row.passed} passed, ${row.failed} failed, ${row.skipped} skipped${skips ? ' [' + skips + ']' : ''}`);
  for (const c of excusedByCause) console.log(`[${label}]   ${c.why}`);
}

writeFileSync(out, JSON.stringify({ runner: label, summary, unexpected, allowed: allowedSeen }, null, 2));
for (const k of allowedSeen) console.log(`[${label}] excused failure: ${k.key}`);
if (unexpected.length) {
  console.log(`\n[${label}] ${unexpected.length} unexpected failure(s):`);
  for (const k of unexpected) console.log(`  ${k.key}: ${String(k.detail).slice(0, 400)}`);
  process.exit(report ? 0 : 1);
}
console.log(`\n[${label}] all storyboards passed${allowedSeen.length ? ' (apart from the excused failures above)' : ''}`);
