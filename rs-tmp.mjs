import { createDockerProvider } from './dist/electron/engine/sandbox/docker-provider.js';
import { defaultSandboxConfig } from './dist/electron/engine/sandbox/limits.js';
import { DiskSnapshotStore } from './dist/electron/engine/sandbox/disk-snapshot-store.js';
import { mkdtempSync } from 'node:fs';
const N = Number(process.argv[2] ?? 7);
const POP = `python3 - <<'EOF2'
import os
for i in range(1000):
    d = '/workspace/d%d' % (i % 20)
    os.makedirs(d, exist_ok=True)
    with open('%s/f%d.bin' % (d, i), 'wb') as f:
        f.write(os.urandom(10240))
EOF2`;
const change = (round) => [0,1,2,3,4].map(j => (round*5 + j*197) % 1000).map(k => `head -c 10240 /dev/urandom > /workspace/d${k%20}/f${k}.bin`).join(' && ');
const med = (a) => { const b=[...a].sort((x,y)=>x-y); return b[b.length>>1]; };
const out = {};
const boxes = {};
for (const ch of ['auto','exec']) {
  const p = await createDockerProvider({ sweep: false, channel: ch, runDir: '/tmp/a-exp/run' });
  const sb = await p.create(defaultSandboxConfig());
  await sb.exec({command: POP, timeoutMs: 60000});
  const store = new DiskSnapshotStore(mkdtempSync('/tmp/a-exp/st-'));
  const first = await sb.snapshot(store);
  boxes[ch] = { p, sb, store, prev: first.manifest };
  out[ch] = { snap: [], restore: [], phases: [] };
}
for (let i = 0; i < N; i++) for (const ch of (i % 2 ? ['auto','exec'] : ['exec','auto'])) {
  const b = boxes[ch];
  await b.sb.exec({command: change(i), timeoutMs: 60000});
  let t0 = performance.now(); await b.sb.snapshot(b.store); out[ch].snap.push(performance.now()-t0);
  const back = await b.store.getManifest(b.prev);
  t0 = performance.now(); await b.sb.restore(b.store, back); out[ch].restore.push(performance.now()-t0);
  b.prev = (await b.sb.snapshot(b.store)).manifest;
}
for (const ch of ['exec','auto']) console.log(ch, 'snapshot', med(out[ch].snap).toFixed(2), 'restore', med(out[ch].restore).toFixed(2), out[ch].restore.map(x=>x.toFixed(1)).join(' '));
for (const b of Object.values(boxes)) await b.p.close();
