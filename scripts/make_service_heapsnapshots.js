// Runs a small HTTP service with three leaks and writes three heap snapshots
// of it, for trying heaptui as a user would (comparison, leak suspects,
// duplicates, closure names):
//
//   node scripts/make_service_heapsnapshots.js /tmp/service   # writes service.1-3.heapsnapshot
//
// The leaks: a `Map` cache of `RequestContext`s that is never pruned, an
// `EventEmitter` that gains a listener per request, and an array of
// `audit` closures, one per request. Each response also parses a JSON body
// (equal objects, equal strings: duplicates) and stamps the time (heap
// numbers, all different: not duplicates).
'use strict';
const http = require('http');
const v8 = require('v8');
const { EventEmitter } = require('events');

class RequestContext {
  constructor(id, url) {
    this.id = id;
    this.url = url;
    this.startedAt = Date.now() + Math.random();
    this.headers = { 'content-type': ['application', 'json'].join('/') };
  }
}

class OrderService {
  constructor() {
    this.cache = new Map();
    this.events = new EventEmitter();
    this.events.setMaxListeners(0);
    this.audits = [];
  }
  handle(id, url) {
    const ctx = new RequestContext(id, url);
    this.cache.set(id, ctx);
    this.events.on('order', () => ctx.id);
    const audit = function audit() {
      return ctx.url + ' ' + ctx.startedAt;
    };
    this.audits.push(audit);
    return JSON.parse('{"kind":"order","status":"open","tag":"x"}');
  }
}

const service = new OrderService();
const kept = [];
let next = 0;
const server = http.createServer((req, res) => {
  const order = service.handle(next++, req.url);
  kept.push(order);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(order));
});

function request(port) {
  return new Promise((resolve, reject) => {
    http
      .get({ port, path: '/orders/' + next, agent: false }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject);
  });
}

async function main() {
  const prefix = process.argv[2] || 'service';
  const perRound = Number(process.argv[3] || 5000);
  await new Promise((r) => server.listen(0, r));
  const port = server.address().port;
  for (let round = 1; round <= 3; round++) {
    for (let i = 0; i < perRound; i += 50) {
      await Promise.all(Array.from({ length: 50 }, () => request(port)));
    }
    global.gc && global.gc();
    const file = `${prefix}.${round}.heapsnapshot`;
    v8.writeHeapSnapshot(file);
    console.log(file);
  }
  server.close();
}
main();
