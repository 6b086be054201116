import { closeSync, mkdirSync, openSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadTask, startEpisode } from '../../electron/engine/harness/index.js';
import { agentFiles } from '../../electron/engine/sandbox/agent-files.js';
import { dropAgentVolume } from '../../electron/engine/docker/agent-volume.js';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { describeDocker, exampleDir, useDockerHome } from '../support/docker.js';
import { ofType } from '../support/harness.js';

// Issue 31, item 3: an agent folder's sparse file stays sparse in the engine (Docker's own
// archive copy writes every zero: a 4 GiB sparse file took 4.1 GB of the engine's disk).

const docker = useDockerHome();

describeDocker('agent folders with sparse files', () => {
  it('a 512 MiB sparse file with two data blocks is copied to /opt/agent whole, using a few KiB', async () => {
    const dir = join(docker.env.dir, 'sparse-agent');
    mkdirSync(dir, { recursive: true });
    const big = join(dir, 'big.bin');
    writeFileSync(big, '');
    truncateSync(big, 512 * 1024 ** 2);
    const fd = openSync(big, 'r+');
    writeSync(fd, 'head', 0);
    writeSync(fd, 'middle', 300 * 1024 ** 2 + 7);
    closeSync(fd);
    writeFileSync(
      join(dir, 'probe.sh'),
      [
        'f=/opt/agent/big.bin',
        'echo "size=$(stat -c %s $f) kib=$(du -k $f | cut -f1)"',
        'echo "head=$(head -c 4 $f) middle=$(dd if=$f bs=1 skip=$((300*1024*1024+7)) count=6 2>/dev/null)"',
        'echo "left=$(ls -A /opt/agent | tr "\\n" " ")"',
      ].join('\n') + '\n',
    );
    const taskDir = exampleDir('python-inside');
    const t = loadTask(taskDir);
    if (!t.ok) throw new Error(t.error.message);
    const c = await startEpisode({
      task: t.value,
      taskPath: join(taskDir, 'task.json'),
      agentSpec: 'sandbox:sh /opt/agent/probe.sh',
      agentOptions: { model: 'manual', agentDir: dir },
      ...docker.episode,
    });
    try {
      await c.run();
      const out = ofType(c.history(), 'agent_output')
        .map((o) => o.stdout)
        .join('');
      expect(out).toContain(`size=${512 * 1024 ** 2} `);
      expect(Number(/kib=(\d+)/.exec(out)?.[1])).toBeLessThan(1024);
      expect(out).toContain('head=head middle=middle');
      // The regions' staging folder is gone; the hash mark is there.
      expect(out).toMatch(/left=\.stepbox-files big\.bin probe\.sh \n/);
    } finally {
      await c.dispose();
      await dropAgentVolume(new DockerEngine(), agentFiles(dir)).catch(() => undefined);
    }
  }, 300_000);
});
