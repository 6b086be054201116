import { createDockerProvider } from '/work/wt/a-0250/dist/electron/engine/sandbox/docker-provider.js';
import { defaultSandboxConfig } from '/work/wt/a-0250/dist/electron/engine/sandbox/limits.js';
const N = Number(process.argv[2] ?? 200);
const ps = await createDockerProvider({ sweep: false, runDir: '/tmp/a-exp/run', channel: 'auto' });
const pe = await createDockerProvider({ sweep: false, runDir: '/tmp/a-exp/run', channel: 'exec' });
const s = await ps.create(defaultSandboxConfig()), e = await pe.create(defaultSandboxConfig());
console.log(s.channel, e.channel);
const med = (a) => { const b=[...a].sort((x,y)=>x-y); return b[b.length>>1]; };
const p10 = (a) => { const b=[...a].sort((x,y)=>x-y); return b[Math.floor(b.length*0.1)]; };
const res = { socket: { call: [], over: [], ping: [] }, exec: { call: [], over: [], ping: [] } };
const pause = () => new Promise(r => setTimeout(r, 10));
for (let i = 0; i < N; i++) {
  for (const [k, sb] of i % 2 ? [['socket', s], ['exec', e]] : [['exec', e], ['socket', s]]) {
    await pause();
    const t0 = performance.now();
    const r = await sb.exec({ command: 'true', timeoutMs: 5000 });
    const ms = performance.now() - t0;
    if (!r.ok) throw new Error(JSON.stringify(r));
    res[k].call.push(ms); res[k].over.push(ms - sb.lastCommandMs);
    const t1 = performance.now();
    await sb.call('ping', {});
    res[k].ping.push(performance.now() - t1);
  }
}
for (const k of ['exec', 'socket']) console.log(k, 'call', med(res[k].call).toFixed(3), 'overhead', med(res[k].over).toFixed(3), 'ping', med(res[k].ping).toFixed(3), '| p10: call', p10(res[k].call).toFixed(3), 'overhead', p10(res[k].over).toFixed(3), 'ping', p10(res[k].ping).toFixed(3));
console.log('ratio overhead exec/socket', (med(res.exec.over)/med(res.socket.over)).toFixed(2), 'ping', (med(res.exec.ping)/med(res.socket.ping)).toFixed(2));
await ps.close(); await pe.close();
