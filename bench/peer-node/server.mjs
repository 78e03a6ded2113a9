// A peer AdCP seller built on @adcp/sdk, used only as a measuring stick by
// the storefront's load benchmark. It is not part of the product.
//
//   node server.mjs --port 3101 --catalogue catalogue.json [--host 127.0.0.1]
//                   [--validation off|warn|strict]
//
// It serves get_products (and the SDK's automatic get_adcp_capabilities) over
// MCP streamable HTTP through the SDK's own serve(). See README.md.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { serve } from '@adcp/sdk';
import {
  BudgetTooLowError,
  InMemoryStateStore,
  createAdcpServerFromPlatform,
  createInMemoryTaskRegistry,
  definePlatform,
} from '@adcp/sdk/server';

const DEFAULT_MAX_RESULTS = 10;

function parseFlags(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '3101' },
      host: { type: 'string', default: '127.0.0.1' },
      catalogue: { type: 'string' },
      validation: { type: 'string', default: 'off' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad --port ${values.port}`);
  if (!values.catalogue) throw new Error('--catalogue is required');
  if (!['off', 'warn', 'strict'].includes(values.validation)) {
    throw new Error(`bad --validation ${values.validation} (want off, warn or strict)`);
  }
  return { port, host: values.host, cataloguePath: values.catalogue, validation: values.validation };
}

// loadCatalogue reads the catalogue once. Products are kept exactly as they
// will be returned; min_spend and countries are side tables keyed by
// product_id (countries may also sit on the product itself).
function loadCatalogue(path) {
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(doc.products)) throw new Error(`${path}: "products" must be an array`);
  for (const p of doc.products) {
    if (typeof p?.product_id !== 'string') throw new Error(`${path}: every product needs a product_id`);
  }
  // Each product's words are counted once, at load, as any seller would
  // index its own catalogue; filtering and scoring still run per request.
  const counts = new Map();
  for (const p of doc.products) {
    const c = new Map();
    for (const w of words(p.name).concat(words(p.description))) c.set(w, (c.get(w) ?? 0) + 1);
    counts.set(p.product_id, c);
  }
  return { products: doc.products, minSpend: doc.min_spend ?? {}, countries: doc.countries ?? {}, counts };
}

// minSpendFor reads a product's minimum spend from the min_spend table,
// which holds either {amount, currency} or a map of currency to amount.
function minSpendFor(catalogue, id, currency) {
  const m = catalogue.minSpend[id];
  if (!m) return null;
  if (typeof m.amount === 'number') return m;
  if (currency && typeof m[currency] === 'number') return { amount: m[currency], currency };
  if (!currency) {
    let low = null;
    for (const [cur, amount] of Object.entries(m)) if (!low || amount < low.amount) low = { amount, currency: cur };
    return low;
  }
  return null;
}

function words(text) {
  return typeof text === 'string' ? text.toLowerCase().match(/[a-z0-9]+/g) ?? [] : [];
}

function intersects(a, b) {
  return a.some(x => b.includes(x));
}

// encodeCursor and decodeCursor make the page offset opaque to buyers.
function encodeCursor(offset) {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

function decodeCursor(cursor) {
  if (typeof cursor !== 'string' || cursor === '') return 0;
  try {
    const o = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')).o;
    return Number.isInteger(o) && o >= 0 ? o : 0;
  } catch {
    return 0;
  }
}

// getProducts does the whole job per request: filter, score against the
// brief, sort, page. Only the products' word counts are computed at load.
function getProducts(catalogue, req) {
  const f = req.filters ?? {};
  const channels = Array.isArray(f.channels) && f.channels.length > 0 ? f.channels : null;
  const countries = Array.isArray(f.countries) && f.countries.length > 0 ? f.countries : null;
  const budget = f.budget_range ?? {};

  const matches = [];
  let lowestFloor = null; // the cheapest min_spend among products excluded by budget alone
  for (const p of catalogue.products) {
    if (channels && !(Array.isArray(p.channels) && intersects(p.channels, channels))) continue;
    if (f.delivery_type && p.delivery_type !== f.delivery_type) continue;
    const pc = p.countries ?? catalogue.countries[p.product_id];
    if (countries && Array.isArray(pc) && !intersects(pc, countries)) continue;
    const min = minSpendFor(catalogue, p.product_id, budget.currency);
    if (typeof budget.max === 'number' && min && (!budget.currency || budget.currency === min.currency) && budget.max < min.amount) {
      if (!lowestFloor || min.amount < lowestFloor.amount) lowestFloor = min;
      continue;
    }
    matches.push(p);
  }

  if (matches.length === 0 && lowestFloor) {
    // Everything that fits the other filters costs more than the budget. The
    // SDK's typed decline for that is BUDGET_TOO_LOW (an isError tool result).
    throw new BudgetTooLowError({ floor: lowestFloor.amount, currency: lowestFloor.currency });
  }

  const terms = words(req.brief);
  const scored = matches.map(p => {
    const counts = catalogue.counts.get(p.product_id);
    let score = 0;
    const hit = new Set();
    for (const t of terms) {
      const n = counts.get(t) ?? 0;
      if (n > 0) {
        score += n;
        hit.add(t);
      }
    }
    return { p, score, hit };
  });
  scored.sort((a, b) => b.score - a.score || (a.p.product_id < b.p.product_id ? -1 : a.p.product_id > b.p.product_id ? 1 : 0));

  const max = Number.isInteger(req.pagination?.max_results) && req.pagination.max_results > 0
    ? req.pagination.max_results
    : DEFAULT_MAX_RESULTS;
  const offset = decodeCursor(req.pagination?.cursor);
  const page = scored.slice(offset, offset + max).map(({ p, hit }) =>
    hit.size > 0 ? { ...p, brief_relevance: `Matches brief terms: ${[...hit].sort().join(', ')}.` } : p,
  );
  const hasMore = offset + max < scored.length;
  return {
    products: page,
    pagination: { has_more: hasMore, total_count: scored.length, ...(hasMore && { cursor: encodeCursor(offset + max) }) },
  };
}

// The MCP SDK prints a six-line console.warn about the SDK's own "tasks/get"
// tool name each time that tool is registered, and serve() builds a fresh
// server for every request. Drop just that block so the peer's stderr stays
// readable under load; every other warning passes through.
function muteTasksGetNameWarning() {
  const warn = console.warn;
  let skip = 0;
  console.warn = (...args) => {
    if (skip > 0) {
      skip--;
      return;
    }
    if (typeof args[0] === 'string' && args[0].startsWith('Tool name validation warning for "tasks/get"')) {
      skip = 5;
      return;
    }
    warn(...args);
  };
}

function main() {
  const flags = parseFlags(process.argv.slice(2));
  const catalogue = loadCatalogue(flags.cataloguePath);
  muteTasksGetNameWarning();

  const account = { id: 'peer', ctx_metadata: {} };
  const platform = definePlatform({
    // No specialism is claimed: claiming sales-* would make the SDK warn on
    // every construction (that is, on every request) about the media-buy
    // tools this peer does not implement.
    capabilities: { specialisms: [], channels: ['display', 'olv', 'ctv', 'streaming_audio'], pricingModels: ['cpm'] },
    accounts: { resolution: 'derived', resolve: async () => account },
    sales: { getProducts: async req => getProducts(catalogue, req) },
  });

  // Shared across requests, as the SDK's examples do: serve() calls the
  // factory once per HTTP request. Passing these (and the idempotency
  // principal) explicitly also keeps the SDK from refusing to start, or
  // warning on every request, when NODE_ENV is not test or development.
  const stateStore = new InMemoryStateStore();
  const taskRegistry = createInMemoryTaskRegistry();

  const server = serve(
    ({ taskStore }) =>
      createAdcpServerFromPlatform(platform, {
        name: 'storefront-bench-peer',
        version: '1.0.0',
        taskStore,
        taskRegistry,
        stateStore,
        resolveIdempotencyPrincipal: ctx => ctx.account?.id,
        validation: { requests: flags.validation, responses: flags.validation },
      }),
    {
      port: flags.port,
      // serve() has no host option and calls listen(port) once readinessCheck
      // resolves, so the readiness check gives us the moment to bind the host.
      readinessCheck: async () => {},
      onListening: () => {
        const { port } = server.address();
        console.log(`peer listening on http://${flags.host}:${port}/mcp`);
      },
    },
  );
  const listen = server.listen.bind(server);
  server.listen = (port, cb) => listen(port, flags.host, cb);
  server.on('error', err => {
    console.error(`peer: ${err.message}`);
    process.exit(1);
  });

  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

try {
  main();
} catch (err) {
  console.error(`peer: ${err.message}`);
  process.exit(2);
}
