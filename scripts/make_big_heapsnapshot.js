// Writes a large, realistic V8 heap snapshot for measuring heaptui's V8
// importer (the output is never committed).
//
//   node --max-old-space-size=8000 scripts/make_big_heapsnapshot.js /tmp/big.heapsnapshot [millions]
//
// The heap: `millions` × 1e6 small records (objects with a few properties,
// arrays, closures, duplicate and unique strings), chained into lists held
// by a Map that "leaks" (keeps growing), plus a cache of duplicated strings.
// About 4–5 snapshot nodes per record; 2.5 million records give ≥ 1 GB.
'use strict';
const v8 = require('v8');

const out = process.argv[2] || '/tmp/big.heapsnapshot';
const millions = Number(process.argv[3] || '2.5');
const records = Math.floor(millions * 1e6);

class Customer {
  constructor(i, next) {
    this.id = i;
    this.name = 'customer-' + (i % 50000); // many duplicate strings
    this.tags = [i % 7, i % 11, 'tag' + (i % 13)];
    this.next = next;
    this.onUpdate = () => this.id + 1; // a closure with a context
  }
}

const leak = new Map();
let head = null;
for (let i = 0; i < records; i++) {
  head = new Customer(i, i % 1000 === 0 ? null : head);
  if (i % 1000 === 999) {
    leak.set('batch-' + i, head);
  }
}
const dupCache = [];
for (let i = 0; i < 200000; i++) {
  dupCache.push(['same', 'text', String(i % 100)].join('/'));
}
globalThis.keep = { leak, dupCache, head };

const t0 = Date.now();
const file = v8.writeHeapSnapshot(out);
console.log(`wrote ${file} in ${(Date.now() - t0) / 1000}s`);
