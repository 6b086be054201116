import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { helperChannelChoice, socketUnavailable } from '../../electron/engine/sandbox/docker-provider.js';
import { describeChannel } from '../../electron/engine/sandbox/helper-channel.js';

// Where the helper's socket cannot reach the container, no socket is offered: decided before
// any container starts, so a remote engine never waits on one.
describe('helper channel choice', () => {
  it('offers a socket only for an engine reached through a local unix socket', () => {
    const local = new DockerEngine(new Docker({ socketPath: '/var/run/docker.sock' }));
    const byDefault = new DockerEngine(new Docker());
    const tcp = new DockerEngine(new Docker({ host: '10.0.0.5', port: 2375, protocol: 'http' }));
    const ssh = new DockerEngine(new Docker({ host: 'build-box', protocol: 'ssh', username: 'me' }));
    if (process.platform !== 'win32') {
      expect(socketUnavailable(local, 'auto')).toBeNull();
      if (!process.env.DOCKER_HOST || process.env.DOCKER_HOST.startsWith('unix://'))
        expect(socketUnavailable(byDefault, 'auto')).toBeNull();
    }
    expect(socketUnavailable(tcp, 'auto')).toMatch(/remote/);
    expect(socketUnavailable(ssh, 'auto')).toMatch(/remote/);
    expect(socketUnavailable(local, 'exec')).toBe('STEPBOX_HELPER_CHANNEL=exec');
  });

  it('reads STEPBOX_HELPER_CHANNEL; the doctor line names the channel and, for the exec, why', () => {
    expect(helperChannelChoice({ STEPBOX_HELPER_CHANNEL: 'exec' })).toBe('exec');
    expect(helperChannelChoice({})).toBe('auto');
    expect(describeChannel({ kind: 'socket' })).toMatch(/unix socket/);
    expect(describeChannel({ kind: 'exec', reason: 'the engine is remote' })).toMatch(
      /docker exec.*the engine is remote/,
    );
  });
});
