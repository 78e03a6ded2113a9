// A buyer's webhook receiver that verifies every delivery with the
// @adcp/sdk verifier, verifyWebhookSignature, the RFC 9421 webhook profile
// (adcp/webhook-signing/v1), against the seller's JWKS fetched over HTTP.
// One replay store serves every delivery, as a receiver's must.
//
// It prints "listening <url>" once, then one JSON line per delivery:
//   {"path", "body", "result": {...} | "error": {"code", "step", "message"},
//    "replay": {...}}
// where "replay" is the verifier's verdict on the same request presented a
// second time (a replay must be refused).
//
// usage: node webhook-receiver.mjs --jwks http://127.0.0.1:PORT/.well-known/jwks.json [--clock-offset-ms N]
// where N is how far the seller's clock is from this machine's (a test run
// with the clock moved); the verifier judges signature windows on it.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { verifyWebhookSignature, HttpsJwksResolver, InMemoryReplayStore, InMemoryRevocationStore } = require('@adcp/sdk/signing/server');

const args = process.argv.slice(2);
const jwksURL = args[args.indexOf('--jwks') + 1];
const offsetMs = args.includes('--clock-offset-ms') ? Number(args[args.indexOf('--clock-offset-ms') + 1]) : 0;
const now = () => (Date.now() + offsetMs) / 1000;
if (!jwksURL || args.indexOf('--jwks') < 0) {
  console.error('usage: node webhook-receiver.mjs --jwks URL');
  process.exit(2);
}

// A loopback JWKS is a test seller's; no cooldown, so a key rotated between
// two deliveries is fetched at once when a signature names it.
const jwks = new HttpsJwksResolver(jwksURL, { allowPrivateIp: true, minCooldownSeconds: 0 });
const replayStore = new InMemoryReplayStore();
const revocationStore = new InMemoryRevocationStore();

async function verify(request) {
  try {
    return { result: await verifyWebhookSignature(request, { jwks, replayStore, revocationStore, now }) };
  } catch (err) {
    return { error: { code: err.code ?? 'exception', step: err.failedStep, message: err.message } };
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', c => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const request = { method: req.method, url: `http://${req.headers.host}${req.url}`, headers: req.headers, body };
    const first = await verify(request);
    const replay = await verify(request);
    process.stdout.write(JSON.stringify({ path: req.url, body, ...first, replay }) + '\n');
    res.writeHead(first.result ? 200 : 401, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
});
