// Writes the small real V8 heap snapshot kept as a fixture
// (fixtures/node_leak.heapsnapshot; answers in fixtures/README.md):
//
//   node --max-semi-space-size=1 scripts/make_small_heapsnapshot.js fixtures/node_leak.heapsnapshot
//
// A `Leaky` cache whose Map keeps growing (1000 entries of `Session`, each
// holding a 4 KiB ArrayBuffer-free payload string built at run time), 200
// copies of one built string (duplicate strings), and a detached chain.
'use strict';
const v8 = require('v8');

class Session {
  constructor(id) {
    this.id = id;
    this.user = 'user-' + (id % 10);          // 10 distinct, 1000 references
    this.payload = 'x'.repeat(64) + id;        // distinct per session
  }
}
class Leaky {
  constructor() {
    this.sessions = new Map();
  }
  add(id) {
    this.sessions.set(id, new Session(id));
  }
}
const leaky = new Leaky();
for (let i = 0; i < 1000; i++) leaky.add(i);

const copies = [];
for (let i = 0; i < 200; i++) copies.push(['dup', 'licate'].join('-'));

globalThis.leaky = leaky;
globalThis.copies = copies;
const out = process.argv[2] || 'node_leak.heapsnapshot';
v8.writeHeapSnapshot(out);
console.log(out);
