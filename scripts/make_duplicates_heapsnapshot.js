// Writes a small real V8 heap snapshot with known duplicate sets, the cases
// the duplicate detection is checked on (tests/v8_real.rs reads one made
// here; nothing of it is kept in the repository):
//
//   node scripts/make_duplicates_heapsnapshot.js /tmp/dups.heapsnapshot
//
// - 2,000 `Point`s made by one constructor, each with the same label
//   string and the same two small integers: one duplicate set of 2,000
//   (they share their hidden class and prototype, which are their type).
// - 2,000 objects from `JSON.parse` of one text: one set of 2,000, and
//   their equal strings are the same interned strings (not copies).
// - 50,000 objects each holding a different timestamp as a heap number:
//   the snapshot does not hold the numbers, so none of them is a copy of
//   another (no set).
// - 500 copies of one built string, 500 × "application/json" built at
//   run time: a set each.
'use strict';
const v8 = require('v8');

class Point {
  constructor(x, y, label) {
    this.x = x;
    this.y = y;
    this.label = label;
  }
}
const label = 'origin';
const points = [];
for (let i = 0; i < 2000; i++) points.push(new Point(1, 2, label));

const orders = [];
for (let i = 0; i < 2000; i++) orders.push(JSON.parse('{"kind":"order","status":"open","tag":"x"}'));

class Stamp {
  constructor(at) {
    this.at = at;
  }
}
const stamps = [];
const base = Date.now() + 0.5;
for (let i = 0; i < 50000; i++) stamps.push(new Stamp(base + i * 1.25));

const types = [];
for (let i = 0; i < 500; i++) types.push(['application', 'json'].join('/'));

globalThis.kept = { points, orders, stamps, types };
const out = process.argv[2] || 'duplicates.heapsnapshot';
v8.writeHeapSnapshot(out);
console.log(out);
